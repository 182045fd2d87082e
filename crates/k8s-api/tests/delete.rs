//! delete through the public API: graceful pod deletion (upstream pod strategy
//! `CheckGracefulDelete` and `rest.BeforeDelete`), immediate deletion of everything else, and the
//! NamespaceLifecycle rule for immortal namespaces.

mod common;

use common::{node, pod, server};
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions, PropagationPolicy};
use k8s_types::core::{Binding, Pod};
use k8s_types::meta::tick_timestamp;
use k8s_types::object::{Kind, Resource};
use k8s_types::status::StatusReason;
use k8s_types::store::WatchEventType;
use k8s_types::Object;

fn bound_pod(api: &mut k8s_api::ApiServer, name: &str) -> Pod {
    api.create(Object::Pod(Box::new(pod(name)))).unwrap();
    api.bind(&Binding::new("default", name, "node-a")).unwrap()
}

#[test]
fn bound_pod_is_deleted_gracefully() {
    let mut api = server();
    bound_pod(&mut api, "web");
    api.set_tick(100);
    let out = api
        .delete(&Kind::Pod, "default", "web", DeleteOptions::default())
        .unwrap();
    let m = out.meta();
    // terminationGracePeriodSeconds defaulted to 30: deletion at 100 + 30.
    assert_eq!(m.deletion_timestamp, Some(tick_timestamp(130).into()));
    assert_eq!(m.deletion_grace_period_seconds, Some(30));
    assert_eq!(m.generation, Some(2));
    let stored: Pod = api.get_typed("default", "web").unwrap();
    assert!(stored.is_terminating());

    // A second delete without a shorter grace period changes nothing.
    let rev = api.revision();
    api.set_tick(101);
    api.delete(&Kind::Pod, "default", "web", DeleteOptions::default())
        .unwrap();
    assert_eq!(api.revision(), rev);

    // Shortening to 10: the deletion moves to 100 + 10.
    let shorter = api
        .delete(
            &Kind::Pod,
            "default",
            "web",
            DeleteOptions {
                grace_period_seconds: Some(10),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        shorter.meta().deletion_timestamp,
        Some(tick_timestamp(110).into())
    );

    // Grace 0 removes it.
    api.delete(
        &Kind::Pod,
        "default",
        "web",
        DeleteOptions {
            grace_period_seconds: Some(0),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(api.get(&Kind::Pod, "default", "web").is_err());
}

#[test]
fn explicit_grace_period_overrides_the_pod_default() {
    let mut api = server();
    bound_pod(&mut api, "web");
    api.set_tick(5);
    let out = api
        .delete(
            &Kind::Pod,
            "default",
            "web",
            DeleteOptions {
                grace_period_seconds: Some(3),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        out.meta().deletion_timestamp,
        Some(tick_timestamp(8).into())
    );
    assert_eq!(out.meta().deletion_grace_period_seconds, Some(3));
}

#[test]
fn unbound_and_terminal_pods_are_removed_at_once() {
    let mut api = server();
    api.create(Object::Pod(Box::new(pod("pending")))).unwrap();
    let before = api.revision();
    let out = api
        .delete(&Kind::Pod, "default", "pending", DeleteOptions::default())
        .unwrap();
    assert!(api.get(&Kind::Pod, "default", "pending").is_err());
    // Upstream writes deletionTimestamp (grace 0) and then deletes: MODIFIED, DELETED.
    let events: Vec<WatchEventType> = api
        .watch(&Kind::Pod, before)
        .unwrap()
        .iter()
        .map(|e| e.type_)
        .collect();
    assert_eq!(
        events,
        vec![WatchEventType::Modified, WatchEventType::Deleted]
    );
    assert_eq!(out.meta().deletion_grace_period_seconds, Some(0));

    let mut done = bound_pod(&mut api, "done");
    done.status.phase = Some("Succeeded".into());
    api.update_status(Object::Pod(Box::new(done))).unwrap();
    api.delete(&Kind::Pod, "default", "done", DeleteOptions::default())
        .unwrap();
    assert!(api.get(&Kind::Pod, "default", "done").is_err());
}

#[test]
fn other_kinds_are_removed_at_once_and_missing_objects_are_not_found() {
    let mut api = server();
    api.create(Object::Node(Box::new(node("node-a")))).unwrap();
    let before = api.revision();
    let out = api
        .delete(
            &Kind::Node,
            "",
            "node-a",
            DeleteOptions {
                grace_period_seconds: Some(30),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(out.meta().deletion_timestamp, None);
    assert_eq!(api.revision(), before + 1);
    let err = api
        .delete(&Kind::Node, "", "node-a", DeleteOptions::default())
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::NotFound);
    assert_eq!(err.message, "nodes \"node-a\" not found");
}

#[test]
fn immortal_namespaces_cannot_be_deleted() {
    let mut api = server();
    let err = api
        .delete(&Kind::Namespace, "", "default", DeleteOptions::default())
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::Forbidden);
    assert_eq!(
        err.message,
        "namespaces \"default\" is forbidden: this namespace may not be deleted"
    );
}

#[test]
fn huge_grace_periods_do_not_overflow() {
    let mut api = server();
    bound_pod(&mut api, "web");
    api.set_tick(10);
    let out = api
        .delete(
            &Kind::Pod,
            "default",
            "web",
            DeleteOptions {
                grace_period_seconds: Some(i64::MAX),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(out.meta().deletion_grace_period_seconds, Some(i64::MAX));
    assert_eq!(
        out.meta().deletion_timestamp,
        Some(tick_timestamp(10 + i64::MAX as u64).into())
    );
    // A negative period counts as 1 second (upstream CheckGracefulDelete) for a fresh delete.
    bound_pod(&mut api, "neg");
    let out = api
        .delete(
            &Kind::Pod,
            "default",
            "neg",
            DeleteOptions {
                grace_period_seconds: Some(-5),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(out.meta().deletion_grace_period_seconds, Some(1));
    assert_eq!(
        out.meta().deletion_timestamp,
        Some(tick_timestamp(11).into())
    );
}

fn config_map(api: &mut k8s_api::ApiServer, name: &str, finalizers: &[&str]) {
    let lease: k8s_types::coordination::Lease = serde_json::from_value(serde_json::json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": name, "namespace": "default", "finalizers": finalizers}
    }))
    .unwrap();
    api.create(lease.into_object()).unwrap();
}

fn finalizers(api: &k8s_api::ApiServer, name: &str) -> Option<Vec<String>> {
    api.get(&Kind::Lease, "default", name)
        .ok()
        .map(|o| o.meta().finalizers.to_vec())
}

fn with_policy(p: PropagationPolicy) -> DeleteOptions {
    DeleteOptions {
        propagation_policy: Some(p),
        ..Default::default()
    }
}

/// `propagationPolicy` as upstream `deletionFinalizersForGarbageCollection` and `markAsDeleting`
/// (store.go): Orphan and Foreground put their finalizer on the object, which stays with a
/// deletionTimestamp of now and a zero grace period; Background (or no policy and no finalizer)
/// removes it at once; a user finalizer is kept beside the garbage collector's.
#[test]
fn a_propagation_policy_puts_its_finalizer_and_keeps_the_object() {
    let mut api = server();
    api.set_tick(40);
    config_map(&mut api, "orphaned", &["example.com/keep"]);
    let out = api
        .delete(
            &Kind::Lease,
            "default",
            "orphaned",
            with_policy(PropagationPolicy::Orphan),
        )
        .unwrap();
    assert_eq!(
        out.meta().deletion_timestamp,
        Some(tick_timestamp(40).into())
    );
    assert_eq!(out.meta().deletion_grace_period_seconds, Some(0));
    assert_eq!(
        finalizers(&api, "orphaned"),
        Some(vec!["example.com/keep".to_string(), "orphan".to_string()])
    );
    // A second delete with Foreground swaps the finalizer (upstream removes both, then adds
    // the one the policy names); the deletionTimestamp stays.
    api.set_tick(41);
    let again = api
        .delete(
            &Kind::Lease,
            "default",
            "orphaned",
            with_policy(PropagationPolicy::Foreground),
        )
        .unwrap();
    assert_eq!(
        again.meta().deletion_timestamp,
        Some(tick_timestamp(40).into())
    );
    assert_eq!(
        finalizers(&api, "orphaned"),
        Some(vec![
            "example.com/keep".to_string(),
            "foregroundDeletion".to_string()
        ])
    );
    config_map(&mut api, "gone", &[]);
    api.delete(
        &Kind::Lease,
        "default",
        "gone",
        with_policy(PropagationPolicy::Background),
    )
    .unwrap();
    assert_eq!(finalizers(&api, "gone"), None);
    config_map(&mut api, "plain", &[]);
    api.delete(&Kind::Lease, "default", "plain", DeleteOptions::default())
        .unwrap();
    assert_eq!(finalizers(&api, "plain"), None);
}

/// Upstream `shouldDeleteDuringUpdate`: the update that removes the last garbage-collector
/// finalizer of an object being deleted with no grace left removes it (MODIFIED, then DELETED);
/// an update that keeps it leaves the object.
#[test]
fn removing_the_last_gc_finalizer_removes_the_object() {
    let mut api = server();
    config_map(&mut api, "cm", &[]);
    api.delete(
        &Kind::Lease,
        "default",
        "cm",
        with_policy(PropagationPolicy::Foreground),
    )
    .unwrap();
    let rev = api.revision();
    let mut cm = Object::clone(&api.get(&Kind::Lease, "default", "cm").unwrap());
    cm.meta_mut().labels.insert("touched".into(), "yes".into());
    api.update(cm.clone()).unwrap();
    assert!(
        finalizers(&api, "cm").is_some(),
        "still there while the finalizer is"
    );
    let mut cm = Object::clone(&api.get(&Kind::Lease, "default", "cm").unwrap());
    cm.meta_mut().finalizers.clear();
    api.update(cm).unwrap();
    assert_eq!(finalizers(&api, "cm"), None);
    let types: Vec<WatchEventType> = api
        .watch(&Kind::Lease, rev)
        .unwrap()
        .into_iter()
        .map(|e| e.type_)
        .collect();
    assert_eq!(
        types,
        [
            WatchEventType::Modified,
            WatchEventType::Modified,
            WatchEventType::Deleted
        ]
    );
}

/// A bound pod deleted in the foreground terminates gracefully as any pod, and its final
/// (grace 0) delete leaves it in place while the finalizer is pending.
#[test]
fn a_pod_with_a_pending_gc_finalizer_outlives_its_grace_period() {
    let mut api = server();
    bound_pod(&mut api, "web");
    api.set_tick(100);
    let out = api
        .delete(
            &Kind::Pod,
            "default",
            "web",
            with_policy(PropagationPolicy::Foreground),
        )
        .unwrap();
    assert_eq!(
        out.meta().deletion_timestamp,
        Some(tick_timestamp(130).into())
    );
    api.set_tick(130);
    let last = api
        .delete(
            &Kind::Pod,
            "default",
            "web",
            DeleteOptions {
                grace_period_seconds: Some(0),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(last.meta().deletion_grace_period_seconds, Some(0));
    assert_eq!(
        last.meta().finalizers,
        vec!["foregroundDeletion".to_string()]
    );
    assert!(api.get(&Kind::Pod, "default", "web").is_ok());
}

/// The garbage collector does not watch Events (nor custom resources), so a propagation policy on
/// one puts no finalizer that nothing would remove: it is deleted at once.
#[test]
fn a_kind_the_collector_does_not_watch_is_deleted_at_once_whatever_the_policy() {
    let mut api = server();
    let ev: k8s_types::core::Event = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Test", "message": "m", "type": "Normal"
    }))
    .unwrap();
    api.create(ev.into_object()).unwrap();
    api.delete(
        &Kind::Event,
        "default",
        "e1",
        with_policy(PropagationPolicy::Foreground),
    )
    .unwrap();
    assert!(api
        .get(&Kind::Event, "default", "e1")
        .unwrap_err()
        .is_not_found());
}
