//! [`Simulator`]: the scheduler driven one pod at a time over an in-memory list of nodes, without
//! queue, apiserver or binding cycle: "attempt this pod now, and keep it where it lands". It is
//! what the FGD paper's simulator does with kube-scheduler (hkust-adsl/kubernetes-scheduler-simulator
//! `pkg/simulator/core.go` `SchedulePods`, one `scheduleOne` per pod, each placed pod added to the
//! snapshot before the next), and what k8s-cluster's paper-mode trace replay uses
//! (`docs/trace-replay.md`). Everything scheduling-specific about it lives here, behind four calls:
//! [`Simulator::new`], [`Simulator::schedule_pod`], [`Simulator::node_gpu_frag`] and
//! [`typical_pods`].
//!
//! One attempt runs the profile's real plugins through the same framework as the tick's
//! scheduling cycle: PreFilter, Filter on every node (`percentageOfNodesToScore` does not apply:
//! the simulator evaluates all nodes), PreScore and Score when more than one node is feasible,
//! then Reserve on the chosen node. A pod no node fits, or whose PreFilter, PreScore, Score or
//! Reserve fails, is not placed (no PostFilter: nothing is preempted). The placed pod carries the
//! annotations its Reserve plugins asked for (GpuShare's `alibabacloud.com/gpu-index`).
//!
//! Host selection follows the simulator, not upstream's reservoir sampling: the highest total
//! score; among equal totals the node with the smallest *tie-break rank* ([`Simulator::new`]'s
//! `ranks`, by default the node's position). The simulator runs a patched kube-scheduler
//! (`mental2008/kubernetes v1.20.5-minor`, `selectHost`) that keeps the lexicographically
//! smallest node name among equal scores, after renaming every node `<NNNN>-<name>` with a seeded
//! permutation; the permutation is the caller's (the replay draws it), the rule is here.
//!
//! Speed (no result changes): when the profile's first Filter plugins are GpuShare and
//! NodeResourcesFit (in either order, as the replay's profile has them), the nodes those two
//! would reject are left out before the framework runs, from one contiguous array of each node's
//! free CPU, free memory and free GPUs ([`Room`], refreshed only on the node a pod lands on).
//! They run first, so such a node's status would be theirs and no later plugin would see it: the
//! feasible set, and whether any Filter failed with an error, are unchanged. This pre-check is the
//! plugins' own arithmetic (`node_resources/fit.rs` cpu and memory, `gpu/share.rs` `gpu_fits`),
//! checked against them by the tests below.
//!
//! ```
//! use std::sync::Arc;
//! use k8s_sched::simulator::Simulator;
//! use k8s_sched::KubeSchedulerConfiguration;
//! use k8s_types::core::{Container, Node, Pod};
//! use k8s_types::{Quantity, Shared};
//!
//! let mut nodes = Vec::new();
//! for name in ["node-a", "node-b"] {
//!     let mut n = Node::default();
//!     n.metadata.name = name.into();
//!     for (r, q) in [("cpu", "4"), ("memory", "8Gi"), ("pods", "110")] {
//!         n.status.allocatable.insert(r.into(), Quantity::parse(q).unwrap());
//!     }
//!     nodes.push(Arc::new(n));
//! }
//! // MostAllocated; node-b has tie-break rank 0, so it wins between two empty nodes.
//! let config = KubeSchedulerConfiguration::preset("binpack").expect("preset");
//! let mut sim = Simulator::new(config, &nodes, Some(vec![1, 0]))?;
//! let mut pod = Pod::default();
//! pod.metadata.namespace = Some("default".into());
//! let mut c = Container { name: "app".into(), ..Default::default() };
//! c.resources.requests.insert("cpu".into(), Quantity::parse("1").unwrap());
//! pod.spec.containers.push(c);
//! for name in ["web-0", "web-1"] {
//!     pod.metadata.name = name.into();
//!     let placed = sim.schedule_pod(&Shared::from_typed(pod.clone())).expect("placed");
//!     // The second pod joins the first: node-b is now the more allocated one.
//!     assert_eq!(sim.node_name(placed.node), Some("node-b"));
//! }
//! # Ok::<(), k8s_sched::ConfigError>(())
//! ```

