//! The ReplicaSet controller alone: creation from the template, adoption of orphans, release of
//! pods that stop matching, scale-down ranking and status.

mod common;

use std::collections::BTreeMap;

use common::{fake_scheduler_and_kubelet, owner};
use k8s_controllers::{ControllerManager, ReplicaSetController};
use k8s_testing::FakeApi;
use k8s_types::apiserver::ApiExt;
use k8s_types::apps::{PodTemplateSpec, ReplicaSet, ReplicaSetSpec};
use k8s_types::core::{Container, Pod, PodSpec};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::ObjectMeta;

fn labels(app: &str) -> BTreeMap<String, String> {
    [("app".to_string(), app.to_string())].into()
}

fn replica_set(name: &str, replicas: i32) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: Some(LabelSelector::from_labels(labels("db"))),
            template: PodTemplateSpec {
                metadata: ObjectMeta {
                    labels: labels("db").into(),
                    annotations: [("note".to_string(), "x".to_string())].into(),
                    ..Default::default()
                },
                spec: PodSpec {
                    containers: vec![Container {
                        name: "db".into(),
                        image: "db:1".into(),
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                },
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The ReplicaSet controller alone, run by a manager (informers and work queue).
fn rs_controller() -> ControllerManager {
    ControllerManager::with_controllers(vec![Box::new(ReplicaSetController::new())])
}

fn tick(api: &mut FakeApi, ctrl: &mut ControllerManager) {
    api.now += 1;
    ctrl.reconcile(api);
    fake_scheduler_and_kubelet(api);
}

#[test]
fn creates_pods_from_template_with_owner_reference_and_events() {
    let mut api = FakeApi::at(0);
    let rs = api.create_typed(replica_set("db", 2)).expect("rs");
    let mut ctrl = rs_controller();
    tick(&mut api, &mut ctrl);
    let pods = api.pods();
    assert_eq!(pods.len(), 2);
    for p in &pods {
        assert!(p.metadata.name.starts_with("db-"));
        assert_eq!(p.metadata.generate_name.as_deref(), Some("db-"));
        assert_eq!(p.metadata.labels, labels("db"));
        assert_eq!(p.metadata.annotations["note"], "x");
        let r = &p.metadata.owner_references[0];
        assert_eq!(
            (r.api_version.as_str(), r.kind.as_str(), r.name.as_str()),
            ("apps/v1", "ReplicaSet", "db")
        );
        assert_eq!(r.uid, rs.metadata.uid.clone().unwrap_or_default());
        assert_eq!(
            (r.controller, r.block_owner_deletion),
            (Some(true), Some(true))
        );
    }
    let mut created = api.event_messages("SuccessfulCreate");
    created.sort();
    let mut want: Vec<_> = pods
        .iter()
        .map(|p| format!("Created pod: {}", p.metadata.name))
        .collect();
    want.sort();
    assert_eq!(created, want);
    // Status is computed before this pass's creates (as upstream); the next pass counts them, the
    // one after sees them Ready.
    tick(&mut api, &mut ctrl);
    tick(&mut api, &mut ctrl);
    let st = api
        .get_typed::<ReplicaSet>("default", "db")
        .expect("rs")
        .status;
    assert_eq!(
        (
            st.replicas,
            st.fully_labeled_replicas,
            st.ready_replicas,
            st.available_replicas
        ),
        (2, 2, 2, 2)
    );
    assert_eq!(st.observed_generation, Some(1));
}

#[test]
fn adopts_matching_orphans_and_releases_pods_that_stop_matching() {
    let mut api = FakeApi::at(0);
    let orphan = Pod {
        metadata: ObjectMeta {
            name: "orphan".into(),
            namespace: Some("default".into()),
            labels: labels("db").into(),
            ..Default::default()
        },
        ..Default::default()
    };
    api.create_typed(orphan).expect("orphan");
    api.create_typed(replica_set("db", 2)).expect("rs");
    let mut ctrl = rs_controller();
    tick(&mut api, &mut ctrl);
    let pods = api.pods();
    assert_eq!(pods.len(), 2, "the orphan counts as one replica");
    let adopted: Pod = api.get_typed("default", "orphan").expect("orphan");
    assert_eq!(owner(&adopted), "db");

    // Relabel the adopted pod: the ReplicaSet releases it and replaces it.
    let mut relabeled = adopted.clone();
    relabeled.metadata.labels = labels("other").into();
    api.update_typed(relabeled).expect("relabel");
    tick(&mut api, &mut ctrl);
    let released: Pod = api.get_typed("default", "orphan").expect("orphan");
    assert!(released.metadata.owner_references.is_empty());
    tick(&mut api, &mut ctrl);
    let owned = api.pods().into_iter().filter(|p| owner(p) == "db").count();
    assert_eq!(owned, 2);
}

#[test]
fn scale_down_deletes_not_ready_pods_first() {
    let mut api = FakeApi::at(0);
    api.create_typed(replica_set("db", 3)).expect("rs");
    let mut ctrl = rs_controller();
    tick(&mut api, &mut ctrl);
    tick(&mut api, &mut ctrl);
    // Three Ready pods; scale to 4 then immediately to 1 once the fourth exists but is not ready.
    let mut rs: ReplicaSet = api.get_typed("default", "db").expect("rs");
    rs.spec.replicas = Some(4);
    let rs = api.update_typed(rs).expect("scale up");
    tick(&mut api, &mut ctrl);
    let newest = api
        .pods()
        .into_iter()
        .find(|p| !p.is_ready())
        .expect("new pod not ready yet");
    let mut rs: ReplicaSet = api.get_typed("default", &rs.metadata.name).expect("rs");
    rs.spec.replicas = Some(3);
    api.update_typed(rs).expect("scale down");
    api.now += 1;
    ctrl.reconcile(&mut api);
    assert_eq!(
        api.event_messages("SuccessfulDelete"),
        [format!("Deleted pod: {}", newest.metadata.name)]
    );
}

#[test]
fn manager_runs_controllers_in_order() {
    let m = ControllerManager::new();
    assert_eq!(
        m.controller_names(),
        [
            "node-lifecycle-controller",
            "taint-eviction-controller",
            "pod-garbage-collector",
            "resourcequota-controller",
            "deployment-controller",
            "replicaset-controller",
            "daemonset-controller",
            "statefulset-controller",
            "persistentvolume-binder-controller",
            "cronjob-controller",
            "job-controller",
            "ttl-after-finished-controller",
            "disruption-controller",
            "endpointslice-controller",
            "garbagecollector",
            "namespace-controller",
            "resourceclaim-controller"
        ]
    );
    let only_rs = ControllerManager::with_controllers(vec![Box::new(ReplicaSetController::new())]);
    assert_eq!(only_rs.controller_names(), ["replicaset-controller"]);
    let mut api = FakeApi::at(0);
    api.create_typed(replica_set("db", 1)).expect("rs");
    let mut only_rs = only_rs;
    api.now = 1;
    only_rs.reconcile(&mut api);
    assert_eq!(api.pods().len(), 1);
}

/// Upstream's recorder correlates the 100 `SuccessfulCreate` events of one sync
/// (client-go `tools/record/events_cache.go`): the first 9 distinct messages are Events of their
/// own; the 10th distinct message of the same (source, object, type, reason) within 600 s becomes
/// the aggregate `(combined from similar events): ...`, which the 11th and later count up; the
/// spam filter lets 25 events about one object (and type) through at once, so the aggregate stops
/// at 25 - 9 = 16 and the other 75 are dropped. A token comes back 300 s later: of the 100
/// `SuccessfulDelete` events of a scale-down then, exactly one is written.
#[test]
fn scaling_to_100_writes_nine_events_and_an_aggregate_counted_to_16() {
    let mut api = FakeApi::at(0);
    api.create_typed(replica_set("big", 100)).expect("rs");
    let mut ctrl = rs_controller();
    tick(&mut api, &mut ctrl);
    let mut pods = api.pods();
    assert_eq!(pods.len(), 100);
    pods.sort_by_key(|p| p.metadata.uid.clone());
    let mut created: Vec<_> = api
        .events()
        .into_iter()
        .filter(|e| e.reason == "SuccessfulCreate")
        .collect();
    created.sort_by_key(|e| e.metadata.uid.clone());
    let got: Vec<(String, i32)> = created
        .iter()
        .map(|e| (e.message.to_string(), e.count))
        .collect();
    let mut want: Vec<(String, i32)> = pods[..9]
        .iter()
        .map(|p| (format!("Created pod: {}", p.metadata.name), 1))
        .collect();
    want.push((
        format!(
            "(combined from similar events): Created pod: {}",
            pods[24].metadata.name
        ),
        16,
    ));
    assert_eq!(got, want);
    let aggregate = &created[9];
    assert_eq!(aggregate.first_timestamp, aggregate.last_timestamp);
    assert_eq!(created.iter().map(|e| e.count).sum::<i32>(), 25);

    // 300 ticks after the burst, one token is back.
    api.now = 300;
    let mut rs = api.get_typed::<ReplicaSet>("default", "big").expect("rs");
    rs.spec.replicas = Some(0);
    api.update_typed(rs).expect("scale down");
    tick(&mut api, &mut ctrl);
    assert_eq!(api.event_messages("SuccessfulDelete").len(), 1);
    assert_eq!(api.event_messages("SuccessfulCreate").len(), 10);
}

/// Upstream's ReplicaSet lists the pods of its own namespace only: a pod elsewhere whose
/// controller reference names the ReplicaSet's uid is neither counted nor adopted, so the
/// ReplicaSet still creates its 2 replicas and reports 2.
#[test]
fn a_pod_of_another_namespace_is_not_counted() {
    let mut api = FakeApi::at(0);
    let rs = api.create_typed(replica_set("db", 2)).expect("rs");
    let mut stray = Pod {
        metadata: ObjectMeta {
            name: "stray".into(),
            namespace: Some("other".into()),
            labels: labels("db").into(),
            ..Default::default()
        },
        ..Default::default()
    };
    stray
        .metadata
        .owner_references
        .push(k8s_types::meta::OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "db".into(),
            uid: rs.metadata.uid.clone().expect("uid"),
            controller: Some(true),
            ..Default::default()
        });
    api.create_typed(stray).expect("stray");
    let mut ctrl = rs_controller();
    tick(&mut api, &mut ctrl);
    tick(&mut api, &mut ctrl);
    let in_default = api
        .pods()
        .into_iter()
        .filter(|p| p.metadata.namespace() == "default")
        .count();
    assert_eq!(in_default, 2);
    let rs: ReplicaSet = api.get_typed("default", "db").expect("rs");
    assert_eq!(rs.status.replicas, 2);
}
