//! Upstream `cronjob_controllerv2.go` `sync`, `cleanupFinishedJobs`, `removeOldestJobs`,
//! `deleteJob`, `syncCronJob` and `formatSchedule`.

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::batch::schedule::{format_rfc1123z_utc, load_location, Schedule};
use k8s_types::batch::{concurrency_policies, job_conditions, CronJob, Job};
use k8s_types::controller::{Action, SyncError};
use k8s_types::core::event::event_types::{NORMAL, WARNING};
use k8s_types::informer::SharedInformerFactory;
use k8s_types::meta::{tick_timestamp, timestamp_tick};
use k8s_types::{Kind, Object};

use super::utils::{
    by_job_start_time, delete_from_active_list, finished_status, in_active_list,
    in_active_list_by_name, job_from_template, job_name, job_ref, next_schedule_time,
    next_schedule_time_duration,
};
use super::CronJobController;
use crate::controller_utils::is_controlled_by;

/// What `syncCronJob` returns: seconds to the next sync, whether the status changed, an error.
struct Outcome {
    requeue: Option<i64>,
    update_status: bool,
    error: Option<SyncError>,
}

impl Outcome {
    fn new(requeue: Option<i64>, update_status: bool) -> Outcome {
        Outcome {
            requeue,
            update_status,
            error: None,
        }
    }

    fn err(update_status: bool, e: impl Into<SyncError>) -> Outcome {
        Outcome {
            requeue: None,
            update_status,
            error: Some(e.into()),
        }
    }
}

/// Go's `%q` of a plain string.
fn go_quote(s: &str) -> String {
    format!("{s:?}")
}

impl CronJobController {
    fn event(
        &mut self,
        api: &mut dyn ApiClient,
        cj: &CronJob,
        type_: &str,
        reason: &str,
        msg: String,
    ) {
        let obj = Object::CronJob(Box::new(cj.clone()));
        self.events.record(api, &obj, type_, reason, msg);
    }

    /// Upstream `sync`: the Jobs to reconcile, history cleanup, `syncCronJob`, one status write.
    pub(super) fn sync_cron_job_key(
        &mut self,
        cj: &CronJob,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        // getJobsToBeReconciled: every Job of the namespace whose controller reference names
        // the CronJob (upstream compares the name only).
        let jobs: Vec<Job> = informers
            .of(&Kind::Job)
            .list_namespace::<Job>(cj.metadata.namespace())
            .filter(|j| {
                j.metadata
                    .controller_ref()
                    .is_some_and(|r| r.name == cj.metadata.name)
            })
            .cloned()
            .collect();
        let mut copy = cj.clone();
        let cleaned = self.cleanup_finished_jobs(api, &mut copy, &jobs);
        let out = self.sync_cron_job(api, &mut copy, &jobs);
        if cleaned || out.update_status {
            api.update_status(Object::CronJob(Box::new(copy)))?;
        }
        if let Some(after) = out.requeue {
            return Ok(Action::requeue(after.max(1) as u64));
        }
        match out.error {
            Some(e) => Err(e),
            None => Ok(Action::AwaitChange),
        }
    }

    /// Upstream `cleanupFinishedJobs`: finished Jobs beyond each history limit are deleted,
    /// oldest start first.
    fn cleanup_finished_jobs(
        &mut self,
        api: &mut dyn ApiClient,
        cj: &mut CronJob,
        jobs: &[Job],
    ) -> bool {
        let (ok_limit, failed_limit) = (
            cj.spec.successful_jobs_history_limit,
            cj.spec.failed_jobs_history_limit,
        );
        if ok_limit.is_none() && failed_limit.is_none() {
            return false;
        }
        let mut succeeded = Vec::new();
        let mut failed = Vec::new();
        for j in jobs {
            match finished_status(j) {
                Some(job_conditions::COMPLETE) => succeeded.push(j),
                Some(job_conditions::FAILED) => failed.push(j),
                _ => {}
            }
        }
        let mut update = false;
        if let Some(limit) = ok_limit {
            update |= self.remove_oldest_jobs(api, cj, succeeded, limit);
        }
        if let Some(limit) = failed_limit {
            update |= self.remove_oldest_jobs(api, cj, failed, limit);
        }
        update
    }

