//! Defaulting and validation of a whole `KubeSchedulerConfiguration` (upstream
//! `pkg/scheduler/apis/config/v1/defaults.go` `SetDefaults_KubeSchedulerConfiguration` and
//! `pkg/scheduler/apis/config/validation/validation.go` `ValidateKubeSchedulerConfiguration`).
//! Plugin args are validated by the plugins' factories, plugin names against the registry.

use std::collections::BTreeSet;

use k8s_types::status::FieldError;

use super::{KubeSchedulerConfiguration, KubeSchedulerProfile, DEFAULT_SCHEDULER_NAME};
use k8s_sched_framework::ConfigError;

/// Upstream defaulting: no profiles -> one profile; a single unnamed profile ->
/// `default-scheduler`.
pub fn set_defaults(cfg: &mut KubeSchedulerConfiguration) {
    if cfg.profiles.is_empty() {
        cfg.profiles.push(KubeSchedulerProfile::default());
    }
    if cfg.profiles.len() == 1 && cfg.profiles[0].scheduler_name.is_none() {
        cfg.profiles[0].scheduler_name = Some(DEFAULT_SCHEDULER_NAME.to_string());
    }
}

fn validate_percentage(path: &str, v: Option<i32>, errs: &mut Vec<FieldError>) {
    if let Some(p) = v {
        if !(0..=100).contains(&p) {
            errs.push(FieldError::invalid(
                path,
                p.to_string(),
                "not in valid range [0-100]",
            ));
        }
    }
}

