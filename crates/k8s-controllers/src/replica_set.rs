//! The ReplicaSet controller, after upstream `pkg/controller/replicaset/replica_set.go`
//! (`syncReplicaSet`, `claimPods`, `manageReplicas`, `getPodsToDelete`) and
//! `replica_set_utils.go` (`calculateStatus`, `updateReplicaSetStatus`).
//!
//! Event handlers (upstream `addRS`/`updateRS`/`deleteRS`, `addPod`/`updatePod`/`deletePod`): a
//! ReplicaSet's change queues it; a pod's change queues the ReplicaSet controlling it (an orphan's,
//! every ReplicaSet of its namespace whose selector matches it) and counts toward that ReplicaSet's
//! expectations. A pod that became ready under `minReadySeconds` queues its ReplicaSet again
//! `minReadySeconds` later (upstream adds one second; k8s-mini's status math counts whole ticks,
//! so `minReadySeconds` ticks is when it turns available).
//!
//! The sync of one ReplicaSet (`syncReplicaSet`), from the informers' caches: its active pods (the
//! ones it controls and the orphans of its namespace, from the controller-uid index, in key order),
//! claimed (orphans matching its selector adopted); when its expectations are satisfied, create
//! `replicas - len(pods)` pods from its template (at most `burstReplicas` per sync, in slow-start
//! batches) or delete the surplus chosen by upstream's ranking, recording the expected creations or
//! deletions first; then write `status` if it changed.
//!
//! Differences from upstream: no `ReplicaFailure` status condition (k8s-mini's `ReplicaSetStatus`
//! has no conditions; failures show as `FailedCreate`/`FailedDelete` events); the optional
//! terminating-replicas status field is not computed.

use std::sync::Arc;

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::apps::ReplicaSet;
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::event::event_types;
use k8s_types::core::Pod;
use k8s_types::events::EventRecorder;
use k8s_types::informer::{object_key, Delta, SharedInformerFactory};
use k8s_types::status::Status;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Resource, Tick};

use crate::controller_ref_manager::claim_shared;
use crate::controller_utils::{
    is_pod_active, is_pod_available, new_controller_ref, on_owned_pod_change, pod_from_template,
    pod_ready_tick, rs_replicas, slow_start_batch, sort_pods_for_deletion, RankedPod,
    FAILED_CREATE_POD_REASON, FAILED_DELETE_POD_REASON, SLOW_START_INITIAL_BATCH_SIZE,
    SUCCESSFUL_CREATE_POD_REASON, SUCCESSFUL_DELETE_POD_REASON,
};
use crate::expectations::ControllerExpectations;

/// The controller name, also the `source.component` of its Events (upstream
/// `ReplicaSetController` registered as `replicaset-controller`).
pub const REPLICA_SET_CONTROLLER_NAME: &str = "replicaset-controller";

/// Upstream `BurstReplicas`: at most this many pod creates or deletes per sync of one ReplicaSet.
pub const BURST_REPLICAS: usize = 500;

/// kube-controller-manager's ReplicaSet controller.
#[derive(Clone, Debug)]
pub struct ReplicaSetController {
    burst_replicas: usize,
    expectations: ControllerExpectations,
    /// The controller's event recorder (upstream: its own broadcaster and recorder).
    events: EventRecorder,
}

impl Default for ReplicaSetController {
    fn default() -> Self {
        Self::new()
    }
}

/// The pods of `informers` a ReplicaSet may claim: the ones of `namespace` controlled by `uid` and
/// the orphans of `namespace`, in key order (upstream lists the namespace; the controller-uid index
/// gives the same candidates without visiting other controllers' pods). A pod of another namespace
/// naming the ReplicaSet's uid is not one of its pods, as upstream's namespaced list never sees it.
fn candidate_pods<'a>(
    informers: &'a SharedInformerFactory,
    namespace: &str,
    uid: &str,
) -> Vec<&'a Arc<Object>> {
    let pods = informers.of(&Kind::Pod);
    let mut out = pods.controlled_by(uid);
    out.retain(|o| o.meta().namespace() == namespace);
    let orphans = pods.orphans(namespace);
    if orphans.is_empty() {
        // Already in key order (the index is ordered).
        return out;
    }
    out.extend(orphans);
    out.sort_by_cached_key(|o| object_key(o));
    out
}

