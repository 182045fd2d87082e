//! The DaemonSet controller, after upstream `pkg/controller/daemon/daemon_controller.go`
//! (`syncDaemonSet`, `manage`, `podsShouldBeOnNode`, `syncNodes`, `updateDaemonSetStatus`,
//! `NodeShouldRunDaemonPod`, the pod and node event handlers), `update.go` (`rollingUpdate`,
//! `findUpdatedPodsOnNode`, `updatedDesiredNodeCounts`) and `util/daemonset_util.go`
//! ([`util`]).
//!
//! Event handlers: a DaemonSet's change queues it; a pod's change queues the DaemonSet
//! controlling it (an orphan's: every DaemonSet of its namespace selecting it) and counts toward
//! its expectations; a new node queues every DaemonSet that should run there; a changed node
//! queues every DaemonSet for which `NodeShouldRunDaemonPod` changed (`shouldIgnoreNodeUpdate`:
//! a node whose only change is its conditions' non-True entries or its resourceVersion is
//! ignored).
//!
//! One sync ([`DaemonSetsController::sync_daemon_set`]): the DaemonSet's pods (claimed as the
//! ReplicaSet controller claims them) grouped by target node (`spec.nodeName`, else the node
//! their `matchFields metadata.name` affinity names); when its expectations are satisfied, every
//! node in name order decides what to create and delete (`podsShouldBeOnNode`): a node that
//! should run the pod and has none gets one, a node that should not keeps none, failed pods are
//! deleted (with a per-node back-off of 1 s doubling to 15 min), excess pods go (the oldest
//! stays; with surge, one old and one new may coexist). Pods are created in slow-start batches
//! from the template with the daemon tolerations, the `controller-revision-hash` label and the
//! required node affinity `matchFields metadata.name In [node]` (the default scheduler binds
//! them); then the rolling update (RollingUpdate: [`update`]; OnDelete: nothing) and the status
//! counts.
//!
//! Revisions are ControllerRevisions `<ds>-<hash>` ([`update::construct_history`], numbered,
//! renumbered on a rollback, cleaned up beyond `revisionHistoryLimit`).
//! Differences from upstream (docs/fidelity.md, DaemonSet): the current revision's hash is
//! `ComputeHash(template, collisionCount)` of the DaemonSet itself (or, for a DaemonSet that
//! arrives with labelled pods, its newest pod's label: [`revision_hash`]) and a revision is
//! current when it carries that hash (upstream: when its data equals the template's patch,
//! the same thing while the hash has no collision); there is no `collisionCount` bump (a name
//! collision is an error) and a duplicate current revision's pods are not relabelled; the deprecated template-generation label is not read. Nodes are visited and
//! rolling-update candidates taken in node-name order (upstream ranges over a Go map, in random
//! order).

pub mod update;
pub mod util;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::apps::{DaemonSet, CONTROLLER_REVISION_HASH_LABEL};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::event::event_types;
use k8s_types::core::{phases, Node, NodeStatus, Pod};
use k8s_types::events::EventRecorder;
use k8s_types::informer::{object_key, Delta, SharedInformerFactory};
use k8s_types::status::Status;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Resource, Tick};

use crate::controller_ref_manager::claim_shared;
use crate::controller_utils::{
    is_pod_available, new_controller_ref, on_owned_pod_change, pod_from_template, pod_ready_tick,
    slow_start_batch, FAILED_CREATE_POD_REASON, FAILED_DELETE_POD_REASON,
    SLOW_START_INITIAL_BATCH_SIZE, SUCCESSFUL_CREATE_POD_REASON, SUCCESSFUL_DELETE_POD_REASON,
};
use crate::expectations::ControllerExpectations;
use crate::pod_template_hash::compute_hash;
use util::{
    allows_surge, cmp_by_creation_and_phase, create_pod_template, is_pod_updated, node_verdicts,
    replace_node_name_node_affinity, target_node_name, DaemonPlacement, NodeVerdicts,
};

