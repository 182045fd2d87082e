//! The CustomResourceDefinition REST strategy: defaulting (upstream
//! `apiextensions/v1/defaults.go` `SetDefaults_CustomResourceDefinitionSpec`), validation (a
//! subset of `apiextensions/validation/validation.go` `ValidateCustomResourceDefinition`, with
//! upstream's paths and messages) and the status the naming and establishing controllers write
//! (`pkg/controller/status/naming_controller.go`, `establish/establishing_controller.go`),
//! written at create here because k8s-mini serves a CRD's resources at once.

use serde_json::{json, Value};

use k8s_types::apiextensions::CustomResourceDefinition;
use k8s_types::meta::tick_timestamp;
use k8s_types::object::Unstructured;
use k8s_types::status::FieldError;
use k8s_types::Tick;

use crate::validation::meta::validate_object_meta;
use crate::validation::names::{is_dns1123_subdomain, name_is_dns_subdomain};
use crate::validation::{invalid_str, ErrorList};

/// `SetDefaults_CustomResourceDefinitionSpec`: `names.singular` is the lowercased kind,
/// `names.listKind` is `<kind>List`.
pub fn default_crd(u: &mut Unstructured) {
    let Some(names) = u
        .rest
        .get_mut("spec")
        .and_then(|s| s.get_mut("names"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let kind = names
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let empty = |v: Option<&Value>| v.and_then(Value::as_str).is_none_or(str::is_empty);
    if empty(names.get("singular")) {
        names.insert("singular".into(), Value::String(kind.to_ascii_lowercase()));
    }
    if empty(names.get("listKind")) && !kind.is_empty() {
        names.insert("listKind".into(), Value::String(format!("{kind}List")));
    }
}

/// `ValidateCustomResourceDefinition` (the rules k8s-mini needs to serve a CRD): the name is
/// `<plural>.<group>`, the group a DNS subdomain with a dot, the scope `Cluster` or `Namespaced`,
/// exactly one storage version, unique version names, a schema per version, the names set.
pub fn validate_crd(u: &Unstructured) -> ErrorList {
    let crd = match CustomResourceDefinition::from_unstructured(u) {
        Some(Ok(crd)) => crd,
        Some(Err(e)) => {
            return vec![FieldError::invalid("spec", "", e)];
        }
        None => return Vec::new(),
    };
    let spec = &crd.spec;
    let mut errs = validate_object_meta(&u.metadata, false, name_is_dns_subdomain, "metadata");
    let required = format!("{}.{}", spec.names.plural, spec.group);
    if !u.metadata.name.is_empty() && u.metadata.name != required {
        errs.push(invalid_str(
            "metadata.name",
            &u.metadata.name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if spec.group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else if let msgs @ [_, ..] = is_dns1123_subdomain(&spec.group).as_slice() {
        errs.push(invalid_str("spec.group", &spec.group, msgs.join(",")));
    } else if !spec.group.contains('.') {
        errs.push(invalid_str(
            "spec.group",
            &spec.group,
            "should be a domain with at least one dot",
        ));
    }
    match spec.scope.as_str() {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            other,
            &["Cluster", "Namespaced"],
        )),
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut unique = true;
    for (i, v) in spec.versions.iter().enumerate() {
        unique &= seen.insert(v.name.as_str());
        let schema = v.schema.as_ref().and_then(|s| s.open_apiv3_schema.as_ref());
        if schema.is_none() {
            errs.push(FieldError::required(
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "schemas are required",
            ));
        }
    }
    // Upstream prints the whole `[]CustomResourceDefinitionVersion` with `%#v`; k8s-mini
    // abbreviates it (docs/fidelity.md).
    let versions_value = "[]apiextensions.CustomResourceDefinitionVersion{...}";
    if !unique {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions_value,
            "must contain unique version names",
        ));
    }
    if spec.versions.iter().filter(|v| v.storage).count() != 1 {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions_value,
            "must have exactly one version marked as storage version",
        ));
    }
    if spec.names.plural.is_empty() {
        errs.push(FieldError::required("spec.names.plural", ""));
    }
    if spec.names.singular.is_empty() {
        errs.push(FieldError::required("spec.names.singular", ""));
    }
    if spec.names.kind.is_empty() {
        errs.push(FieldError::required("spec.names.kind", ""));
    }
    if spec.names.list_kind.is_empty() {
        errs.push(FieldError::required("spec.names.listKind", ""));
    }
    errs
}

/// The status a served CRD has once upstream's naming and establishing controllers ran:
/// `acceptedNames` = `spec.names`, `NamesAccepted` (`NoConflicts`, `no conflicts found`) and
/// `Established` (`InitialNamesAccepted`, `the initial names have been accepted`) True,
/// `storedVersions` = the storage version.
pub fn initial_status(u: &mut Unstructured, now: Tick) {
    let spec = u.rest.get("spec").cloned().unwrap_or(Value::Null);
    let names = spec.get("names").cloned().unwrap_or_else(|| json!({}));
    let stored: Vec<Value> = spec
        .get("versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .filter_map(|v| v.get("name").cloned())
                .collect()
        })
        .unwrap_or_default();
    let at = tick_timestamp(now);
    u.rest.insert(
        "status".into(),
        json!({
            "acceptedNames": names,
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "lastTransitionTime": at,
                 "reason": "NoConflicts", "message": "no conflicts found"},
                {"type": "Established", "status": "True", "lastTransitionTime": at,
                 "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
            ],
            "storedVersions": stored
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(v: Value) -> Unstructured {
        let mut u: Unstructured = serde_json::from_value(v).unwrap();
        default_crd(&mut u);
        u
    }

    #[test]
    fn names_are_defaulted_and_checked() {
        let u = crd(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "pytorchjob.kubeflow.org"},
            "spec": {"group": "kubeflow.org", "scope": "Namespaced",
                "names": {"plural": "pytorchjobs", "kind": "PyTorchJob"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]}
        }));
        assert_eq!(u.rest["spec"]["names"]["singular"], "pytorchjob");
        assert_eq!(u.rest["spec"]["names"]["listKind"], "PyTorchJobList");
        let errs: Vec<String> = validate_crd(&u).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            vec![
                r#"metadata.name: Invalid value: "pytorchjob.kubeflow.org": must be spec.names.plural+"."+spec.group"#
            ]
        );
        let u = crd(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "xs.example"},
            "spec": {"group": "example", "scope": "Global", "names": {"plural": "xs", "kind": "X"},
                "versions": [{"name": "v1", "served": true, "storage": false}]}
        }));
        let errs: Vec<String> = validate_crd(&u).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            vec![
                r#"spec.group: Invalid value: "example": should be a domain with at least one dot"#,
                r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#,
                "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
                "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: must have exactly one version marked as storage version",
            ]
        );
    }
}
