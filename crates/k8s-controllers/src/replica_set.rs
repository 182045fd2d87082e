//! The ReplicaSet controller, after upstream `pkg/controller/replicaset/replica_set.go`
//! (`syncReplicaSet`, `claimPods`, `manageReplicas`, `getPodsToDelete`) and
//! `replica_set_utils.go` (`calculateStatus`, `updateReplicaSetStatus`).
//!
//! Every tick, for each ReplicaSet: list the active pods of its namespace, claim the ones it
//! controls or adopts (orphans matching its selector), create `replicas - len(pods)` pods from its
//! template (at most `burstReplicas` per pass, in slow-start batches) or delete the surplus chosen by
//! upstream's ranking, then write `status` if it changed.
//!
//! Differences from upstream: no expectations cache (k8s-mini's reads are never stale, so a pass
//! never double-creates); no `ReplicaFailure` status condition (k8s-mini's `ReplicaSetStatus` has no
//! conditions; failures show as `FailedCreate`/`FailedDelete` events); the optional
//! terminating-replicas status field is not computed.

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::apps::ReplicaSet;
use k8s_types::controller::{Action, Controller, ReconcileReason};
use k8s_types::core::event::event_types;
use k8s_types::core::Pod;
use k8s_types::events::EventRecorder;
use k8s_types::status::Status;
use k8s_types::{Kind, Object, Resource, Tick};

use crate::controller_ref_manager::claim_objects;
use crate::controller_utils::{
    is_controlled_by, is_pod_active, is_pod_available, new_controller_ref, pod_from_template,
    rs_replicas, slow_start_batch, sort_pods_for_deletion, RankedPod, FAILED_CREATE_POD_REASON,
    FAILED_DELETE_POD_REASON, SLOW_START_INITIAL_BATCH_SIZE, SUCCESSFUL_CREATE_POD_REASON,
    SUCCESSFUL_DELETE_POD_REASON,
};

/// The controller name, also the `source.component` of its Events (upstream
/// `ReplicaSetController` registered as `replicaset-controller`).
pub const REPLICA_SET_CONTROLLER_NAME: &str = "replicaset-controller";

/// Upstream `BurstReplicas`: at most this many pod creates or deletes per sync of one ReplicaSet.
pub const BURST_REPLICAS: usize = 500;

/// kube-controller-manager's ReplicaSet controller.
#[derive(Clone, Debug)]
pub struct ReplicaSetController {
    burst_replicas: usize,
    /// The controller's event recorder (upstream: its own broadcaster and recorder).
    events: EventRecorder,
}

impl Default for ReplicaSetController {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplicaSetController {
    /// A controller with upstream's burst of [`BURST_REPLICAS`] (500) creates/deletes per sync.
    pub fn new() -> Self {
        ReplicaSetController {
            burst_replicas: BURST_REPLICAS,
            events: EventRecorder::for_component(REPLICA_SET_CONTROLLER_NAME),
        }
    }

    /// A controller creating or deleting at most `burst` pods per ReplicaSet per tick (upstream
    /// `--concurrent-replicaset-syncs` is unrelated; this is `burstReplicas`). 0 is raised to 1.
    pub fn with_burst_replicas(burst: usize) -> Self {
        ReplicaSetController {
            burst_replicas: burst.max(1),
            events: EventRecorder::for_component(REPLICA_SET_CONTROLLER_NAME),
        }
    }

    /// One sync of one ReplicaSet (upstream `syncReplicaSet`).
    ///
    /// # Errors
    /// An apiserver error from claiming pods (the pass skips the rest of this ReplicaSet) or from the
    /// status update; create/delete failures are reported as events and in the return value.
    pub fn sync_replica_set(
        &mut self,
        api: &mut dyn ApiClient,
        rs: &ReplicaSet,
    ) -> Result<Action, Status> {
        let Some(selector) = rs.spec.selector.clone() else {
            // Validation requires a selector; without one the ReplicaSet selects nothing and would
            // create pods forever, so k8s-mini leaves it alone.
            tracing::warn!(rs = %rs.metadata.name, "ReplicaSet has no selector; skipping");
            return Ok(Action::AwaitChange);
        };
        let namespace = rs.metadata.namespace().to_string();
        let all_pods: Vec<Pod> = api.list_typed::<Pod>(Some(&namespace), None);
        let active: Vec<Pod> = all_pods
            .iter()
            .filter(|p| is_pod_active(p))
            .cloned()
            .collect();
        let filtered = claim_objects(api, &Kind::ReplicaSet, &rs.metadata, &selector, active)?;

        let mut manage_err = None;
        if rs.metadata.deletion_timestamp.is_none() {
            if let Err(e) = self.manage_replicas(api, rs, &filtered, &all_pods) {
                manage_err = Some(e);
            }
        }

        let now = api.now();
        let new_status = calculate_status(rs, &filtered, now);
        let updated = update_replica_set_status(api, rs, new_status)?;
        if let Some(e) = manage_err {
            return Err(e);
        }
        let min_ready = updated.spec.min_ready_seconds.unwrap_or(0);
        let replicas = rs_replicas(&updated);
        if min_ready > 0
            && updated.status.ready_replicas == replicas
            && updated.status.available_replicas != replicas
        {
            return Ok(Action::requeue(min_ready as Tick));
        }
        Ok(Action::AwaitChange)
    }

