//! Helpers of the EndpointSlice controller, after upstream
//! `staging/src/k8s.io/endpointslice/utils.go` (`podToEndpoint`, `getEndpointPorts`,
//! `newEndpointSlice`, `getEndpointSlicePrefix`, `setEndpointSliceLabels`), `util/controller_utils.go`
//! (`ShouldPodBeInEndpoints`) and `k8s.io/kubernetes/pkg/api/v1/pod` (`FindPort`).

use std::collections::BTreeMap;

use k8s_types::apps::IntOrString;
use k8s_types::core::{Node, Pod, Service};
use k8s_types::discovery::{
    Endpoint, EndpointConditions, EndpointPort, EndpointSlice, ENDPOINTSLICE_CONTROLLER_MANAGED_BY,
    LABEL_MANAGED_BY, LABEL_SERVICE_NAME,
};
use k8s_types::meta::ObjectReference;
use k8s_types::Kind;

use crate::controller_utils::new_controller_ref;

/// Upstream `v1.LabelTopologyZone`.
pub const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";
/// Upstream `v1.IsHeadlessService`'s label on slices (`service.kubernetes.io/headless`).
pub const LABEL_HEADLESS_SERVICE: &str = "service.kubernetes.io/headless";

/// Upstream `ShouldPodBeInEndpoints(pod, includeTerminating=true)` as the EndpointSlice
/// reconciler calls it: not terminal (Succeeded/Failed) and with a pod IP; a terminating pod
/// stays (its endpoint says `terminating`).
pub fn should_pod_be_in_endpoints(pod: &Pod) -> bool {
    let terminal = matches!(
        pod.status.phase.as_deref(),
        Some("Succeeded") | Some("Failed")
    );
    !terminal
        && pod
            .status
            .pod_ip
            .as_deref()
            .is_some_and(|ip| !ip.is_empty())
}

/// Upstream `podutil.FindPort`: a numeric target port as is; a named one is the container port
/// of that name and the Service port's protocol, searched in container order.
pub fn find_port(pod: &Pod, target: &IntOrString, protocol: &str) -> Option<i32> {
    match target {
        IntOrString::Int(n) => Some(*n),
        IntOrString::String(name) => pod
            .spec
            .containers
            .iter()
            .flat_map(|c| &c.ports)
            .find(|p| {
                p.name.as_deref() == Some(name.as_str())
                    && p.protocol.as_deref().unwrap_or("TCP") == protocol
            })
            .map(|p| p.container_port),
    }
}

/// Upstream `getEndpointPorts`: one port per Service port the pod resolves (a named target
/// port the pod lacks is left out), in Service port order.
pub fn endpoint_ports(svc: &Service, pod: &Pod) -> Vec<EndpointPort> {
    svc.spec
        .ports
        .iter()
        .filter_map(|sp| {
            let protocol = sp.protocol.clone().unwrap_or_else(|| "TCP".to_string());
            let target = sp.target_port.clone().unwrap_or(IntOrString::Int(sp.port));
            let port = find_port(pod, &target, &protocol)?;
            Some(EndpointPort {
                name: Some(sp.name.clone().unwrap_or_default()),
                port: Some(port),
                protocol: Some(protocol),
                app_protocol: sp.app_protocol.clone(),
            })
        })
        .collect()
}

/// Upstream `podToEndpoint`: `serving` is the pod's Ready condition, `terminating` its deletion
/// timestamp, `ready` is `serving && !terminating` (always true with `publishNotReadyAddresses`).
pub fn pod_to_endpoint(pod: &Pod, node: Option<&Node>, svc: &Service) -> Endpoint {
    let serving = pod.is_ready();
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let ready = svc.spec.publish_not_ready_addresses || (serving && !terminating);
    Endpoint {
        addresses: pod.status.pod_ip.iter().map(ToString::to_string).collect(),
        conditions: EndpointConditions {
            ready: Some(ready),
            serving: Some(serving),
            terminating: Some(terminating),
        },
        hostname: None,
        target_ref: Some(ObjectReference {
            kind: "Pod".into(),
            namespace: pod.metadata.namespace().into(),
            name: pod.metadata.name.as_str().into(),
            uid: pod.metadata.uid.as_deref().unwrap_or_default().into(),
            ..Default::default()
        }),
        node_name: pod.spec.node_name.clone().filter(|n| !n.is_empty()),
        zone: node
            .and_then(|n| n.metadata.labels.get(LABEL_TOPOLOGY_ZONE))
            .filter(|z| !z.is_empty())
            .cloned(),
    }
}

/// Upstream `setEndpointSliceLabels`: the Service's labels (but the two reserved ones), the
/// headless label for a headless Service, then `kubernetes.io/service-name` and `managed-by`.
pub fn slice_labels(svc: &Service) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = svc
        .metadata
        .labels
        .iter()
        .filter(|(k, _)| k.as_str() != LABEL_SERVICE_NAME && k.as_str() != LABEL_MANAGED_BY)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if svc.is_headless() {
        labels.insert(LABEL_HEADLESS_SERVICE.to_string(), String::new());
    }
    labels.insert(LABEL_SERVICE_NAME.to_string(), svc.metadata.name.clone());
    labels.insert(
        LABEL_MANAGED_BY.to_string(),
        ENDPOINTSLICE_CONTROLLER_MANAGED_BY.to_string(),
    );
    labels
}

/// Upstream `newEndpointSlice`: `generateName: <service>-`, owned (controller) by the Service.
pub fn new_endpoint_slice(
    svc: &Service,
    ports: &[EndpointPort],
    address_type: &str,
) -> EndpointSlice {
    let mut es = EndpointSlice::default();
    es.metadata.generate_name = Some(format!("{}-", svc.metadata.name).into());
    es.metadata.namespace = Some(svc.metadata.namespace().into());
    es.metadata.owner_references = vec![new_controller_ref(&svc.metadata, &Kind::Service)].into();
    es.metadata.labels = slice_labels(svc).into();
    es.address_type = address_type.to_string();
    es.ports = ports.to_vec();
    es
}

/// The key a slice's ports group it by (upstream `endpointutil.NewPortMapKey`: the ports, sorted).
pub fn port_map_key(ports: &[EndpointPort]) -> Vec<EndpointPort> {
    let mut k = ports.to_vec();
    k.sort();
    k
}

/// The identity of an endpoint across syncs (upstream `endpointsliceutil.EndpointSet`'s hash):
/// its first address and the pod it points at.
pub fn endpoint_identity(ep: &Endpoint) -> (String, String, String) {
    let r = ep.target_ref.clone().unwrap_or_default();
    (
        ep.addresses.first().cloned().unwrap_or_default(),
        r.namespace.into(),
        r.name.into(),
    )
}
