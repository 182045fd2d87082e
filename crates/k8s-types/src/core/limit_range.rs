//! `v1` LimitRange (upstream `k8s.io/api/core/v1` `LimitRange`, `LimitRangeSpec`,
//! `LimitRangeItem`).

use serde::{Deserialize, Serialize};

use super::ResourceList;
use crate::meta::ObjectMeta;

/// Upstream `corev1.LimitTypePod`.
pub const LIMIT_TYPE_POD: &str = "Pod";
/// Upstream `corev1.LimitTypeContainer`.
pub const LIMIT_TYPE_CONTAINER: &str = "Container";
/// Upstream `corev1.LimitTypePersistentVolumeClaim`.
pub const LIMIT_TYPE_PERSISTENT_VOLUME_CLAIM: &str = "PersistentVolumeClaim";

/// Upstream `corev1.LimitRange`: per-pod and per-container bounds and defaults in a namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitRange {
    /// `v1`.
    #[serde(default)]
    pub api_version: String,
    /// `LimitRange`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: LimitRangeSpec,
}

/// Upstream `corev1.LimitRangeSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitRangeSpec {
    /// The limits.
    #[serde(default)]
    pub limits: Vec<LimitRangeItem>,
}

/// Upstream `corev1.LimitRangeItem`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitRangeItem {
    /// `Pod`, `Container` or `PersistentVolumeClaim`.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// Maximum per resource.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub max: ResourceList,
    /// Minimum per resource.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub min: ResourceList,
    /// Default limits (containers).
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub default: ResourceList,
    /// Default requests (containers).
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub default_request: ResourceList,
    /// Maximum limit / request ratio per resource.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub max_limit_request_ratio: ResourceList,
}
