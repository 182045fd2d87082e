//! Deleting a namespace's content, after upstream
//! `pkg/controller/namespace/deletion/namespaced_resources_deleter.go` (`Delete`,
//! `deleteAllContent`, `deleteAllContentForGroupVersionResource`, `estimateGracefulTermination`,
//! `estimateGracefulTerminationForPods`, `finalizeNamespace`).
//!
//! For every namespaced kind the apiserver serves (k8s-mini: its typed kinds, in
//! [`Kind::ALL`] order; upstream walks discovery's resources in map order), the objects of the
//! namespace are deleted one by one (upstream first tries `deletecollection`, which deletes each
//! pod gracefully just the same) and listed again. For pods, the estimate is the longest
//! `terminationGracePeriodSeconds` of the non-terminal pods, or 0 once that long has passed since
//! the namespace's `deletionTimestamp`. Objects still there with an estimate, or with finalizers
//! (15 s), are "remaining"; objects still there with neither are an error (`unexpected items still
//! remain in namespace: NS for gvr: GROUP/VERSION, Resource=RESOURCE`). The conditions are written
//! when they change; with nothing left the `kubernetes` finalizer is removed through
//! `namespaces/finalize`, which removes the namespace.

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::core::{phases, Namespace, Pod};
use k8s_types::meta::{tick_timestamp, timestamp_tick};
use k8s_types::{Kind, Object, Resource, Tick};
use serde_json::Value;

use super::status_conditions::{content_totals, delete_content_failure, update_conditions};

/// Upstream `finalizerEstimateSeconds`: the wait assumed for objects held by finalizers.
pub const FINALIZER_ESTIMATE_SECONDS: i64 = 15;
/// Upstream `v1.FinalizerKubernetes`, the token this controller removes.
pub const FINALIZER_KUBERNETES: &str = "kubernetes";

/// What one pass over a namespace's content found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Upstream `estimate`: seconds before the remaining content is expected gone (0: none left,
    /// or nothing to wait for).
    pub estimate: i64,
    /// Upstream's aggregated errors, in kind order.
    pub errors: Vec<String>,
}

/// `resource.group` as upstream's `ProcessContentTotals` prints it (`pods.`, `deployments.apps`).
pub fn group_resource(kind: &Kind) -> String {
    format!("{}.{}", kind.plural(), kind.group())
}

/// `schema.GroupVersionResource.String()`: `apps/v1, Resource=deployments`, `/v1, Resource=pods`.
pub fn gvr_string(kind: &Kind) -> String {
    let version = kind
        .api_version()
        .rsplit_once('/')
        .map_or(kind.api_version(), |(_, v)| v);
    format!("{}/{version}, Resource={}", kind.group(), kind.plural())
}

/// Upstream `estimateGracefulTerminationForPods` + the elapsed check of
/// `estimateGracefulTermination`.
pub fn pod_estimate(pods: &[&Pod], deleted_at: Tick, now: Tick) -> i64 {
    let estimate = pods
        .iter()
        .filter(|p| {
            let phase = p.status.phase.as_deref().unwrap_or("");
            phase != phases::SUCCEEDED && phase != phases::FAILED
        })
        .filter_map(|p| p.spec.termination_grace_period_seconds)
        .max()
        .unwrap_or(0)
        .max(0);
    let elapsed = now.saturating_sub(deleted_at);
    if elapsed >= estimate.unsigned_abs() {
        0
    } else {
        estimate
    }
}

