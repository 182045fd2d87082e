//! [`ControllerManager`]: kube-controller-manager (upstream `cmd/kube-controller-manager`): one
//! [`SharedInformerFactory`] for every controller, and per controller a work queue fed by its event
//! handlers and drained by its sync handler (see [`k8s_types::controller::Controller`] for the
//! contract).
//!
//! One tick, for each controller in order:
//! 1. the informers catch up with the apiserver (watch from their last revision);
//! 2. the controller's event handlers see every change since its previous turn (in revision order),
//!    and, every [`RESYNC_PERIOD_TICKS`], every cached object again (client-go's resync);
//! 3. every key due now is synced once, in key order; its [`Action`] is honoured (`Requeue`:
//!    queued again for `now + after`; `AwaitChange`: nothing until a change), an error requeues
//!    it with the rate limiter's backoff.
//!
//! Because each controller's turn starts with a sync of the informers, a controller sees what the
//! controllers before it wrote in the same tick (the Deployment controller scales a ReplicaSet; the
//! ReplicaSet controller creates its pods in the same tick).

use std::sync::Arc;

use k8s_types::apiserver::ApiClient;
use k8s_types::conflict::{ConflictLog, CountingClient};
use k8s_types::controller::{Action, Controller, ReconcileReason};
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::workqueue::WorkQueue;
use k8s_types::Tick;

use crate::cronjob::CronJobController;
use crate::daemon::DaemonSetsController;
use crate::deployment::DeploymentController;
use crate::disruption::DisruptionController;
use crate::endpointslice::EndpointSliceController;
use crate::garbage_collector::GarbageCollector;
use crate::job::JobController;
use crate::namespace::NamespaceController;
use crate::node_lifecycle::{
    NodeLifecycleController, MONITOR_KEY, NODE_LIFECYCLE_NAME, NODE_MONITOR_PERIOD_TICKS,
};
use crate::pod_gc::PodGarbageCollector;
use crate::replica_set::ReplicaSetController;
use crate::resource_claim::ResourceClaimController;
use crate::resource_quota::ResourceQuotaController;
use crate::statefulset::StatefulSetController;
use crate::taint_eviction::TaintEvictionController;
use crate::ttl_after_finished::TtlAfterFinishedController;
use crate::volume_binder::PersistentVolumeBinderController;

/// How often every cached object is handed to the event handlers again (client-go resync). Upstream
/// kube-controller-manager's `--min-resync-period` is 12 h, randomized per informer to 12-24 h;
/// k8s-mini uses the 12 h minimum for every informer (deterministic).
pub const RESYNC_PERIOD_TICKS: Tick = 12 * 60 * 60;

/// The first monitor pass at `t` or later when the next is due at `due` and they follow every
/// [`NODE_MONITOR_PERIOD_TICKS`] (`due` itself when `t <= due`).
fn first_pass_from(due: Tick, t: Tick) -> Tick {
    due + t.saturating_sub(due).div_ceil(NODE_MONITOR_PERIOD_TICKS) * NODE_MONITOR_PERIOD_TICKS
}

/// One controller with its queue and its position in the informers' change log.
struct Running {
    controller: Box<dyn Controller>,
    queue: WorkQueue,
    /// Sequence number of the first change this controller has not seen.
    cursor: u64,
    /// Tick of the last resync (the first turn counts as one: the initial list is handed over as
    /// adds).
    last_resync: Option<Tick>,
}

/// Runs its controllers one after the other, each taking one turn per tick.
pub struct ControllerManager {
    informers: SharedInformerFactory,
    controllers: Vec<Running>,
    resync_period: Tick,
    /// The `409 Conflict`s the controllers got since the last [`ControllerManager::take_conflicts`].
    conflicts: ConflictLog,
}

impl Default for ControllerManager {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ControllerManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerManager")
            .field("controllers", &self.controller_names())
            .finish()
    }
}

