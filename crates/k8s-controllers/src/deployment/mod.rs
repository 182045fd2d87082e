//! The Deployment controller, after upstream `pkg/controller/deployment/deployment_controller.go`
//! (`syncDeployment`, `getReplicaSetsForDeployment`, `getPodMapForDeployment`) and `sync.go`
//! (`scaleReplicaSet`, `scaleReplicaSetAndRecordEvent`).
//!
//! A Deployment owns ReplicaSets, one per pod template: the *new* ReplicaSet (template equal to the
//! Deployment's, named `<deployment>-<pod-template-hash>`) and *old* ones. A sync of one Deployment
//! adopts/releases ReplicaSets, then either only scales (paused, or `spec.replicas` changed:
//! [`sync`]), or rolls out ([`rolling`] / [`recreate`]), and writes `status` (with the `Available`
//! and `Progressing` conditions, [`progress`]).
//!
//! Event handlers (upstream `addDeployment`/`updateDeployment`/`deleteDeployment`,
//! `addReplicaSet`/`updateReplicaSet`/`deleteReplicaSet`, `deletePod`): a Deployment's change
//! queues it; a ReplicaSet's change queues the Deployment controlling it (an orphan's, every
//! Deployment of its namespace whose selector matches it); a pod's change queues the Deployment of
//! its ReplicaSet when that Deployment uses the Recreate strategy (which waits for old pods to
//! go). Reads come from the shared informers' caches.
//!
//! Files: [`sync`] (new/old ReplicaSets, revisions, scaling, cleanup, status), [`rolling`],
//! [`recreate`], [`progress`], [`util`] (pure helpers).

pub mod progress;
pub mod recreate;
pub mod rolling;
pub mod sync;
pub mod util;

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::{Deployment, ReplicaSet};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::event::event_types;
use k8s_types::core::Pod;
use k8s_types::events::EventRecorder;
use k8s_types::informer::{namespaced_key, Delta, SharedInformerFactory};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::{ObjectMeta, OwnerReference};
use k8s_types::status::Status;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Resource, Tick};

use crate::controller_ref_manager::claim_objects;
use crate::controller_utils::rs_replicas;

/// The controller name, also the `source.component` of its Events (upstream
/// `deployment-controller`).
pub const DEPLOYMENT_CONTROLLER_NAME: &str = "deployment-controller";

/// Event reason for every ReplicaSet scale (upstream `sync.go` `scaleReplicaSet`).
pub const SCALING_REPLICA_SET_REASON: &str = "ScalingReplicaSet";

/// Warning reason for a Deployment with an empty selector (upstream `syncDeployment`).
pub const SELECTING_ALL_REASON: &str = "SelectingAll";

/// Message of [`SELECTING_ALL_REASON`], as upstream words it.
pub const SELECTING_ALL_MESSAGE: &str =
    "This deployment is selecting all pods. A non-empty selector is required.";

/// kube-controller-manager's Deployment controller.
#[derive(Clone, Debug)]
pub struct DeploymentController {
    /// The controller's event recorder (upstream: its own broadcaster and recorder).
    events: EventRecorder,
}

impl Default for DeploymentController {
    fn default() -> Self {
        Self::new()
    }
}

impl DeploymentController {
    /// The controller (its only state is its event recorder).
    pub fn new() -> Self {
        DeploymentController {
            events: EventRecorder::for_component(DEPLOYMENT_CONTROLLER_NAME),
        }
    }

