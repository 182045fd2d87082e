//! ControllerRevision history of StatefulSets and DaemonSets end to end (apiserver, controllers,
//! scheduler, kubelet, garbage collector). Expected values are worked out by hand from upstream's
//! `pkg/controller/history/controller_history.go` (`<owner>-<hash>` names, `Revision` numbers),
//! `pkg/controller/statefulset/stateful_set_control.go` (`getStatefulSetRevisions`: a new
//! template gets the next number, a template equal to an older revision renumbers that one;
//! `truncateHistory`: non-live revisions beyond `revisionHistoryLimit` go, oldest first) and
//! `pkg/controller/daemon/update.go` (`constructHistory`, `cleanupHistory`). The hash part of a
//! name is k8s-mini's `ComputeHash(template, collisionCount)` (docs/fidelity.md).

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_controllers::pod_template_hash::compute_hash;
use k8s_types::apiserver::ApiExt;
use k8s_types::apps::{ControllerRevision, DaemonSet, StatefulSet};
use k8s_types::core::{Node, Pod};
use k8s_types::status::Status;
use k8s_types::{Kind, Object};

fn cluster() -> Cluster {
    let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
    let node: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "node-1"},
        "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}
    }))
    .expect("node");
    c.add_node(node).expect("add node");
    c
}

fn stateful_set(history_limit: Option<i32>) -> Object {
    let mut spec = serde_json::json!({
        "serviceName": "nginx",
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"},
                "annotations": {"sim.k8s-mini.io/behavior": "{containers: {c: {stop: {seconds: 1}}}}"}},
            "spec": {"containers": [{"name": "c", "image": "img:v1"}]}
        }
    });
    if let Some(l) = history_limit {
        spec["revisionHistoryLimit"] = l.into();
    }
    Object::StatefulSet(
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": spec
        }))
        .expect("sts"),
    )
}

fn run_to(c: &mut Cluster, tick: u64) {
    while c.now() <= tick {
        c.tick();
    }
}

fn sts(c: &mut Cluster) -> StatefulSet {
    c.api().get_typed("default", "web").expect("sts")
}

fn set_sts_image(c: &mut Cluster, image: &str) {
    let mut s = sts(c);
    s.spec.template.spec.containers[0].image = image.into();
    c.api().update_typed(s).expect("set image");
}

/// The revisions of the namespace: (name, revision), by name.
fn revisions(c: &mut Cluster) -> Vec<(String, i64)> {
    c.api()
        .list_typed::<ControllerRevision>(Some("default"), None)
        .into_iter()
        .map(|r| (r.metadata.name.clone(), r.revision))
        .collect()
}

/// `web-<hash>` of the stored set's template (collisionCount 0), as the controller names it.
fn sts_revision_name(c: &mut Cluster) -> String {
    format!("web-{}", compute_hash(&sts(c).spec.template, Some(0)))
}

#[test]
fn stateful_set_revisions_are_created_numbered_and_renumbered_on_rollback() {
    let mut c = cluster();
    c.apply(stateful_set(None)).expect("apply");
    run_to(&mut c, 5);
    let v1 = sts_revision_name(&mut c);
    // The first sync creates revision 1 of the template; both status fields name it.
    assert_eq!(revisions(&mut c), vec![(v1.clone(), 1)]);
    let s = sts(&mut c).status;
    assert_eq!(
        (s.current_revision.as_str(), s.update_revision.as_str()),
        (v1.as_str(), v1.as_str())
    );
    let r: ControllerRevision = c.api().get_typed("default", &v1).expect("revision");
    let owner = &r.metadata.owner_references[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("StatefulSet", "web", Some(true))
    );
    assert_eq!(
        r.metadata.labels.get("app").map(String::as_str),
        Some("web")
    );
    assert_eq!(
        r.data.as_ref().expect("data")["spec"]["template"]["$patch"],
        "replace"
    );
    assert_eq!(
        r.template().expect("template").spec.containers[0].image,
        "img:v1"
    );

    // A new template: revision 2 is created (nextRevision = 1 + 1); once the rollout is done
    // the current revision follows the update revision.
    set_sts_image(&mut c, "img:v2");
    run_to(&mut c, 30);
    let v2 = sts_revision_name(&mut c);
    let mut want = vec![(v1.clone(), 1), (v2.clone(), 2)];
    want.sort();
    assert_eq!(revisions(&mut c), want);
    let s = sts(&mut c).status;
    assert_eq!(
        (s.current_revision.as_str(), s.update_revision.as_str()),
        (v2.as_str(), v2.as_str())
    );
    let pod: Pod = c.api().get_typed("default", "web-0").expect("pod");
    assert_eq!(pod.metadata.labels["controller-revision-hash"], v2);

    // Back to v1: no new revision; v1 is renumbered to 3 (nextRevision = 2 + 1).
    set_sts_image(&mut c, "img:v1");
    run_to(&mut c, 60);
    let mut want = vec![(v1.clone(), 3), (v2, 2)];
    want.sort();
    assert_eq!(revisions(&mut c), want);
    assert_eq!(sts(&mut c).status.update_revision, v1);
}

