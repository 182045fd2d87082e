//! The pods/binding subresource through the public API (upstream
//! `pkg/registry/core/pod/storage/storage.go` `setPodNodeAndMetadata`).

mod common;

use common::{pod, server};
use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::core::{Binding, PodSchedulingGate};
use k8s_types::meta::tick_timestamp;
use k8s_types::object::Kind;
use k8s_types::status::StatusReason;
use k8s_types::Object;

#[test]
fn binding_sets_node_name_and_pod_scheduled() {
    let mut api = server();
    api.create(Object::Pod(Box::new(pod("web")))).unwrap();
    api.set_tick(7);
    let mut b = Binding::new("default", "web", "node-a");
    b.metadata
        .annotations
        .insert("example.com/why".into(), "fit".into());
    let bound = api.bind(&b).unwrap();
    assert_eq!(bound.spec.node_name.as_deref(), Some("node-a"));
    let c = bound.condition("PodScheduled").unwrap();
    assert_eq!(c.status, "True");
    assert_eq!(
        c.last_transition_time.as_deref(),
        Some(tick_timestamp(7).as_str())
    );
    assert_eq!(bound.metadata.annotations["example.com/why"], "fit");
    assert_eq!(
        bound.metadata.resource_version.as_deref(),
        Some(api.revision().to_string().as_str())
    );
}

#[test]
fn binding_conflicts_use_upstream_causes() {
    let mut api = server();
    api.create(Object::Pod(Box::new(pod("web")))).unwrap();
    api.bind(&Binding::new("default", "web", "node-a")).unwrap();
    let err = api
        .bind(&Binding::new("default", "web", "node-b"))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::Conflict);
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to node \"node-a\""
    );

    let err = api
        .bind(&Binding::new("default", "ghost", "node-a"))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::NotFound);
    assert_eq!(err.message, "pods \"ghost\" not found");

    let mut gated = pod("gated");
    gated.spec.scheduling_gates = vec![PodSchedulingGate {
        name: "wait".into(),
    }];
    api.create(Object::Pod(Box::new(gated))).unwrap();
    let err = api
        .bind(&Binding::new("default", "gated", "node-a"))
        .unwrap_err();
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on pods/binding \"gated\": pod gated has non-empty .spec.schedulingGates"
    );
}

#[test]
fn a_terminating_pod_cannot_be_bound() {
    let mut api = server();
    api.create(Object::Pod(Box::new(pod("web")))).unwrap();
    api.bind(&Binding::new("default", "web", "node-a")).unwrap();
    // Terminating and bound: the being-deleted check comes before the already-assigned one.
    api.delete(&Kind::Pod, "default", "web", DeleteOptions::default())
        .unwrap();
    let err = api
        .bind(&Binding::new("default", "web", "node-b"))
        .unwrap_err();
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on pods/binding \"web\": pod web is being deleted, cannot be assigned to a host"
    );
}

#[test]
fn pods_of_one_template_share_its_containers_through_create_and_bind() {
    // A controller's pods copy one template spec: defaulting (nothing left to default), admission
    // and the bind each copy the `PodSpec`, and every copy shares the container list and its
    // resource maps.
    use k8s_types::apiserver::ApiExt;
    use k8s_types::core::Pod;
    use k8s_types::cow_arc::{CowArc, ResourceMap};
    let mut api = server();
    let mut template = pod("template");
    template.spec.containers[0].resources.requests =
        [("cpu".to_string(), common::q("100m"))].into();
    let first: Pod = api.create_typed(template.clone()).unwrap();
    let mut second = template.clone();
    second.metadata.name = "second".into();
    second.spec = first.spec.clone();
    let second: Pod = api.create_typed(second).unwrap();
    for (name, node) in [("template", "node-a"), ("second", "node-b")] {
        api.bind(&Binding::new("default", name, node)).unwrap();
    }
    let a: Pod = api.get_typed("default", "template").unwrap();
    let b: Pod = api.get_typed("default", "second").unwrap();
    assert_eq!(a.spec.node_name.as_deref(), Some("node-a"));
    assert_eq!(b.spec.node_name.as_deref(), Some("node-b"));
    assert!(!CowArc::ptr_eq(&a.spec, &b.spec));
    assert!(CowArc::ptr_eq(&a.spec.containers, &first.spec.containers));
    assert!(CowArc::ptr_eq(&b.spec.containers, &second.spec.containers));
    assert!(CowArc::ptr_eq(&a.spec.containers, &b.spec.containers));
    let requests = |p: &Pod| p.spec.containers[0].resources.requests.clone();
    assert!(ResourceMap::ptr_eq(&requests(&a), &requests(&b)));
    assert_eq!(requests(&a)["cpu"].to_string(), "100m");
}
