//! Pod templates and selectors of workload controllers (upstream `pkg/apis/apps/validation/
//! validation.go` `ValidatePodTemplateSpecForReplicaSet`, the selector part of
//! `ValidateDeploymentSpec`/`ValidateReplicaSetSpec`, `ValidatePositiveIntOrPercent`,
//! `IsNotMoreThan100Percent`, and `pkg/apis/core/validation` `ValidatePodTemplateSpec`).

use k8s_types::apps::{IntOrString, PodTemplateSpec};
use k8s_types::labels::LabelSelector;
use k8s_types::status::FieldError;

use super::gofmt::{go_string_map, label_selector_string};
use super::labels::{selector_converts, validate_label_selector, validate_labels};
use super::meta::validate_annotations;
use super::names::is_valid_percent;
use super::pod_spec::validate_pod_spec;
use super::{child, nonnegative, ErrorList};

/// Upstream message when the template's labels do not satisfy the selector.
pub const SELECTOR_MISMATCH_MSG: &str = "`selector` does not match template `labels`";
/// Upstream message for an empty selector (ReplicaSets print the Deployment wording too).
pub const EMPTY_SELECTOR_MSG: &str = "empty selector is invalid for deployment";

/// Upstream `ValidatePodTemplateSpec`, at `path` (`spec.template`): labels and annotations are
/// reported at `spec.template.labels` / `spec.template.annotations` (upstream's paths).
pub fn validate_pod_template_spec(t: &PodTemplateSpec, path: &str) -> ErrorList {
    let mut errs = validate_labels(&t.metadata.labels, &child(path, "labels"));
    errs.extend(validate_annotations(
        &t.metadata,
        &child(path, "annotations"),
    ));
    errs.extend(validate_pod_spec(&t.spec, &child(path, "spec")));
    errs
}

/// The selector and template checks shared by Deployment and ReplicaSet specs, at `spec`.
pub fn validate_selector_and_template(
    selector: Option<&LabelSelector>,
    template: &PodTemplateSpec,
    spec_path: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    let sel_path = child(spec_path, "selector");
    match selector {
        None => errs.push(FieldError::required(&sel_path, "")),
        Some(sel) => {
            errs.extend(validate_label_selector(sel, &sel_path));
            if sel.is_empty() {
                errs.push(FieldError::invalid(
                    &sel_path,
                    label_selector_string(sel),
                    EMPTY_SELECTOR_MSG,
                ));
            }
        }
    }
    let template_path = child(spec_path, "template");
    match selector {
        Some(sel) if !selector_converts(sel) => errs.push(FieldError::invalid(
            &sel_path,
            label_selector_string(sel),
            "invalid label selector",
        )),
        _ => {
            // A missing selector selects nothing (upstream `labels.Nothing()`), so it never
            // matches the template either; an empty one selects everything.
            let matches =
                selector.is_some_and(|s| s.is_empty() || s.matches(&template.metadata.labels));
            if !matches {
                errs.push(FieldError::invalid(
                    child(&child(&template_path, "metadata"), "labels"),
                    go_string_map(&template.metadata.labels),
                    SELECTOR_MISMATCH_MSG,
                ));
            }
            errs.extend(validate_pod_template_spec(template, &template_path));
            let rp = template.spec.restart_policy.as_deref().unwrap_or("");
            if rp != "Always" {
                errs.push(FieldError::not_supported(
                    child(&child(&template_path, "spec"), "restartPolicy"),
                    rp,
                    &["Always"],
                ));
            }
        }
    }
    errs
}

/// Upstream `IntOrString.String()`: ints in decimal, strings as they are.
pub fn int_or_string_display(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// Upstream `getIntOrPercentValue`: a valid percent's number, else the integer value (a
/// non-numeric string counts as 0).
pub fn int_or_percent_value(v: &IntOrString) -> i64 {
    match v {
        IntOrString::Int(i) => i64::from(*i),
        IntOrString::String(s) => {
            if is_valid_percent(s).is_empty() {
                s.trim_end_matches('%').parse().unwrap_or(0)
            } else {
                s.parse().unwrap_or(0)
            }
        }
    }
}

/// Upstream `ValidatePositiveIntOrPercent`.
pub fn validate_positive_int_or_percent(v: &IntOrString, path: &str) -> ErrorList {
    match v {
        IntOrString::String(s) => is_valid_percent(s)
            .into_iter()
            .map(|m| FieldError::invalid(path, s.clone(), m))
            .collect(),
        IntOrString::Int(i) => nonnegative(path, i64::from(*i)),
    }
}

/// Upstream `IsNotMoreThan100Percent`.
pub fn is_not_more_than_100_percent(v: &IntOrString, path: &str) -> ErrorList {
    match v {
        IntOrString::String(s)
            if is_valid_percent(s).is_empty() && int_or_percent_value(v) > 100 =>
        {
            vec![FieldError::invalid(
                path,
                s.clone(),
                "must not be greater than 100%",
            )]
        }
        _ => Vec::new(),
    }
}

/// apps/v1's immutable `spec.selector` (upstream `ValidateDeploymentUpdate`,
/// `ValidateReplicaSetUpdate`, `ValidateDaemonSetUpdate`: `field is immutable`).
pub fn validate_selector_unchanged(
    new: Option<&LabelSelector>,
    old: Option<&LabelSelector>,
    path: &str,
) -> ErrorList {
    if new == old {
        return Vec::new();
    }
    let value = new
        .map(label_selector_string)
        .unwrap_or_else(|| "null".to_string());
    vec![FieldError::invalid(
        child(path, "selector"),
        value,
        super::FIELD_IMMUTABLE_ERROR_MSG,
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::Container;

    fn template(labels: &[(&str, &str)]) -> PodTemplateSpec {
        let mut t = PodTemplateSpec::default();
        t.metadata.labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        t.spec.containers = vec![Container {
            image_pull_policy: Some("IfNotPresent".into()),
            name: "app".into(),
            image: "nginx".into(),
            ..Default::default()
        }]
        .into();
        t.spec.restart_policy = Some("Always".into());
        t.spec.termination_grace_period_seconds = Some(30);
        t
    }

    #[test]
    fn selector_must_match_template_labels() {
        let sel = LabelSelector::from_labels([("app", "web")]);
        let errs = validate_selector_and_template(Some(&sel), &template(&[("app", "db")]), "spec");
        assert_eq!(
            errs[0].to_string(),
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"db\"}: `selector` does not match template `labels`"
        );
        assert!(
            validate_selector_and_template(Some(&sel), &template(&[("app", "web")]), "spec")
                .is_empty()
        );
    }

    #[test]
    fn missing_selector_is_required_and_matches_nothing() {
        let errs: Vec<String> =
            validate_selector_and_template(None, &template(&[("app", "web")]), "spec")
                .iter()
                .map(ToString::to_string)
                .collect();
        assert_eq!(errs[0], "spec.selector: Required value");
        assert!(errs[1].starts_with("spec.template.metadata.labels: Invalid value"));
    }

    #[test]
    fn int_or_percent_rules() {
        assert_eq!(int_or_percent_value(&IntOrString::String("25%".into())), 25);
        assert_eq!(
            is_not_more_than_100_percent(&IntOrString::String("150%".into()), "m")[0].to_string(),
            "m: Invalid value: 150%: must not be greater than 100%"
        );
        assert_eq!(
            validate_positive_int_or_percent(&IntOrString::Int(-1), "m")[0].to_string(),
            "m: Invalid value: -1: must be greater than or equal to 0"
        );
    }
}
