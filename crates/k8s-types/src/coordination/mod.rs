//! The `coordination.k8s.io/v1` API group: Lease (upstream `k8s.io/api/coordination/v1/types.go`),
//! used here as KEP-589 node leases: each kubelet holds a Lease named after its node in the
//! [`NODE_LEASE_NAMESPACE`] namespace and renews it as its heartbeat.

use serde::{Deserialize, Serialize};

use crate::meta::ObjectMeta;
use crate::Tick;

/// Upstream `v1.NamespaceNodeLease`: where the node leases live.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// `coordination.k8s.io/v1` Lease.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// `coordination.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Lease`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec (a Lease has no status).
    #[serde(default)]
    pub spec: LeaseSpec,
}

/// Upstream `LeaseSpec` (the fields k8s-mini uses; `acquireTime` and `leaseTransitions` are kept as
/// given).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseSpec {
    /// Who holds the lease (a node lease: the node name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_identity: Option<String>,
    /// How long the holder's claim lasts after a renewal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration_seconds: Option<i32>,
    /// When the lease was acquired (MicroTime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquire_time: Option<String>,
    /// When the holder last renewed it (MicroTime, `2006-01-02T15:04:05.000000Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_time: Option<String>,
    /// How many times the holder changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_transitions: Option<i32>,
}

/// A tick as a `metav1.MicroTime` (RFC 3339 with microseconds, as the apiserver serializes it).
pub fn micro_time(tick: Tick) -> String {
    let s = crate::meta::tick_timestamp(tick);
    match s.strip_suffix('Z') {
        Some(base) => format!("{base}.000000Z"),
        None => s,
    }
}

/// The tick of a `MicroTime` (or plain RFC 3339 time); fractions of a second are dropped.
pub fn micro_time_tick(ts: &str) -> Option<Tick> {
    match ts.split_once('.') {
        Some((base, _)) => crate::meta::timestamp_tick(&format!("{base}Z")),
        None => crate::meta::timestamp_tick(ts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_time_round_trips() {
        assert_eq!(micro_time(45), "1970-01-01T00:00:45.000000Z");
        assert_eq!(micro_time_tick("1970-01-01T00:00:45.000000Z"), Some(45));
        assert_eq!(micro_time_tick("1970-01-01T00:01:00Z"), Some(60));
    }
}
