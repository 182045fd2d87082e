//! PodGroup validation. PodGroup is a CustomResource (kubernetes-sigs/scheduler-plugins
//! `apis/scheduling/v1alpha1/types.go`, CRD `podgroups.scheduling.x-k8s.io`): the apiserver checks
//! the name like any custom resource (a DNS-1123 subdomain) and the OpenAPI schema, whose only
//! constraint k8s-mini can violate is `spec.minMember` `minimum: 1`. `minMember` is `omitempty`, so
//! 0 means "not set" and is not checked; negative values fail with the OpenAPI validator's wording.

use k8s_types::scheduling::PodGroup;
use k8s_types::status::FieldError;

use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::ErrorList;

fn validate_spec(pg: &PodGroup) -> ErrorList {
    if pg.spec.min_member < 0 {
        vec![FieldError::invalid(
            "spec.minMember",
            pg.spec.min_member.to_string(),
            "spec.minMember in body should be greater than or equal to 1",
        )]
    } else {
        Vec::new()
    }
}

/// Validation of a new PodGroup.
pub fn validate_pod_group(pg: &PodGroup) -> ErrorList {
    let mut errs = validate_object_meta(&pg.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_spec(pg));
    errs
}

/// Validation of a PodGroup update.
pub fn validate_pod_group_update(new: &PodGroup, old: &PodGroup) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_spec(new));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_min_member_is_rejected() {
        let mut pg = PodGroup::default();
        pg.metadata.name = "gang".into();
        pg.metadata.namespace = Some("default".into());
        pg.spec.min_member = -1;
        assert_eq!(
            validate_pod_group(&pg)[0].to_string(),
            "spec.minMember: Invalid value: -1: spec.minMember in body should be greater than or equal to 1"
        );
        pg.spec.min_member = 0;
        assert!(validate_pod_group(&pg).is_empty());
    }
}
