//! `apps/v1` Deployment (upstream `k8s.io/api/apps/v1` `Deployment`).

use serde::{Deserialize, Serialize};

use super::{IntOrString, PodTemplateSpec};
use crate::labels::LabelSelector;
use crate::meta::ObjectMeta;

/// Upstream `appsv1.Deployment`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Deployment {
    /// `apps/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Deployment`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: DeploymentSpec,
    /// Observed state, written by the deployment controller.
    #[serde(default)]
    pub status: DeploymentStatus,
}

/// Upstream `appsv1.DeploymentSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentSpec {
    /// Desired pods; defaulted to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Must match the template's labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// The pod template.
    #[serde(default)]
    pub template: PodTemplateSpec,
    /// Defaulted to RollingUpdate 25%/25%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<DeploymentStrategy>,
    /// Seconds (ticks) a pod must be ready to count as available; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Old ReplicaSets kept; defaulted to 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Progress deadline in seconds; defaulted to 600.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
    /// Paused rollouts do nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
}

/// Upstream `appsv1.DeploymentStrategy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStrategy {
    /// `RollingUpdate` (default) or `Recreate`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Parameters of a rolling update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDeployment>,
}

/// Upstream `appsv1.RollingUpdateDeployment`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDeployment {
    /// Pods that may be unavailable during the update (int or percent, rounded down); default 25%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Pods above the desired count (int or percent, rounded up); default 25%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

/// Upstream `appsv1.DeploymentStatus` (the counts are `omitempty` upstream: 0 is not printed).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStatus {
    /// Generation the controller has acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Pods of all ReplicaSets.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub replicas: i32,
    /// Pods of the new ReplicaSet.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub updated_replicas: i32,
    /// Ready pods.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub ready_replicas: i32,
    /// Available pods (ready for minReadySeconds).
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub available_replicas: i32,
    /// replicas - available.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub unavailable_replicas: i32,
    /// Available, Progressing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<serde_json::Value>,
    /// Hash collisions seen for this Deployment; mixed into the pod-template-hash of its newest
    /// ReplicaSet to get a fresh name (upstream `DeploymentStatus.collisionCount`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
}

/// The annotation holding a Deployment's / ReplicaSet's revision (upstream
/// `deployment.kubernetes.io/revision`).
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";

/// The label the deployment controller adds to a ReplicaSet's selector and template
/// (upstream `appsv1.DefaultDeploymentUniqueLabelKey`).
pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";