    /// Upstream `removeOldestJobs`.
    fn remove_oldest_jobs(
        &mut self,
        api: &mut dyn ApiClient,
        cj: &mut CronJob,
        mut jobs: Vec<&Job>,
        max: i32,
    ) -> bool {
        let to_delete = jobs.len() as i64 - i64::from(max);
        if to_delete <= 0 {
            return false;
        }
        jobs.sort_by(|a, b| by_job_start_time(a, b));
        let mut update = false;
        for job in jobs.into_iter().take(to_delete as usize) {
            update |= self.delete_job(api, cj, job);
        }
        update
    }

    /// Upstream `deleteJob`: deletes the Job (background propagation: the garbage collector
    /// removes its pods) and its active-list entry.
    fn delete_job(&mut self, api: &mut dyn ApiClient, cj: &mut CronJob, job: &Job) -> bool {
        let ns = job.metadata.namespace().to_string();
        if let Err(e) = api.delete(
            &Kind::Job,
            &ns,
            &job.metadata.name,
            DeleteOptions::default(),
        ) {
            self.event(
                api,
                cj,
                WARNING,
                "FailedDelete",
                format!("Deleted job: {}", e.message),
            );
            return false;
        }
        delete_from_active_list(cj, job.metadata.uid.as_deref().unwrap_or_default());
        let msg = format!("Deleted job {}", job.metadata.name);
        self.event(api, cj, NORMAL, "SuccessfulDelete", msg);
        true
    }

