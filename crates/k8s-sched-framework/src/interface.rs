//! The plugin traits of the scheduling framework, one per extension point, and the [`Handle`]
//! through which plugins reach the framework (snapshot, waiting pods, apiserver). Mirrors upstream
//! `staging/src/k8s.io/kube-scheduler/framework/interface.go` (`Plugin`, `PreEnqueuePlugin`,
//! `QueueSortPlugin`, `PreFilterPlugin`, `FilterPlugin`, `PostFilterPlugin`, `PreScorePlugin`,
//! `ScorePlugin`, `ReservePlugin`, `PermitPlugin`, `BindPlugin`, `Handle`).
//!
//! Object safety: every trait here can be used as `dyn Trait`. A plugin implements [`Plugin`] and
//! the extension traits it supports, and returns `Some(self)` from the matching `as_*` accessor
//! (upstream uses Go interface assertions for the same purpose). Filter and Score take only the
//! pod, the cycle state and one [`NodeInfo`], so the per-node loop needs no handle.

use k8s_types::object::Shared;
use std::collections::BTreeSet;
use std::sync::Arc;

use super::cycle_state::CycleState;
use super::diagnosis::NodeToStatus;
use super::node_info::{NodeInfo, PodInfo};
use super::status::Status;
use k8s_types::apiserver::ApiClient;
use k8s_types::core::Pod;
use k8s_types::object::Object;
use k8s_types::Tick;

/// The plugin as [`std::any::Any`], for a type check on a concrete plugin type. Implemented for
/// every `'static + Send + Sync` type; a plugin never writes it.
pub trait AsAny {
    /// `self` as `&dyn Any`.
    fn as_any(&self) -> &dyn std::any::Any;
    /// The shared plugin as `Arc<dyn Any>`, for [`Arc::downcast`].
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync>;
}

impl<T: std::any::Any + Send + Sync> AsAny for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }
}

/// Every plugin: a name plus the extension points it implements (upstream `Plugin` +
/// type assertions). Plugins are shared by reference across the extension points of one profile.
/// [`AsAny`] (implemented for every type) lets the scheduler recognise its own plugin types, the
/// counterpart of a Go type assertion to a concrete type.
pub trait Plugin: AsAny + Send + Sync {
    /// The plugin's registry name, e.g. `NodeResourcesFit`.
    fn name(&self) -> &str;

    /// PreEnqueue, if implemented.
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        None
    }
    /// QueueSort, if implemented.
    fn as_queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        None
    }
    /// PreFilter, if implemented.
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        None
    }
    /// Filter, if implemented.
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        None
    }
    /// PostFilter, if implemented.
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        None
    }
    /// PreScore, if implemented.
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        None
    }
    /// Score, if implemented.
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        None
    }
    /// Reserve (with Unreserve), if implemented.
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        None
    }
    /// Permit, if implemented.
    fn as_permit(&self) -> Option<&dyn PermitPlugin> {
        None
    }
    /// Bind, if implemented.
    fn as_bind(&self) -> Option<&dyn BindPlugin> {
        None
    }
    /// PreBind, if implemented.
    fn as_pre_bind(&self) -> Option<&dyn super::binding_cycle::PreBindPlugin> {
        None
    }
    /// PostBind, if implemented.
    fn as_post_bind(&self) -> Option<&dyn super::binding_cycle::PostBindPlugin> {
        None
    }
    /// EnqueueExtensions (queueing hints), if implemented.
    fn as_enqueue_extensions(&self) -> Option<&dyn super::events::EnqueueExtensions> {
        None
    }
}

/// A pod in the scheduling queue (upstream `QueuedPodInfo`).
#[derive(Clone, Debug)]
pub struct QueuedPodInfo {
    /// The pod.
    pub pod: Shared<Pod>,
    /// When the pod was (re-)added to the queue, in ticks: its creation tick, or the tick of its
    /// last failed attempt (upstream refreshes `Timestamp` when an unschedulable pod is re-added).
    pub timestamp: Tick,
    /// Scheduling attempts so far.
    pub attempts: u32,
    /// Tick of the first attempt, if any.
    pub initial_attempt_timestamp: Option<Tick>,
    /// The store revision at which the scheduler first saw the pod; a deterministic tie-break for
    /// pods with equal timestamps (roughly creation order).
    pub sequence: i64,
}