use k8s_types::object::Shared;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_sched_framework::{
    ConfigError, CycleState, ExtensionPoint, Handle, NodeInfo, PodInfo, Status, WaitingPodInfo,
};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::{Node, Pod};
use k8s_types::gpushare::{GpuRequest, MILLI_PER_GPU};
use k8s_types::object::Object;
use k8s_types::Tick;

use crate::config::{KubeSchedulerConfiguration, TypicalPod};
use crate::detached_client::DetachedClient;
use crate::plugins::gpu::frag::{node_frag, DEFAULT_INCREASE_STEP};
use crate::plugins::gpu::names::GPU_SHARE;
use crate::plugins::gpu::shape::{NodeView, PodShape};
use crate::plugins::names::NODE_RESOURCES_FIT;
use crate::runtime::batch::{FilterScratch, ScoreScratch};
use crate::runtime::Framework;
use crate::Scheduler;

/// Where [`Simulator::schedule_pod`] placed a pod.
#[derive(Clone, Debug, PartialEq)]
pub struct SimPlacement {
    /// The node's position in the list given to [`Simulator::new`].
    pub node: usize,
    /// The pod as placed: with the annotations its Reserve plugins asked for (e.g.
    /// `alibabacloud.com/gpu-index`), else the pod given.
    pub pod: Shared<Pod>,
}

