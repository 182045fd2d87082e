//! Kinds k8s-mini stores without a type (ConfigMaps, custom resources, ...): a `/status` update
//! copies only the top-level `status` field. An update of the main resource replaces the whole
//! object, except that a custom resource whose CRD version has the `status` subresource keeps its
//! stored status (`verbs/update.rs`, upstream `customResourceStrategy.PrepareForUpdate`).

use k8s_types::object::Unstructured;

/// `/status` update of an untyped object: `status` from `new`, everything else kept.
pub fn copy_status(old: &mut Unstructured, new: &Unstructured) {
    match new.rest.get("status") {
        Some(s) => {
            old.rest.insert("status".to_string(), s.clone());
        }
        None => {
            old.rest.remove("status");
        }
    }
}
