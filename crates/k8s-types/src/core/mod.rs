//! The `core/v1` API group: Pod, Node, Namespace, Event, Binding, PersistentVolumeClaim,
//! ResourceQuota, LimitRange, and taints/tolerations.

pub mod affinity;
pub mod binding;
pub mod event;
pub mod limit_range;
pub mod namespace;
pub mod node;
pub mod persistent_volume_claim;
pub mod pod;
pub mod pod_resource_claim;
pub mod resource_quota;
pub mod service;
pub mod taints;

pub use affinity::*;
pub use binding::Binding;
pub use event::Event;
pub use limit_range::{LimitRange, LimitRangeItem, LimitRangeSpec};
pub use namespace::Namespace;
pub use node::*;
pub use persistent_volume_claim::*;
pub use pod::*;
pub use pod_resource_claim::*;
pub use resource_quota::{ResourceQuota, ResourceQuotaSpec, ResourceQuotaStatus};
pub use service::*;
pub use taints::{Taint, Toleration};

/// A resource name -> quantity map, as upstream `corev1.ResourceList` (sorted: deterministic output).
pub type ResourceList = std::collections::BTreeMap<String, crate::Quantity>;

/// Upstream resource names.
pub mod resource_names {
    /// CPU, in cores (`1` = 1000 milli-CPU).
    pub const CPU: &str = "cpu";
    /// Memory, in bytes.
    pub const MEMORY: &str = "memory";
    /// Local ephemeral storage, in bytes.
    pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
    /// Maximum number of pods on a node.
    pub const PODS: &str = "pods";
    /// Whole NVIDIA GPUs, reported by the NVIDIA device plugin.
    pub const NVIDIA_GPU: &str = "nvidia.com/gpu";
}

/// Upstream `corev1.ConditionStatus` values.
pub mod condition_status {
    /// `True`.
    pub const TRUE: &str = "True";
    /// `False`.
    pub const FALSE: &str = "False";
    /// `Unknown`.
    pub const UNKNOWN: &str = "Unknown";
}