/// PreEnqueue: gates a pod before it may enter the active queue (upstream `PreEnqueuePlugin`).
pub trait PreEnqueuePlugin: Plugin {
    /// Success lets the pod be attempted; anything else keeps it out of scheduling, without events.
    fn pre_enqueue(&self, pod: &Pod) -> Status;

    /// PreEnqueue with the scheduler's view, for a plugin that reads listers (upstream plugins
    /// keep their handle from construction; GangScheduling reads PodGroups and the group's pods).
    /// The scheduler calls this one; the default is [`PreEnqueuePlugin::pre_enqueue`].
    fn pre_enqueue_with(&self, pod: &Pod, handle: &dyn Handle) -> Status {
        let _ = handle;
        self.pre_enqueue(pod)
    }
}

/// QueueSort: orders pending pods (upstream `QueueSortPlugin`). Exactly one per profile.
pub trait QueueSortPlugin: Plugin {
    /// True when `a` must be attempted before `b`. Must be a strict weak order.
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool;
}

/// The nodes a PreFilter plugin restricts the pod to (upstream `PreFilterResult`); `None` means all
/// nodes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreFilterResult {
    /// Node names the pod may go to, or `None` for all.
    pub node_names: Option<BTreeSet<String>>,
}

impl PreFilterResult {
    /// True when every node is allowed.
    pub fn all_nodes(&self) -> bool {
        self.node_names.is_none()
    }

    /// Intersection of two results (upstream `Merge`).
    pub fn merge(&self, other: &PreFilterResult) -> PreFilterResult {
        match (&self.node_names, &other.node_names) {
            (None, None) => PreFilterResult::default(),
            (Some(a), None) => PreFilterResult {
                node_names: Some(a.clone()),
            },
            (None, Some(b)) => PreFilterResult {
                node_names: Some(b.clone()),
            },
            (Some(a), Some(b)) => PreFilterResult {
                node_names: Some(a.intersection(b).cloned().collect()),
            },
        }
    }
}

/// PreFilter: runs once per attempt before Filter (upstream `PreFilterPlugin`).
pub trait PreFilterPlugin: Plugin {
    /// Precomputes per-attempt data into `state` and may restrict the candidate nodes. Returning a
    /// `Skip` status skips this plugin's Filter for the attempt; a rejecting status fails the
    /// attempt (UnschedulableAndUnresolvable also stops the remaining PreFilter plugins).
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status);

    /// Updates `state` as if `pod_to_add` ran on `node` (upstream `PreFilterExtensions.AddPod`),
    /// used by preemption and nominated-pod evaluation. Default: nothing to update.
    fn add_pod(
        &self,
        _state: &mut CycleState,
        _pod_to_schedule: &Pod,
        _pod_to_add: &PodInfo,
        _node: &NodeInfo,
    ) -> Status {
        Status::success()
    }

    /// Updates `state` as if `pod_to_remove` left `node` (upstream
    /// `PreFilterExtensions.RemovePod`). Default: nothing to update.
    fn remove_pod(
        &self,
        _state: &mut CycleState,
        _pod_to_schedule: &Pod,
        _pod_to_remove: &PodInfo,
        _node: &NodeInfo,
    ) -> Status {
        Status::success()
    }
}

/// Filter: may the pod run on this node? (upstream `FilterPlugin`). Called for every candidate
/// node; keep it allocation-free on success.
pub trait FilterPlugin: Plugin {
    /// Success, or a rejecting status whose reasons explain the misfit.
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status;

    /// [`FilterPlugin::filter`] over many nodes at once, for speed: appends `(i, status)` to
    /// `failed` for every `nodes[i]` whose status is not success, in index order, and nothing
    /// for the others. Must give exactly the statuses `filter` gives (the scheduler uses either).
    /// Default: calls `filter` on each node. Override to read the cycle state once per call.
    fn filter_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        failed: &mut Vec<(usize, Status)>,
    ) {
        for (i, n) in nodes.iter().enumerate() {
            let s = self.filter(state, pod, n);
            if !s.is_success() {
                failed.push((i, s));
            }
        }
    }
}

