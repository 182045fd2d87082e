//! Admission: the plugins kube-apiserver runs around validation, each in its own file under its
//! upstream name, and the [`chain::AdmissionChain`] that runs them in registration order (mutating
//! plugins before validation, validating plugins after it; upstream
//! `k8s.io/apiserver/pkg/admission/chain.go`).
//!
//! Default chain (upstream's recommended order, restricted to what k8s-mini simulates):
//! - validating: [`namespace_lifecycle::NamespaceLifecycle`], [`limit_ranger::LimitRanger`]
//!   (min/max/ratio), [`priority::Priority`] (PriorityClass checks),
//!   [`runtime_class::RuntimeClassPlugin`] (the pod's overhead is its class's), then
//!   [`resource_quota`] (run by the apiserver itself, last, because it charges the quotas);
//! - mutating: [`limit_ranger::LimitRanger`] (default requests and limits),
//!   [`priority::Priority`] (resolves a pod's priority),
//!   [`default_toleration_seconds::DefaultTolerationSeconds`] (300 s not-ready / unreachable
//!   tolerations), [`runtime_class::RuntimeClassPlugin`] (overhead, node selector, tolerations).
//!
//! Defaulting is not a plugin: upstream applies defaults while decoding the request, before any
//! admission, and so does the apiserver here (see [`crate::defaults`]).

pub mod chain;
pub mod default_toleration_seconds;
pub mod limit_ranger;
pub mod namespace_lifecycle;
pub mod priority;
pub mod resource_quota;
pub mod runtime_class;

use k8s_types::meta::ObjectMeta;
use k8s_types::object::Kind;
use k8s_types::status::Status;
use k8s_types::Object;

pub use chain::AdmissionChain;

/// Upstream `admission.NewForbidden`: `<resource> "<name>" is forbidden: <cause>`, where the name
/// is the object's name, else its generateName (admission runs before names are generated), else
/// `Unknown`.
pub fn forbidden(obj: &Object, cause: &str) -> Status {
    forbidden_meta(&obj.kind(), obj.meta(), cause)
}

/// [`forbidden`] for an object known by its kind and metadata.
pub fn forbidden_meta(kind: &Kind, meta: &ObjectMeta, cause: &str) -> Status {
    let name = if !meta.name.is_empty() {
        meta.name.as_str()
    } else {
        match meta.generate_name.as_deref() {
            Some(g) if !g.is_empty() => g,
            _ => "Unknown",
        }
    };
    crate::errors::forbidden(kind, name, cause)
}
