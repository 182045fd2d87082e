//! `v1` PersistentVolumeClaim (upstream `k8s.io/api/core/v1` `PersistentVolumeClaim`), minimal:
//! access modes, the storage request, the class and the bound volume; status phase.

use serde::{Deserialize, Serialize};

use crate::core::ResourceList;
use crate::meta::ObjectMeta;

/// Upstream `corev1.PersistentVolumeClaim`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaim {
    /// `v1` (empty in a StatefulSet's `volumeClaimTemplates`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `PersistentVolumeClaim` (empty in a template).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired storage.
    #[serde(default)]
    pub spec: PersistentVolumeClaimSpec,
    /// Observed state, written by the volume binder.
    #[serde(default)]
    pub status: PersistentVolumeClaimStatus,
}

/// Upstream `corev1.PersistentVolumeClaimSpec` (the fields k8s-mini keeps).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimSpec {
    /// `ReadWriteOnce`, `ReadOnlyMany`, `ReadWriteMany`, `ReadWriteOncePod`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<String>,
    /// `requests.storage`.
    #[serde(default)]
    pub resources: VolumeResourceRequirements,
    /// The StorageClass; kept, not acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,
    /// The bound volume, set by the binder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_name: Option<String>,
    /// `Filesystem` (default) or `Block`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mode: Option<String>,
}

/// Upstream `corev1.VolumeResourceRequirements`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeResourceRequirements {
    /// Requests, e.g. `storage: 1Gi`.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub requests: ResourceList,
    /// Limits.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub limits: ResourceList,
}

/// Upstream `corev1.PersistentVolumeClaimStatus` (phase, access modes, capacity).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimStatus {
    /// `Pending`, `Bound` or `Lost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The bound volume's access modes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<String>,
    /// The bound volume's capacity.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub capacity: ResourceList,
}

/// Upstream `corev1.PersistentVolumeClaimPhase` values.
pub mod claim_phases {
    /// Not yet bound.
    pub const PENDING: &str = "Pending";
    /// Bound to a volume.
    pub const BOUND: &str = "Bound";
    /// The bound volume is gone.
    pub const LOST: &str = "Lost";
}
