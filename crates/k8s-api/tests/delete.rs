//! delete through the public API: graceful pod deletion (upstream pod strategy
//! `CheckGracefulDelete` and `rest.BeforeDelete`), immediate deletion of everything else, and the
//! NamespaceLifecycle rule for immortal namespaces.

mod common;

use common::{node, pod, server};
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::core::{Binding, Pod};
use k8s_types::meta::tick_timestamp;
use k8s_types::object::Kind;
use k8s_types::status::StatusReason;
use k8s_types::store::WatchEventType;
use k8s_types::Object;

fn bound_pod(api: &mut k8s_api::ApiServer, name: &str) -> Pod {
    api.create(Object::Pod(pod(name))).unwrap();
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
    assert_eq!(m.deletion_timestamp, Some(tick_timestamp(130)));
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
            },
        )
        .unwrap();
    assert_eq!(shorter.meta().deletion_timestamp, Some(tick_timestamp(110)));

    // Grace 0 removes it.
    api.delete(
        &Kind::Pod,
        "default",
        "web",
        DeleteOptions {
            grace_period_seconds: Some(0),
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
            },
        )
        .unwrap();
    assert_eq!(out.meta().deletion_timestamp, Some(tick_timestamp(8)));
    assert_eq!(out.meta().deletion_grace_period_seconds, Some(3));
}

#[test]
fn unbound_and_terminal_pods_are_removed_at_once() {
    let mut api = server();
    api.create(Object::Pod(pod("pending"))).unwrap();
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
    api.update_status(Object::Pod(done)).unwrap();
    api.delete(&Kind::Pod, "default", "done", DeleteOptions::default())
        .unwrap();
    assert!(api.get(&Kind::Pod, "default", "done").is_err());
}

#[test]
fn other_kinds_are_removed_at_once_and_missing_objects_are_not_found() {
    let mut api = server();
    api.create(Object::Node(node("node-a"))).unwrap();
    let before = api.revision();
    let out = api
        .delete(
            &Kind::Node,
            "",
            "node-a",
            DeleteOptions {
                grace_period_seconds: Some(30),
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
            },
        )
        .unwrap();
    assert_eq!(out.meta().deletion_grace_period_seconds, Some(i64::MAX));
    assert_eq!(
        out.meta().deletion_timestamp,
        Some(tick_timestamp(10 + i64::MAX as u64))
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
            },
        )
        .unwrap();
    assert_eq!(out.meta().deletion_grace_period_seconds, Some(1));
    assert_eq!(out.meta().deletion_timestamp, Some(tick_timestamp(11)));
}
