//! [`Cluster`]: the whole control plane in one process, wired from the concrete crates, and the tick
//! loop in the blueprint's causal order: steps -> controllers -> scheduler -> kubelets (node-name
//! order). Components see each other only through the apiserver.

use std::collections::BTreeMap;

use k8s_api::ApiServer;
use k8s_controllers::ControllerManager;
use k8s_kubelet::{Kubelet, KubeletConfig};
use k8s_sched::config::KubeSchedulerConfiguration;
use k8s_sched::Scheduler;
use k8s_store::MemStore;
use k8s_types::apiserver::ApiClient;
use k8s_types::apiserver::ApiExt;
use k8s_types::conflict::CountingClient;
use k8s_types::controller::Controller;
use k8s_types::core::{Namespace, Node};
use k8s_types::meta::ObjectMeta;
use k8s_types::object::Object;
use k8s_types::status::Status;
use k8s_types::Tick;

use crate::node_devices::{device_plugins, gpu_count, gpu_count_errors};

mod dra;
mod fast_forward;
mod kubelet_pass;

/// Namespaces every cluster starts with (as a fresh kubeadm cluster).
pub const INITIAL_NAMESPACES: [&str; 3] = ["default", "kube-node-lease", "kube-system"];

/// Settings of a cluster.
#[derive(Clone, Debug, Default)]
pub struct ClusterConfig {
    /// The scheduler's configuration.
    pub scheduler: KubeSchedulerConfiguration,
    /// Every kubelet's configuration.
    pub kubelet: KubeletConfig,
    /// Feature gates of every component (gate name -> enabled), as kind's cluster `featureGates`
    /// passes `--feature-gates` to each: read by the scheduler (`GenericWorkload`,
    /// `GangScheduling`; its configuration's own `featureGates` win) and the controller-manager
    /// (`EnableWorkloadWithJob`).
    pub feature_gates: std::collections::BTreeMap<String, bool>,
    /// How late the components' informers deliver watch events (`spec.informerLag`; all 0: they
    /// see every write at their next turn, as without the field).
    pub informer_lag: InformerLag,
}

/// How many ticks late each component's informers deliver the store's changes (the Scenario's
/// `spec.informerLag`). A component with lag `n` reads, at tick `t`, the store as it was at the
/// end of tick `t - n` (before the first tick: as it was when the first tick started); a list
/// (its first turn, a restart) is of the current state. Kubelets have no informer in k8s-mini
/// (each sync reads its pods from the apiserver), so they have no lag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InformerLag {
    /// kube-controller-manager's shared informers.
    pub controller_manager: Tick,
    /// kube-scheduler's informers.
    pub scheduler: Tick,
}

impl InformerLag {
    /// True when some component lags.
    pub fn is_set(&self) -> bool {
        self.controller_manager > 0 || self.scheduler > 0
    }
}

/// kube-scheduler's name as the component that writes (`--profile`'s `schedulerName` aside).
pub const SCHEDULER_COMPONENT: &str = "default-scheduler";
/// The kubelet's name as the component that writes.
pub const KUBELET_COMPONENT: &str = "kubelet";

/// Why a cluster could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The scheduler rejected its configuration.
    #[error("invalid KubeSchedulerConfiguration: {0}")]
    SchedulerConfig(k8s_sched::ConfigError),
    /// The apiserver rejected a bootstrap object.
    #[error("bootstrap failed: {0}")]
    Bootstrap(#[from] Status),
}

/// Who reads the apiserver's watch history from outside the cluster's own components, which
/// bounds how far [`Cluster::tick`] compacts it (etcd compaction; a watch from a compacted
/// revision answers `410 Gone`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum OutsideWatchers {
    /// Readers that watch between ticks (a [`crate::Session`] served over HTTP, a timeline
    /// replay, a bench): as before in-tick compaction, the history written since the start of the
    /// previous tick is kept through this one.
    #[default]
    BetweenTicks,
    /// One reader whose next watch is from this revision (the scenario runner's event collector).
    From(i64),
    /// None: only the components' own watch positions bound compaction (a run whose output is
    /// the final state, `--output json|yaml`).
    Nobody,
}

