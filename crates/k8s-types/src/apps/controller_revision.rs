//! `apps/v1` ControllerRevision (upstream `k8s.io/api/apps/v1` `ControllerRevision`): an
//! immutable snapshot of a workload's state (`data`) with a `revision` number, written by the
//! StatefulSet and DaemonSet controllers (upstream `pkg/controller/history`).

use serde::{Deserialize, Serialize};

use crate::meta::ObjectMeta;

/// Upstream `appsv1.ControllerRevision`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControllerRevision {
    /// `apps/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `ControllerRevision`.
    #[serde(default)]
    pub kind: String,
    /// Metadata; the owning workload is the controller owner reference.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The serialized state (upstream `runtime.RawExtension`): for a StatefulSet or DaemonSet,
    /// `{"spec":{"template":{..., "$patch":"replace"}}}` (upstream `getPatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
    /// The revision number: higher is newer (upstream `Revision int64`).
    #[serde(default)]
    pub revision: i64,
}

impl ControllerRevision {
    /// The pod template kept in `data` (`spec.template`, without the `$patch` directive), or
    /// `None` when `data` does not hold one.
    pub fn template(&self) -> Option<crate::apps::PodTemplateSpec> {
        let mut t = self.data.as_ref()?.get("spec")?.get("template")?.clone();
        if let Some(m) = t.as_object_mut() {
            m.remove("$patch");
        }
        serde_json::from_value(t).ok()
    }
}
