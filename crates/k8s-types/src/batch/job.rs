//! `batch/v1` Job (upstream `k8s.io/api/batch/v1/types.go`: `Job`, `JobSpec`, `JobStatus`,
//! `JobCondition`, `PodFailurePolicy`, `UncountedTerminatedPods`), with the well-known labels,
//! annotations and finalizer of `k8s.io/api/batch/v1` (`JobNameLabel`, `ControllerUidLabel`,
//! `JobCompletionIndexAnnotation`, `JobTrackingFinalizer`).

use serde::{Deserialize, Serialize};

use crate::apps::PodTemplateSpec;
use crate::labels::LabelSelector;
use crate::meta::ObjectMeta;

/// Upstream `batch.kubernetes.io/job-name` (`JobNameLabel`), on the pod template and the pods.
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// Upstream `job-name` (`LegacyJobNameLabel`), still added next to [`JOB_NAME_LABEL`].
pub const LEGACY_JOB_NAME_LABEL: &str = "job-name";
/// Upstream `batch.kubernetes.io/controller-uid` (`ControllerUidLabel`), the generated selector.
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// Upstream `controller-uid` (`LegacyControllerUidLabel`).
pub const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
/// Upstream `batch.kubernetes.io/job-completion-index` (`JobCompletionIndexAnnotation`): the
/// completion index of an Indexed Job's pod, as annotation and (PodIndexLabel, on since 1.28) label.
pub const JOB_COMPLETION_INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";
/// Upstream `batch.kubernetes.io/job-tracking` (`JobTrackingFinalizer`): kept on a Job's pods until
/// the Job controller has counted them.
pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// Upstream `batch.kubernetes.io/job-index-failure-count` (`JobIndexFailureCountAnnotation`): the
/// counted failures of the pod's index before it (backoffLimitPerIndex).
pub const JOB_INDEX_FAILURE_COUNT_ANNOTATION: &str = "batch.kubernetes.io/job-index-failure-count";
/// Upstream `batch.kubernetes.io/job-index-ignored-failure-count`
/// (`JobIndexIgnoredFailureCountAnnotation`): failures of the index a podFailurePolicy ignored.
pub const JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION: &str =
    "batch.kubernetes.io/job-index-ignored-failure-count";
/// Upstream `JOB_COMPLETION_INDEX` (`completionIndexEnvName` in `pkg/controller/job/indexed_job_utils.go`).
pub const JOB_COMPLETION_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// Completion modes (upstream `CompletionMode`).
pub mod completion_modes {
    /// Pods are interchangeable (default).
    pub const NON_INDEXED: &str = "NonIndexed";
    /// Each pod gets a completion index in `[0, completions)`.
    pub const INDEXED: &str = "Indexed";
}

/// Job condition types (upstream `JobConditionType`).
pub mod job_conditions {
    /// The Job is suspended.
    pub const SUSPENDED: &str = "Suspended";
    /// The Job completed.
    pub const COMPLETE: &str = "Complete";
    /// The Job failed.
    pub const FAILED: &str = "Failed";
    /// The Job is going to fail (interim condition; pods are being terminated).
    pub const FAILURE_TARGET: &str = "FailureTarget";
    /// The Job met its success criteria (interim condition before Complete).
    pub const SUCCESS_CRITERIA_MET: &str = "SuccessCriteriaMet";
}

/// Job condition reasons (upstream `JobReason*` constants).
pub mod job_reasons {
    /// `failed > backoffLimit` (or the OnFailure restart count reached it).
    pub const BACKOFF_LIMIT_EXCEEDED: &str = "BackoffLimitExceeded";
    /// `activeDeadlineSeconds` passed.
    pub const DEADLINE_EXCEEDED: &str = "DeadlineExceeded";
    /// A podFailurePolicy rule with action FailJob matched.
    pub const POD_FAILURE_POLICY: &str = "PodFailurePolicy";
    /// Every completion reached (JobSuccessPolicy, beta since 1.31).
    pub const COMPLETIONS_REACHED: &str = "CompletionsReached";
    /// Failed indexes exceeded `maxFailedIndexes`.
    pub const MAX_FAILED_INDEXES_EXCEEDED: &str = "MaxFailedIndexesExceeded";
    /// Some index failed (backoffLimitPerIndex).
    pub const FAILED_INDEXES: &str = "FailedIndexes";
    /// A successPolicy rule matched.
    pub const SUCCESS_POLICY: &str = "SuccessPolicy";
}

