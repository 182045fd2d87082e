//! The framework runtime: one [`Framework`] per profile, holding the plugin instances of each
//! extension point in order and running them with upstream's rules. Mirrors upstream
//! `pkg/scheduler/framework/runtime/framework.go` (`NewFramework`, `expandMultiPointPlugins`,
//! `getScoreWeights`, `RunPreFilterPlugins`, `RunFilterPlugins`, `RunPostFilterPlugins`,
//! `RunScorePlugins`, `RunReservePlugins*`, `RunPermitPlugins`, `RunBindPlugins`).

pub(crate) mod batch;
pub(crate) mod binding_cycle;
pub(crate) mod fused;
pub(crate) mod handle;
pub(crate) mod kernel;
pub(crate) mod node_arrays;
pub(crate) mod score_explain;

use k8s_types::object::Shared;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_sched_framework::{
    Code, CycleState, ExtensionPoint, Handle, NodeInfo, NodeScore, NodeToStatus, PermitDecision,
    Plugin, PodInfo, PostFilterResult, PreFilterResult, QueuedPodInfo, Status, MAX_NODE_SCORE,
    MAX_PERMIT_TIMEOUT, MIN_NODE_SCORE,
};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::Pod;
use k8s_types::events::{EventRecorder, Involved, Recorded};
use k8s_types::Tick;

use crate::config::default_plugins::{default_plugins, merge_plugins};
use crate::config::{KubeSchedulerProfile, Plugins};
use crate::plugins::not_yet_implemented;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::{PluginArgs, Registry};

/// The outcome of the Permit plugins (upstream `RunPermitPlugins`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PermitOutcome {
    /// Every plugin allowed.
    Allow,
    /// A plugin rejected (rejecting status) or failed (error status).
    Reject(Status),
    /// Some plugins asked to wait: plugin -> timeout in ticks (capped at 15 minutes).
    Wait(BTreeMap<String, Tick>),
}

/// One profile: plugins per extension point.
pub struct Framework {
    scheduler_name: String,
    percentage_of_nodes_to_score: Option<i32>,
    pre_enqueue: Vec<Arc<dyn Plugin>>,
    queue_sort: Arc<dyn Plugin>,
    pre_filter: Vec<Arc<dyn Plugin>>,
    filter: Vec<Arc<dyn Plugin>>,
    post_filter: Vec<Arc<dyn Plugin>>,
    pre_score: Vec<Arc<dyn Plugin>>,
    score: Vec<(Arc<dyn Plugin>, i64)>,
    reserve: Vec<Arc<dyn Plugin>>,
    permit: Vec<Arc<dyn Plugin>>,
    bind: Vec<Arc<dyn Plugin>>,
    /// Run Filter and Score through the fused node pass where plugins offer kernels
    /// (`runtime/fused.rs`).
    fused: bool,
    /// Per Filter / Score plugin (same order): the kernels it offers the fused pass
    /// (`kernel::node_kernels`, looked up once here).
    filter_kernels: Vec<Option<Arc<dyn kernel::NodeKernels>>>,
    score_kernels: Vec<Option<Arc<dyn kernel::NodeKernels>>>,
    pre_bind: Vec<Arc<dyn Plugin>>,
    post_bind: Vec<Arc<dyn Plugin>>,
    /// The events each plugin of the profile registered (queueing hints).
    queueing_hints: crate::queueing_hints::QueueingHintMap,
    /// The profile's event recorder, source `<schedulerName>` (upstream `frameworkImpl`'s
    /// `eventRecorder`, shared by the attempts that only borrow the framework).
    events: RefCell<EventRecorder>,
}

