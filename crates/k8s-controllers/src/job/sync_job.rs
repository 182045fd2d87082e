//! One sync of a Job (upstream `job_controller.go` `syncJob`).

use super::*;

/// What one sync knows (upstream `syncJobCtx`).
pub(super) struct Ctx<'a> {
    pub(super) pods: Vec<&'a Pod>,
    pub(super) active_pods: Vec<&'a Pod>,
    pub(super) succeeded: i32,
    pub(super) ready: i32,
    pub(super) terminating: i32,
    pub(super) uncounted_succeeded: BTreeSet<String>,
    pub(super) uncounted_failed: BTreeSet<String>,
    pub(super) prev_succeeded_indexes: BTreeSet<usize>,
    pub(super) succeeded_indexes: BTreeSet<usize>,
    /// backoffLimitPerIndex: the failed indexes (upstream `jobCtx.failedIndexes`).
    pub(super) failed_indexes: Option<BTreeSet<usize>>,
    /// backoffLimitPerIndex: per index, the failed pod whose finalizer stays until its replacement
    /// exists (upstream `podsWithDelayedDeletionPerIndex`).
    pub(super) delayed: BTreeMap<usize, &'a Pod>,
    pub(super) finished: Option<JobCondition>,
    pub(super) backoff: BackoffRecord,
    /// The native PodGroup new pods join (`EnableWorkloadWithJob`, see `workload.rs`).
    pub(super) pod_group: Option<String>,
}