/// podFailurePolicy rule actions (upstream `PodFailurePolicyAction`).
pub mod pod_failure_policy_actions {
    /// Fail the whole Job.
    pub const FAIL_JOB: &str = "FailJob";
    /// Fail the pod's index (needs backoffLimitPerIndex).
    pub const FAIL_INDEX: &str = "FailIndex";
    /// Do not count the failure toward backoffLimit.
    pub const IGNORE: &str = "Ignore";
    /// Count the failure (the default handling).
    pub const COUNT: &str = "Count";
}

/// podReplacementPolicy values (upstream `PodReplacementPolicy`).
pub mod pod_replacement_policies {
    /// Replace a pod once it is terminating or failed (default without podFailurePolicy).
    pub const TERMINATING_OR_FAILED: &str = "TerminatingOrFailed";
    /// Replace a pod only once it is fully terminated (default with podFailurePolicy).
    pub const FAILED: &str = "Failed";
}

/// Upstream `batchv1.Job` (rarely set members boxed, so that an [`crate::Object`] stays small).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    /// `batch/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Job`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: JobSpec,
    /// Observed state, written by the Job controller.
    #[serde(default)]
    pub status: JobStatus,
}

/// Upstream `batchv1.JobSpec` (field order as upstream's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    /// Pods running at once; defaulted to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<i32>,
    /// Successful pods needed; defaulted to 1 when parallelism is unset too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<i32>,
    /// Seconds (ticks) after `startTime` at which the Job fails with DeadlineExceeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    /// How pod failures are handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_failure_policy: Option<PodFailurePolicy>,
    /// When an Indexed Job may succeed before every index did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_policy: Option<Box<SuccessPolicy>>,
    /// Failed pods tolerated; defaulted to 6 (or MaxInt32 with backoffLimitPerIndex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
    /// Failures tolerated per index (Indexed only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit_per_index: Option<i32>,
    /// Failed indexes tolerated (with backoffLimitPerIndex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failed_indexes: Option<i32>,
    /// Generated from the Job's uid unless `manualSelector`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// When true the user's selector is kept; defaulted to false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manual_selector: Option<bool>,
    /// The pod template; restartPolicy must be Never or OnFailure.
    #[serde(default)]
    pub template: PodTemplateSpec,
    /// Seconds after the Job finished before the TTL controller deletes it (kept, not acted on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
    /// `NonIndexed` (default) or `Indexed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_mode: Option<String>,
    /// A suspended Job has no active pods; defaulted to false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// `TerminatingOrFailed` or `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_replacement_policy: Option<String>,
    /// Controller managing the Job (kept, not acted on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_by: Option<String>,
}

/// Upstream `batchv1.JobStatus` (field order and `omitempty` as upstream's; `terminating`,
/// `ready` and `uncountedTerminatedPods` are pointers upstream, printed even when 0 / empty).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobStatus {
    /// Suspended, Complete, Failed, FailureTarget, SuccessCriteriaMet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<JobCondition>,
    /// RFC 3339: when the controller first started (or resumed) the Job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// RFC 3339: when the Job completed (not set on failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<String>,
    /// Pending or running pods not being deleted.
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub active: i32,
    /// Pods that reached Succeeded (counted).
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub succeeded: i32,
    /// Pods that reached Failed (counted).
    #[serde(default, skip_serializing_if = "crate::apps::is_zero")]
    pub failed: i32,
    /// Pods being deleted that are not terminal yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminating: Option<i32>,
    /// Indexed Jobs: succeeded indexes, e.g. `0-2,4`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub completed_indexes: String,
    /// Indexed Jobs with backoffLimitPerIndex: failed indexes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_indexes: Option<String>,
    /// Finished pods whose tracking finalizer is being removed, not yet in the counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncounted_terminated_pods: Option<Box<UncountedTerminatedPods>>,
    /// Active pods with the Ready condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<i32>,
}

