//! Object metadata on create and update (upstream `k8s.io/apimachinery/pkg/api/validation/
//! objectmeta.go` `ValidateObjectMetaAccessor`, `ValidateObjectMetaAccessorUpdate`,
//! `ValidateAnnotations`, `ValidateOwnerReferences`, `ValidateFinalizers`).

use k8s_types::meta::{ObjectMeta, OwnerReference};
use k8s_types::status::FieldError;

use super::labels::validate_labels;
use super::names::{is_qualified_name, name_is_dns_label};
use super::{child, child_unless_empty, invalid_each, nonnegative, ErrorList};

/// A name rule: `(name, is_generate_name_prefix) -> messages` (upstream `ValidateNameFunc`).
pub type NameFn = fn(&str, bool) -> Vec<String>;

/// Upstream message for a missing name.
pub const NAME_REQUIRED_MSG: &str = "name or generateName is required";

/// Upstream `ValidateObjectMeta(meta, requiresNamespace, nameFn, path)`.
pub fn validate_object_meta(
    meta: &ObjectMeta,
    namespaced: bool,
    name_fn: NameFn,
    path: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    if let Some(gn) = meta.generate_name.as_deref().filter(|g| !g.is_empty()) {
        errs.extend(invalid_each_child(
            path,
            "generateName",
            gn,
            name_fn(gn, true),
        ));
    }
    if meta.name.is_empty() {
        errs.push(FieldError::required(child(path, "name"), NAME_REQUIRED_MSG));
    } else {
        errs.extend(invalid_each_child(
            path,
            "name",
            &meta.name,
            name_fn(&meta.name, false),
        ));
    }
    errs.extend(validate_common(meta, namespaced, path));
    errs
}

fn validate_common(meta: &ObjectMeta, namespaced: bool, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let ns = meta.namespace();
    if namespaced {
        if ns.is_empty() {
            errs.push(FieldError::required(child(path, "namespace"), ""));
        } else {
            errs.extend(invalid_each_child(
                path,
                "namespace",
                ns,
                name_is_dns_label(ns, false),
            ));
        }
    } else if !ns.is_empty() {
        errs.push(FieldError::forbidden(
            child(path, "namespace"),
            "not allowed on this type",
        ));
    }
    let generation = meta.generation.unwrap_or(0);
    if generation < 0 {
        errs.extend(nonnegative(&child(path, "generation"), generation));
    }
    validate_meta_lists(meta, path, &mut errs);
    errs
}

/// Labels, annotations, owner references and finalizers, each under its own field path. A path
/// is built only for a field that has entries (an empty one cannot be invalid): every create and
/// update runs this, and most objects have no annotations, owners or finalizers.
fn validate_meta_lists(meta: &ObjectMeta, path: &str, errs: &mut ErrorList) {
    let labels = &meta.labels;
    errs.extend(child_unless_empty(labels.is_empty(), path, "labels", |p| {
        validate_labels(labels, p)
    }));
    errs.extend(child_unless_empty(
        meta.annotations.is_empty(),
        path,
        "annotations",
        |p| validate_annotations(meta, p),
    ));
    let owners = &meta.owner_references;
    errs.extend(child_unless_empty(
        owners.is_empty(),
        path,
        "ownerReferences",
        |p| validate_owner_references(owners, p),
    ));
    let finalizers = &meta.finalizers;
    errs.extend(child_unless_empty(
        finalizers.is_empty(),
        path,
        "finalizers",
        |p| validate_finalizers(finalizers, p),
    ));
}

/// [`invalid_each`] at `path.name`; the path is built only when there is a message.
fn invalid_each_child(path: &str, name: &str, value: &str, msgs: Vec<String>) -> ErrorList {
    if msgs.is_empty() {
        return Vec::new();
    }
    invalid_each(&child(path, name), value, msgs)
}