/// The controller name, also the `source.component` of its Events (upstream
/// `daemonset-controller`).
pub const DAEMON_SET_CONTROLLER_NAME: &str = "daemonset-controller";
/// Upstream `BurstReplicas`: at most this many creates (and deletes) per sync.
pub const BURST_REPLICAS: usize = 250;
/// Upstream `FailedDaemonPodReason`.
pub const FAILED_DAEMON_POD_REASON: &str = "FailedDaemonPod";
/// Upstream `SucceededDaemonPodReason`.
pub const SUCCEEDED_DAEMON_POD_REASON: &str = "SucceededDaemonPod";
/// Upstream `SelectingAllReason`.
pub const SELECTING_ALL_REASON: &str = "SelectingAll";
/// Upstream failed-pods back-off: `flowcontrol.NewBackOff(1*time.Second, 15*time.Minute)`.
pub const FAILED_PODS_BACKOFF_INITIAL: Tick = 1;
/// See [`FAILED_PODS_BACKOFF_INITIAL`].
pub const FAILED_PODS_BACKOFF_MAX: Tick = 15 * 60;

/// Upstream `flowcontrol.Backoff` on the virtual clock: per key, the current delay and the tick
/// of its last update.
#[derive(Clone, Debug, Default)]
struct Backoff {
    entries: BTreeMap<String, (Tick, Tick)>,
}

impl Backoff {
    fn expired(now: Tick, last: Tick) -> bool {
        now.saturating_sub(last) > 2 * FAILED_PODS_BACKOFF_MAX
    }

    /// Upstream `IsInBackOffSinceUpdate`.
    fn in_backoff(&self, key: &str, now: Tick) -> Option<Tick> {
        let &(delay, last) = self.entries.get(key)?;
        (!Self::expired(now, last) && now.saturating_sub(last) < delay).then_some(delay)
    }

    /// Upstream `Next`: the delay starts at 1 s and doubles up to 15 min.
    fn next(&mut self, key: &str, now: Tick) {
        let delay = match self.entries.get(key) {
            Some(&(d, last)) if !Self::expired(now, last) => (d * 2).min(FAILED_PODS_BACKOFF_MAX),
            _ => FAILED_PODS_BACKOFF_INITIAL,
        };
        self.entries.insert(key.to_string(), (delay, now));
    }
}

/// kube-controller-manager's DaemonSet controller.
#[derive(Clone, Debug)]
pub struct DaemonSetsController {
    burst_replicas: usize,
    expectations: ControllerExpectations,
    failed_pods_backoff: Backoff,
    /// By DaemonSet key: the generation and current revision hash decided ([`revision_hash`]).
    revisions: BTreeMap<String, (i64, String)>,
    events: EventRecorder,
}

impl Default for DaemonSetsController {
    fn default() -> Self {
        Self::new()
    }
}

fn as_pod(o: &Object) -> Option<&Pod> {
    Pod::from_object_ref(o)
}

/// A DaemonSet's pods by target node name (upstream `getNodesToDaemonPods`), each list in claim
/// (key) order.
pub type NodeToDaemonPods<'a> = BTreeMap<String, Vec<&'a Pod>>;

/// The hash of the DaemonSet's template (upstream: the `controller-revision-hash` label of the
/// ControllerRevision it snapshots, `ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)`).
pub fn template_hash(ds: &DaemonSet) -> String {
    compute_hash(&ds.spec.template, ds.status.collision_count)
}

