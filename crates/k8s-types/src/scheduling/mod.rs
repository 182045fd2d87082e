//! Scheduling API objects: `scheduling.k8s.io/v1` PriorityClass and the coscheduling PodGroup
//! (`scheduling.x-k8s.io/v1alpha1`, kubernetes-sigs/scheduler-plugins).

pub mod pod_group;
pub mod priority_class;

pub use pod_group::*;
pub use priority_class::*;
