//! `v1` Event validation (upstream `pkg/apis/core/validation/events.go` `ValidateEventCreate`,
//! whose `v1` path only runs `legacyValidateEvent`, followed by the generic metadata check of
//! `k8s.io/apiserver/pkg/registry/rest/create.go` `BeforeCreate` with path-segment names): the
//! involved object's namespace must match the event's (cluster-scoped objects' events live in
//! `default`), and the event namespace must be a DNS-1123 subdomain.

use k8s_types::core::Event;

use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::{is_dns1123_subdomain, name_is_path_segment};
use super::{invalid_each, invalid_str, ErrorList};

/// Upstream message when the namespaces disagree.
pub const NAMESPACE_MISMATCH_MSG: &str = "does not match event.namespace";

fn legacy_validate(e: &Event) -> ErrorList {
    let mut errs = Vec::new();
    let ns = e.metadata.namespace();
    let involved = e.involved_object.namespace.as_str();
    let ok = if involved.is_empty() {
        ns.is_empty() || ns == "default"
    } else {
        ns == involved
    };
    if !ok {
        errs.push(invalid_str(
            "involvedObject.namespace",
            involved,
            NAMESPACE_MISMATCH_MSG,
        ));
    }
    errs.extend(invalid_each("namespace", ns, is_dns1123_subdomain(ns)));
    errs
}

/// Validation of a new Event: the legacy checks, then (if they pass) generic metadata.
pub fn validate_event(e: &Event) -> ErrorList {
    let errs = legacy_validate(e);
    if !errs.is_empty() {
        return errs;
    }
    validate_object_meta(&e.metadata, true, name_is_path_segment, "metadata")
}

/// Validation of an Event update.
pub fn validate_event_update(new: &Event, old: &Event) -> ErrorList {
    let mut errs = legacy_validate(new);
    errs.extend(validate_object_meta_update(
        &new.metadata,
        &old.metadata,
        "metadata",
    ));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn involved_namespace_must_match() {
        let mut e = Event::default();
        e.metadata.name = "web.1".into();
        e.metadata.namespace = Some("prod".into());
        e.involved_object.namespace = "default".into();
        assert_eq!(
            validate_event(&e)[0].to_string(),
            "involvedObject.namespace: Invalid value: \"default\": does not match event.namespace"
        );
        e.involved_object.namespace = Default::default();
        e.metadata.namespace = Some("default".into());
        assert!(validate_event(&e).is_empty());
    }
}
