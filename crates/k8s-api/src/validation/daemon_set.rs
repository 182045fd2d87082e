//! DaemonSet validation (upstream `pkg/apis/apps/validation/validation.go` `ValidateDaemonSet`,
//! `ValidateDaemonSetSpec`, `ValidateDaemonSetUpdateStrategy`, `ValidateRollingUpdateDaemonSet`,
//! `ValidateDaemonSetUpdate`, `ValidateDaemonSetStatus`).

use k8s_types::apps::{
    DaemonSet, DaemonSetSpec, DaemonSetStatus, IntOrString, RollingUpdateDaemonSet,
    ON_DELETE_DAEMON_SET_STRATEGY, ROLLING_UPDATE_DAEMON_SET_STRATEGY,
};
use k8s_types::status::{FieldError, FieldErrorType};

use super::gofmt::{go_string_map, label_selector_string, quote};
use super::labels::{selector_converts, validate_label_selector};
use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::template::validate_selector_unchanged;
use super::template::{
    int_or_percent_value, int_or_string_display, is_not_more_than_100_percent,
    validate_pod_template_spec, validate_positive_int_or_percent, SELECTOR_MISMATCH_MSG,
};
use super::{child, nonnegative, ErrorList};

/// Upstream message for an empty DaemonSet selector.
pub const EMPTY_DAEMON_SET_SELECTOR_MSG: &str = "empty selector is invalid for daemonset";
/// Upstream message when both maxSurge and maxUnavailable are set.
pub const SURGE_WITH_UNAVAILABLE_MSG: &str = "may not be set when maxUnavailable is non-zero";
/// Upstream message when both are 0.
pub const BOTH_ZERO_MSG: &str = "cannot be 0 when maxSurge is 0";

/// Upstream `ValidateRollingUpdateDaemonSet`: both values positive ints or percents, at most
/// 100%, and exactly one of them non-zero.
fn validate_rolling_update(ru: &RollingUpdateDaemonSet, path: &str) -> ErrorList {
    let zero = IntOrString::Int(0);
    let mu = ru.max_unavailable.as_ref().unwrap_or(&zero);
    let ms = ru.max_surge.as_ref().unwrap_or(&zero);
    let (mu_path, ms_path) = (child(path, "maxUnavailable"), child(path, "maxSurge"));
    let mut errs = validate_positive_int_or_percent(mu, &mu_path);
    errs.extend(validate_positive_int_or_percent(ms, &ms_path));
    errs.extend(is_not_more_than_100_percent(mu, &mu_path));
    errs.extend(is_not_more_than_100_percent(ms, &ms_path));
    let has_unavailable = int_or_percent_value(mu) != 0;
    let has_surge = int_or_percent_value(ms) != 0;
    if has_unavailable && has_surge {
        errs.push(FieldError::invalid(
            &ms_path,
            int_or_string_display(ms),
            SURGE_WITH_UNAVAILABLE_MSG,
        ));
    } else if !has_unavailable && !has_surge {
        errs.push(FieldError::required(&mu_path, BOTH_ZERO_MSG));
    }
    errs
}

/// Upstream `ValidateDaemonSetUpdateStrategy`, at `spec.updateStrategy`.
fn validate_update_strategy(spec: &DaemonSetSpec, path: &str) -> ErrorList {
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    match strategy.type_.as_deref().unwrap_or("") {
        ON_DELETE_DAEMON_SET_STRATEGY => Vec::new(),
        ROLLING_UPDATE_DAEMON_SET_STRATEGY => match &strategy.rolling_update {
            None => vec![FieldError::required(child(path, "rollingUpdate"), "")],
            Some(ru) => validate_rolling_update(ru, &child(path, "rollingUpdate")),
        },
        other => {
            // Upstream prints the whole strategy with Go's %v.
            let ru = if strategy.rolling_update.is_some() {
                "(*apps.RollingUpdateDaemonSet)(...)"
            } else {
                "(*apps.RollingUpdateDaemonSet)(nil)"
            };
            vec![FieldError {
                type_: FieldErrorType::NotSupported,
                field: path.to_string(),
                bad_value: Some(format!(
                    "apps.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:{ru}}}",
                    quote(other)
                )),
                detail: "supported values: \"OnDelete\", \"RollingUpdate\"".to_string(),
            }]
        }
    }
}

/// Upstream `ValidateDaemonSetSpec`, at `spec`. A missing selector selects nothing
/// (`labels.Nothing()`), so it is reported as not matching the template labels.
pub fn validate_daemon_set_spec(spec: &DaemonSetSpec, path: &str) -> ErrorList {
    let sel_path = child(path, "selector");
    let template_path = child(path, "template");
    let mut errs = Vec::new();
    if let Some(sel) = &spec.selector {
        errs.extend(validate_label_selector(sel, &sel_path));
    }
    let converts = spec.selector.as_ref().is_none_or(selector_converts);
    let matches = spec
        .selector
        .as_ref()
        .is_some_and(|s| s.is_empty() || s.matches(&spec.template.metadata.labels));
    if converts && !matches {
        errs.push(FieldError::invalid(
            child(&child(&template_path, "metadata"), "labels"),
            go_string_map(&spec.template.metadata.labels),
            SELECTOR_MISMATCH_MSG,
        ));
    }
    if let Some(sel) = spec.selector.as_ref().filter(|s| s.is_empty()) {
        errs.push(FieldError::invalid(
            &sel_path,
            label_selector_string(sel),
            EMPTY_DAEMON_SET_SELECTOR_MSG,
        ));
    }
    errs.extend(validate_pod_template_spec(&spec.template, &template_path));
    let rp = spec.template.spec.restart_policy.as_deref().unwrap_or("");
    if rp != "Always" {
        errs.push(FieldError::not_supported(
            child(&child(&template_path, "spec"), "restartPolicy"),
            rp,
            &["Always"],
        ));
    }
    errs.extend(nonnegative(
        &child(path, "minReadySeconds"),
        i64::from(spec.min_ready_seconds.unwrap_or(0)),
    ));
    errs.extend(validate_update_strategy(
        spec,
        &child(path, "updateStrategy"),
    ));
    if let Some(rhl) = spec.revision_history_limit {
        errs.extend(nonnegative(
            &child(path, "revisionHistoryLimit"),
            i64::from(rhl),
        ));
    }
    errs
}