    /// Upstream `syncCronJob`.
    fn sync_cron_job(
        &mut self,
        api: &mut dyn ApiClient,
        cj: &mut CronJob,
        jobs: &[Job],
    ) -> Outcome {
        let now = api.now() as i64;
        let mut update = false;
        for j in jobs {
            let uid = j.metadata.uid.clone().unwrap_or_default();
            let found = in_active_list(cj, &uid);
            let finished = finished_status(j);
            if !found && finished.is_none() {
                let fresh: CronJob = match api.get_typed(cj.metadata.namespace(), &cj.metadata.name)
                {
                    Ok(c) => c,
                    Err(e) => return Outcome::err(update, e),
                };
                if in_active_list(&fresh, &uid) {
                    *cj = fresh;
                    continue;
                }
                let msg = format!(
                    "Saw a job that the controller did not create or forgot: {}",
                    j.metadata.name
                );
                self.event(api, cj, WARNING, "UnexpectedJob", msg);
            } else if let Some(condition) = finished {
                if found {
                    delete_from_active_list(cj, &uid);
                    let msg = format!(
                        "Saw completed job: {}, condition: {condition}",
                        j.metadata.name
                    );
                    self.event(api, cj, NORMAL, "SawCompletedJob", msg);
                    update = true;
                }
                if condition == job_conditions::COMPLETE {
                    let completion = j.status.completion_time.as_deref().and_then(timestamp_tick);
                    let last = cj
                        .status
                        .last_successful_time
                        .as_deref()
                        .and_then(timestamp_tick);
                    let later = match (completion, last) {
                        (_, None) => true,
                        (Some(c), Some(l)) => c > l,
                        (None, Some(_)) => false,
                    };
                    if later {
                        cj.status
                            .last_successful_time
                            .clone_from(&j.status.completion_time);
                        update = true;
                    }
                }
            }
        }

        // Active Jobs that no longer exist (asked of the apiserver, not the informer).
        let active = cj.status.active.clone();
        for r in &active {
            if jobs
                .iter()
                .any(|j| j.metadata.uid.as_deref() == Some(r.uid.as_str()))
            {
                continue;
            }
            match api.get(&Kind::Job, &r.namespace, &r.name) {
                Err(e) if e.is_not_found() => {
                    let msg = format!("Active job went missing: {}", r.name);
                    self.event(api, cj, NORMAL, "MissingJob", msg);
                    delete_from_active_list(cj, &r.uid);
                    update = true;
                }
                Err(e) => return Outcome::err(update, e),
                Ok(_) => {}
            }
        }

        if cj.metadata.deletion_timestamp.is_some() {
            return Outcome::new(None, update);
        }
        if let Some(tz) = cj.spec.time_zone.clone() {
            if let Err(e) = load_location(Some(&tz)) {
                let msg = format!("invalid timeZone: {}: {e}", go_quote(&tz));
                self.event(api, cj, WARNING, "UnknownTimeZone", msg);
                return Outcome::new(None, update);
            }
        }
        if cj.is_suspended() {
            return Outcome::new(None, update);
        }

        // formatSchedule: a TZ / CRON_TZ prefix wins over timeZone, with a warning.
        if cj.spec.schedule.contains("TZ") {
            let msg = format!(
                "CRON_TZ or TZ used in schedule {} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
                go_quote(&cj.spec.schedule)
            );
            self.event(api, cj, WARNING, "UnsupportedSchedule", msg);
        }
        let sched = match Schedule::parse(&cj.spec.schedule, cj.spec.time_zone.as_deref()) {
            Ok(s) => s,
            Err(e) => {
                let msg = format!(
                    "unparseable schedule: {} : {e}",
                    go_quote(&cj.spec.schedule)
                );
                self.event(api, cj, WARNING, "UnparseableSchedule", msg);
                return Outcome::new(None, update);
            }
        };
        let (scheduled, too_many, error) = next_schedule_time(cj, now, &sched);
        if too_many {
            let msg = "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew".to_string();
            self.event(api, cj, WARNING, "TooManyMissedTimes", msg);
        }
        if let Some(e) = error {
            let msg = format!("invalid schedule: {} : {e}", cj.spec.schedule);
            self.event(api, cj, WARNING, "InvalidSchedule", msg);
            return Outcome::new(None, update);
        }
        let next = |cj: &CronJob| Some(next_schedule_time_duration(cj, now, &sched));
        let Some(scheduled) = scheduled else {
            return Outcome::new(next(cj), update);
        };
        if let Some(sds) = cj.spec.starting_deadline_seconds {
            if scheduled.saturating_add(sds) < now {
                let msg = format!(
                    "Missed scheduled time to start a job: {}",
                    format_rfc1123z_utc(scheduled)
                );
                self.event(api, cj, WARNING, "MissSchedule", msg);
                return Outcome::new(next(cj), update);
            }
        }
        let name = job_name(cj, scheduled);
        let scheduled_ts = tick_timestamp(scheduled.max(0) as u64);
        if in_active_list_by_name(cj, cj.metadata.namespace(), &name)
            || cj.status.last_schedule_time.as_deref() == Some(scheduled_ts.as_str())
        {
            return Outcome::new(next(cj), update);
        }
        if cj.spec.concurrency_policy == concurrency_policies::FORBID
            && !cj.status.active.is_empty()
        {
            let msg = "Not starting job because prior execution is running and concurrency policy is Forbid".to_string();
            self.event(api, cj, NORMAL, "JobAlreadyActive", msg);
            return Outcome::new(next(cj), update);
        }
        if cj.spec.concurrency_policy == concurrency_policies::REPLACE {
            for r in cj.status.active.clone() {
                let job: Job = match api.get_typed(&r.namespace, &r.name) {
                    Ok(j) => j,
                    Err(e) => {
                        self.event(
                            api,
                            cj,
                            WARNING,
                            "FailedGet",
                            format!("Get job: {}", e.message),
                        );
                        return Outcome::err(update, e);
                    }
                };
                if !self.delete_job(api, cj, &job) {
                    let msg = format!("could not replace job {}/{}", r.namespace, r.name);
                    return Outcome::err(update, SyncError::Invalid(msg));
                }
                update = true;
            }
        }

        let request = match job_from_template(cj, scheduled) {
            Ok(j) => j,
            Err(e) => return Outcome::err(update, SyncError::Invalid(e)),
        };
        let created = match api.create_typed(request.clone()) {
            Ok(j) => {
                let msg = format!("Created job {}", j.metadata.name);
                self.event(api, cj, NORMAL, "SuccessfulCreate", msg);
                j
            }
            Err(e) if e.is_already_exists() => {
                // Created by someone else, or by us before a lost status write.
                let existing: Job = match api.get_typed(request.metadata.namespace(), &name) {
                    Ok(j) => j,
                    Err(e) => return Outcome::err(update, e),
                };
                if !is_controlled_by(&existing.metadata, &cj.metadata)
                    || in_active_list(cj, existing.metadata.uid.as_deref().unwrap_or_default())
                {
                    return Outcome::new(None, update);
                }
                existing
            }
            Err(e) => {
                self.event(
                    api,
                    cj,
                    WARNING,
                    "FailedCreate",
                    format!("Error creating job: {}", e.message),
                );
                return Outcome::err(update, e);
            }
        };
        cj.status.active.push(job_ref(&created));
        cj.status.last_schedule_time = Some(scheduled_ts);
        Outcome::new(next(cj), true)
    }
}
