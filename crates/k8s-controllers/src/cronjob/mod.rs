//! The CronJob controller, after upstream `pkg/controller/cronjob/cronjob_controllerv2.go`
//! (`sync`, `getJobsToBeReconciled`, `cleanupFinishedJobs`, `removeOldestJobs`, `deleteJob`,
//! `syncCronJob`, `formatSchedule`, the Job and CronJob event handlers) and `utils.go`
//! ([`utils`]).
//!
//! One sync of a CronJob: its Jobs (controller reference naming it, as upstream) are read from
//! the informer; finished Jobs beyond `successfulJobsHistoryLimit` / `failedJobsHistoryLimit`
//! are deleted oldest first (`SuccessfulDelete`); finished Jobs leave the active list
//! (`SawCompletedJob`) and set `lastSuccessfulTime`; an unfinished Job missing from the active
//! list is reported (`UnexpectedJob`), an active Job that no longer exists is dropped
//! (`MissingJob`). Then, unless the CronJob is being deleted, its time zone is unknown or it is
//! suspended, the most recent unmet scheduled time (within `startingDeadlineSeconds`) starts a
//! Job named `<cronjob>-<minutes since the epoch>`, as the concurrency policy allows (`Forbid`:
//! `JobAlreadyActive`; `Replace`: the active Jobs are deleted first), and `lastScheduleTime` is
//! set. The status is written once, then the key is requeued for the next scheduled time.
//!
//! Time: the virtual clock's tick N is N seconds after 1970-01-01T00:00:00Z, so `*/1 * * * *`
//! fires at ticks 60, 120, ... and names its Jobs `<cronjob>-1`, `<cronjob>-2`, ...; schedules are
//! read in `spec.timeZone` (IANA, `chrono-tz`), UTC when unset.
//!
//! Differences from upstream (docs/fidelity.md): the requeue is at the scheduled tick itself
//! (upstream adds 100 ms against clock skew), so a Job is created at the tick of its scheduled
//! time; a change of `schedule` or `timeZone` defers the next sync to the next scheduled time
//! under the new schedule (upstream `AddAfter`) by answering that sync with a requeue; no metrics.

mod sync;
#[cfg(test)]
mod tests;
pub mod utils;

use std::collections::BTreeSet;

use k8s_types::apiserver::ApiClient;
use k8s_types::batch::schedule::Schedule;
use k8s_types::batch::{CronJob, Job};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::events::EventRecorder;
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Resource};

/// The controller name, also the `source.component` of its Events (upstream `cronjob-controller`).
pub const CRONJOB_CONTROLLER_NAME: &str = "cronjob-controller";

/// kube-controller-manager's CronJob controller (v2).
#[derive(Clone, Debug)]
pub struct CronJobController {
    events: EventRecorder,
    /// CronJobs whose schedule or time zone changed since their last sync (upstream's
    /// `enqueueControllerAfter` in `updateCronJob`).
    schedule_changed: BTreeSet<String>,
}

impl Default for CronJobController {
    fn default() -> Self {
        Self::new()
    }
}

impl CronJobController {
    /// A controller with an empty recorder.
    pub fn new() -> Self {
        CronJobController {
            events: EventRecorder::for_component(CRONJOB_CONTROLLER_NAME),
            schedule_changed: BTreeSet::new(),
        }
    }

    /// Upstream `addJob` / `updateJob` / `deleteJob`: a Job's change queues the CronJob its
    /// controller reference resolves to (old and new owner when it changed).
    fn on_job_change(change: &Delta, informers: &SharedInformerFactory, queue: &mut WorkQueue) {
        for obj in [change.old.as_deref(), change.new.as_deref()]
            .into_iter()
            .flatten()
        {
            let Some(job) = Job::from_object_ref(obj) else {
                continue;
            };
            let Some(cref) = job.metadata.controller_ref() else {
                continue;
            };
            if let Some(key) =
                informers.resolve_controller_ref(&Kind::CronJob, job.metadata.namespace(), cref)
            {
                queue.add(key);
            }
        }
    }
}

impl Controller for CronJobController {
    fn name(&self) -> &str {
        CRONJOB_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::CronJob, Kind::Job]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        match change.kind {
            Kind::CronJob => {
                // updateCronJob: a new schedule or zone waits for its next scheduled time.
                let old = change.old.as_deref().and_then(CronJob::from_object_ref);
                let new = change.new.as_deref().and_then(CronJob::from_object_ref);
                if let (Some(o), Some(n)) = (old, new) {
                    if o.spec.schedule != n.spec.schedule || o.spec.time_zone != n.spec.time_zone {
                        self.schedule_changed.insert(change.key.clone());
                    }
                }
                queue.add(change.key.clone());
            }
            Kind::Job => Self::on_job_change(change, informers, queue),
            _ => {}
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(cj) = informers.of(&Kind::CronJob).get_typed::<CronJob>(key) else {
            self.schedule_changed.remove(key);
            return Ok(Action::AwaitChange);
        };
        if self.schedule_changed.remove(key) {
            // updateCronJob with a changed schedule: requeue at its next scheduled time; an
            // unparseable one records UnParseableCronJobSchedule and is not requeued.
            let now = api.now() as i64;
            return match Schedule::parse(&cj.spec.schedule, cj.spec.time_zone.as_deref()) {
                Ok(s) => Ok(Action::requeue(
                    utils::next_schedule_time_duration(cj, now, &s) as u64,
                )),
                Err(_) => {
                    let obj = k8s_types::Object::CronJob(Box::new(cj.clone()));
                    self.events.record(
                        api,
                        &obj,
                        k8s_types::core::event::event_types::WARNING,
                        "UnParseableCronJobSchedule",
                        format!("unparseable schedule for cronjob: {}", cj.spec.schedule),
                    );
                    Ok(Action::AwaitChange)
                }
            };
        }
        let cj = cj.clone();
        self.sync_cron_job_key(&cj, informers, api)
    }
}
