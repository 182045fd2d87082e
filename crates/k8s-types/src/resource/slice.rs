//! Upstream `ResourceSlice`: what a DRA driver publishes about the devices of one pool.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::core::NodeSelector;
use crate::meta::ObjectMeta;
use crate::quantity::Quantity;

/// Upstream `ResourceSlice` (cluster-scoped).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSlice {
    /// `resource.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `ResourceSlice`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Upstream `ResourceSliceSpec`.
    #[serde(default)]
    pub spec: ResourceSliceSpec,
}

/// Upstream `ResourceSliceSpec`. Exactly one of `nodeName`, `nodeSelector`, `allNodes` and
/// `perDeviceNodeSelection` says where the devices are reachable.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSliceSpec {
    /// The driver's name, a DNS subdomain (`gpu.nvidia.com`).
    #[serde(default)]
    pub driver: String,
    /// The pool the slice belongs to.
    #[serde(default)]
    pub pool: ResourcePool,
    /// The node whose devices these are (node-local drivers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// The nodes that reach these devices (network-attached drivers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<NodeSelector>,
    /// Every node reaches these devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_nodes: Option<bool>,
    /// The devices; at most 128.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<Device>,
    /// Each device says where it is reachable (kept as given; k8s-mini reads `nodeName`,
    /// `nodeSelector`, `allNodes` of the slice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_device_node_selection: Option<bool>,
    /// Partitionable devices' counter sets (KEP-4815), kept as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_counters: Vec<serde_json::Value>,
}

/// Upstream `ResourcePool`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcePool {
    /// The pool's name (a node-local driver names it after the node).
    #[serde(default)]
    pub name: String,
    /// Bumped by the driver when the pool changes; slices of an older generation are ignored.
    #[serde(default)]
    pub generation: i64,
    /// How many slices the pool has at this generation.
    #[serde(default)]
    pub resource_slice_count: i64,
}

/// Upstream `Device`: one device, with attributes and capacities a CEL selector reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    /// Unique in the pool (a DNS label: `gpu-0`).
    #[serde(default)]
    pub name: String,
    /// Attributes by qualified name (`productName` means `<driver>/productName`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, DeviceAttribute>,
    /// Capacities by qualified name (`memory`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, DeviceCapacity>,
    /// Whether several claims may allocate the device at once (KEP-5075); kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_multiple_allocations: Option<bool>,
    /// Every other device field (taints, consumesCounters, binding conditions, per-device node
    /// selection), kept as given.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// Upstream `DeviceAttribute`: exactly one of the values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceAttribute {
    /// A 64-bit integer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int: Option<i64>,
    /// A bool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bool: Option<bool>,
    /// A string (at most 64 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string: Option<String>,
    /// A semantic version 2.0.0 string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl DeviceAttribute {
    /// A string attribute.
    pub fn string(s: impl Into<String>) -> DeviceAttribute {
        DeviceAttribute {
            string: Some(s.into()),
            ..DeviceAttribute::default()
        }
    }

    /// An int attribute.
    pub fn int(i: i64) -> DeviceAttribute {
        DeviceAttribute {
            int: Some(i),
            ..DeviceAttribute::default()
        }
    }

    /// A version attribute.
    pub fn version(v: impl Into<String>) -> DeviceAttribute {
        DeviceAttribute {
            version: Some(v.into()),
            ..DeviceAttribute::default()
        }
    }

    /// How many of the values are set (validation wants exactly one).
    pub fn values_set(&self) -> usize {
        usize::from(self.int.is_some())
            + usize::from(self.bool.is_some())
            + usize::from(self.string.is_some())
            + usize::from(self.version.is_some())
    }
}

/// Upstream `DeviceCapacity`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceCapacity {
    /// The device's capacity.
    pub value: Quantity,
    /// Consumable capacity's request policy (KEP-5075), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_policy: Option<serde_json::Value>,
}

impl ResourceSlice {
    /// The node the slice's devices are on (`spec.nodeName`), if node-local.
    pub fn node_name(&self) -> Option<&str> {
        self.spec.node_name.as_deref()
    }
}