#[test]
fn stateful_set_history_is_truncated_to_the_limit_keeping_live_revisions() {
    let mut c = cluster();
    c.apply(stateful_set(Some(1))).expect("apply");
    run_to(&mut c, 5);
    let v1 = sts_revision_name(&mut c);
    set_sts_image(&mut c, "img:v2");
    run_to(&mut c, 30);
    let v2 = sts_revision_name(&mut c);
    set_sts_image(&mut c, "img:v3");
    run_to(&mut c, 60);
    let v3 = sts_revision_name(&mut c);
    // Live: v3 (current and update, every pod's). History: v1 (1), v2 (2); limit 1: the
    // oldest, v1, is deleted.
    let mut want = vec![(v2, 2), (v3, 3)];
    want.sort();
    assert_eq!(revisions(&mut c), want);
    assert!(!revisions(&mut c).iter().any(|(n, _)| *n == v1));

    // The garbage collector deletes the revisions with their set.
    c.api()
        .delete(&Kind::StatefulSet, "default", "web", Default::default())
        .expect("delete");
    run_to(&mut c, 70);
    assert_eq!(revisions(&mut c), vec![]);
}

fn daemon_set() -> Object {
    Object::DaemonSet(
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "default"},
            "spec": {
                "revisionHistoryLimit": 1,
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {
                    "metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "c", "image": "img:v1"}]}
                }
            }
        }))
        .expect("ds"),
    )
}

fn set_ds_image(c: &mut Cluster, image: &str) {
    let mut d: DaemonSet = c.api().get_typed("default", "agent").expect("ds");
    d.spec.template.spec.containers[0].image = image.into();
    c.api().update_typed(d).expect("set image");
}

/// (`agent-<hash>`, hash) of the stored DaemonSet's template, `ComputeHash(template, nil)`.
fn ds_revision(c: &mut Cluster) -> (String, String) {
    let d: DaemonSet = c.api().get_typed("default", "agent").expect("ds");
    let h = compute_hash(&d.spec.template, d.status.collision_count);
    (format!("agent-{h}"), h)
}

#[test]
fn daemon_set_history_snapshots_renumbers_and_cleans_up() {
    let mut c = cluster();
    c.apply(daemon_set()).expect("apply");
    run_to(&mut c, 5);
    let (v1, h1) = ds_revision(&mut c);
    assert_eq!(revisions(&mut c), vec![(v1.clone(), 1)]);
    let r: ControllerRevision = c.api().get_typed("default", &v1).expect("revision");
    assert_eq!(r.metadata.labels.get("controller-revision-hash"), Some(&h1));
    let pods = c.api().list_typed::<Pod>(Some("default"), None);
    assert_eq!(
        pods[0].metadata.labels.get("controller-revision-hash"),
        Some(&h1)
    );

    // v2: snapshot numbered maxRevision(old) + 1 = 2.
    set_ds_image(&mut c, "img:v2");
    run_to(&mut c, 20);
    let (v2, _) = ds_revision(&mut c);
    let mut want = vec![(v1.clone(), 1), (v2.clone(), 2)];
    want.sort();
    assert_eq!(revisions(&mut c), want);

    // Back to v1: v1 is current again and renumbered to 3; v2 is the one old revision,
    // within the limit of 1.
    set_ds_image(&mut c, "img:v1");
    run_to(&mut c, 40);
    let mut want = vec![(v1.clone(), 3), (v2.clone(), 2)];
    want.sort();
    assert_eq!(revisions(&mut c), want);

    // v3: old = [v2 (2), v1 (3)], 2 > limit 1: the oldest not carried by a pod (v2) goes.
    set_ds_image(&mut c, "img:v3");
    run_to(&mut c, 60);
    let (v3, _) = ds_revision(&mut c);
    let mut want = vec![(v1, 3), (v3, 4)];
    want.sort();
    assert_eq!(revisions(&mut c), want);
}

#[test]
fn the_apiserver_keeps_revision_data_immutable() {
    let mut c = cluster();
    c.apply(stateful_set(None)).expect("apply");
    run_to(&mut c, 2);
    let name = sts_revision_name(&mut c);
    let mut r: ControllerRevision = c.api().get_typed("default", &name).expect("revision");
    r.data = Some(serde_json::json!({"spec": {}}));
    let err: Status = c.api().update_typed(r).expect_err("immutable");
    assert!(err.is_invalid());
    assert!(
        err.message
            .ends_with(r#"data: Invalid value: {"spec":{}}: field is immutable"#),
        "{}",
        err.message
    );
    let mut bad = ControllerRevision::default();
    bad.metadata.name = "web-x".into();
    bad.metadata.namespace = Some("default".into());
    bad.revision = -1;
    let err = c
        .api()
        .create(Object::ControllerRevision(Box::new(bad)))
        .expect_err("invalid");
    assert_eq!(
        err.message,
        r#"ControllerRevision.apps "web-x" is invalid: [data: Required value: data is mandatory, revision: Invalid value: -1: must be greater than or equal to 0]"#
    );
}
