//! The restore path (`ApiServer::restore`): an object of a dump put back as existing state, as an
//! etcd restore holds it, next to what create would do with the same object.

mod common;

use common::{pod, q, server};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Pod;
use k8s_types::status::StatusReason;
use k8s_types::Object;

/// A Running pod bound to a node, naming a PriorityClass that does not exist, with a priority and
/// qosClass as a real apiserver wrote them: create refuses it (the Priority plugin: no such class)
/// and would reset the status to Pending; restore keeps every written field.
#[test]
fn restore_keeps_status_uid_and_admitted_fields() {
    let mut api = server();
    let mut p = pod("p");
    p.metadata.uid = Some("1f2e".into());
    p.metadata.creation_timestamp = Some("2024-05-01T10:00:00Z".into());
    p.metadata.resource_version = Some("98765".into());
    p.spec.node_name = Some("n1".into());
    p.spec.priority_class_name = Some("gold".into());
    p.spec.priority = Some(1000);
    p.status.phase = Some("Running".into());
    p.status.qos_class = Some("Guaranteed".into());
    p.status.pod_ip = Some("10.1.2.3".into());
    let refused = api.create(Object::Pod(Box::new(p.clone()))).unwrap_err();
    assert_eq!(refused.reason, StatusReason::Forbidden, "{refused:?}");
    let before = api.revision();
    api.restore(Object::Pod(Box::new(p))).unwrap();
    let got: Pod = api.get_typed("default", "p").unwrap();
    assert_eq!(got.metadata.uid.as_deref(), Some("1f2e"));
    assert_eq!(
        got.metadata.creation_timestamp.as_deref(),
        Some("2024-05-01T10:00:00Z")
    );
    assert_eq!(got.status.phase.as_deref(), Some("Running"));
    assert_eq!(got.status.qos_class.as_deref(), Some("Guaranteed"));
    assert_eq!(got.status.pod_ip.as_deref(), Some("10.1.2.3"));
    assert_eq!(got.spec.priority, Some(1000));
    assert_eq!(got.spec.node_name.as_deref(), Some("n1"));
    // The store's next revision, not the dump's 98765.
    assert_eq!(
        got.metadata.resource_version.as_deref(),
        Some((before + 1).to_string().as_str())
    );
}

/// What is missing is filled as create would: a pod with requests == limits and no status gets
/// qosClass Guaranteed (upstream `GetPodQOS`), phase Pending, generation 1; defaulting runs
/// (terminationGracePeriodSeconds 30, upstream `SetDefaults_PodSpec`).
#[test]
fn restore_fills_what_is_missing() {
    let mut api = server();
    api.set_tick(7);
    let mut p = pod("g");
    let res = &mut p.spec.containers[0].resources;
    for r in [&mut res.limits, &mut res.requests] {
        r.insert("cpu".into(), q("1"));
        r.insert("memory".into(), q("1Gi"));
    }
    api.restore(Object::Pod(Box::new(p))).unwrap();
    let got: Pod = api.get_typed("default", "g").unwrap();
    assert_eq!(got.status.qos_class.as_deref(), Some("Guaranteed"));
    assert_eq!(got.status.phase.as_deref(), Some("Pending"));
    assert_eq!(got.metadata.generation, Some(1));
    assert_eq!(got.spec.termination_grace_period_seconds, Some(30));
    assert_eq!(
        got.metadata.creation_timestamp.as_deref(),
        Some("1970-01-01T00:00:07Z")
    );
    assert!(got.metadata.uid.is_some());
}

/// Validation still runs: a restored pod without containers is Invalid (422), and a second restore of
/// the same key is AlreadyExists.
#[test]
fn restore_validates_and_refuses_duplicates() {
    let mut api = server();
    let mut empty = pod("e");
    empty.spec.containers.clear();
    let e = api.restore(Object::Pod(Box::new(empty))).unwrap_err();
    assert_eq!(e.code, 422, "{e:?}");
    api.restore(Object::Pod(Box::new(pod("d")))).unwrap();
    let e = api.restore(Object::Pod(Box::new(pod("d")))).unwrap_err();
    assert_eq!(e.reason, StatusReason::AlreadyExists, "{e:?}");
}
