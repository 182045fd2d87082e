//! Defaulting and validation of a whole `KubeSchedulerConfiguration` (upstream
//! `pkg/scheduler/apis/config/v1/defaults.go` `SetDefaults_KubeSchedulerConfiguration` and
//! `pkg/scheduler/apis/config/validation/validation.go` `ValidateKubeSchedulerConfiguration`).
//! Plugin args are validated by the plugins' factories, plugin names against the registry.

use std::collections::BTreeSet;

use k8s_types::status::FieldError;

use super::{KubeSchedulerConfiguration, KubeSchedulerProfile, DEFAULT_SCHEDULER_NAME};
use crate::error::ConfigError;

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
    validate_percentage(
        "percentageOfNodesToScore",
        cfg.percentage_of_nodes_to_score,
        &mut errs,
    );
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
    match ConfigError::from_field_errors(errs) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "[percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100], profiles[1].schedulerName: Duplicate value: \"default-scheduler\", profiles[2].schedulerName: Required value]"
        );
    }
}
