//! Deployment validation (upstream `pkg/apis/apps/validation/validation.go` `ValidateDeployment`,
//! `ValidateDeploymentSpec`, `ValidateDeploymentStrategy`, `ValidateRollingUpdateDeployment`,
//! `ValidateDeploymentUpdate`, `ValidateDeploymentStatus`; the apps/v1 selector immutability check
//! of `pkg/registry/apps/deployment/strategy.go`).

use k8s_types::apps::{
    Deployment, DeploymentSpec, DeploymentStatus, IntOrString, RollingUpdateDeployment,
};
use k8s_types::status::{FieldError, FieldErrorType};

use super::gofmt::quote;
use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::template::validate_selector_unchanged;
use super::template::{
    int_or_percent_value, int_or_string_display, is_not_more_than_100_percent,
    validate_positive_int_or_percent, validate_selector_and_template,
};
use super::{child, nonnegative, ErrorList};

/// Upstream message when both maxUnavailable and maxSurge are 0.
pub const BOTH_ZERO_MSG: &str = "may not be 0 when `maxSurge` is 0";
/// Upstream message for a Recreate strategy with rollingUpdate parameters.
pub const RECREATE_WITH_ROLLING_UPDATE_MSG: &str =
    "may not be specified when strategy `type` is 'Recreate'";
/// Upstream status message.
pub const GREATER_THAN_REPLICAS_MSG: &str = "cannot be greater than status.replicas";

fn validate_rolling_update(ru: &RollingUpdateDeployment, path: &str) -> ErrorList {
    let zero = IntOrString::Int(0);
    let mu = ru.max_unavailable.as_ref().unwrap_or(&zero);
    let ms = ru.max_surge.as_ref().unwrap_or(&zero);
    let mu_path = child(path, "maxUnavailable");
    let mut errs = validate_positive_int_or_percent(mu, &mu_path);
    errs.extend(validate_positive_int_or_percent(
        ms,
        &child(path, "maxSurge"),
    ));
    if int_or_percent_value(mu) == 0 && int_or_percent_value(ms) == 0 {
        errs.push(FieldError::invalid(
            &mu_path,
            int_or_string_display(mu),
            BOTH_ZERO_MSG,
        ));
    }
    errs.extend(is_not_more_than_100_percent(mu, &mu_path));
    errs
}

fn validate_strategy(spec: &DeploymentSpec, path: &str) -> ErrorList {
    let strategy = spec.strategy.clone().unwrap_or_default();
    match strategy.type_.as_deref().unwrap_or("") {
        "Recreate" => match strategy.rolling_update {
            Some(_) => vec![FieldError::forbidden(
                child(path, "rollingUpdate"),
                RECREATE_WITH_ROLLING_UPDATE_MSG,
            )],
            None => Vec::new(),
        },
        "RollingUpdate" => match &strategy.rolling_update {
            None => vec![FieldError::required(
                child(path, "rollingUpdate"),
                "this should be defaulted and never be nil",
            )],
            Some(ru) => validate_rolling_update(ru, &child(path, "rollingUpdate")),
        },
        other => {
            // Upstream prints the whole strategy with Go's %#v.
            let ru = if strategy.rolling_update.is_some() {
                "(*apps.RollingUpdateDeployment)(...)"
            } else {
                "(*apps.RollingUpdateDeployment)(nil)"
            };
            vec![FieldError {
                type_: FieldErrorType::NotSupported,
                field: path.to_string(),
                bad_value: Some(format!(
                    "apps.DeploymentStrategy{{Type:{}, RollingUpdate:{ru}}}",
                    quote(other)
                )),
                detail: "supported values: \"Recreate\", \"RollingUpdate\"".to_string(),
            }]
        }
    }
}