/// How a PostFilter result changes the pod's `status.nominatedNodeName` (upstream
/// `NominatingMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NominatingMode {
    /// Leave it as it is.
    #[default]
    Noop,
    /// Set it to the given name (empty clears it).
    Override,
}

/// A nomination (upstream `NominatingInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NominatingInfo {
    /// The node name; empty clears the nomination.
    pub nominated_node_name: String,
    /// Whether to apply it.
    pub mode: NominatingMode,
}

/// The result of a PostFilter plugin (upstream `PostFilterResult`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostFilterResult {
    /// The nomination, if any.
    pub nominating_info: Option<NominatingInfo>,
}

impl PostFilterResult {
    /// A result that nominates `node` (empty clears the nomination) (upstream
    /// `NewPostFilterResultWithNominatedNode`).
    pub fn with_nominated_node(node: impl Into<String>) -> PostFilterResult {
        PostFilterResult {
            nominating_info: Some(NominatingInfo {
                nominated_node_name: node.into(),
                mode: NominatingMode::Override,
            }),
        }
    }

    /// The nominating mode (`Noop` without nominating info).
    pub fn mode(&self) -> NominatingMode {
        self.nominating_info
            .as_ref()
            .map(|n| n.mode)
            .unwrap_or_default()
    }
}

/// PostFilter: runs when no node fits, e.g. preemption (upstream `PostFilterPlugin`).
pub trait PostFilterPlugin: Plugin {
    /// Success makes the pod schedulable in a later cycle (e.g. after victims are gone);
    /// Unschedulable passes to the next PostFilter plugin, its reasons are appended to the
    /// FailedScheduling message; UnschedulableAndUnresolvable stops the PostFilter chain.
    fn post_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        statuses: &NodeToStatus,
        handle: &mut dyn Handle,
    ) -> (Option<PostFilterResult>, Status);
}

/// PreScore: runs once per attempt before Score over the feasible nodes (upstream
/// `PreScorePlugin`). `Skip` skips this plugin's Score.
pub trait PreScorePlugin: Plugin {
    /// Precomputes scoring data into `state`.
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, nodes: &[&NodeInfo]) -> Status;

    /// PreScore with the framework [`Handle`], for plugins that read the whole snapshot or the
    /// apiserver (upstream plugins keep `handle.SnapshotSharedLister()`, e.g. PodTopologySpread
    /// and InterPodAffinity count pods on every node, ImageLocality counts nodes per image). The
    /// scheduler calls this one. Default: [`PreScorePlugin::pre_score`].
    fn pre_score_with_handle(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        _handle: &dyn Handle,
    ) -> Status {
        self.pre_score(state, pod, nodes)
    }
}

/// One node's score from one Score plugin (upstream `NodeScore`); the name borrows the snapshot
/// so scoring allocates no strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeScore<'a> {
    /// Node name.
    pub name: &'a str,
    /// Score; in `[MIN_NODE_SCORE, MAX_NODE_SCORE]` after NormalizeScore.
    pub score: i64,
}

/// Score: ranks feasible nodes (upstream `ScorePlugin` + `ScoreExtensions`).
pub trait ScorePlugin: Plugin {
    /// The raw score of one node.
    ///
    /// # Errors
    /// A status with code `Error` aborts the attempt.
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status>;

    /// [`ScorePlugin::score`] over many nodes at once, for speed: `scores[i]` is the raw score
    /// of `nodes[i]` (`scores.len() == nodes.len()`). Must give exactly the scores `score` gives
    /// (the scheduler uses either). Default: calls `score` on each node.
    ///
    /// # Errors
    /// The first error `score` returns.
    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        for (n, out) in nodes.iter().zip(scores.iter_mut()) {
            *out = self.score(state, pod, n)?;
        }
        Ok(())
    }

    /// Rescales all nodes' raw scores into `[0, 100]` (upstream `NormalizeScore`). Default: no-op.
    fn normalize_score(
        &self,
        _state: &CycleState,
        _pod: &Pod,
        _scores: &mut [NodeScore<'_>],
    ) -> Status {
        Status::success()
    }
}