/// The hash of the current revision of `ds`, given the pods it claimed and what was decided for
/// it before (`known`: the generation and hash of the last decision).
///
/// A DaemonSet keeps its decision while its generation stays. At its first sync, a DaemonSet
/// that arrives with pods already labelled `controller-revision-hash` (a cluster dump) takes
/// the label of its newest such pod: in the dumped cluster that label is its current
/// ControllerRevision's, which k8s-mini cannot recompute (upstream hashes a Go `spew` dump of
/// the template), and a DaemonSet whose pods are all current must not start a rollout. Any
/// other case, and every later generation, uses [`template_hash`].
pub fn revision_hash(ds: &DaemonSet, pods: &[&Pod], known: Option<&(i64, String)>) -> String {
    let generation = ds.metadata.generation.unwrap_or(0);
    match known {
        Some((g, h)) if *g == generation => return h.clone(),
        Some(_) => return template_hash(ds),
        None => {}
    }
    pods.iter()
        .filter(|p| {
            p.metadata
                .labels
                .contains_key(CONTROLLER_REVISION_HASH_LABEL)
        })
        .max_by(|a, b| {
            crate::controller_utils::creation_tick(&a.metadata)
                .cmp(&crate::controller_utils::creation_tick(&b.metadata))
                .then_with(|| a.metadata.name.cmp(&b.metadata.name))
        })
        .and_then(|p| {
            p.metadata
                .labels
                .get(CONTROLLER_REVISION_HASH_LABEL)
                .cloned()
        })
        .unwrap_or_else(|| template_hash(ds))
}

impl DaemonSetsController {
    /// A controller with upstream's burst of [`BURST_REPLICAS`] (250).
    pub fn new() -> Self {
        Self::with_burst_replicas(BURST_REPLICAS)
    }

    /// A controller creating or deleting at most `burst` pods per DaemonSet per sync (0 is 1).
    pub fn with_burst_replicas(burst: usize) -> Self {
        DaemonSetsController {
            burst_replicas: burst.max(1),
            expectations: ControllerExpectations::new(),
            failed_pods_backoff: Backoff::default(),
            revisions: BTreeMap::new(),
            events: EventRecorder::for_component(DAEMON_SET_CONTROLLER_NAME),
        }
    }

    /// Upstream `addHistory` / `updateHistory` / `deleteHistory`: the DaemonSet controlling the
    /// revision (before or after the change); an orphan's: every DaemonSet selecting it.
    fn on_history_change(change: &Delta, informers: &SharedInformerFactory, queue: &mut WorkQueue) {
        let mut keys = Vec::new();
        for o in [change.old.as_deref(), change.new.as_deref()]
            .into_iter()
            .flatten()
        {
            let meta = o.meta();
            match meta.controller_ref() {
                Some(c) => keys.extend(informers.resolve_controller_ref(
                    &Kind::DaemonSet,
                    meta.namespace(),
                    c,
                )),
                None => keys.extend(informers.selecting::<DaemonSet>(
                    &Kind::DaemonSet,
                    meta.namespace(),
                    &meta.labels,
                    |d| d.spec.selector.as_ref(),
                )),
            }
        }
        keys.sort();
        keys.dedup();
        for k in keys {
            queue.add(k);
        }
    }

    /// Upstream `addNode` / `updateNode` (with `shouldIgnoreNodeUpdate`).
    fn on_node_change(change: &Delta, informers: &SharedInformerFactory, queue: &mut WorkQueue) {
        let Some(cur) = change.new.as_deref().and_then(Node::from_object_ref) else {
            return;
        };
        let old = change.old.as_deref().and_then(Node::from_object_ref);
        // Without a DaemonSet nothing is queued whatever the update (checked first: a cluster
        // without DaemonSets sees every Node write here).
        let Some(dss) = informers
            .informer(&Kind::DaemonSet)
            .filter(|dss| !dss.is_empty())
        else {
            return;
        };
        if old.is_some_and(|o| should_ignore_node_update(o, cur)) {
            return;
        }
        for ds in dss.list_typed::<DaemonSet>() {
            let placement = DaemonPlacement::new(ds);
            let now = placement.should_run(cur);
            let changed = match old {
                None => now.0,
                Some(o) => placement.should_run(o) != now,
            };
            if changed {
                queue.add(format!("{}/{}", ds.metadata.namespace(), ds.metadata.name));
            }
        }
    }

