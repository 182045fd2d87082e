//! The shared informers (k8s-types `informer`) against the real apiserver and store: the watch
//! keeps the cache and its indexes (controller uid, orphans per namespace, owner uid, node) in step
//! with creates, updates and deletes, the changes come out in revision order with the object
//! before and after, and a compacted history makes the informer relist with the same result.

use k8s_api::ApiServer;
use k8s_store::MemStore;
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::core::{Binding, Container, Namespace, Pod};
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::meta::{ObjectMeta, ObjectReference, OwnerReference};
use k8s_types::{Kind, Object};

fn api() -> ApiServer {
    let mut api = ApiServer::new(Box::new(MemStore::new()));
    api.create(Object::Namespace(Box::new(Namespace {
        metadata: ObjectMeta {
            name: "default".into(),
            ..Default::default()
        },
        ..Default::default()
    })))
    .expect("namespace");
    api
}

fn pod(name: &str, owner_uid: Option<&str>) -> Object {
    let mut p = Pod {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: Some("default".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    if let Some(uid) = owner_uid {
        p.metadata.owner_references.push(OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "rs".into(),
            uid: uid.into(),
            controller: Some(true),
            ..Default::default()
        });
    }
    p.spec.containers.push(Container {
        name: "c".into(),
        image: "app:v1".into(),
        ..Default::default()
    });
    Object::Pod(Box::new(p))
}

fn names(objs: Vec<&std::sync::Arc<Object>>) -> Vec<String> {
    objs.iter().map(|o| o.meta().name.clone()).collect()
}

fn changes(f: &SharedInformerFactory, from: u64) -> Vec<(String, bool, bool)> {
    f.changes_since(from)
        .map(|d: &Delta| (d.key.clone(), d.old.is_some(), d.new.is_some()))
        .collect()
}

#[test]
fn indexes_follow_creates_updates_and_deletes() {
    let mut api = api();
    let mut f = SharedInformerFactory::new();
    f.start(Kind::Pod);
    api.create(pod("b", Some("uid-rs"))).expect("b");
    api.create(pod("a", Some("uid-rs"))).expect("a");
    api.create(pod("orphan", None)).expect("orphan");
    f.sync(&api);
    let pods = f.of(&Kind::Pod);
    assert_eq!(names(pods.controlled_by("uid-rs")), ["a", "b"]);
    assert_eq!(names(pods.orphans("default")), ["orphan"]);
    assert_eq!(names(pods.dependents_of("uid-rs")), ["a", "b"]);
    // The first sync lists: every object is an add, in key order.
    assert_eq!(
        changes(&f, 0),
        [
            ("default/a".to_string(), false, true),
            ("default/b".to_string(), false, true),
            ("default/orphan".to_string(), false, true)
        ]
    );

    let mark = f.log_end();
    api.bind(&Binding {
        metadata: ObjectMeta {
            name: "a".into(),
            namespace: Some("default".into()),
            ..Default::default()
        },
        target: ObjectReference {
            kind: "Node".into(),
            name: "node-1".into(),
            ..Default::default()
        },
        ..Default::default()
    })
    .expect("bind");
    api.delete(&Kind::Pod, "default", "b", DeleteOptions::default())
        .expect("delete");
    f.sync(&api);
    let pods = f.of(&Kind::Pod);
    assert_eq!(names(pods.pods_on_node("node-1")), ["a"]);
    assert_eq!(names(pods.controlled_by("uid-rs")), ["a"]);
    // Watched, in revision order: a's bind (old and new); b's delete, which the apiserver writes
    // as the deletionTimestamp update, then the removal (old only).
    assert_eq!(
        changes(&f, mark),
        [
            ("default/a".to_string(), true, true),
            ("default/b".to_string(), true, true),
            ("default/b".to_string(), true, false)
        ]
    );
    f.trim_log(f.log_end());
    assert_eq!(f.changes_since(0).count(), 0);
}

#[test]
fn a_compacted_history_relists_to_the_same_cache() {
    let mut api = api();
    let mut f = SharedInformerFactory::new();
    f.start(Kind::Pod);
    api.create(pod("a", Some("uid-rs"))).expect("a");
    f.sync(&api);
    let mark = f.log_end();
    api.create(pod("b", None)).expect("b");
    api.delete(&Kind::Pod, "default", "a", DeleteOptions::default())
        .expect("delete");
    let rev = api.revision();
    api.store_mut().compact(rev);
    f.sync(&api);
    let pods = f.of(&Kind::Pod);
    assert_eq!(pods.len(), 1);
    assert!(pods.controlled_by("uid-rs").is_empty());
    assert_eq!(names(pods.orphans("default")), ["b"]);
    // The relist reports what differs: a is gone, b is new.
    assert_eq!(
        changes(&f, mark),
        [
            ("default/a".to_string(), true, false),
            ("default/b".to_string(), false, true)
        ]
    );
    let typed: Vec<&Pod> = f.of(&Kind::Pod).list_typed::<Pod>().collect();
    assert_eq!(typed[0].metadata.name, "b");
    let _ = api.get_typed::<Pod>("default", "b").expect("b stored");
}
