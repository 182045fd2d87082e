//! Dynamic Resource Allocation's API, `resource.k8s.io/v1` (GA since Kubernetes v1.34): the
//! cluster-scoped `DeviceClass` and `ResourceSlice`, the namespaced `ResourceClaim` and
//! `ResourceClaimTemplate` (upstream `staging/src/k8s.io/api/resource/v1/types.go`; KEP-4381
//! "DRA: structured parameters"). A pod names its claims in `spec.resourceClaims`
//! ([`crate::core::PodResourceClaim`]) and its containers use them by name in
//! `resources.claims` ([`crate::core::ContainerResourceClaim`]).
//!
//! The fields k8s-mini does not evaluate (device taints and tolerations, counters, binding
//! conditions, consumable capacity, opaque config) are kept as given (JSON values), so nothing a
//! user wrote is dropped (docs/fidelity.md, "DRA").

pub mod cel;
mod claim;
mod slice;

pub use claim::*;
pub use slice::*;

use serde::{Deserialize, Serialize};

use crate::meta::ObjectMeta;

/// The API version of the four kinds.
pub const API_VERSION: &str = "resource.k8s.io/v1";
/// Upstream `DeviceAllocationModeExactCount`.
pub const ALLOCATION_MODE_EXACT_COUNT: &str = "ExactCount";
/// Upstream `DeviceAllocationModeAll`.
pub const ALLOCATION_MODE_ALL: &str = "All";
/// Upstream `AllocationResultsMaxSize` (also `DeviceRequestsMaxSize`).
pub const ALLOCATION_RESULTS_MAX_SIZE: usize = 32;
/// Upstream `FirstAvailableDeviceRequestMaxSize`.
pub const FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE: usize = 8;
/// Upstream `DeviceConstraintsMaxSize`.
pub const DEVICE_CONSTRAINTS_MAX_SIZE: usize = 32;
/// Upstream `DeviceMaxIDLength`: the longest name part of a qualified attribute name.
pub const DEVICE_MAX_ID_LENGTH: usize = 32;
/// Upstream `ResourceClaimReservedForMaxSize`.
pub const RESERVED_FOR_MAX_SIZE: usize = 256;
/// Upstream `ResourceSliceMaxDevices`.
pub const RESOURCE_SLICE_MAX_DEVICES: usize = 128;
/// Upstream `DeviceSelectorsMaxSize`.
pub const DEVICE_SELECTORS_MAX_SIZE: usize = 32;
/// Upstream `CELSelectorExpressionMaxLength` (10 Ki).
pub const CEL_SELECTOR_EXPRESSION_MAX_LENGTH: usize = 10 * 1024;
/// Upstream `DriverNameMaxLength`.
pub const DRIVER_NAME_MAX_LENGTH: usize = 63;
/// Upstream `Finalizer`: what the ResourceClaim controller puts on an allocated claim.
pub const FINALIZER: &str = "resource.kubernetes.io/delete-protection";
/// Upstream `PodResourceClaimAnnotation`: on a claim generated from a template, the pod's name
/// for the claim (`spec.resourceClaims[].name`).
pub const POD_RESOURCE_CLAIM_ANNOTATION: &str = "resource.kubernetes.io/pod-claim-name";

/// Upstream `DeviceClass` (cluster-scoped): a vendor's or admin's class of devices, selected by
/// CEL; a claim's request names one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceClass {
    /// `resource.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `DeviceClass`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Upstream `DeviceClassSpec`.
    #[serde(default)]
    pub spec: DeviceClassSpec,
}

/// Upstream `DeviceClassSpec`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceClassSpec {
    /// Every selector must match a device for it to be in the class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selectors: Vec<DeviceSelector>,
    /// Opaque configuration for the drivers, kept as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<serde_json::Value>,
    /// The extended resource name this class also serves (KEP-5004), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_resource_name: Option<String>,
}

/// Upstream `DeviceSelector`: one CEL expression.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceSelector {
    /// Upstream `CELDeviceSelector`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cel: Option<CelDeviceSelector>,
}

/// Upstream `CELDeviceSelector`: an expression over `device.driver`, `device.attributes`,
/// `device.capacity` and `device.allowMultipleAllocations` that must evaluate to a bool.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CelDeviceSelector {
    /// The CEL expression.
    #[serde(default)]
    pub expression: String,
}
