//! The TTL-after-finished controller, after upstream `pkg/controller/ttlafterfinished/
//! ttlafterfinished_controller.go` (`addJob`/`updateJob`, `processJob`, `processTTL`, `needsCleanup`,
//! `timeLeft`, `jobFinishTime`): a finished Job (a `Complete` or `Failed` condition True) with
//! `spec.ttlSecondsAfterFinished` is deleted once that many seconds have passed since the
//! condition's `lastTransitionTime`; until then it is requeued for the moment it expires.
//!
//! As upstream, the Job is re-read from the apiserver before it is deleted, and deleted with
//! `propagationPolicy: Foreground` (the garbage collector deletes its pods, then the Job goes).
//! Difference: upstream sends a uid precondition; k8s-mini checks the re-read uid itself. No
//! events, as upstream.

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions, PropagationPolicy};
use k8s_types::batch::{job_conditions, Job};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::condition_status;
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::meta::timestamp_tick;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Tick};

/// The controller name (upstream registers it as `ttl-after-finished-controller`).
pub const TTL_AFTER_FINISHED_CONTROLLER_NAME: &str = "ttl-after-finished-controller";

/// kube-controller-manager's TTL-after-finished controller (Jobs).
#[derive(Clone, Debug, Default)]
pub struct TtlAfterFinishedController;

impl TtlAfterFinishedController {
    /// A new controller.
    pub fn new() -> Self {
        TtlAfterFinishedController
    }
}

/// Upstream `needsCleanup`: a TTL is set and the Job is finished.
pub fn needs_cleanup(job: &Job) -> bool {
    job.spec.ttl_seconds_after_finished.is_some() && job.finished_type().is_some()
}

/// Upstream `jobFinishTime`: the `lastTransitionTime` of the True Complete/Failed condition.
pub fn job_finish_tick(job: &Job) -> Option<Tick> {
    job.status
        .conditions
        .iter()
        .find(|c| {
            (c.type_ == job_conditions::COMPLETE || c.type_ == job_conditions::FAILED)
                && c.status == condition_status::TRUE
        })
        .and_then(|c| c.last_transition_time.as_deref())
        .and_then(timestamp_tick)
}

/// Upstream `processTTL` / `timeLeft`: `None` when the Job needs no cleanup; `Some(0)` when it has
/// expired (`finishTime + ttl <= now`); else the seconds left.
pub fn time_left(job: &Job, now: Tick) -> Option<Tick> {
    if !needs_cleanup(job) {
        return None;
    }
    let finish = job_finish_tick(job)?;
    let ttl = job.spec.ttl_seconds_after_finished.unwrap_or(0).max(0) as Tick;
    let expire = finish.saturating_add(ttl);
    Some(expire.saturating_sub(now))
}

impl Controller for TtlAfterFinishedController {
    fn name(&self) -> &str {
        TTL_AFTER_FINISHED_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::Job]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        _informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        // addJob / updateJob: queue a Job that needs cleanup.
        let needs = change
            .new
            .as_deref()
            .and_then(|o| <Job as k8s_types::Resource>::from_object_ref(o))
            .is_some_and(needs_cleanup);
        if needs {
            queue.add(change.key.clone());
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let now = api.now();
        let Some(job) = informers.of(&Kind::Job).get_typed::<Job>(key) else {
            return Ok(Action::AwaitChange);
        };
        match time_left(job, now) {
            None => return Ok(Action::AwaitChange),
            Some(left) if left > 0 => return Ok(Action::requeue(left)),
            Some(_) => {}
        }
        // The cached Job has expired: check the live object before deleting it.
        let ns = job.metadata.namespace().to_string();
        let name = job.metadata.name.clone();
        let fresh: Job = match api.get_typed(&ns, &name) {
            Ok(j) => j,
            Err(e) if e.is_not_found() => return Ok(Action::AwaitChange),
            Err(e) => return Err(e.into()),
        };
        if fresh.metadata.uid != job.metadata.uid {
            return Ok(Action::AwaitChange);
        }
        match time_left(&fresh, now) {
            None => return Ok(Action::AwaitChange),
            Some(left) if left > 0 => return Ok(Action::requeue(left)),
            Some(_) => {}
        }
        // Upstream deletes with `PropagationPolicy: Foreground` (and a uid precondition, which the
        // fresh read above stands in for): the Job stays until its pods are gone.
        let opts = DeleteOptions {
            propagation_policy: Some(PropagationPolicy::Foreground),
            ..Default::default()
        };
        match api.delete(&Kind::Job, &ns, &name, opts) {
            Ok(_) => Ok(Action::AwaitChange),
            Err(e) if e.is_not_found() => Ok(Action::AwaitChange),
            Err(e) => Err(SyncError::Api(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::batch::JobCondition;
    use k8s_types::meta::tick_timestamp;

    fn finished(ttl: Option<i32>, type_: &str, at: Tick) -> Job {
        let mut j = Job::default();
        j.spec.ttl_seconds_after_finished = ttl;
        j.status.conditions.push(JobCondition {
            type_: type_.into(),
            status: "True".into(),
            last_transition_time: Some(tick_timestamp(at)),
            ..Default::default()
        });
        j
    }

    #[test]
    fn ttl_counts_from_the_finish_condition() {
        // Upstream TestTimeLeft: finished at 100 with ttl 30 expires at 130.
        let j = finished(Some(30), "Complete", 100);
        assert_eq!(time_left(&j, 100), Some(30));
        assert_eq!(time_left(&j, 129), Some(1));
        assert_eq!(time_left(&j, 130), Some(0));
        assert_eq!(time_left(&finished(Some(0), "Failed", 100), 100), Some(0));
        // No TTL, or not finished (FailureTarget alone): nothing to do.
        assert_eq!(time_left(&finished(None, "Complete", 100), 200), None);
        assert_eq!(
            time_left(&finished(Some(5), "FailureTarget", 100), 200),
            None
        );
    }
}
