//! The `node.k8s.io/v1` API group: RuntimeClass (upstream `k8s.io/api/node/v1`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::core::{ResourceList, Toleration};
use crate::meta::ObjectMeta;

/// Upstream `nodev1.RuntimeClass` (cluster-scoped): a container runtime configuration, its pod
/// overhead and the nodes that support it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeClass {
    /// `node.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `RuntimeClass`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The CRI handler (kept, not acted on).
    #[serde(default)]
    pub handler: String,
    /// The overhead of running a pod with this class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Overhead>,
    /// Where pods of this class may run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<Scheduling>,
}

/// Upstream `nodev1.Overhead`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Overhead {
    /// Fixed overhead per pod.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub pod_fixed: ResourceList,
}

/// Upstream `nodev1.Scheduling`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scheduling {
    /// Merged into the pod's `nodeSelector`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Appended to the pod's tolerations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
}
