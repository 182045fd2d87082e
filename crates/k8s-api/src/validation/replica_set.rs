//! ReplicaSet validation (upstream `pkg/apis/apps/validation/validation.go` `ValidateReplicaSet`,
//! `ValidateReplicaSetSpec`, `ValidateReplicaSetUpdate`, `ValidateReplicaSetStatus`; the apps/v1
//! selector immutability check of `pkg/registry/apps/replicaset/strategy.go`).

use k8s_types::apps::{ReplicaSet, ReplicaSetSpec, ReplicaSetStatus};
use k8s_types::status::FieldError;

use super::deployment::GREATER_THAN_REPLICAS_MSG;
use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::template::validate_selector_and_template;
use super::template::validate_selector_unchanged;
use super::{child, nonnegative, ErrorList};

/// Upstream `ValidateReplicaSetSpec`, at `spec`.
pub fn validate_replica_set_spec(spec: &ReplicaSetSpec, path: &str) -> ErrorList {
    let mut errs = nonnegative(
        &child(path, "replicas"),
        i64::from(spec.replicas.unwrap_or(0)),
    );
    errs.extend(nonnegative(
        &child(path, "minReadySeconds"),
        i64::from(spec.min_ready_seconds.unwrap_or(0)),
    ));
    errs.extend(validate_selector_and_template(
        spec.selector.as_ref(),
        &spec.template,
        path,
    ));
    errs
}

/// Upstream `ValidateReplicaSet`.
pub fn validate_replica_set(rs: &ReplicaSet) -> ErrorList {
    let mut errs = validate_object_meta(&rs.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_replica_set_spec(&rs.spec, "spec"));
    errs
}

/// Upstream `ValidateReplicaSetUpdate` plus apps/v1's immutable `spec.selector`.
pub fn validate_replica_set_update(new: &ReplicaSet, old: &ReplicaSet) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_replica_set_spec(&new.spec, "spec"));
    errs.extend(validate_selector_unchanged(
        new.spec.selector.as_ref(),
        old.spec.selector.as_ref(),
        "spec",
    ));
    errs
}

/// Upstream `ValidateReplicaSetStatus`.
pub fn validate_replica_set_status(s: &ReplicaSetStatus, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    for (field, v) in [
        ("replicas", s.replicas),
        ("fullyLabeledReplicas", s.fully_labeled_replicas),
        ("readyReplicas", s.ready_replicas),
        ("availableReplicas", s.available_replicas),
    ] {
        errs.extend(nonnegative(&child(path, field), i64::from(v)));
    }
    errs.extend(nonnegative(
        &child(path, "observedGeneration"),
        s.observed_generation.unwrap_or(0),
    ));
    for (field, v) in [
        ("fullyLabeledReplicas", s.fully_labeled_replicas),
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

/// Upstream `ValidateReplicaSetStatusUpdate`.
pub fn validate_replica_set_status_update(new: &ReplicaSet, old: &ReplicaSet) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_replica_set_status(&new.status, "status"));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_replicas_and_empty_selector() {
        let spec = ReplicaSetSpec {
            replicas: Some(-1),
            selector: Some(Default::default()),
            ..Default::default()
        };
        let errs: Vec<String> = validate_replica_set_spec(&spec, "spec")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs[0],
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(
            errs[1],
            "spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}: empty selector is invalid for deployment"
        );
    }
}
