//! `apps/v1` DaemonSet (upstream `k8s.io/api/apps/v1` `DaemonSet`).

use serde::{Deserialize, Serialize};

use super::{IntOrString, PodTemplateSpec};
use crate::labels::LabelSelector;
use crate::meta::ObjectMeta;

/// Upstream `appsv1.DaemonSet`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSet {
    /// `apps/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `DaemonSet`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: DaemonSetSpec,
    /// Observed state, written by the daemon set controller.
    #[serde(default)]
    pub status: DaemonSetStatus,
}

/// Upstream `appsv1.DaemonSetSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetSpec {
    /// Must match the template's labels (required in apps/v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// The pod template; `restartPolicy` must be `Always`.
    #[serde(default)]
    pub template: PodTemplateSpec,
    /// Defaulted to RollingUpdate with maxUnavailable 1, maxSurge 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<DaemonSetUpdateStrategy>,
    /// Seconds (ticks) a pod must be ready to count as available; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Old revisions kept; defaulted to 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
}

/// Upstream `appsv1.DaemonSetUpdateStrategy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetUpdateStrategy {
    /// `RollingUpdate` (default) or `OnDelete`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Parameters of a rolling update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDaemonSet>,
}

/// Upstream `appsv1.RollingUpdateDaemonSet`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    /// Nodes whose pod may be unavailable during the update (int or percent of
    /// desiredNumberScheduled, rounded up); default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Nodes that may run an old and a new pod at once (int or percent, rounded up); default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

/// Upstream `appsv1.DaemonSetStatus`: the four counts without `omitempty` are always printed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetStatus {
    /// Nodes running at least one daemon pod that should run it.
    #[serde(default)]
    pub current_number_scheduled: i32,
    /// Nodes running a daemon pod that should not run it.
    #[serde(default)]
    pub number_misscheduled: i32,
    /// Nodes that should run the daemon pod.
    #[serde(default)]
    pub desired_number_scheduled: i32,
    /// Nodes whose oldest daemon pod is ready.
    #[serde(default)]
    pub number_ready: i32,
    /// Generation the controller has acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Nodes running the updated daemon pod.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub updated_number_scheduled: i32,
    /// Nodes whose oldest daemon pod is available (ready for minReadySeconds).
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub number_available: i32,
    /// desiredNumberScheduled - numberAvailable.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub number_unavailable: i32,
    /// Hash collisions seen; mixed into the revision hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Conditions (none are set by the upstream controller today).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<serde_json::Value>,
}

/// Upstream `appsv1.RollingUpdateDaemonSetStrategyType`.
pub const ROLLING_UPDATE_DAEMON_SET_STRATEGY: &str = "RollingUpdate";
/// Upstream `appsv1.OnDeleteDaemonSetStrategyType`.
pub const ON_DELETE_DAEMON_SET_STRATEGY: &str = "OnDelete";

/// The label holding the revision hash of a DaemonSet's (or StatefulSet's) pods (upstream
/// `appsv1.ControllerRevisionHashLabelKey` = `DefaultDaemonSetUniqueLabelKey`).
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller-revision-hash";