fn as_pod(o: &Object) -> Option<&Pod> {
    Pod::from_object_ref(o)
}

impl ReplicaSetController {
    /// A controller with upstream's burst of [`BURST_REPLICAS`] (500) creates/deletes per sync.
    pub fn new() -> Self {
        Self::with_burst_replicas(BURST_REPLICAS)
    }

    /// A controller creating or deleting at most `burst` pods per ReplicaSet per sync (upstream
    /// `--concurrent-replicaset-syncs` is unrelated; this is `burstReplicas`). 0 is raised to 1.
    pub fn with_burst_replicas(burst: usize) -> Self {
        ReplicaSetController {
            burst_replicas: burst.max(1),
            expectations: ControllerExpectations::new(),
            events: EventRecorder::for_component(REPLICA_SET_CONTROLLER_NAME),
        }
    }

    /// One sync of one ReplicaSet (upstream `syncReplicaSet`), reading pods from `informers`.
    ///
    /// # Errors
    /// An apiserver error from claiming pods (the sync skips the rest of this ReplicaSet) or from the
    /// status update; create/delete failures are reported as events and in the return value.
    pub fn sync_replica_set(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        rs: &ReplicaSet,
    ) -> Result<Action, Status> {
        let Some(selector) = rs.spec.selector.clone() else {
            // Validation requires a selector; without one the ReplicaSet selects nothing and would
            // create pods forever, so k8s-mini leaves it alone.
            tracing::warn!(rs = %rs.metadata.name, "ReplicaSet has no selector; skipping");
            return Ok(Action::AwaitChange);
        };
        let now = api.now();
        let namespace = rs.metadata.namespace().to_string();
        let key = format!("{namespace}/{}", rs.metadata.name);
        let rs_needs_sync = self.expectations.satisfied(&key, now);
        let uid = rs.metadata.uid.clone().unwrap_or_default();
        let active: Vec<Arc<Object>> = candidate_pods(informers, &namespace, &uid)
            .into_iter()
            .filter(|o| as_pod(o).is_some_and(is_pod_active))
            .cloned()
            .collect();
        let filtered = claim_shared(api, &Kind::ReplicaSet, &rs.metadata, &selector, active)?;
        let filtered: Vec<&Pod> = filtered.iter().filter_map(|o| as_pod(o)).collect();

        let mut manage_err = None;
        if rs_needs_sync && rs.metadata.deletion_timestamp.is_none() {
            if let Err(e) = self.manage_replicas(api, informers, rs, &key, &filtered) {
                manage_err = Some(e);
            }
        }

        let new_status = calculate_status(rs, &filtered, now);
        let updated = update_replica_set_status(api, rs, new_status)?;
        if let Some(e) = manage_err {
            return Err(e);
        }
        // Upstream requeues after minReadySeconds once every replica is ready but not all are
        // available; k8s-mini requeues at the exact tick the next ready pod turns available
        // (`readyTime + minReadySeconds < now`), which is when upstream's status would change.
        let min_ready = updated.spec.min_ready_seconds.unwrap_or(0);
        if min_ready > 0 {
            let next = filtered
                .iter()
                .filter(|p| !is_pod_available(p, min_ready, now))
                .filter_map(|p| pod_ready_tick(p))
                .map(|r| r.saturating_add(min_ready as Tick).saturating_add(1))
                .filter(|t| *t > now)
                .min();
            if let Some(t) = next {
                return Ok(Action::requeue(t - now));
            }
        }
        Ok(Action::AwaitChange)
    }

