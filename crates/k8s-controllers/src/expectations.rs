//! Controller expectations, after upstream `pkg/controller/controller_utils.go`
//! (`ControllerExpectations`, `UIDTrackingControllerExpectations`): before a controller creates or
//! deletes pods it records how many adds (and which deletes) it expects to observe through its
//! informers; until they are observed (or the record is older than [`EXPECTATIONS_TIMEOUT_TICKS`])
//! it does not act on that owner again, so it never creates or deletes twice for the same need
//! while its own writes are in flight.
//!
//! On the virtual clock: a record's age is counted in ticks from the tick it was set.

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::Tick;

/// Upstream `ExpectationsTimeout`: 5 minutes.
pub const EXPECTATIONS_TIMEOUT_TICKS: Tick = 5 * 60;

/// One owner's outstanding expectations (upstream `ControlleeExpectations`, with the deleted-pod
/// keys of `UIDTrackingControllerExpectations`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expectation {
    /// Creations not yet observed.
    pub add: i64,
    /// Deletions not yet observed.
    pub del: i64,
    /// Keys of the pods whose deletion is expected.
    pub deleting: BTreeSet<String>,
    /// Tick the expectations were set.
    pub timestamp: Tick,
}

impl Expectation {
    /// Upstream `Fulfilled`: nothing outstanding.
    pub fn fulfilled(&self) -> bool {
        self.add <= 0 && self.del <= 0
    }
}

/// Expectations by owner key (`namespace/name`).
#[derive(Clone, Debug, Default)]
pub struct ControllerExpectations {
    records: BTreeMap<String, Expectation>,
}

impl ControllerExpectations {
    /// No expectations.
    pub fn new() -> Self {
        Self::default()
    }

    /// Upstream `SatisfiedExpectations`: true when there is no record, it is fulfilled, or it has
    /// expired (older than [`EXPECTATIONS_TIMEOUT_TICKS`]); the controller may then act.
    pub fn satisfied(&self, key: &str, now: Tick) -> bool {
        match self.records.get(key) {
            None => true,
            Some(e) => {
                e.fulfilled() || now.saturating_sub(e.timestamp) > EXPECTATIONS_TIMEOUT_TICKS
            }
        }
    }

    /// Upstream `ExpectCreations`: `n` adds expected from now.
    pub fn expect_creations(&mut self, key: &str, n: usize, now: Tick) {
        self.records.insert(
            key.to_string(),
            Expectation {
                add: i64::try_from(n).unwrap_or(i64::MAX),
                timestamp: now,
                ..Expectation::default()
            },
        );
    }

    /// Upstream `UIDTrackingControllerExpectations.ExpectDeletions`: the deletion of each pod of
    /// `pod_keys` expected from now.
    pub fn expect_deletions(&mut self, key: &str, pod_keys: Vec<String>, now: Tick) {
        let deleting: BTreeSet<String> = pod_keys.into_iter().collect();
        self.records.insert(
            key.to_string(),
            Expectation {
                del: i64::try_from(deleting.len()).unwrap_or(i64::MAX),
                deleting,
                timestamp: now,
                ..Expectation::default()
            },
        );
    }

    /// Upstream `SetExpectations(key, add, del)` as the daemon set controller calls it: `adds`
    /// creations and the deletion of each pod of `pod_keys` expected from now, in one record.
    pub fn set_expectations(&mut self, key: &str, adds: usize, pod_keys: Vec<String>, now: Tick) {
        let deleting: BTreeSet<String> = pod_keys.into_iter().collect();
        self.records.insert(
            key.to_string(),
            Expectation {
                add: i64::try_from(adds).unwrap_or(i64::MAX),
                del: i64::try_from(deleting.len()).unwrap_or(i64::MAX),
                deleting,
                timestamp: now,
            },
        );
    }

    /// Upstream `CreationObserved` (also `LowerExpectations(key, 1, 0)` after a failed create).
    pub fn creation_observed(&mut self, key: &str) {
        if let Some(e) = self.records.get_mut(key) {
            e.add -= 1;
        }
    }

    /// Upstream `LowerExpectations(key, n, 0)`: creations that will never be observed (skipped
    /// after a failure).
    pub fn lower_creations(&mut self, key: &str, n: usize) {
        if let Some(e) = self.records.get_mut(key) {
            e.add -= i64::try_from(n).unwrap_or(i64::MAX);
        }
    }

    /// Upstream `UIDTrackingControllerExpectations.DeletionObserved`: counts only a pod whose
    /// deletion was expected, once.
    pub fn deletion_observed(&mut self, key: &str, pod_key: &str) {
        if let Some(e) = self.records.get_mut(key) {
            if e.deleting.remove(pod_key) {
                e.del -= 1;
            }
        }
    }

    /// Upstream `DeleteExpectations`: the owner is gone.
    pub fn delete(&mut self, key: &str) {
        self.records.remove(key);
    }

    /// The record of `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Expectation> {
        self.records.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creations_block_until_observed() {
        let mut e = ControllerExpectations::new();
        assert!(e.satisfied("ns/rs", 0));
        e.expect_creations("ns/rs", 2, 10);
        assert!(!e.satisfied("ns/rs", 10));
        e.creation_observed("ns/rs");
        assert!(!e.satisfied("ns/rs", 11));
        e.creation_observed("ns/rs");
        assert!(e.satisfied("ns/rs", 11));
    }

    /// Upstream `isExpired`: older than 5 minutes (300 ticks), strictly.
    #[test]
    fn expectations_expire_after_five_minutes() {
        let mut e = ControllerExpectations::new();
        e.expect_creations("k", 1, 100);
        assert!(!e.satisfied("k", 400));
        assert!(e.satisfied("k", 401));
    }

    #[test]
    fn only_expected_deletions_count_and_only_once() {
        let mut e = ControllerExpectations::new();
        e.expect_deletions("k", vec!["ns/a".into(), "ns/b".into()], 0);
        e.deletion_observed("k", "ns/other");
        e.deletion_observed("k", "ns/a");
        e.deletion_observed("k", "ns/a");
        assert_eq!(e.get("k").map(|r| r.del), Some(1));
        assert!(!e.satisfied("k", 0));
        e.deletion_observed("k", "ns/b");
        assert!(e.satisfied("k", 0));
        e.lower_creations("k", 0);
        e.delete("k");
        assert!(e.get("k").is_none());
    }
}
