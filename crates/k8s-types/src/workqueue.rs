//! A controller's work queue of object keys, after client-go `util/workqueue`
//! (`TypedRateLimitingInterface`: `Add`, `AddAfter`, `AddRateLimited`, `Forget`) on the virtual
//! clock (ticks).
//!
//! A key is queued at most once (adding a queued key again does nothing); a key added for later
//! waits until its tick (an earlier `add_after` wins). [`WorkQueue::take_ready`] hands out every
//! key due now, **in key order** (upstream's queue is FIFO across concurrent workers, so the order
//! of distinct keys carries no meaning there; k8s-mini fixes it for determinism).
//!
//! Failures back off per key as upstream's default controller rate limiter
//! (`DefaultTypedControllerRateLimiter`: `ItemExponentialFailureRateLimiter(5ms, 1000s)`): the n-th
//! consecutive failure waits 5 ms * 2^(n-1), at most 1000 s, rounded up to whole ticks (so at least
//! one tick), until [`WorkQueue::forget`].

use std::collections::{BTreeMap, BTreeSet};

use crate::Tick;

/// Upstream base delay of the per-item exponential limiter, in milliseconds.
pub const RATE_LIMIT_BASE_MS: u64 = 5;
/// Upstream maximum delay of the per-item exponential limiter, in milliseconds (1000 s).
pub const RATE_LIMIT_MAX_MS: u64 = 1_000_000;

/// The queue.
#[derive(Clone, Debug, Default)]
pub struct WorkQueue {
    ready: BTreeSet<String>,
    /// Key -> tick it becomes ready.
    waiting: BTreeMap<String, Tick>,
    /// Key -> consecutive failures (the rate limiter's state).
    failures: BTreeMap<String, u32>,
}

impl WorkQueue {
    /// An empty queue.
    pub fn new() -> WorkQueue {
        WorkQueue::default()
    }

    /// Queues `key` now (`Add`).
    pub fn add(&mut self, key: impl Into<String>) {
        let key = key.into();
        self.waiting.remove(&key);
        self.ready.insert(key);
    }

    /// Queues `key` at tick `at` (`AddAfter`); a key already ready, or waiting for an earlier tick,
    /// keeps its turn.
    pub fn add_at(&mut self, key: impl Into<String>, at: Tick) {
        let key = key.into();
        if self.ready.contains(&key) {
            return;
        }
        let slot = self.waiting.entry(key).or_insert(at);
        *slot = (*slot).min(at);
    }

    /// Queues `key` after its rate-limited delay from `now` (`AddRateLimited`) and counts one more
    /// failure.
    pub fn add_rate_limited(&mut self, key: impl Into<String>, now: Tick) {
        let key = key.into();
        let n = self.failures.entry(key.clone()).or_insert(0);
        let delay = rate_limit_delay_ticks(*n);
        *n = n.saturating_add(1);
        self.add_at(key, now.saturating_add(delay));
    }

    /// Clears the failure count of `key` (`Forget`, after a successful sync).
    pub fn forget(&mut self, key: &str) {
        self.failures.remove(key);
    }

    /// Consecutive failures of `key` (`NumRequeues`).
    pub fn num_requeues(&self, key: &str) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }

    /// Removes and returns every key due at `now`, in key order.
    pub fn take_ready(&mut self, now: Tick) -> Vec<String> {
        let due: Vec<String> = self
            .waiting
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for k in due {
            self.waiting.remove(&k);
            self.ready.insert(k);
        }
        std::mem::take(&mut self.ready).into_iter().collect()
    }

    /// Number of keys ready or waiting.
    pub fn len(&self) -> usize {
        self.ready.len() + self.waiting.len()
    }

    /// True when no key is ready or waiting.
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty() && self.waiting.is_empty()
    }

    /// The earliest tick at which a waiting key becomes ready (`None` when nothing waits).
    pub fn next_due(&self) -> Option<Tick> {
        self.waiting.values().min().copied()
    }

    /// The earliest tick at which a waiting key other than `except` becomes ready.
    pub fn next_due_except(&self, except: &str) -> Option<Tick> {
        self.waiting
            .iter()
            .filter(|(k, _)| k.as_str() != except)
            .map(|(_, at)| *at)
            .min()
    }

    /// The tick at which `key` becomes ready, when it waits (`None` when it is ready or absent).
    pub fn due(&self, key: &str) -> Option<Tick> {
        self.waiting.get(key).copied()
    }

    /// Moves a waiting `key` to tick `at` (later or earlier); nothing when it does not wait. For a
    /// driver that skips ticks in which the key's sync is known to do nothing.
    pub fn reschedule(&mut self, key: &str, at: Tick) {
        if let Some(slot) = self.waiting.get_mut(key) {
            *slot = at;
        }
    }
}

