//! The pod-failure back-off (upstream `pkg/controller/job/backoff_utils.go`: `backoffRecord`,
//! `newBackoffRecord`, `getRemainingTime`, `getRemainingTimePerIndex`).

use super::*;

/// Upstream `backoffRecord`: failures since the last success and when the last one happened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackoffRecord {
    /// Upstream `failuresAfterLastSuccess`.
    pub failures_after_last_success: i32,
    /// Upstream `lastFailureTime` (tick).
    pub last_failure_time: Option<Tick>,
}

impl BackoffRecord {
    /// Upstream `newBackoffRecord`: the stored record updated with the newly finished pods
    /// (finish times in ticks, any order).
    pub fn updated(self, succeeded: &[Tick], failed: &[Tick]) -> BackoffRecord {
        let mut failed = failed.to_vec();
        failed.sort_unstable();
        let last_success = succeeded.iter().max().copied();
        match last_success {
            None => {
                let Some(last) = failed.last() else {
                    return self;
                };
                BackoffRecord {
                    failures_after_last_success: self.failures_after_last_success
                        + failed.len() as i32,
                    last_failure_time: Some(*last),
                }
            }
            Some(success) => {
                let mut out = BackoffRecord::default();
                for t in failed.iter().rev() {
                    if *t <= success {
                        break;
                    }
                    if out.last_failure_time.is_none() {
                        out.last_failure_time = Some(*t);
                    }
                    out.failures_after_last_success += 1;
                }
                out
            }
        }
    }

    /// Upstream `getRemainingTimeForFailuresCount`: 10 s doubled per further failure (at most
    /// 6 min), minus the time since the last failure; 0 when it has passed.
    pub fn remaining(&self, now: Tick) -> Tick {
        let Some(last) = self.last_failure_time else {
            return 0;
        };
        if self.failures_after_last_success <= 0 {
            return 0;
        }
        let mut backoff = DEFAULT_JOB_POD_FAILURE_BACKOFF;
        for _ in 1..self.failures_after_last_success {
            backoff *= 2;
            if backoff >= MAX_JOB_POD_FAILURE_BACKOFF {
                backoff = MAX_JOB_POD_FAILURE_BACKOFF;
                break;
            }
        }
        let elapsed = now.saturating_sub(last);
        backoff.saturating_sub(elapsed)
    }
}

/// Upstream `getRemainingTimePerIndex`: the pod-failure back-off of one index, from its last failed
/// pod (absolute failure count + 1 failures, since that pod finished).
pub(super) fn remaining_per_index(last_failed: Option<&Pod>, now: Tick) -> Tick {
    let Some(p) = last_failed else {
        return 0;
    };
    BackoffRecord {
        failures_after_last_success: index_absolute_failure_count(p) + 1,
        last_failure_time: Some(finished_tick(p)),
    }
    .remaining(now)
}
