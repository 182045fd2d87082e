//! `apps/v1` ReplicaSet (upstream `k8s.io/api/apps/v1` `ReplicaSet`).

use serde::{Deserialize, Serialize};

use super::PodTemplateSpec;
use crate::labels::LabelSelector;
use crate::meta::ObjectMeta;

/// Upstream `appsv1.ReplicaSet`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSet {
    /// `apps/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `ReplicaSet`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: ReplicaSetSpec,
    /// Observed state, written by the ReplicaSet controller.
    #[serde(default)]
    pub status: ReplicaSetStatus,
}

/// Upstream `appsv1.ReplicaSetSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSetSpec {
    /// Desired pods; defaulted to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Seconds (ticks) a pod must be ready to count as available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Must match the template's labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// The pod template.
    #[serde(default)]
    pub template: PodTemplateSpec,
}

/// Upstream `appsv1.ReplicaSetStatus` (`replicas` is always printed; the other counts are
/// `omitempty` upstream: 0 is not printed).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSetStatus {
    /// Pods owned.
    #[serde(default)]
    pub replicas: i32,
    /// Owned pods with labels matching the template.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub fully_labeled_replicas: i32,
    /// Ready pods.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub ready_replicas: i32,
    /// Available pods.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub available_replicas: i32,
    /// Generation acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