/// Reserve/Unreserve: claim and release plugin-side state for the chosen node (upstream
/// `ReservePlugin`). Unreserve must be idempotent.
pub trait ReservePlugin: Plugin {
    /// Claims state for `pod` on `node_name`; a non-success status fails the attempt.
    fn reserve(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node_name: &str,
        handle: &mut dyn Handle,
    ) -> Status;

    /// Releases what `reserve` claimed (called in reverse plugin order when a later step fails).
    fn unreserve(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node_name: &str,
        handle: &mut dyn Handle,
    );
}

/// What a Permit plugin decides (upstream Permit `(Status, timeout)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PermitDecision {
    /// Go ahead to binding.
    Allow,
    /// Fail the attempt with this (rejecting) status.
    Reject(Status),
    /// Hold the pod, assumed on its node, until allowed or rejected through the [`Handle`], or
    /// until this many ticks pass (then it is rejected for timeout).
    Wait(Tick),
}

/// Permit: the last gate before binding (upstream `PermitPlugin`).
pub trait PermitPlugin: Plugin {
    /// Allow, reject or make the pod wait.
    fn permit(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node_name: &str,
        handle: &mut dyn Handle,
    ) -> PermitDecision;
}

/// Bind: writes the decision to the apiserver (upstream `BindPlugin`). The first Bind plugin that
/// does not return `Skip` handles the pod.
pub trait BindPlugin: Plugin {
    /// Success, Skip (let the next Bind plugin handle it) or an error.
    fn bind(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node_name: &str,
        handle: &mut dyn Handle,
    ) -> Status;
}

/// A pod held at Permit (upstream `WaitingPod`).
#[derive(Clone, Debug)]
pub struct WaitingPodInfo {
    /// The pod.
    pub pod: Shared<Pod>,
    /// The node it is assumed on.
    pub node_name: String,
    /// Plugins that have not allowed it yet.
    pub pending_plugins: Vec<String>,
}

/// The framework as plugins see it (upstream `framework.Handle`): the tick's snapshot, the pods
/// listed this tick, waiting pods, the apiserver and the event recorder of the profile.
pub trait Handle {
    /// The current tick.
    fn now(&self) -> Tick;

    /// The profile's scheduler name (also the events' source component).
    fn scheduler_name(&self) -> &str;

    /// Every node of the snapshot, in name order, with the pods assigned to it (bound, assumed and
    /// waiting).
    fn node_infos(&self) -> &[NodeInfo];

    /// One node of the snapshot.
    fn node_info(&self, name: &str) -> Option<&NodeInfo>;

