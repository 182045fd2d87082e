//! The StatefulSet controller end to end (apiserver defaults and validation, controller, PV
//! binder, scheduler, kubelet, garbage collector). Expected values are worked out by hand from
//! upstream's `pkg/controller/statefulset/stateful_set_control.go` (`updateStatefulSet`,
//! `processReplica`, `processCondemned`) and `stateful_set_utils.go`; one tick = one second,
//! startupTicks 1: with no readiness probe a pod created at tick t is bound at t, Running and
//! Ready at t + 1, seen Ready by the controller at t + 2.

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::apiserver::ApiExt;
use k8s_types::apps::StatefulSet;
use k8s_types::core::{Event, Node, PersistentVolumeClaim, Pod};
use k8s_types::Object;

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

fn stateful_set(spec: serde_json::Value) -> Object {
    let mut s = serde_json::json!({
        "serviceName": "nginx",
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"},
                "annotations": {"sim.k8s-mini.io/behavior": "{containers: {c: {stop: {seconds: 1}}}}"}},
            "spec": {"containers": [{"name": "c", "image": "img:v1"}]}
        },
        "volumeClaimTemplates": [{"metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    });
    for (k, v) in spec.as_object().cloned().unwrap_or_default() {
        s[k] = v;
    }
    let ss: StatefulSet = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": s
    }))
    .expect("sts");
    Object::StatefulSet(Box::new(ss))
}

fn run_to(c: &mut Cluster, tick: u64) {
    while c.now() <= tick {
        c.tick();
    }
}

/// Live pods: (name, image).
fn pods(c: &mut Cluster) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = c
        .api()
        .list_typed::<Pod>(Some("default"), None)
        .into_iter()
        .filter(|p| !p.is_terminating())
        .map(|p| (p.metadata.name.clone(), p.spec.containers[0].image.clone()))
        .collect();
    v.sort();
    v
}

fn names(c: &mut Cluster) -> Vec<String> {
    pods(c).into_iter().map(|(n, _)| n).collect()
}

