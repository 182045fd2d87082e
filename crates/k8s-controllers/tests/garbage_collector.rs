//! Background cascading deletion: deleting a Deployment removes its ReplicaSets, then their pods,
//! over the next ticks; partially orphaned objects lose only their dangling owner references.

mod common;

use common::FakeCluster;
use k8s_controllers::{ControllerManager, GarbageCollector};
use k8s_testing::{deployment, FakeApi};
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::core::{Pod, PodSpec};
use k8s_types::meta::{ObjectMeta, OwnerReference};
use k8s_types::Kind;

#[test]
fn deleting_a_deployment_cascades_over_ticks() {
    let mut c = FakeCluster::new();
    c.api
        .create_typed(deployment("web", 2, "app:v1", None))
        .expect("create");
    c.step();
    c.step();
    assert_eq!(c.available_pods().len(), 2);
    c.api
        .delete(
            &Kind::Deployment,
            "default",
            "web",
            DeleteOptions::default(),
        )
        .expect("delete");
    // Next tick: the ReplicaSet's owner is gone, the ReplicaSet is deleted.
    c.step();
    assert!(c.api.replica_sets().is_empty());
    assert_eq!(c.api.pods().len(), 2, "pods go one tick later");
    // The tick after: the pods' owner is gone; bound pods terminate gracefully.
    c.step();
    assert!(c.active_pods().is_empty());
    c.step();
    assert!(c.api.pods().is_empty());
}

fn pod_with_owners(name: &str, owners: Vec<OwnerReference>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: Some("default".into()),
            owner_references: owners.into(),
            ..Default::default()
        },
        spec: PodSpec::default().into(),
        ..Default::default()
    }
}

#[test]
fn only_dangling_references_are_removed_when_an_owner_remains() {
    let mut api = FakeApi::at(0);
    let owner = api
        .create_typed(pod_with_owners("owner", vec![]))
        .expect("owner");
    let solid = OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: "owner".into(),
        uid: owner.metadata.uid.clone().unwrap_or_default(),
        ..Default::default()
    };
    let dangling = OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: "gone".into(),
        uid: "uid-gone".into(),
        controller: Some(true),
        ..Default::default()
    };
    let stale_uid = OwnerReference {
        uid: "uid-of-a-previous-owner".into(),
        ..solid.clone()
    };
    api.create_typed(pod_with_owners(
        "both",
        vec![solid.clone(), dangling.clone()],
    ))
    .expect("both");
    api.create_typed(pod_with_owners("stale", vec![stale_uid]))
        .expect("stale");
    let unknown = OwnerReference {
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        name: "w".into(),
        uid: "uid-w".into(),
        ..Default::default()
    };
    api.create_typed(pod_with_owners("custom", vec![unknown]))
        .expect("custom");

    let mut gc = ControllerManager::with_controllers(vec![Box::new(GarbageCollector::new())]);
    api.now = 1;
    gc.reconcile(&mut api);
    let both: Pod = api.get_typed("default", "both").expect("kept");
    assert_eq!(both.metadata.owner_references, vec![solid].into());
    assert!(
        api.get(&Kind::Pod, "default", "stale").is_err(),
        "an owner with another uid is a different object: the dependent goes"
    );
    assert!(
        api.get(&Kind::Pod, "default", "custom").is_ok(),
        "owners of unknown kinds are never resolved, so never collected"
    );
}
