//! The `ResourceQuota` admission plugin (upstream
//! `staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`
//! `checkRequest`, `prettyPrint`, `hasUsageStats`; registered last in kube-apiserver's chain). On
//! a create in a namespace with ResourceQuotas, for every quota (name order) whose `status.hard`
//! tracks something the object is counted in and whose scopes it is in:
//! - a pod must set what the quota constrains (`failed quota: NAME: must specify ...`);
//! - every tracked resource needs a `status.used` (`status unknown for quota: NAME, resources:
//!   ...`; a quota the controller has not synced yet has no `status.hard` and tracks nothing);
//! - `status.used + requested` must stay within `status.hard`, else Forbidden `exceeded quota:
//!   NAME, requested: ..., used: ..., limited: ...` (only the exceeded resources, `name=quantity`
//!   sorted);
//! - then the new usage is written to the quota's status before the object is stored (upstream's
//!   admission charges the quota, the controller recalculates it later).
//!
//! It runs after the validating plugins of [`super::AdmissionChain`] because it writes: the
//! apiserver calls [`evaluate`] last and stores what it returns (see `verbs/create.rs`).
//! Only creates are charged (upstream also charges a pod `resize` and some updates).

use std::collections::BTreeSet;

use k8s_types::core::ResourceQuota;
use k8s_types::object::Kind;
use k8s_types::quota::{
    add, less_than_or_equal, mask, matching_resources, object_usage, pod_constraints, pretty_print,
    quota_matches,
};
use k8s_types::status::Status;
use k8s_types::store::ObjectStore;
use k8s_types::{Object, Resource, Tick};

/// Upstream `PluginName`.
pub const PLUGIN_NAME: &str = "ResourceQuota";

/// The quotas of `obj`'s namespace with their new usage when `obj` is admitted, or the refusal.
///
/// # Errors
/// Forbidden as described in the module doc.
pub fn evaluate(
    obj: &Object,
    store: &dyn ObjectStore,
    now: Tick,
) -> Result<Vec<ResourceQuota>, Status> {
    let kind = obj.kind();
    if !kind.namespaced() {
        return Ok(Vec::new());
    }
    let prefix = Kind::ResourceQuota.key(obj.meta().namespace(), "");
    let quotas: Vec<&ResourceQuota> = store
        .list(&prefix)
        .into_iter()
        .filter_map(ResourceQuota::from_object_ref)
        .collect();
    if quotas.is_empty() {
        return Ok(Vec::new());
    }
    let mut interesting = Vec::new();
    for q in quotas {
        if !quota_matches(q, obj) {
            continue;
        }
        let tracked = matching_resources(&kind, q.status.hard.keys());
        if let Object::Pod(pod) = obj {
            if let Err(e) = pod_constraints(pod, &tracked) {
                let msg = format!("failed quota: {}: {e}", q.metadata.name);
                return Err(super::forbidden(obj, &msg));
            }
        }
        let unknown: Vec<&str> = tracked
            .iter()
            .filter(|r| !q.status.used.contains_key(*r))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            let msg = format!(
                "status unknown for quota: {}, resources: {}",
                q.metadata.name,
                unknown.join(",")
            );
            return Err(super::forbidden(obj, &msg));
        }
        interesting.push(q);
    }
    let delta = object_usage(obj, now);
    if delta.values().all(|v| v.is_zero()) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for q in interesting {
        let hard_names: BTreeSet<String> = q.status.hard.keys().cloned().collect();
        let requested = mask(&delta, &hard_names);
        let new_usage = add(&q.status.used, &requested);
        let requested_names: BTreeSet<String> = requested.keys().cloned().collect();
        let (ok, exceeded) =
            less_than_or_equal(&mask(&new_usage, &requested_names), &q.status.hard);
        if !ok {
            let msg = format!(
                "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                q.metadata.name,
                pretty_print(&mask(&requested, &exceeded)),
                pretty_print(&mask(&q.status.used, &exceeded)),
                pretty_print(&mask(&q.status.hard, &exceeded)),
            );
            return Err(super::forbidden(obj, &msg));
        }
        let mut charged = q.clone();
        charged.status.used = new_usage;
        out.push(charged);
    }
    Ok(out)
}
