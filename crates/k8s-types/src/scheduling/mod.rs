//! Scheduling API objects: `scheduling.k8s.io/v1` PriorityClass, the coscheduling PodGroup
//! (`scheduling.x-k8s.io/v1alpha1`, kubernetes-sigs/scheduler-plugins), and native gang
//! scheduling's `scheduling.k8s.io/v1alpha2` Workload and PodGroup ([`v1alpha2`]).

pub mod pod_group;
pub mod priority_class;
pub mod v1alpha2;

pub use pod_group::*;
pub use priority_class::*;
