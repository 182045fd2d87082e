//! Upstream `ResourceClaim` and `ResourceClaimTemplate`: what a pod asks for, and what was
//! allocated to it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::core::NodeSelector;
use crate::meta::ObjectMeta;

use super::DeviceSelector;

/// Upstream `ResourceClaim` (namespaced).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaim {
    /// `resource.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `ResourceClaim`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Upstream `ResourceClaimSpec` (immutable).
    #[serde(default)]
    pub spec: ResourceClaimSpec,
    /// Upstream `ResourceClaimStatus`.
    #[serde(default)]
    pub status: ResourceClaimStatus,
}

/// Upstream `ResourceClaimSpec`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaimSpec {
    /// Upstream `DeviceClaim`.
    #[serde(default)]
    pub devices: DeviceClaim,
}

/// Upstream `DeviceClaim`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceClaim {
    /// The requests; every one must be satisfied (at most 32).
    #[serde(default)]
    pub requests: Vec<DeviceRequest>,
    /// Constraints across requests (at most 32): `matchAttribute` (upstream `DeviceConstraint`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<DeviceConstraint>,
    /// Opaque configuration for the drivers, kept as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<serde_json::Value>,
}

/// Upstream `DeviceRequest`: exactly one of `exactly` and `firstAvailable`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceRequest {
    /// Unique in the claim; containers name it in `resources.claims[].request`.
    #[serde(default)]
    pub name: String,
    /// Upstream `ExactDeviceRequest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exactly: Option<ExactDeviceRequest>,
    /// Prioritized alternatives (KEP-4816, feature gate `DRAPrioritizedList`, beta and on by
    /// default since v1.34): the first sub-request (at most 8) that can be satisfied is
    /// allocated; results name it `<request>/<subrequest>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_available: Vec<DeviceSubRequest>,
}

/// Upstream `DeviceSubRequest`: one alternative of a `firstAvailable` list; the fields of
/// [`ExactDeviceRequest`] without `adminAccess`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceSubRequest {
    /// Unique among the request's sub-requests (a DNS label).
    #[serde(default)]
    pub name: String,
    /// The DeviceClass whose selectors every allocated device must also match.
    #[serde(default)]
    pub device_class_name: String,
    /// CEL selectors; all must match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selectors: Vec<DeviceSelector>,
    /// `ExactCount` (the default) or `All`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_mode: Option<String>,
    /// How many devices with `ExactCount` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// Device taint tolerations, kept as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<serde_json::Value>,
    /// Consumable capacity requests (KEP-5075), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<serde_json::Value>,
}

impl DeviceSubRequest {
    /// The allocation mode, `ExactCount` when unset (upstream's default).
    pub fn mode(&self) -> &str {
        self.allocation_mode
            .as_deref()
            .unwrap_or(super::ALLOCATION_MODE_EXACT_COUNT)
    }

    /// The count, 1 when unset (upstream's default for `ExactCount`).
    pub fn count(&self) -> i64 {
        self.count.unwrap_or(1)
    }
}

/// Upstream `DeviceConstraint`. `distinctAttribute` belongs to the alpha feature gate
/// `DRAConsumableCapacity` (off by default in v1.34/v1.35), so, as kube-apiserver with the gate
/// off, it is not kept.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceConstraint {
    /// The requests (`<request>` or `<request>/<subrequest>`) the constraint applies to; empty:
    /// every request of the claim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<String>,
    /// A fully qualified attribute name (`gpu.nvidia.com/productName`): every device allocated
    /// for these requests must have it, with the same value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_attribute: Option<String>,
}

/// Upstream `ExactDeviceRequest`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExactDeviceRequest {
    /// The DeviceClass whose selectors every allocated device must also match.
    #[serde(default)]
    pub device_class_name: String,
    /// CEL selectors; all must match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selectors: Vec<DeviceSelector>,
    /// `ExactCount` (the default) or `All`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_mode: Option<String>,
    /// How many devices with `ExactCount` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// Admin access: the devices are allocated even when in use, and stay available to others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_access: Option<bool>,
    /// Device taint tolerations, kept as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<serde_json::Value>,
    /// Consumable capacity requests (KEP-5075), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<serde_json::Value>,
}

impl ExactDeviceRequest {
    /// The allocation mode, `ExactCount` when unset (upstream's default).
    pub fn mode(&self) -> &str {
        self.allocation_mode
            .as_deref()
            .unwrap_or(super::ALLOCATION_MODE_EXACT_COUNT)
    }

    /// The count, 1 when unset (upstream's default for `ExactCount`).
    pub fn count(&self) -> i64 {
        self.count.unwrap_or(1)
    }
}

/// Upstream `ResourceClaimStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaimStatus {
    /// Set once the claim is allocated (by the scheduler's DynamicResources plugin at PreBind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation: Option<AllocationResult>,
    /// The pods allowed to use the allocated devices (at most 256).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reserved_for: Vec<ResourceClaimConsumerReference>,
    /// Per-device status written by drivers, kept as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<serde_json::Value>,
}

/// Upstream `ResourceClaimConsumerReference`: a pod (`resource: pods`) the claim is reserved for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaimConsumerReference {
    /// Empty for the core group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// `pods`.
    #[serde(default)]
    pub resource: String,
    /// The consumer's name.
    #[serde(default)]
    pub name: String,
    /// The consumer's uid.
    #[serde(default)]
    pub uid: String,
}

/// Upstream `AllocationResult`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocationResult {
    /// Upstream `DeviceAllocationResult`.
    #[serde(default)]
    pub devices: DeviceAllocationResult,
    /// The nodes where the allocated devices are reachable (for a node-local driver: the node
    /// by `metadata.name` field selector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<NodeSelector>,
    /// When the allocation was made (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_timestamp: Option<String>,
}

/// Upstream `DeviceAllocationResult`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceAllocationResult {
    /// One entry per allocated device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<DeviceRequestAllocationResult>,
    /// The class and claim configuration copied for the drivers, kept as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<serde_json::Value>,
}

/// Upstream `DeviceRequestAllocationResult`: one allocated device.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceRequestAllocationResult {
    /// The request's name.
    #[serde(default)]
    pub request: String,
    /// The driver.
    #[serde(default)]
    pub driver: String,
    /// The pool.
    #[serde(default)]
    pub pool: String,
    /// The device's name in the pool.
    #[serde(default)]
    pub device: String,
    /// Set when the request asked for admin access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_access: Option<bool>,
    /// Every other result field (tolerations, binding conditions, shareID, consumed capacity),
    /// kept as given.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// Upstream `ResourceClaimTemplate` (namespaced): the ResourceClaim controller creates one claim
/// per pod from it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaimTemplate {
    /// `resource.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `ResourceClaimTemplate`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Upstream `ResourceClaimTemplateSpec`.
    #[serde(default)]
    pub spec: ResourceClaimTemplateSpec,
}

/// Upstream `ResourceClaimTemplateSpec`: the claim's labels/annotations and spec.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaimTemplateSpec {
    /// Labels and annotations copied to the generated claims.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The generated claims' spec.
    #[serde(default)]
    pub spec: ResourceClaimSpec,
}

impl ResourceClaim {
    /// Whether `uid` is in `status.reservedFor`.
    pub fn is_reserved_for(&self, uid: &str) -> bool {
        self.status.reserved_for.iter().any(|r| r.uid == uid)
    }
}
