//! `apps/v1` StatefulSet (upstream `k8s.io/api/apps/v1` `StatefulSet`).

use serde::{Deserialize, Serialize};

use super::{IntOrString, PodTemplateSpec};
use crate::core::PersistentVolumeClaim;
use crate::labels::LabelSelector;
use crate::meta::ObjectMeta;

/// Upstream `appsv1.StatefulSet`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSet {
    /// `apps/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `StatefulSet`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: StatefulSetSpec,
    /// Observed state, written by the statefulset controller.
    #[serde(default)]
    pub status: StatefulSetStatus,
}

/// Upstream `appsv1.StatefulSetSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetSpec {
    /// Desired pods; defaulted to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Must match the template's labels (required in apps/v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// The pod template.
    #[serde(default)]
    pub template: PodTemplateSpec,
    /// Claims every pod gets, named `<template>-<set>-<ordinal>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_claim_templates: Vec<PersistentVolumeClaim>,
    /// The governing (headless) Service: the pods' `subdomain`.
    #[serde(default)]
    pub service_name: String,
    /// `OrderedReady` (default) or `Parallel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_management_policy: Option<String>,
    /// Defaulted to RollingUpdate with partition 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<StatefulSetUpdateStrategy>,
    /// Old revisions kept; defaulted to 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Seconds (ticks) a pod must be ready to count as available; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// What happens to the claims when the set is deleted or scaled down; defaulted to
    /// Retain / Retain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim_retention_policy:
        Option<StatefulSetPersistentVolumeClaimRetentionPolicy>,
    /// The first ordinal (upstream `ordinals.start`, StatefulSetStartOrdinal, beta in v1.32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinals: Option<StatefulSetOrdinals>,
}

/// Upstream `appsv1.StatefulSetOrdinals`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetOrdinals {
    /// The ordinal of the first replica; default 0.
    #[serde(default)]
    pub start: i32,
}

/// Upstream `appsv1.StatefulSetUpdateStrategy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetUpdateStrategy {
    /// `RollingUpdate` (default) or `OnDelete`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Parameters of a rolling update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

/// Upstream `appsv1.RollingUpdateStatefulSetStrategy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStatefulSetStrategy {
    /// Ordinals at or above it are updated; the others keep the current revision. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    /// Kept and validated; not acted on (the MaxUnavailableStatefulSet gate is alpha, off, in
    /// v1.32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
}

/// Upstream `appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetPersistentVolumeClaimRetentionPolicy {
    /// `Retain` (default) or `Delete`: the claims when the StatefulSet is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_deleted: Option<String>,
    /// `Retain` (default) or `Delete`: the claims of the pods a scale-down removes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_scaled: Option<String>,
}

/// Upstream `appsv1.StatefulSetStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetStatus {
    /// Generation the controller has acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Pods created by the controller (not terminal, not being deleted count or not: upstream
    /// counts every pod it manages that is not terminating).
    #[serde(default)]
    pub replicas: i32,
    /// Pods with a Ready condition.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub ready_replicas: i32,
    /// Pods of `currentRevision`.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub current_replicas: i32,
    /// Pods of `updateRevision`.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub updated_replicas: i32,
    /// The revision of the pods below the partition (`<set>-<hash>`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub current_revision: String,
    /// The revision of the current template (`<set>-<hash>`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub update_revision: String,
    /// Hash collisions seen; mixed into the revision hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Ready pods ready for at least minReadySeconds.
    #[serde(default)]
    pub available_replicas: i32,
}

/// Upstream `appsv1.OrderedReadyPodManagement`.
pub const ORDERED_READY_POD_MANAGEMENT: &str = "OrderedReady";
/// Upstream `appsv1.ParallelPodManagement`.
pub const PARALLEL_POD_MANAGEMENT: &str = "Parallel";
/// Upstream `appsv1.RollingUpdateStatefulSetStrategyType`.
pub const ROLLING_UPDATE_STATEFUL_SET_STRATEGY: &str = "RollingUpdate";
/// Upstream `appsv1.OnDeleteStatefulSetStrategyType`.
pub const ON_DELETE_STATEFUL_SET_STRATEGY: &str = "OnDelete";
/// Upstream `appsv1.RetainPersistentVolumeClaimRetentionPolicyType`.
pub const RETAIN_PVC_RETENTION: &str = "Retain";
/// Upstream `appsv1.DeletePersistentVolumeClaimRetentionPolicyType`.
pub const DELETE_PVC_RETENTION: &str = "Delete";
/// Upstream `appsv1.StatefulSetPodNameLabel`.
pub const STATEFUL_SET_POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// Upstream `appsv1.PodIndexLabel` (feature PodIndexLabel, GA in v1.32).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