    /// Upstream `getDaemonPods` + `getNodesToDaemonPods`: the candidate pods of the namespace
    /// (controlled by the DaemonSet, or orphans) claimed through the apiserver; terminal pods
    /// being deleted are left out.
    fn claim_pods(
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        ds: &DaemonSet,
    ) -> Result<Vec<Arc<Object>>, Status> {
        let Some(selector) = ds.spec.selector.as_ref() else {
            return Ok(Vec::new());
        };
        let namespace = ds.metadata.namespace();
        let uid = ds.metadata.uid.clone().unwrap_or_default();
        let pods = informers.of(&Kind::Pod);
        let mut candidates: Vec<Arc<Object>> = pods
            .controlled_by(&uid)
            .into_iter()
            .filter(|o| o.meta().namespace() == namespace)
            .cloned()
            .collect();
        let orphans = pods.orphans(namespace);
        if !orphans.is_empty() {
            candidates.extend(orphans.into_iter().cloned());
            candidates.sort_by_cached_key(|o| object_key(o));
        }
        claim_shared(api, &Kind::DaemonSet, &ds.metadata, selector, candidates)
    }

    /// One sync of one DaemonSet (upstream `syncDaemonSet`).
    ///
    /// # Errors
    /// An apiserver error from claiming pods, creating or deleting them, or writing the status.
    pub fn sync_daemon_set(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        ds: &DaemonSet,
    ) -> Result<Action, Status> {
        let now = api.now();
        let key = format!("{}/{}", ds.metadata.namespace(), ds.metadata.name);
        if ds.spec.selector.as_ref().is_some_and(|s| s.is_empty()) {
            let obj = ds.clone().into_object();
            self.events.record(
                api,
                &obj,
                event_types::WARNING,
                SELECTING_ALL_REASON,
                "This daemon set is selecting all pods. A non-empty selector is required.",
            );
            return Ok(Action::AwaitChange);
        }
        if ds.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let nodes = node_verdicts(ds, informers.of(&Kind::Node).list_typed::<Node>());
        let claimed = Self::claim_pods(api, informers, ds)?;
        let pods: Vec<&Pod> = claimed.iter().filter_map(|o| as_pod(o)).collect();
        let hash = revision_hash(ds, &pods, self.revisions.get(&key));
        self.revisions.insert(
            key.clone(),
            (ds.metadata.generation.unwrap_or(0), hash.clone()),
        );
        let (_current, old) = update::construct_history(api, informers, ds, &hash)?;
        let mut by_node: NodeToDaemonPods<'_> = BTreeMap::new();
        for pod in pods {
            if pod.is_terminal() && pod.is_terminating() {
                continue;
            }
            if let Some(node) = target_node_name(pod) {
                by_node.entry(node).or_default().push(pod);
            }
        }
        if !self.expectations.satisfied(&key, now) {
            return self.update_status(api, ds, &nodes, &by_node, &hash, false);
        }
        let result = self
            .update_daemon_set(api, ds, &key, &nodes, &by_node, &hash)
            .and_then(|r| update::cleanup_history(api, ds, &old, &by_node).map(|()| r));
        let status = self.update_status(api, ds, &nodes, &by_node, &hash, true);
        let requeue = result?;
        let action = status?;
        Ok(match requeue {
            Some(after) => action.sooner(Action::requeue(after)),
            None => action,
        })
    }

