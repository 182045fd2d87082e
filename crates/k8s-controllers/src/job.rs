//! The Job controller, after upstream `pkg/controller/job/job_controller.go` (`syncJob`,
//! `manageJob`, `trackJobStatusAndRemoveFinalizers`, `flushUncountedAndRemoveFinalizers`,
//! `enactJobFinished`, `recordJobFinished`, `deleteActivePods`, `deleteJobPods`,
//! `activePodsForRemoval`, `ensureJobConditionStatus`, `pastBackoffLimitOnFailure`,
//! `pastActiveDeadline`, `isPodFailed`), `indexed_job_utils.go` (completion indexes,
//! `firstPendingIndexes`, `calculateSucceededIndexes`, `podGenerateNameWithIndex`,
//! `addCompletionIndexEnvVariables`), `backoff_utils.go` (`newBackoffRecord`,
//! `getRemainingTime`), `pod_failure_policy.go` (`matchPodFailurePolicy`) and the
//! backoffLimitPerIndex parts of `indexed_job_utils.go` (`calculateFailedIndexes`, `isIndexFailed`,
//! `getPodsWithDelayedDeletionPerIndex`, `addIndexFailureCountAnnotation`,
//! `getRemainingTimePerIndex`) and `success_policy.go` (`matchSuccessPolicy`), as of v1.31 with its
//! default feature gates (JobPodReplacementPolicy, PodIndexLabel, JobSuccessPolicy on: interim
//! `FailureTarget` / `SuccessCriteriaMet` conditions, `status.terminating`).
//!
//! Event handlers: a Job's change queues it; a pod's change queues the Job controlling it and
//! counts toward that Job's expectations (upstream batches pod updates for one second; here a
//! pod written by the kubelet at tick t is seen at t + 1, the same delay).
//!
//! One sync of a Job: its pods (controlled by its uid) are read from the informer; newly finished
//! pods (with the `batch.kubernetes.io/job-tracking` finalizer, not yet in
//! `status.uncountedTerminatedPods`) are counted; the Job fails (interim `FailureTarget`, then
//! `Failed` once no pod is terminating) on `failed > backoffLimit`, a podFailurePolicy FailJob
//! rule or `activeDeadlineSeconds`, and succeeds (`SuccessCriteriaMet`, then `Complete`) when
//! `succeeded >= completions` with no active pod. Otherwise pods are created up to
//! `min(parallelism, completions - succeeded)` after the pod-failure back-off (10 s doubling, at
//! most 6 min since the last failure), or deleted when suspended or above that. Finished pods are
//! counted by moving their uids to `uncountedTerminatedPods`, removing their finalizer, then
//! adding them to the counters, as upstream.
//!
//! Differences from upstream (docs/fidelity.md): orphan pods matching a Job's selector are not
//! adopted (the generated selector names the Job's uid, so only a `manualSelector` Job could have
//! any); the finalizer is removed by an update of the freshly read pod
//! (upstream: a JSON patch); `ActivePods` ordering for deletions uses the ReplicaSet ranking
//! (same first keys: unassigned, pending, not ready first).

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::batch::{
    job_conditions, job_reasons, pod_failure_policy_actions as actions, pod_replacement_policies,
    Job, JobCondition, PodFailurePolicy, SuccessPolicy, UncountedTerminatedPods,
    JOB_COMPLETION_INDEX_ANNOTATION, JOB_COMPLETION_INDEX_ENV, JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION, JOB_TRACKING_FINALIZER,
};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::event::event_types;
use k8s_types::core::{condition_status, phases, Pod};
use k8s_types::events::EventRecorder;
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::meta::{tick_timestamp, timestamp_tick};
use k8s_types::status::Status;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Resource, Tick};

use crate::controller_utils::{
    is_pod_active, new_controller_ref, pod_from_template, sort_pods_for_deletion, RankedPod,
    FAILED_CREATE_POD_REASON, FAILED_DELETE_POD_REASON, SLOW_START_INITIAL_BATCH_SIZE,
    SUCCESSFUL_CREATE_POD_REASON, SUCCESSFUL_DELETE_POD_REASON,
};
use crate::expectations::ControllerExpectations;

