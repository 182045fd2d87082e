//! `discovery.k8s.io/v1` EndpointSlice (upstream `k8s.io/api/discovery/v1/types.go`:
//! `EndpointSlice`, `Endpoint`, `EndpointConditions`, `EndpointPort`, the well-known labels).

use serde::{Deserialize, Serialize};

use crate::meta::{ObjectMeta, ObjectReference};

/// Upstream `discovery.LabelServiceName`: the Service a slice belongs to.
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";
/// Upstream `discovery.LabelManagedBy`: the controller managing a slice.
pub const LABEL_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
/// Upstream `controllerName` of the EndpointSlice controller (the `managed-by` value).
pub const ENDPOINTSLICE_CONTROLLER_MANAGED_BY: &str = "endpointslice-controller.k8s.io";
/// Upstream `corev1.EndpointsLastChangeTriggerTime`.
pub const LAST_CHANGE_TRIGGER_TIME_ANNOTATION: &str =
    "endpoints.kubernetes.io/last-change-trigger-time";
/// Upstream `AddressTypeIPv4`.
pub const ADDRESS_TYPE_IPV4: &str = "IPv4";

/// `discovery.k8s.io/v1` EndpointSlice.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointSlice {
    /// `discovery.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `EndpointSlice`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// `IPv4`, `IPv6` or `FQDN`.
    #[serde(default)]
    pub address_type: String,
    /// The endpoints (at most 1000).
    #[serde(default)]
    pub endpoints: Vec<Endpoint>,
    /// The ports every endpoint of the slice serves (at most 100).
    #[serde(default)]
    pub ports: Vec<EndpointPort>,
}

/// Upstream `discovery.Endpoint`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// The pod's IPs (one for an IPv4 slice).
    #[serde(default)]
    pub addresses: Vec<String>,
    /// Ready, serving, terminating.
    #[serde(default)]
    pub conditions: EndpointConditions,
    /// The pod's hostname when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ref: Option<ObjectReference>,
    /// The node the pod runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// The node's `topology.kubernetes.io/zone` label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

/// Upstream `discovery.EndpointConditions` (`None` reads as unknown).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointConditions {
    /// Serving and not terminating (for a Service with `publishNotReadyAddresses`: always).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// The pod's Ready condition, whether terminating or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<bool>,
    /// The pod is being deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminating: Option<bool>,
}

/// Upstream `discovery.EndpointPort`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointPort {
    /// The Service port's name (empty for an unnamed one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The resolved target port on the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// The Service port's appProtocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_protocol: Option<String>,
}

impl EndpointSlice {
    /// The Service this slice belongs to (its `kubernetes.io/service-name` label).
    pub fn service_name(&self) -> Option<&str> {
        self.metadata
            .labels
            .get(LABEL_SERVICE_NAME)
            .map(String::as_str)
    }

    /// Whether the EndpointSlice controller manages this slice.
    pub fn managed_by_controller(&self) -> bool {
        self.metadata
            .labels
            .get(LABEL_MANAGED_BY)
            .map(String::as_str)
            == Some(ENDPOINTSLICE_CONTROLLER_MANAGED_BY)
    }
}