    /// Upstream `manageReplicas`: creates or deletes pods so `filtered` reaches `spec.replicas`,
    /// recording the creations (deletions) it expects to observe before making them.
    fn manage_replicas(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        rs: &ReplicaSet,
        key: &str,
        filtered: &[&Pod],
    ) -> Result<(), Status> {
        let want = rs_replicas(rs).max(0) as usize;
        let have = filtered.len();
        let now = api.now();
        let rs_obj = rs.clone().into_object();
        if have < want {
            let diff = (want - have).min(self.burst_replicas);
            self.expectations.expect_creations(key, diff, now);
            let controller_ref = new_controller_ref(&rs.metadata, &Kind::ReplicaSet);
            let template = pod_from_template(&rs.spec.template, &rs.metadata, controller_ref);
            let mut failed = 0usize;
            let events = &mut self.events;
            let (successes, err) =
                slow_start_batch(diff, SLOW_START_INITIAL_BATCH_SIZE, &mut || match api
                    .create_shared(Object::Pod(Box::new(template.clone())))
                {
                    Ok(created) => {
                        events.record(
                            api,
                            &rs_obj,
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
                            &rs_obj,
                            event_types::WARNING,
                            FAILED_CREATE_POD_REASON,
                            format!("Error creating: {}", e.message),
                        );
                        Err(e)
                    }
                });
            // Upstream: a failed create is never observed (`CreationObserved` in the error path),
            // nor are the creates a failed batch skipped.
            let skipped = diff - successes - failed;
            self.expectations.lower_creations(key, failed + skipped);
            if let Some(e) = err {
                return Err(e);
            }
        } else if have > want {
            let diff = (have - want).min(self.burst_replicas);
            let related = indirectly_related_pods(informers, rs);
            let to_delete = get_pods_to_delete(filtered, &related, diff, now);
            let keys = to_delete.iter().map(|p| p.key()).collect();
            self.expectations.expect_deletions(key, keys, now);
            let mut first_err = None;
            let events = &mut self.events;
            for pod in to_delete {
                let name = pod.metadata.name.clone();
                match api.delete(
                    &Kind::Pod,
                    pod.metadata.namespace(),
                    &name,
                    DeleteOptions::default(),
                ) {
                    Ok(_) => {
                        events.record(
                            api,
                            &rs_obj,
                            event_types::NORMAL,
                            SUCCESSFUL_DELETE_POD_REASON,
                            format!("Deleted pod: {name}"),
                        );
                    }
                    Err(e) if e.is_not_found() => {
                        self.expectations.deletion_observed(key, &pod.key());
                    }
                    Err(e) => {
                        // Upstream: a delete that failed will not be observed.
                        self.expectations.deletion_observed(key, &pod.key());
                        events.record(
                            api,
                            &rs_obj,
                            event_types::WARNING,
                            FAILED_DELETE_POD_REASON,
                            format!("Error deleting: {}", e.message),
                        );
                        if first_err.is_none() {
                            first_err = Some(e);
                        }
                    }
                }
            }
            if let Some(e) = first_err {
                return Err(e);
            }
        }
        Ok(())
    }
}

/// Upstream `getIndirectlyRelatedPods`: the pods (any state) controlled by any ReplicaSet that
/// shares `rs`'s controller (e.g. every ReplicaSet of one Deployment); just `rs`'s own pods when it
/// has no controller.
fn indirectly_related_pods<'a>(
    informers: &'a SharedInformerFactory,
    rs: &ReplicaSet,
) -> Vec<&'a Pod> {
    let own_uid = rs.metadata.uid.clone().unwrap_or_default();
    let rs_uids: Vec<String> = match rs.metadata.controller_ref() {
        Some(cref) => informers
            .of(&Kind::ReplicaSet)
            .controlled_by(&cref.uid)
            .into_iter()
            .filter(|o| o.meta().namespace() == rs.metadata.namespace())
            .filter_map(|o| o.meta().uid.clone())
            .collect(),
        None => vec![own_uid],
    };
    let pods = informers.of(&Kind::Pod);
    rs_uids
        .iter()
        .flat_map(|uid| pods.controlled_by(uid))
        .filter_map(|o| as_pod(o))
        .filter(|p| p.metadata.namespace() == rs.metadata.namespace())
        .collect()
}

/// Upstream `getPodsToDelete`: the first `diff` pods of `filtered` ranked by
/// `ActivePodsWithRanks`, where a pod's rank is the number of active `related` pods on its node.
/// When every pod goes, no ranking is needed and the given order is kept.
pub fn get_pods_to_delete<'a>(
    filtered: &[&'a Pod],
    related: &[&Pod],
    diff: usize,
    now: Tick,
) -> Vec<&'a Pod> {
    if diff >= filtered.len() {
        return filtered.to_vec();
    }
    // Only looked up, never iterated: a hash map (a node name is hashed once per pod instead of
    // compared against a dozen others).
    let mut on_node = rustc_hash::FxHashMap::<&str, usize>::default();
    for p in related.iter().filter(|p| is_pod_active(p)) {
        *on_node.entry(p.node_name().unwrap_or("")).or_default() += 1;
    }
    let mut ranked: Vec<RankedPod<'a>> = filtered
        .iter()
        .map(|p| RankedPod {
            rank: on_node
                .get(p.node_name().unwrap_or(""))
                .copied()
                .unwrap_or(0),
            pod: p,
        })
        .collect();
    sort_pods_for_deletion(&mut ranked, now);
    ranked.into_iter().take(diff).map(|r| r.pod).collect()
}