/// The scheduler over a fixed list of nodes, one attempt per pod (see the module docs).
pub struct Simulator {
    scheduler: Scheduler,
    nodes: Vec<NodeInfo>,
    index: BTreeMap<String, usize>,
    ranks: Vec<usize>,
    rooms: Vec<Room>,
    /// Positions of GpuShare and NodeResourcesFit in the profile's Filter plugins, when they run
    /// before every other Filter plugin (the pre-check applies only then).
    precheck_gpu: Option<usize>,
    precheck_fit: Option<usize>,
    client: DetachedClient,
    feasible: Vec<usize>,
    candidates: Vec<usize>,
    failed: Vec<(usize, Status)>,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("nodes", &self.nodes.len())
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// A simulator with the first profile of `config` over `nodes` (no pods yet). `ranks[i]` is
    /// node `i`'s tie-break rank (smaller wins among equal scores); `None` ranks the nodes by
    /// position.
    ///
    /// # Errors
    /// The configuration's [`ConfigError`] ([`Scheduler::new`]); [`ConfigError::Framework`] when
    /// it has no profile or `ranks` is not one rank per node.
    pub fn new(
        config: KubeSchedulerConfiguration,
        nodes: &[Arc<Node>],
        ranks: Option<Vec<usize>>,
    ) -> Result<Simulator, ConfigError> {
        let scheduler = Scheduler::new(config)?;
        let Some(fwk) = scheduler.profiles().first() else {
            return Err(ConfigError::Framework("no profile".into()));
        };
        let ranks = ranks.unwrap_or_else(|| (0..nodes.len()).collect());
        if ranks.len() != nodes.len() {
            return Err(ConfigError::Framework(format!(
                "{} tie-break ranks for {} nodes",
                ranks.len(),
                nodes.len()
            )));
        }
        let filters = fwk.plugin_names(ExtensionPoint::Filter);
        let leading = filters
            .iter()
            .take_while(|n| *n == GPU_SHARE || *n == NODE_RESOURCES_FIT)
            .count();
        let position = |name: &str| filters[..leading].iter().position(|n| n == name);
        let (precheck_gpu, precheck_fit) = (position(GPU_SHARE), position(NODE_RESOURCES_FIT));
        let nodes: Vec<NodeInfo> = nodes.iter().map(|n| NodeInfo::new(Arc::clone(n))).collect();
        let index = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name().to_string(), i))
            .collect();
        let rooms = nodes.iter().map(Room::of).collect();
        Ok(Simulator {
            scheduler,
            nodes,
            index,
            ranks,
            rooms,
            precheck_gpu,
            precheck_fit,
            client: DetachedClient::default(),
            feasible: Vec::new(),
            candidates: Vec::new(),
            failed: Vec::new(),
        })
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The name of node `i` (`None` past the end).
    pub fn node_name(&self, i: usize) -> Option<&str> {
        self.nodes.get(i).map(NodeInfo::name)
    }

    /// One scheduling attempt of `pod` now (see the module docs); when a node is chosen the pod
    /// (as placed) stays on it for every later attempt. `None` when it fits nowhere or a plugin
    /// failed.
    pub fn schedule_pod(&mut self, pod: &Shared<Pod>) -> Option<SimPlacement> {
        let placement = self.attempt(pod)?;
        let n = &mut self.nodes[placement.node];
        n.add_pod(PodInfo::new(Shared::clone(&placement.pod)));
        self.rooms[placement.node] = Room::of(n);
        Some(placement)
    }

    /// The FGD paper's fragmentation of node `i` for the target workload `typical`, in
    /// milli-GPU (`plugins/gpu/frag.rs` `node_frag`; 0 past the end).
    pub fn node_gpu_frag(&self, i: usize, typical: &[TypicalPod]) -> f64 {
        let Some(n) = self.nodes.get(i) else {
            return 0.0;
        };
        let v = NodeView::of(n);
        node_frag(v.cpu_left, v.gpu_left, v.model, typical)
    }

    fn attempt(&mut self, pod: &Shared<Pod>) -> Option<SimPlacement> {
        let Simulator {
            scheduler,
            nodes,
            index,
            ranks,
            rooms,
            precheck_gpu,
            precheck_fit,
            client,
            feasible,
            candidates,
            failed,
        } = self;
        let fwk = scheduler.profiles().first()?;
        let nodes: &[NodeInfo] = nodes;
        let mut state = CycleState::new();
        let (pre, status, _) = {
            let h = SimHandle {
                fwk,
                nodes,
                index,
                client: &mut *client,
            };
            fwk.run_pre_filter(&mut state, pod, &h)
        };
        if !status.is_success() {
            return None;
        }
        let skips = fwk.filter_skips(&state);
        let on = |p: &Option<usize>| p.is_some_and(|i| !skips.get(i).copied().unwrap_or(true));
        let check = Precheck {
            shape: PodShape::of(pod),
            requests: k8s_types::resources::pod_requests(pod),
            gpu: on(precheck_gpu),
            fit: on(precheck_fit),
        };
        feasible.clear();
        candidates.clear();
        failed.clear();
        candidates.extend((0..nodes.len()).filter(|i| {
            let n = &nodes[*i];
            check.admits(&rooms[*i], n)
                && pre
                    .node_names
                    .as_ref()
                    .is_none_or(|set| set.contains(n.name()))
        }));
        let refs: Vec<&NodeInfo> = candidates.iter().map(|i| &nodes[*i]).collect();
        let mut scratch = FilterScratch::default();
        fwk.filter_chunk(&state, pod, &refs, &skips, &mut scratch, failed);
        let mut next_failed = failed.iter().map(|(i, _)| *i).peekable();
        for (i, idx) in candidates.iter().enumerate() {
            if next_failed.peek() == Some(&i) {
                next_failed.next();
                continue;
            }
            feasible.push(*idx);
        }
        if failed.iter().any(|(_, s)| !s.is_rejected()) {
            return None;
        }
        let host = match feasible.len() {
            0 => return None,
            1 => feasible[0],
            _ => {
                let refs: Vec<&NodeInfo> = feasible.iter().map(|i| &nodes[*i]).collect();
                let s = {
                    let h = SimHandle {
                        fwk,
                        nodes,
                        index,
                        client: &mut *client,
                    };
                    fwk.run_pre_score(&mut state, pod, &refs, &h)
                };
                if !s.is_success() {
                    return None;
                }
                let mut scratch = ScoreScratch::default();
                fwk.score_batch(&state, pod, &refs, &mut scratch).ok()?;
                select_host(feasible, &scratch.totals, ranks)?
            }
        };
        let mut h = SimHandle {
            fwk,
            nodes,
            index,
            client: &mut *client,
        };
        let name = nodes[host].name().to_string();
        if !fwk.run_reserve(&mut state, pod, &name, &mut h).is_success() {
            fwk.run_unreserve(&mut state, pod, &name, &mut h);
            return None;
        }
        let placed = crate::binding_annotations::annotated(&state, pod)
            .unwrap_or_else(|| Shared::clone(pod));
        Some(SimPlacement {
            node: host,
            pod: placed,
        })
    }
}

