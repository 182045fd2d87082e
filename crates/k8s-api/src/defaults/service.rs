//! Service defaults (upstream `pkg/apis/core/v1/defaults.go` `SetDefaults_Service` and
//! `SetDefaults_ServicePort` via `SetObjectDefaults_Service`): `type: ClusterIP`,
//! `sessionAffinity: None`, each port's `protocol: TCP` and `targetPort` = `port`,
//! `internalTrafficPolicy: Cluster` (not for ExternalName), `externalTrafficPolicy: Cluster` for
//! NodePort and LoadBalancer, `allocateLoadBalancerNodePorts: true` for LoadBalancer.
//!
//! `ipFamilyPolicy: SingleStack` and `ipFamilies: [IPv4]` are set by the registry
//! (upstream `pkg/registry/core/service/storage/alloc.go` `initIPFamilyFields`) for Services
//! that get a ClusterIP or are headless with a selector; see [`crate::registry::service`].

use k8s_types::apps::IntOrString;
use k8s_types::core::{service_types, Service};

/// Upstream `SetDefaults_Service` (with `SetDefaults_ServicePort`).
pub fn set_defaults_service(svc: &mut Service) {
    let spec = &mut svc.spec;
    if spec.type_.as_deref().unwrap_or("").is_empty() {
        spec.type_ = Some(service_types::CLUSTER_IP.to_string());
    }
    if spec.session_affinity.as_deref().unwrap_or("").is_empty() {
        spec.session_affinity = Some("None".to_string());
    }
    for port in &mut spec.ports {
        if port.protocol.as_deref().unwrap_or("").is_empty() {
            port.protocol = Some("TCP".to_string());
        }
        // Upstream: an unset (zero) targetPort takes the port's number.
        let unset = match &port.target_port {
            None => true,
            Some(IntOrString::Int(0)) => true,
            Some(IntOrString::String(s)) => s.is_empty(),
            Some(IntOrString::Int(_)) => false,
        };
        if unset {
            port.target_port = Some(IntOrString::Int(port.port));
        }
    }
    let ty = spec.type_.clone().unwrap_or_default();
    if ty != service_types::EXTERNAL_NAME && spec.internal_traffic_policy.is_none() {
        spec.internal_traffic_policy = Some("Cluster".to_string());
    }
    if (ty == service_types::NODE_PORT || ty == service_types::LOAD_BALANCER)
        && spec.external_traffic_policy.is_none()
    {
        spec.external_traffic_policy = Some("Cluster".to_string());
    }
    if ty == service_types::LOAD_BALANCER && spec.allocate_load_balancer_node_ports.is_none() {
        spec.allocate_load_balancer_node_ports = Some(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::ServicePort;

    #[test]
    fn defaults_are_upstreams() {
        let mut svc = Service::default();
        svc.spec.ports.push(ServicePort {
            port: 80,
            ..Default::default()
        });
        svc.spec.ports.push(ServicePort {
            port: 443,
            target_port: Some(IntOrString::String("https".into())),
            protocol: Some("UDP".into()),
            ..Default::default()
        });
        set_defaults_service(&mut svc);
        assert_eq!(svc.spec.type_.as_deref(), Some("ClusterIP"));
        assert_eq!(svc.spec.session_affinity.as_deref(), Some("None"));
        assert_eq!(svc.spec.internal_traffic_policy.as_deref(), Some("Cluster"));
        assert_eq!(svc.spec.external_traffic_policy, None);
        assert_eq!(svc.spec.ports[0].protocol.as_deref(), Some("TCP"));
        assert_eq!(svc.spec.ports[0].target_port, Some(IntOrString::Int(80)));
        assert_eq!(svc.spec.ports[1].protocol.as_deref(), Some("UDP"));
        assert_eq!(
            svc.spec.ports[1].target_port,
            Some(IntOrString::String("https".into()))
        );
        let mut lb = Service::default();
        lb.spec.type_ = Some("LoadBalancer".into());
        set_defaults_service(&mut lb);
        assert_eq!(lb.spec.external_traffic_policy.as_deref(), Some("Cluster"));
        assert_eq!(lb.spec.allocate_load_balancer_node_ports, Some(true));
        let mut ext = Service::default();
        ext.spec.type_ = Some("ExternalName".into());
        set_defaults_service(&mut ext);
        assert_eq!(ext.spec.internal_traffic_policy, None);
    }
}