/// Upstream `ValidateAnnotations` (keys are qualified names, case-insensitively). The 256 KiB total
/// size limit is not checked.
pub fn validate_annotations(meta: &ObjectMeta, path: &str) -> ErrorList {
    meta.annotations
        .keys()
        .flat_map(|k| invalid_each(path, k, is_qualified_name(&k.to_ascii_lowercase())))
        .collect()
}

/// Upstream `ValidateOwnerReferences`: apiVersion, kind, name and uid are required, and at most
/// one reference may be the controller.
pub fn validate_owner_references(refs: &[OwnerReference], path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let mut first_controller: Option<&OwnerReference> = None;
    for r in refs {
        let version = r
            .api_version
            .rsplit_once('/')
            .map(|(_, v)| v)
            .unwrap_or(&r.api_version);
        if version.is_empty() {
            errs.push(super::invalid_str(
                child(path, "apiVersion"),
                &r.api_version,
                "version must not be empty",
            ));
        }
        for (field, value) in [("kind", &r.kind), ("name", &r.name), ("uid", &r.uid)] {
            if value.is_empty() {
                errs.push(super::invalid_str(
                    child(path, field),
                    value,
                    "must not be empty",
                ));
            }
        }
        if r.controller == Some(true) {
            match first_controller {
                Some(first) => errs.push(FieldError::invalid(
                    path,
                    "[]v1.OwnerReference{...}",
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {}/{} and {}/{}",
                        first.kind, first.name, r.kind, r.name
                    ),
                )),
                None => first_controller = Some(r),
            }
        }
    }
    errs
}

/// Upstream `ValidateFinalizers` (names are qualified names).
pub fn validate_finalizers(finalizers: &[String], path: &str) -> ErrorList {
    finalizers
        .iter()
        .flat_map(|f| invalid_each(path, f, is_qualified_name(f)))
        .collect()
}

/// Upstream `ValidateObjectMetaAccessorUpdate`. The apiserver copies the immutable system fields
/// (uid, creationTimestamp, deletion fields, generation) from the stored object before validating,
/// and name/namespace select the stored object, so the immutability checks cannot fail here; what
/// remains is the syntax of labels, annotations, owner references and finalizers, and the rule that
/// no finalizer may be added once deletion has started.
pub fn validate_object_meta_update(new: &ObjectMeta, old: &ObjectMeta, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if old.deletion_timestamp.is_some() {
        let mut extra: Vec<&String> = new
            .finalizers
            .iter()
            .filter(|f| !old.finalizers.contains(f))
            .collect();
        extra.sort();
        extra.dedup();
        if !extra.is_empty() {
            let list = extra
                .iter()
                .map(|f| super::gofmt::quote(f))
                .collect::<Vec<_>>()
                .join(", ");
            errs.push(FieldError::forbidden(
                child(path, "finalizers"),
                format!("no new finalizers can be added if the object is being deleted, found new finalizers []string{{{list}}}"),
            ));
        }
    }
    validate_meta_lists(new, path, &mut errs);
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::names::name_is_dns_subdomain;

    #[test]
    fn name_is_required_unless_generate_name() {
        let meta = ObjectMeta {
            namespace: Some("default".into()),
            ..Default::default()
        };
        let errs = validate_object_meta(&meta, true, name_is_dns_subdomain, "metadata");
        assert_eq!(
            errs[0].to_string(),
            "metadata.name: Required value: name or generateName is required"
        );
    }

    #[test]
    fn owner_references_need_uid_and_a_single_controller() {
        let r = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "web".into(),
            uid: String::new(),
            controller: Some(true),
            block_owner_deletion: None,
        };
        let second = OwnerReference {
            name: "api".into(),
            uid: "u2".into(),
            ..r.clone()
        };
        let errs = validate_owner_references(&[r, second], "metadata.ownerReferences");
        assert_eq!(
            errs[0].to_string(),
            "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty"
        );
        // Upstream names the first controller reference, then the one that repeats it.
        assert_eq!(
            errs[1].detail,
            "Only one reference can have Controller set to true. Found \"true\" in references \
             for ReplicaSet/web and ReplicaSet/api"
        );
    }
}
