//! The DaemonSet rolling update, after upstream `pkg/controller/daemon/update.go`
//! (`rollingUpdate`, `findUpdatedPodsOnNode`, `updatedDesiredNodeCounts`).
//!
//! Without surge (`maxSurge` 0) old pods are deleted, and the next sync's `manage` creates the
//! new ones, while the nodes without an available pod (no pod, an unavailable new pod, an old
//! and a new pod, more than one pod) stay within `maxUnavailable`; an old pod that is not
//! available is replaced at once. With surge, a new pod is created beside each old one, at most
//! `maxSurge` at a time (at once where the old pod is unavailable), and the old pod is deleted
//! when the new one is available.
//!
//! Nodes are visited in name order (upstream ranges over a Go map): the candidates taken first
//! when `maxUnavailable` / `maxSurge` leave room for fewer than all are the first node names.

use k8s_types::apps::DaemonSet;
use k8s_types::core::Pod;
use k8s_types::Tick;

use super::util::{is_pod_updated, surge_count, unavailable_count, NodeVerdicts};
use super::NodeToDaemonPods;
use crate::controller_utils::is_pod_available;

/// Upstream `findUpdatedPodsOnNode`: the node's new and old pod among those not being deleted,
/// or `None` when there is more than one of either (`manage` prunes them first).
pub fn find_updated_pods_on_node<'a>(
    pods: &[&'a Pod],
    hash: &str,
) -> Option<(Option<&'a Pod>, Option<&'a Pod>)> {
    let (mut new, mut old) = (None, None);
    for pod in pods.iter().filter(|p| !p.is_terminating()) {
        let slot = if is_pod_updated(pod, hash) {
            &mut new
        } else {
            &mut old
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(*pod);
    }
    Some((new, old))
}

/// Upstream `updatedDesiredNodeCounts`: `(maxSurge, maxUnavailable, desiredNumberScheduled)`,
/// adding an empty entry to `by_node` for each node that should run the pod and has none. Both
/// limits scale `desiredNumberScheduled` (rounded up); if both are 0, maxUnavailable is 1.
pub fn updated_desired_node_counts(
    ds: &DaemonSet,
    verdicts: &NodeVerdicts,
    by_node: &mut NodeToDaemonPods<'_>,
) -> (i32, i32, i32) {
    let mut desired = 0;
    for (node, (should_run, _)) in verdicts {
        if *should_run {
            desired += 1;
            by_node.entry(node.clone()).or_default();
        }
    }
    let mut max_unavailable = unavailable_count(ds, desired);
    let max_surge = surge_count(ds, desired);
    if desired > 0 && max_unavailable == 0 && max_surge == 0 {
        max_unavailable = 1;
    }
    (max_surge, max_unavailable, desired)
}

/// Upstream `rollingUpdate`: `(pods to delete, nodes to create a pod on)`.
pub fn rolling_update(
    ds: &DaemonSet,
    verdicts: &NodeVerdicts,
    by_node: &NodeToDaemonPods<'_>,
    hash: &str,
    now: Tick,
) -> (Vec<String>, Vec<String>) {
    let mut by_node = by_node.clone();
    let (max_surge, max_unavailable, desired) =
        updated_desired_node_counts(ds, verdicts, &mut by_node);
    let min_ready = ds.spec.min_ready_seconds.unwrap_or(0);
    let available = |p: &Pod| is_pod_available(p, min_ready, now);
    // A node that is gone (its pods not yet collected) should not run the pod.
    let should_run = |node: &str| verdicts.get(node).is_some_and(|v| v.0);

    if max_surge == 0 {
        let mut num_unavailable = 0;
        let mut allowed: Vec<String> = Vec::new();
        let mut candidates: Vec<String> = Vec::new();
        for pods in by_node.values() {
            let Some((new, old)) = find_updated_pods_on_node(pods, hash) else {
                num_unavailable += 1;
                continue;
            };
            match (new, old) {
                (None, None) | (Some(_), Some(_)) => num_unavailable += 1,
                (Some(new), None) => {
                    if !available(new) {
                        num_unavailable += 1;
                    }
                }
                (None, Some(old)) => {
                    if !available(old) {
                        allowed.push(old.metadata.name.clone());
                        num_unavailable += 1;
                    } else if num_unavailable < max_unavailable {
                        candidates.push(old.metadata.name.clone());
                    }
                }
            }
        }
        let remaining = (max_unavailable - num_unavailable).clamp(0, candidates.len() as i32);
        allowed.extend(candidates.into_iter().take(remaining as usize));
        return (allowed, Vec::new());
    }

    let mut to_delete: Vec<String> = Vec::new();
    let mut should_not_run: Vec<String> = Vec::new();
    let mut candidate_nodes: Vec<String> = Vec::new();
    let mut allowed_nodes: Vec<String> = Vec::new();
    let (mut num_surge, mut num_available) = (0, 0);
    for (node, pods) in &by_node {
        let Some((new, old)) = find_updated_pods_on_node(pods, hash) else {
            num_surge += 1;
            continue;
        };
        if let Some(p) = old.or(new) {
            if available(p) {
                num_available += 1;
            }
        }
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) => {
                if !available(old) {
                    if should_run(node) {
                        allowed_nodes.push(node.clone());
                    } else {
                        to_delete.push(old.metadata.name.clone());
                    }
                } else if !should_run(node) {
                    should_not_run.push(old.metadata.name.clone());
                } else if num_surge < max_surge {
                    candidate_nodes.push(node.clone());
                }
            }
            (Some(new), Some(old)) => {
                if available(new) {
                    to_delete.push(old.metadata.name.clone());
                } else {
                    num_surge += 1;
                }
            }
        }
    }
    // Only delete pods on nodes that should no longer run them once enough pods elsewhere are
    // available (surge promises full availability).
    let deletable = (num_available - desired).clamp(0, should_not_run.len() as i32);
    to_delete.extend(should_not_run.into_iter().take(deletable as usize));
    let remaining = (max_surge - num_surge).clamp(0, candidate_nodes.len() as i32);
    allowed_nodes.extend(candidate_nodes.into_iter().take(remaining as usize));
    (to_delete, allowed_nodes)
}