/// The simulated cluster.
pub struct Cluster {
    api: ApiServer,
    controllers: ControllerManager,
    scheduler: Scheduler,
    kubelets: BTreeMap<String, Kubelet>,
    kubelet_config: KubeletConfig,
    tick: Tick,
    n_nodes_added: u32,
    /// Who else watches the history (bounds compaction).
    outside: OutsideWatchers,
    /// Store revision when the current (or last) [`Cluster::tick`] started.
    tick_start: i64,
    /// Store revision when the tick before it started ([`OutsideWatchers::BetweenTicks`]).
    previous_tick_start: i64,
    /// The kubelet pass's watch position (`None` before the first pass): the writes up to it are
    /// in `touched`, the writes after it are the ones a kubelet may not have seen yet.
    kubelets_seen: Option<i64>,
    /// Nodes that a write since the previous kubelet pass concerns, read up to `kubelets_seen`
    /// (read before each compaction, so the pass never needs compacted history); `None`: every
    /// node (a watch answered `410 Gone`).
    touched: Option<std::collections::BTreeSet<String>>,
    /// [`Cluster::node_monitor_idle`] as last computed by [`Cluster::skip_to`]; `None` once a Node
    /// write (seen by `read_touched`), a kubelet added, stopped or started may have changed it.
    monitor_idle: Option<bool>,
    /// Nodes whose kubelet is stopped (the `stopKubelet` step): no heartbeat, no status, no pod
    /// sync; their containers keep running.
    stopped: std::collections::BTreeSet<String>,
    /// Kubelets started again since the previous tick: their next sync is a full one.
    restarted: std::collections::BTreeSet<String>,
    /// Nodes whose machine is powered off (the `powerOff` step); each is in `stopped` too.
    powered_off: std::collections::BTreeSet<String>,
    /// Lease renewals written in the last tick (heartbeats alone do not make a tick busy).
    heartbeats: i64,
    /// When some kubelet next has work of its own (lower bounds, see `kubelet_pass.rs`).
    kubelet_due: kubelet_pass::KubeletDue,
    /// The scheduler's configuration, to start it again (`restartScheduler`).
    scheduler_config: KubeSchedulerConfiguration,
    /// The cluster's feature gates, to start the controller-manager again.
    feature_gates: std::collections::BTreeMap<String, bool>,
    /// Owners outside the input, to start the controller-manager again.
    external_owners: std::collections::BTreeSet<String>,
    /// Nodes outside the input (pods of a dump bound to nodes it lacks), likewise.
    external_nodes: std::collections::BTreeSet<String>,
    /// The pod the scheduler explains, for a restarted scheduler.
    explain: Option<k8s_sched::explain::PodKey>,
    /// The user's controllers ([`Cluster::register_controller`]), to start them again with a new
    /// controller-manager.
    operators: Vec<ControllerFactory>,
    /// How late the informers are.
    informer_lag: InformerLag,
    /// Store revision at the end of each tick run or batched by fast-forward (skipped idle ticks
    /// have none: they wrote nothing), kept as far back as the largest lag needs: what a lagged
    /// informer may see.
    tick_ends: BTreeMap<Tick, i64>,
    /// Store revision when the first tick of this cluster started (what a lagged informer sees
    /// before `lag` ticks have run).
    first_tick_start: Option<i64>,
    /// Every `409 Conflict` the components were answered.
    conflicts: k8s_types::conflict::ConflictLog,
}

/// Builds a fresh instance of a user's controller (an operator), for every start of the
/// controller-manager.
pub type ControllerFactory = Box<dyn Fn() -> Box<dyn Controller>>;

/// kube-scheduler with the cluster's feature gates (a gate its own configuration sets wins), and the
/// configuration it runs with (to start it again).
fn start_scheduler(
    mut config: KubeSchedulerConfiguration,
    gates: &std::collections::BTreeMap<String, bool>,
) -> Result<(Scheduler, KubeSchedulerConfiguration), ClusterError> {
    for (gate, on) in gates {
        config.feature_gates.entry(gate.clone()).or_insert(*on);
    }
    let scheduler = Scheduler::new(config.clone()).map_err(ClusterError::SchedulerConfig)?;
    Ok((scheduler, config))
}