/// The controller name, also the `source.component` of its Events (upstream `job-controller`).
pub const JOB_CONTROLLER_NAME: &str = "job-controller";

/// Upstream `DefaultJobPodFailureBackOff`: 10 s before re-creating after the first failure.
pub const DEFAULT_JOB_POD_FAILURE_BACKOFF: Tick = 10;
/// Upstream `MaxJobPodFailureBackOff`: the doubling stops at 6 minutes.
pub const MAX_JOB_POD_FAILURE_BACKOFF: Tick = 360;
/// Upstream `MaxPodCreateDeletePerSync`.
pub const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;
/// Upstream `MaxUncountedPods`: at most this many uids in `uncountedTerminatedPods` per sync.
pub const MAX_UNCOUNTED_PODS: usize = 500;
/// Upstream `maxGeneratedNameLength` (`names.MaxGeneratedNameLength`, 63 - 5).
const MAX_GENERATED_NAME_LENGTH: usize = 58;

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

/// kube-controller-manager's Job controller.
#[derive(Clone, Debug)]
pub struct JobController {
    expectations: ControllerExpectations,
    /// Upstream `podBackoffStore`, by Job key.
    backoff: BTreeMap<String, BackoffRecord>,
    events: EventRecorder,
}

impl Default for JobController {
    fn default() -> Self {
        Self::new()
    }
}

/// Upstream `getCompletionIndex`: the completion index annotation as a nonnegative int.
pub fn completion_index(pod: &Pod) -> Option<usize> {
    let v = pod
        .metadata
        .annotations
        .get(JOB_COMPLETION_INDEX_ANNOTATION)?;
    v.parse::<usize>().ok()
}

/// Upstream `orderedIntervals.String`: `0-2,4`; two consecutive indexes print as `1,2`.
pub fn format_indexes(indexes: &BTreeSet<usize>) -> String {
    let mut intervals: Vec<(usize, usize)> = Vec::new();
    for &i in indexes {
        match intervals.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => intervals.push((i, i)),
        }
    }
    let mut out = String::new();
    for (first, last) in intervals {
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&first.to_string());
        if last > first {
            out.push(if last == first + 1 { ',' } else { '-' });
            out.push_str(&last.to_string());
        }
    }
    out
}

/// Upstream `parseIndexesFromString`: the indexes below `completions` of `0-2,4`; malformed
/// parts are skipped.
pub fn parse_indexes(s: &str, completions: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) else {
            continue;
        };
        out.extend((a..=b).take_while(|i| *i < completions));
    }
    out
}

/// Upstream `podGenerateNameWithIndex`: `<job>-<index>-`, the job name cut so the prefix fits in
/// 58 characters.
pub fn pod_generate_name_with_index(job_name: &str, index: usize) -> String {
    let appendix = format!("-{index}-");
    let mut prefix = format!("{job_name}{appendix}");
    if prefix.len() > MAX_GENERATED_NAME_LENGTH {
        let keep = MAX_GENERATED_NAME_LENGTH.saturating_sub(appendix.len());
        prefix = format!("{}{appendix}", &job_name[..keep.min(job_name.len())]);
    }
    prefix
}

/// The tick a pod finished (upstream `getFinishedTime`): the last container `finishedAt`, else
/// its deletion timestamp, else its creation.
fn finished_tick(pod: &Pod) -> Tick {
    pod.status
        .init_container_statuses
        .iter()
        .chain(&pod.status.container_statuses)
        .filter_map(|c| c.state.terminated.as_ref())
        .filter_map(|t| t.finished_at.as_deref().and_then(timestamp_tick))
        .max()
        .or_else(|| {
            pod.metadata
                .deletion_timestamp
                .as_deref()
                .and_then(timestamp_tick)
        })
        .or_else(|| {
            pod.metadata
                .creation_timestamp
                .as_deref()
                .and_then(timestamp_tick)
        })
        .unwrap_or(0)
}

