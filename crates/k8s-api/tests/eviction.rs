//! The pods/eviction subresource through the public API (upstream
//! `pkg/registry/core/pod/storage/eviction.go`).

mod common;

use common::{pod, server};
use k8s_api::ApiServer;
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::apps::IntOrString;
use k8s_types::core::{Binding, Pod, PodCondition};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::tick_timestamp;
use k8s_types::policy::{Eviction, PodDisruptionBudget};
use k8s_types::status::StatusReason;
use k8s_types::Object;

fn running(api: &mut ApiServer, name: &str, ready: bool) {
    let mut p = pod(name);
    p.metadata.labels.insert("app".into(), "web".into());
    api.create(Object::Pod(Box::new(p))).unwrap();
    api.bind(&Binding::new("default", name, "node-a")).unwrap();
    let mut p: Pod = api.get_typed("default", name).unwrap();
    p.status.phase = Some("Running".into());
    p.set_condition(PodCondition {
        type_: "Ready".into(),
        status: if ready { "True" } else { "False" }.into(),
        ..Default::default()
    });
    api.update_status_typed(p).unwrap();
}

/// A budget with the status the disruption controller would have written.
fn budget(api: &mut ApiServer, name: &str, allowed: i32, healthy: i32, desired: i32) {
    let mut b = PodDisruptionBudget::default();
    b.metadata.name = name.into();
    b.metadata.namespace = Some("default".into());
    b.spec.min_available = Some(IntOrString::Int(desired));
    b.spec.selector = Some(LabelSelector::from_labels([("app", "web")]));
    api.create(Object::PodDisruptionBudget(Box::new(b)))
        .unwrap();
    let mut b: PodDisruptionBudget = api.get_typed("default", name).unwrap();
    b.status.observed_generation = Some(1);
    b.status.disruptions_allowed = allowed;
    b.status.current_healthy = healthy;
    b.status.desired_healthy = desired;
    b.status.expected_pods = healthy;
    api.update_status_typed(b).unwrap();
}

fn eviction(name: &str) -> Eviction {
    let mut e = Eviction::default();
    e.metadata.name = name.into();
    e.metadata.namespace = Some("default".into());
    e
}

#[test]
fn eviction_decrements_the_budget_marks_and_deletes_the_pod() {
    let mut api = server();
    running(&mut api, "web-0", true);
    running(&mut api, "web-1", true);
    budget(&mut api, "web", 1, 2, 1);
    api.set_tick(40);
    api.evict(&eviction("web-0")).unwrap();
    let b: PodDisruptionBudget = api.get_typed("default", "web").unwrap();
    assert_eq!(b.status.disruptions_allowed, 0);
    assert_eq!(b.status.disrupted_pods["web-0"], tick_timestamp(40));
    let c = b.disruption_allowed_condition().unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "InsufficientPods")
    );
    // The pod is terminating (30 s default grace) with the DisruptionTarget condition.
    let p: Pod = api.get_typed("default", "web-0").unwrap();
    assert_eq!(
        p.metadata.deletion_timestamp,
        Some(tick_timestamp(70).into())
    );
    let c = p.condition("DisruptionTarget").unwrap();
    assert_eq!(c.status, "True");
    assert_eq!(c.reason.as_deref(), Some("EvictionByEvictionAPI"));
    assert_eq!(c.message.as_deref(), Some("Eviction API: evicting"));

    // The budget is exhausted: 429 with upstream's message and cause; the pod is untouched.
    let err = api.evict(&eviction("web-1")).unwrap_err();
    assert_eq!(err.reason, StatusReason::TooManyRequests);
    assert_eq!(err.code, 429);
    assert_eq!(
        err.message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(err.causes[0].reason, "DisruptionBudget");
    assert_eq!(
        err.causes[0].message,
        "The disruption budget web needs 1 healthy pods and has 2 currently"
    );
    let p: Pod = api.get_typed("default", "web-1").unwrap();
    assert!(p.metadata.deletion_timestamp.is_none());
    assert!(p.condition("DisruptionTarget").is_none());
}

#[test]
fn unready_pods_terminal_pods_and_stale_budgets() {
    let mut api = server();
    running(&mut api, "web-0", true);
    running(&mut api, "web-1", false);
    // currentHealthy 1 >= desiredHealthy 1 > 0: the unready pod goes without a decrement.
    budget(&mut api, "web", 0, 1, 1);
    api.evict(&eviction("web-1")).unwrap();
    let b: PodDisruptionBudget = api.get_typed("default", "web").unwrap();
    assert_eq!(b.status.disruptions_allowed, 0);
    assert!(b.status.disrupted_pods.is_empty());
    // The ready one is refused.
    assert_eq!(api.evict(&eviction("web-0")).unwrap_err().code, 429);
    // A spec change the controller has not observed: 429 "still being processed".
    let mut b: PodDisruptionBudget = api.get_typed("default", "web").unwrap();
    b.spec.min_available = Some(IntOrString::Int(0));
    let b = api.update_typed(b).unwrap();
    assert_eq!(b.metadata.generation, Some(2));
    let err = api.evict(&eviction("web-0")).unwrap_err();
    assert_eq!(
        err.causes[0].message,
        "The disruption budget web is still being processed by the server."
    );
    // A Succeeded pod is deleted whatever the budget says.
    let mut p: Pod = api.get_typed("default", "web-0").unwrap();
    p.status.phase = Some("Succeeded".into());
    api.update_status_typed(p).unwrap();
    api.evict(&eviction("web-0")).unwrap();
    assert!(api.get_typed::<Pod>("default", "web-0").is_err());
}

#[test]
fn always_allow_two_budgets_and_missing_pods() {
    let mut api = server();
    running(&mut api, "web-0", false);
    budget(&mut api, "web", 0, 0, 1);
    // IfHealthyBudget: currentHealthy 0 < desiredHealthy 1, so the unready pod needs a disruption.
    assert_eq!(api.evict(&eviction("web-0")).unwrap_err().code, 429);
    let mut b: PodDisruptionBudget = api.get_typed("default", "web").unwrap();
    b.spec.unhealthy_pod_eviction_policy = Some("AlwaysAllow".into());
    api.update_typed(b).unwrap();
    let mut e = eviction("web-0");
    e.delete_options = DeleteOptions {
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    api.evict(&e).unwrap();
    assert!(api.get_typed::<Pod>("default", "web-0").is_err());

    running(&mut api, "web-1", true);
    budget(&mut api, "web-too", 1, 1, 0);
    let err = api.evict(&eviction("web-1")).unwrap_err();
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    let err = api.evict(&eviction("nope")).unwrap_err();
    assert_eq!(err.message, "pods \"nope\" not found");
}
