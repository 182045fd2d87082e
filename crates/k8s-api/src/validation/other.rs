//! Validation of kinds k8s-mini keeps but does not type (Services, ConfigMaps, custom resources):
//! only upstream's generic metadata check from `k8s.io/apiserver/pkg/registry/rest/create.go`
//! `BeforeCreate` (`ValidateObjectMetaAccessor` with `path.ValidatePathSegmentName`): a name is
//! required and may not be `.`/`..` or contain `/` or `%`. Kind-specific rules (e.g. a Service name
//! being a DNS-1035 label) are not applied.

use k8s_types::object::Unstructured;

use super::meta::validate_object_meta;
use super::names::name_is_path_segment;
use super::ErrorList;

/// Validation of a new untyped object.
pub fn validate_other(u: &Unstructured, namespaced: bool) -> ErrorList {
    validate_object_meta(&u.metadata, namespaced, name_is_path_segment, "metadata")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slashes_are_not_allowed_in_names() {
        let mut u = Unstructured::default();
        u.metadata.name = "a/b".into();
        u.metadata.namespace = Some("default".into());
        assert_eq!(
            validate_other(&u, true)[0].to_string(),
            "metadata.name: Invalid value: \"a/b\": may not contain '/'"
        );
    }
}