fn has_tracking_finalizer(pod: &Pod) -> bool {
    pod.metadata
        .finalizers
        .iter()
        .any(|f| f == JOB_TRACKING_FINALIZER)
}

/// Upstream `onlyReplaceFailedPods`: podReplacementPolicy Failed.
fn only_replace_failed_pods(job: &Job) -> bool {
    job.spec.pod_replacement_policy.as_deref() == Some(pod_replacement_policies::FAILED)
}

/// Upstream `isPodFailed`: phase Failed, or (unless only failed pods are replaced) being
/// deleted without having succeeded.
fn is_pod_failed(pod: &Pod, job: &Job) -> bool {
    if pod.phase() == phases::FAILED {
        return true;
    }
    if only_replace_failed_pods(job) {
        return false;
    }
    pod.metadata.deletion_timestamp.is_some() && pod.phase() != phases::SUCCEEDED
}

/// Upstream `controller.CountTerminatingPods`: being deleted and not terminal.
fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some() && !pod.is_terminal()
}

/// Upstream `matchPodFailurePolicy`: `(FailJob message, count the failure, matched action)`.
pub fn match_pod_failure_policy(
    policy: &PodFailurePolicy,
    pod: &Pod,
) -> (Option<String>, bool, Option<&'static str>) {
    for (i, rule) in policy.rules.iter().enumerate() {
        let matched: Option<String> = if let Some(req) = &rule.on_exit_codes {
            pod.status
                .container_statuses
                .iter()
                .chain(&pod.status.init_container_statuses)
                .find_map(|cs| {
                    let code = cs.state.terminated.as_ref()?.exit_code.unwrap_or(0);
                    if code == 0 || req.container_name.as_ref().is_some_and(|n| *n != cs.name) {
                        return None;
                    }
                    let listed = req.values.contains(&code);
                    let hit = match req.operator.as_str() {
                        "In" => listed,
                        "NotIn" => !listed,
                        _ => false,
                    };
                    hit.then(|| {
                        format!(
                            "Container {} for pod {}/{} failed with exit code {code} matching {} rule at index {i}",
                            cs.name,
                            pod.metadata.namespace(),
                            pod.metadata.name,
                            rule.action
                        )
                    })
                })
        } else if !rule.on_pod_conditions.is_empty() {
            pod.status.conditions.iter().find_map(|c| {
                rule.on_pod_conditions
                    .iter()
                    .any(|p| p.type_ == c.type_ && p.status == c.status)
                    .then(|| {
                        format!(
                            "Pod {}/{} has condition {} matching {} rule at index {i}",
                            pod.metadata.namespace(),
                            pod.metadata.name,
                            c.type_,
                            rule.action
                        )
                    })
            })
        } else {
            None
        };
        let Some(msg) = matched else {
            continue;
        };
        match rule.action.as_str() {
            actions::IGNORE => return (None, false, Some(actions::IGNORE)),
            actions::COUNT => return (None, true, Some(actions::COUNT)),
            actions::FAIL_JOB => return (Some(msg), true, Some(actions::FAIL_JOB)),
            actions::FAIL_INDEX => return (None, true, Some(actions::FAIL_INDEX)),
            _ => {}
        }
    }
    (None, true, None)
}

/// Upstream `parseInt32` of an index failure count annotation: 0 when absent or invalid.
fn count_annotation(pod: &Pod, key: &str) -> i32 {
    pod.metadata
        .annotations
        .get(key)
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|v| (0..=i64::from(i32::MAX)).contains(v))
        .map_or(0, |v| v as i32)
}

/// Upstream `getIndexFailureCount`.
fn index_failure_count(pod: &Pod) -> i32 {
    count_annotation(pod, JOB_INDEX_FAILURE_COUNT_ANNOTATION)
}

