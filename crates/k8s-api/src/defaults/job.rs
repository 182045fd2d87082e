//! Job defaults (upstream `pkg/apis/batch/v1/defaults.go` `SetDefaults_Job`, as of v1.31 with
//! its default feature gates: JobPodReplacementPolicy on), plus the PodSpec defaults on the template.

use k8s_types::batch::{completion_modes, pod_replacement_policies, Job};
use k8s_types::core::condition_status;

use super::pod_spec::set_defaults_pod_spec;

/// Upstream `SetDefaults_Job`: completions and parallelism 1 when both are unset, parallelism 1,
/// backoffLimit 6 (MaxInt32 with backoffLimitPerIndex), the Job's labels from the template's when
/// it has none, completionMode NonIndexed, suspend false, podFailurePolicy condition patterns'
/// status True, podReplacementPolicy Failed with a podFailurePolicy else TerminatingOrFailed,
/// manualSelector false. The template's restartPolicy is left to the PodSpec defaults (`Always`,
/// which Job validation then rejects, as upstream).
pub fn set_defaults_job(job: &mut Job) {
    let spec = &mut job.spec;
    if spec.completions.is_none() && spec.parallelism.is_none() {
        spec.completions = Some(1);
        spec.parallelism = Some(1);
    }
    if spec.parallelism.is_none() {
        spec.parallelism = Some(1);
    }
    if spec.backoff_limit.is_none() {
        spec.backoff_limit = Some(if spec.backoff_limit_per_index.is_some() {
            i32::MAX
        } else {
            6
        });
    }
    if !spec.template.metadata.labels.is_empty() && job.metadata.labels.is_empty() {
        job.metadata.labels = spec.template.metadata.labels.clone();
    }
    if spec.completion_mode.is_none() {
        spec.completion_mode = Some(completion_modes::NON_INDEXED.to_string());
    }
    if spec.suspend.is_none() {
        spec.suspend = Some(false);
    }
    if let Some(policy) = &mut spec.pod_failure_policy {
        for rule in &mut policy.rules {
            for pattern in &mut rule.on_pod_conditions {
                if pattern.status.is_empty() {
                    pattern.status = condition_status::TRUE.to_string();
                }
            }
        }
    }
    if spec.pod_replacement_policy.is_none() {
        spec.pod_replacement_policy = Some(
            if spec.pod_failure_policy.is_some() {
                pod_replacement_policies::FAILED
            } else {
                pod_replacement_policies::TERMINATING_OR_FAILED
            }
            .to_string(),
        );
    }
    if spec.manual_selector.is_none() {
        spec.manual_selector = Some(false);
    }
    set_defaults_pod_spec(&mut spec.template.spec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::batch::{
        PodFailurePolicy, PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
    };

    #[test]
    fn defaults_follow_set_defaults_job() {
        // Upstream TestSetDefaultJob "All unspecified -> sets all to 1, backoffLimit 6".
        let mut job = Job::default();
        job.spec
            .template
            .metadata
            .labels
            .insert("app".into(), "pi".into());
        set_defaults_job(&mut job);
        assert_eq!(job.spec.completions, Some(1));
        assert_eq!(job.spec.parallelism, Some(1));
        assert_eq!(job.spec.backoff_limit, Some(6));
        assert_eq!(job.spec.completion_mode.as_deref(), Some("NonIndexed"));
        assert_eq!(job.spec.suspend, Some(false));
        assert_eq!(job.spec.manual_selector, Some(false));
        assert_eq!(
            job.spec.pod_replacement_policy.as_deref(),
            Some("TerminatingOrFailed")
        );
        assert_eq!(
            job.metadata.labels.get("app").map(String::as_str),
            Some("pi")
        );
        // The PodSpec default, rejected later by Job validation.
        assert_eq!(
            job.spec.template.spec.restart_policy.as_deref(),
            Some("Always")
        );

        // "Completions explicitly set to 2, parallelism unset -> parallelism 1".
        let mut job = Job::default();
        job.spec.completions = Some(2);
        set_defaults_job(&mut job);
        assert_eq!(
            (job.spec.completions, job.spec.parallelism),
            (Some(2), Some(1))
        );

        // "Parallelism explicitly set, completions unset -> completions stay unset".
        let mut job = Job::default();
        job.spec.parallelism = Some(3);
        set_defaults_job(&mut job);
        assert_eq!(
            (job.spec.completions, job.spec.parallelism),
            (None, Some(3))
        );

        // backoffLimitPerIndex makes the global limit MaxInt32; a podFailurePolicy makes the
        // replacement policy Failed and its condition patterns default to True.
        let mut job = Job::default();
        job.spec.backoff_limit_per_index = Some(1);
        job.spec.pod_failure_policy = Some(PodFailurePolicy {
            rules: vec![PodFailurePolicyRule {
                action: "Ignore".into(),
                on_exit_codes: None,
                on_pod_conditions: vec![PodFailurePolicyOnPodConditionsPattern {
                    type_: "DisruptionTarget".into(),
                    status: String::new(),
                }],
            }],
        });
        set_defaults_job(&mut job);
        assert_eq!(job.spec.backoff_limit, Some(2147483647));
        assert_eq!(job.spec.pod_replacement_policy.as_deref(), Some("Failed"));
        let rules = &job
            .spec
            .pod_failure_policy
            .as_ref()
            .map(|p| p.rules.clone())
            .unwrap_or_default();
        assert_eq!(rules[0].on_pod_conditions[0].status, "True");
    }
}
