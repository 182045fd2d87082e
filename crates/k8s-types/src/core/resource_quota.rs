//! `v1` ResourceQuota (upstream `k8s.io/api/core/v1` `ResourceQuota`, `ResourceQuotaSpec`,
//! `ResourceQuotaStatus`).

use serde::{Deserialize, Serialize};

use super::ResourceList;
use crate::meta::ObjectMeta;

/// Upstream `corev1.ResourceQuota`: aggregate limits per namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceQuota {
    /// `v1`.
    #[serde(default)]
    pub api_version: String,
    /// `ResourceQuota`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: ResourceQuotaSpec,
    /// Status, kept by the resource quota controller.
    #[serde(default)]
    pub status: ResourceQuotaStatus,
}

/// Upstream `corev1.ResourceQuotaSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceQuotaSpec {
    /// The hard limit per resource name (`pods`, `requests.cpu`, `count/deployments.apps`, ...).
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub hard: ResourceList,
    /// Scopes (`Terminating`, `NotTerminating`, `BestEffort`, `NotBestEffort`, `PriorityClass`,
    /// `CrossNamespacePodAffinity`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Scope selector, kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_selector: Option<serde_json::Value>,
}

/// Upstream `corev1.ResourceQuotaStatus`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceQuotaStatus {
    /// The enforced hard limits (the spec's, as last observed).
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub hard: ResourceList,
    /// Current usage per resource name of `hard`.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub used: ResourceList,
}