/// Upstream `ValidateKubeSchedulerConfiguration` (the parts k8s-mini acts on): percentages in
/// 0-100, scheduler names required and unique, plugin config names unique per profile.
///
/// # Errors
/// [`ConfigError::Invalid`] with every field error found.
pub fn validate(cfg: &KubeSchedulerConfiguration) -> Result<(), ConfigError> {
    let mut errs = Vec::new();
    if let Some(p) = cfg.parallelism.filter(|p| *p <= 0) {
        errs.push(FieldError::invalid(
            "parallelism",
            p.to_string(),
            "should be an integer value greater than zero",
        ));
    }
    let mut names = BTreeSet::new();
    for (i, p) in cfg.profiles.iter().enumerate() {
        let path = format!("profiles[{i}]");
        match p.scheduler_name.as_deref() {
            None | Some("") => errs.push(FieldError::required(format!("{path}.schedulerName"), "")),
            Some(name) => {
                if !names.insert(name) {
                    errs.push(FieldError::duplicate(
                        format!("{path}.schedulerName"),
                        format!("\"{name}\""),
                    ));
                }
            }
        }
        validate_percentage(
            &format!("{path}.percentageOfNodesToScore"),
            p.percentage_of_nodes_to_score,
            &mut errs,
        );
        let mut seen = BTreeSet::new();
        for (j, pc) in p.plugin_config.iter().enumerate() {
            if !seen.insert(pc.name.as_str()) {
                errs.push(FieldError::duplicate(
                    format!("{path}.pluginConfig[{j}]"),
                    format!("\"{}\"", pc.name),
                ));
            }
        }
    }
    validate_common_queue_sort(cfg, &mut errs);
    validate_percentage(
        "percentageOfNodesToScore",
        cfg.percentage_of_nodes_to_score,
        &mut errs,
    );
    let initial = cfg
        .pod_initial_backoff_seconds
        .unwrap_or(crate::queue::POD_INITIAL_BACKOFF as i64);
    if initial <= 0 {
        errs.push(FieldError::invalid(
            "podInitialBackoffSeconds",
            initial.to_string(),
            "must be greater than 0",
        ));
    }
    let max = cfg
        .pod_max_backoff_seconds
        .unwrap_or(crate::queue::POD_MAX_BACKOFF as i64);
    if max < initial {
        errs.push(FieldError::invalid(
            "podMaxBackoffSeconds",
            max.to_string(),
            "must be greater than or equal to PodInitialBackoffSeconds",
        ));
    }
    match ConfigError::from_field_errors(errs) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Upstream `validateCommonQueueSort`: every profile's `plugins.queueSort` must equal the first
/// profile's (one queue serves all profiles), and the first may enable at most one plugin. The
/// rejected value is shown as JSON (upstream prints the Go struct).
fn validate_common_queue_sort(cfg: &KubeSchedulerConfiguration, errs: &mut Vec<FieldError>) {
    let queue_sort = |i: usize| {
        cfg.profiles[i]
            .plugins
            .as_ref()
            .map(|p| p.queue_sort.clone())
            .unwrap_or_default()
    };
    if cfg.profiles.is_empty() {
        return;
    }
    let canon = queue_sort(0);
    if canon.enabled.len() > 1 {
        errs.push(FieldError::invalid(
            "profiles[0].plugins.queueSort.Enabled",
            canon.enabled.len().to_string(),
            "only one queue sort plugin can be enabled",
        ));
    }
    for i in 1..cfg.profiles.len() {
        let curr = queue_sort(i);
        if curr != canon {
            errs.push(FieldError::invalid(
                format!("profiles[{i}].plugins.queueSort"),
                serde_json::to_string(&curr).unwrap_or_default(),
                "must be the same for all profiles",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Plugin, Plugins};

    #[test]
    fn defaults_and_errors_follow_upstream() {
        let mut cfg = KubeSchedulerConfiguration {
            profiles: vec![],
            ..Default::default()
        };
        set_defaults(&mut cfg);
        assert_eq!(
            cfg.profiles[0].scheduler_name.as_deref(),
            Some("default-scheduler")
        );
        assert!(validate(&cfg).is_ok());

        let mut bad = KubeSchedulerConfiguration {
            percentage_of_nodes_to_score: Some(101),
            ..Default::default()
        };
        bad.profiles.push(bad.profiles[0].clone());
        bad.profiles.push(KubeSchedulerProfile::default());
        assert_eq!(
            validate(&bad).unwrap_err().to_string(),
            "[profiles[1].schedulerName: Duplicate value: \"default-scheduler\", profiles[2].schedulerName: Required value, percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]]"
        );
    }

    /// Upstream `ValidateKubeSchedulerConfiguration`: parallelism above 0, initial backoff above
    /// 0 and the maximum not below it, in that order after the profiles' errors.
    #[test]
    fn parallelism_and_backoffs_are_validated() {
        let bad = KubeSchedulerConfiguration {
            parallelism: Some(0),
            pod_initial_backoff_seconds: Some(0),
            pod_max_backoff_seconds: Some(-1),
            ..Default::default()
        };
        assert_eq!(
            validate(&bad).unwrap_err().to_string(),
            "[parallelism: Invalid value: 0: should be an integer value greater than zero, podInitialBackoffSeconds: Invalid value: 0: must be greater than 0, podMaxBackoffSeconds: Invalid value: -1: must be greater than or equal to PodInitialBackoffSeconds]"
        );
        let ok = KubeSchedulerConfiguration {
            parallelism: Some(16),
            pod_initial_backoff_seconds: Some(2),
            pod_max_backoff_seconds: Some(4),
            ..Default::default()
        };
        assert!(validate(&ok).is_ok());
    }

    /// Upstream `validateCommonQueueSort`: a second profile with its own queueSort set.
    #[test]
    fn every_profile_needs_the_same_queue_sort() {
        let mut cfg = KubeSchedulerConfiguration::default();
        let mut b = KubeSchedulerProfile {
            scheduler_name: Some("b".into()),
            ..Default::default()
        };
        let mut plugins = Plugins::default();
        plugins.queue_sort.enabled.push(Plugin {
            name: "PrioritySort".into(),
            weight: None,
        });
        b.plugins = Some(plugins);
        cfg.profiles.push(b);
        assert_eq!(
            validate(&cfg).unwrap_err().to_string(),
            "profiles[1].plugins.queueSort: Invalid value: {\"enabled\":[{\"name\":\"PrioritySort\"}]}: must be the same for all profiles"
        );
    }
}