/// Upstream `getIndexAbsoluteFailureCount`: counted plus ignored failures.
fn index_absolute_failure_count(pod: &Pod) -> i32 {
    index_failure_count(pod) + count_annotation(pod, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)
}

/// Upstream `isIndexFailed`: the pod failed and either a FailIndex rule matched or it is a counted
/// failure whose index already had `backoffLimitPerIndex` failures.
fn is_index_failed(job: &Job, pod: &Pod) -> bool {
    if !is_pod_failed(pod, job) {
        return false;
    }
    let counted = match &job.spec.pod_failure_policy {
        Some(policy) => {
            let (_, count, action) = match_pod_failure_policy(policy, pod);
            if action == Some(actions::FAIL_INDEX) {
                return true;
            }
            count
        }
        None => true,
    };
    counted && index_failure_count(pod) >= job.spec.backoff_limit_per_index.unwrap_or(0)
}

/// Upstream `getNewIndexFailureCounts`: the failure counts for the pod replacing `replaced`.
fn new_index_failure_counts(job: &Job, replaced: Option<&Pod>) -> (i32, i32) {
    let Some(p) = replaced else {
        return (0, 0);
    };
    let (mut failures, mut ignored) = (
        index_failure_count(p),
        count_annotation(p, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION),
    );
    let counted = job
        .spec
        .pod_failure_policy
        .as_ref()
        .is_none_or(|policy| match_pod_failure_policy(policy, p).1);
    if counted {
        failures += 1;
    } else {
        ignored += 1;
    }
    (failures, ignored)
}

/// Upstream `getRemainingTimePerIndex`: the pod-failure back-off of one index, from its last failed
/// pod (absolute failure count + 1 failures, since that pod finished).
fn remaining_per_index(last_failed: Option<&Pod>, now: Tick) -> Tick {
    let Some(p) = last_failed else {
        return 0;
    };
    BackoffRecord {
        failures_after_last_success: index_absolute_failure_count(p) + 1,
        last_failure_time: Some(finished_tick(p)),
    }
    .remaining(now)
}

/// Upstream `matchSuccessPolicy` (`success_policy.go`): the message of the first rule met by the
/// succeeded indexes (`Matched rules at index N`).
pub fn match_success_policy(
    policy: Option<&SuccessPolicy>,
    completions: usize,
    succeeded: &BTreeSet<usize>,
) -> Option<String> {
    let policy = policy?;
    if succeeded.is_empty() {
        return None;
    }
    for (i, rule) in policy.rules.iter().enumerate() {
        let met = if let Some(s) = &rule.succeeded_indexes {
            let required = parse_indexes(s, completions);
            if required.is_empty() {
                continue;
            }
            // matchSucceededIndexesRule
            let contains = required.intersection(succeeded).count();
            match rule.succeeded_count {
                Some(c) => contains as i64 >= i64::from(c),
                None => contains == required.len(),
            }
        } else {
            rule.succeeded_count
                .is_some_and(|c| succeeded.len() as i64 >= i64::from(c))
        };
        if met {
            return Some(format!("Matched rules at index {i}"));
        }
    }
    None
}

/// Upstream `newCondition`.
fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Tick,
) -> JobCondition {
    let ts = tick_timestamp(now);
    JobCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        last_probe_time: Some(ts.clone()),
        last_transition_time: Some(ts),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        message: (!message.is_empty()).then(|| message.to_string()),
    }
}

/// Upstream `ensureJobConditionStatus`: updates the condition of `type_` when its status,
/// reason or message differ; appends it when missing unless the status is False. Returns
/// whether the list changed.
fn ensure_condition(
    list: &mut Vec<JobCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Tick,
) -> bool {
    let new = new_condition(type_, status, reason, message, now);
    if let Some(c) = list.iter_mut().find(|c| c.type_ == type_) {
        if c.status != new.status || c.reason != new.reason || c.message != new.message {
            *c = new;
            return true;
        }
        return false;
    }
    if status != condition_status::FALSE {
        list.push(new);
        return true;
    }
    false
}