impl Cluster {
    /// A cluster with the initial namespaces and no nodes, at tick 0.
    ///
    /// # Errors
    /// `ClusterError::SchedulerConfig` when the scheduler configuration is invalid.
    pub fn new(config: ClusterConfig) -> Result<Cluster, ClusterError> {
        let (scheduler, scheduler_config) =
            start_scheduler(config.scheduler, &config.feature_gates)?;
        let mut api = ApiServer::new(Box::new(MemStore::default()));
        api.set_tick(0);
        for ns in INITIAL_NAMESPACES {
            api.create(Object::Namespace(Box::new(Namespace {
                metadata: ObjectMeta {
                    name: ns.to_string(),
                    ..Default::default()
                },
                ..Default::default()
            })))?;
        }
        let mut cluster = Cluster {
            api,
            controllers: ControllerManager::with_feature_gates(
                Default::default(),
                Default::default(),
                &config.feature_gates,
            ),
            scheduler,
            kubelets: BTreeMap::new(),
            kubelet_config: config.kubelet,
            tick: 0,
            n_nodes_added: 0,
            outside: OutsideWatchers::default(),
            tick_start: 0,
            previous_tick_start: 0,
            kubelets_seen: None,
            touched: Some(Default::default()),
            monitor_idle: None,
            stopped: Default::default(),
            restarted: Default::default(),
            powered_off: Default::default(),
            heartbeats: 0,
            kubelet_due: Default::default(),
            scheduler_config,
            external_owners: Default::default(),
            external_nodes: Default::default(),
            explain: None,
            feature_gates: config.feature_gates,
            operators: Vec::new(),
            informer_lag: config.informer_lag,
            tick_ends: BTreeMap::new(),
            first_tick_start: None,
            conflicts: Default::default(),
        };
        // The bundled operator, registered as a user registers their own.
        cluster.register_operator_bundled();
        Ok(cluster)
    }

    /// A cluster over a restored store (a snapshot taken when the clock read `tick`, see
    /// `crate::snapshot`): nothing is created; each stored Node gets its kubelet, registered
    /// already and with its clocks rebuilt from the store ([`Kubelet::resume`]); the scheduler and
    /// the controller-manager start empty and list everything at their first turn, as after a
    /// restart. `owners` and `nodes` live outside the input ([`Cluster::set_external`]).
    ///
    /// # Errors
    /// `ClusterError::SchedulerConfig` when the scheduler configuration is invalid.
    pub fn resume(
        config: ClusterConfig,
        store: MemStore,
        tick: Tick,
        owners: std::collections::BTreeSet<String>,
        nodes: std::collections::BTreeSet<String>,
    ) -> Result<Cluster, ClusterError> {
        let (scheduler, scheduler_config) =
            start_scheduler(config.scheduler, &config.feature_gates)?;
        let mut api = ApiServer::new(Box::new(store));
        api.set_tick(tick);
        let stored: Vec<Node> = api.list_typed(None, None);
        let mut kubelets = BTreeMap::new();
        for node in stored {
            let name = node.metadata.name.clone();
            let plugins = device_plugins(&node);
            let mut kubelet = Kubelet::new(node, plugins, config.kubelet.clone());
            kubelet.resume(&api, tick);
            kubelets.insert(name, kubelet);
        }
        let revision = api.revision();
        let mut cluster = Cluster {
            api,
            controllers: ControllerManager::with_feature_gates(
                owners.clone(),
                nodes.clone(),
                &config.feature_gates,
            ),
            scheduler,
            n_nodes_added: u32::try_from(kubelets.len()).unwrap_or(u32::MAX),
            kubelets,
            kubelet_config: config.kubelet,
            tick,
            outside: OutsideWatchers::default(),
            tick_start: revision,
            previous_tick_start: revision,
            kubelets_seen: None,
            touched: Some(Default::default()),
            monitor_idle: None,
            stopped: Default::default(),
            powered_off: Default::default(),
            restarted: Default::default(),
            heartbeats: 0,
            kubelet_due: Default::default(),
            scheduler_config,
            external_owners: owners,
            external_nodes: nodes,
            explain: None,
            feature_gates: config.feature_gates,
            operators: Vec::new(),
            informer_lag: config.informer_lag,
            tick_ends: BTreeMap::new(),
            first_tick_start: None,
            conflicts: Default::default(),
        };
        // The bundled operator, registered as a user registers their own.
        cluster.register_operator_bundled();
        Ok(cluster)
    }

    /// The current tick (the one the next [`Cluster::tick`] runs).
    pub fn now(&self) -> Tick {
        self.tick
    }

    /// The apiserver, for reads and user writes.
    pub fn api(&mut self) -> &mut dyn ApiClient {
        &mut self.api
    }

    /// The apiserver, read-only.
    pub fn api_ref(&self) -> &dyn ApiClient {
        &self.api
    }

    /// Runs `f` on the apiserver with every write a dry run (`dryRun=All`, see
    /// [`ApiServer::dry_run`]): answered as the write would be, nothing stored.
    pub fn dry_run<R>(&mut self, f: impl FnOnce(&mut dyn ApiClient) -> R) -> R {
        self.api.dry_run_client(f)
    }

    /// Node names with a kubelet, in name order.
    pub fn node_names(&self) -> Vec<String> {
        self.kubelets.keys().cloned().collect()
    }