fn claims(c: &mut Cluster) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = c
        .api()
        .list_typed::<PersistentVolumeClaim>(Some("default"), None)
        .into_iter()
        .map(|pvc| {
            (
                pvc.metadata.name.clone(),
                pvc.status.phase.clone().unwrap_or_default(),
                pvc.spec.volume_name.clone().unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

fn get(c: &mut Cluster) -> StatefulSet {
    c.api()
        .get_typed::<StatefulSet>("default", "web")
        .expect("sts")
}

fn set_image(c: &mut Cluster, image: &str) {
    let mut s = get(c);
    s.spec.template.spec.containers[0].image = image.into();
    c.api().update_typed(s).expect("set image");
}

#[test]
fn ordered_ready_creates_one_pod_per_ready_predecessor() {
    let mut c = cluster();
    c.apply(stateful_set(serde_json::json!({}))).expect("apply");
    run_to(&mut c, 1);
    assert_eq!(names(&mut c), vec!["web-0"]);
    run_to(&mut c, 2);
    assert_eq!(names(&mut c), vec!["web-0", "web-1"]);
    run_to(&mut c, 4);
    assert_eq!(names(&mut c), vec!["web-0", "web-1", "web-2"]);
    let p: Pod = c.api().get_typed("default", "web-1").expect("pod");
    assert_eq!(p.spec.hostname.as_deref(), Some("web-1"));
    assert_eq!(p.spec.subdomain.as_deref(), Some("nginx"));
    let v = &p.spec.volumes[0];
    assert_eq!(v.name, "data");
    assert_eq!(
        v.persistent_volume_claim
            .as_ref()
            .map(|s| s.claim_name.as_str()),
        Some("data-web-1")
    );
    let uid = |c: &mut Cluster, n: &str| {
        c.api()
            .get_typed::<PersistentVolumeClaim>("default", n)
            .expect("pvc")
            .metadata
            .uid
            .unwrap_or_default()
    };
    let u0 = uid(&mut c, "data-web-0");
    assert_eq!(
        claims(&mut c)[0],
        ("data-web-0".into(), "Bound".into(), format!("pvc-{u0}"))
    );
    run_to(&mut c, 6);
    let s = get(&mut c).status;
    assert_eq!(
        (
            s.replicas,
            s.ready_replicas,
            s.current_replicas,
            s.updated_replicas
        ),
        (3, 3, 3, 3)
    );
    assert_eq!(s.current_revision, s.update_revision);
    assert!(s.update_revision.starts_with("web-"));
    assert_eq!(s.observed_generation, Some(1));
    assert_eq!(s.collision_count, Some(0));
}

#[test]
fn parallel_creates_and_deletes_all_at_once() {
    let mut c = cluster();
    c.apply(stateful_set(
        serde_json::json!({"podManagementPolicy": "Parallel"}),
    ))
    .expect("apply");
    run_to(&mut c, 0);
    assert_eq!(names(&mut c), vec!["web-0", "web-1", "web-2"]);
    run_to(&mut c, 5);
    let mut s = get(&mut c);
    s.spec.replicas = Some(0);
    c.api().update_typed(s).expect("scale");
    run_to(&mut c, 6);
    assert_eq!(names(&mut c), Vec::<String>::new());
    // Retain: the claims stay.
    assert_eq!(claims(&mut c).len(), 3);
}

#[test]
fn on_delete_changes_nothing_until_a_pod_is_deleted() {
    let mut c = cluster();
    c.apply(stateful_set(serde_json::json!({
        "replicas": 2, "updateStrategy": {"type": "OnDelete"}})))
        .expect("apply");
    run_to(&mut c, 5);
    set_image(&mut c, "img:v2");
    run_to(&mut c, 10);
    assert_eq!(
        pods(&mut c),
        vec![
            ("web-0".into(), "img:v1".into()),
            ("web-1".into(), "img:v1".into())
        ]
    );
    c.api()
        .delete(
            &k8s_types::Kind::Pod,
            "default",
            "web-0",
            Default::default(),
        )
        .expect("delete");
    // Deleted at 11 (after tick 10), gone at 11, re-created at 12 from the update revision.
    run_to(&mut c, 13);
    assert_eq!(
        pods(&mut c),
        vec![
            ("web-0".into(), "img:v2".into()),
            ("web-1".into(), "img:v1".into())
        ]
    );
    let s = get(&mut c).status;
    assert_eq!((s.current_replicas, s.updated_replicas), (1, 1));
    assert_ne!(s.current_revision, s.update_revision);
}

#[test]
fn partition_keeps_lower_ordinals_and_rolls_down_from_the_highest() {
    let mut c = cluster();
    c.apply(stateful_set(serde_json::json!({
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}})))
        .expect("apply");
    run_to(&mut c, 8);
    set_image(&mut c, "img:v2");
    // t=9: web-2 deleted; gone at 10; re-created at 11, Ready at 12, seen at 13: web-1 deleted.
    run_to(&mut c, 9);
    assert_eq!(names(&mut c), vec!["web-0", "web-1"]);
    run_to(&mut c, 12);
    assert_eq!(pods(&mut c)[1], ("web-1".into(), "img:v1".into()));
    run_to(&mut c, 13);
    assert_eq!(names(&mut c), vec!["web-0", "web-2"]);
    run_to(&mut c, 20);
    assert_eq!(
        pods(&mut c),
        vec![
            ("web-0".into(), "img:v1".into()),
            ("web-1".into(), "img:v2".into()),
            ("web-2".into(), "img:v2".into())
        ]
    );
    let deletes: Vec<String> = c
        .api()
        .list_typed::<Event>(None, None)
        .into_iter()
        .filter(|e| e.reason == "SuccessfulDelete")
        .map(|e| e.message.into())
        .collect();
    assert_eq!(
        deletes,
        vec![
            "delete Pod web-2 in StatefulSet web successful",
            "delete Pod web-1 in StatefulSet web successful"
        ]
    );
}

#[test]
fn when_scaled_delete_claims_go_with_their_pods() {
    let mut c = cluster();
    c.apply(stateful_set(serde_json::json!({
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"}})))
        .expect("apply");
    run_to(&mut c, 6);
    let mut s = get(&mut c);
    s.spec.replicas = Some(1);
    c.api().update_typed(s).expect("scale");
    run_to(&mut c, 20);
    assert_eq!(names(&mut c), vec!["web-0"]);
    let left: Vec<String> = claims(&mut c).into_iter().map(|(n, _, _)| n).collect();
    assert_eq!(left, vec!["data-web-0"]);
}

#[test]
fn when_deleted_delete_claims_go_with_the_set() {
    let mut c = cluster();
    c.apply(stateful_set(serde_json::json!({"replicas": 1,
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"}})))
        .expect("apply");
    run_to(&mut c, 3);
    let pvc: PersistentVolumeClaim = c.api().get_typed("default", "data-web-0").expect("pvc");
    let owner = &pvc.metadata.owner_references[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("StatefulSet", "web")
    );
    c.api()
        .delete(
            &k8s_types::Kind::StatefulSet,
            "default",
            "web",
            Default::default(),
        )
        .expect("delete");
    run_to(&mut c, 10);
    assert!(claims(&mut c).is_empty());
}

#[test]
fn the_apiserver_refuses_invalid_stateful_sets() {
    let mut c = cluster();
    let err = c
        .apply(stateful_set(
            serde_json::json!({"podManagementPolicy": "Random",
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]}),
        ))
        .expect_err("invalid");
    let msg = err.to_string();
    assert!(msg.contains("spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"), "{msg}");
    assert!(msg.contains("spec.volumeClaimTemplates[0].spec.accessModes: Required value: at least 1 access mode is required"), "{msg}");
    let mut c = cluster();
    c.apply(stateful_set(serde_json::json!({}))).expect("apply");
    let mut s = get(&mut c);
    s.spec.service_name = "other".into();
    let err = c.api().update_typed(s).expect_err("forbidden");
    assert!(
        err.message
            .contains("spec: Forbidden: updates to statefulset spec for fields other than"),
        "{}",
        err.message
    );
}
