//! The `policy/v1` API group: PodDisruptionBudget and Eviction (upstream `k8s.io/api/policy/v1`).

pub mod pod_disruption_budget;

pub use pod_disruption_budget::*;