/// Upstream `deleteAllContent` over the namespace `ns` (being deleted since `deleted_at`), then
/// the condition update. Errors of single deletes other than NotFound are collected, as upstream.
pub fn delete_all_content(api: &mut dyn ApiClient, ns: &Namespace, deleted_at: Tick) -> Outcome {
    let now = api.now();
    let name = ns.metadata.name.as_str();
    let mut out = Outcome::default();
    let mut remaining: Vec<(String, usize)> = Vec::new();
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    for kind in Kind::ALL.iter().filter(|k| k.namespaced()) {
        let before = api.list_shared(kind, Some(name), None);
        let estimate = if *kind == Kind::Pod {
            let pods: Vec<&Pod> = before
                .iter()
                .filter_map(|o| Pod::from_object_ref(o))
                .collect();
            pod_estimate(&pods, deleted_at, now)
        } else {
            0
        };
        let mut failed = None;
        for obj in &before {
            let m = obj.meta();
            match api.delete(kind, name, &m.name, DeleteOptions::default()) {
                Ok(_) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => {
                    failed.get_or_insert(e.message);
                }
            }
        }
        let left = api.list_shared(kind, Some(name), None);
        let mut est = estimate;
        if let Some(e) = failed {
            out.errors.push(e);
        } else if !left.is_empty() {
            let mut held: BTreeMap<String, usize> = BTreeMap::new();
            for o in &left {
                for f in &o.meta().finalizers {
                    *held.entry(f.clone()).or_default() += 1;
                }
            }
            if estimate == 0 && held.is_empty() {
                out.errors.push(format!(
                    "unexpected items still remain in namespace: {name} for gvr: {}",
                    gvr_string(kind)
                ));
            } else if estimate == 0 {
                est = FINALIZER_ESTIMATE_SECONDS;
            }
            remaining.push((group_resource(kind), left.len()));
            for (f, n) in held {
                *finalizers.entry(f).or_default() += n;
            }
        }
        out.estimate = out.estimate.max(est);
    }
    let finalizers: Vec<(String, usize)> = finalizers.into_iter().collect();
    let mut failing = content_totals(&remaining, &finalizers);
    failing.extend(delete_content_failure(&out.errors));
    write_conditions(api, ns, &failing, now);
    out
}

/// Upstream `conditionUpdater.Update` + `UpdateStatus` when something changed (a failed write is
/// only logged upstream).
fn write_conditions(
    api: &mut dyn ApiClient,
    ns: &Namespace,
    failing: &[super::status_conditions::Failing],
    now: Tick,
) {
    let mut updated = ns.clone();
    let mut status = match updated.status.take() {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    if update_conditions(&mut status, failing, &tick_timestamp(now)) {
        updated.status = Some(Value::Object(status));
        if let Err(e) = api.update_status(Object::Namespace(Box::new(updated))) {
            tracing::debug!(namespace = %ns.metadata.name, error = %e, "couldn't update status condition");
        }
    }
}

/// The namespace's `deletionTimestamp` as a tick.
pub fn deletion_tick(ns: &Namespace) -> Option<Tick> {
    ns.metadata
        .deletion_timestamp
        .as_deref()
        .and_then(timestamp_tick)
}

/// Upstream `finalizeNamespace`: `spec.finalizers` without `kubernetes` (the others sorted, as
/// upstream's string set lists them).
pub fn finalized_copy(ns: &Namespace) -> Namespace {
    let mut out = ns.clone();
    let mut rest: Vec<String> = spec_finalizers(ns)
        .into_iter()
        .filter(|f| f != FINALIZER_KUBERNETES)
        .collect();
    rest.sort();
    rest.dedup();
    let mut spec = match out.spec.take() {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    spec.insert(
        "finalizers".to_string(),
        Value::Array(rest.into_iter().map(Value::String).collect()),
    );
    out.spec = Some(Value::Object(spec));
    out
}

/// A namespace's `spec.finalizers`.
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

/// A namespace's `status.phase`.
pub fn phase(ns: &Namespace) -> Option<&str> {
    ns.status.as_ref()?.get("phase")?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_print_as_upstream() {
        assert_eq!(group_resource(&Kind::Pod), "pods.");
        assert_eq!(group_resource(&Kind::Deployment), "deployments.apps");
        assert_eq!(gvr_string(&Kind::Pod), "/v1, Resource=pods");
        assert_eq!(gvr_string(&Kind::Job), "batch/v1, Resource=jobs");
    }

    #[test]
    fn pod_estimate_is_the_longest_grace_until_it_has_passed() {
        let mut a = Pod::default();
        a.spec.termination_grace_period_seconds = Some(30);
        let mut b = Pod::default();
        b.spec.termination_grace_period_seconds = Some(60);
        let mut done = Pod::default();
        done.spec.termination_grace_period_seconds = Some(600);
        done.status.phase = Some(phases::SUCCEEDED.into());
        let pods = [&a, &b, &done];
        // Deleted at 100: 60 s (the terminal pod's 600 does not count) until 160, then 0.
        assert_eq!(pod_estimate(&pods, 100, 105), 60);
        assert_eq!(pod_estimate(&pods, 100, 159), 60);
        assert_eq!(pod_estimate(&pods, 100, 160), 0);
    }

    #[test]
    fn finalizing_removes_only_the_kubernetes_token() {
        let ns = Namespace {
            spec: Some(serde_json::json!({"finalizers": ["kubernetes", "z.io/b", "a.io/a"]})),
            ..Default::default()
        };
        assert_eq!(
            spec_finalizers(&finalized_copy(&ns)),
            vec!["a.io/a", "z.io/b"]
        );
    }
}
