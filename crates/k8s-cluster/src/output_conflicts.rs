//! The run's `409 Conflict`s (see `k8s_types::conflict`): a header line with the count per
//! component and kind, a `## conflicts` section with one line per conflict (what upstream
//! components log, e.g. kube-controller-manager's `Error syncing ... Operation cannot be
//! fulfilled on ...` from `handleErr`), and the `conflicts` field of `-o json|yaml`.
//!
//! Shown when the Scenario sets `spec.informerLag` or some component met a conflict (a run
//! without lag where nothing conflicts prints exactly what it printed before).

use crate::cluster::Cluster;

fn shown(cluster: &Cluster) -> bool {
    cluster.informer_lag().is_set() || !cluster.conflicts().is_empty()
}

/// `# informer lag: ...` and `# conflicts: N (component Kind n, ...)`, each ending in a newline.
pub(crate) fn header(cluster: &Cluster) -> Option<String> {
    if !shown(cluster) {
        return None;
    }
    let lag = cluster.informer_lag();
    let mut out = format!(
        "# informer lag: controller-manager {} ticks, scheduler {} ticks\n",
        lag.controller_manager, lag.scheduler
    );
    let log = cluster.conflicts();
    let parts: Vec<String> = log
        .counts()
        .into_iter()
        .map(|((component, kind), n)| format!("{component} {kind} {n}"))
        .collect();
    if parts.is_empty() {
        out.push_str("# conflicts: 0\n");
    } else {
        out.push_str(&format!(
            "# conflicts: {} ({})\n",
            log.len(),
            parts.join(", ")
        ));
    }
    Some(out)
}

/// `## conflicts` with one line per conflict: `t=N component verb: message`.
pub(crate) fn section(cluster: &Cluster) -> Option<String> {
    let log = cluster.conflicts();
    if !shown(cluster) || log.is_empty() {
        return None;
    }
    let mut out = String::from("\n## conflicts\n");
    for r in log.records() {
        out.push_str(&format!(
            "t={} {} {}: {}\n",
            r.tick, r.component, r.verb, r.message
        ));
    }
    Some(out)
}

/// The `conflicts` field of the JSON/YAML List: the lag, the count per component and kind, and
/// every conflict.
pub(crate) fn json(cluster: &Cluster) -> Option<serde_json::Value> {
    if !shown(cluster) {
        return None;
    }
    let lag = cluster.informer_lag();
    let log = cluster.conflicts();
    let by: Vec<serde_json::Value> = log
        .counts()
        .into_iter()
        .map(|((component, kind), count)| {
            serde_json::json!({"component": component, "kind": kind, "count": count})
        })
        .collect();
    let records: Vec<serde_json::Value> = log
        .records()
        .iter()
        .map(|r| {
            serde_json::json!({
                "tick": r.tick,
                "component": r.component,
                "verb": r.verb,
                "kind": r.kind,
                "message": r.message,
            })
        })
        .collect();
    Some(serde_json::json!({
        "informerLag": {
            "controllerManager": lag.controller_manager,
            "scheduler": lag.scheduler,
        },
        "total": log.len(),
        "byComponent": by,
        "records": records,
    }))
}
