//! The coscheduling PodGroup, `scheduling.x-k8s.io/v1alpha1` (kubernetes-sigs/scheduler-plugins
//! `apis/scheduling/v1alpha1/types.go`). Members join by the pod label `scheduling.x-k8s.io/pod-group`.

use serde::{Deserialize, Serialize};

use crate::core::ResourceList;
use crate::meta::ObjectMeta;

/// Upstream scheduler-plugins `PodGroup`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroup {
    /// `scheduling.x-k8s.io/v1alpha1`.
    #[serde(default)]
    pub api_version: String,
    /// `PodGroup`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired gang.
    #[serde(default)]
    pub spec: PodGroupSpec,
    /// Observed gang state.
    #[serde(default)]
    pub status: PodGroupStatus,
}

/// Upstream `PodGroupSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupSpec {
    /// Minimum members that must be schedulable together (all-or-nothing).
    #[serde(default)]
    pub min_member: i32,
    /// Minimum total resources of the gang (kept, checked by PreFilter when set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_resources: Option<ResourceList>,
    /// How long (seconds = ticks) members wait at Permit for the rest of the gang.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_timeout_seconds: Option<i32>,
}

/// Upstream `PodGroupStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupStatus {
    /// `Pending`, `Scheduling`, `Scheduled`, `Running`, `Failed`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Members bound to nodes.
    #[serde(default)]
    pub scheduled: i32,
    /// Members running.
    #[serde(default)]
    pub running: i32,
    /// Members succeeded.
    #[serde(default)]
    pub succeeded: i32,
    /// Members failed.
    #[serde(default)]
    pub failed: i32,
}