    /// Applies one object as `kubectl create` would. A Node starts a kubelet for it: the manifest is
    /// the machine's hardware description; GPUs (`status.capacity["nvidia.com/gpu"]`, else
    /// allocatable, else the `nvidia.com/gpu.count` label) become an NVIDIA device plugin with that
    /// many devices, and the kubelet registers the Node with what the plugin reports.
    ///
    /// # Errors
    /// The apiserver's `Status` (Invalid, AlreadyExists, NotFound namespace, Forbidden).
    pub fn apply(&mut self, obj: Object) -> Result<(), Status> {
        match obj {
            Object::Node(node) => self.add_node(*node),
            Object::Namespace(ns) if INITIAL_NAMESPACES.contains(&ns.metadata.name.as_str()) => {
                // Every dump of a real cluster lists the namespaces it starts with: merge their
                // labels and annotations into ours instead of failing with AlreadyExists.
                let mut existing: Namespace = self.api.get_typed("", &ns.metadata.name)?;
                existing
                    .metadata
                    .labels
                    .extend(ns.metadata.labels.into_inner());
                existing
                    .metadata
                    .annotations
                    .extend(ns.metadata.annotations.into_inner());
                self.api
                    .update(Object::Namespace(Box::new(existing)))
                    .map(|_| ())
            }
            other => self.api.create(other).map(|_| ()),
        }
    }

    /// Restores one object as existing state ([`ApiServer::restore`]: status, uid and admitted fields
    /// kept, no admission), for the objects of a dump that carry a uid, resourceVersion or status.
    /// A Node is restored and then gets its kubelet, which registers against the existing Node as
    /// upstream's kubelet does on restart (labels merged, status written by its setters).
    ///
    /// # Errors
    /// As [`Cluster::apply`].
    pub fn restore(&mut self, obj: Object) -> Result<(), Status> {
        match obj {
            Object::Node(node) => {
                let name = node.metadata.name.clone();
                if self.kubelets.contains_key(&name) {
                    return Err(Status::already_exists(&k8s_types::Kind::Node, &name));
                }
                let mut errors = k8s_api::validation::node::validate_node(&node);
                errors.extend(gpu_count_errors(&node));
                if !errors.is_empty() {
                    return Err(Status::invalid(&k8s_types::Kind::Node, &name, errors));
                }
                self.api.restore(Object::Node(node.clone()))?;
                self.add_node(*node)
            }
            Object::Namespace(ns) if INITIAL_NAMESPACES.contains(&ns.metadata.name.as_str()) => {
                self.apply(Object::Namespace(ns))
            }
            other => self.api.restore(other).map(|_| ()),
        }
    }

    /// Adds a node (see [`Cluster::apply`]).
    ///
    /// # Errors
    /// As [`Cluster::apply`].
    pub fn add_node(&mut self, mut node: Node) -> Result<(), Status> {
        let name = node.metadata.name.clone();
        if self.kubelets.contains_key(&name) {
            return Err(Status::already_exists(&k8s_types::Kind::Node, &name));
        }
        // The manifest is validated as the apiserver validates a Node before any of it is used.
        let mut errors = k8s_api::validation::node::validate_node(&node);
        errors.extend(gpu_count_errors(&node));
        if !errors.is_empty() {
            return Err(Status::invalid(&k8s_types::Kind::Node, &name, errors));
        }
        self.n_nodes_added += 1;
        if node.spec.pod_cidr.is_none() {
            // What kube-controller-manager's node IPAM does with --cluster-cidr=10.244.0.0/16.
            node.spec.pod_cidr = Some(format!("10.244.{}.0/24", self.n_nodes_added));
        }
        let plugins = device_plugins(&node);
        let dra_node = dra::dra_node(&node);
        let mut kubelet = Kubelet::new(node, plugins, self.kubelet_config.clone());
        kubelet.register(&mut self.api)?;
        self.monitor_idle = None;
        self.kubelet_due = Default::default();
        self.kubelets.insert(name, kubelet);
        if let Some(node) = dra_node {
            dra::publish_resource_slices(&mut self.api, &node, gpu_count(&node))?;
        }
        Ok(())
    }

    /// Who reads the watch history from outside the components (see [`OutsideWatchers`]; the
    /// default keeps everything written since the end of the previous tick).
    pub(crate) fn set_outside_watchers(&mut self, outside: OutsideWatchers) {
        self.outside = outside;
    }