/// Ticks the `failures`-th (0-based) rate-limited requeue waits: 5 ms * 2^failures capped at
/// 1000 s, rounded up to whole seconds.
pub fn rate_limit_delay_ticks(failures: u32) -> Tick {
    let ms = RATE_LIMIT_BASE_MS
        .checked_shl(failures)
        .filter(|ms| *ms <= RATE_LIMIT_MAX_MS)
        .unwrap_or(RATE_LIMIT_MAX_MS);
    ms.div_ceil(1000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_key_can_be_rescheduled_and_left_out_of_next_due() {
        let mut q = WorkQueue::new();
        q.add_at("monitor", 10);
        q.add_at("other", 30);
        q.add("ready");
        assert_eq!(q.due("monitor"), Some(10));
        assert_eq!(q.due("ready"), None);
        assert_eq!(q.next_due(), Some(10));
        assert_eq!(q.next_due_except("monitor"), Some(30));
        q.reschedule("monitor", 25);
        q.reschedule("absent", 1);
        assert_eq!(q.next_due(), Some(25));
        assert_eq!(q.due("absent"), None);
        assert_eq!(q.take_ready(24), vec!["ready"]);
        assert_eq!(q.take_ready(25), vec!["monitor"]);
    }

    #[test]
    fn keys_come_out_once_in_key_order() {
        let mut q = WorkQueue::new();
        q.add("default/b");
        q.add("default/a");
        q.add("default/b");
        assert_eq!(q.take_ready(0), vec!["default/a", "default/b"]);
        assert!(q.take_ready(0).is_empty());
    }

    #[test]
    fn add_at_waits_for_its_tick_and_the_earlier_wins() {
        let mut q = WorkQueue::new();
        q.add_at("k", 10);
        q.add_at("k", 7);
        assert!(q.take_ready(6).is_empty());
        assert_eq!(q.next_due(), Some(7));
        assert_eq!(q.take_ready(7), vec!["k"]);
        q.add("r");
        q.add_at("r", 3);
        assert_eq!(q.take_ready(0), vec!["r"]);
    }

    /// 5 ms * 2^n: 5, 10, 20, ..., 640 ms are under a second (1 tick); 1280 ms is 2 ticks;
    /// 5 ms * 2^17 = 655.36 s is 656 ticks; 2^18 exceeds 1000 s and is capped.
    #[test]
    fn rate_limited_delays_follow_upstreams_exponential_limiter() {
        assert_eq!(rate_limit_delay_ticks(0), 1);
        assert_eq!(rate_limit_delay_ticks(7), 1);
        assert_eq!(rate_limit_delay_ticks(8), 2);
        assert_eq!(rate_limit_delay_ticks(17), 656);
        assert_eq!(rate_limit_delay_ticks(18), 1000);
        assert_eq!(rate_limit_delay_ticks(200), 1000);
        let mut q = WorkQueue::new();
        q.add_rate_limited("k", 100);
        assert_eq!(q.num_requeues("k"), 1);
        assert_eq!(q.next_due(), Some(101));
        q.forget("k");
        assert_eq!(q.num_requeues("k"), 0);
    }
}
