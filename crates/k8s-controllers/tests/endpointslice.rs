//! The EndpointSlice controller (upstream `pkg/controller/endpointslice` and
//! `staging/src/k8s.io/endpointslice/reconciler.go`) over the fake apiserver: which pods a
//! Service's slices list, with which conditions and ports, and how the slices are split, reused
//! and replaced.

use k8s_controllers::{ControllerManager, EndpointSliceController};
use k8s_testing::{node, pod, FakeApi};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::IntOrString;
use k8s_types::core::{ContainerPort, Pod, PodCondition, Service, ServicePort};
use k8s_types::discovery::EndpointSlice;
use k8s_types::meta::tick_timestamp;
use k8s_types::{Kind, Object};

fn manager() -> ControllerManager {
    ControllerManager::with_controllers(vec![Box::new(EndpointSliceController::new())])
}

fn service(name: &str, target: IntOrString) -> Service {
    let mut s = Service::default();
    s.metadata.name = name.into();
    s.metadata.namespace = Some("default".into());
    s.metadata.labels.insert("tier".into(), "frontend".into());
    s.spec.selector = Some([("app".to_string(), "web".to_string())].into());
    s.spec.ports.push(ServicePort {
        name: Some("http".into()),
        port: 80,
        protocol: Some("TCP".into()),
        target_port: Some(target),
        ..Default::default()
    });
    s
}

/// A pod of `app=web` on node-a with an IP, Ready or not, and a container port `http`.
fn web_pod(name: &str, ip: Option<&str>, ready: bool, http_port: Option<i32>) -> Pod {
    let mut p = pod(name, "100m", "64Mi", &[]);
    p.metadata.labels.insert("app".into(), "web".into());
    p.spec.node_name = Some("node-a".into());
    if let Some(port) = http_port {
        p.spec.containers[0].ports.push(ContainerPort {
            name: Some("http".into()),
            container_port: port,
            ..Default::default()
        });
    }
    p.status.phase = Some("Running".into());
    p.status.pod_ip = ip.map(Into::into);
    p.status.conditions.push(PodCondition {
        type_: "Ready".into(),
        status: if ready { "True" } else { "False" }.into(),
        ..Default::default()
    });
    p
}

fn api_with_node() -> FakeApi {
    let mut api = FakeApi::at(1);
    let mut n = node("node-a", "8", "16Gi", &[]);
    n.metadata
        .labels
        .insert("topology.kubernetes.io/zone".into(), "zone-a".into());
    api.add(n);
    api
}

fn slices(api: &FakeApi) -> Vec<EndpointSlice> {
    api.list_typed::<EndpointSlice>(Some("default"), None)
}

/// (address, ready, serving, terminating) of every endpoint of the slices, in slice then
/// endpoint order.
fn endpoints(api: &FakeApi) -> Vec<(String, bool, bool, bool)> {
    slices(api)
        .iter()
        .flat_map(|s| &s.endpoints)
        .map(|e| {
            let c = &e.conditions;
            (
                e.addresses[0].clone(),
                c.ready.unwrap(),
                c.serving.unwrap(),
                c.terminating.unwrap(),
            )
        })
        .collect()
}

fn tick(api: &mut FakeApi, m: &mut ControllerManager) {
    api.now += 1;
    m.reconcile(api);
}