/// Upstream `pastBackoffLimitOnFailure`: restartPolicy OnFailure and the restarts of the
/// pending/running pods' containers reach backoffLimit (any restart when it is 0).
fn past_backoff_limit_on_failure(job: &Job, pods: &[&Pod]) -> bool {
    if job.spec.template.spec.restart_policy.as_deref() != Some("OnFailure") {
        return false;
    }
    let restarts: i32 = pods
        .iter()
        .filter(|p| p.phase() == phases::RUNNING || p.phase() == phases::PENDING)
        .flat_map(|p| {
            p.status
                .init_container_statuses
                .iter()
                .chain(&p.status.container_statuses)
        })
        .map(|c| c.restart_count)
        .sum();
    let limit = job.spec.backoff_limit.unwrap_or(6);
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

/// Upstream `addCompletionIndexEnvVariable`: `JOB_COMPLETION_INDEX` from the completion index
/// label (PodIndexLabel on; the `fieldRef.apiVersion: v1` is the apiserver's default, written here).
fn add_completion_index_env(env: &mut Vec<serde_json::Value>) {
    if env
        .iter()
        .any(|v| v.get("name").and_then(|n| n.as_str()) == Some(JOB_COMPLETION_INDEX_ENV))
    {
        return;
    }
    env.push(serde_json::json!({
        "name": JOB_COMPLETION_INDEX_ENV,
        "valueFrom": {"fieldRef": {
            "apiVersion": "v1",
            "fieldPath": format!("metadata.labels['{JOB_COMPLETION_INDEX_ANNOTATION}']"),
        }},
    }));
}

/// What one sync knows (upstream `syncJobCtx`).
struct Ctx<'a> {
    pods: Vec<&'a Pod>,
    active_pods: Vec<&'a Pod>,
    succeeded: i32,
    ready: i32,
    terminating: i32,
    uncounted_succeeded: BTreeSet<String>,
    uncounted_failed: BTreeSet<String>,
    prev_succeeded_indexes: BTreeSet<usize>,
    succeeded_indexes: BTreeSet<usize>,
    /// backoffLimitPerIndex: the failed indexes (upstream `jobCtx.failedIndexes`).
    failed_indexes: Option<BTreeSet<usize>>,
    /// backoffLimitPerIndex: per index, the failed pod whose finalizer stays until its replacement
    /// exists (upstream `podsWithDelayedDeletionPerIndex`).
    delayed: BTreeMap<usize, &'a Pod>,
    finished: Option<JobCondition>,
    backoff: BackoffRecord,
}

impl JobController {
    /// A controller with empty expectations and back-off records.
    pub fn new() -> Self {
        JobController {
            expectations: ControllerExpectations::new(),
            backoff: BTreeMap::new(),
            events: EventRecorder::for_component(JOB_CONTROLLER_NAME),
        }
    }

    fn resolve(informers: &SharedInformerFactory, pod: &Pod) -> Option<String> {
        let cref = pod.metadata.controller_ref()?;
        informers.resolve_controller_ref(&Kind::Job, pod.metadata.namespace(), cref)
    }