/// Upstream `ValidateDaemonSet`.
pub fn validate_daemon_set(ds: &DaemonSet) -> ErrorList {
    let mut errs = validate_object_meta(&ds.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_daemon_set_spec(&ds.spec, "spec"));
    errs
}

/// Upstream `ValidateDaemonSetUpdate`: the spec again, and `spec.selector` immutable.
pub fn validate_daemon_set_update(new: &DaemonSet, old: &DaemonSet) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_daemon_set_spec(&new.spec, "spec"));
    errs.extend(validate_selector_unchanged(
        new.spec.selector.as_ref(),
        old.spec.selector.as_ref(),
        "spec",
    ));
    errs
}

/// Upstream `ValidateDaemonSetStatus`: every count non-negative.
pub fn validate_daemon_set_status(s: &DaemonSetStatus, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    for (field, v) in [
        ("currentNumberScheduled", s.current_number_scheduled),
        ("numberMisscheduled", s.number_misscheduled),
        ("desiredNumberScheduled", s.desired_number_scheduled),
        ("numberReady", s.number_ready),
        ("updatedNumberScheduled", s.updated_number_scheduled),
        ("numberAvailable", s.number_available),
        ("numberUnavailable", s.number_unavailable),
    ] {
        errs.extend(nonnegative(&child(path, field), i64::from(v)));
    }
    errs.extend(nonnegative(
        &child(path, "observedGeneration"),
        s.observed_generation.unwrap_or(0),
    ));
    if let Some(c) = s.collision_count {
        errs.extend(nonnegative(&child(path, "collisionCount"), i64::from(c)));
    }
    errs
}

/// Upstream `ValidateDaemonSetStatusUpdate` (without the collisionCount-decrement check).
pub fn validate_daemon_set_status_update(new: &DaemonSet, old: &DaemonSet) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_daemon_set_status(&new.status, "status"));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::daemon_set::set_defaults_daemon_set;
    use k8s_types::core::Container;
    use k8s_types::labels::LabelSelector;

    fn ds() -> DaemonSet {
        let mut ds = DaemonSet::default();
        ds.metadata.name = "agent".into();
        ds.metadata.namespace = Some("default".into());
        ds.spec.selector = Some(LabelSelector::from_labels([("app", "agent")]));
        ds.spec.template.metadata.labels = [("app".to_string(), "agent".to_string())].into();
        ds.spec.template.spec.containers = vec![Container {
            name: "a".into(),
            image: "agent:1".into(),
            ..Default::default()
        }]
        .into();
        set_defaults_daemon_set(&mut ds);
        ds.spec.template.spec.containers[0].image_pull_policy = Some("IfNotPresent".into());
        ds
    }

    fn messages(errs: &ErrorList) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn defaulted_daemon_set_is_valid() {
        assert_eq!(messages(&validate_daemon_set(&ds())), Vec::<String>::new());
    }

    #[test]
    fn upstream_messages_for_selector_policy_and_strategy() {
        let mut d = ds();
        d.spec.selector = Some(LabelSelector::default());
        assert!(messages(&validate_daemon_set(&d)).contains(
            &"spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}: empty selector is invalid for daemonset".to_string()
        ));
        let mut d = ds();
        d.spec.template.metadata.labels = [("app".to_string(), "x".to_string())].into();
        d.spec.template.spec.restart_policy = Some("Never".into());
        let m = messages(&validate_daemon_set(&d));
        assert_eq!(
            m,
            vec![
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"x\"}: `selector` does not match template `labels`".to_string(),
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"".to_string(),
            ]
        );
        let mut d = ds();
        let ru = d
            .spec
            .update_strategy
            .as_mut()
            .and_then(|s| s.rolling_update.as_mut())
            .unwrap();
        ru.max_surge = Some(IntOrString::String("25%".into()));
        assert_eq!(
            messages(&validate_daemon_set(&d)),
            vec!["spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 25%: may not be set when maxUnavailable is non-zero".to_string()]
        );
        ru_both_zero();
    }

    fn ru_both_zero() {
        let mut d = ds();
        let ru = d
            .spec
            .update_strategy
            .as_mut()
            .and_then(|s| s.rolling_update.as_mut())
            .unwrap();
        ru.max_unavailable = Some(IntOrString::Int(0));
        assert_eq!(
            messages(&validate_daemon_set(&d)),
            vec!["spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0".to_string()]
        );
    }

    #[test]
    fn selector_is_immutable() {
        let old = ds();
        let mut new = ds();
        let sel = new.spec.selector.as_mut().unwrap();
        sel.match_labels.insert("tier".into(), "node".into());
        new.spec
            .template
            .metadata
            .labels
            .insert("tier".into(), "node".into());
        let m = messages(&validate_daemon_set_update(&new, &old));
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].starts_with("spec.selector: Invalid value: "));
        assert!(m[0].ends_with(": field is immutable"));
    }
}