    /// One sync of one Deployment (upstream `syncDeployment`).
    ///
    /// # Errors
    /// An apiserver error (the rest of this Deployment's sync is skipped until the next tick) or an
    /// invalid spec (unsupported strategy type, unparseable maxSurge/maxUnavailable).
    pub fn sync_deployment(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        deployment: &Deployment,
    ) -> Result<Action, SyncError> {
        let mut d = deployment.clone();
        let Some(selector) = d.spec.selector.clone() else {
            tracing::warn!(deployment = %d.metadata.name, "Deployment has no selector; skipping");
            return Ok(Action::AwaitChange);
        };
        if selector.is_empty() {
            // Upstream records this on every sync; k8s-mini syncs every tick, so it records it once
            // per generation (when observedGeneration catches up) to avoid one event per tick.
            if d.status.observed_generation.unwrap_or(0) < d.metadata.generation.unwrap_or(0) {
                self.events.record(
                    api,
                    &k8s_types::Object::Deployment(Box::new(d.clone())),
                    event_types::WARNING,
                    SELECTING_ALL_REASON,
                    SELECTING_ALL_MESSAGE,
                );
                d.status.observed_generation = d.metadata.generation;
                api.update_status_typed(d)?;
            }
            return Ok(Action::AwaitChange);
        }

        let rss = get_replica_sets_for_deployment(api, informers, &d, &selector)?;
        let now = api.now();
        let mut s = DeploymentSync {
            api,
            events: &mut self.events,
            informers,
            d,
            rss,
            now,
        };

        if s.d.metadata.deletion_timestamp.is_some() {
            s.sync_status_only()?;
            return Ok(Action::AwaitChange);
        }
        s.check_paused_conditions()?;
        if s.d.spec.paused {
            s.sync()?;
            return Ok(Action::AwaitChange);
        }
        if s.is_scaling_event()? {
            s.sync()?;
            return Ok(Action::AwaitChange);
        }
        match util::strategy_type(&s.d) {
            util::RECREATE => s.rollout_recreate()?,
            util::ROLLING_UPDATE => s.rollout_rolling()?,
            other => {
                return Err(SyncError::Invalid(format!(
                    "unexpected deployment strategy type: {other}"
                )))
            }
        }
        Ok(s.requeue_stuck_deployment())
    }
}

/// Upstream `getReplicaSetsForDeployment`: the ReplicaSets of the Deployment's namespace it
/// controls and that match its selector, after adopting matching orphans and releasing
/// non-matching ones (`ReplicaSetControllerRefManager.ClaimReplicaSets`).
fn get_replica_sets_for_deployment(
    api: &mut dyn ApiClient,
    informers: &SharedInformerFactory,
    d: &Deployment,
    selector: &LabelSelector,
) -> Result<Vec<ReplicaSet>, Status> {
    let all = informers
        .of(&Kind::ReplicaSet)
        .list_namespace::<ReplicaSet>(d.metadata.namespace())
        .cloned()
        .collect();
    claim_objects(api, &Kind::Deployment, &d.metadata, selector, all)
}

/// The state of one Deployment's sync: the apiserver, the Deployment as this sync last wrote or
/// read it, and its claimed ReplicaSets (refreshed after every write so later steps of the same
/// sync see what the apiserver holds).
pub(crate) struct DeploymentSync<'a> {
    api: &'a mut dyn ApiClient,
    events: &'a mut EventRecorder,
    informers: &'a SharedInformerFactory,
    d: Deployment,
    rss: Vec<ReplicaSet>,
    now: Tick,
}

