//! Creating and deleting a Job's pods (upstream `job_controller.go` `manageJob`, `deleteJobPods`,
//! `activePodsForRemoval`).

use super::*;

impl JobController {
    /// Upstream `manageJob`: deletes pods of a suspended Job or above the wanted number, or
    /// creates the missing ones after the back-off. Returns the active count and the requeue.
    pub(super) fn manage_job(
        &mut self,
        api: &mut dyn ApiClient,
        job: &Job,
        key: &str,
        ctx: &mut Ctx<'_>,
        now: Tick,
    ) -> Result<(i32, Action), (i32, Status)> {
        let mut active = ctx.active_pods.len() as i32;
        let parallelism = job.spec.parallelism.unwrap_or(1);
        let job_obj = job.clone().into_object();
        let completions = job.spec.completions.unwrap_or(0).max(0) as usize;
        let to_delete: Vec<&Pod> = if job.is_suspended() {
            active_pods_for_removal(job, &ctx.active_pods, ctx.active_pods.len(), now)
        } else {
            let want = match job.spec.completions {
                None if ctx.succeeded > 0 => active,
                None => parallelism,
                Some(c) => (c - ctx.succeeded).min(parallelism).max(0),
            };
            let rm_at_least = (active - want).max(0) as usize;
            let mut rm = active_pods_for_removal(job, &ctx.active_pods, rm_at_least, now);
            rm.truncate(MAX_POD_CREATE_DELETE_PER_SYNC);
            if rm.is_empty() {
                let terminating = if only_replace_failed_pods(job) {
                    ctx.terminating
                } else {
                    0
                };
                let diff = want - terminating - active;
                if diff <= 0 {
                    return Ok((active, Action::AwaitChange));
                }
                let per_index = job.spec.backoff_limit_per_index.is_some() && job.is_indexed();
                let remaining = if per_index {
                    0
                } else {
                    ctx.backoff.remaining(now)
                };
                if remaining > 0 {
                    // Upstream returns 0 active pods while it waits out the back-off.
                    return Ok((0, Action::requeue(remaining)));
                }
                let mut diff = (diff as usize).min(MAX_POD_CREATE_DELETE_PER_SYNC);
                let mut indexes: Vec<usize> = Vec::new();
                if job.is_indexed() {
                    // firstPendingIndexes
                    let mut busy: BTreeSet<usize> = ctx
                        .active_pods
                        .iter()
                        .filter_map(|p| completion_index(p))
                        .chain(ctx.succeeded_indexes.iter().copied())
                        .collect();
                    if only_replace_failed_pods(job) {
                        busy.extend(
                            ctx.pods
                                .iter()
                                .filter(|p| is_terminating(p))
                                .filter_map(|p| completion_index(p)),
                        );
                    }
                    if let Some(fi) = &ctx.failed_indexes {
                        busy.extend(fi.iter().copied());
                    }
                    indexes = (0..completions)
                        .filter(|i| !busy.contains(i))
                        .take(diff)
                        .collect();
                    if per_index {
                        // getPodCreationInfoForIndependentIndexes
                        let left: Vec<(usize, Tick)> = indexes
                            .iter()
                            .map(|i| (*i, remaining_per_index(ctx.delayed.get(i).copied(), now)))
                            .collect();
                        let ready: Vec<usize> = left
                            .iter()
                            .filter(|(_, r)| *r == 0)
                            .map(|(i, _)| *i)
                            .collect();
                        if ready.is_empty() {
                            if let Some(min) = left.iter().map(|(_, r)| *r).min() {
                                return Ok((0, Action::requeue(min)));
                            }
                        }
                        indexes = ready;
                    }
                    diff = indexes.len();
                }
                self.expectations.expect_creations(key, diff, now);
                active += diff as i32;
                let mut template = job.spec.template.clone();
                if let Some(pg) = &ctx.pod_group {
                    template.spec.scheduling_group = Some(k8s_types::core::PodSchedulingGroup {
                        pod_group_name: Some(pg.clone()),
                    });
                }
                if job.is_indexed() {
                    for c in template
                        .spec
                        .init_containers
                        .iter_mut()
                        .chain(template.spec.containers.iter_mut())
                    {
                        add_completion_index_env(&mut c.env);
                    }
                }
                if !template
                    .metadata
                    .finalizers
                    .iter()
                    .any(|f| f == JOB_TRACKING_FINALIZER)
                {
                    template
                        .metadata
                        .finalizers
                        .push(JOB_TRACKING_FINALIZER.to_string());
                }
                let controller_ref = new_controller_ref(&job.metadata, &Kind::Job);
                let base = pod_from_template(&template, &job.metadata, controller_ref);
                let mut indexes = indexes.into_iter();
                let mut remaining = diff;
                let mut batch = remaining.min(SLOW_START_INITIAL_BATCH_SIZE);
                let mut first_err = None;
                while remaining > 0 {
                    let mut batch_failed = false;
                    for _ in 0..batch {
                        let mut pod = base.clone();
                        if let Some(ix) = indexes.next() {
                            let s = ix.to_string();
                            pod.metadata
                                .annotations
                                .insert(JOB_COMPLETION_INDEX_ANNOTATION.into(), s.clone());
                            pod.metadata
                                .labels
                                .insert(JOB_COMPLETION_INDEX_ANNOTATION.into(), s);
                            pod.spec.hostname = Some(format!("{}-{ix}", job.metadata.name));
                            pod.metadata.generate_name =
                                Some(pod_generate_name_with_index(&job.metadata.name, ix).into());
                            if per_index {
                                // addIndexFailureCountAnnotation
                                let (failures, ignored) =
                                    new_index_failure_counts(job, ctx.delayed.get(&ix).copied());
                                pod.metadata.annotations.insert(
                                    JOB_INDEX_FAILURE_COUNT_ANNOTATION.into(),
                                    failures.to_string(),
                                );
                                if ignored > 0 {
                                    pod.metadata.annotations.insert(
                                        JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION.into(),
                                        ignored.to_string(),
                                    );
                                }
                            }
                        }
                        match api.create_shared(Object::Pod(Box::new(pod))) {
                            Ok(created) => {
                                self.events.record(
                                    api,
                                    &job_obj,
                                    event_types::NORMAL,
                                    SUCCESSFUL_CREATE_POD_REASON,
                                    format!("Created pod: {}", created.meta().name),
                                );
                            }
                            Err(e) => {
                                self.events.record(
                                    api,
                                    &job_obj,
                                    event_types::WARNING,
                                    FAILED_CREATE_POD_REASON,
                                    format!("Error creating: {}", e.message),
                                );
                                self.expectations.lower_creations(key, 1);
                                active -= 1;
                                batch_failed = true;
                                first_err.get_or_insert(e);
                            }
                        }
                    }
                    remaining -= batch;
                    if batch_failed && remaining > 0 {
                        // Slow-start failure: the skipped creates are not expected.
                        active -= remaining as i32;
                        self.expectations.lower_creations(key, remaining);
                        break;
                    }
                    batch = (2 * batch).min(remaining);
                }
                return match first_err {
                    Some(e) => Err((active, e)),
                    None => Ok((active, Action::AwaitChange)),
                };
            }
            rm
        };
        // deleteJobPods: the finalizer is removed first, so deleted pods are not counted.
        let keys = to_delete.iter().map(|p| p.key()).collect();
        self.expectations.expect_deletions(key, keys, now);
        let mut first_err = None;
        for p in to_delete {
            match self.delete_pod(api, &job_obj, p, true) {
                Ok(()) => {
                    active -= 1;
                    ctx.terminating += 1;
                    ctx.ready -= i32::from(p.is_ready());
                }
                Err(e) => {
                    self.expectations.deletion_observed(key, &p.key());
                    if !e.is_not_found() {
                        first_err.get_or_insert(e);
                    }
                }
            }
        }
        match first_err {
            Some(e) => Err((active, e)),
            None => Ok((active, Action::AwaitChange)),
        }
    }

