//! The kubelet's restart and image-pull back-off (upstream `k8s.io/client-go/util/flowcontrol/
//! backoff.go` `Backoff`, created in `pkg/kubelet/kubelet.go` as
//! `flowcontrol.NewBackOff(backOffPeriod, MaxContainerBackOff)` with `backOffPeriod` 10 s and
//! `MaxContainerBackOff` 300 s, and used by `kuberuntime_manager.go` `doBackOff` and the image
//! manager). Upstream adds no jitter to these two back-offs.
//!
//! Per key (one container of one pod): `next(key, event)` starts an entry at the initial period when
//! there is none or the entry expired (the event is more than twice the cap after the entry's last
//! update), else doubles it up to the cap; the entry's last update is the time of the call.
//! `in_backoff_since(key, event, now)` is true while `now - event` is shorter than the entry's
//! period (and the entry has not expired). So a container's first failure restarts at once, the
//! second waits 10 s, then 20 s, 40 s, ... 300 s; a container that ran more than 600 s since its
//! last restart starts again at once.

use std::collections::BTreeMap;

use k8s_types::Tick;

/// Upstream `backOffPeriod` (kubelet.go): the first back-off, seconds.
pub const BACKOFF_INITIAL_SECONDS: u64 = 10;
/// Upstream `MaxContainerBackOff` (kubelet.go): the cap, seconds.
pub const BACKOFF_MAX_SECONDS: u64 = 300;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    backoff: u64,
    last_update: Tick,
}

/// Back-off per key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    initial: u64,
    max: u64,
    entries: BTreeMap<String, Entry>,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new(BACKOFF_INITIAL_SECONDS, BACKOFF_MAX_SECONDS)
    }
}

impl Backoff {
    /// A back-off starting at `initial` seconds, doubling up to `max`.
    pub fn new(initial: u64, max: u64) -> Backoff {
        Backoff {
            initial,
            max,
            entries: BTreeMap::new(),
        }
    }

    /// Upstream `hasExpired`: the event is more than twice the cap after the last update.
    fn expired(&self, event: Tick, last_update: Tick) -> bool {
        event.saturating_sub(last_update) > self.max.saturating_mul(2)
    }

    /// Upstream `Backoff.Get`: the current period of `key` (0 when none).
    pub fn get(&self, key: &str) -> u64 {
        self.entries.get(key).map_or(0, |e| e.backoff)
    }

    /// Upstream `Backoff.Next` at `now` for an event at `event`.
    pub fn next(&mut self, key: &str, event: Tick, now: Tick) {
        let backoff = match self.entries.get(key) {
            Some(e) if !self.expired(event, e.last_update) => {
                e.backoff.saturating_mul(2).min(self.max)
            }
            _ => self.initial,
        };
        self.entries.insert(
            key.to_string(),
            Entry {
                backoff,
                last_update: now,
            },
        );
    }

    /// Upstream `Backoff.IsInBackOffSince`: true while `now - event` is below the period.
    pub fn in_backoff_since(&self, key: &str, event: Tick, now: Tick) -> bool {
        match self.entries.get(key) {
            Some(e) if !self.expired(event, e.last_update) => now.saturating_sub(event) < e.backoff,
            _ => false,
        }
    }

    /// The tick at which the back-off of `key` for an event at `event` ends.
    pub fn until(&self, key: &str, event: Tick) -> Tick {
        event.saturating_add(self.get(key))
    }

    /// Forgets every entry whose key starts with `prefix` (a pod that is gone).
    pub fn forget_prefix(&mut self, prefix: &str) {
        self.entries.retain(|k, _| !k.starts_with(prefix));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Restart times of a container that exits 1 right after every start (`doBackOff` on each
    /// exit): the first restart is immediate, then 10, 20, 40, 80, 160, 300, 300 s.
    #[test]
    fn crash_loop_delays_double_to_the_cap() {
        let mut b = Backoff::default();
        let mut now = 0;
        let mut delays = Vec::new();
        for _ in 0..8 {
            let exited = now;
            let delay = if b.in_backoff_since("c", exited, now) {
                b.until("c", exited) - exited
            } else {
                0
            };
            now = exited + delay;
            b.next("c", exited, now);
            delays.push(delay);
        }
        assert_eq!(delays, vec![0, 10, 20, 40, 80, 160, 300, 300]);
    }

    #[test]
    fn a_long_run_resets_the_backoff() {
        let mut b = Backoff::default();
        b.next("c", 0, 0);
        b.next("c", 5, 15); // backoff 20 s, last update 15
        assert_eq!(b.get("c"), 20);
        // An exit 600 s after the last update is not yet expired ...
        assert!(b.in_backoff_since("c", 615, 620));
        // ... 601 s after it is: no back-off, and the next period starts over at 10 s.
        assert!(!b.in_backoff_since("c", 616, 616));
        b.next("c", 616, 616);
        assert_eq!(b.get("c"), 10);
        b.forget_prefix("c");
        assert_eq!(b.get("c"), 0);
    }
}
