//! The scheduling queue, simplified to one pass per tick ([`SchedulingQueue`]): every pending pod
//! is attempted at most once per tick, in QueueSort order. A pod whose attempt failed is retried
//! only when (a) its backoff has elapsed — upstream's 1 s doubling to 10 s
//! (`podInitialBackoffDuration`, `podMaxBackoffDuration`), here in ticks — and (b) the cluster
//! changed since the failure (a node, an assigned pod, a PodGroup or the set of gang members
//! changed), or it has waited 5 minutes (upstream `podMaxInUnschedulablePodsDuration`). Pods that
//! failed with an internal error are retried after backoff alone. Mirrors the intent of upstream
//! `pkg/scheduler/backend/queue/scheduling_queue.go` (activeQ, backoffQ, unschedulablePods) without
//! per-plugin queueing hints: any relevant change wakes every unschedulable pod.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_types::core::Pod;
use k8s_types::framework::QueuedPodInfo;
use k8s_types::meta::timestamp_tick;
use k8s_types::Tick;

/// Upstream `DefaultPodInitialBackoffDuration` (1 s), in ticks.
pub const POD_INITIAL_BACKOFF: Tick = 1;
/// Upstream `DefaultPodMaxBackoffDuration` (10 s), in ticks.
pub const POD_MAX_BACKOFF: Tick = 10;
/// Upstream `DefaultPodMaxInUnschedulablePodsDuration` (5 min), in ticks.
pub const POD_MAX_IN_UNSCHEDULABLE: Tick = 300;

/// Upstream `calculateBackoffDuration`: 1, 2, 4, 8, 10, 10 ... ticks for attempts 1, 2, 3, ...
pub fn backoff_duration(attempts: u32) -> Tick {
    if attempts == 0 {
        return 0;
    }
    let mut d = POD_INITIAL_BACKOFF;
    for _ in 1..attempts {
        if d > POD_MAX_BACKOFF - d {
            return POD_MAX_BACKOFF;
        }
        d += d;
    }
    d
}

/// What the queue remembers about a pending pod.
#[derive(Clone, Debug, Default)]
pub struct QueueEntry {
    uid: String,
    /// Queue timestamp (creation tick, refreshed on each failure).
    pub timestamp: Tick,
    /// The pod's resourceVersion when the scheduler first saw it (its creation revision for a pod not
    /// updated before then).
    pub sequence: i64,
    /// Attempts so far.
    pub attempts: u32,
    /// Tick of the first attempt.
    pub initial_attempt: Option<Tick>,
    /// Tick of the last failed attempt.
    pub last_failure: Option<Tick>,
    /// No retry before this tick.
    pub backoff_until: Tick,
    /// Cluster generation when the last attempt failed.
    pub generation_at_failure: u64,
    /// The last failure was an internal error (retry after backoff alone).
    pub error_failure: bool,
    /// The last FailedScheduling message recorded as an event.
    pub last_message: Option<String>,
}

/// Pending pods the scheduler knows, by `namespace/name`.
#[derive(Clone, Debug, Default)]
pub struct SchedulingQueue {
    entries: BTreeMap<String, QueueEntry>,
}

impl SchedulingQueue {
    /// Registers a pending pod (or resets a recreated one) and returns its queue info.
    pub(crate) fn observe(&mut self, pod: &Arc<Pod>, now: Tick, revision: i64) -> QueuedPodInfo {
        let key = pod.key();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let fresh = || QueueEntry {
            uid: uid.clone(),
            timestamp: pod
                .metadata
                .creation_timestamp
                .as_deref()
                .and_then(timestamp_tick)
                .unwrap_or(now),
            // The pod's resourceVersion when first seen is its creation revision unless it was
            // updated before the scheduler saw it: pods created in one tick queue in creation order,
            // as upstream's informer adds them.
            sequence: match pod.metadata.resource_version_number() {
                0 => revision,
                rv => rv.min(revision),
            },
            ..Default::default()
        };
        let e = self.entries.entry(key).or_insert_with(&fresh);
        if e.uid != uid {
            *e = fresh();
        }
        QueuedPodInfo {
            pod: Arc::clone(pod),
            timestamp: e.timestamp,
            attempts: e.attempts,
            initial_attempt_timestamp: e.initial_attempt,
            sequence: e.sequence,
        }
    }

    /// Forgets pods that are no longer pending.
    pub(crate) fn retain(&mut self, pending: &BTreeSet<String>) {
        self.entries.retain(|k, _| pending.contains(k));
    }

    /// Whether the pod may be attempted this tick (see the module docs).
    pub fn should_attempt(&self, key: &str, now: Tick, generation: u64) -> bool {
        let Some(e) = self.entries.get(key) else {
            return true;
        };
        let Some(failed_at) = e.last_failure else {
            return true;
        };
        if now < e.backoff_until {
            return false;
        }
        e.error_failure
            || generation != e.generation_at_failure
            || now.saturating_sub(failed_at) >= POD_MAX_IN_UNSCHEDULABLE
    }

    /// Counts an attempt.
    pub(crate) fn record_attempt(&mut self, key: &str, now: Tick) {
        if let Some(e) = self.entries.get_mut(key) {
            e.attempts += 1;
            e.initial_attempt.get_or_insert(now);
        }
    }

    /// Records a failed attempt: backoff, generation and a refreshed queue timestamp.
    pub(crate) fn record_failure(&mut self, key: &str, now: Tick, generation: u64, error: bool) {
        if let Some(e) = self.entries.get_mut(key) {
            e.last_failure = Some(now);
            e.backoff_until = now + backoff_duration(e.attempts);
            e.generation_at_failure = generation;
            e.error_failure = error;
            e.timestamp = now;
        }
    }

    /// The last FailedScheduling message recorded for the pod.
    pub fn last_message(&self, key: &str) -> Option<&str> {
        self.entries
            .get(key)
            .and_then(|e| e.last_message.as_deref())
    }

    /// Remembers the last FailedScheduling message recorded.
    pub(crate) fn set_last_message(&mut self, key: &str, msg: String) {
        if let Some(e) = self.entries.get_mut(key) {
            e.last_message = Some(msg);
        }
    }

    /// Forgets a pod (bound).
    pub(crate) fn remove(&mut self, key: &str) {
        self.entries.remove(key);
    }

    /// The entry of a pod.
    pub fn entry(&self, key: &str) -> Option<&QueueEntry> {
        self.entries.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_ten() {
        let d: Vec<Tick> = (0..7).map(backoff_duration).collect();
        assert_eq!(d, vec![0, 1, 2, 4, 8, 10, 10]);
    }

    #[test]
    fn retry_needs_backoff_and_a_change() {
        let mut q = SchedulingQueue::default();
        let mut p = Pod::default();
        p.metadata.name = "a".into();
        p.metadata.namespace = Some("default".into());
        let p = Arc::new(p);
        q.observe(&p, 10, 5);
        assert!(q.should_attempt("default/a", 10, 0));
        q.record_attempt("default/a", 10);
        q.record_attempt("default/a", 10);
        q.record_failure("default/a", 10, 7, false);
        // Attempt 2 -> 2 ticks backoff.
        assert!(!q.should_attempt("default/a", 11, 8));
        assert!(!q.should_attempt("default/a", 12, 7));
        assert!(q.should_attempt("default/a", 12, 8));
        assert!(q.should_attempt("default/a", 10 + POD_MAX_IN_UNSCHEDULABLE, 7));
    }
}