impl std::fmt::Debug for Framework {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names =
            |v: &[Arc<dyn Plugin>]| v.iter().map(|p| p.name().to_string()).collect::<Vec<_>>();
        f.debug_struct("Framework")
            .field("scheduler_name", &self.scheduler_name)
            .field("pre_filter", &names(&self.pre_filter))
            .field("filter", &names(&self.filter))
            .field("post_filter", &names(&self.post_filter))
            .field(
                "score",
                &self
                    .score
                    .iter()
                    .map(|(p, w)| (p.name().to_string(), *w))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The order of upstream's `getExtensionPoints` (`pkg/scheduler/framework/runtime/framework.go`),
/// in which it reports the first unknown plugin.
const UPSTREAM_EXTENSION_ORDER: [ExtensionPoint; 12] = [
    ExtensionPoint::PreFilter,
    ExtensionPoint::Filter,
    ExtensionPoint::PostFilter,
    ExtensionPoint::Reserve,
    ExtensionPoint::PreScore,
    ExtensionPoint::Score,
    ExtensionPoint::PreBind,
    ExtensionPoint::Bind,
    ExtensionPoint::PostBind,
    ExtensionPoint::Permit,
    ExtensionPoint::PreEnqueue,
    ExtensionPoint::QueueSort,
];

fn framework_err(path: &str, msg: String) -> ConfigError {
    ConfigError::Framework(format!("{path}: {msg}"))
}

impl Framework {
    /// Builds profile `index` (already defaulted and validated) with plugins from `registry`.
    ///
    /// # Errors
    /// Unknown plugin names (with their field path), plugin args errors, and upstream framework
    /// errors (a plugin enabled at an extension point it does not implement, duplicates, not
    /// exactly one QueueSort plugin, no Bind plugin). `gang_scheduling`: the feature gates
    /// `GenericWorkload` and `GangScheduling` are on, so GangScheduling is a default plugin.
    pub fn new(
        index: usize,
        profile: &KubeSchedulerProfile,
        registry: &Registry,
        gang_scheduling: bool,
    ) -> Result<Framework, ConfigError> {
        let path = format!("profiles[{index}]");
        let scheduler_name = profile.scheduler_name.clone().unwrap_or_default();
        // Unknown names in the user's plugin sets: the first one in upstream's order (each
        // extension point's set in `getExtensionPoints` order, `updatePluginList`; then
        // multiPoint, `expandMultiPointPlugins`, named after the first extension point it
        // expands into), `<interface> "<name>" does not exist`, at the name's field path.
        if let Some(custom) = &profile.plugins {
            let unknown = |p: &&crate::config::Plugin| {
                !registry.contains(&p.name) && !not_yet_implemented(&p.name)
            };
            for ext in UPSTREAM_EXTENSION_ORDER {
                let set = custom.set(ext);
                if let Some((j, p)) = set.enabled.iter().enumerate().find(|(_, p)| unknown(p)) {
                    return Err(framework_err(
                        &format!("{path}.plugins.{}.enabled[{j}].name", ext.field()),
                        format!("{} {:?} does not exist", ext.interface(), p.name),
                    ));
                }
            }
            let multi = &custom.multi_point.enabled;
            if let Some((j, p)) = multi.iter().enumerate().find(|(_, p)| unknown(p)) {
                let first = UPSTREAM_EXTENSION_ORDER
                    .into_iter()
                    .find(|e| !custom.set(*e).disabled.iter().any(|d| d.name == "*"))
                    .unwrap_or(ExtensionPoint::PreFilter);
                return Err(framework_err(
                    &format!("{path}.plugins.multiPoint.enabled[{j}].name"),
                    format!("{} {:?} does not exist", first.interface(), p.name),
                ));
            }
        }
        let plugins = merge_plugins(default_plugins(gang_scheduling), profile.plugins.as_ref());

        // Args by plugin name, with their paths.
        let mut args: BTreeMap<&str, (String, Option<&serde_json::Value>)> = BTreeMap::new();
        for (j, pc) in profile.plugin_config.iter().enumerate() {
            args.insert(
                pc.name.as_str(),
                (format!("{path}.pluginConfig[{j}].args"), pc.args.as_ref()),
            );
        }
        // Every plugin named anywhere, in first-seen order.
        let mut needed: Vec<&str> = Vec::new();
        let all_sets = ExtensionPoint::ALL
            .iter()
            .map(|e| plugins.set(*e))
            .chain(std::iter::once(&plugins.multi_point));
        for set in all_sets {
            for p in &set.enabled {
                if !needed.contains(&p.name.as_str()) {
                    needed.push(p.name.as_str());
                }
            }
        }
        let mut instances: BTreeMap<String, Arc<dyn Plugin>> = BTreeMap::new();
        let mut args_errors: Vec<k8s_types::status::FieldError> = Vec::new();
        // Plugins whose args were rejected (not validated a second time below).
        let mut failed: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
        for name in &needed {
            if not_yet_implemented(name) {
                tracing::warn!(
                    profile = %scheduler_name,
                    plugin = %name,
                    "plugin is not implemented in k8s-mini yet; the profile runs without it"
                );
                continue;
            }
            let (apath, a) = args
                .get(name)
                .cloned()
                .unwrap_or_else(|| (format!("{path}.pluginConfig"), None));
            match registry.build(&PluginArgs {
                name,
                args: a,
                path: apath,
            }) {
                Ok(plugin) => {
                    instances.insert((*name).to_string(), plugin);
                }
                Err(ConfigError::Invalid(errs)) => {
                    failed.insert(*name);
                    args_errors.extend(errs);
                }
                Err(e) => return Err(e),
            }
        }
        // Args of known plugins that are not enabled are still validated (as upstream validation
        // decodes every pluginConfig entry).
        for (name, (apath, a)) in &args {
            if !instances.contains_key(*name) && !failed.contains(name) && registry.contains(name) {
                match registry.build(&PluginArgs {
                    name,
                    args: *a,
                    path: apath.clone(),
                }) {
                    Ok(_) => {}
                    Err(ConfigError::Invalid(errs)) => args_errors.extend(errs),
                    Err(e) => return Err(e),
                }
            }
        }
        // Every entry's errors together, in pluginConfig order (upstream validatePluginConfig).
        if !args_errors.is_empty() {
            args_errors.sort_by_key(|e| plugin_config_index(&e.field));
            return Err(ConfigError::Invalid(args_errors));
        }

        let mut lists: BTreeMap<ExtensionPoint, Vec<Arc<dyn Plugin>>> = BTreeMap::new();
        for ext in ExtensionPoint::ALL {
            let list = build_extension(ext, &plugins, &instances, &path)?;
            lists.insert(ext, list);
        }
        let mut take = |e: ExtensionPoint| lists.remove(&e).unwrap_or_default();
        let pre_enqueue = take(ExtensionPoint::PreEnqueue);
        let mut queue_sort = take(ExtensionPoint::QueueSort);
        let pre_filter = take(ExtensionPoint::PreFilter);
        let filter = take(ExtensionPoint::Filter);
        let post_filter = take(ExtensionPoint::PostFilter);
        let pre_score = take(ExtensionPoint::PreScore);
        let score_plugins = take(ExtensionPoint::Score);
        let reserve = take(ExtensionPoint::Reserve);
        let permit = take(ExtensionPoint::Permit);
        let bind = take(ExtensionPoint::Bind);
        let pre_bind = take(ExtensionPoint::PreBind);
        let post_bind = take(ExtensionPoint::PostBind);

        if queue_sort.len() != 1 {
            return Err(framework_err(
                &path,
                format!(
                    "only one queue sort plugin required for profile with scheduler name {scheduler_name:?}, but got {}",
                    queue_sort.len()
                ),
            ));
        }
        if bind.is_empty() {
            return Err(framework_err(
                &path,
                format!("at least one bind plugin is needed for profile with scheduler name {scheduler_name:?}"),
            ));
        }
        // Weights: the Score set first, then MultiPoint; 0 or unset = 1, upstream's overflow
        // guard (upstream getScoreWeights, see config/score_weights.rs).
        let weights = crate::config::score_weights::score_weights(
            plugins
                .score
                .enabled
                .iter()
                .chain(plugins.multi_point.enabled.iter()),
            // VolumeBinding is not run by k8s-mini but implements Score upstream.
            |n| {
                instances
                    .get(n)
                    .map_or(n == crate::plugins::names::VOLUME_BINDING, |p| {
                        p.as_score().is_some()
                    })
            },
        )
        .map_err(|m| framework_err(&path, m.to_string()))?;
        let filter_kernels = filter.iter().map(kernel::node_kernels).collect();
        let score_kernels = score_plugins.iter().map(kernel::node_kernels).collect();
        let score = score_plugins
            .into_iter()
            .map(|p| {
                let w = weights.get(p.name()).copied().unwrap_or(1);
                (p, w)
            })
            .collect();

        Ok(Framework {
            filter_kernels,
            score_kernels,
            percentage_of_nodes_to_score: profile.percentage_of_nodes_to_score,
            pre_enqueue,
            queue_sort: queue_sort.remove(0),
            pre_filter,
            filter,
            post_filter,
            pre_score,
            score,
            reserve,
            permit,
            bind,
            fused: true,
            pre_bind,
            post_bind,
            queueing_hints: crate::queueing_hints::QueueingHintMap::build(&instances),
            events: RefCell::new(EventRecorder::for_component(&scheduler_name)),
            scheduler_name,
        })
    }

    /// Records an event about `involved` as this profile's scheduler (upstream
    /// `fwk.EventRecorder().Eventf`).
    pub fn record_event<'a>(
        &self,
        api: &mut dyn ApiClient,
        involved: impl Into<Involved<'a>>,
        type_: &str,
        reason: &str,
        message: impl Into<k8s_types::CompactString>,
    ) -> Recorded {
        self.events
            .borrow_mut()
            .record(api, involved, type_, reason, message)
    }

    /// The profile's scheduler name.
    pub fn scheduler_name(&self) -> &str {
        &self.scheduler_name
    }

    /// The profile's percentageOfNodesToScore, if set.
    pub fn percentage_of_nodes_to_score(&self) -> Option<i32> {
        self.percentage_of_nodes_to_score
    }

    /// Plugin names per extension point (for inspection and `--explain`).
    pub fn plugin_names(&self, ext: ExtensionPoint) -> Vec<String> {
        let names = |v: &[Arc<dyn Plugin>]| v.iter().map(|p| p.name().to_string()).collect();
        match ext {
            ExtensionPoint::PreEnqueue => names(&self.pre_enqueue),
            ExtensionPoint::QueueSort => vec![self.queue_sort.name().to_string()],
            ExtensionPoint::PreFilter => names(&self.pre_filter),
            ExtensionPoint::Filter => names(&self.filter),
            ExtensionPoint::PostFilter => names(&self.post_filter),
            ExtensionPoint::PreScore => names(&self.pre_score),
            ExtensionPoint::Score => self
                .score
                .iter()
                .map(|(p, _)| p.name().to_string())
                .collect(),
            ExtensionPoint::Reserve => names(&self.reserve),
            ExtensionPoint::Permit => names(&self.permit),
            ExtensionPoint::Bind => names(&self.bind),
            ExtensionPoint::PreBind => names(&self.pre_bind),
            ExtensionPoint::PostBind => names(&self.post_bind),
        }
    }

    /// Score plugins with their weights.
    pub fn score_weights(&self) -> Vec<(String, i64)> {
        self.score
            .iter()
            .map(|(p, w)| (p.name().to_string(), *w))
            .collect()
    }

    /// Runs PreEnqueue plugins; the first non-success status blocks the pod.
    pub fn run_pre_enqueue(&self, pod: &Pod, handle: &dyn Handle) -> Status {
        for p in &self.pre_enqueue {
            if let Some(pe) = p.as_pre_enqueue() {
                let s = pe.pre_enqueue_with(pod, handle);
                if !s.is_success() {
                    return s.with_plugin(p.name());
                }
            }
        }
        Status::success()
    }

    /// The QueueSort plugin's order.
    pub fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
        self.queue_sort
            .as_queue_sort()
            .is_some_and(|q| q.less(a, b))
    }