/// One node's GPUs with its pods, as the FGD paper measures them (for views of a live cluster,
/// e.g. k8s-cluster's capacity view).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeGpuUse {
    /// GPUs on the node (`nvidia.com/gpu`, else `alibabacloud.com/gpu-milli / 1000`).
    pub gpus: usize,
    /// Free milli-GPU, all GPUs together.
    pub milli_left: i64,
    /// The node's fragmentation for the target workload `typical`, in milli-GPU
    /// (`plugins/gpu/frag.rs` `node_frag`: the simulator's `NodeGpuShareFragAmountScore`).
    pub frag_milli: f64,
}

/// [`NodeGpuUse`] of `node` holding `pods` (bound there and not terminal; their device annotations
/// place them on GPU indices as the scheduler's cache does).
pub fn node_gpu_use(node: Arc<Node>, pods: &[Shared<Pod>], typical: &[TypicalPod]) -> NodeGpuUse {
    let mut info = NodeInfo::new(node);
    for p in pods {
        info.add_pod(PodInfo::new(Shared::clone(p)));
    }
    let v = NodeView::of(&info);
    NodeGpuUse {
        gpus: info.gpus().count(),
        milli_left: v.total_gpu_left(),
        frag_milli: node_frag(v.cpu_left, v.gpu_left, v.model, typical),
    }
}

/// Whether `node` satisfies the pod's nodeSelector and required node affinity (the NodeAffinity
/// Filter's rule, upstream `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`), for views
/// outside the scheduler (the capacity view's pending pods per pool).
pub use crate::plugins::node_affinity::required_node_affinity_admits;

/// The FGD paper's target workload of `pods`: their most frequent shapes covering
/// `popularity_threshold` percent of them, with frequencies (the simulator's `GetTypicalPods`,
/// `plugins/gpu/frag.rs` [`crate::plugins::gpu::frag::typical_pods`], one shape per step).
pub fn typical_pods<'a>(
    pods: impl IntoIterator<Item = &'a Pod>,
    popularity_threshold: u32,
) -> Vec<TypicalPod> {
    let shapes: Vec<PodShape> = pods.into_iter().map(PodShape::of).collect();
    crate::plugins::gpu::frag::typical_pods(&shapes, popularity_threshold, DEFAULT_INCREASE_STEP)
}

/// The simulator's `selectHost`: the highest total; among equal totals the candidate with the
/// smallest `rank` (its renamed node name sorts first). `totals[i]` is `candidates[i]`'s.
fn select_host(candidates: &[usize], totals: &[i64], rank: &[usize]) -> Option<usize> {
    let mut best: Option<(i64, usize)> = None;
    for (c, t) in candidates.iter().zip(totals) {
        let better = match best {
            None => true,
            Some((b, bc)) => *t > b || (*t == b && rank[*c] < rank[bc]),
        };
        if better {
            best = Some((*t, *c));
        }
    }
    best.map(|(_, c)| c)
}

/// The [`Handle`] of a simulated attempt: the node list, and an empty in-process client (no
/// Services or owners for the default spreading selectors, nothing waiting, nothing nominated).
struct SimHandle<'a> {
    fwk: &'a Framework,
    nodes: &'a [NodeInfo],
    index: &'a BTreeMap<String, usize>,
    client: &'a mut DetachedClient,
}