impl DeploymentSync<'_> {
    /// The latest copy (by name) of `rs` this sync knows.
    fn fresh(&self, rs: &ReplicaSet) -> ReplicaSet {
        self.rss
            .iter()
            .find(|r| r.metadata.name == rs.metadata.name)
            .cloned()
            .unwrap_or_else(|| rs.clone())
    }

    /// Records a ReplicaSet the apiserver returned.
    fn remember(&mut self, rs: &ReplicaSet) {
        match self
            .rss
            .iter_mut()
            .find(|r| r.metadata.name == rs.metadata.name)
        {
            Some(slot) => *slot = rs.clone(),
            None => self.rss.push(rs.clone()),
        }
    }

    /// Writes the Deployment's status (the `/status` subresource) and keeps what was stored.
    fn write_status(&mut self) -> Result<(), Status> {
        let stored = self.api.update_status_typed(self.d.clone())?;
        self.d = stored;
        Ok(())
    }

    /// Writes the Deployment's revision annotation (upstream writes it through `UpdateStatus`,
    /// whose strategy keeps annotations; k8s-mini's `/status` keeps only status, so the annotation
    /// goes through a normal update first) and then its status.
    fn write_revision_and_status(
        &mut self,
        revision_changed: bool,
        status_changed: bool,
    ) -> Result<(), Status> {
        if revision_changed {
            let status = self.d.status.clone();
            let stored = self.api.update_typed(self.d.clone())?;
            self.d = stored;
            self.d.status = status;
        }
        if status_changed {
            self.write_status()?;
        }
        Ok(())
    }

    /// Records a Normal event on the Deployment.
    fn event(&mut self, type_: &str, reason: &str, message: String) {
        let obj = k8s_types::Object::Deployment(Box::new(self.d.clone()));
        self.events.record(self.api, &obj, type_, reason, message);
    }

    /// Upstream `scaleReplicaSetAndRecordEvent`: scales `rs` to `new_scale` unless it already has
    /// that size. Returns whether it scaled and the ReplicaSet as stored.
    fn scale_replica_set_and_record_event(
        &mut self,
        rs: &ReplicaSet,
        new_scale: i32,
    ) -> Result<(bool, ReplicaSet), Status> {
        if rs_replicas(rs) == new_scale {
            return Ok((false, rs.clone()));
        }
        let op = if rs_replicas(rs) < new_scale {
            "up"
        } else {
            "down"
        };
        self.scale_replica_set(rs, new_scale, op)
    }

    /// Upstream `scaleReplicaSet`: sets `spec.replicas` and the desired/max-replicas annotations
    /// (when either differs) with one update, then records `Scaled <op> replica set <rs> from <old>
    /// to <new>` when the size changed.
    fn scale_replica_set(
        &mut self,
        rs: &ReplicaSet,
        new_scale: i32,
        op: &str,
    ) -> Result<(bool, ReplicaSet), Status> {
        let desired = util::replicas(&self.d);
        let max = desired + util::max_surge(&self.d);
        let size_needs_update = rs_replicas(rs) != new_scale;
        let annotations_need_update = util::replicas_annotations_need_update(rs, desired, max);
        if !size_needs_update && !annotations_need_update {
            return Ok((false, rs.clone()));
        }
        let old_scale = rs_replicas(rs);
        let mut copy = rs.clone();
        copy.spec.replicas = Some(new_scale);
        util::set_replicas_annotations(&mut copy, desired, max);
        let updated = self.api.update_typed(copy)?;
        self.remember(&updated);
        if size_needs_update {
            self.event(
                event_types::NORMAL,
                SCALING_REPLICA_SET_REASON,
                format!(
                    "Scaled {op} replica set {} from {old_scale} to {new_scale}",
                    updated.metadata.name
                ),
            );
        }
        Ok((size_needs_update, updated))
    }

    /// Upstream `getPodMapForDeployment`: the Deployment's pods (matching its selector, any
    /// state) grouped by the uid of the claimed ReplicaSet controlling them.
    fn pod_map(&self) -> BTreeMap<String, Vec<Pod>> {
        let mut map: BTreeMap<String, Vec<Pod>> = BTreeMap::new();
        for rs in &self.rss {
            if let Some(uid) = &rs.metadata.uid {
                map.insert(uid.clone(), Vec::new());
            }
        }
        let Some(selector) = self.d.spec.selector.as_ref() else {
            return map;
        };
        // The pods each claimed ReplicaSet controls (the controller-uid index) that match the
        // Deployment's selector, in key order.
        let pods = self.informers.of(&Kind::Pod);
        for (uid, list) in &mut map {
            list.extend(
                pods.controlled_by(uid)
                    .into_iter()
                    .filter_map(|o| Pod::from_object_ref(o))
                    .filter(|p| p.metadata.namespace() == self.d.metadata.namespace())
                    .filter(|p| selector.matches(&p.metadata.labels))
                    .cloned(),
            );
        }
        map
    }
}

