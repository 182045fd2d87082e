//! Kinds k8s-mini stores without a type (Services, ConfigMaps, custom resources): treated as having
//! no status subresource, so an update replaces the whole object and a `/status` update copies only
//! the top-level `status` field.

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
