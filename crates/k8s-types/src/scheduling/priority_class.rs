//! `scheduling.k8s.io/v1` PriorityClass (upstream `k8s.io/api/scheduling/v1`).

use serde::{Deserialize, Serialize};

use crate::meta::ObjectMeta;

/// Upstream `schedulingv1.PriorityClass`. Cluster-scoped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriorityClass {
    /// `scheduling.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `PriorityClass`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The priority given to pods of this class (user classes: at most 1,000,000,000).
    #[serde(default)]
    pub value: i32,
    /// At most one class may be the global default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global_default: bool,
    /// `PreemptLowerPriority` (default) or `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_policy: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Upper bound for user-defined priority classes (upstream `scheduling.HighestUserDefinablePriority`).
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i32 = 1_000_000_000;
/// `system-cluster-critical` value (upstream `scheduling.SystemCriticalPriority`).
pub const SYSTEM_CRITICAL_PRIORITY: i32 = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
