//! Services through the public API: defaults, deterministic ClusterIP and node port allocation
//! (upstream `pkg/registry/core/service/storage/alloc.go`), the allocated values kept on update,
//! and the answers kube-apiserver gives (Invalid with field errors).

mod common;

use common::server;
use k8s_api::ApiServer;
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Service, ServicePort};
use k8s_types::Object;

fn svc(name: &str, ty: &str) -> Service {
    let mut s = Service::default();
    s.metadata.name = name.into();
    s.metadata.namespace = Some("default".into());
    s.spec.type_ = Some(ty.into());
    s.spec.selector = Some([("app".to_string(), "web".to_string())].into());
    s.spec.ports.push(ServicePort {
        port: 80,
        ..Default::default()
    });
    s
}

fn create(api: &mut ApiServer, s: Service) -> Service {
    api.create_typed(s).unwrap()
}

#[test]
fn create_allocates_lowest_free_ip_and_node_port_and_delete_frees_them() {
    let mut api = server();
    let a = create(&mut api, svc("a", "ClusterIP"));
    assert_eq!(a.spec.cluster_ip.as_deref(), Some("10.96.1.1"));
    assert_eq!(a.spec.cluster_ips, vec!["10.96.1.1".to_string()]);
    // Defaults: protocol TCP, targetPort = port, sessionAffinity None, single-stack IPv4.
    assert_eq!(a.spec.ports[0].protocol.as_deref(), Some("TCP"));
    assert_eq!(
        a.spec.ports[0].target_port,
        Some(k8s_types::apps::IntOrString::Int(80))
    );
    assert_eq!(a.spec.session_affinity.as_deref(), Some("None"));
    assert_eq!(a.spec.ip_family_policy.as_deref(), Some("SingleStack"));
    assert_eq!(a.spec.ip_families, vec!["IPv4".to_string()]);
    assert_eq!(a.spec.internal_traffic_policy.as_deref(), Some("Cluster"));
    let b = create(&mut api, svc("b", "NodePort"));
    assert_eq!(b.spec.cluster_ip.as_deref(), Some("10.96.1.2"));
    assert_eq!(b.spec.ports[0].node_port, Some(30086));
    assert_eq!(b.spec.external_traffic_policy.as_deref(), Some("Cluster"));
    let c = create(&mut api, svc("c", "LoadBalancer"));
    assert_eq!(
        (c.spec.cluster_ip.as_deref(), c.spec.ports[0].node_port),
        (Some("10.96.1.3"), Some(30087))
    );
    // Deleting a frees its address: the next Service takes it.
    api.delete(
        &k8s_types::Kind::Service,
        "default",
        "a",
        Default::default(),
    )
    .unwrap();
    let d = create(&mut api, svc("d", "ClusterIP"));
    assert_eq!(d.spec.cluster_ip.as_deref(), Some("10.96.1.1"));
}

#[test]
fn a_taken_or_foreign_address_is_invalid() {
    let mut api = server();
    let mut a = svc("a", "ClusterIP");
    a.spec.cluster_ip = Some("10.96.0.10".into());
    assert_eq!(
        create(&mut api, a).spec.cluster_ip.as_deref(),
        Some("10.96.0.10")
    );
    let mut b = svc("b", "ClusterIP");
    b.spec.cluster_ip = Some("10.96.0.10".into());
    let err = api.create(Object::Service(Box::new(b))).unwrap_err();
    assert_eq!(
        err.message,
        "Service \"b\" is invalid: spec.clusterIPs[0]: Invalid value: \"10.96.0.10\": failed to allocate IP 10.96.0.10: provided IP is already allocated"
    );
    let mut c = svc("c", "NodePort");
    c.spec.ports[0].node_port = Some(40000);
    let err = api.create(Object::Service(Box::new(c))).unwrap_err();
    assert!(err.message.ends_with("spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767"), "{}", err.message);
    // Nothing was allocated for the refused Services.
    let d = create(&mut api, svc("d", "NodePort"));
    assert_eq!(
        (d.spec.cluster_ip.as_deref(), d.spec.ports[0].node_port),
        (Some("10.96.1.1"), Some(30086))
    );
}

#[test]
fn update_keeps_allocations_and_refuses_a_new_cluster_ip() {
    let mut api = server();
    create(&mut api, svc("a", "ClusterIP"));
    // A request without clusterIP (kubectl replace of the original manifest) keeps it.
    let mut again = svc("a", "ClusterIP");
    again.spec.ports[0].port = 81;
    let got: Service = api.update_typed(again).unwrap();
    assert_eq!(got.spec.cluster_ip.as_deref(), Some("10.96.1.1"));
    assert_eq!(got.spec.ports[0].port, 81);
    // Becoming a NodePort allocates a node port.
    let np: Service = api.update_typed(svc("a", "NodePort")).unwrap();
    assert_eq!(np.spec.ports[0].node_port, Some(30086));
    let mut moved = svc("a", "NodePort");
    moved.spec.cluster_ip = Some("10.96.1.9".into());
    let err = api.update(Object::Service(Box::new(moved))).unwrap_err();
    assert_eq!(
        err.message,
        "Service \"a\" is invalid: spec.clusterIPs[0]: Invalid value: \"10.96.1.9\": field is immutable"
    );
}

#[test]
fn validation_answers_like_kube_apiserver() {
    let mut api = server();
    let mut s = svc("Web", "ClusterIP");
    s.spec.ports.push(ServicePort {
        port: 0,
        ..Default::default()
    });
    let err = api.create(Object::Service(Box::new(s))).unwrap_err();
    assert!(err.is_invalid());
    let fields: Vec<&str> = err.causes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(
        fields,
        vec![
            "metadata.name",
            "spec.ports[0].name",
            "spec.ports[1].name",
            "spec.ports[1].port",
            "spec.ports[1].targetPort",
        ]
    );
}