/// Upstream `calculateStatus`: replicas, fullyLabeledReplicas (pods whose labels contain every
/// template label), readyReplicas, availableReplicas (ready for minReadySeconds) over the claimed
/// active pods. `observedGeneration` is left as it was.
pub fn calculate_status(
    rs: &ReplicaSet,
    filtered: &[&Pod],
    now: Tick,
) -> k8s_types::apps::ReplicaSetStatus {
    let mut status = rs.status.clone();
    let template_labels = &rs.spec.template.metadata.labels;
    let min_ready = rs.spec.min_ready_seconds.unwrap_or(0);
    let (mut fully, mut ready, mut available) = (0, 0, 0);
    for p in filtered {
        if template_labels
            .iter()
            .all(|(k, v)| p.metadata.labels.get(k) == Some(v))
        {
            fully += 1;
        }
        if p.is_ready() {
            ready += 1;
            if is_pod_available(p, min_ready, now) {
                available += 1;
            }
        }
    }
    status.replicas = filtered.len() as i32;
    status.fully_labeled_replicas = fully;
    status.ready_replicas = ready;
    status.available_replicas = available;
    status
}

/// Upstream `statusUpdateRetries` (`pkg/controller/replicaset/replica_set.go`): a failed status
/// write is retried once, after a GET of the latest ReplicaSet.
pub const STATUS_UPDATE_RETRIES: u32 = 1;

/// Upstream `updateReplicaSetStatus` (`pkg/controller/replicaset/replica_set_utils.go`): writes
/// `status` (with `observedGeneration = generation`) only when a count or the observed generation
/// changed, "with a single GET/PUT retry": when the write fails (a `409 Conflict` because the
/// cached ReplicaSet is stale), the ReplicaSet is read again from the apiserver and the same status
/// written on it, [`STATUS_UPDATE_RETRIES`] time(s); the last error is returned (the sync fails and
/// the key is requeued rate-limited). Returns the ReplicaSet as stored.
fn update_replica_set_status(
    api: &mut dyn ApiClient,
    rs: &ReplicaSet,
    mut new_status: k8s_types::apps::ReplicaSetStatus,
) -> Result<ReplicaSet, Status> {
    let generation = rs.metadata.generation;
    let old = &rs.status;
    if old.replicas == new_status.replicas
        && old.fully_labeled_replicas == new_status.fully_labeled_replicas
        && old.ready_replicas == new_status.ready_replicas
        && old.available_replicas == new_status.available_replicas
        && old.observed_generation == generation
    {
        return Ok(rs.clone());
    }
    new_status.observed_generation = generation;
    let mut updated = rs.clone();
    let mut attempt = 0;
    loop {
        updated.status = new_status.clone();
        match api.update_status_typed(updated) {
            Ok(stored) => return Ok(stored),
            Err(e) if attempt >= STATUS_UPDATE_RETRIES => return Err(e),
            Err(_) => {
                attempt += 1;
                updated = api.get_typed(rs.metadata.namespace(), &rs.metadata.name)?;
            }
        }
    }
}

impl Controller for ReplicaSetController {
    fn name(&self) -> &str {
        REPLICA_SET_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::ReplicaSet, Kind::Pod]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        match change.kind {
            Kind::ReplicaSet => {
                if change.is_delete() {
                    self.expectations.delete(&change.key);
                }
                queue.add(change.key.clone());
            }
            Kind::Pod => on_owned_pod_change::<ReplicaSet>(
                &Kind::ReplicaSet,
                change,
                informers,
                &mut self.expectations,
                queue,
                |rs| rs.spec.selector.as_ref(),
                true,
            ),
            _ => {}
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(rs) = informers
            .of(&Kind::ReplicaSet)
            .get_typed::<ReplicaSet>(key)
            .cloned()
        else {
            self.expectations.delete(key);
            return Ok(Action::AwaitChange);
        };
        Ok(self.sync_replica_set(api, informers, &rs)?)
    }
}