    /// Runs one tick: controllers, then the scheduler, then every kubelet in node-name order.
    ///
    /// The store's history is compacted (etcd-style) within the tick, after each component's
    /// turn, to the oldest revision some watcher still needs: the controllers' informers, the
    /// scheduler's informer, the kubelet pass's and the apiserver's node index (both read up to
    /// now first) and the [`OutsideWatchers`]. So no component ever relists, and the history holds
    /// about one phase of writes instead of two ticks of them.
    pub fn tick(&mut self) {
        self.api.set_tick(self.tick);
        self.previous_tick_start = self.tick_start;
        self.tick_start = self.api.revision();
        self.first_tick_start.get_or_insert(self.tick_start);
        self.compact_history();
        // Node lease heartbeats first, so that a driver skipping idle ticks ([`Cluster::skip_idle`])
        // never leaves a running kubelet's Lease stale when the node lifecycle controller looks.
        self.heartbeat_pass();
        let upto = self.lagged_revision(self.informer_lag.controller_manager);
        self.controllers.reconcile_upto(&mut self.api, upto);
        let mut theirs = self.controllers.take_conflicts();
        self.conflicts.append(&mut theirs);
        self.compact_history();
        let upto = self.lagged_revision(self.informer_lag.scheduler);
        let mut api = CountingClient::new(&mut self.api, SCHEDULER_COMPONENT, &mut self.conflicts);
        self.scheduler.schedule_upto(&mut api, upto);
        self.compact_history();
        self.read_touched();
        let touched = if self.kubelets_seen.is_some() {
            self.touched.replace(Default::default())
        } else {
            None
        };
        self.kubelets_seen = Some(self.api.revision());
        self.sync_pass(touched);
        self.record_tick_end(self.tick);
        self.tick += 1;
    }

    /// Remembers the store revision at the end of `tick` (run, or batched by fast-forward), for
    /// the lagged informers, and forgets what no lag needs any more (the latest end at or before
    /// `tick - lag` stays).
    pub(crate) fn record_tick_end(&mut self, tick: Tick) {
        let lag = self
            .informer_lag
            .controller_manager
            .max(self.informer_lag.scheduler);
        if lag == 0 {
            return;
        }
        self.tick_ends.insert(tick, self.api.revision());
        let keep_from = tick.saturating_sub(lag);
        let first_kept = self
            .tick_ends
            .range(..=keep_from)
            .next_back()
            .map(|(t, _)| *t);
        if let Some(first) = first_kept {
            self.tick_ends = self.tick_ends.split_off(&first);
        }
    }

    /// What an informer `lag` ticks late may see at this tick: the store revision at the end of
    /// tick `now - lag` (the last tick run at or before it), or at the start of the first tick
    /// when none ran that early; `None` without lag (everything).
    fn lagged_revision(&self, lag: Tick) -> Option<i64> {
        if lag == 0 {
            return None;
        }
        let start = self.first_tick_start.unwrap_or(self.tick_start);
        let seen = self
            .tick
            .checked_sub(lag)
            .and_then(|t| self.tick_ends.range(..=t).next_back())
            .map_or(start, |(_, r)| *r);
        Some(seen)
    }