impl DeploymentController {
    /// Upstream `resolveControllerRef` for a Deployment.
    fn resolve(
        informers: &SharedInformerFactory,
        namespace: &str,
        cref: &OwnerReference,
    ) -> Option<String> {
        informers.resolve_controller_ref(&Kind::Deployment, namespace, cref)
    }

    /// Upstream `getDeploymentsForReplicaSet`: the Deployments of the ReplicaSet's namespace whose
    /// (non-empty) selector matches its labels.
    fn deployments_for(informers: &SharedInformerFactory, meta: &ObjectMeta) -> Vec<String> {
        informers.selecting::<Deployment>(&Kind::Deployment, meta.namespace(), &meta.labels, |d| {
            d.spec.selector.as_ref()
        })
    }

    fn on_replica_set_change(
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        let (old, cur) = (
            change.old.as_deref().map(Object::meta),
            change.new.as_deref().map(Object::meta),
        );
        let Some(cur) = cur else {
            // deleteReplicaSet
            if let Some(old) = old {
                if let Some(k) = old
                    .controller_ref()
                    .and_then(|c| Self::resolve(informers, old.namespace(), c))
                {
                    queue.add(k);
                }
            }
            return;
        };
        if let Some(old) = old {
            if old.resource_version == cur.resource_version {
                return;
            }
            let old_ref = old.controller_ref();
            if old_ref.is_some() && old_ref != cur.controller_ref() {
                if let Some(k) = old_ref.and_then(|c| Self::resolve(informers, old.namespace(), c))
                {
                    queue.add(k);
                }
            }
        }
        if let Some(cref) = cur.controller_ref() {
            if let Some(k) = Self::resolve(informers, cur.namespace(), cref) {
                queue.add(k);
            }
            return;
        }
        let relabeled = old
            .as_ref()
            .is_none_or(|o| o.labels != cur.labels || o.controller_ref() != cur.controller_ref());
        if relabeled {
            for k in Self::deployments_for(informers, cur) {
                queue.add(k);
            }
        }
    }

    /// Upstream `deletePod` (generalised to every pod change, which only adds syncs): a pod of a
    /// ReplicaSet controlled by a Recreate Deployment queues that Deployment.
    fn on_pod_change(change: &Delta, informers: &SharedInformerFactory, queue: &mut WorkQueue) {
        let pod = change.object();
        let Some(rs_ref) = pod.meta().controller_ref() else {
            return;
        };
        if rs_ref.kind != Kind::ReplicaSet.name() {
            return;
        }
        let ns = pod.meta().namespace();
        let rs_key = namespaced_key(ns, &rs_ref.name);
        let Some(rs) = informers
            .of(&Kind::ReplicaSet)
            .get_typed::<ReplicaSet>(&rs_key)
            .filter(|rs| rs.metadata.uid.as_deref() == Some(rs_ref.uid.as_str()))
        else {
            return;
        };
        let Some(d_key) = rs
            .metadata
            .controller_ref()
            .and_then(|c| Self::resolve(informers, ns, c))
        else {
            return;
        };
        let recreate = informers
            .of(&Kind::Deployment)
            .get_typed::<Deployment>(&d_key)
            .is_some_and(|d| util::strategy_type(d) == util::RECREATE);
        if recreate {
            queue.add(d_key);
        }
    }
}

impl Controller for DeploymentController {
    fn name(&self) -> &str {
        DEPLOYMENT_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::Deployment, Kind::ReplicaSet, Kind::Pod]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        match change.kind {
            Kind::Deployment => queue.add(change.key.clone()),
            Kind::ReplicaSet => Self::on_replica_set_change(change, informers, queue),
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
        let Some(d) = informers
            .of(&Kind::Deployment)
            .get_typed::<Deployment>(key)
            .cloned()
        else {
            return Ok(Action::AwaitChange);
        };
        self.sync_deployment(api, informers, &d)
    }
}