    /// Upstream `RunPreFilterPlugins`: the merged PreFilterResult, the status, and the plugins
    /// that restricted the nodes.
    pub fn run_pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        handle: &dyn Handle,
    ) -> (PreFilterResult, Status, Vec<String>) {
        let mut result = PreFilterResult::default();
        let mut plugins_with_nodes: Vec<String> = Vec::new();
        let mut return_status = Status::success();
        for p in &self.pre_filter {
            let Some(pf) = p.as_pre_filter() else {
                continue;
            };
            let (r, mut s) = pf.pre_filter(state, pod, handle);
            if s.is_skip() {
                state.skip_filter_plugin(p.name());
                continue;
            }
            if !s.is_success() {
                s.set_plugin(p.name());
                match s.code() {
                    Code::UnschedulableAndUnresolvable => {
                        return (result, s, plugins_with_nodes);
                    }
                    Code::Unschedulable => {
                        return_status = s;
                        continue;
                    }
                    _ => {
                        return (
                            result,
                            Status::error(format!(
                                "running PreFilter plugin {:?}: {}",
                                p.name(),
                                s.message()
                            ))
                            .with_plugin(p.name()),
                            plugins_with_nodes,
                        );
                    }
                }
            }
            if let Some(r) = r {
                if !r.all_nodes() {
                    plugins_with_nodes.push(p.name().to_string());
                }
                result = result.merge(&r);
                if result.node_names.as_ref().is_some_and(BTreeSet::is_empty) {
                    let msg = if plugins_with_nodes.len() == 1 {
                        format!("node(s) didn't satisfy plugin {}", plugins_with_nodes[0])
                    } else {
                        format!(
                            "node(s) didn't satisfy plugin(s) [{}] simultaneously",
                            plugins_with_nodes.join(" ")
                        )
                    };
                    return (result, Status::unresolvable(msg), plugins_with_nodes);
                }
            }
        }
        (result, return_status, plugins_with_nodes)
    }

    /// Per Filter plugin: skipped in this attempt (its PreFilter returned Skip).
    pub fn filter_skips(&self, state: &CycleState) -> Vec<bool> {
        let skip = state.skip_filter_plugins();
        self.filter
            .iter()
            .map(|p| !skip.is_empty() && skip.contains(p.name()))
            .collect()
    }

    /// Upstream `RunFilterPlugins`: the first non-success status, with its plugin name.
    pub fn run_filter(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        skips: &[bool],
    ) -> Status {
        for (i, p) in self.filter.iter().enumerate() {
            if skips.get(i).copied().unwrap_or(false) {
                continue;
            }
            let Some(f) = p.as_filter() else {
                continue;
            };
            let s = f.filter(state, pod, node);
            if !s.is_success() {
                let s = if s.is_rejected() {
                    s
                } else {
                    Status::error(format!(
                        "running {:?} filter plugin: {}",
                        p.name(),
                        s.message()
                    ))
                };
                return s.with_plugin(p.name());
            }
        }
        Status::success()
    }

    /// Upstream `RunFilterPluginsWithNominatedPods`: first with the equal-or-higher-priority pods
    /// nominated to the node added, then (if that passed) without them.
    pub fn run_filter_with_nominated(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        skips: &[bool],
        nominated: &[Shared<Pod>],
    ) -> Status {
        if nominated.is_empty() {
            return self.run_filter(state, pod, node, skips);
        }
        let prio = pod.priority();
        let mut added: Option<(NodeInfo, CycleState)> = None;
        for n in nominated {
            if n.priority() < prio || k8s_sched_framework::node_info::same_pod(n, pod) {
                continue;
            }
            let (ni, st) = added.get_or_insert_with(|| (node.clone(), state.clone()));
            let pi = PodInfo::new(Shared::clone(n));
            let s = self.run_pre_filter_extension_add_pod(st, pod, &pi, ni);
            if !s.is_success() {
                return s;
            }
            ni.add_pod(pi);
        }
        match added {
            None => self.run_filter(state, pod, node, skips),
            Some((ni, st)) => {
                let s = self.run_filter(&st, pod, &ni, skips);
                if !s.is_success() {
                    return s;
                }
                self.run_filter(state, pod, node, skips)
            }
        }
    }

    /// Upstream `RunPreFilterExtensionAddPod`.
    pub fn run_pre_filter_extension_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        pod_to_add: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        for p in &self.pre_filter {
            if state.skip_filter_plugins().contains(p.name()) {
                continue;
            }
            if let Some(pf) = p.as_pre_filter() {
                let s = pf.add_pod(state, pod, pod_to_add, node);
                if !s.is_success() {
                    return Status::error(format!(
                        "running AddPod on PreFilter plugin {:?}: {}",
                        p.name(),
                        s.message()
                    ));
                }
            }
        }
        Status::success()
    }

    /// Upstream `RunPreFilterExtensionRemovePod`.
    pub fn run_pre_filter_extension_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        pod_to_remove: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        for p in &self.pre_filter {
            if state.skip_filter_plugins().contains(p.name()) {
                continue;
            }
            if let Some(pf) = p.as_pre_filter() {
                let s = pf.remove_pod(state, pod, pod_to_remove, node);
                if !s.is_success() {
                    return Status::error(format!(
                        "running RemovePod on PreFilter plugin {:?}: {}",
                        p.name(),
                        s.message()
                    ));
                }
            }
        }
        Status::success()
    }

    /// Upstream `RunPostFilterPlugins`: the first success wins; Unschedulable passes on, its
    /// reasons accumulate; UnschedulableAndUnresolvable stops; the last meaningful nomination is
    /// kept.
    pub fn run_post_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        statuses: &NodeToStatus,
        handle: &mut dyn Handle,
    ) -> (Option<PostFilterResult>, Status) {
        let mut result: Option<PostFilterResult> = None;
        let mut reasons: Vec<String> = Vec::new();
        let mut rejector = String::new();
        for p in &self.post_filter {
            let Some(pf) = p.as_post_filter() else {
                continue;
            };
            let (r, s) = pf.post_filter(state, pod, statuses, handle);
            if s.is_success() {
                // Upstream's RunPostFilterPlugins returns the successful plugin's status; keep its
                // name so explanations can say which plugin made room.
                return (r, s.with_plugin(p.name()));
            }
            if s.code() == Code::UnschedulableAndUnresolvable {
                return (r, s.with_plugin(p.name()));
            }
            if !s.is_rejected() {
                return (None, Status::error(s.message()).with_plugin(p.name()));
            }
            if let Some(r) = r {
                if r.mode() != k8s_sched_framework::NominatingMode::Noop {
                    result = Some(r);
                }
            }
            reasons.extend(s.reasons().iter().cloned());
            if rejector.is_empty() {
                rejector = p.name().to_string();
            }
        }
        (
            result,
            Status::new(Code::Unschedulable, reasons).with_plugin(rejector),
        )
    }

    /// Upstream `RunPreScorePlugins`: Skip marks the plugin's Score skipped. `handle` gives the
    /// plugins the whole snapshot (`PreScorePlugin::pre_score_with_handle`).
    pub fn run_pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        handle: &dyn Handle,
    ) -> Status {
        for p in &self.pre_score {
            let Some(ps) = p.as_pre_score() else {
                continue;
            };
            let s = ps.pre_score_with_handle(state, pod, nodes, handle);
            if s.is_skip() {
                state.skip_score_plugin(p.name());
                continue;
            }
            if !s.is_success() {
                return Status::error(format!(
                    "running PreScore plugin {:?}: {}",
                    p.name(),
                    s.message()
                ))
                .with_plugin(p.name());
            }
        }
        Status::success()
    }

    /// Upstream `RunScorePlugins` + weighting: the weighted total per node, in `nodes` order.
    ///
    /// # Errors
    /// A plugin error, or a normalized score outside `[0, 100]`.
    pub fn run_score(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
    ) -> Result<Vec<i64>, Status> {
        let mut totals = vec![0i64; nodes.len()];
        let mut scores: Vec<NodeScore<'_>> = Vec::with_capacity(nodes.len());
        let skip = state.skip_score_plugins();
        for (p, weight) in &self.score {
            if !skip.is_empty() && skip.contains(p.name()) {
                continue;
            }
            let Some(sp) = p.as_score() else {
                continue;
            };
            scores.clear();
            for n in nodes {
                match sp.score(state, pod, n) {
                    Ok(v) => scores.push(NodeScore {
                        name: n.name(),
                        score: v,
                    }),
                    Err(s) => {
                        return Err(Status::error(format!(
                            "running Score plugins: plugin {:?} failed with: {}",
                            p.name(),
                            s.message()
                        )))
                    }
                }
            }
            let s = sp.normalize_score(state, pod, &mut scores);
            if !s.is_success() {
                return Err(Status::error(format!(
                    "running Normalize on Score plugins: plugin {:?} failed with: {}",
                    p.name(),
                    s.message()
                )));
            }
            for (i, ns) in scores.iter().enumerate() {
                if ns.score < MIN_NODE_SCORE || ns.score > MAX_NODE_SCORE {
                    return Err(Status::error(format!(
                        "applying score defaultWeights on Score plugins: plugin {:?} returns an invalid score {}, it should in the range of [{}, {}] after normalizing",
                        p.name(),
                        ns.score,
                        MIN_NODE_SCORE,
                        MAX_NODE_SCORE
                    )));
                }
                totals[i] += ns.score * weight;
            }
        }
        Ok(totals)
    }

    /// Upstream `RunReservePluginsReserve`: the first failure is returned (with its plugin).
    pub fn run_reserve(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: &str,
        handle: &mut dyn Handle,
    ) -> Status {
        for p in &self.reserve {
            if let Some(r) = p.as_reserve() {
                let s = r.reserve(state, pod, node, handle);
                if !s.is_success() {
                    if s.is_rejected() {
                        return s.with_plugin(p.name());
                    }
                    return Status::error(format!(
                        "running Reserve plugin {:?}: {}",
                        p.name(),
                        s.message()
                    ))
                    .with_plugin(p.name());
                }
            }
        }
        Status::success()
    }

    /// Upstream `RunReservePluginsUnreserve`: every Reserve plugin, in reverse order.
    pub fn run_unreserve(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: &str,
        handle: &mut dyn Handle,
    ) {
        for p in self.reserve.iter().rev() {
            if let Some(r) = p.as_reserve() {
                r.unreserve(state, pod, node, handle);
            }
        }
    }

    /// Upstream `RunPermitPlugins`.
    pub fn run_permit(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: &str,
        handle: &mut dyn Handle,
    ) -> PermitOutcome {
        let mut waits: BTreeMap<String, Tick> = BTreeMap::new();
        for p in &self.permit {
            let Some(pp) = p.as_permit() else {
                continue;
            };
            match pp.permit(state, pod, node, handle) {
                PermitDecision::Allow => {}
                PermitDecision::Wait(t) => {
                    waits.insert(p.name().to_string(), t.min(MAX_PERMIT_TIMEOUT));
                }
                PermitDecision::Reject(s) => {
                    if s.is_rejected() {
                        return PermitOutcome::Reject(s.with_plugin(p.name()));
                    }
                    return PermitOutcome::Reject(
                        Status::error(format!(
                            "running Permit plugin {:?}: {}",
                            p.name(),
                            s.message()
                        ))
                        .with_plugin(p.name()),
                    );
                }
            }
        }
        if waits.is_empty() {
            PermitOutcome::Allow
        } else {
            PermitOutcome::Wait(waits)
        }
    }

    /// Upstream `RunBindPlugins`: the first plugin that does not Skip decides.
    pub fn run_bind(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: &str,
        handle: &mut dyn Handle,
    ) -> Status {
        let mut last = Status::skip();
        for p in &self.bind {
            let Some(b) = p.as_bind() else {
                continue;
            };
            let s = b.bind(state, pod, node, handle);
            if s.is_skip() {
                last = s;
                continue;
            }
            if !s.is_success() {
                if s.is_rejected() {
                    return s.with_plugin(p.name());
                }
                return Status::error(format!(
                    "running Bind plugin {:?}: {}",
                    p.name(),
                    s.message()
                ))
                .with_plugin(p.name());
            }
            return s;
        }
        last
    }
}

