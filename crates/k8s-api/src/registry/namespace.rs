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

/// `spec.finalizers` of a namespace (empty when absent).
pub fn spec_finalizers(ns: &Namespace) -> Vec<String> {
    ns.spec
        .as_ref()
        .and_then(|s| s.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The first `delete` of a namespace (upstream `pkg/registry/core/namespace/storage/storage.go`
/// `REST.Delete`, "upon first request to delete, we switch the phase to start namespace
/// termination"): sets `deletionTimestamp` (when unset) and `status.phase: Terminating`, keeping
/// the rest of the status (conditions).
pub fn begin_termination(ns: &mut Namespace, deletion_timestamp: String) {
    if ns.metadata.deletion_timestamp.is_none() {
        ns.metadata.deletion_timestamp = Some(deletion_timestamp.into());
    }
    let mut status = match ns.status.take() {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    status.insert(
        "phase".to_string(),
        Value::String(PHASE_TERMINATING.to_string()),
    );
    ns.status = Some(Value::Object(status));
}

/// The `namespaces/finalize` subresource's strategy (upstream `namespaceFinalizeStrategy`
/// `PrepareForUpdate`): only `spec.finalizers` is taken from the request; metadata and status stay
/// as stored.
pub fn prepare_for_finalize(request: &Namespace, stored: &Namespace) -> Namespace {
    let mut out = stored.clone();
    let mut spec = match out.spec.take() {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let finalizers: Vec<Value> = spec_finalizers(request)
        .into_iter()
        .map(Value::String)
        .collect();
    spec.insert("finalizers".to_string(), Value::Array(finalizers));
    out.spec = Some(Value::Object(spec));
    out
}

/// Upstream `ShouldDeleteNamespaceDuringUpdate`: an update that leaves a namespace being deleted
/// with neither spec nor metadata finalizers removes it from storage.
pub fn should_delete_during_update(ns: &Namespace) -> bool {
    ns.metadata.deletion_timestamp.is_some()
        && spec_finalizers(ns).is_empty()
        && ns.metadata.finalizers.is_empty()
}