#[test]
fn ready_serving_and_terminating_follow_the_pods() {
    let mut api = api_with_node();
    let svc = service("web", IntOrString::Int(8080));
    api.add(svc);
    api.add(web_pod("a", Some("10.244.0.2"), true, None));
    api.add(web_pod("b", Some("10.244.0.3"), false, None));
    // No IP yet, terminal, or not selected: left out.
    api.add(web_pod("c", None, true, None));
    let mut done = web_pod("d", Some("10.244.0.5"), false, None);
    done.status.phase = Some("Succeeded".into());
    api.add(done);
    let mut other = web_pod("e", Some("10.244.0.6"), true, None);
    other.metadata.labels.insert("app".into(), "db".into());
    api.add(other);
    let mut m = manager();
    tick(&mut api, &mut m);
    let s = slices(&api);
    assert_eq!(s.len(), 1);
    let es = &s[0];
    assert!(es.metadata.name.starts_with("web-"), "{}", es.metadata.name);
    assert_eq!(es.metadata.generate_name.as_deref(), Some("web-"));
    assert_eq!(es.address_type, "IPv4");
    assert_eq!(
        es.metadata.labels,
        [
            (
                "endpointslice.kubernetes.io/managed-by",
                "endpointslice-controller.k8s.io"
            ),
            ("kubernetes.io/service-name", "web"),
            ("tier", "frontend"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<std::collections::BTreeMap<String, String>>()
    );
    let owner = es.metadata.controller_ref().unwrap();
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Service", "web")
    );
    assert_eq!(es.ports.len(), 1);
    assert_eq!(
        (
            es.ports[0].name.as_deref(),
            es.ports[0].port,
            es.ports[0].protocol.as_deref()
        ),
        (Some("http"), Some(8080), Some("TCP"))
    );
    assert_eq!(es.endpoints[0].node_name.as_deref(), Some("node-a"));
    assert_eq!(es.endpoints[0].zone.as_deref(), Some("zone-a"));
    assert_eq!(es.endpoints[0].target_ref.as_ref().unwrap().name, "a");
    assert_eq!(
        endpoints(&api),
        vec![
            ("10.244.0.2".into(), true, true, false),
            ("10.244.0.3".into(), false, false, false),
        ]
    );
    // a starts terminating: not ready, still serving; b turns Ready. Same slice, same order.
    let name = es.metadata.name.clone();
    api.delete(&Kind::Pod, "default", "a", Default::default())
        .unwrap();
    assert!(api.pod("a").is_terminating());
    let mut b = api.pod("b");
    b.status.conditions[0].status = "True".into();
    api.update_status(Object::Pod(Box::new(b))).unwrap();
    tick(&mut api, &mut m);
    assert_eq!(slices(&api)[0].metadata.name, name);
    assert_eq!(
        endpoints(&api),
        vec![
            ("10.244.0.2".into(), false, true, true),
            ("10.244.0.3".into(), true, true, false),
        ]
    );
}

#[test]
fn publish_not_ready_addresses_makes_every_endpoint_ready() {
    let mut api = api_with_node();
    let mut svc = service("peers", IntOrString::Int(8080));
    svc.spec.publish_not_ready_addresses = true;
    svc.spec.cluster_ip = Some("None".into());
    api.add(svc);
    api.add(web_pod("a", Some("10.244.0.2"), false, None));
    let mut t = web_pod("t", Some("10.244.0.3"), true, None);
    t.metadata.deletion_timestamp = Some(tick_timestamp(1).into());
    api.add(t);
    let mut m = manager();
    tick(&mut api, &mut m);
    assert_eq!(
        endpoints(&api),
        vec![
            ("10.244.0.2".into(), true, false, false),
            ("10.244.0.3".into(), true, true, true),
        ]
    );
    // A headless Service's slices carry the headless label.
    assert_eq!(
        slices(&api)[0]
            .metadata
            .labels
            .get("service.kubernetes.io/headless")
            .map(String::as_str),
        Some("")
    );
}

#[test]
fn a_named_target_port_is_resolved_per_pod_one_slice_per_port_set() {
    let mut api = api_with_node();
    api.add(service("web", IntOrString::String("http".into())));
    api.add(web_pod("a", Some("10.244.0.2"), true, Some(8080)));
    api.add(web_pod("b", Some("10.244.0.3"), true, Some(9090)));
    api.add(web_pod("c", Some("10.244.0.4"), true, Some(8080)));
    // No container port named http: listed with no port (upstream getEndpointPorts skips it).
    api.add(web_pod("d", Some("10.244.0.5"), true, None));
    let mut m = manager();
    tick(&mut api, &mut m);
    let mut got: Vec<(Vec<Option<i32>>, Vec<String>)> = slices(&api)
        .iter()
        .map(|s| {
            (
                s.ports.iter().map(|p| p.port).collect(),
                s.endpoints.iter().map(|e| e.addresses[0].clone()).collect(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (vec![], vec!["10.244.0.5".to_string()]),
            (
                vec![Some(8080)],
                vec!["10.244.0.2".to_string(), "10.244.0.4".to_string()]
            ),
            (vec![Some(9090)], vec!["10.244.0.3".to_string()]),
        ]
    );
}

#[test]
fn slices_hold_at_most_100_and_an_emptied_service_keeps_one_placeholder() {
    let mut api = api_with_node();
    api.add(service("web", IntOrString::Int(8080)));
    for i in 0..150u32 {
        let ip = format!("10.244.{}.{}", i / 200, 2 + i % 200);
        api.add(web_pod(&format!("p{i:03}"), Some(&ip), true, None));
    }
    let mut m = manager();
    tick(&mut api, &mut m);
    let mut sizes: Vec<usize> = slices(&api).iter().map(|s| s.endpoints.len()).collect();
    sizes.sort();
    assert_eq!(sizes, vec![50, 100]);
    // Endpoints are placed in pod key order: p000..p099 fill the first slice created.
    let first = slices(&api)
        .into_iter()
        .find(|s| s.endpoints.len() == 100)
        .unwrap();
    assert_eq!(first.endpoints[0].target_ref.as_ref().unwrap().name, "p000");
    assert_eq!(
        first.endpoints[99].target_ref.as_ref().unwrap().name,
        "p099"
    );
    let names: Vec<String> = slices(&api).into_iter().map(|s| s.metadata.name).collect();
    // Every pod goes: one slice is deleted, the other becomes the placeholder (same name).
    for i in 0..150u32 {
        api.delete(
            &Kind::Pod,
            "default",
            &format!("p{i:03}"),
            Default::default(),
        )
        .unwrap();
    }
    api.finish_deletions();
    tick(&mut api, &mut m);
    let left = slices(&api);
    assert_eq!(left.len(), 1);
    assert!(left[0].endpoints.is_empty() && left[0].ports.is_empty());
    assert!(names.contains(&left[0].metadata.name));
    // Stable: another sync writes nothing.
    let rev = api.revision();
    tick(&mut api, &mut m);
    assert_eq!(api.revision(), rev);
}

#[test]
fn new_endpoints_fill_the_slice_being_updated() {
    let mut api = api_with_node();
    api.add(service("web", IntOrString::Int(8080)));
    api.add(web_pod("a", Some("10.244.0.2"), true, None));
    api.add(web_pod("b", Some("10.244.0.3"), true, None));
    let mut m = manager();
    tick(&mut api, &mut m);
    // b goes, c comes: b's place is dropped, c appended after a in the same slice.
    api.delete(&Kind::Pod, "default", "b", Default::default())
        .unwrap();
    api.finish_deletions();
    api.add(web_pod("c", Some("10.244.0.4"), false, None));
    tick(&mut api, &mut m);
    assert_eq!(slices(&api).len(), 1);
    assert_eq!(
        endpoints(&api),
        vec![
            ("10.244.0.2".into(), true, true, false),
            ("10.244.0.4".into(), false, false, false),
        ]
    );
}

#[test]
fn external_name_and_selectorless_services_get_no_slices() {
    let mut api = api_with_node();
    let mut ext = service("ext", IntOrString::Int(8080));
    ext.spec.type_ = Some("ExternalName".into());
    ext.spec.external_name = Some("db.example.com".into());
    api.add(ext);
    let mut manual = service("manual", IntOrString::Int(8080));
    manual.spec.selector = None;
    api.add(manual);
    api.add(web_pod("a", Some("10.244.0.2"), true, None));
    let mut m = manager();
    tick(&mut api, &mut m);
    assert!(slices(&api).is_empty());
}

#[test]
fn a_pod_on_a_missing_node_is_left_out() {
    let mut api = api_with_node();
    api.add(service("web", IntOrString::Int(8080)));
    api.add(web_pod("a", Some("10.244.0.2"), true, None));
    let mut lost = web_pod("lost", Some("10.244.1.2"), true, None);
    lost.spec.node_name = Some("node-gone".into());
    api.add(lost);
    let mut m = manager();
    tick(&mut api, &mut m);
    assert_eq!(
        endpoints(&api),
        vec![("10.244.0.2".into(), true, true, false)]
    );
}