    /// An opaque view of the implementing scheduler's own state, for its in-tree plugins' fast
    /// paths only (k8s-sched: its per-node arrays, whose generations the topology counters follow
    /// to find the changed nodes without reading every `NodeInfo`). Its type is private to that
    /// scheduler, so a plugin from another crate cannot read it, and loses nothing by it: the
    /// plugins that use it compute the same results without it. No upstream counterpart.
    /// Default: none.
    fn scheduler_internal(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// The nodes of the snapshot with at least one pod that has pod affinity or anti-affinity,
    /// in name order (upstream `NodeInfos().HavePodsWithAffinityList()`). Default: filters
    /// [`Handle::node_infos`]; the scheduler keeps the list up to date instead of scanning.
    fn node_infos_with_pod_affinity(&self) -> Vec<&NodeInfo> {
        self.node_infos()
            .iter()
            .filter(|n| n.num_pods_with_affinity() > 0)
            .collect()
    }

    /// The nodes of the snapshot with at least one pod that has required pod anti-affinity, in
    /// name order (upstream `NodeInfos().HavePodsWithRequiredAntiAffinityList()`). Default:
    /// filters [`Handle::node_infos`].
    fn node_infos_with_required_anti_affinity(&self) -> Vec<&NodeInfo> {
        self.node_infos()
            .iter()
            .filter(|n| n.num_pods_with_required_anti_affinity() > 0)
            .collect()
    }

    /// The cluster-wide state of a (normalized) image name over the snapshot's nodes (upstream
    /// `ImageStateSummary`): its size in bytes as reported by the first node in name order that
    /// has it, and the number of nodes that have it; `None` when no node has it. Default: scans
    /// [`Handle::node_infos`]; the scheduler keeps an index instead.
    fn image_summary(&self, image: &str) -> Option<(i64, usize)> {
        let mut out: Option<(i64, usize)> = None;
        for n in self.node_infos() {
            if let Some(size) = n.image_sizes().get(image) {
                match &mut out {
                    Some((_, count)) => *count += 1,
                    None => out = Some((*size, 1)),
                }
            }
        }
        out
    }

    /// Every pod the scheduler listed at the start of the tick, in namespace/name order.
    fn pods(&self) -> &[Shared<Pod>];

    /// The known pods (any phase) labelled `scheduling.x-k8s.io/pod-group: <pod_group>` in
    /// `namespace`, in name order (upstream coscheduling lists them with a label selector on the
    /// pod informer). Default: filters [`Handle::pods`]; the scheduler keeps an index instead.
    fn pod_group_pods(&self, namespace: &str, pod_group: &str) -> Vec<Shared<Pod>> {
        self.pods()
            .iter()
            .filter(|p| p.metadata.namespace() == namespace && p.pod_group() == Some(pod_group))
            .cloned()
            .collect()
    }

    /// The known pods (any phase) whose `spec.schedulingGroup.podGroupName` is `name` in
    /// `namespace`, in name order (upstream's `PodGroupManager` state of a native PodGroup).
    /// Default: filters [`Handle::pods`].
    fn scheduling_group_pods(&self, namespace: &str, name: &str) -> Vec<Shared<Pod>> {
        self.pods()
            .iter()
            .filter(|p| {
                p.metadata.namespace() == namespace && p.scheduling_group_name() == Some(name)
            })
            .cloned()
            .collect()
    }

    /// The node `pod` occupies in the snapshot, bound, assumed or held at Permit (upstream: the
    /// scheduler cache's copy of the pod, whose `spec.nodeName` is set on assume). Default: scans
    /// [`Handle::node_infos`].
    fn assigned_node(&self, pod: &Pod) -> Option<&str> {
        self.node_infos()
            .iter()
            .find(|n| n.pods().iter().any(|p| p.is_same_pod(pod)))
            .map(|n| n.name())
    }

    /// Every PodDisruptionBudget, in `namespace/name` order (upstream: the preemption evaluator's
    /// `PdbLister`, `getPodDisruptionBudgets`). Default: none.
    fn pod_disruption_budgets(&self) -> Vec<Arc<k8s_types::policy::PodDisruptionBudget>> {
        Vec::new()
    }

    /// The apiserver, read-only.
    fn client(&self) -> &dyn ApiClient;

    /// The apiserver.
    fn client_mut(&mut self) -> &mut dyn ApiClient;

    /// Records an event about `involved` with this profile's scheduler name as source component.
    fn record_event(&mut self, involved: &Object, type_: &str, reason: &str, message: &str);

    /// Pods currently held at Permit, in the order they started waiting.
    fn waiting_pods(&self) -> Vec<WaitingPodInfo>;

    /// Allows a waiting pod on behalf of `plugin` (upstream `WaitingPod.Allow`); it binds once no
    /// plugin is pending.
    fn allow_waiting_pod(&mut self, uid: &str, plugin: &str);

    /// Rejects a waiting pod (upstream `WaitingPod.Reject`); its reservation is rolled back.
    fn reject_waiting_pod(&mut self, uid: &str, plugin: &str, message: &str);

    /// Pods nominated to `node` (status.nominatedNodeName) that are not yet bound.
    fn nominated_pods_for_node(&self, node: &str) -> Vec<Shared<Pod>>;

    /// Runs the profile's Filter plugins on `node` with the equal-or-higher-priority pods
    /// nominated to it treated as running (upstream `RunFilterPluginsWithNominatedPods`).
    fn run_filter_plugins_with_nominated_pods(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
    ) -> Status;

    /// Runs the profile's PreFilter `add_pod` extensions (upstream `RunPreFilterExtensionAddPod`).
    fn run_pre_filter_extension_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        pod_to_add: &PodInfo,
        node: &NodeInfo,
    ) -> Status;

    /// Runs the profile's PreFilter `remove_pod` extensions (upstream
    /// `RunPreFilterExtensionRemovePod`).
    fn run_pre_filter_extension_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        pod_to_remove: &PodInfo,
        node: &NodeInfo,
    ) -> Status;
}