impl JobController {
    /// One sync of one Job (upstream `syncJob`).
    ///
    /// # Errors
    /// An apiserver error from a status update; create/delete failures are reported as events
    /// and returned after the status is written.
    pub fn sync_job(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        shared: &Job,
    ) -> Result<Action, Status> {
        let now = api.now();
        let ns = shared.metadata.namespace().to_string();
        let key = format!("{ns}/{}", shared.metadata.name);
        if shared.finished_type().is_some() {
            self.backoff.remove(&key);
            return Ok(Action::AwaitChange);
        }
        let mut job = shared.clone();
        let uncounted = job
            .status
            .uncounted_terminated_pods
            .get_or_insert_with(Box::<UncountedTerminatedPods>::default)
            .clone();
        let satisfied = self.expectations.satisfied(&key, now);
        let uid = job.metadata.uid.clone().unwrap_or_default();
        let pods: Vec<&Pod> = informers
            .of(&Kind::Pod)
            .controlled_by(&uid)
            .into_iter()
            .filter(|o| o.meta().namespace() == ns)
            .filter_map(|o| Pod::from_object_ref(o))
            .collect();
        let active_pods: Vec<&Pod> = pods.iter().copied().filter(|p| is_pod_active(p)).collect();
        let completions = job.spec.completions.unwrap_or(0).max(0) as usize;
        let indexed = job.is_indexed();
        let uncounted_succeeded: BTreeSet<String> = uncounted.succeeded.iter().cloned().collect();
        let uncounted_failed: BTreeSet<String> = uncounted.failed.iter().cloned().collect();
        // getNewFinishedPods / getValidPodsWithFilter.
        let valid = |p: &&Pod, set: &BTreeSet<String>| {
            has_tracking_finalizer(p)
                && !set.contains(p.metadata.uid.as_deref().unwrap_or(""))
                && (!indexed || completion_index(p).is_some_and(|i| i < completions))
        };
        let new_succeeded: Vec<&Pod> = pods
            .iter()
            .filter(|p| valid(p, &uncounted_succeeded) && p.phase() == phases::SUCCEEDED)
            .copied()
            .collect();
        let new_failed: Vec<&Pod> = pods
            .iter()
            .filter(|p| valid(p, &uncounted_failed) && is_pod_failed(p, &job))
            .copied()
            .collect();
        let non_ignored_failed = match &job.spec.pod_failure_policy {
            Some(policy) => new_failed
                .iter()
                .filter(|p| match_pod_failure_policy(policy, p).1)
                .count(),
            None => new_failed.len(),
        };
        let mut succeeded =
            job.status.succeeded + new_succeeded.len() as i32 + uncounted_succeeded.len() as i32;
        let failed = job.status.failed + non_ignored_failed as i32 + uncounted_failed.len() as i32;
        if job.status.start_time.is_none() && !job.is_suspended() {
            job.status.start_time = Some(tick_timestamp(now));
        }
        let backoff = self.backoff.get(&key).copied().unwrap_or_default().updated(
            &new_succeeded
                .iter()
                .map(|p| finished_tick(p))
                .collect::<Vec<_>>(),
            &new_failed
                .iter()
                .map(|p| finished_tick(p))
                .collect::<Vec<_>>(),
        );
        let mut action = Action::AwaitChange;

        let backoff_limit = job.spec.backoff_limit.unwrap_or(6);
        let mut finished: Option<JobCondition> = job
            .condition(job_conditions::SUCCESS_CRITERIA_MET)
            .filter(|c| c.status == condition_status::TRUE)
            .cloned();
        if finished.is_none() {
            if let Some(ft) = job
                .condition(job_conditions::FAILURE_TARGET)
                .filter(|c| c.status == condition_status::TRUE)
            {
                finished = Some(new_condition(
                    job_conditions::FAILED,
                    condition_status::TRUE,
                    ft.reason.as_deref().unwrap_or(""),
                    ft.message.as_deref().unwrap_or(""),
                    now,
                ));
            } else if let Some(policy) = &job.spec.pod_failure_policy {
                // getFailJobMessage
                if let Some(msg) = pods
                    .iter()
                    .filter(|p| is_pod_failed(p, &job))
                    .find_map(|p| match_pod_failure_policy(policy, p).0)
                {
                    finished = Some(new_condition(
                        job_conditions::FAILURE_TARGET,
                        condition_status::TRUE,
                        job_reasons::POD_FAILURE_POLICY,
                        &msg,
                        now,
                    ));
                }
            }
        }
        if finished.is_none() {
            let start = job.status.start_time.as_deref().and_then(timestamp_tick);
            if failed > backoff_limit || past_backoff_limit_on_failure(&job, &pods) {
                finished = Some(new_condition(
                    job_conditions::FAILURE_TARGET,
                    condition_status::TRUE,
                    job_reasons::BACKOFF_LIMIT_EXCEEDED,
                    "Job has reached the specified backoff limit",
                    now,
                ));
            } else if let (Some(ads), Some(start), false) =
                (job.spec.active_deadline_seconds, start, job.is_suspended())
            {
                let deadline = start.saturating_add(ads.max(0) as Tick);
                if now >= deadline {
                    finished = Some(new_condition(
                        job_conditions::FAILURE_TARGET,
                        condition_status::TRUE,
                        job_reasons::DEADLINE_EXCEEDED,
                        "Job was active longer than specified deadline",
                        now,
                    ));
                } else {
                    action = action.sooner(Action::requeue(deadline - now));
                }
            }
        }
        let mut prev_succeeded_indexes = BTreeSet::new();
        let mut succeeded_indexes = BTreeSet::new();
        if indexed {
            // calculateSucceededIndexes
            prev_succeeded_indexes = parse_indexes(&job.status.completed_indexes, completions);
            succeeded_indexes = prev_succeeded_indexes.clone();
            succeeded_indexes.extend(
                pods.iter()
                    .filter(|p| has_tracking_finalizer(p) && p.phase() == phases::SUCCEEDED)
                    .filter_map(|p| completion_index(p))
                    .filter(|i| *i < completions),
            );
            succeeded = succeeded_indexes.len() as i32;
        }
        let per_index = indexed && job.spec.backoff_limit_per_index.is_some();
        let mut failed_indexes = None;
        let mut delayed: BTreeMap<usize, &Pod> = BTreeMap::new();
        if per_index {
            // calculateFailedIndexes
            let mut fi = parse_indexes(
                job.status.failed_indexes.as_deref().unwrap_or(""),
                completions,
            );
            fi.extend(
                pods.iter()
                    .filter(|p| has_tracking_finalizer(p) && is_index_failed(&job, p))
                    .filter_map(|p| completion_index(p))
                    .filter(|i| *i < completions),
            );
            if finished.is_none() {
                if job
                    .spec
                    .max_failed_indexes
                    .is_some_and(|m| fi.len() as i64 > i64::from(m))
                {
                    finished = Some(new_condition(
                        job_conditions::FAILURE_TARGET,
                        condition_status::TRUE,
                        job_reasons::MAX_FAILED_INDEXES_EXCEEDED,
                        "Job has exceeded the specified maximal number of failed indexes",
                        now,
                    ));
                } else if !fi.is_empty() && fi.len() + succeeded_indexes.len() >= completions {
                    finished = Some(new_condition(
                        job_conditions::FAILURE_TARGET,
                        condition_status::TRUE,
                        job_reasons::FAILED_INDEXES,
                        "Job has failed indexes",
                        now,
                    ));
                }
            }
            // getPodsWithDelayedDeletionPerIndex
            let active_indexes: BTreeSet<usize> = active_pods
                .iter()
                .filter_map(|p| completion_index(p))
                .collect();
            for p in pods.iter().copied() {
                if !has_tracking_finalizer(p) || !is_pod_failed(p, &job) {
                    continue;
                }
                let Some(ix) = completion_index(p).filter(|i| *i < completions) else {
                    continue;
                };
                if succeeded_indexes.contains(&ix)
                    || fi.contains(&ix)
                    || active_indexes.contains(&ix)
                {
                    continue;
                }
                let replace = delayed.get(&ix).is_none_or(|last| {
                    index_absolute_failure_count(last) <= index_absolute_failure_count(p)
                        && finished_tick(p) >= finished_tick(last)
                });
                if replace {
                    delayed.insert(ix, p);
                }
            }
            failed_indexes = Some(fi);
        }
        if indexed && finished.is_none() {
            if let Some(msg) = match_success_policy(
                job.spec.success_policy.as_deref(),
                completions,
                &succeeded_indexes,
            ) {
                finished = Some(new_condition(
                    job_conditions::SUCCESS_CRITERIA_MET,
                    condition_status::TRUE,
                    job_reasons::SUCCESS_POLICY,
                    &msg,
                    now,
                ));
            }
        }
        let mut ctx = Ctx {
            failed_indexes,
            delayed,
            ready: active_pods.iter().filter(|p| p.is_ready()).count() as i32,
            terminating: pods.iter().filter(|p| is_terminating(p)).count() as i32,
            pods,
            active_pods,
            succeeded,
            uncounted_succeeded,
            uncounted_failed,
            prev_succeeded_indexes,
            succeeded_indexes,
            finished,
            backoff,
            pod_group: None,
        };
        let mut active = ctx.active_pods.len() as i32;
        let mut suspend_changed = false;
        let mut first_err = None;
        let job_obj = job.clone().into_object();
        if ctx.finished.is_some() {
            // deleteActivePods: DELETE, keeping the finalizers.
            let (mut deleted, mut deleted_ready) = (0, 0);
            for p in ctx.active_pods.clone() {
                match self.delete_pod(api, &job_obj, p, false) {
                    Ok(()) => {
                        deleted += 1;
                        deleted_ready += i32::from(p.is_ready());
                    }
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
            if deleted != active || !satisfied {
                ctx.finished = None;
            }
            active -= deleted;
            ctx.terminating += deleted;
            ctx.ready -= deleted_ready;
        } else {
            let mut manage_called = false;
            if satisfied && job.metadata.deletion_timestamp.is_none() {
                match self.ensure_workload_and_pod_group(api, informers, shared, &ctx.pods) {
                    Ok(pg) => ctx.pod_group = pg,
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
                match self.manage_job(api, &job, &key, &mut ctx, now) {
                    Ok((a, act)) => {
                        active = a;
                        action = action.sooner(act);
                    }
                    Err((a, e)) => {
                        active = a;
                        first_err = Some(e);
                    }
                }
                manage_called = true;
            }
            let complete = match job.spec.completions {
                None => ctx.succeeded > 0 && active == 0,
                Some(c) => ctx.succeeded >= c && active == 0,
            };
            if complete {
                // newSuccessCondition (v1.31: no reason or message).
                ctx.finished = Some(new_condition(
                    job_conditions::SUCCESS_CRITERIA_MET,
                    condition_status::TRUE,
                    "",
                    "",
                    now,
                ));
            } else if manage_called {
                if job.is_suspended() {
                    if ensure_condition(
                        &mut job.status.conditions,
                        job_conditions::SUSPENDED,
                        condition_status::TRUE,
                        "JobSuspended",
                        "Job suspended",
                        now,
                    ) {
                        suspend_changed = true;
                        self.events.record(
                            api,
                            &job_obj,
                            event_types::NORMAL,
                            "Suspended",
                            "Job suspended",
                        );
                    }
                } else if ensure_condition(
                    &mut job.status.conditions,
                    job_conditions::SUSPENDED,
                    condition_status::FALSE,
                    "JobResumed",
                    "Job resumed",
                    now,
                ) {
                    suspend_changed = true;
                    self.events.record(
                        api,
                        &job_obj,
                        event_types::NORMAL,
                        "Resumed",
                        "Job resumed",
                    );
                    job.status.start_time = Some(tick_timestamp(now));
                }
            }
        }
        let needs_update = suspend_changed
            || active != job.status.active
            || job.status.ready != Some(ctx.ready)
            || job.status.terminating != Some(ctx.terminating)
            || job.status.start_time != shared.status.start_time
            || shared.status.uncounted_terminated_pods.is_none();
        job.status.active = active;
        job.status.ready = Some(ctx.ready);
        job.status.terminating = Some(ctx.terminating);
        self.track_status_and_remove_finalizers(api, &key, job, &mut ctx, needs_update)?;
        if let Some(e) = first_err {
            return Err(e);
        }
        Ok(action)
    }
}