impl Handle for SimHandle<'_> {
    fn now(&self) -> Tick {
        0
    }
    fn scheduler_name(&self) -> &str {
        self.fwk.scheduler_name()
    }
    fn node_infos(&self) -> &[NodeInfo] {
        self.nodes
    }
    fn node_info(&self, name: &str) -> Option<&NodeInfo> {
        self.index.get(name).map(|i| &self.nodes[*i])
    }
    fn pods(&self) -> &[Shared<Pod>] {
        &[]
    }
    fn client(&self) -> &dyn ApiClient {
        &*self.client
    }
    fn client_mut(&mut self) -> &mut dyn ApiClient {
        &mut *self.client
    }
    fn record_event(&mut self, _: &Object, _: &str, _: &str, _: &str) {}
    fn waiting_pods(&self) -> Vec<WaitingPodInfo> {
        Vec::new()
    }
    fn allow_waiting_pod(&mut self, _: &str, _: &str) {}
    fn reject_waiting_pod(&mut self, _: &str, _: &str, _: &str) {}
    fn nominated_pods_for_node(&self, _: &str) -> Vec<Shared<Pod>> {
        Vec::new()
    }
    fn run_filter_plugins_with_nominated_pods(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
    ) -> Status {
        let skips = self.fwk.filter_skips(state);
        self.fwk.run_filter(state, pod, node, &skips)
    }
    fn run_pre_filter_extension_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        pod_to_add: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        self.fwk
            .run_pre_filter_extension_add_pod(state, pod, pod_to_add, node)
    }
    fn run_pre_filter_extension_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        pod_to_remove: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        self.fwk
            .run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node)
    }
}

/// A node's free resources as the pre-check reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Room {
    /// Allocatable minus requested milli-CPU.
    cpu: i64,
    /// Allocatable minus requested memory, bytes.
    memory: i64,
    /// The most free milli-GPU on one GPU (a sharing pod of `m` milli fits iff `m <= max_left`,
    /// as [`k8s_types::gpushare::NodeGpus::fits`] decides for one GPU).
    max_left: i64,
    /// The most whole GPUs [`k8s_types::gpushare::NodeGpus::fits`] grants at once.
    whole: u32,
}

impl Room {
    fn of(n: &NodeInfo) -> Room {
        let (a, r, g) = (n.allocatable(), n.requested(), n.gpus());
        let whole_req = |count: u32| GpuRequest {
            count,
            milli: MILLI_PER_GPU,
        };
        let mut whole = u32::try_from(g.count()).unwrap_or(u32::MAX);
        while whole > 0 && !g.fits(&whole_req(whole)) {
            whole -= 1;
        }
        Room {
            cpu: a.milli_cpu - r.milli_cpu,
            memory: a.memory - r.memory,
            max_left: g.milli_left().iter().copied().max().unwrap_or(0),
            whole,
        }
    }
}

/// One attempt's pre-check: the pod's shape and requests, and which of the two checks apply.
struct Precheck {
    shape: PodShape,
    requests: k8s_types::resources::Resources,
    /// GpuShare's Filter runs (among the first Filter plugins, not skipped by its PreFilter).
    gpu: bool,
    /// NodeResourcesFit's Filter runs (likewise).
    fit: bool,
}

impl Precheck {
    /// False only for a node NodeResourcesFit (its cpu and memory checks) or GpuShare
    /// (`gpu_fits`: model, then per-GPU room) would reject.
    fn admits(&self, room: &Room, node: &NodeInfo) -> bool {
        let (cpu, memory) = (self.requests.milli_cpu, self.requests.memory);
        if self.fit && ((cpu > 0 && cpu > room.cpu) || (memory > 0 && memory > room.memory)) {
            return false;
        }
        let s = &self.shape;
        if !self.gpu || !s.wants_gpu() {
            return true;
        }
        if !s.models.is_empty() && !s.accepts_model(node.gpus().model()) {
            return false;
        }
        let g = &s.gpu;
        if g.count == 1 && g.milli < MILLI_PER_GPU {
            g.milli <= room.max_left
        } else if g.milli == MILLI_PER_GPU {
            g.count <= room.whole
        } else {
            node.gpus().fits(g)
        }
    }
}

#[cfg(test)]
mod tests;
