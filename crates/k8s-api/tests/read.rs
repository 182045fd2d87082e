//! get, list and watch through the public API.

mod common;

use common::{meta, node, pod, server};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::{Binding, Namespace, Pod};
use k8s_types::labels::LabelSelector;
use k8s_types::object::Kind;
use k8s_types::store::WatchEventType;
use k8s_types::Object;

#[test]
fn list_filters_by_namespace_and_selector_in_key_order() {
    let mut api = server();
    api.create(Object::Namespace(Box::new(Namespace {
        metadata: meta("prod", None),
        ..Default::default()
    })))
    .unwrap();
    for (ns, name, app) in [
        ("prod", "b", "web"),
        ("default", "z", "web"),
        ("default", "a", "db"),
    ] {
        let mut p = pod(name);
        p.metadata.namespace = Some(ns.into());
        p.metadata.labels.insert("app".into(), app.into());
        api.create(Object::Pod(Box::new(p))).unwrap();
    }
    api.create(Object::Node(Box::new(node("n1")))).unwrap();
    let names =
        |objs: Vec<Object>| -> Vec<String> { objs.iter().map(Object::display_name).collect() };
    assert_eq!(
        names(api.list(&Kind::Pod, None, None)),
        vec!["default/a", "default/z", "prod/b"]
    );
    assert_eq!(
        names(api.list(&Kind::Pod, Some("default"), None)),
        vec!["default/a", "default/z"]
    );
    let web = LabelSelector::from_labels([("app", "web")]);
    assert_eq!(
        names(api.list(&Kind::Pod, None, Some(&web))),
        vec!["default/z", "prod/b"]
    );
    assert_eq!(
        names(api.list(&Kind::Node, Some("default"), None)),
        vec!["n1"]
    );
}

#[test]
fn watch_serves_changes_of_one_kind_and_gone_after_compaction() {
    let mut api = server();
    let start = api.revision();
    let created = api.create(Object::Pod(Box::new(pod("web")))).unwrap();
    api.create(Object::Node(Box::new(node("n1")))).unwrap();
    let mut labelled = created.clone();
    labelled.meta_mut().labels.insert("a".into(), "b".into());
    api.update(labelled).unwrap();
    let events: Vec<(WatchEventType, i64)> = api
        .watch(&Kind::Pod, start)
        .unwrap()
        .iter()
        .map(|e| (e.type_, e.revision))
        .collect();
    assert_eq!(
        events,
        vec![
            (WatchEventType::Added, start + 1),
            (WatchEventType::Modified, start + 3)
        ]
    );
    let now = api.revision();
    api.store_mut().compact(now);
    let err = api.watch(&Kind::Pod, start).unwrap_err();
    assert_eq!(err.code, 410);
    assert_eq!(
        err.message,
        format!("too old resource version: {start} ({now})")
    );
    assert!(api.watch(&Kind::Pod, now).unwrap().is_empty());
}

#[test]
fn list_pods_on_node_is_the_spec_node_name_field_selector() {
    let mut api = server();
    for name in ["a", "b", "c"] {
        api.create(Object::Pod(Box::new(pod(name)))).unwrap();
    }
    api.bind(&Binding::new("default", "a", "n1")).unwrap();
    api.bind(&Binding::new("default", "c", "n1")).unwrap();
    api.bind(&Binding::new("default", "b", "n2")).unwrap();
    let names =
        |pods: Vec<Pod>| -> Vec<String> { pods.into_iter().map(|p| p.metadata.name).collect() };
    assert_eq!(names(api.list_pods_on_node("n1")), ["a", "c"]);
    assert_eq!(names(api.list_pods_on_node("n2")), ["b"]);
    assert!(api.list_pods_on_node("n3").is_empty());

    // The index follows the store's watch: a pod deleted at once leaves its node, a new pod of
    // the same name bound elsewhere appears there, and a compacted history rebuilds the index
    // from a list with the same answer.
    let force = k8s_types::apiserver::DeleteOptions {
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    api.delete(&Kind::Pod, "default", "a", force).unwrap();
    api.create(Object::Pod(Box::new(pod("a")))).unwrap();
    api.bind(&Binding::new("default", "a", "n2")).unwrap();
    assert_eq!(names(api.list_pods_on_node("n1")), ["c"]);
    assert_eq!(names(api.list_pods_on_node("n2")), ["a", "b"]);
    api.create(Object::Pod(Box::new(pod("d")))).unwrap();
    api.bind(&Binding::new("default", "d", "n1")).unwrap();
    let now = api.revision();
    api.store_mut().compact(now);
    assert_eq!(names(api.list_pods_on_node("n1")), ["c", "d"]);
    let shared: Vec<String> = api
        .list_pods_on_node_shared("n2")
        .iter()
        .map(|p| p.metadata.name.clone())
        .collect();
    assert_eq!(shared, ["a", "b"]);
}

#[test]
fn the_node_index_serves_each_pod_as_last_written_shared_with_the_store() {
    let mut api = server();
    for name in ["a", "b"] {
        api.create(Object::Pod(Box::new(pod(name)))).unwrap();
        api.bind(&Binding::new("default", name, "n1")).unwrap();
    }
    assert_eq!(
        api.list_pods_on_node("n1")[0].status.phase.as_deref(),
        Some("Pending")
    );
    // A status write keeps the pod on its node: the index answers with the new object, in key
    // order.
    let mut a = api.list_pods_on_node("n1").remove(0);
    a.status.phase = Some("Running".into());
    api.update_status(Object::Pod(Box::new(a))).unwrap();
    let listed = api.list_pods_on_node_shared("n1");
    let phases: Vec<(String, Option<k8s_types::CompactString>)> = listed
        .iter()
        .map(|p| (p.metadata.name.clone(), p.status.phase.clone()))
        .collect();
    assert_eq!(
        phases,
        [
            ("a".into(), Some("Running".into())),
            ("b".into(), Some("Pending".into()))
        ]
    );
    // Reads share the indexed object (the watch event's, which a MemStore also holds).
    let again = api.list_pods_on_node_shared("n1");
    assert!(std::sync::Arc::ptr_eq(
        listed[0].object(),
        again[0].object()
    ));
}

#[test]
fn a_restarted_apiserver_rebuilds_its_node_index_from_the_store() {
    let mut api = server();
    for name in ["a", "b"] {
        api.create(Object::Pod(Box::new(pod(name)))).unwrap();
    }
    api.bind(&Binding::new("default", "a", "n1")).unwrap();
    let names =
        |pods: Vec<Pod>| -> Vec<String> { pods.into_iter().map(|p| p.metadata.name).collect() };
    assert_eq!(names(api.list_pods_on_node("n1")), ["a"]);
    let revision = api.revision();
    // The restart keeps etcd (revision, objects) and drops the watch cache; the first read
    // lists again, and later writes are followed as before.
    api.restart();
    assert_eq!(api.revision(), revision);
    assert_eq!(names(api.list_pods_on_node("n1")), ["a"]);
    api.bind(&Binding::new("default", "b", "n1")).unwrap();
    assert_eq!(names(api.list_pods_on_node("n1")), ["a", "b"]);
}
