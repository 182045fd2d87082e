//! `batch/v1` CronJob (upstream `k8s.io/api/batch/v1/types.go`: `CronJob`, `CronJobSpec`,
//! `JobTemplateSpec`, `CronJobStatus`, `ConcurrencyPolicy`), with the annotations of
//! `k8s.io/api/batch/v1` (`CronJobScheduledTimestampAnnotation`) and kubectl's
//! `cronjob.kubernetes.io/instantiate` (`kubectl create job --from=cronjob/...`).

use serde::{Deserialize, Serialize};

use super::JobSpec;
use crate::meta::{ObjectMeta, ObjectReference};

/// Upstream `batch.kubernetes.io/cronjob-scheduled-timestamp`
/// (`CronJobScheduledTimestampAnnotation`): the scheduled time of a Job the CronJob controller
/// created, RFC 3339 in the CronJob's time zone.
pub const CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION: &str =
    "batch.kubernetes.io/cronjob-scheduled-timestamp";
/// kubectl's `cronjob.kubernetes.io/instantiate: manual`, on a Job made by
/// `kubectl create job NAME --from=cronjob/X` (`staging/src/k8s.io/kubectl/pkg/cmd/create/create_job.go`).
pub const CRONJOB_INSTANTIATE_ANNOTATION: &str = "cronjob.kubernetes.io/instantiate";

/// `spec.concurrencyPolicy` values (upstream `ConcurrencyPolicy`).
pub mod concurrency_policies {
    /// Jobs may run concurrently (default).
    pub const ALLOW: &str = "Allow";
    /// A run is skipped while the previous one is still active.
    pub const FORBID: &str = "Forbid";
    /// The active Jobs are deleted and replaced by the new run.
    pub const REPLACE: &str = "Replace";
}

/// Upstream `batchv1.CronJob`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronJob {
    /// `batch/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `CronJob`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state (boxed: a Job template is large and CronJobs are few).
    #[serde(default)]
    pub spec: Box<CronJobSpec>,
    /// Observed state, written by the CronJob controller.
    #[serde(default)]
    pub status: CronJobStatus,
}

/// Upstream `batchv1.CronJobSpec` (field order as upstream's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronJobSpec {
    /// The schedule in Cron format (five fields, or `@hourly`-style descriptors, or `@every <duration>`).
    #[serde(default)]
    pub schedule: String,
    /// IANA time zone the schedule is read in; the virtual clock's zone (UTC) when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// Seconds after a missed scheduled time during which the Job may still be started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_deadline_seconds: Option<i64>,
    /// `Allow` (default), `Forbid` or `Replace`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub concurrency_policy: String,
    /// A suspended CronJob starts no new Job; defaulted to false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// The Job each run creates.
    #[serde(default)]
    pub job_template: JobTemplateSpec,
    /// Finished successful Jobs kept; defaulted to 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_jobs_history_limit: Option<i32>,
    /// Finished failed Jobs kept; defaulted to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_jobs_history_limit: Option<i32>,
}

/// Upstream `batchv1.JobTemplateSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobTemplateSpec {
    /// Labels and annotations copied to each Job.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The Job's spec.
    #[serde(default)]
    pub spec: JobSpec,
}

/// Upstream `batchv1.CronJobStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronJobStatus {
    /// References to the running Jobs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active: Vec<ObjectReference>,
    /// RFC 3339: the last time a Job was successfully scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<String>,
    /// RFC 3339: the last time a Job completed successfully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_successful_time: Option<String>,
}

impl CronJob {
    /// `spec.suspend` is true.
    pub fn is_suspended(&self) -> bool {
        self.spec.suspend == Some(true)
    }
}
