//! `v1` Service (upstream `k8s.io/api/core/v1/types.go`: `Service`, `ServiceSpec`,
//! `ServicePort`, `ServiceStatus`) with the constants of its enum fields.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::apps::IntOrString;
use crate::meta::ObjectMeta;

/// Upstream `ServiceType` values.
pub mod service_types {
    /// A virtual IP inside the cluster (the default).
    pub const CLUSTER_IP: &str = "ClusterIP";
    /// A ClusterIP plus a port on every node.
    pub const NODE_PORT: &str = "NodePort";
    /// A NodePort plus an external load balancer.
    pub const LOAD_BALANCER: &str = "LoadBalancer";
    /// A DNS CNAME to `spec.externalName`; no IP, no endpoints.
    pub const EXTERNAL_NAME: &str = "ExternalName";
}

/// Upstream `ClusterIPNone`: a headless Service.
pub const CLUSTER_IP_NONE: &str = "None";

/// `v1` Service.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    /// `v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Service`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: ServiceSpec,
    /// Status (`loadBalancer`, `conditions`), kept as given: k8s-mini runs no load balancer.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub status: BTreeMap<String, serde_json::Value>,
}

/// Upstream `ServiceSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// The ports the Service exposes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ServicePort>,
    /// Label query over pods (a plain map, not a `LabelSelector`); `None` means the endpoints
    /// are managed by hand (no EndpointSlice is made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<BTreeMap<String, String>>,
    /// The virtual IP, `None` for a headless Service, empty to have one allocated.
    #[serde(default, rename = "clusterIP", skip_serializing_if = "Option::is_none")]
    pub cluster_ip: Option<String>,
    /// `clusterIP` first, then the other families' IPs.
    #[serde(default, rename = "clusterIPs", skip_serializing_if = "Vec::is_empty")]
    pub cluster_ips: Vec<String>,
    /// `ClusterIP` (default), `NodePort`, `LoadBalancer` or `ExternalName`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The DNS name an `ExternalName` Service aliases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_name: Option<String>,
    /// `None` (default) or `ClientIP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_affinity: Option<String>,
    /// Whether not-ready pods get endpoints too (e.g. for peer discovery).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub publish_not_ready_addresses: bool,
    /// `SingleStack` (default), `PreferDualStack` or `RequireDualStack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_family_policy: Option<String>,
    /// `IPv4` and/or `IPv6`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_families: Vec<String>,
    /// `Cluster` (default) or `Local`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_traffic_policy: Option<String>,
    /// `Cluster` (default for NodePort/LoadBalancer) or `Local`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_traffic_policy: Option<String>,
    /// Whether a LoadBalancer Service gets node ports (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocate_load_balancer_node_ports: Option<bool>,
    /// Every other field (`externalIPs`, `loadBalancerClass`, ...), kept as given.
    #[serde(flatten)]
    pub rest: BTreeMap<String, serde_json::Value>,
}

/// Upstream `ServicePort`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    /// Required when the Service has more than one port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `TCP` (default), `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Application protocol hint, kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_protocol: Option<String>,
    /// The Service's port.
    #[serde(default)]
    pub port: i32,
    /// The pods' port: a number, or the name of a container port (defaults to `port`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_port: Option<IntOrString>,
    /// The port on every node (NodePort and LoadBalancer Services); allocated when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_port: Option<i32>,
}

impl Service {
    /// `spec.type`, `ClusterIP` when unset.
    pub fn type_(&self) -> &str {
        self.spec
            .type_
            .as_deref()
            .unwrap_or(service_types::CLUSTER_IP)
    }

    /// Whether the Service is headless (`clusterIP: None`).
    pub fn is_headless(&self) -> bool {
        self.spec.cluster_ip.as_deref() == Some(CLUSTER_IP_NONE)
    }

    /// Whether the Service's ports get node ports: NodePort, and LoadBalancer unless
    /// `allocateLoadBalancerNodePorts: false` (upstream `needsNodePort`).
    pub fn needs_node_ports(&self) -> bool {
        match self.type_() {
            service_types::NODE_PORT => true,
            service_types::LOAD_BALANCER => {
                self.spec.allocate_load_balancer_node_ports != Some(false)
            }
            _ => false,
        }
    }
}
