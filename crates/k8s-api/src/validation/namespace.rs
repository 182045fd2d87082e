//! Namespace validation (upstream `pkg/apis/core/validation/validation.go` `ValidateNamespace`,
//! `validateFinalizerName`): the name is a DNS-1123 label, spec finalizers are standard
//! (`kubernetes`) or domain-qualified.

use k8s_types::core::Namespace;

use super::meta::validate_object_meta;
use super::names::{is_qualified_name, name_is_dns_label};
use super::{invalid_each, invalid_str, ErrorList};

/// Upstream `ValidateNamespace`.
pub fn validate_namespace(ns: &Namespace) -> ErrorList {
    let mut errs = validate_object_meta(&ns.metadata, false, name_is_dns_label, "metadata");
    let finalizers = ns
        .spec
        .as_ref()
        .and_then(|s| s.get("finalizers"))
        .and_then(|f| f.as_array())
        .cloned()
        .unwrap_or_default();
    for f in finalizers.iter().filter_map(|f| f.as_str()) {
        errs.extend(invalid_each("spec.finalizers", f, is_qualified_name(f)));
        if !f.contains('/') && f != "kubernetes" {
            errs.push(invalid_str(
                "spec.finalizers",
                f,
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names_are_dns_labels() {
        let mut ns = Namespace::default();
        ns.metadata.name = "team.a".into();
        assert_eq!(
            validate_namespace(&ns)[0].to_string(),
            "metadata.name: Invalid value: \"team.a\": must not contain dots"
        );
    }
}
