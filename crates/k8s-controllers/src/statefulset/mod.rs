//! The StatefulSet controller, after upstream `pkg/controller/statefulset/stateful_set.go`
//! (event handlers, `getPodsForStatefulSet`, `sync`), `stateful_set_control.go`
//! (`updateStatefulSet`, `processReplica`, `processCondemned`, the rolling update,
//! `computeReplicaStatus`, `completeRollingUpdate`), `stateful_pod_control.go`
//! (`CreateStatefulPod` with its claims first, `DeleteStatefulPod`, `UpdateStatefulPod`, the
//! event reasons and messages) and `stateful_set_utils.go` ([`utils`]).
//!
//! One sync ([`StatefulSetController::sync_stateful_set`]): the pods whose name is
//! `<set>-<ordinal>` are claimed (adopted or released as the ReplicaSet controller does); those
//! in the ordinal range `[start, start + replicas)` are the replicas, the others are condemned.
//! Replicas are visited in ordinal order: a failed or succeeded pod is deleted (and re-created
//! at a later sync), a missing one is created (its PersistentVolumeClaims
//! `<template>-<set>-<ordinal>` first), a pod whose identity or storage drifted is updated.
//! With `OrderedReady` (the default) the visit stops at the first pod created, terminating, not
//! Running and Ready, or not yet available, so ordinal i is created only once 0..i-1 are
//! Running and Ready; `Parallel` visits them all. Then the condemned pods are deleted from the
//! highest ordinal down (OrderedReady: one at a time, each once the previous one is gone, and
//! only while every lower pod is healthy). Then, under `RollingUpdate`, the pod with the highest
//! ordinal at or above `partition` whose revision is not the update revision is deleted (it is
//! re-created from the update revision by a later sync), one at a time, waiting for each
//! updated pod to be Running and Ready; `OnDelete` re-creates deleted pods from the update
//! revision and deletes nothing.
//!
//! Revisions (upstream `getStatefulSetRevisions`, `truncateHistory`, [`crate::history`]): each
//! sync lists (and adopts) the set's ControllerRevisions, sorted by number; the update revision
//! is the one whose data equals the set's template: the newest one if so, an older one is
//! renumbered to the next number (a rollback), else a new `<set>-<hash>` is created with the
//! next number (name collisions bump `status.collisionCount`). The current revision is the one
//! named by `status.currentRevision`, else the update revision, until a rolling update
//! completes (`completeRollingUpdate`); a pod below the partition comes back from the current
//! revision's template. After the status, non-live revisions (neither current, update nor any
//! pod's) beyond `revisionHistoryLimit` are deleted oldest first.
//! Differences from upstream (docs/fidelity.md, StatefulSet): the hash (see [`crate::history`]).
//! `maxUnavailable` is kept
//! but not acted on (the MaxUnavailableStatefulSet gate is alpha, off, in v1.32). Pods are
//! created one after another in ordinal order under `Parallel` (upstream: concurrent batches).

pub mod utils;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::apps::{
    ControllerRevision, PodTemplateSpec, StatefulSet, ROLLING_UPDATE_STATEFUL_SET_STRATEGY,
};
use k8s_types::conflict::{retry_on_conflict, DEFAULT_RETRY_STEPS};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::event::event_types;
use k8s_types::core::{PersistentVolumeClaim, Pod};
use k8s_types::events::EventRecorder;
use k8s_types::informer::{object_key, Delta, SharedInformerFactory};
use k8s_types::status::Status;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Resource, Tick};

use crate::controller_ref_manager::claim_shared;
use crate::controller_utils::pod_ready_tick;
use crate::history;
use crate::pod_template_hash::compute_hash;
use utils::{
    allows_burst, claim_owner_refs, claims_for, identity_matches, in_ordinal_range, is_created,
    is_healthy, is_member_of, is_running_and_available, is_running_and_ready, new_stateful_set_pod,
    ordinal, partition, pod_revision, replicas, start_ordinal, storage_matches, strategy_type,
    update_identity, update_storage, uses_current_revision,
};

