//! Namespace strategy (upstream `pkg/registry/core/namespace/strategy.go`): create sets
//! `status.phase: Active` and makes sure `spec.finalizers` holds `kubernetes`; update keeps the
//! stored spec finalizers and status (they change only through `/finalize` and `/status`).

use k8s_types::core::Namespace;
use serde_json::{json, Value};

/// Upstream `v1.FinalizerKubernetes`.
pub const FINALIZER_KUBERNETES: &str = "kubernetes";
/// Upstream `v1.NamespaceActive`.
pub const PHASE_ACTIVE: &str = "Active";
/// Upstream `v1.NamespaceTerminating`.
pub const PHASE_TERMINATING: &str = "Terminating";

/// Upstream `namespaceStrategy.PrepareForCreate`.
pub fn prepare_for_create(ns: &mut Namespace) {
    ns.status = Some(json!({ "phase": PHASE_ACTIVE }));
    let mut spec = match ns.spec.take() {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let mut finalizers: Vec<Value> = spec
        .get("finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == FINALIZER_KUBERNETES) {
        finalizers.push(Value::String(FINALIZER_KUBERNETES.to_string()));
    }
    spec.insert("finalizers".to_string(), Value::Array(finalizers));
    ns.spec = Some(Value::Object(spec));
}

/// Upstream `namespaceStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut Namespace, old: &Namespace) {
    new.spec.clone_from(&old.spec);
    new.status.clone_from(&old.status);
}

/// True when the namespace is being deleted (`deletionTimestamp` set or phase `Terminating`).
pub fn is_terminating(ns: &Namespace) -> bool {
    ns.metadata.deletion_timestamp.is_some()
        || ns
            .status
            .as_ref()
            .and_then(|s| s.get("phase"))
            .and_then(Value::as_str)
            == Some(PHASE_TERMINATING)
}