impl ControllerManager {
    /// The default set, in tick order: node lifecycle, taint eviction, pod GC, resource quota
    /// (before the workload controllers, so a quota created earlier in the tick is enforced on
    /// the pods they create), Deployment, ReplicaSet,
    /// DaemonSet, StatefulSet, PersistentVolume binder (after the StatefulSet controller, so a claim
    /// it creates is bound in the same tick), CronJob, Job, TTL-after-finished, disruption,
    /// EndpointSlice, garbage collector, namespace. The node lifecycle controller goes first so the taint
    /// eviction controller sees its taints in the same tick; the evictors go before the workload
    /// controllers so a ReplicaSet replaces what they delete in the same tick;
    /// the Deployment controller goes before the ReplicaSet controller so a ReplicaSet it scales gets
    /// its pods in the same tick, and the CronJob controller before the Job controller so a Job it
    /// creates gets its pods in the same tick.
    pub fn new() -> Self {
        Self::with_external_owners(std::collections::BTreeSet::new())
    }

    /// The default set ([`ControllerManager::new`]) with a garbage collector for which the owners
    /// with these uids live outside the input ([`GarbageCollector::with_external_owners`]).
    pub fn with_external_owners(uids: std::collections::BTreeSet<String>) -> Self {
        Self::with_external(uids, std::collections::BTreeSet::new())
    }

    /// The default set with what lives outside the input: owners by uid (the garbage collector keeps
    /// their dependents) and nodes by name (the pod garbage collector keeps pods bound to them,
    /// [`PodGarbageCollector::with_external_nodes`]).
    pub fn with_external(
        uids: std::collections::BTreeSet<String>,
        nodes: std::collections::BTreeSet<String>,
    ) -> Self {
        Self::with_feature_gates(uids, nodes, &std::collections::BTreeMap::new())
    }

    /// [`ControllerManager::with_external`] with kube-controller-manager's `--feature-gates` (gate
    /// name -> enabled). Read: `EnableWorkloadWithJob` (alpha, off by default in v1.36), the Job
    /// controller's Workload/PodGroup creation.
    pub fn with_feature_gates(
        uids: std::collections::BTreeSet<String>,
        nodes: std::collections::BTreeSet<String>,
        gates: &std::collections::BTreeMap<String, bool>,
    ) -> Self {
        let job = if gates
            .get(crate::job::ENABLE_WORKLOAD_WITH_JOB)
            .copied()
            .unwrap_or(false)
        {
            JobController::with_workload_integration()
        } else {
            JobController::new()
        };
        Self::with_controllers(vec![
            Box::new(NodeLifecycleController::new()),
            Box::new(TaintEvictionController::new()),
            Box::new(PodGarbageCollector::with_external_nodes(nodes)),
            Box::new(ResourceQuotaController::new()),
            Box::new(DeploymentController::new()),
            Box::new(ReplicaSetController::new()),
            Box::new(DaemonSetsController::new()),
            Box::new(StatefulSetController::new()),
            Box::new(PersistentVolumeBinderController::new()),
            Box::new(CronJobController::new()),
            Box::new(job),
            Box::new(TtlAfterFinishedController::new()),
            Box::new(DisruptionController::new()),
            Box::new(EndpointSliceController::new()),
            Box::new(GarbageCollector::with_external_owners(uids)),
            Box::new(NamespaceController::new()),
            Box::new(ResourceClaimController::new()),
        ])
    }

    /// A manager running exactly `controllers`, in the given order.
    pub fn with_controllers(controllers: Vec<Box<dyn Controller>>) -> Self {
        let mut informers = SharedInformerFactory::new();
        for c in &controllers {
            for kind in c.informers() {
                informers.start(kind);
            }
        }
        ControllerManager {
            informers,
            controllers: controllers
                .into_iter()
                .map(|controller| Running {
                    controller,
                    queue: WorkQueue::new(),
                    cursor: 0,
                    last_resync: None,
                })
                .collect(),
            resync_period: RESYNC_PERIOD_TICKS,
            conflicts: ConflictLog::new(),
        }
    }

    /// Registers a controller of the user's (an operator, [`crate::operators`]) after the ones
    /// already running: its informers are started and it takes its turn last in each tick, as a
    /// controller added to kube-controller-manager's list (or run beside it by its own manager).
    /// Register before the first tick: its first turn hands it every cached object as an add.
    pub fn register(&mut self, controller: Box<dyn Controller>) {
        for kind in controller.informers() {
            self.informers.start(kind);
        }
        self.controllers.push(Running {
            controller,
            queue: WorkQueue::new(),
            cursor: 0,
            last_resync: None,
        });
    }

