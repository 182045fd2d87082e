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

mod backoff_utils;
mod indexed_job_utils;
mod manage_job;
mod pod_failure_policy;
mod success_policy;
mod sync_job;
#[cfg(test)]
mod tests;
mod tracking;
mod workload;

pub use backoff_utils::*;
pub use indexed_job_utils::*;
pub use pod_failure_policy::*;
pub use success_policy::*;
use sync_job::*;
use tracking::*;
pub use workload::{
    compute_pod_group_name, compute_workload_name, is_gang_scheduling_candidate,
    ENABLE_WORKLOAD_WITH_JOB, WORKLOAD_CREATED_REASON,
};

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

/// kube-controller-manager's Job controller.
#[derive(Clone, Debug)]
pub struct JobController {
    expectations: ControllerExpectations,
    /// Upstream `podBackoffStore`, by Job key.
    backoff: BTreeMap<String, BackoffRecord>,
    events: EventRecorder,
    /// The feature gate `EnableWorkloadWithJob` (see `workload.rs`).
    workload_with_job: bool,
}

impl Default for JobController {
    fn default() -> Self {
        Self::new()
    }
}

impl JobController {
    /// A controller with empty expectations and back-off records.
    pub fn new() -> Self {
        JobController {
            expectations: ControllerExpectations::new(),
            backoff: BTreeMap::new(),
            events: EventRecorder::for_component(JOB_CONTROLLER_NAME),
            workload_with_job: false,
        }
    }

    /// The controller with the feature gate `EnableWorkloadWithJob` (alpha in v1.36) on: gang
    /// candidate Jobs get a Workload and a PodGroup, and their pods join it.
    pub fn with_workload_integration() -> Self {
        JobController {
            workload_with_job: true,
            ..Self::new()
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
}

impl Controller for JobController {
    fn name(&self) -> &str {
        JOB_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        if self.workload_with_job {
            vec![
                Kind::Job,
                Kind::Pod,
                Kind::Workload,
                Kind::SchedulingPodGroup,
            ]
        } else {
            vec![Kind::Job, Kind::Pod]
        }
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
