//! Plugin names, as upstream registers them (upstream
//! `pkg/scheduler/framework/plugins/names/names.go`; `GangScheduling` since v1.35), plus `Coscheduling`
//! (kubernetes-sigs/scheduler-plugins `pkg/coscheduling`).

/// Queue sort by priority, then queue timestamp.
pub const PRIORITY_SORT: &str = "PrioritySort";
/// Binds through the `pods/binding` subresource.
pub const DEFAULT_BINDER: &str = "DefaultBinder";
/// Preemption of lower-priority pods.
pub const DEFAULT_PREEMPTION: &str = "DefaultPreemption";
/// Dynamic resource allocation (not implemented).
pub const DYNAMIC_RESOURCES: &str = "DynamicResources";
/// Prefers nodes that already have the images.
pub const IMAGE_LOCALITY: &str = "ImageLocality";
/// Pod (anti-)affinity.
pub const INTER_POD_AFFINITY: &str = "InterPodAffinity";
/// nodeSelector and node affinity.
pub const NODE_AFFINITY: &str = "NodeAffinity";
/// spec.nodeName.
pub const NODE_NAME: &str = "NodeName";
/// Host ports.
pub const NODE_PORTS: &str = "NodePorts";
/// Balanced resource usage score.
pub const NODE_RESOURCES_BALANCED_ALLOCATION: &str = "NodeResourcesBalancedAllocation";
/// Resource fit filter and resource score.
pub const NODE_RESOURCES_FIT: &str = "NodeResourcesFit";
/// Cordoned nodes.
pub const NODE_UNSCHEDULABLE: &str = "NodeUnschedulable";
/// CSI volume limits (not implemented).
pub const NODE_VOLUME_LIMITS: &str = "NodeVolumeLimits";
/// Topology spread constraints.
pub const POD_TOPOLOGY_SPREAD: &str = "PodTopologySpread";
/// Scheduling gates (PreEnqueue).
pub const SCHEDULING_GATES: &str = "SchedulingGates";
/// Taints and tolerations.
pub const TAINT_TOLERATION: &str = "TaintToleration";
/// PVC binding (not implemented).
pub const VOLUME_BINDING: &str = "VolumeBinding";
/// Volume conflicts (not implemented).
pub const VOLUME_RESTRICTIONS: &str = "VolumeRestrictions";
/// Volume zone labels (not implemented).
pub const VOLUME_ZONE: &str = "VolumeZone";
/// Gang scheduling with PodGroups (scheduler-plugins).
pub const COSCHEDULING: &str = "Coscheduling";
/// Native gang scheduling with `scheduling.k8s.io/v1alpha2` PodGroups (feature gates
/// `GenericWorkload` and `GangScheduling`).
pub const GANG_SCHEDULING: &str = "GangScheduling";