    /// Upstream `manageReplicas`: creates or deletes pods so `filtered` reaches `spec.replicas`.
    fn manage_replicas(
        &mut self,
        api: &mut dyn ApiClient,
        rs: &ReplicaSet,
        filtered: &[Pod],
        all_pods: &[Pod],
    ) -> Result<(), Status> {
        let want = rs_replicas(rs).max(0) as usize;
        let have = filtered.len();
        let rs_obj = rs.clone().into_object();
        if have < want {
            let diff = (want - have).min(self.burst_replicas);
            let controller_ref = new_controller_ref(&rs.metadata, &Kind::ReplicaSet);
            let template = pod_from_template(&rs.spec.template, &rs.metadata, controller_ref);
            let events = &mut self.events;
            let (_, err) = slow_start_batch(diff, SLOW_START_INITIAL_BATCH_SIZE, &mut || match api
                .create(Object::Pod(template.clone()))
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
            if let Some(e) = err {
                return Err(e);
            }
        } else if have > want {
            let diff = (have - want).min(self.burst_replicas);
            let related = indirectly_related_pods(api, rs, all_pods);
            let events = &mut self.events;
            let to_delete = get_pods_to_delete(filtered, &related, diff, api.now());
            let mut first_err = None;
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
                    Err(e) if e.is_not_found() => {}
                    Err(e) => {
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
fn indirectly_related_pods(api: &dyn ApiClient, rs: &ReplicaSet, all_pods: &[Pod]) -> Vec<Pod> {
    let related_rss: Vec<ReplicaSet> = match rs.metadata.controller_ref() {
        Some(cref) => api
            .list_typed::<ReplicaSet>(Some(rs.metadata.namespace()), None)
            .into_iter()
            .filter(|o| {
                o.metadata
                    .controller_ref()
                    .is_some_and(|r| r.uid == cref.uid)
            })
            .collect(),
        None => vec![rs.clone()],
    };
    all_pods
        .iter()
        .filter(|p| {
            related_rss
                .iter()
                .any(|r| is_controlled_by(&p.metadata, &r.metadata))
        })
        .cloned()
        .collect()
}

/// Upstream `getPodsToDelete`: the first `diff` pods of `filtered` ranked by
/// `ActivePodsWithRanks`, where a pod's rank is the number of active `related` pods on its node.
/// When every pod goes, no ranking is needed and the given order is kept.
pub fn get_pods_to_delete(filtered: &[Pod], related: &[Pod], diff: usize, now: Tick) -> Vec<Pod> {
    if diff >= filtered.len() {
        return filtered.to_vec();
    }
    let mut on_node = std::collections::BTreeMap::<String, usize>::new();
    for p in related.iter().filter(|p| is_pod_active(p)) {
        *on_node
            .entry(p.node_name().unwrap_or("").to_string())
            .or_default() += 1;
    }
    let mut ranked: Vec<RankedPod> = filtered
        .iter()
        .map(|p| RankedPod {
            rank: on_node
                .get(p.node_name().unwrap_or(""))
                .copied()
                .unwrap_or(0),
            pod: p.clone(),
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
    filtered: &[Pod],
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

/// Upstream `updateReplicaSetStatus`: writes `status` (with `observedGeneration = generation`)
/// only when a count or the observed generation changed. Returns the ReplicaSet as stored.
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
    updated.status = new_status;
    api.update_status_typed(updated)
}

impl Controller for ReplicaSetController {
    fn name(&self) -> &str {
        REPLICA_SET_CONTROLLER_NAME
    }

    fn reconcile(&mut self, api: &mut dyn ApiClient) {
        let reason = ReconcileReason::BulkReconcile;
        for rs in api.list_typed::<ReplicaSet>(None, None) {
            match self.sync_replica_set(api, &rs) {
                Ok(action) => tracing::trace!(
                    rs = %rs.metadata.name, %reason, ?action, "synced ReplicaSet"
                ),
                Err(e) => tracing::debug!(
                    rs = %rs.metadata.name, %reason, error = %e, "error syncing ReplicaSet"
                ),
            }
        }
    }
}
