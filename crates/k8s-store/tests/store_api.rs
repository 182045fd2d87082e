//! Integration test of k8s-store through its public API only: the etcd semantics the apiserver
//! relies on (upstream `k8s.io/apiserver/pkg/storage/testing/store_tests.go` covers the same cases:
//! create of an existing key, CAS update, delete of a missing key, watch ordering, compaction).

use k8s_store::MemStore;
use k8s_types::core::{Node, Pod};
use k8s_types::meta::ObjectMeta;
use k8s_types::store::{ObjectStore, StoreError, WatchEventType};
use k8s_types::Object;

fn pod(ns: &str, name: &str) -> Object {
    Object::Pod(Box::new(Pod {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: Some(ns.into()),
            ..Default::default()
        },
        ..Default::default()
    }))
}

fn node(name: &str) -> Object {
    Object::Node(Box::new(Node {
        metadata: ObjectMeta {
            name: name.into(),
            ..Default::default()
        },
        ..Default::default()
    }))
}

#[test]
fn update_with_a_stale_revision_is_a_conflict() {
    let mut s = MemStore::default();
    let key = "/registry/pods/default/web";
    let created = s.create(key, pod("default", "web")).unwrap();
    let updated = s.update(key, (*created).clone(), Some(1)).unwrap();
    assert_eq!(updated.meta().resource_version.as_deref(), Some("2"));
    // Writing again with the revision we read first must fail: the object moved to revision 2.
    assert_eq!(
        s.update(key, (*created).clone(), Some(1)),
        Err(StoreError::Conflict {
            key: key.into(),
            expected: 1,
            actual: 2
        })
    );
    assert_eq!(
        s.delete(key, Some(1)),
        Err(StoreError::Conflict {
            key: key.into(),
            expected: 1,
            actual: 2
        })
    );
    // An unconditional update succeeds and takes the next revision.
    let forced = s.update(key, (*updated).clone(), None).unwrap();
    assert_eq!(forced.meta().resource_version.as_deref(), Some("3"));
    assert_eq!(s.revision(), 3);
}

#[test]
fn create_of_an_existing_key_and_writes_to_a_missing_key_fail() {
    let mut s = MemStore::default();
    s.create("/registry/nodes/a", node("a")).unwrap();
    assert_eq!(
        s.create("/registry/nodes/a", node("a")),
        Err(StoreError::AlreadyExists {
            key: "/registry/nodes/a".into()
        })
    );
    assert_eq!(
        s.update("/registry/nodes/b", node("b"), None),
        Err(StoreError::NotFound {
            key: "/registry/nodes/b".into()
        })
    );
    assert_eq!(
        s.delete("/registry/nodes/b", None),
        Err(StoreError::NotFound {
            key: "/registry/nodes/b".into()
        })
    );
    // Failed writes do not consume revisions, nor leave a watch event.
    assert_eq!(s.revision(), 1);
    assert_eq!(s.history_len(), 1);
}

#[test]
fn watch_returns_added_modified_deleted_in_revision_order() {
    let mut s = MemStore::default();
    let key = "/registry/pods/default/web";
    let p = s.create(key, pod("default", "web")).unwrap(); // rev 1
    s.create("/registry/nodes/a", node("a")).unwrap(); // rev 2, other prefix
    s.update(key, (*p).clone(), Some(1)).unwrap(); // rev 3
    s.delete(key, None).unwrap(); // rev 4

    let all = s.watch("/registry/pods/", 0).unwrap();
    let seen: Vec<(WatchEventType, i64)> = all.iter().map(|e| (e.type_, e.revision)).collect();
    assert_eq!(
        seen,
        vec![
            (WatchEventType::Added, 1),
            (WatchEventType::Modified, 3),
            (WatchEventType::Deleted, 4)
        ]
    );
    // The DELETED event carries the object with the delete's resourceVersion.
    assert_eq!(all[2].object.meta().resource_version.as_deref(), Some("4"));
    // From revision 1 on: only what happened after it.
    let later: Vec<i64> = s
        .watch("/registry/pods/", 1)
        .unwrap()
        .iter()
        .map(|e| e.revision)
        .collect();
    assert_eq!(later, vec![3, 4]);
}

#[test]
fn watch_from_before_the_compaction_point_is_compacted() {
    let mut s = MemStore::default();
    for i in 0..5 {
        s.create(&format!("/registry/nodes/n{i}"), node(&format!("n{i}")))
            .unwrap();
    }
    s.compact(3);
    assert_eq!(
        s.watch("/registry/nodes/", 2),
        Err(StoreError::Compacted {
            requested: 2,
            oldest: 3
        })
    );
    let revs: Vec<i64> = s
        .watch("/registry/nodes/", 3)
        .unwrap()
        .iter()
        .map(|e| e.revision)
        .collect();
    assert_eq!(revs, vec![4, 5]);
    // Objects are not affected by compaction.
    assert_eq!(s.list("/registry/nodes/").len(), 5);
}

#[test]
fn list_by_prefix_is_in_key_order_and_respects_the_separator() {
    let mut s = MemStore::default();
    s.create("/registry/pods/prod/b", pod("prod", "b")).unwrap();
    s.create("/registry/pods/default/z", pod("default", "z"))
        .unwrap();
    s.create("/registry/pods/default/a", pod("default", "a"))
        .unwrap();
    s.create("/registry/pods/default-2/c", pod("default-2", "c"))
        .unwrap();
    s.create("/registry/nodes/n", node("n")).unwrap();

    let names =
        |prefix: &str| -> Vec<String> { s.list(prefix).iter().map(|o| o.display_name()).collect() };
    assert_eq!(
        names("/registry/pods/"),
        vec!["default-2/c", "default/a", "default/z", "prod/b"]
    );
    // A namespace prefix ends with '/', so "default" does not match "default-2".
    assert_eq!(
        names("/registry/pods/default/"),
        vec!["default/a", "default/z"]
    );
    assert_eq!(names("/registry/nodes/"), vec!["n"]);
    assert!(names("/registry/deployments/").is_empty());
}

#[test]
fn listing_ten_thousand_objects_by_prefix_returns_only_that_prefix() {
    let mut s = MemStore::default();
    for i in 0..10_000 {
        s.create(
            &format!("/registry/pods/default/p{i:05}"),
            pod("default", &format!("p{i:05}")),
        )
        .unwrap();
    }
    s.create("/registry/nodes/n", node("n")).unwrap();
    let pods = s.list("/registry/pods/");
    assert_eq!(pods.len(), 10_000);
    assert_eq!(pods[0].meta().name, "p00000");
    assert_eq!(pods[9_999].meta().name, "p09999");
}