/// The `pluginConfig` index in a field path like `profiles[0].pluginConfig[2].args.x` (paths
/// without one sort last).
fn plugin_config_index(path: &str) -> usize {
    path.split_once("pluginConfig[")
        .and_then(|(_, rest)| rest.split_once(']'))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(usize::MAX)
}

/// Builds one extension point's plugin list: the specific set (upstream `updatePluginList`), then
/// MultiPoint expansion (upstream `expandMultiPointPlugins`): overrides first, then MultiPoint
/// plugins, then the other specific plugins.
fn build_extension(
    ext: ExtensionPoint,
    plugins: &Plugins,
    instances: &BTreeMap<String, Arc<dyn Plugin>>,
    path: &str,
) -> Result<Vec<Arc<dyn Plugin>>, ConfigError> {
    let set = plugins.set(ext);
    let mut enabled: Vec<&str> = Vec::new();
    for p in &set.enabled {
        if not_yet_implemented(&p.name) {
            continue;
        }
        let Some(inst) = instances.get(&p.name) else {
            continue;
        };
        if !ext.implemented_by(inst.as_ref()) {
            return Err(framework_err(
                path,
                format!(
                    "plugin {:?} does not extend {} plugin",
                    p.name,
                    ext.interface()
                ),
            ));
        }
        if enabled.contains(&p.name.as_str()) {
            return Err(framework_err(
                path,
                format!(
                    "plugin {:?} already registered as {:?}",
                    p.name,
                    ext.interface()
                ),
            ));
        }
        enabled.push(p.name.as_str());
    }
    let disabled: BTreeSet<&str> = set.disabled.iter().map(|p| p.name.as_str()).collect();
    let mut order: Vec<&str> = Vec::new();
    if disabled.contains("*") {
        order = enabled.clone();
    } else {
        let mut overrides: Vec<&str> = Vec::new();
        let mut multi: Vec<&str> = Vec::new();
        for p in &plugins.multi_point.enabled {
            if not_yet_implemented(&p.name) {
                continue;
            }
            let Some(inst) = instances.get(&p.name) else {
                continue;
            };
            if !ext.implemented_by(inst.as_ref()) || disabled.contains(p.name.as_str()) {
                continue;
            }
            if enabled.contains(&p.name.as_str()) {
                if !overrides.contains(&p.name.as_str()) {
                    overrides.push(p.name.as_str());
                }
                continue;
            }
            if multi.contains(&p.name.as_str()) {
                return Err(framework_err(
                    path,
                    format!(
                        "plugin {:?} already registered as {:?}",
                        p.name,
                        ext.interface()
                    ),
                ));
            }
            multi.push(p.name.as_str());
        }
        order.extend(overrides.iter().copied());
        order.extend(multi.iter().copied());
        for e in &enabled {
            if !overrides.contains(e) && !multi.contains(e) {
                order.push(e);
            }
        }
    }
    Ok(order
        .into_iter()
        .filter_map(|n| instances.get(n).cloned())
        .collect())
}
