//! The node lease heartbeat (upstream `pkg/kubelet/nodelease` on
//! `k8s.io/component-helpers/apimachinery/lease/controller.go`, KEP-589): the kubelet holds the
//! `coordination.k8s.io/v1` Lease named after its node in `kube-node-lease`, creates it when it
//! is missing and renews it every [`RENEW_INTERVAL_TICKS`] (`renewIntervalFraction` 0.25 of
//! `nodeLeaseDurationSeconds` 40). The node lifecycle controller reads the renewals as the node's
//! heartbeat; the Node status itself is only written when it changes or every 5 minutes.
//!
//! Simplification: the Lease carries no ownerReference to its Node (upstream sets one so the
//! garbage collector deletes the Lease with the Node).

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::coordination::{micro_time, Lease, LeaseSpec, NODE_LEASE_NAMESPACE};
use k8s_types::meta::ObjectMeta;
use k8s_types::status::Status;
use k8s_types::Tick;

/// Upstream kubelet `nodeLeaseDurationSeconds` default.
pub const NODE_LEASE_DURATION_SECONDS: i32 = 40;
/// Upstream `nodelease.NodeLeaseRenewIntervalFraction` (0.25) of the duration: 10 s.
pub const RENEW_INTERVAL_TICKS: Tick = 10;

/// The kubelet's lease controller: when it last renewed, and the Lease its last write returned.
///
/// As upstream's lease controller (`staging/src/k8s.io/component-helpers/apimachinery/lease/
/// controller.go`: `sync` updates `latestLease` when it has one), a renewal updates
/// the Lease it last wrote without reading it first; only when that update fails (another writer
/// changed or deleted the Lease: `409 Conflict`, `404 NotFound`) or nothing was written yet does it
/// read the Lease (creating it when missing) and update that. The stored Lease is the same either
/// way; a renewal costs one request instead of two.
#[derive(Clone, Debug, Default)]
pub struct NodeLease {
    last_renew: Option<Tick>,
    latest: Option<Lease>,
}

impl NodeLease {
    /// Whether a renewal is due at `now` (never renewed, or [`RENEW_INTERVAL_TICKS`] since the last).
    pub fn due(&self, now: Tick) -> bool {
        self.last_renew
            .is_none_or(|t| now >= t.saturating_add(RENEW_INTERVAL_TICKS))
    }

    /// The tick of the next renewal from `now` on: `now` when never renewed.
    pub fn next_due(&self, now: Tick) -> Tick {
        self.last_renew
            .map_or(now, |t| t.saturating_add(RENEW_INTERVAL_TICKS))
    }

    /// How many renewals fall due before `to` after the last one (none before the first renewal,
    /// which is due at once): the renewals a driver skipping idle ticks accounts for without
    /// writing them ([`NodeLease::fast_forward`] moves the clock past exactly these).
    pub fn renewals_before(&self, to: Tick) -> u64 {
        match self.last_renew {
            Some(last) if to > last => (to - last - 1) / RENEW_INTERVAL_TICKS,
            _ => 0,
        }
    }

    /// Moves the renewal clock as if every renewal due before `to` had been written on time (at
    /// `last + k * RENEW_INTERVAL_TICKS`); nothing is written. The Lease in the apiserver keeps its
    /// older `renewTime` until the next [`NodeLease::renew_if_due`]. Returns the tick of the last
    /// renewal accounted for, when there was one.
    pub fn fast_forward(&mut self, to: Tick) -> Option<Tick> {
        let k = self.renewals_before(to);
        let last = self.last_renew.as_mut()?;
        *last += k * RENEW_INTERVAL_TICKS;
        (k > 0).then_some(*last)
    }

    /// Forgets the last renewal: the next [`NodeLease::renew_if_due`] renews (a restarted kubelet).
    /// Sets the last renewal to what the stored Lease says (a kubelet resumed from a snapshot).
    pub fn resume(&mut self, last_renew: Option<Tick>) {
        self.last_renew = last_renew;
        self.latest = None;
    }

    pub fn reset(&mut self) {
        self.last_renew = None;
        self.latest = None;
    }

    /// Renews (or creates) the node's Lease when due. Returns whether it wrote.
    ///
    /// # Errors
    /// The apiserver's answer when the Lease can be neither read, created nor updated.
    pub fn renew_if_due(
        &mut self,
        api: &mut dyn ApiClient,
        node: &str,
        now: Tick,
    ) -> Result<bool, Status> {
        if !self.due(now) {
            return Ok(false);
        }
        let spec_for = |mut spec: LeaseSpec| {
            spec.holder_identity = Some(node.to_string());
            spec.lease_duration_seconds = Some(NODE_LEASE_DURATION_SECONDS);
            spec.renew_time = Some(micro_time(now));
            spec
        };
        if let Some(mut lease) = self.latest.take() {
            lease.spec = spec_for(lease.spec);
            if let Ok(stored) = api.update_typed(lease) {
                self.latest = Some(stored);
                self.last_renew = Some(now);
                return Ok(true);
            }
        }
        match api.get_typed::<Lease>(NODE_LEASE_NAMESPACE, node) {
            Ok(mut lease) => {
                lease.spec = spec_for(lease.spec);
                self.latest = Some(api.update_typed(lease)?);
            }
            Err(e) if e.is_not_found() => {
                self.latest = Some(api.create_typed(Lease {
                    metadata: ObjectMeta {
                        name: node.to_string(),
                        namespace: Some(NODE_LEASE_NAMESPACE.into()),
                        ..Default::default()
                    },
                    spec: spec_for(LeaseSpec::default()),
                    ..Default::default()
                })?);
            }
            Err(e) => return Err(e),
        }
        self.last_renew = Some(now);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_forward_moves_past_the_renewals_before_the_target() {
        let mut lease = NodeLease::default();
        // Never renewed: due at once, nothing to skip.
        assert_eq!(lease.next_due(7), 7);
        assert_eq!(lease.renewals_before(1000), 0);
        lease.last_renew = Some(3);
        assert_eq!(lease.next_due(7), 13);
        // Renewals due at 13, 23, ..., 93 fall before 100; 103 does not.
        assert_eq!(lease.renewals_before(100), 9);
        assert_eq!(lease.renewals_before(13), 0);
        assert_eq!(lease.renewals_before(14), 1);
        assert_eq!(lease.fast_forward(100), Some(93));
        assert_eq!(lease.last_renew, Some(93));
        assert!(!lease.due(102));
        assert!(lease.due(103));
        // Nothing before the last renewal moves it back.
        assert_eq!(lease.fast_forward(50), None);
        assert_eq!(lease.last_renew, Some(93));
    }
}