/// The controller name, also the `source.component` of its Events (upstream
/// `statefulset-controller`).
pub const STATEFUL_SET_CONTROLLER_NAME: &str = "statefulset-controller";

/// Upstream `ControllerRevisionName`: `<prefix>-<hash>`. As upstream's
/// `getStatefulSetRevisions`, an unset `collisionCount` hashes as 0.
pub fn revision_name(set: &StatefulSet) -> String {
    let collisions = Some(set.status.collision_count.unwrap_or(0));
    format!(
        "{}-{}",
        set.metadata.name,
        compute_hash(&set.spec.template, collisions)
    )
}

/// Upstream `replicaStatus` / `computeReplicaStatus`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplicaStatus {
    /// Created pods.
    pub replicas: i32,
    /// Running and Ready.
    pub ready: i32,
    /// Running and available for minReadySeconds.
    pub available: i32,
    /// Created, not terminating, of the current revision.
    pub current: i32,
    /// Created, not terminating, of the update revision.
    pub updated: i32,
}

/// Upstream `computeReplicaStatus`.
pub fn compute_replica_status(
    pods: &[&Pod],
    min_ready: i32,
    now: Tick,
    current: &str,
    update: &str,
) -> ReplicaStatus {
    let mut s = ReplicaStatus::default();
    for pod in pods {
        if is_created(pod) {
            s.replicas += 1;
        }
        if is_running_and_ready(pod) {
            s.ready += 1;
            if is_running_and_available(pod, min_ready, now) {
                s.available += 1;
            }
        }
        if is_created(pod) && !pod.is_terminating() {
            let r = pod_revision(pod);
            if r == current {
                s.current += 1;
            }
            if r == update {
                s.updated += 1;
            }
        }
    }
    s
}

/// kube-controller-manager's StatefulSet controller.
#[derive(Clone, Debug)]
pub struct StatefulSetController {
    events: EventRecorder,
}

/// The current and update revisions of one sync (upstream `getStatefulSetRevisions`).
#[derive(Clone, Debug)]
pub struct Revisions {
    /// The current revision (`status.currentRevision`'s, else the update revision).
    pub current: ControllerRevision,
    /// The revision of the set's template.
    pub update: ControllerRevision,
    /// The collision count the update revision's name needed.
    pub collision_count: i32,
}

impl Default for StatefulSetController {
    fn default() -> Self {
        Self::new()
    }
}

/// What one pass over the replicas decided.
struct Pass {
    status: ReplicaStatus,
    /// Stop: OrderedReady is waiting on a pod, or a write failed.
    exit: bool,
    /// Tick at which a ready pod turns available under minReadySeconds.
    requeue_at: Option<Tick>,
}

impl StatefulSetController {
    /// A StatefulSet controller.
    pub fn new() -> Self {
        StatefulSetController {
            events: EventRecorder::for_component(STATEFUL_SET_CONTROLLER_NAME),
        }
    }

    /// Upstream `getStatefulSetsForPod`: the sets of the pod's namespace selecting it.
    fn pod_sets(informers: &SharedInformerFactory, pod: &Pod) -> Vec<String> {
        informers.selecting::<StatefulSet>(
            &Kind::StatefulSet,
            pod.metadata.namespace(),
            &pod.metadata.labels,
            |s| s.spec.selector.as_ref(),
        )
    }

