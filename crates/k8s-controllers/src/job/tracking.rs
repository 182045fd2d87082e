//! Counting finished pods (upstream `job_controller.go` `trackJobStatusAndRemoveFinalizers`,
//! `flushUncountedAndRemoveFinalizers`, `recordJobFinished`).

use super::*;

impl JobController {
    /// Upstream `trackJobStatusAndRemoveFinalizers` + `flushUncountedAndRemoveFinalizers` +
    /// `enactJobFinished` + `recordJobFinished`.
    pub(super) fn track_status_and_remove_finalizers(
        &mut self,
        api: &mut dyn ApiClient,
        key: &str,
        mut job: Job,
        ctx: &mut Ctx<'_>,
        mut needs_flush: bool,
    ) -> Result<(), Status> {
        let indexed = job.is_indexed();
        let completions = job.spec.completions.unwrap_or(0).max(0) as usize;
        let mut pods = ctx.pods.clone();
        if indexed {
            pods.sort_by_key(|p| completion_index(p).unwrap_or(usize::MAX));
        }
        let mut with_finalizer: BTreeSet<String> = pods
            .iter()
            .filter(|p| has_tracking_finalizer(p))
            .filter_map(|p| p.metadata.uid.clone())
            .collect();
        if clean_uncounted(&mut job, &with_finalizer) {
            needs_flush = true;
        }
        let mut to_remove: Vec<&Pod> = Vec::new();
        let mut new_indexes: Vec<usize> = Vec::new();
        let finishing_failed = ctx
            .finished
            .as_ref()
            .is_some_and(|c| c.type_ != job_conditions::SUCCESS_CRITERIA_MET);
        let mut reached_max = false;
        for p in pods {
            if !has_tracking_finalizer(p) {
                continue;
            }
            let uid = p.metadata.uid.clone().unwrap_or_default();
            let failed = is_pod_failed(p, &job);
            // canRemoveFinalizer: a failed pod waiting for its index's replacement keeps it.
            let delayed = completion_index(p)
                .and_then(|ix| ctx.delayed.get(&ix))
                .is_some_and(|d| d.metadata.uid == p.metadata.uid);
            let can_remove = job.metadata.deletion_timestamp.is_some()
                || ctx.finished.is_some()
                || p.phase() == phases::SUCCEEDED
                || (failed && !delayed);
            if !can_remove {
                continue;
            }
            to_remove.push(p);
            let uncounted = job
                .status
                .uncounted_terminated_pods
                .get_or_insert_with(Default::default);
            if p.phase() == phases::SUCCEEDED && !ctx.uncounted_failed.contains(&uid) {
                if indexed {
                    if let Some(ix) = completion_index(p) {
                        if ix < completions && !ctx.prev_succeeded_indexes.contains(&ix) {
                            new_indexes.push(ix);
                            needs_flush = true;
                        }
                    }
                } else if !ctx.uncounted_succeeded.contains(&uid) {
                    needs_flush = true;
                    uncounted.succeeded.push(uid);
                }
            } else if failed || finishing_failed {
                let ix_ok = !indexed || completion_index(p).is_some_and(|i| i < completions);
                if !ctx.uncounted_failed.contains(&uid) && ix_ok {
                    let count = job
                        .spec
                        .pod_failure_policy
                        .as_ref()
                        .is_none_or(|policy| match_pod_failure_policy(policy, p).1);
                    if count {
                        needs_flush = true;
                        uncounted.failed.push(uid);
                    }
                }
            }
            if new_indexes.len() + uncounted.succeeded.len() + uncounted.failed.len()
                >= MAX_UNCOUNTED_PODS
            {
                reached_max = true;
                break;
            }
        }
        if indexed {
            ctx.succeeded_indexes.extend(new_indexes);
            let s = format_indexes(&ctx.succeeded_indexes);
            if s != job.status.completed_indexes {
                needs_flush = true;
            }
            job.status.succeeded = ctx.succeeded_indexes.len() as i32;
            job.status.completed_indexes = s;
            let failed_str = ctx.failed_indexes.as_ref().map(format_indexes);
            if job.status.failed_indexes != failed_str {
                job.status.failed_indexes = failed_str;
                needs_flush = true;
            }
        }
        if let Some(c) = ctx.finished.clone() {
            if c.type_ == job_conditions::FAILURE_TARGET {
                job.status.conditions.push(c.clone());
                needs_flush = true;
                ctx.finished = Some(new_condition(
                    job_conditions::FAILED,
                    condition_status::TRUE,
                    c.reason.as_deref().unwrap_or(""),
                    c.message.as_deref().unwrap_or(""),
                    api.now(),
                ));
            } else if c.type_ == job_conditions::SUCCESS_CRITERIA_MET {
                if job
                    .condition(job_conditions::SUCCESS_CRITERIA_MET)
                    .is_none()
                {
                    job.status.conditions.push(c.clone());
                    needs_flush = true;
                }
                ctx.finished = Some(new_condition(
                    job_conditions::COMPLETE,
                    condition_status::TRUE,
                    c.reason.as_deref().unwrap_or(""),
                    c.message.as_deref().unwrap_or(""),
                    api.now(),
                ));
            }
        }
        // flushUncountedAndRemoveFinalizers
        if needs_flush {
            job = api.update_status_typed(job)?;
            self.backoff.insert(key.to_string(), ctx.backoff);
            needs_flush = false;
        }
        let mut rm_err = None;
        for p in to_remove {
            match remove_tracking_finalizer(api, p) {
                Ok(()) => {
                    if let Some(uid) = &p.metadata.uid {
                        with_finalizer.remove(uid);
                    }
                }
                Err(e) => {
                    rm_err.get_or_insert(e);
                }
            }
        }
        if clean_uncounted(&mut job, &with_finalizer) {
            needs_flush = true;
        }
        if let Some(e) = rm_err {
            if needs_flush {
                api.update_status_typed(job)?;
            }
            return Err(e);
        }
        // enactJobFinished
        let mut finished = false;
        if let Some(c) = ctx.finished.clone().filter(|_| !reached_max) {
            let uncounted = job
                .status
                .uncounted_terminated_pods
                .as_ref()
                .map_or(0, |u| u.succeeded.len() + u.failed.len());
            if uncounted == 0 && ctx.terminating == 0 {
                let now = api.now();
                ensure_condition(
                    &mut job.status.conditions,
                    &c.type_,
                    &c.status,
                    c.reason.as_deref().unwrap_or(""),
                    c.message.as_deref().unwrap_or(""),
                    now,
                );
                if c.type_ == job_conditions::COMPLETE {
                    job.status.completion_time = Some(tick_timestamp(now));
                }
                finished = true;
                needs_flush = true;
            }
        }
        if needs_flush {
            let job = api.update_status_typed(job)?;
            if finished {
                self.record_job_finished(api, &job, ctx.finished.as_ref());
            }
        }
        Ok(())
    }

