//! `v1` Binding: the `pods/binding` subresource body the scheduler posts (upstream `corev1.Binding`).

use serde::{Deserialize, Serialize};

use crate::meta::{ObjectMeta, ObjectReference};

/// Upstream `corev1.Binding`: `metadata` names the pod, `target` the node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    /// `v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Binding`.
    #[serde(default)]
    pub kind: String,
    /// The pod's namespace and name (and optionally its uid).
    pub metadata: ObjectMeta,
    /// `kind: Node`, `name: <node>`.
    pub target: ObjectReference,
}

impl Binding {
    /// A binding of `namespace/pod` to `node`.
    pub fn new(namespace: &str, pod: &str, node: &str) -> Binding {
        Binding {
            api_version: "v1".into(),
            kind: "Binding".into(),
            metadata: ObjectMeta {
                name: pod.into(),
                namespace: Some(namespace.into()),
                ..Default::default()
            },
            target: ObjectReference {
                kind: "Node".into(),
                name: node.into(),
                ..Default::default()
            },
        }
    }
}