    /// Upstream `updateDaemonSet`: `manage`, then, once the expectations are satisfied, the
    /// rolling update (OnDelete: none). Returns a back-off requeue, if any.
    fn update_daemon_set(
        &mut self,
        api: &mut dyn ApiClient,
        ds: &DaemonSet,
        key: &str,
        nodes: &NodeVerdicts,
        by_node: &NodeToDaemonPods<'_>,
        hash: &str,
    ) -> Result<Option<Tick>, Status> {
        let requeue = self.manage(api, ds, key, nodes, by_node, hash)?;
        let now = api.now();
        if self.expectations.satisfied(key, now)
            && util::strategy_type(ds) == k8s_types::apps::ROLLING_UPDATE_DAEMON_SET_STRATEGY
        {
            let (to_delete, to_create) = update::rolling_update(ds, nodes, by_node, hash, now);
            self.sync_nodes(api, ds, key, to_delete, to_create, hash)?;
        }
        Ok(requeue)
    }

    /// Upstream `manage`: what each node needs, plus the unscheduled pods whose node is gone.
    fn manage(
        &mut self,
        api: &mut dyn ApiClient,
        ds: &DaemonSet,
        key: &str,
        nodes: &NodeVerdicts,
        by_node: &NodeToDaemonPods<'_>,
        hash: &str,
    ) -> Result<Option<Tick>, Status> {
        let mut need = Vec::new();
        let mut delete = Vec::new();
        let mut requeue: Option<Tick> = None;
        for (node, verdict) in nodes {
            let r = self.pods_should_be_on_node(
                api,
                node,
                *verdict,
                by_node,
                ds,
                hash,
                &mut need,
                &mut delete,
            );
            if let Some(r) = r {
                requeue = Some(requeue.map_or(r, |q| q.min(r)));
            }
        }
        // Upstream `getUnscheduledPodsWithoutNode`.
        for (node, pods) in by_node {
            if nodes.contains_key(node) {
                continue;
            }
            delete.extend(
                pods.iter()
                    .filter(|p| p.node_name().is_none())
                    .map(|p| p.metadata.name.clone()),
            );
        }
        self.sync_nodes(api, ds, key, delete, need, hash)?;
        Ok(requeue)
    }

    /// Upstream `podsShouldBeOnNode`: appends the node to `need` and pod names to `delete`;
    /// returns the back-off delay when a failed pod's deletion waits.
    #[allow(clippy::too_many_arguments)]
    fn pods_should_be_on_node(
        &mut self,
        api: &mut dyn ApiClient,
        name: &str,
        (should_run, should_continue): (bool, bool),
        by_node: &NodeToDaemonPods<'_>,
        ds: &DaemonSet,
        hash: &str,
        need: &mut Vec<String>,
        delete: &mut Vec<String>,
    ) -> Option<Tick> {
        let daemon_pods = by_node.get(name);
        let now = api.now();
        let mut requeue = None;
        match daemon_pods {
            None if should_run => need.push(name.to_string()),
            Some(pods) if should_continue => {
                let mut running: Vec<&Pod> = Vec::new();
                let obj = ds.clone().into_object();
                for pod in pods.iter().filter(|p| !p.is_terminating()) {
                    match pod.phase() {
                        phases::FAILED => {
                            let bkey = format!(
                                "{}/{}/{}",
                                ds.metadata.uid.as_deref().unwrap_or(""),
                                ds.status.observed_generation.unwrap_or(0),
                                name
                            );
                            if let Some(delay) = self.failed_pods_backoff.in_backoff(&bkey, now) {
                                requeue = Some(delay);
                                continue;
                            }
                            self.failed_pods_backoff.next(&bkey, now);
                            self.events.record(
                                api,
                                &obj,
                                event_types::WARNING,
                                FAILED_DAEMON_POD_REASON,
                                format!(
                                    "Found failed daemon pod {}/{} on node {name}, will try to kill it",
                                    pod.metadata.namespace(),
                                    pod.metadata.name
                                ),
                            );
                            delete.push(pod.metadata.name.clone());
                        }
                        phases::SUCCEEDED => {
                            self.events.record(
                                api,
                                &obj,
                                event_types::NORMAL,
                                SUCCEEDED_DAEMON_POD_REASON,
                                format!(
                                    "Found succeeded daemon pod {}/{} on node {name}, will try to delete it",
                                    pod.metadata.namespace(),
                                    pod.metadata.name
                                ),
                            );
                            delete.push(pod.metadata.name.clone());
                        }
                        _ => running.push(pod),
                    }
                }
                running.sort_by(|a, b| cmp_by_creation_and_phase(a, b));
                if !allows_surge(ds) {
                    // Without surge, all but the oldest go.
                    delete.extend(running.iter().skip(1).map(|p| p.metadata.name.clone()));
                    return requeue;
                }
                if running.len() <= 1 {
                    if running.is_empty() && should_run {
                        need.push(name.to_string());
                    }
                    return requeue;
                }
                // With surge: keep the oldest new and the oldest old pod, delete the rest; the
                // old one goes too once it is not ready or the new one is available.
                let min_ready = ds.spec.min_ready_seconds.unwrap_or(0);
                let (mut oldest_new, mut oldest_old): (Option<&Pod>, Option<&Pod>) = (None, None);
                for pod in &running {
                    let slot = if is_pod_updated(pod, hash) {
                        &mut oldest_new
                    } else {
                        &mut oldest_old
                    };
                    if slot.is_none() {
                        *slot = Some(pod);
                    } else {
                        delete.push(pod.metadata.name.clone());
                    }
                }
                if let (Some(new), Some(old)) = (oldest_new, oldest_old) {
                    if !old.is_ready() || is_pod_available(new, min_ready, now) {
                        delete.push(old.metadata.name.clone());
                    }
                }
            }
            Some(pods) if !should_continue => {
                delete.extend(
                    pods.iter()
                        .filter(|p| !p.is_terminating())
                        .map(|p| p.metadata.name.clone()),
                );
            }
            _ => {}
        }
        requeue
    }