    /// Upstream `recordJobFinished`.
    pub(super) fn record_job_finished(
        &mut self,
        api: &mut dyn ApiClient,
        job: &Job,
        cond: Option<&JobCondition>,
    ) {
        let Some(cond) = cond else {
            return;
        };
        let obj = job.clone().into_object();
        if cond.type_ == job_conditions::COMPLETE {
            if job
                .spec
                .completions
                .is_some_and(|c| job.status.succeeded > c)
            {
                self.events.record(
                    api,
                    &obj,
                    event_types::WARNING,
                    "TooManySucceededPods",
                    "Too many succeeded pods running after completion count reached",
                );
            }
            self.events
                .record(api, &obj, event_types::NORMAL, "Completed", "Job completed");
        } else {
            self.events.record(
                api,
                &obj,
                event_types::WARNING,
                cond.reason.as_deref().unwrap_or(""),
                cond.message.clone().unwrap_or_default(),
            );
        }
    }
}

/// Upstream `cleanUncountedPodsWithoutFinalizers`: uids whose finalizer is gone move from
/// `uncountedTerminatedPods` to the counters.
pub(super) fn clean_uncounted(job: &mut Job, with_finalizer: &BTreeSet<String>) -> bool {
    let Some(u) = job.status.uncounted_terminated_pods.as_mut() else {
        return false;
    };
    let mut updated = false;
    let before = u.succeeded.len();
    u.succeeded.retain(|uid| with_finalizer.contains(uid));
    if u.succeeded.len() != before {
        updated = true;
        job.status.succeeded += (before - u.succeeded.len()) as i32;
    }
    let before = u.failed.len();
    u.failed.retain(|uid| with_finalizer.contains(uid));
    if u.failed.len() != before {
        updated = true;
        job.status.failed += (before - u.failed.len()) as i32;
    }
    updated
}

/// Removes the tracking finalizer from the pod as stored now (upstream: a
/// `$deleteFromPrimitiveList/finalizers` patch, which needs no resourceVersion). A pod already
/// gone counts as done.
pub(super) fn remove_tracking_finalizer(api: &mut dyn ApiClient, pod: &Pod) -> Result<(), Status> {
    let mut fresh: Pod = match api.get_typed(pod.metadata.namespace(), &pod.metadata.name) {
        Ok(p) => p,
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e),
    };
    if fresh.metadata.uid != pod.metadata.uid || !has_tracking_finalizer(&fresh) {
        return Ok(());
    }
    fresh
        .metadata
        .finalizers
        .retain(|f| f != JOB_TRACKING_FINALIZER);
    match api.update(Object::Pod(Box::new(fresh))) {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}
