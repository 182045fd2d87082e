//! The DaemonSet rolling update and history, after upstream `pkg/controller/daemon/update.go`
//! (`rollingUpdate`, `findUpdatedPodsOnNode`, `updatedDesiredNodeCounts`, `constructHistory`,
//! `snapshot`, `dedupCurHistories`, `cleanupHistory`).
//!
//! History: the DaemonSet's ControllerRevisions (claimed as pods are) are split into the
//! current one, labelled `controller-revision-hash` with the current hash, and the old ones.
//! Without a current one, `<ds>-<hash>` is created with the next number (one more than the
//! highest old one); a current one numbered below that is renumbered (a rollback). Once the
//! rollout's work is done, old revisions beyond `revisionHistoryLimit` (counting all old ones,
//! as upstream) are deleted oldest first, skipping those a pod still carries.
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

use std::sync::Arc;

use k8s_types::apiserver::ApiClient;
use k8s_types::apps::{ControllerRevision, DaemonSet, CONTROLLER_REVISION_HASH_LABEL};
use k8s_types::core::Pod;
use k8s_types::informer::{object_key, SharedInformerFactory};
use k8s_types::status::Status;
use k8s_types::{Kind, Object, Resource, Tick};

use super::util::{is_pod_updated, surge_count, unavailable_count, NodeVerdicts};
use super::NodeToDaemonPods;
use crate::controller_ref_manager::claim_shared;
use crate::controller_utils::{is_pod_available, new_controller_ref};
use crate::history;

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

/// Upstream `controlledHistories`: the namespace's ControllerRevisions the DaemonSet controls
/// or adopts (released when they stop matching its selector), sorted by number.
fn controlled_histories(
    api: &mut dyn ApiClient,
    informers: &SharedInformerFactory,
    ds: &DaemonSet,
) -> Result<Vec<ControllerRevision>, Status> {
    let Some(selector) = ds.spec.selector.as_ref() else {
        return Ok(Vec::new());
    };
    let namespace = ds.metadata.namespace();
    let uid = ds.metadata.uid.clone().unwrap_or_default();
    let cache = informers.of(&Kind::ControllerRevision);
    let mut candidates: Vec<Arc<Object>> = cache
        .controlled_by(&uid)
        .into_iter()
        .chain(cache.orphans(namespace))
        .filter(|o| o.meta().namespace() == namespace)
        .cloned()
        .collect();
    candidates.sort_by_cached_key(|o| object_key(o));
    let claimed = claim_shared(api, &Kind::DaemonSet, &ds.metadata, selector, candidates)?;
    let mut out: Vec<ControllerRevision> = claimed
        .into_iter()
        .filter_map(|o| ControllerRevision::from_object(Arc::unwrap_or_clone(o)))
        .collect();
    history::sort_controller_revisions(&mut out);
    Ok(out)
}

/// Upstream `snapshot`: the revision `<ds>-<hash>` of the DaemonSet's template, labelled with
/// the template's labels and `controller-revision-hash: <hash>`, annotated as the DaemonSet,
/// numbered `revision`. An existing revision of that name with the same data is taken as is.
fn snapshot(
    api: &mut dyn ApiClient,
    ds: &DaemonSet,
    hash: &str,
    revision: i64,
) -> Result<ControllerRevision, Status> {
    let mut cr = ControllerRevision::default();
    cr.metadata.name = format!("{}-{hash}", ds.metadata.name);
    cr.metadata.namespace = ds.metadata.namespace.clone();
    cr.metadata.labels = ds.spec.template.metadata.labels.clone();
    cr.metadata
        .labels
        .insert(CONTROLLER_REVISION_HASH_LABEL.into(), hash.to_string());
    cr.metadata.annotations = ds.metadata.annotations.clone();
    cr.metadata.owner_references = vec![new_controller_ref(&ds.metadata, &Kind::DaemonSet)].into();
    cr.data = Some(history::template_patch(&ds.spec.template));
    cr.revision = revision;
    let (name, data) = (cr.metadata.name.clone(), cr.data.clone());
    match api.create(cr.into_object()) {
        Ok(o) => ControllerRevision::from_object(o).ok_or_else(not_a_revision),
        Err(e) if e.is_already_exists() => {
            let existing = api.get(&Kind::ControllerRevision, ds.metadata.namespace(), &name)?;
            match ControllerRevision::from_object(existing) {
                Some(r) if r.data == data => Ok(r),
                // Upstream bumps `status.collisionCount` here and retries at the next sync;
                // k8s-mini reports the collision (docs/fidelity.md).
                _ => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

fn not_a_revision() -> Status {
    Status::internal("the apiserver answered with another kind than ControllerRevision")
}

/// Upstream `constructHistory`: the current revision (the one labelled with `hash`, created by
/// [`snapshot`] if none; of several, the highest-numbered is kept and the others deleted, as
/// `dedupCurHistories`) renumbered to one more than the highest old one if it is below, and
/// the old revisions, oldest first.
///
/// # Errors
/// The apiserver's.
pub fn construct_history(
    api: &mut dyn ApiClient,
    informers: &SharedInformerFactory,
    ds: &DaemonSet,
    hash: &str,
) -> Result<(ControllerRevision, Vec<ControllerRevision>), Status> {
    let (mut current, old): (Vec<ControllerRevision>, Vec<ControllerRevision>) =
        controlled_histories(api, informers, ds)?
            .into_iter()
            .partition(|r| {
                r.metadata
                    .labels
                    .get(CONTROLLER_REVISION_HASH_LABEL)
                    .map(String::as_str)
                    == Some(hash)
            });
    let next = old
        .iter()
        .map(|r| r.revision)
        .max()
        .unwrap_or(0)
        .saturating_add(1);
    let Some(keep) = current.pop() else {
        return Ok((snapshot(api, ds, hash, next)?, old));
    };
    for dup in &current {
        history::delete_controller_revision(api, dup)?;
    }
    let keep = if keep.revision < next {
        history::update_controller_revision(api, &keep, next)?
    } else {
        keep
    };
    Ok((keep, old))
}

/// Upstream `cleanupHistory`: with more old revisions than `revisionHistoryLimit` (default 10),
/// the surplus is deleted oldest first, skipping (without counting) those whose hash a pod of
/// the DaemonSet still carries.
///
/// # Errors
/// The first failed deletion.
pub fn cleanup_history(
    api: &mut dyn ApiClient,
    ds: &DaemonSet,
    old: &[ControllerRevision],
    by_node: &NodeToDaemonPods<'_>,
) -> Result<(), Status> {
    let limit = ds.spec.revision_history_limit.unwrap_or(10).max(0);
    let mut to_kill = old
        .len()
        .saturating_sub(usize::try_from(limit).unwrap_or(0));
    let live = |r: &ControllerRevision| {
        r.metadata
            .labels
            .get(CONTROLLER_REVISION_HASH_LABEL)
            .is_some_and(|h| {
                by_node
                    .values()
                    .flatten()
                    .any(|p| p.metadata.labels.get(CONTROLLER_REVISION_HASH_LABEL) == Some(h))
            })
    };
    for r in old {
        if to_kill == 0 {
            break;
        }
        if live(r) {
            continue;
        }
        history::delete_controller_revision(api, r)?;
        to_kill -= 1;
    }
    Ok(())
}
