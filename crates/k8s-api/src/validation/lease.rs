//! Lease validation (upstream `pkg/apis/coordination/validation/validation.go`: `ValidateLease`,
//! `ValidateLeaseUpdate`, `ValidateLeaseSpec`): namespaced, the name a DNS subdomain,
//! `leaseDurationSeconds` greater than 0 and `leaseTransitions` not negative when set.

use k8s_types::coordination::{Lease, LeaseSpec};
use k8s_types::status::FieldError;

use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::ErrorList;

/// Upstream `ValidateLeaseSpec`.
pub fn validate_lease_spec(spec: &LeaseSpec, path: &str) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(d) = spec.lease_duration_seconds.filter(|d| *d <= 0) {
        errs.push(FieldError::invalid(
            format!("{path}.leaseDurationSeconds"),
            d.to_string(),
            "must be greater than 0",
        ));
    }
    if let Some(t) = spec.lease_transitions.filter(|t| *t < 0) {
        errs.push(FieldError::invalid(
            format!("{path}.leaseTransitions"),
            t.to_string(),
            "must be greater than or equal to 0",
        ));
    }
    errs
}

/// Upstream `ValidateLease`.
pub fn validate_lease(lease: &Lease) -> ErrorList {
    let mut errs = validate_object_meta(&lease.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_lease_spec(&lease.spec, "spec"));
    errs
}

/// Upstream `ValidateLeaseUpdate`.
pub fn validate_lease_update(new: &Lease, old: &Lease) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_lease_spec(&new.spec, "spec"));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_and_transitions_are_checked() {
        let mut l = Lease::default();
        l.metadata.name = "node-a".into();
        l.metadata.namespace = Some("kube-node-lease".into());
        assert!(validate_lease(&l).is_empty());
        l.spec.lease_duration_seconds = Some(0);
        l.spec.lease_transitions = Some(-1);
        let msgs: Vec<String> = validate_lease(&l).iter().map(ToString::to_string).collect();
        assert_eq!(
            msgs,
            vec![
                "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
                "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
    }
}