    /// Upstream `addPod` / `updatePod` / `deletePod`: the controlling set, or for an orphan
    /// (added, or whose labels or owner changed) every set selecting it.
    fn on_pod_change(change: &Delta, informers: &SharedInformerFactory, queue: &mut WorkQueue) {
        let old = change.old.as_deref().and_then(Pod::from_object_ref);
        let cur = change.new.as_deref().and_then(Pod::from_object_ref);
        let mut keys = Vec::new();
        for p in [old, cur].into_iter().flatten() {
            if let Some(c) = p.metadata.controller_ref() {
                keys.extend(informers.resolve_controller_ref(
                    &Kind::StatefulSet,
                    p.metadata.namespace(),
                    c,
                ));
            }
        }
        if let Some(cur) = cur.filter(|p| p.metadata.controller_ref().is_none()) {
            let changed = old.is_none_or(|o| {
                o.metadata.labels != cur.metadata.labels
                    || o.metadata.owner_references != cur.metadata.owner_references
            });
            if changed {
                keys.extend(Self::pod_sets(informers, cur));
            }
        }
        for k in keys {
            queue.add(k);
        }
    }

    /// Upstream `getPodsForStatefulSet`: the members (`<set>-<n>`) among the pods it controls
    /// and the namespace's orphans, claimed through the apiserver.
    fn claim_pods(
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        set: &StatefulSet,
    ) -> Result<Vec<Arc<Object>>, Status> {
        let Some(selector) = set.spec.selector.as_ref() else {
            return Ok(Vec::new());
        };
        let namespace = set.metadata.namespace();
        let uid = set.metadata.uid.clone().unwrap_or_default();
        let pods = informers.of(&Kind::Pod);
        let member = |o: &&Arc<Object>| {
            o.meta().namespace() == namespace
                && Pod::from_object_ref(o).is_some_and(|p| is_member_of(set, p))
        };
        let mut candidates: Vec<Arc<Object>> = pods
            .controlled_by(&uid)
            .into_iter()
            .filter(member)
            .cloned()
            .collect();
        let orphans: Vec<Arc<Object>> = pods
            .orphans(namespace)
            .into_iter()
            .filter(member)
            .cloned()
            .collect();
        if !orphans.is_empty() {
            candidates.extend(orphans);
            candidates.sort_by_cached_key(|o| object_key(o));
        }
        claim_shared(api, &Kind::StatefulSet, &set.metadata, selector, candidates)
    }

    fn record_pod_event(
        &mut self,
        api: &mut dyn ApiClient,
        set: &StatefulSet,
        verb: &str,
        pod: &str,
        err: Option<&Status>,
    ) {
        let obj = set.clone().into_object();
        let title = format!("{}{}", verb[..1].to_ascii_uppercase(), &verb[1..]);
        let name = &set.metadata.name;
        match err {
            None => self.events.record(
                api,
                &obj,
                event_types::NORMAL,
                &format!("Successful{title}"),
                format!("{verb} Pod {pod} in StatefulSet {name} successful"),
            ),
            Some(e) => self.events.record(
                api,
                &obj,
                event_types::WARNING,
                &format!("Failed{title}"),
                format!(
                    "{verb} Pod {pod} in StatefulSet {name} failed error: {}",
                    e.message
                ),
            ),
        };
    }