    /// Sets the resync period (ticks; 0 turns resyncs off).
    pub fn set_resync_period(&mut self, ticks: Tick) {
        self.resync_period = ticks;
    }

    /// One tick: each controller's turn, in order.
    pub fn reconcile(&mut self, api: &mut dyn ApiClient) {
        self.reconcile_upto(api, None);
    }

    /// [`ControllerManager::reconcile`] with informers whose watches deliver the changes up to
    /// store revision `upto` only (the cluster's `spec.informerLag`: the caches show the store as
    /// it was some ticks ago, [`SharedInformerFactory::sync_upto`]). Writes built from a stale
    /// cached object carry its old resourceVersion and are answered `409 Conflict`; the sync
    /// fails and its key is requeued rate-limited, as upstream's `processNextWorkItem` /
    /// `handleErr` does with `AddRateLimited`.
    pub fn reconcile_upto(&mut self, api: &mut dyn ApiClient, upto: Option<i64>) {
        let now = api.now();
        for run in &mut self.controllers {
            let name = run.controller.name().to_string();
            let _span = tracing::debug_span!("controller", name = name.as_str()).entered();
            self.informers.sync_upto(&*api, upto);
            let kinds = run.controller.informers();
            for change in self.informers.changes_since(run.cursor) {
                if kinds.contains(&change.kind) {
                    run.controller
                        .on_change(change, &self.informers, &mut run.queue);
                }
            }
            run.cursor = self.informers.log_end();
            let resync_due = match run.last_resync {
                None => {
                    run.last_resync = Some(now);
                    false
                }
                Some(last) => self.resync_period > 0 && now >= last + self.resync_period,
            };
            if resync_due {
                run.last_resync = Some(now);
                for kind in &kinds {
                    let Some(inf) = self.informers.informer(kind) else {
                        continue;
                    };
                    let all: Vec<Delta> = inf
                        .list()
                        .map(|o| Delta {
                            kind: kind.clone(),
                            key: k8s_types::informer::object_key(o),
                            old: Some(Arc::clone(o)),
                            new: Some(Arc::clone(o)),
                        })
                        .collect();
                    for d in &all {
                        run.controller.on_change(d, &self.informers, &mut run.queue);
                    }
                }
            }
            for key in run.queue.take_ready(now) {
                let reason = ReconcileReason::Unknown;
                let mut client = CountingClient::new(&mut *api, &name, &mut self.conflicts);
                match run.controller.sync(&key, &self.informers, &mut client) {
                    Ok(action) => {
                        run.queue.forget(&key);
                        if let Action::Requeue { after } = action {
                            run.queue
                                .add_at(key.clone(), now.saturating_add(after.max(1)));
                        }
                        tracing::trace!(%key, %reason, ?action, "synced");
                    }
                    Err(e) => {
                        tracing::debug!(%key, error = %e, "error syncing; requeued");
                        run.queue.add_rate_limited(key, now);
                    }
                }
            }
        }
        let min_cursor = self.controllers.iter().map(|r| r.cursor).min();
        if let Some(c) = min_cursor {
            self.informers.trim_log(c);
        }
    }

    /// The `409 Conflict`s the controllers were answered since the previous call, in order (each
    /// under the controller's name).
    pub fn take_conflicts(&mut self) -> ConflictLog {
        std::mem::take(&mut self.conflicts)
    }

    /// The shared informers (what the controllers read).
    pub fn informers(&self) -> &SharedInformerFactory {
        &self.informers
    }

    /// The controllers' names, in run order (e.g. `deployment-controller`).
    pub fn controller_names(&self) -> Vec<&str> {
        self.controllers
            .iter()
            .map(|c| c.controller.name())
            .collect()
    }

    /// The earliest tick at which some controller's informers resync ([`RESYNC_PERIOD_TICKS`]):
    /// `Some(0)` before a controller's first turn, `None` with resyncs off.
    pub fn next_resync(&self) -> Option<Tick> {
        if self.resync_period == 0 {
            return None;
        }
        self.controllers
            .iter()
            .map(|r| {
                r.last_resync
                    .map_or(0, |last| last.saturating_add(self.resync_period))
            })
            .min()
    }