    /// The tick at which a lagged informer next gets a change it has not seen (a wake-up for
    /// fast-forward): the first tick that ended with writes past its position, plus the lag.
    pub(crate) fn next_lagged_delivery(&self) -> Option<Tick> {
        let due = |lag: Tick, position: Option<i64>| -> Option<Tick> {
            if lag == 0 {
                return None;
            }
            let position = position?;
            let (t, _) = self.tick_ends.iter().find(|(_, r)| **r > position)?;
            Some(t.saturating_add(lag))
        };
        [
            due(
                self.informer_lag.controller_manager,
                self.controllers.informers().watch_position(),
            ),
            due(self.informer_lag.scheduler, self.scheduler.watch_position()),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Every `409 Conflict` the components were answered, in order.
    pub fn conflicts(&self) -> &k8s_types::conflict::ConflictLog {
        &self.conflicts
    }

    /// How late the informers are.
    pub fn informer_lag(&self) -> InformerLag {
        self.informer_lag
    }

    /// Compacts the store's history to the oldest revision a watcher still needs (see
    /// [`Cluster::tick`]).
    fn compact_history(&mut self) {
        self.read_touched();
        let now = self.api.revision();
        let outside = match self.outside {
            OutsideWatchers::BetweenTicks => Some(self.previous_tick_start),
            OutsideWatchers::From(r) => Some(r),
            OutsideWatchers::Nobody => None,
        };
        let oldest = [
            self.controllers.informers().watch_position(),
            self.scheduler.watch_position(),
            outside,
        ]
        .into_iter()
        .flatten()
        .fold(now, i64::min);
        self.api.compact(oldest);
    }

    /// Lease renewals written by the last [`Cluster::tick`] (a scenario run does not count a tick
    /// that wrote only these as activity).
    pub fn heartbeats(&self) -> i64 {
        self.heartbeats
    }

    /// Stops a node's kubelet (the `stopKubelet` step): from the next tick on it renews no Lease,
    /// posts no status and syncs no pod; its containers keep running. `Err` with a message when
    /// the node has no kubelet or it is already stopped.
    pub fn stop_kubelet(&mut self, node: &str) -> Result<(), String> {
        if !self.kubelets.contains_key(node) {
            return Err(format!("node {node:?} has no kubelet"));
        }
        if self.powered_off.contains(node) {
            return Err(format!("node {node:?} is powered off"));
        }
        self.monitor_idle = None;
        self.kubelet_due = Default::default();
        if !self.stopped.insert(node.to_string()) {
            return Err(format!("the kubelet of node {node:?} is already stopped"));
        }
        Ok(())
    }

    /// Starts a stopped kubelet again (the `startKubelet` step, see [`Kubelet::restart`]).
    /// With `restart` false the kubelet was only cut off (the `heal` step): no `Starting`.
    pub fn start_kubelet(&mut self, node: &str, restart: bool) -> Result<(), String> {
        let Some(kubelet) = self.kubelets.get_mut(node) else {
            return Err(format!("node {node:?} has no kubelet"));
        };
        if self.powered_off.contains(node) {
            return Err(format!("node {node:?} is powered off"));
        }
        self.monitor_idle = None;
        self.kubelet_due = Default::default();
        if !self.stopped.remove(node) {
            return Err(format!("the kubelet of node {node:?} is not stopped"));
        }
        if restart {
            kubelet.restart(&mut self.api);
        } else {
            kubelet.reconnect();
        }
        self.restarted.insert(node.to_string());
        Ok(())
    }

    /// Cuts a node's power (the `powerOff` step, see [`Kubelet::power_off`]): its containers and
    /// its kubelet die; from the next tick on nothing comes from the node, as with a stopped
    /// kubelet. A kubelet already stopped stays down with the machine. `Err` with a message when
    /// the node has no kubelet or is already off.
    pub fn power_off(&mut self, node: &str) -> Result<(), String> {
        let Some(kubelet) = self.kubelets.get_mut(node) else {
            return Err(format!("node {node:?} has no kubelet"));
        };
        if !self.powered_off.insert(node.to_string()) {
            return Err(format!("node {node:?} is already powered off"));
        }
        self.monitor_idle = None;
        self.kubelet_due = Default::default();
        self.stopped.insert(node.to_string());
        self.restarted.remove(node);
        kubelet.power_off();
        Ok(())
    }

    /// Boots a powered-off node (the `powerOn` step, see [`Kubelet::power_on`]): the kubelet
    /// starts, and its sync in this tick admits the node's pods again with their containers lost.
    /// `Err` with a message when the node has no kubelet or is not powered off.
    pub fn power_on(&mut self, node: &str) -> Result<(), String> {
        let Some(kubelet) = self.kubelets.get_mut(node) else {
            return Err(format!("node {node:?} has no kubelet"));
        };
        if !self.powered_off.remove(node) {
            return Err(format!("node {node:?} is not powered off"));
        }
        self.monitor_idle = None;
        self.kubelet_due = Default::default();
        self.stopped.remove(node);
        kubelet.power_on(&mut self.api);
        self.restarted.insert(node.to_string());
        Ok(())
    }

    /// Restarts the whole control plane (the `restartControlPlane` step): kube-apiserver (its
    /// watch cache is rebuilt from etcd by a list; every watcher's watch is cut, so each kubelet
    /// lists its pods again at its next sync), kube-controller-manager and kube-scheduler (see
    /// [`Cluster::restart_controller_manager`], [`Cluster::restart_scheduler`]). etcd and the
    /// kubelets keep running.
    ///
    /// # Errors
    /// As [`Cluster::restart_scheduler`].
    pub fn restart_control_plane(&mut self) -> Result<(), String> {
        self.api.restart();
        self.kubelets_seen = None;
        self.restart_controller_manager();
        self.restart_scheduler()
    }

    /// Crashes and restarts kube-controller-manager (the `restartControllerManager` step): every
    /// controller's memory (work queues, expectations, pending taint evictions, node health
    /// probes) is dropped; the new one lists every kind from the apiserver at its first turn and
    /// watches from there, as upstream's informers do at startup.
    pub fn restart_controller_manager(&mut self) {
        self.controllers =
            self.new_controller_manager(self.external_owners.clone(), self.external_nodes.clone());
    }

    /// Registers a controller of the user's (an operator, written on the `Controller` contract
    /// of `k8s-types`, e.g. `k8s_controllers::operators::pytorchjob`): it runs after the built-in
    /// controllers in every tick, and again after a controller-manager restart. Register before
    /// the first tick.
    pub fn register_controller(&mut self, make: ControllerFactory) {
        self.controllers.register(make());
        self.operators.push(make);
    }

    /// The bundled PyTorchJob operator, registered as a user registers their own.
    fn register_operator_bundled(&mut self) {
        self.register_controller(Box::new(|| {
            Box::new(k8s_controllers::operators::pytorchjob::PyTorchJobController::new())
        }));
    }

    /// A new controller-manager with the built-in controllers and the registered ones.
    fn new_controller_manager(
        &self,
        owners: std::collections::BTreeSet<String>,
        nodes: std::collections::BTreeSet<String>,
    ) -> ControllerManager {
        let mut m = ControllerManager::with_feature_gates(owners, nodes, &self.feature_gates);
        for make in &self.operators {
            m.register(make());
        }
        m
    }

    /// Crashes and restarts kube-scheduler (the `restartScheduler` step): its queue, cache and
    /// waiting pods are dropped and rebuilt from the apiserver by list + watch at its next pass.
    ///
    /// # Errors
    /// The configuration error, which cannot happen for a configuration the cluster started with.
    pub fn restart_scheduler(&mut self) -> Result<(), String> {
        let mut scheduler =
            Scheduler::new(self.scheduler_config.clone()).map_err(|e| e.to_string())?;
        // `--explain` is a flag of the process: the new one explains the same pod (the records of
        // the old one are gone with it).
        scheduler.set_explain(self.explain.clone());
        self.scheduler = scheduler;
        Ok(())
    }

    /// The earliest tick at which some kubelet's periodic node status report is due.
    pub fn next_status_report(&self) -> Option<Tick> {
        self.kubelets
            .values()
            .filter_map(Kubelet::next_status_report)
            .min()
    }

    /// Owners with these uids live outside the input: the garbage collector keeps their dependents
    /// (a dump of pods without their ReplicaSets). Call before the first tick: it starts a fresh
    /// controller-manager.
    pub fn set_external_owners(&mut self, uids: std::collections::BTreeSet<String>) {
        self.set_external(uids, self.external_nodes.clone());
    }

    /// What lives outside the input: owners by uid (see [`Cluster::set_external_owners`]) and nodes
    /// by name (a dump's pods bound to nodes it lacks: the pod garbage collector keeps them, no
    /// kubelet runs them, the scheduler leaves them alone as bound pods). Call before the first tick:
    /// it starts a fresh controller-manager.
    pub fn set_external(
        &mut self,
        owners: std::collections::BTreeSet<String>,
        nodes: std::collections::BTreeSet<String>,
    ) {
        self.controllers = self.new_controller_manager(owners.clone(), nodes.clone());
        self.external_owners = owners;
        self.external_nodes = nodes;
    }

    /// Owners and nodes outside the input ([`Cluster::set_external`]), for a snapshot.
    pub fn external(
        &self,
    ) -> (
        &std::collections::BTreeSet<String>,
        &std::collections::BTreeSet<String>,
    ) {
        (&self.external_owners, &self.external_nodes)
    }

    /// The earliest tick at which some pod changes on its own on some node (a container starts,
    /// exits, restarts after back-off, a probe fails, a grace period ends): the run goes on until
    /// then even when nothing else changes.
    pub fn next_pod_wakeup(&self) -> Option<Tick> {
        // A stopped kubelet wakes for nothing until it is started again.
        self.kubelets
            .iter()
            .filter(|(name, _)| !self.stopped.contains(*name))
            .filter_map(|(_, k)| k.next_pod_wakeup())
            .min()
    }

    /// The scheduler, read-only (its queue's backoff and retry state).
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// Reads the Node and Pod changes since `kubelets_seen` into `touched`: the nodes a write
    /// concerns (the Node itself or a pod bound to it, before or after the write).
    /// A Node write seen (or possibly missed) forgets [`Cluster::node_monitor_idle`]'s cached answer.
    fn read_touched(&mut self) {
        let Some(since) = self.kubelets_seen else {
            self.monitor_idle = None;
            return;
        };
        let now = self.api.revision();
        if since == now {
            return;
        }
        self.kubelets_seen = Some(now);
        let Some(out) = self.touched.as_mut() else {
            self.monitor_idle = None;
            return;
        };
        let (Ok(nodes), Ok(pods)) = (
            self.api.watch(&k8s_types::Kind::Node, since),
            self.api.watch(&k8s_types::Kind::Pod, since),
        ) else {
            self.touched = None;
            self.monitor_idle = None;
            return;
        };
        if !nodes.is_empty() {
            self.monitor_idle = None;
        }
        for ev in nodes {
            out.insert(ev.object.meta().name.clone());
        }
        for ev in pods {
            if let Object::Pod(p) = &*ev.object {
                if let Some(n) = p.node_name() {
                    out.insert(n.to_string());
                }
            }
        }
    }

    /// Advances the store's revision by `n` without a write (a restored input's highest
    /// resourceVersion, as an etcd restore keeps its revision).
    pub fn skip_revisions(&mut self, n: i64) {
        self.api.store_mut().skip_revisions(n);
    }

    /// Sets the apiserver clock to the current tick (so that steps applied before [`Cluster::tick`]
    /// carry this tick's timestamps).
    pub fn begin_tick(&mut self) {
        self.api.set_tick(self.tick);
    }

    /// Starts (or with `None` stops) recording the scheduler's `--explain` record of every
    /// scheduling attempt of one pod (see `k8s_sched::explain`).
    pub fn set_explain(&mut self, pod: Option<k8s_sched::explain::PodKey>) {
        self.explain.clone_from(&pod);
        self.scheduler.set_explain(pod);
    }

    /// The recorded attempts of the explained pod, oldest first.
    pub fn explanations(&self) -> &[k8s_sched::explain::Explanation] {
        self.scheduler.explanations()
    }

    /// Whether a device of a node's device plugins is healthy (`Ok(None)`: no such device).
    ///
    /// # Errors
    /// A message when the node has no kubelet.
    pub fn device_healthy(&self, node: &str, device: &str) -> Result<Option<bool>, String> {
        self.kubelets
            .get(node)
            .map(|k| k.device_healthy(device))
            .ok_or_else(|| format!("nodes \"{node}\" not found"))
    }

    /// Marks a device of a node's device plugin healthy or unhealthy.
    ///
    /// # Errors
    /// A message when the node has no kubelet.
    pub fn set_device_health(
        &mut self,
        node: &str,
        device: &str,
        healthy: bool,
    ) -> Result<(), String> {
        let kubelet = self
            .kubelets
            .get_mut(node)
            .ok_or_else(|| format!("nodes \"{node}\" not found"))?;
        if kubelet.set_device_health(device, healthy) {
            self.kubelets_changed();
            Ok(())
        } else {
            Err(format!("node {node:?} has no device {device:?}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{parse_stream, Document};
    use k8s_types::store::StoreError;

    /// The compaction point of the store (0 when nothing is compacted).
    fn compacted(c: &Cluster) -> i64 {
        match c.api.store().watch("", 0) {
            Err(StoreError::Compacted { oldest, .. }) => oldest,
            _ => 0,
        }
    }

    /// With no outside reader (a `--output json` run), the history is compacted within the tick,
    /// past the end of the previous tick, and never past a component's watch position (so no
    /// component relists: the scheduler and the controllers keep watching).
    #[test]
    fn compaction_within_the_tick_follows_the_components() {
        let text = "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-0}\nstatus:\n  \
                    capacity: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n---\napiVersion: \
                    apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 4\n  \
                    selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: \
                    {app: web}}\n    spec:\n      containers:\n      - {name: c, image: a}\n";
        let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
        c.set_outside_watchers(OutsideWatchers::Nobody);
        c.begin_tick();
        for d in parse_stream("test", text).expect("parse").docs {
            if let Document::Object(o) = d.doc {
                c.apply(*o).expect("apply");
            }
        }
        let mut past_previous_end = Vec::new();
        for _ in 0..6 {
            let previous_end = c.api.revision();
            c.begin_tick();
            c.tick();
            let point = compacted(&c);
            let sched = c
                .scheduler
                .watch_position()
                .expect("the scheduler has listed");
            let ctrl = c
                .controllers
                .informers()
                .watch_position()
                .expect("the informers have listed");
            assert!(point <= sched && point <= ctrl, "{point} {sched} {ctrl}");
            assert!(point >= previous_end, "{point} {previous_end}");
            past_previous_end.push(point > previous_end);
        }
        // After the scheduler's turn every component has read past the end of the previous tick,
        // so a tick whose controllers wrote something compacts beyond it: tick 0 (the ReplicaSet
        // and its 4 pods), tick 1 (the Deployment's status). Compacting one tick behind, as
        // before, no tick would.
        assert!(
            past_previous_end[0] && past_previous_end[1],
            "{past_previous_end:?}"
        );
        // Once the pods run, nothing is written before the scheduler's turn: nothing to drop.
        assert!(!past_previous_end[5], "{past_previous_end:?}");
    }
}