    fn on_pod_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        let old = change.old.as_deref().and_then(Pod::from_object_ref);
        let cur = change.new.as_deref().and_then(Pod::from_object_ref);
        let Some(pod) = cur.or(old) else {
            return;
        };
        let Some(key) = Self::resolve(informers, pod) else {
            return;
        };
        match (old, cur) {
            (_, None) => self.expectations.deletion_observed(&key, &change.key),
            (None, Some(p)) => {
                if p.metadata.deletion_timestamp.is_some() {
                    self.expectations.deletion_observed(&key, &change.key);
                } else {
                    self.expectations.creation_observed(&key);
                }
            }
            (Some(o), Some(p)) => {
                if p.metadata.deletion_timestamp.is_some()
                    && o.metadata.deletion_timestamp.is_none()
                {
                    self.expectations.deletion_observed(&key, &change.key);
                }
            }
        }
        queue.add(key);
    }

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

    /// Upstream `manageJob`: deletes pods of a suspended Job or above the wanted number, or
    /// creates the missing ones after the back-off. Returns the active count and the requeue.
    fn manage_job(
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
                                Some(pod_generate_name_with_index(&job.metadata.name, ix));
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
                        match api.create_shared(Object::Pod(pod)) {
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
    fn delete_pod(
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

    /// Upstream `trackJobStatusAndRemoveFinalizers` + `flushUncountedAndRemoveFinalizers` +
    /// `enactJobFinished` + `recordJobFinished`.
    fn track_status_and_remove_finalizers(
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
    fn record_job_finished(
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
fn clean_uncounted(job: &mut Job, with_finalizer: &BTreeSet<String>) -> bool {
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
fn remove_tracking_finalizer(api: &mut dyn ApiClient, pod: &Pod) -> Result<(), Status> {
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
    match api.update(Object::Pod(fresh)) {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Upstream `activePodsForRemoval`: for an Indexed Job, pods with no or an out-of-range index and
/// all but the most advanced pod of a repeated index first; then the ranked rest, until
/// `rm_at_least` are chosen.
fn active_pods_for_removal<'a>(
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

impl Controller for JobController {
    fn name(&self) -> &str {
        JOB_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::Job, Kind::Pod]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        match change.kind {
            Kind::Job => {
                if change.is_delete() {
                    self.expectations.delete(&change.key);
                    self.backoff.remove(&change.key);
                }
                queue.add(change.key.clone());
            }
            Kind::Pod => self.on_pod_change(change, informers, queue),
            _ => {}
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(job) = informers.of(&Kind::Job).get_typed::<Job>(key).cloned() else {
            self.expectations.delete(key);
            self.backoff.remove(key);
            return Ok(Action::AwaitChange);
        };
        Ok(self.sync_job(api, informers, &job)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::batch::{PodFailurePolicyOnExitCodesRequirement, PodFailurePolicyRule};
    use k8s_types::core::{ContainerState, ContainerStateDetail, ContainerStatus};

    #[test]
    fn backoff_doubles_from_ten_seconds_up_to_six_minutes() {
        // Upstream TestGetRemainingTime: 1 failure -> 10s, 2 -> 20s, ... capped at 6 min.
        let rec = |n: i32| BackoffRecord {
            failures_after_last_success: n,
            last_failure_time: Some(100),
        };
        assert_eq!(rec(1).remaining(100), 10);
        assert_eq!(rec(1).remaining(101), 9);
        assert_eq!(rec(1).remaining(110), 0);
        assert_eq!(rec(2).remaining(100), 20);
        assert_eq!(rec(3).remaining(100), 40);
        assert_eq!(rec(6).remaining(100), 320);
        assert_eq!(rec(7).remaining(100), 360);
        assert_eq!(rec(20).remaining(100), 360);
        assert_eq!(BackoffRecord::default().remaining(100), 0);
    }

    #[test]
    fn backoff_record_resets_on_success() {
        // Upstream TestNewBackoffRecord: failures after the last success only.
        let r = BackoffRecord::default().updated(&[], &[5, 7]);
        assert_eq!(r.failures_after_last_success, 2);
        assert_eq!(r.last_failure_time, Some(7));
        let r = r.updated(&[10], &[9, 12, 15]);
        assert_eq!(r.failures_after_last_success, 2);
        assert_eq!(r.last_failure_time, Some(15));
        let r = r.updated(&[20], &[]);
        assert_eq!(r, BackoffRecord::default());
    }

    #[test]
    fn indexes_print_as_upstream_intervals() {
        let s: BTreeSet<usize> = [0, 1, 2, 4, 6, 7].into_iter().collect();
        assert_eq!(format_indexes(&s), "0-2,4,6,7");
        assert_eq!(
            parse_indexes("0-2,4,6,7", 7),
            [0, 1, 2, 4, 6].into_iter().collect()
        );
        assert_eq!(format_indexes(&BTreeSet::new()), "");
    }

    #[test]
    fn success_policy_rules_match_as_upstream() {
        // Upstream TestMatchSuccessPolicy cases: indexes only, count only, both.
        let set = |v: &[usize]| v.iter().copied().collect::<BTreeSet<usize>>();
        let policy = |indexes: Option<&str>, count: Option<i32>| SuccessPolicy {
            rules: vec![k8s_types::batch::SuccessPolicyRule {
                succeeded_indexes: indexes.map(String::from),
                succeeded_count: count,
            }],
        };
        let m = |p: &SuccessPolicy, s: &[usize]| match_success_policy(Some(p), 10, &set(s));
        assert_eq!(m(&policy(Some("0-2"), None), &[0, 1]), None);
        assert_eq!(
            m(&policy(Some("0-2"), None), &[0, 1, 2, 7]),
            Some("Matched rules at index 0".to_string())
        );
        assert_eq!(m(&policy(None, Some(3)), &[4, 8]), None);
        assert_eq!(
            m(&policy(None, Some(3)), &[4, 8, 9]),
            Some("Matched rules at index 0".to_string())
        );
        assert_eq!(m(&policy(Some("5-9"), Some(2)), &[0, 1, 5]), None);
        assert_eq!(
            m(&policy(Some("5-9"), Some(2)), &[0, 5, 9]),
            Some("Matched rules at index 0".to_string())
        );
        assert_eq!(m(&policy(Some("0"), None), &[]), None);
        let two = SuccessPolicy {
            rules: vec![
                k8s_types::batch::SuccessPolicyRule {
                    succeeded_indexes: Some("3".into()),
                    succeeded_count: None,
                },
                k8s_types::batch::SuccessPolicyRule {
                    succeeded_indexes: None,
                    succeeded_count: Some(1),
                },
            ],
        };
        assert_eq!(m(&two, &[1]), Some("Matched rules at index 1".to_string()));
    }

    #[test]
    fn indexed_generate_name() {
        assert_eq!(pod_generate_name_with_index("pi", 3), "pi-3-");
        let long = "a".repeat(60);
        let n = pod_generate_name_with_index(&long, 12);
        assert_eq!(n.len(), 58);
        assert!(n.ends_with("a-12-"));
    }

    fn failed_pod(exit: i32) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = "pi-0-abcde".into();
        p.metadata.namespace = Some("default".into());
        p.status.phase = Some("Failed".into());
        p.status.container_statuses = vec![ContainerStatus {
            name: "main".into(),
            state: ContainerState {
                terminated: Some(Box::new(ContainerStateDetail {
                    exit_code: Some(exit),
                    ..Default::default()
                })),
                ..Default::default()
            },
            ..Default::default()
        }];
        p
    }

    #[test]
    fn pod_failure_policy_matches_exit_codes_in_order() {
        let policy = PodFailurePolicy {
            rules: vec![
                PodFailurePolicyRule {
                    action: "FailJob".into(),
                    on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                        container_name: Some("main".into()),
                        operator: "In".into(),
                        values: vec![42],
                    }),
                    on_pod_conditions: Vec::new(),
                },
                PodFailurePolicyRule {
                    action: "Ignore".into(),
                    on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                        container_name: None,
                        operator: "NotIn".into(),
                        values: vec![1],
                    }),
                    on_pod_conditions: Vec::new(),
                },
            ],
        };
        // Upstream's message format (TestMatchPodFailurePolicy).
        assert_eq!(
            match_pod_failure_policy(&policy, &failed_pod(42)),
            (
                Some("Container main for pod default/pi-0-abcde failed with exit code 42 matching FailJob rule at index 0".into()),
                true,
                Some("FailJob")
            )
        );
        assert_eq!(
            match_pod_failure_policy(&policy, &failed_pod(3)),
            (None, false, Some("Ignore"))
        );
        assert_eq!(
            match_pod_failure_policy(&policy, &failed_pod(1)),
            (None, true, None)
        );
    }
}