    /// Upstream `createPersistentVolumeClaims`: each missing claim of the pod is created
    /// (`create Claim <claim> Pod <pod> in StatefulSet <set> success`).
    fn create_claims(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        set: &StatefulSet,
        pod: &Pod,
        ord: i32,
    ) -> Result<(), Status> {
        let obj = set.clone().into_object();
        let claims = informers.of(&Kind::PersistentVolumeClaim);
        let mut first_err = None;
        for mut claim in claims_for(set, ord).into_values() {
            let key = format!("{}/{}", set.metadata.namespace(), claim.metadata.name);
            if claims.get_typed::<PersistentVolumeClaim>(&key).is_some() {
                continue;
            }
            claim.metadata.owner_references = claim_owner_refs(set, &claim, None, ord).into();
            let name = claim.metadata.name.clone();
            let (setn, podn) = (&set.metadata.name, &pod.metadata.name);
            match api.create(Object::PersistentVolumeClaim(Box::new(claim))) {
                Ok(_) => {
                    self.events.record(
                        api,
                        &obj,
                        event_types::NORMAL,
                        "SuccessfulCreate",
                        format!("create Claim {name} Pod {podn} in StatefulSet {setn} success"),
                    );
                }
                Err(e) if e.is_already_exists() => {}
                Err(e) => {
                    self.events.record(
                        api,
                        &obj,
                        event_types::WARNING,
                        "FailedCreate",
                        format!(
                            "create Claim {name} for Pod {podn} in StatefulSet {setn} failed error: {}",
                            e.message
                        ),
                    );
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Upstream `DeleteStatefulPod`.
    fn delete_pod(
        &mut self,
        api: &mut dyn ApiClient,
        set: &StatefulSet,
        pod: &Pod,
    ) -> Result<(), Status> {
        let ns = set.metadata.namespace().to_string();
        let r = api.delete(
            &Kind::Pod,
            &ns,
            &pod.metadata.name,
            DeleteOptions::default(),
        );
        match r {
            Ok(_) => {
                self.record_pod_event(api, set, "delete", &pod.metadata.name, None);
                Ok(())
            }
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => {
                self.record_pod_event(api, set, "delete", &pod.metadata.name, Some(&e));
                Err(e)
            }
        }
    }

    /// Upstream `processReplica` for the replica of ordinal `ord` (`None`: not created yet).
    #[allow(clippy::too_many_arguments)]
    fn process_replica(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        set: &StatefulSet,
        ord: i32,
        pod: Option<&Pod>,
        (current, update): (&str, &str),
        current_template: &PodTemplateSpec,
        pass: &mut Pass,
    ) -> Result<(), Status> {
        let monotonic = !allows_burst(set);
        let now = api.now();
        let min_ready = set.spec.min_ready_seconds.unwrap_or(0);
        let Some(pod) = pod else {
            let (revision, template) = if uses_current_revision(set, ord) {
                (current, current_template.clone())
            } else {
                (update, set.spec.template.clone())
            };
            let new_pod = new_stateful_set_pod(set, &template, revision, ord);
            if let Err(e) = self.create_claims(api, informers, set, &new_pod, ord) {
                self.record_pod_event(api, set, "create", &new_pod.metadata.name, Some(&e));
                return Err(e);
            }
            let name = new_pod.metadata.name.clone();
            match api.create(Object::Pod(Box::new(new_pod))) {
                Ok(_) => self.record_pod_event(api, set, "create", &name, None),
                Err(e) if e.is_already_exists() => {}
                Err(e) => {
                    self.record_pod_event(api, set, "create", &name, Some(&e));
                    return Err(e);
                }
            }
            pass.status.replicas += 1;
            if revision == current {
                pass.status.current += 1;
            }
            if revision == update {
                pass.status.updated += 1;
            }
            pass.exit = monotonic;
            return Ok(());
        };
        if pod.is_terminal() {
            if !pod.is_terminating() {
                self.delete_pod(api, set, pod)?;
            }
            // The replacement is created once the pod is gone.
            pass.exit = monotonic;
            return Ok(());
        }
        if pod.is_terminating() || !is_running_and_ready(pod) {
            pass.exit = monotonic;
            return Ok(());
        }
        if !is_running_and_available(pod, min_ready, now) {
            if let Some(r) = pod_ready_tick(pod) {
                let at = r.saturating_add(min_ready as Tick).saturating_add(1);
                pass.requeue_at = Some(pass.requeue_at.map_or(at, |t| t.min(at)));
            }
            pass.exit = monotonic;
            return Ok(());
        }
        if identity_matches(set, pod) && storage_matches(set, pod) {
            return Ok(());
        }
        // Upstream `UpdateStatefulPod`: fix the identity and the storage (claims first).
        let mut fixed = pod.clone();
        update_identity(set, &mut fixed, ord);
        update_storage(set, &mut fixed, ord);
        self.create_claims(api, informers, set, &fixed, ord)?;
        let name = fixed.metadata.name.clone();
        match api.update(Object::Pod(Box::new(fixed))) {
            Ok(_) => {
                self.record_pod_event(api, set, "update", &name, None);
                Ok(())
            }
            Err(e) => {
                self.record_pod_event(api, set, "update", &name, Some(&e));
                Err(e)
            }
        }
    }

    /// Upstream `updateClaimOwnerRefForSetAndPod` for a condemned pod (`whenScaled: Delete`):
    /// its claims get the pod as owner before it goes, so the garbage collector deletes them
    /// after it.
    fn own_condemned_claims(
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        set: &StatefulSet,
        pod: &Pod,
    ) -> Result<(), Status> {
        let ord = ordinal(pod);
        let claims = informers.of(&Kind::PersistentVolumeClaim);
        for template in claims_for(set, ord).into_values() {
            let key = format!("{}/{}", set.metadata.namespace(), template.metadata.name);
            let Some(claim) = claims.get_typed::<PersistentVolumeClaim>(&key) else {
                continue;
            };
            let refs = claim_owner_refs(set, claim, Some(pod), ord);
            if refs != *claim.metadata.owner_references {
                let mut c = claim.clone();
                c.metadata.owner_references = refs.into();
                api.update_typed(c)?;
            }
        }
        Ok(())
    }

    /// One sync of one StatefulSet (upstream `syncStatefulSet` + `updateStatefulSet` +
    /// `updateStatefulSetStatus`).
    ///
    /// # Errors
    /// An apiserver error from claiming, creating, updating or deleting, or writing the status.
    pub fn sync_stateful_set(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        set: &StatefulSet,
    ) -> Result<Action, Status> {
        let now = api.now();
        let revisions = match set.spec.selector.as_ref() {
            Some(sel) => {
                history::list_and_adopt(api, informers, &set.metadata, &Kind::StatefulSet, sel)?
            }
            // Upstream: a nil selector selects nothing.
            None => Vec::new(),
        };
        let revs = get_stateful_set_revisions(api, set, &revisions)?;
        let (current, update) = (
            revs.current.metadata.name.clone(),
            revs.update.metadata.name.clone(),
        );
        // Upstream `ApplyRevision`: the current revision's template (the set's if its data
        // holds none).
        let current_template = revs
            .current
            .template()
            .unwrap_or_else(|| set.spec.template.clone());
        let claimed = Self::claim_pods(api, informers, set)?;
        let mut pods: Vec<&Pod> = claimed
            .iter()
            .filter_map(|o| Pod::from_object_ref(o))
            .collect();
        pods.sort_by_key(|p| (ordinal(p), p.metadata.name.clone()));
        let min_ready = set.spec.min_ready_seconds.unwrap_or(0);
        let mut pass = Pass {
            status: compute_replica_status(&pods, min_ready, now, &current, &update),
            exit: false,
            requeue_at: None,
        };
        let result = if set.metadata.deletion_timestamp.is_some() {
            Ok(())
        } else {
            self.update_pods(
                api,
                informers,
                set,
                &pods,
                (&current, &update),
                &current_template,
                &mut pass,
            )
        };
        let status = self.update_status(api, informers, set, &pass.status, &revs);
        let truncated = truncate_history(api, set, &pods, &revisions, &revs);
        result?;
        status?;
        truncated?;
        Ok(match pass.requeue_at.filter(|t| *t > now) {
            Some(t) => Action::requeue(t - now),
            None => Action::AwaitChange,
        })
    }

    /// Upstream `updateStatefulSet`'s three passes: replicas, condemned pods, rolling update.
    #[allow(clippy::too_many_arguments)]
    fn update_pods(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        set: &StatefulSet,
        pods: &[&Pod],
        revs: (&str, &str),
        current_template: &PodTemplateSpec,
        pass: &mut Pass,
    ) -> Result<(), Status> {
        let monotonic = !allows_burst(set);
        let start = start_ordinal(set);
        let by_ordinal: BTreeMap<i32, &Pod> = pods
            .iter()
            .filter(|p| in_ordinal_range(set, ordinal(p)))
            .map(|p| (ordinal(p), *p))
            .collect();
        let condemned: Vec<&Pod> = pods
            .iter()
            .filter(|p| ordinal(p) >= 0 && !in_ordinal_range(set, ordinal(p)))
            .copied()
            .collect();
        // Upstream: the first unhealthy pod in ordinal order, replicas then condemned.
        let first_unhealthy = pods
            .iter()
            .find(|p| !is_healthy(p))
            .map(|p| p.metadata.name.clone());
        let mut first_err = None;
        for ord in start..start.saturating_add(replicas(set)) {
            let pod = by_ordinal.get(&ord).copied();
            let r =
                self.process_replica(api, informers, set, ord, pod, revs, current_template, pass);
            if let Err(e) = r {
                if monotonic {
                    return Err(e);
                }
                first_err.get_or_insert(e);
            }
            if pass.exit && monotonic {
                return Ok(());
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        // Upstream `processCondemned`, highest ordinal first.
        let now = api.now();
        let min_ready = set.spec.min_ready_seconds.unwrap_or(0);
        for pod in condemned.iter().rev() {
            if pod.is_terminating() {
                if monotonic {
                    return Ok(());
                }
                continue;
            }
            let is_first = first_unhealthy.as_deref() == Some(pod.metadata.name.as_str());
            if monotonic
                && !is_first
                && (!is_running_and_ready(pod) || !is_running_and_available(pod, min_ready, now))
            {
                return Ok(());
            }
            if utils::retention_deletes(set).1 {
                Self::own_condemned_claims(api, informers, set, pod)?;
            }
            self.delete_pod(api, set, pod)?;
            if monotonic {
                return Ok(());
            }
        }
        if strategy_type(set) != ROLLING_UPDATE_STATEFUL_SET_STRATEGY {
            return Ok(());
        }
        // Upstream: the rolling update, from the highest ordinal down to the partition.
        let update_min = partition(set).unwrap_or(0);
        for ord in (start..start.saturating_add(replicas(set))).rev() {
            if ord < update_min {
                break;
            }
            let Some(pod) = by_ordinal.get(&ord) else {
                return Ok(());
            };
            if pod_revision(pod) != revs.1 && !pod.is_terminating() {
                self.delete_pod(api, set, pod)?;
                if pod_revision(pod) == revs.0 {
                    pass.status.current -= 1;
                }
                return Ok(());
            }
            if !is_healthy(pod) {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Upstream `updateStatefulSetStatus` with `completeRollingUpdate`: written only when
    /// something changed, through upstream's status updater
    /// (`pkg/controller/statefulset/stateful_set_status_updater.go`):
    /// `retry.RetryOnConflict(retry.DefaultRetry, ...)` ([`DEFAULT_RETRY_STEPS`] attempts in the
    /// tick), each failed write re-reading the StatefulSet **from the lister** (the informer's
    /// cache), not from the apiserver. A cache that lags behind the store gives the same stale
    /// resourceVersion every time, so all five attempts meet `409 Conflict` and the sync fails
    /// (requeued rate-limited) until the cache catches up.
    fn update_status(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        set: &StatefulSet,
        rs: &ReplicaStatus,
        revs: &Revisions,
    ) -> Result<(), Status> {
        let mut s = set.status.clone();
        s.observed_generation = set.metadata.generation;
        s.replicas = rs.replicas;
        s.ready_replicas = rs.ready;
        s.available_replicas = rs.available;
        s.current_replicas = rs.current;
        s.updated_replicas = rs.updated;
        s.current_revision.clone_from(&revs.current.metadata.name);
        s.update_revision.clone_from(&revs.update.metadata.name);
        s.collision_count = Some(revs.collision_count);
        let want = replicas(set);
        if strategy_type(set) == ROLLING_UPDATE_STATEFUL_SET_STRATEGY
            && s.updated_replicas == want
            && s.ready_replicas == want
            && s.replicas == want
        {
            s.current_replicas = s.updated_replicas;
            s.current_revision.clone_from(&s.update_revision);
        }
        if s == set.status {
            return Ok(());
        }
        let mut updated = set.clone();
        let key = format!("{}/{}", set.metadata.namespace(), set.metadata.name);
        retry_on_conflict(DEFAULT_RETRY_STEPS, || {
            updated.status = s.clone();
            let written = api.update_status_typed(updated.clone()).map(|_| ());
            if written.is_err() {
                if let Some(cached) = informers
                    .of(&Kind::StatefulSet)
                    .get_typed::<StatefulSet>(&key)
                {
                    updated = cached.clone();
                }
            }
            written
        })
    }
}

impl Controller for StatefulSetController {
    fn name(&self) -> &str {
        STATEFUL_SET_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![
            Kind::StatefulSet,
            Kind::Pod,
            Kind::PersistentVolumeClaim,
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
            Kind::StatefulSet => queue.add(change.key.clone()),
            Kind::Pod => Self::on_pod_change(change, informers, queue),
            _ => {}
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(set) = informers
            .of(&Kind::StatefulSet)
            .get_typed::<StatefulSet>(key)
            .cloned()
        else {
            return Ok(Action::AwaitChange);
        };
        Ok(self.sync_stateful_set(api, informers, &set)?)
    }
}

/// Upstream `getStatefulSetRevisions` over `sorted` (the set's revisions, oldest first): the
/// update revision is the newest one equal to the set's template (left alone when it is the
/// newest overall, else renumbered to the next number), or a new one; the current revision is
/// the one named `status.currentRevision`, else the update revision.
///
/// # Errors
/// The apiserver's, from creating or renumbering the update revision.
pub fn get_stateful_set_revisions(
    api: &mut dyn ApiClient,
    set: &StatefulSet,
    sorted: &[ControllerRevision],
) -> Result<Revisions, Status> {
    let mut collision_count = set.status.collision_count.unwrap_or(0);
    let next = history::next_revision(sorted);
    let wanted = history::new_controller_revision(
        &set.metadata,
        &Kind::StatefulSet,
        &set.spec.template,
        next,
        collision_count,
    );
    let equal: Vec<&ControllerRevision> = sorted
        .iter()
        .filter(|r| history::equal_revision(r, &wanted))
        .collect();
    let update = match (equal.last(), sorted.last()) {
        (Some(e), Some(last)) if history::equal_revision(last, e) => last.clone(),
        (Some(e), _) => history::update_controller_revision(api, e, next)?,
        (None, _) => history::create_controller_revision(
            api,
            &set.metadata,
            &Kind::StatefulSet,
            &set.spec.template,
            next,
            &mut collision_count,
        )?,
    };
    let current = sorted
        .iter()
        .find(|r| r.metadata.name == set.status.current_revision)
        .cloned()
        .unwrap_or_else(|| update.clone());
    Ok(Revisions {
        current,
        update,
        collision_count,
    })
}

/// Upstream `truncateHistory`: the current and update revisions and every pod's revision are
/// live; the other revisions of `sorted` beyond `revisionHistoryLimit` (default 10) are
/// deleted, lowest number first.
///
/// # Errors
/// The first failed deletion.
pub fn truncate_history(
    api: &mut dyn ApiClient,
    set: &StatefulSet,
    pods: &[&Pod],
    sorted: &[ControllerRevision],
    revs: &Revisions,
) -> Result<(), Status> {
    let is_live = |r: &ControllerRevision| {
        let n = r.metadata.name.as_str();
        n == revs.current.metadata.name
            || n == revs.update.metadata.name
            || pods.iter().any(|p| pod_revision(p) == n)
    };
    let limit = set.spec.revision_history_limit.unwrap_or(10);
    for r in history::revisions_to_truncate(sorted, is_live, limit) {
        history::delete_controller_revision(api, r)?;
    }
    Ok(())
}
