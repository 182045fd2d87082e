//! PriorityClass validation (upstream `pkg/apis/scheduling/validation/validation.go`
//! `ValidatePriorityClass`, `ValidatePriorityClassUpdate`, and `pkg/apis/scheduling/v1/helpers.go`
//! `IsKnownSystemPriorityClass`): user classes are at most 1,000,000,000; the `system-` prefix is
//! reserved for the two built-in classes with their exact values.

use k8s_types::scheduling::{PriorityClass, HIGHEST_USER_DEFINABLE_PRIORITY};
use k8s_types::status::FieldError;

use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::pod_spec::validate_preemption_policy;
use super::{ErrorList, FIELD_IMMUTABLE_ERROR_MSG};

/// Upstream `SystemPriorityClassPrefix`.
pub const SYSTEM_PRIORITY_CLASS_PREFIX: &str = "system-";

/// The built-in classes (upstream `scheduling.SystemPriorityClasses()`): name and value; neither is
/// the global default.
pub const SYSTEM_PRIORITY_CLASSES: [(&str, i32); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// Upstream `IsKnownSystemPriorityClass`.
pub fn is_known_system_priority_class(
    name: &str,
    value: i32,
    global_default: bool,
) -> Result<(), String> {
    match SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _)| *n == name) {
        Some((n, v)) => {
            if *v != value {
                Err(format!("value of {n} PriorityClass must be {v}"))
            } else if global_default {
                Err(format!("globalDefault of {n} PriorityClass must be false"))
            } else {
                Ok(())
            }
        }
        None => Err(format!("{name} is not a known system priority class")),
    }
}

/// Upstream `ValidatePriorityClass`.
pub fn validate_priority_class(pc: &PriorityClass) -> ErrorList {
    let mut errs = validate_object_meta(&pc.metadata, false, name_is_dns_subdomain, "metadata");
    if pc.metadata.name.starts_with(SYSTEM_PRIORITY_CLASS_PREFIX) {
        if let Err(e) =
            is_known_system_priority_class(&pc.metadata.name, pc.value, pc.global_default)
        {
            errs.push(FieldError::forbidden(
                "metadata.name",
                format!("priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: {e}"),
            ));
        }
    } else if pc.value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errs.push(FieldError::forbidden(
            "value",
            format!("maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"),
        ));
    }
    if let Some(pp) = &pc.preemption_policy {
        errs.extend(validate_preemption_policy(pp, "preemptionPolicy"));
    }
    errs
}

/// Upstream `ValidatePriorityClassUpdate`: value and preemptionPolicy are immutable.
pub fn validate_priority_class_update(new: &PriorityClass, old: &PriorityClass) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    if new.value != old.value {
        errs.push(FieldError::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    if new.preemption_policy != old.preemption_policy {
        errs.push(FieldError::invalid(
            "preemptionPolicy",
            new.preemption_policy
                .as_deref()
                .map(super::gofmt::quote)
                .unwrap_or_else(|| "null".to_string()),
            FIELD_IMMUTABLE_ERROR_MSG,
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pc(name: &str, value: i32) -> PriorityClass {
        let mut pc = PriorityClass {
            value,
            ..Default::default()
        };
        pc.metadata.name = name.into();
        pc
    }

    #[test]
    fn user_classes_are_capped_at_one_billion() {
        assert!(validate_priority_class(&pc("high", 1_000_000_000)).is_empty());
        assert_eq!(
            validate_priority_class(&pc("higher", 1_000_000_001))[0].to_string(),
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
        );
    }

    #[test]
    fn system_prefix_is_reserved() {
        assert!(validate_priority_class(&pc("system-node-critical", 2_000_001_000)).is_empty());
        assert_eq!(
            validate_priority_class(&pc("system-foo", 1))[0].to_string(),
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-foo is not a known system priority class"
        );
    }
}
