//! ControllerRevision validation (upstream `pkg/apis/apps/validation/validation.go`:
//! `ValidateControllerRevision`, `ValidateControllerRevisionUpdate`): namespaced, the name a DNS
//! subdomain (`ValidateControllerRevisionName`), `data` required ("data is mandatory"),
//! `revision` not negative, and `data` immutable.

use k8s_types::apps::ControllerRevision;
use k8s_types::status::FieldError;

use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::{ErrorList, FIELD_IMMUTABLE_ERROR_MSG};

/// Upstream `ValidateControllerRevision`.
pub fn validate_controller_revision(cr: &ControllerRevision) -> ErrorList {
    let mut errs = validate_object_meta(&cr.metadata, true, name_is_dns_subdomain, "metadata");
    if cr.data.as_ref().is_none_or(serde_json::Value::is_null) {
        errs.push(FieldError::required("data", "data is mandatory"));
    }
    // Upstream `ValidateNonnegativeField`.
    if cr.revision < 0 {
        errs.push(FieldError::invalid(
            "revision",
            cr.revision.to_string(),
            "must be greater than or equal to 0",
        ));
    }
    errs
}

/// Upstream `ValidateControllerRevisionUpdate`: metadata update rules, the create rules, and
/// `data` may not change (upstream `ValidateImmutableField`; the value is printed as the new
/// data's JSON).
pub fn validate_controller_revision_update(
    new: &ControllerRevision,
    old: &ControllerRevision,
) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_controller_revision(new));
    if new.data != old.data {
        let shown = new
            .data
            .as_ref()
            .map_or_else(String::new, ToString::to_string);
        errs.push(FieldError::invalid(
            "data",
            shown,
            FIELD_IMMUTABLE_ERROR_MSG,
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revision() -> ControllerRevision {
        let mut cr = ControllerRevision::default();
        cr.metadata.name = "web-7b9c5d4f8".into();
        cr.metadata.namespace = Some("default".into());
        cr.data = Some(serde_json::json!({"spec": {"template": {"$patch": "replace"}}}));
        cr.revision = 1;
        cr
    }

    #[test]
    fn data_is_mandatory_and_revision_not_negative() {
        assert!(validate_controller_revision(&revision()).is_empty());
        let mut cr = revision();
        cr.data = None;
        cr.revision = -1;
        let msgs: Vec<String> = validate_controller_revision(&cr)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            msgs,
            vec![
                "data: Required value: data is mandatory".to_string(),
                "revision: Invalid value: -1: must be greater than or equal to 0".to_string(),
            ]
        );
    }

    #[test]
    fn data_is_immutable_but_revision_may_change() {
        let old = revision();
        let mut bumped = old.clone();
        bumped.revision = 3;
        assert!(validate_controller_revision_update(&bumped, &old).is_empty());
        let mut changed = old.clone();
        changed.data = Some(serde_json::json!({"spec": {}}));
        let msgs: Vec<String> = validate_controller_revision_update(&changed, &old)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            msgs,
            vec![r#"data: Invalid value: {"spec":{}}: field is immutable"#.to_string()]
        );
    }
}