    /// Moves each controller's resync clock forward as if every resync due before `to - period` had
    /// run on time (at `last + k * period`), leaving the last one before `to` to run: for a driver
    /// that skips idle ticks. On a cluster where nothing was written since the previous resync, a
    /// resync hands the event handlers the objects they already saw, and the level-based syncs it
    /// queues write nothing.
    pub fn fast_forward_resyncs(&mut self, to: Tick) {
        if self.resync_period == 0 {
            return;
        }
        let to = to.saturating_sub(self.resync_period);
        for r in &mut self.controllers {
            if let Some(last) = r.last_resync {
                if to > last {
                    let periods = (to - last - 1) / self.resync_period;
                    r.last_resync = Some(last + periods * self.resync_period);
                }
            }
        }
    }

    /// The node lifecycle controller's queue ([`NODE_LIFECYCLE_NAME`]), when it runs.
    fn node_monitor(&self) -> Option<&Running> {
        self.controllers
            .iter()
            .find(|r| r.controller.name() == NODE_LIFECYCLE_NAME)
    }

    /// The tick of the node lifecycle controller's next monitor pass (upstream
    /// `--node-monitor-period`, [`MONITOR_KEY`] requeued every 5 s), when one waits.
    pub fn next_node_monitor(&self) -> Option<Tick> {
        self.node_monitor().and_then(|r| r.queue.due(MONITOR_KEY))
    }

    /// The earliest tick at which some controller has a key waiting, the node lifecycle monitor
    /// pass aside ([`ControllerManager::next_node_monitor`]): for a driver that knows the passes
    /// write nothing ([`crate::node_lifecycle::monitor_pass_is_idle`]).
    pub fn next_due_besides_node_monitor(&self) -> Option<Tick> {
        self.controllers
            .iter()
            .filter_map(|r| {
                if r.controller.name() == NODE_LIFECYCLE_NAME {
                    r.queue.next_due_except(MONITOR_KEY)
                } else {
                    r.queue.next_due()
                }
            })
            .min()
    }

    /// Accounts for node heartbeats (Lease renewals) a driver did not write: each `(node, tick)`
    /// renewal is counted as seen by the first monitor pass at `tick` or later on the monitor's 5 s
    /// period (the pass that would have observed it had it been written, its probe timestamp), so
    /// the renewals keep the node healthy as written ones would. For a driver that knows the passes
    /// write nothing ([`crate::node_lifecycle::monitor_pass_is_idle`] holds for every node); the
    /// next pass is not moved (see [`ControllerManager::fast_forward_node_monitor`]).
    pub fn observe_node_heartbeats(&mut self, heard: &[(&str, Tick)]) {
        let Some(run) = self.node_monitor_mut() else {
            return;
        };
        let Some(due) = run.queue.due(MONITOR_KEY) else {
            return;
        };
        if let Some(c) = run
            .controller
            .as_any_mut()
            .and_then(|a| a.downcast_mut::<NodeLifecycleController>())
        {
            c.observe_heartbeats(heard.iter().map(|(n, t)| (*n, first_pass_from(due, *t))));
        }
    }

    /// The node lifecycle controller's queue, for a change.
    fn node_monitor_mut(&mut self) -> Option<&mut Running> {
        self.controllers
            .iter_mut()
            .find(|r| r.controller.name() == NODE_LIFECYCLE_NAME)
    }

    /// Moves the next monitor pass to the first one due at `to` or later on its 5 s period, as if
    /// the passes before `to` had run (each requeues the key [`NODE_MONITOR_PERIOD_TICKS`] later)
    /// and written nothing ([`crate::node_lifecycle::monitor_pass_is_idle`]).
    pub fn fast_forward_node_monitor(&mut self, to: Tick) {
        let Some(run) = self.node_monitor_mut() else {
            return;
        };
        if let Some(due) = run.queue.due(MONITOR_KEY) {
            if due < to {
                run.queue.reschedule(MONITOR_KEY, first_pass_from(due, to));
            }
        }
    }

    /// The earliest tick at which some controller has a key waiting (a requeue or a backoff).
    pub fn next_due(&self) -> Option<Tick> {
        self.controllers
            .iter()
            .filter_map(|r| r.queue.next_due())
            .min()
    }
}
