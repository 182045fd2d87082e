//! PodDisruptionBudget validation (upstream `pkg/apis/policy/validation/validation.go`:
//! `ValidatePodDisruptionBudget`, `ValidatePodDisruptionBudgetSpec`,
//! `ValidatePodDisruptionBudgetStatusUpdate`).
//!
//! Simplified on purpose: the "both set" error prints the two values
//! (`{minAvailable: 2, maxUnavailable: 1}`) where upstream prints the Go struct with pointer
//! addresses; status conditions are not validated (`metav1validation.ValidateConditions`).

use k8s_types::policy::{
    unhealthy_pod_eviction_policies, PodDisruptionBudget, PodDisruptionBudgetSpec,
};
use k8s_types::status::FieldError;

use super::labels::validate_label_selector;
use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::template::{
    int_or_string_display, is_not_more_than_100_percent, validate_positive_int_or_percent,
};
use super::{child, nonnegative, ErrorList};

/// Upstream message when both `minAvailable` and `maxUnavailable` are set.
pub const BOTH_SET_MSG: &str = "minAvailable and maxUnavailable cannot be both set";

/// Upstream `ValidatePodDisruptionBudgetSpec`.
pub fn validate_pod_disruption_budget_spec(
    spec: &PodDisruptionBudgetSpec,
    path: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    if let (Some(min), Some(max)) = (&spec.min_available, &spec.max_unavailable) {
        errs.push(FieldError::invalid(
            path,
            format!(
                "{{minAvailable: {}, maxUnavailable: {}}}",
                int_or_string_display(min),
                int_or_string_display(max)
            ),
            BOTH_SET_MSG,
        ));
    }
    for (field, value) in [
        ("minAvailable", &spec.min_available),
        ("maxUnavailable", &spec.max_unavailable),
    ] {
        if let Some(v) = value {
            let p = child(path, field);
            errs.extend(validate_positive_int_or_percent(v, &p));
            errs.extend(is_not_more_than_100_percent(v, &p));
        }
    }
    if let Some(sel) = &spec.selector {
        errs.extend(validate_label_selector(sel, &child(path, "selector")));
    }
    if let Some(policy) = &spec.unhealthy_pod_eviction_policy {
        let supported = [
            unhealthy_pod_eviction_policies::ALWAYS_ALLOW,
            unhealthy_pod_eviction_policies::IF_HEALTHY_BUDGET,
        ];
        if !supported.contains(&policy.as_str()) {
            errs.push(FieldError::not_supported(
                child(path, "unhealthyPodEvictionPolicy"),
                policy,
                &supported,
            ));
        }
    }
    errs
}

/// Upstream `ValidatePodDisruptionBudget` (namespaced, name a DNS subdomain).
pub fn validate_pod_disruption_budget(pdb: &PodDisruptionBudget) -> ErrorList {
    let mut errs = validate_object_meta(&pdb.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_pod_disruption_budget_spec(&pdb.spec, "spec"));
    errs
}

/// An update: metadata rules and the spec again (policy/v1 lets the spec change).
pub fn validate_pod_disruption_budget_update(
    new: &PodDisruptionBudget,
    old: &PodDisruptionBudget,
) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_pod_disruption_budget_spec(&new.spec, "spec"));
    errs
}

/// Upstream `ValidatePodDisruptionBudgetStatusUpdate`: the counters are not negative.
pub fn validate_pod_disruption_budget_status_update(
    new: &PodDisruptionBudget,
    old: &PodDisruptionBudget,
) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    let s = &new.status;
    errs.extend(nonnegative(
        "status.disruptionsAllowed",
        i64::from(s.disruptions_allowed),
    ));
    errs.extend(nonnegative(
        "status.currentHealthy",
        i64::from(s.current_healthy),
    ));
    errs.extend(nonnegative(
        "status.desiredHealthy",
        i64::from(s.desired_healthy),
    ));
    errs.extend(nonnegative(
        "status.expectedPods",
        i64::from(s.expected_pods),
    ));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::apps::IntOrString;
    use k8s_types::labels::LabelSelector;

    fn pdb() -> PodDisruptionBudget {
        let mut p = PodDisruptionBudget::default();
        p.metadata.name = "web".into();
        p.metadata.namespace = Some("default".into());
        p.spec.selector = Some(LabelSelector::from_labels([("app", "web")]));
        p
    }

    #[test]
    fn spec_errors_follow_upstream() {
        let mut p = pdb();
        p.spec.min_available = Some(IntOrString::Int(2));
        assert!(validate_pod_disruption_budget(&p).is_empty());
        p.spec.max_unavailable = Some(IntOrString::String("150%".into()));
        let errs: Vec<String> = validate_pod_disruption_budget(&p)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "spec: Invalid value: {minAvailable: 2, maxUnavailable: 150%}: minAvailable and maxUnavailable cannot be both set".to_string(),
                "spec.maxUnavailable: Invalid value: 150%: must not be greater than 100%".to_string(),
            ]
        );
        let mut p = pdb();
        p.spec.min_available = Some(IntOrString::Int(-1));
        p.spec.unhealthy_pod_eviction_policy = Some("Never".into());
        let errs: Vec<String> = validate_pod_disruption_budget(&p)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0".to_string(),
                "spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"".to_string(),
            ]
        );
    }

    #[test]
    fn negative_status_counters_are_invalid() {
        let old = pdb();
        let mut new = old.clone();
        new.status.disruptions_allowed = -1;
        let errs = validate_pod_disruption_budget_status_update(&new, &old);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "status.disruptionsAllowed");
    }
}