/// Upstream `ValidateDeploymentSpec`, at `spec`.
pub fn validate_deployment_spec(spec: &DeploymentSpec, path: &str) -> ErrorList {
    let mut errs = nonnegative(
        &child(path, "replicas"),
        i64::from(spec.replicas.unwrap_or(0)),
    );
    errs.extend(validate_selector_and_template(
        spec.selector.as_ref(),
        &spec.template,
        path,
    ));
    errs.extend(validate_strategy(spec, &child(path, "strategy")));
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    errs.extend(nonnegative(
        &child(path, "minReadySeconds"),
        i64::from(min_ready),
    ));
    if let Some(rhl) = spec.revision_history_limit {
        errs.extend(nonnegative(
            &child(path, "revisionHistoryLimit"),
            i64::from(rhl),
        ));
    }
    if let Some(pds) = spec.progress_deadline_seconds {
        let p = child(path, "progressDeadlineSeconds");
        errs.extend(nonnegative(&p, i64::from(pds)));
        if pds <= min_ready {
            errs.push(FieldError::invalid(
                &p,
                pds.to_string(),
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

/// Upstream `ValidateDeployment`.
pub fn validate_deployment(d: &Deployment) -> ErrorList {
    let mut errs = validate_object_meta(&d.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_deployment_spec(&d.spec, "spec"));
    errs
}

/// Upstream `ValidateDeploymentUpdate` plus apps/v1's immutable `spec.selector`.
pub fn validate_deployment_update(new: &Deployment, old: &Deployment) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_deployment_spec(&new.spec, "spec"));
    errs.extend(validate_selector_unchanged(
        new.spec.selector.as_ref(),
        old.spec.selector.as_ref(),
        "spec",
    ));
    errs
}

/// Upstream `ValidateDeploymentStatus`.
pub fn validate_deployment_status(s: &DeploymentStatus, path: &str) -> ErrorList {
    let mut errs = nonnegative(
        &child(path, "observedGeneration"),
        s.observed_generation.unwrap_or(0),
    );
    for (field, v) in [
        ("replicas", s.replicas),
        ("updatedReplicas", s.updated_replicas),
        ("readyReplicas", s.ready_replicas),
        ("availableReplicas", s.available_replicas),
        ("unavailableReplicas", s.unavailable_replicas),
    ] {
        errs.extend(nonnegative(&child(path, field), i64::from(v)));
    }
    for (field, v) in [
        ("updatedReplicas", s.updated_replicas),
        ("readyReplicas", s.ready_replicas),
        ("availableReplicas", s.available_replicas),
    ] {
        if v > s.replicas {
            errs.push(FieldError::invalid(
                child(path, field),
                v.to_string(),
                GREATER_THAN_REPLICAS_MSG,
            ));
        }
    }
    if s.available_replicas > s.ready_replicas {
        errs.push(FieldError::invalid(
            child(path, "availableReplicas"),
            s.available_replicas.to_string(),
            "cannot be greater than readyReplicas",
        ));
    }
    errs
}

/// Upstream `ValidateDeploymentStatusUpdate`.
pub fn validate_deployment_status_update(new: &Deployment, old: &Deployment) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_deployment_status(&new.status, "status"));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::apps::DeploymentStrategy;

    #[test]
    fn both_zero_is_rejected_with_upstreams_message() {
        let ru = RollingUpdateDeployment {
            max_unavailable: Some(IntOrString::Int(0)),
            max_surge: Some(IntOrString::String("0%".into())),
        };
        let errs = validate_rolling_update(&ru, "spec.strategy.rollingUpdate");
        assert_eq!(
            errs[0].to_string(),
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"
        );
    }

    #[test]
    fn unknown_strategy_type() {
        let spec = DeploymentSpec {
            strategy: Some(DeploymentStrategy {
                type_: Some("BlueGreen".into()),
                rolling_update: None,
            }),
            ..Default::default()
        };
        assert_eq!(
            validate_strategy(&spec, "spec.strategy")[0].to_string(),
            "spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"BlueGreen\", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", \"RollingUpdate\""
        );
    }

    #[test]
    fn status_counts_are_consistent() {
        let s = DeploymentStatus {
            replicas: 1,
            ready_replicas: 2,
            available_replicas: 2,
            ..Default::default()
        };
        let errs: Vec<String> = validate_deployment_status(&s, "status")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas",
            ]
        );
    }
}