    /// `podControl.DeletePod` (after removing the tracking finalizer when `remove_finalizer`),
    /// with upstream's `SuccessfulDelete` / `FailedDelete` events.
    pub(super) fn delete_pod(
        &mut self,
        api: &mut dyn ApiClient,
        job_obj: &Object,
        pod: &Pod,
        remove_finalizer: bool,
    ) -> Result<(), Status> {
        if remove_finalizer && has_tracking_finalizer(pod) {
            remove_tracking_finalizer(api, pod)?;
        }
        let name = pod.metadata.name.clone();
        match api.delete(
            &Kind::Pod,
            pod.metadata.namespace(),
            &name,
            DeleteOptions::default(),
        ) {
            Ok(_) => {
                self.events.record(
                    api,
                    job_obj,
                    event_types::NORMAL,
                    SUCCESSFUL_DELETE_POD_REASON,
                    format!("Deleted pod: {name}"),
                );
                Ok(())
            }
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => {
                self.events.record(
                    api,
                    job_obj,
                    event_types::WARNING,
                    FAILED_DELETE_POD_REASON,
                    format!("Error deleting: {}", e.message),
                );
                Err(e)
            }
        }
    }
}

/// Upstream `activePodsForRemoval`: for an Indexed Job, pods with no or an out-of-range index and
/// all but the most advanced pod of a repeated index first; then the ranked rest, until
/// `rm_at_least` are chosen.
pub(super) fn active_pods_for_removal<'a>(
    job: &Job,
    pods: &[&'a Pod],
    rm_at_least: usize,
    now: Tick,
) -> Vec<&'a Pod> {
    let mut rm: Vec<&'a Pod> = Vec::new();
    let mut left: Vec<&'a Pod> = Vec::new();
    if job.is_indexed() {
        let completions = job.spec.completions.unwrap_or(0).max(0) as usize;
        let mut by_index: BTreeMap<usize, Vec<&'a Pod>> = BTreeMap::new();
        for p in pods {
            match completion_index(p).filter(|i| *i < completions) {
                Some(i) => by_index.entry(i).or_default().push(p),
                None => rm.push(p),
            }
        }
        for (_, group) in by_index {
            let mut ranked: Vec<RankedPod<'a>> = group
                .into_iter()
                .map(|pod| RankedPod { pod, rank: 0 })
                .collect();
            sort_pods_for_deletion(&mut ranked, now);
            if let Some(keep) = ranked.pop() {
                rm.extend(ranked.iter().map(|r| r.pod));
                left.push(keep.pod);
            }
        }
    } else {
        left = pods.to_vec();
    }
    if rm.len() < rm_at_least {
        let mut ranked: Vec<RankedPod<'a>> = left
            .into_iter()
            .map(|pod| RankedPod { pod, rank: 0 })
            .collect();
        sort_pods_for_deletion(&mut ranked, now);
        let need = rm_at_least - rm.len();
        rm.extend(ranked.into_iter().take(need).map(|r| r.pod));
    }
    rm
}