    /// Upstream `syncNodes`: expectations first, then the creates (slow-start batches, each pod
    /// pinned to its node by required node affinity) and the deletes, at most `burstReplicas`
    /// of each.
    fn sync_nodes(
        &mut self,
        api: &mut dyn ApiClient,
        ds: &DaemonSet,
        key: &str,
        mut to_delete: Vec<String>,
        mut to_create: Vec<String>,
        hash: &str,
    ) -> Result<(), Status> {
        to_create.truncate(self.burst_replicas);
        to_delete.truncate(self.burst_replicas);
        if to_create.is_empty() && to_delete.is_empty() {
            return Ok(());
        }
        let now = api.now();
        let namespace = ds.metadata.namespace().to_string();
        let delete_keys = to_delete
            .iter()
            .map(|n| format!("{namespace}/{n}"))
            .collect();
        self.expectations
            .set_expectations(key, to_create.len(), delete_keys, now);
        let obj = ds.clone().into_object();
        let template = create_pod_template(&ds.spec.template, hash);
        let cref = new_controller_ref(&ds.metadata, &Kind::DaemonSet);
        let mut first_err = None;
        if !to_create.is_empty() {
            let mut next = 0usize;
            let mut failed = 0usize;
            let events = &mut self.events;
            let (successes, err) =
                slow_start_batch(to_create.len(), SLOW_START_INITIAL_BATCH_SIZE, &mut || {
                    let node = &to_create[next];
                    next += 1;
                    let mut pod = pod_from_template(&template, &ds.metadata, cref.clone());
                    pod.spec.affinity = Some(replace_node_name_node_affinity(
                        pod.spec.affinity.take(),
                        node,
                    ));
                    match api.create_shared(Object::Pod(Box::new(pod))) {
                        Ok(created) => {
                            events.record(
                                api,
                                &obj,
                                event_types::NORMAL,
                                SUCCESSFUL_CREATE_POD_REASON,
                                format!("Created pod: {}", created.meta().name),
                            );
                            Ok(())
                        }
                        Err(e) => {
                            failed += 1;
                            events.record(
                                api,
                                &obj,
                                event_types::WARNING,
                                FAILED_CREATE_POD_REASON,
                                format!("Error creating: {}", e.message),
                            );
                            Err(e)
                        }
                    }
                });
            // A failed create is never observed, nor are the creates of skipped batches.
            let skipped = to_create.len() - successes - failed;
            self.expectations.lower_creations(key, failed + skipped);
            first_err = err;
        }
        for name in &to_delete {
            let pod_key = format!("{namespace}/{name}");
            match api.delete(&Kind::Pod, &namespace, name, DeleteOptions::default()) {
                Ok(_) => {
                    self.events.record(
                        api,
                        &obj,
                        event_types::NORMAL,
                        SUCCESSFUL_DELETE_POD_REASON,
                        format!("Deleted pod: {name}"),
                    );
                }
                Err(e) if e.is_not_found() => self.expectations.deletion_observed(key, &pod_key),
                Err(e) => {
                    self.expectations.deletion_observed(key, &pod_key);
                    self.events.record(
                        api,
                        &obj,
                        event_types::WARNING,
                        FAILED_DELETE_POD_REASON,
                        format!("Error deleting: {}", e.message),
                    );
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Upstream `updateDaemonSetStatus` + `storeDaemonSetStatus`: per node that should run the
    /// pod, its oldest pod (scheduled first) decides ready, available and updated; a pod on a
    /// node that should not run it is misscheduled. Written only when a count changed or the
    /// observed generation is behind. Requeues at the tick the next ready pod turns available
    /// under `minReadySeconds`.
    fn update_status(
        &mut self,
        api: &mut dyn ApiClient,
        ds: &DaemonSet,
        nodes: &NodeVerdicts,
        by_node: &NodeToDaemonPods<'_>,
        hash: &str,
        update_observed_gen: bool,
    ) -> Result<Action, Status> {
        let now = api.now();
        let min_ready = ds.spec.min_ready_seconds.unwrap_or(0);
        let mut s = ds.status.clone();
        let (mut desired, mut current, mut mis, mut ready, mut updated, mut available) =
            (0, 0, 0, 0, 0, 0);
        let mut next_available: Option<Tick> = None;
        for (node, (should_run, _)) in nodes {
            let should_run = *should_run;
            let pods = by_node.get(node).filter(|p| !p.is_empty());
            if !should_run {
                if pods.is_some() {
                    mis += 1;
                }
                continue;
            }
            desired += 1;
            let Some(pods) = pods else { continue };
            current += 1;
            let Some(pod) = pods.iter().min_by(|a, b| cmp_by_creation_and_phase(a, b)) else {
                continue;
            };
            if pod.is_ready() {
                ready += 1;
                if is_pod_available(pod, min_ready, now) {
                    available += 1;
                } else if let Some(r) = pod_ready_tick(pod) {
                    let at = r.saturating_add(min_ready as Tick).saturating_add(1);
                    next_available = Some(next_available.map_or(at, |t| t.min(at)));
                }
            }
            if is_pod_updated(pod, hash) {
                updated += 1;
            }
        }
        let unavailable = desired - available;
        let action = match next_available.filter(|t| *t > now) {
            Some(t) => Action::requeue(t - now),
            None => Action::AwaitChange,
        };
        let generation = ds.metadata.generation;
        if s.desired_number_scheduled == desired
            && s.current_number_scheduled == current
            && s.number_misscheduled == mis
            && s.number_ready == ready
            && s.updated_number_scheduled == updated
            && s.number_available == available
            && s.number_unavailable == unavailable
            && s.observed_generation.unwrap_or(0) >= generation.unwrap_or(0)
        {
            return Ok(action);
        }
        if update_observed_gen {
            s.observed_generation = generation;
        }
        s.desired_number_scheduled = desired;
        s.current_number_scheduled = current;
        s.number_misscheduled = mis;
        s.number_ready = ready;
        s.updated_number_scheduled = updated;
        s.number_available = available;
        s.number_unavailable = unavailable;
        let mut updated_ds = ds.clone();
        updated_ds.status = s;
        api.update_status_typed(updated_ds)?;
        Ok(action)
    }
}

/// Upstream `shouldIgnoreNodeUpdate`: the same set of True conditions and nothing else changed
/// but the resourceVersion and the conditions.
fn should_ignore_node_update(old: &Node, cur: &Node) -> bool {
    fn trues(n: &Node) -> Vec<&str> {
        let mut v: Vec<&str> = n
            .status
            .conditions
            .iter()
            .filter(|c| c.status == k8s_types::core::condition_status::TRUE)
            .map(|c| c.type_.as_str())
            .collect();
        v.sort_unstable();
        v
    }
    if trues(old) != trues(cur) {
        return false;
    }
    // Field by field rather than on a copy of the whole Node with the two fields swapped (every
    // Node update comes here; the status images make a copy costly). Destructured without `..`, so
    // a field added to NodeStatus is compared too.
    let Node {
        api_version,
        kind,
        metadata,
        spec,
        status:
            NodeStatus {
                capacity,
                allocatable,
                conditions: _,
                addresses,
                images,
                node_info,
            },
    } = old;
    let s = &cur.status;
    if *api_version != cur.api_version
        || *kind != cur.kind
        || *spec != cur.spec
        || *capacity != s.capacity
        || *allocatable != s.allocatable
        || *addresses != s.addresses
        || *images != s.images
        || *node_info != s.node_info
    {
        return false;
    }
    same_but_resource_version(metadata, &cur.metadata)
}

/// Whether two ObjectMetas are equal but for their resourceVersion (compared in place, without
/// a copy; destructured without `..`, so a field added to ObjectMeta is compared too).
fn same_but_resource_version(
    a: &k8s_types::meta::ObjectMeta,
    b: &k8s_types::meta::ObjectMeta,
) -> bool {
    let k8s_types::meta::ObjectMeta {
        name,
        generate_name,
        namespace,
        uid,
        resource_version: _,
        generation,
        creation_timestamp,
        deletion_timestamp,
        deletion_grace_period_seconds,
        labels,
        annotations,
        owner_references,
        finalizers,
    } = a;
    *name == b.name
        && *generate_name == b.generate_name
        && *namespace == b.namespace
        && *uid == b.uid
        && *generation == b.generation
        && *creation_timestamp == b.creation_timestamp
        && *deletion_timestamp == b.deletion_timestamp
        && *deletion_grace_period_seconds == b.deletion_grace_period_seconds
        && *labels == b.labels
        && *annotations == b.annotations
        && *owner_references == b.owner_references
        && *finalizers == b.finalizers
}

impl Controller for DaemonSetsController {
    fn name(&self) -> &str {
        DAEMON_SET_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![
            Kind::DaemonSet,
            Kind::Node,
            Kind::Pod,
            Kind::ControllerRevision,
        ]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        match change.kind {
            Kind::DaemonSet => {
                if change.is_delete() {
                    self.expectations.delete(&change.key);
                    self.revisions.remove(&change.key);
                }
                queue.add(change.key.clone());
            }
            Kind::Pod => on_owned_pod_change::<DaemonSet>(
                &Kind::DaemonSet,
                change,
                informers,
                &mut self.expectations,
                queue,
                |ds| ds.spec.selector.as_ref(),
                false,
            ),
            Kind::Node => Self::on_node_change(change, informers, queue),
            Kind::ControllerRevision => Self::on_history_change(change, informers, queue),
            _ => {}
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(ds) = informers
            .of(&Kind::DaemonSet)
            .get_typed::<DaemonSet>(key)
            .cloned()
        else {
            self.expectations.delete(key);
            self.revisions.remove(key);
            return Ok(Action::AwaitChange);
        };
        Ok(self.sync_daemon_set(api, informers, &ds)?)
    }
}
