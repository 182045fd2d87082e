//! `v1` Event, as `kubectl get events` shows it (upstream `corev1.Event`).

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use crate::meta::{ObjectMeta, ObjectReference};

/// Upstream `corev1.Event`. Timestamps are RFC 3339 renderings of ticks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// `v1`.
    #[serde(default)]
    pub api_version: CompactString,
    /// `Event`.
    #[serde(default)]
    pub kind: CompactString,
    /// Metadata; the name is `<involved name>.<16 hex digits>` as upstream.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The object the event is about.
    #[serde(default)]
    pub involved_object: ObjectReference,
    /// Reason, e.g. `Scheduled`, `FailedScheduling`, `SuccessfulCreate`.
    #[serde(default)]
    pub reason: CompactString,
    /// Message as upstream words it.
    #[serde(default)]
    pub message: CompactString,
    /// Component that emitted it.
    #[serde(default)]
    pub source: EventSource,
    /// `Normal` or `Warning`.
    #[serde(default, rename = "type")]
    pub type_: CompactString,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<CompactString>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<CompactString>,
    /// Times seen.
    #[serde(default)]
    pub count: i32,
    /// Controller that emitted it, e.g. `default-scheduler`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporting_component: Option<CompactString>,
}

/// Upstream `corev1.EventSource`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventSource {
    /// e.g. `default-scheduler`, `kubelet`, `replicaset-controller`.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub component: CompactString,
    /// Node name for kubelet events.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub host: CompactString,
}

/// Event types.
pub mod event_types {
    /// Normal.
    pub const NORMAL: &str = "Normal";
    /// Warning.
    pub const WARNING: &str = "Warning";
}