/// Upstream `batchv1.UncountedTerminatedPods`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UncountedTerminatedPods {
    /// UIDs of succeeded pods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub succeeded: Vec<String>,
    /// UIDs of failed pods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

/// Upstream `batchv1.JobCondition`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobCondition {
    /// Condition type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False`, `Unknown`.
    pub status: String,
    /// RFC 3339: last time the condition was probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<String>,
    /// RFC 3339: last time the condition changed status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Upstream `batchv1.SuccessPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuccessPolicy {
    /// The Job succeeds when any rule is met.
    #[serde(default)]
    pub rules: Vec<SuccessPolicyRule>,
}

/// Upstream `batchv1.SuccessPolicyRule`: at least one of the two fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SuccessPolicyRule {
    /// Indexes that must succeed, e.g. `0-2,5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub succeeded_indexes: Option<String>,
    /// How many (of `succeededIndexes`, or of all indexes) must succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub succeeded_count: Option<i32>,
}

/// Upstream `batchv1.PodFailurePolicy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodFailurePolicy {
    /// Evaluated in order; the first matching rule decides.
    #[serde(default)]
    pub rules: Vec<PodFailurePolicyRule>,
}

/// Upstream `batchv1.PodFailurePolicyRule`: exactly one of `onExitCodes` / `onPodConditions`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodFailurePolicyRule {
    /// FailJob, FailIndex, Ignore or Count.
    #[serde(default)]
    pub action: String,
    /// Matches terminated containers' exit codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_exit_codes: Option<PodFailurePolicyOnExitCodesRequirement>,
    /// Matches pod conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_pod_conditions: Vec<PodFailurePolicyOnPodConditionsPattern>,
}

/// Upstream `batchv1.PodFailurePolicyOnExitCodesRequirement`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodFailurePolicyOnExitCodesRequirement {
    /// Only this container's exit code is checked when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_name: Option<String>,
    /// `In` or `NotIn`.
    #[serde(default)]
    pub operator: String,
    /// Exit codes (sorted, unique; 0 not allowed with `In`).
    #[serde(default)]
    pub values: Vec<i32>,
}

/// Upstream `batchv1.PodFailurePolicyOnPodConditionsPattern`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodFailurePolicyOnPodConditionsPattern {
    /// Pod condition type, e.g. `DisruptionTarget`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Condition status; defaulted to `True`.
    #[serde(default)]
    pub status: String,
}

impl Job {
    /// `spec.completionMode` is `Indexed` (upstream `isIndexedJob`).
    pub fn is_indexed(&self) -> bool {
        self.spec.completion_mode.as_deref() == Some(completion_modes::INDEXED)
    }

    /// `spec.suspend` is true (upstream `jobSuspended`).
    pub fn is_suspended(&self) -> bool {
        self.spec.suspend == Some(true)
    }

    /// The condition of type `type_`, if any (upstream `findConditionByType`).
    pub fn condition(&self, type_: &str) -> Option<&JobCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Upstream `util.IsJobFinished`: a Complete or Failed condition is True; returns its type.
    pub fn finished_type(&self) -> Option<&str> {
        self.status
            .conditions
            .iter()
            .find(|c| {
                (c.type_ == job_conditions::COMPLETE || c.type_ == job_conditions::FAILED)
                    && c.status == crate::core::condition_status::TRUE
            })
            .map(|c| c.type_.as_str())
    }
}
