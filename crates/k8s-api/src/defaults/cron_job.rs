//! CronJob defaults (upstream `pkg/apis/batch/v1/defaults.go` `SetDefaults_CronJob`), plus the
//! PodSpec defaults on the job template's pod template (the generated `SetObjectDefaults_CronJob`
//! walks into it; `SetDefaults_Job` is not applied to a template, as upstream).

use k8s_types::batch::{concurrency_policies, CronJob};

use super::pod_spec::set_defaults_pod_spec;

/// Upstream `SetDefaults_CronJob`: concurrencyPolicy Allow, suspend false,
/// successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1.
pub fn set_defaults_cron_job(cj: &mut CronJob) {
    let spec = &mut cj.spec;
    if spec.concurrency_policy.is_empty() {
        spec.concurrency_policy = concurrency_policies::ALLOW.to_string();
    }
    if spec.suspend.is_none() {
        spec.suspend = Some(false);
    }
    if spec.successful_jobs_history_limit.is_none() {
        spec.successful_jobs_history_limit = Some(3);
    }
    if spec.failed_jobs_history_limit.is_none() {
        spec.failed_jobs_history_limit = Some(1);
    }
    set_defaults_pod_spec(&mut spec.job_template.spec.template.spec);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_set_defaults_cron_job() {
        let mut cj = CronJob::default();
        set_defaults_cron_job(&mut cj);
        assert_eq!(cj.spec.concurrency_policy, "Allow");
        assert_eq!(cj.spec.suspend, Some(false));
        assert_eq!(cj.spec.successful_jobs_history_limit, Some(3));
        assert_eq!(cj.spec.failed_jobs_history_limit, Some(1));
        // The template's Job spec is not defaulted as a Job (no backoffLimit, parallelism).
        assert_eq!(cj.spec.job_template.spec.backoff_limit, None);
        assert_eq!(cj.spec.job_template.spec.parallelism, None);
        // Set values are kept.
        let mut cj = CronJob::default();
        cj.spec.concurrency_policy = "Forbid".into();
        cj.spec.successful_jobs_history_limit = Some(0);
        set_defaults_cron_job(&mut cj);
        assert_eq!(cj.spec.concurrency_policy, "Forbid");
        assert_eq!(cj.spec.successful_jobs_history_limit, Some(0));
    }
}
