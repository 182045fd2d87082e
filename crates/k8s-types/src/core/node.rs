//! `v1` Node (upstream `k8s.io/api/core/v1` `Node`, `NodeSpec`, `NodeStatus`).

use serde::{Deserialize, Serialize};

use super::{ResourceList, Taint};
use crate::meta::ObjectMeta;

/// Upstream `corev1.Node`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// `v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Node`.
    #[serde(default)]
    pub kind: String,
    /// Metadata (cluster-scoped: no namespace).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: NodeSpec,
    /// Status, reported by the kubelet.
    #[serde(default)]
    pub status: NodeStatus,
}

/// Upstream `corev1.NodeSpec`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    /// Pod IP range, e.g. `10.244.1.0/24`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "podCIDR")]
    pub pod_cidr: Option<String>,
    /// Pod IP ranges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(rename = "podCIDRs")]
    pub pod_cidrs: Vec<String>,
    /// Cordoned.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
    /// Taints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Cloud provider ID (kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "providerID")]
    pub provider_id: Option<String>,
}

/// Upstream `corev1.NodeStatus`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// Total resources (machine + device plugins).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub capacity: ResourceList,
    /// Schedulable resources; the scheduler fits pods against this.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub allocatable: ResourceList,
    /// Ready, MemoryPressure, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<NodeCondition>,
    /// Addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<NodeAddress>,
    /// Images present on the node (ImageLocality).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<serde_json::Value>,
    /// Node system info (kept as given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_info: Option<serde_json::Value>,
}

/// Upstream `corev1.NodeCondition`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeCondition {
    /// Condition type, e.g. `Ready`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False`, `Unknown`.
    pub status: String,
    /// Reason, e.g. `KubeletReady`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat_time: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

/// Upstream `corev1.NodeAddress`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeAddress {
    /// `InternalIP`, `Hostname`, ...
    #[serde(rename = "type")]
    pub type_: String,
    /// The address.
    pub address: String,
}

/// Well-known node labels.
pub mod node_labels {
    /// Hostname label set on every node (upstream `kubernetes.io/hostname`).
    pub const HOSTNAME: &str = "kubernetes.io/hostname";
    /// Zone label (upstream `topology.kubernetes.io/zone`).
    pub const ZONE: &str = "topology.kubernetes.io/zone";
    /// GPU Feature Discovery's GPU count label.
    pub const NVIDIA_GPU_COUNT: &str = "nvidia.com/gpu.count";
    /// GPU Feature Discovery's product label.
    pub const NVIDIA_GPU_PRODUCT: &str = "nvidia.com/gpu.product";
}

impl Node {
    /// True when the `Ready` condition is `True`.
    pub fn is_ready(&self) -> bool {
        self.status
            .conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == super::condition_status::TRUE)
    }
}
