//! RuntimeClass validation (upstream `pkg/apis/node/validation/validation.go`
//! `ValidateRuntimeClass`, `validateOverhead`, `validateScheduling`): the name a DNS subdomain,
//! `handler` a DNS label, overhead quantities not negative (the scheduling tolerations are not
//! validated).

use k8s_types::node::RuntimeClass;

use super::meta::validate_object_meta;
use super::names::{is_dns1123_label, name_is_dns_subdomain};
use super::resources::validate_resource_quantity_value;
use super::{invalid_each, key, ErrorList};

/// Upstream `ValidateRuntimeClass`.
pub fn validate_runtime_class(rc: &RuntimeClass) -> ErrorList {
    let mut errs = validate_object_meta(&rc.metadata, false, name_is_dns_subdomain, "metadata");
    errs.extend(invalid_each(
        "handler",
        &rc.handler,
        is_dns1123_label(&rc.handler),
    ));
    if let Some(o) = &rc.overhead {
        for (k, v) in &o.pod_fixed {
            errs.extend(validate_resource_quantity_value(
                k,
                v,
                &key("overhead.podFixed", k),
            ));
        }
    }
    errs
}
