//! `v1` Namespace.

use serde::{Deserialize, Serialize};

use crate::meta::ObjectMeta;

/// Upstream `corev1.Namespace`. Spec and status are kept as given.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Namespace {
    /// `v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Namespace`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec (finalizers), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<serde_json::Value>,
    /// Status (`phase: Active`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}
