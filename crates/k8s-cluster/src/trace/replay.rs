//! The FGD paper's replay protocol (Weng et al., USENIX ATC '23, §6.1; reconstructed from the paper
//! and its public simulator, hkust-adsl/kubernetes-scheduler-simulator `pkg/simulator/core.go`
//! `Simulate`, `simulator.go` `SortClusterPods`, `TunePodsByNodeTotalResource`/`tuneUpPods`,
//! `SchedulePods`, `analysis.go` `ClusterGpuFragReport`), run on the k8s-sched framework against an
//! in-memory snapshot:
//!
//! 1. the cluster is the trace's GPU nodes;
//! 2. the workload is the trace's pods sorted by name; the target workload for FGD and for the
//!    fragmentation measure is its typical pods (95 % most frequent shapes);
//! 3. the pods are shuffled with the seed, then inflated by sampling pods of the workload with
//!    replacement (copies named `<pod>-tuned-<i>`), appended after the shuffled pods, until the
//!    next sample would push the GPU request past 130 % of the GPU capacity (the simulator compares
//!    the running total plus the sample's milli-GPU *per GPU*, and so do we);
//! 4. each pod gets exactly one scheduling attempt (PreFilter, Filter on every node, PreScore, Score,
//!    Reserve); a pod no node fits is dropped; nothing ever leaves;
//! 5. after every pod the allocated milli-GPU, the cluster's fragmentation and the arrived GPU
//!    request are sampled ([`super::metrics`]).
//!
//! Host selection among equal top scores follows the simulator: it runs a patched kube-scheduler
//! (`k8s.io/kubernetes => github.com/mental2008/kubernetes v1.20.5-minor`) whose `selectHost` keeps
//! the lexicographically smallest node name among equal scores "for reproducibility", and it renames
//! every node `<NNNN>-<name>` with `NNNN` from a seeded random permutation (`rand.Perm`, drawn after
//! the shuffle and the inflation). So ties go to the node with the smallest permutation rank
//! ([`select_host`]). All randomness derives from the seed; the generator differs from Go's
//! `math/rand`, so runs match the paper in distribution, not pod by pod.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_api::ApiServer;
use k8s_sched::binding_annotations;
use k8s_sched::plugins::gpu::frag::{node_frag, typical_pods, TypicalPod, DEFAULT_INCREASE_STEP};
use k8s_sched::plugins::gpu::shape::{NodeView, PodShape};
use k8s_sched::runtime::batch::{FilterScratch, ScoreScratch};
use k8s_sched::runtime::Framework;
use k8s_sched::Scheduler;
use k8s_sched_framework::{CycleState, Handle, NodeInfo, PodInfo, Status, WaitingPodInfo};
use k8s_store::MemStore;
use k8s_types::apiserver::ApiClient;
use k8s_types::core::{Node, Pod};
use k8s_types::gpushare::GPU_INDEX_ANNOTATION;
use k8s_types::object::Object;
use k8s_types::rng::SplitMix64;
use k8s_types::Tick;

use super::metrics::Sample;
use super::openb::{Trace, TracePod};
use super::policy::Policy;
use super::TraceError;

/// Protocol parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PaperOptions {
    /// Inflate the GPU request to this multiple of the GPU capacity (the paper: 1.3).
    pub inflation: f64,
    /// Typical pods cover this percentage of the workload's pods (the paper: 95).
    pub popularity_threshold: u32,
    /// Keep every pod's placement in [`ReplayRun::placements`].
    pub record_placements: bool,
    /// Replay only the first this many arrivals (after shuffle and inflation).
    pub max_arrivals: Option<usize>,
}

impl Default for PaperOptions {
    fn default() -> PaperOptions {
        PaperOptions {
            inflation: 1.3,
            popularity_threshold: 95,
            record_placements: false,
            max_arrivals: None,
        }
    }
}

/// One pod's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Pod name.
    pub pod: String,
    /// Node, `None` when it fit nowhere.
    pub node: Option<String>,
    /// GPU indices (`alibabacloud.com/gpu-index`), empty without GPUs.
    pub gpus: String,
}

/// The result of one replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayRun {
    /// Policy.
    pub policy: Policy,
    /// Seed.
    pub seed: u64,
    /// GPU capacity, milli-GPU.
    pub capacity_milli: i64,
    /// Samples: one before the first pod, then one per pod.
    pub samples: Vec<Sample>,
    /// Pods attempted.
    pub pods_tried: usize,
    /// Pods placed.
    pub pods_placed: usize,
    /// Placements (when recorded).
    pub placements: Vec<Placement>,
}

/// A trace ready for replays: GPU nodes, the workload sorted by name, its typical pods.
#[derive(Clone, Debug)]
pub struct Prepared {
    nodes: Vec<Arc<Node>>,
    workload: Vec<(TracePod, Arc<Pod>)>,
    typical: Vec<TypicalPod>,
    capacity_milli: i64,
}

impl Prepared {
    /// Prepares `trace` (only nodes with GPUs are kept).
    ///
    /// # Errors
    /// [`TraceError::NoGpuNodes`].
    pub fn new(trace: &Trace, opts: &PaperOptions) -> Result<Prepared, TraceError> {
        let gpu_nodes = trace.gpu_nodes();
        if gpu_nodes.is_empty() {
            return Err(TraceError::NoGpuNodes);
        }
        let capacity_milli = gpu_nodes.iter().map(|n| n.gpus * 1000).sum();
        let nodes = gpu_nodes.iter().map(|n| Arc::new(n.to_node())).collect();
        let mut workload: Vec<(TracePod, Arc<Pod>)> = trace
            .pods
            .iter()
            .map(|p| (p.clone(), Arc::new(p.to_pod())))
            .collect();
        workload.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let shapes: Vec<PodShape> = workload.iter().map(|(_, p)| PodShape::of(p)).collect();
        let typical = typical_pods(&shapes, opts.popularity_threshold, DEFAULT_INCREASE_STEP);
        Ok(Prepared {
            nodes,
            workload,
            typical,
            capacity_milli,
        })
    }

    /// The target workload.
    pub fn typical(&self) -> &[TypicalPod] {
        &self.typical
    }

    /// GPU capacity, milli-GPU.
    pub fn capacity_milli(&self) -> i64 {
        self.capacity_milli
    }

    /// Number of GPU nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The arrival sequence of a seed: shuffled workload, then inflation copies (at most
    /// `MAX_ARRIVALS` pods in all).
    pub fn arrivals(&self, rng: &mut SplitMix64, inflation: f64) -> Vec<Arc<Pod>> {
        let n = self.workload.len();
        let mut order: Vec<usize> = (0..n).collect();
        rng.shuffle(&mut order);
        let mut out: Vec<Arc<Pod>> = order
            .iter()
            .map(|i| Arc::clone(&self.workload[*i].1))
            .collect();
        let mut total: i64 = self.workload.iter().map(|(p, _)| p.gpu.total_milli()).sum();
        let target = inflation * self.capacity_milli as f64;
        // No inflation without a positive finite factor, or when no pod asks for a GPU (sampling
        // would never reach a GPU target).
        if n == 0 || !inflation.is_finite() || inflation <= 0.0 || total == 0 {
            return out;
        }
        if (total as f64) < target {
            let mut i = 0usize;
            while out.len() < MAX_ARRIVALS {
                let (tp, _) = &self.workload[rng.below(n)];
                let per_gpu = if tp.gpu.count > 0 { tp.gpu.milli } else { 0 };
                if (total + per_gpu) as f64 > target {
                    break;
                }
                total += tp.gpu.total_milli();
                out.push(Arc::new(tp.to_pod_named(&format!("{}-tuned-{i}", tp.name))));
                i += 1;
            }
        } else {
            let totals: BTreeMap<String, i64> = self
                .workload
                .iter()
                .map(|(p, _)| (p.name.clone(), p.gpu.total_milli()))
                .collect();
            while total as f64 > target && !out.is_empty() {
                let p = out.remove(rng.below(out.len()));
                total -= totals.get(&p.metadata.name).copied().unwrap_or(0);
            }
        }
        out
    }
}

/// The most arrivals one replay builds (a guard against an inflation target the workload cannot
/// reach in reasonable time; the paper's default trace needs about 11,000).
pub const MAX_ARRIVALS: usize = 10_000_000;

/// The [`Handle`] of a replay: the snapshot, and an empty apiserver the plugins never need.
struct ReplayHandle<'a> {
    fwk: &'a Framework,
    nodes: &'a [NodeInfo],
    index: &'a BTreeMap<String, usize>,
    api: &'a mut ApiServer,
}

impl Handle for ReplayHandle<'_> {
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
    fn pods(&self) -> &[Arc<Pod>] {
        &[]
    }
    fn client(&self) -> &dyn ApiClient {
        &*self.api
    }
    fn client_mut(&mut self) -> &mut dyn ApiClient {
        &mut *self.api
    }
    fn record_event(&mut self, _: &Object, _: &str, _: &str, _: &str) {}
    fn waiting_pods(&self) -> Vec<WaitingPodInfo> {
        Vec::new()
    }
    fn allow_waiting_pod(&mut self, _: &str, _: &str) {}
    fn reject_waiting_pod(&mut self, _: &str, _: &str, _: &str) {}
    fn nominated_pods_for_node(&self, _: &str) -> Vec<Arc<Pod>> {
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

fn frag_of(node: &NodeInfo, typical: &[TypicalPod]) -> f64 {
    let v = NodeView::of(node);
    node_frag(v.cpu_left, v.gpu_left, v.model, typical)
}

/// Replays `prep` with `policy` and `seed` (see the module docs).
///
/// # Errors
/// [`TraceError::Config`] when the policy's scheduler configuration is rejected.
pub fn replay_paper(
    prep: &Prepared,
    policy: Policy,
    seed: u64,
    opts: &PaperOptions,
) -> Result<ReplayRun, TraceError> {
    let mut master = SplitMix64::new(seed);
    let plugin_seed = master.next_u64();
    let mut rng = SplitMix64::new(master.next_u64());
    let mut cfg = policy.scheduler_config(plugin_seed, &prep.typical)?;
    if let Some(profile) = cfg.profiles.first_mut() {
        super::policy::ignore_gpu_resources(&mut profile.plugin_config);
    }
    let scheduler = Scheduler::new(cfg).map_err(|e| TraceError::Config {
        policy: policy.name().into(),
        message: e.to_string(),
    })?;
    let Some(fwk) = scheduler.profiles().first() else {
        return Err(TraceError::Config {
            policy: policy.name().into(),
            message: "no profile".into(),
        });
    };
    let mut api = ApiServer::new(Box::new(MemStore::default()));
    let mut nodes: Vec<NodeInfo> = prep
        .nodes
        .iter()
        .map(|n| NodeInfo::new(Arc::clone(n)))
        .collect();
    let index: BTreeMap<String, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name().to_string(), i))
        .collect();
    let mut frag: Vec<f64> = nodes.iter().map(|n| frag_of(n, &prep.typical)).collect();
    let mut frag_total: f64 = frag.iter().sum();

    let mut arrivals = prep.arrivals(&mut rng, opts.inflation);
    if let Some(m) = opts.max_arrivals {
        arrivals.truncate(m);
    }
    // The simulator's node renaming: node i (in name order) gets rank perm[i].
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|a, b| nodes[*a].name().cmp(nodes[*b].name()));
    let mut perm: Vec<usize> = (0..nodes.len()).collect();
    rng.shuffle(&mut perm);
    let mut rank = vec![0usize; nodes.len()];
    for (i, node) in order.iter().enumerate() {
        rank[*node] = perm[i];
    }
    let mut samples = Vec::with_capacity(arrivals.len() + 1);
    let (mut arrived, mut used) = (0i64, 0i64);
    samples.push(Sample {
        arrived_milli: 0,
        used_milli: 0,
        frag_milli: frag_total,
    });
    let mut placements = Vec::new();
    let mut placed = 0usize;
    let mut rooms: Vec<Room> = nodes.iter().map(Room::of).collect();
    let mut buf = Buffers::default();
    for pod in &arrivals {
        let shape = PodShape::of(pod);
        arrived += shape.total_milli_gpu();
        let snap = Snapshot {
            fwk,
            nodes: &nodes,
            index: &index,
            rank: &rank,
            rooms: &rooms,
        };
        let host = schedule(&snap, &mut api, pod, &shape, &mut buf);
        let mut gpus = String::new();
        if let Some((h, annotated)) = &host {
            gpus = annotated
                .metadata
                .annotations
                .get(GPU_INDEX_ANNOTATION)
                .cloned()
                .unwrap_or_default();
            nodes[*h].add_pod(PodInfo::new(Arc::clone(annotated)));
            rooms[*h] = Room::of(&nodes[*h]);
            used += shape.total_milli_gpu();
            let f = frag_of(&nodes[*h], &prep.typical);
            frag_total += f - frag[*h];
            frag[*h] = f;
            placed += 1;
        }
        if opts.record_placements {
            placements.push(Placement {
                pod: pod.metadata.name.clone(),
                node: host.as_ref().map(|(h, _)| nodes[*h].name().to_string()),
                gpus,
            });
        }
        samples.push(Sample {
            arrived_milli: arrived,
            used_milli: used,
            frag_milli: frag_total,
        });
    }
    Ok(ReplayRun {
        policy,
        seed,
        capacity_milli: prep.capacity_milli,
        samples,
        pods_tried: arrivals.len(),
        pods_placed: placed,
        placements,
    })
}

/// What one attempt reads: the profile, the nodes, their index by name, tie-break ranks and the
/// nodes' free resources.
#[derive(Clone, Copy)]
struct Snapshot<'a> {
    fwk: &'a Framework,
    nodes: &'a [NodeInfo],
    index: &'a BTreeMap<String, usize>,
    rank: &'a [usize],
    rooms: &'a [Room],
}

/// A node's free resources as the pre-check reads them, refreshed whenever a pod is added to the
/// node (speed: one contiguous array instead of walking every NodeInfo per pod).
#[derive(Clone, Copy, Debug, Default)]
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
        let whole_req = |count: u32| k8s_types::gpushare::GpuRequest {
            count,
            milli: k8s_types::gpushare::MILLI_PER_GPU,
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

    /// The replay's pre-check: CPU, memory and the GPU request fit (NodeResourcesFit's cpu and
    /// memory checks, GpuShare's per-GPU check), the GPU model aside.
    fn admits(&self, cpu: i64, memory: i64, shape: &PodShape, node: &NodeInfo) -> bool {
        if (cpu > 0 && cpu > self.cpu) || (memory > 0 && memory > self.memory) {
            return false;
        }
        let g = &shape.gpu;
        if !shape.wants_gpu() {
            return true;
        }
        if g.count == 1 && g.milli < k8s_types::gpushare::MILLI_PER_GPU {
            g.milli <= self.max_left
        } else if g.milli == k8s_types::gpushare::MILLI_PER_GPU {
            g.count <= self.whole
        } else {
            node.gpus().fits(g)
        }
    }
}

/// Buffers reused across attempts.
#[derive(Default)]
struct Buffers {
    feasible: Vec<usize>,
    cand_idx: Vec<usize>,
    failed: Vec<(usize, Status)>,
}

/// One scheduling attempt: the chosen node's index and the pod as it would be bound (with the
/// annotations Reserve asked for), or `None`.
fn schedule(
    snap: &Snapshot<'_>,
    api: &mut ApiServer,
    pod: &Arc<Pod>,
    shape: &PodShape,
    buf: &mut Buffers,
) -> Option<(usize, Arc<Pod>)> {
    let Snapshot {
        fwk,
        nodes,
        index,
        rank,
        rooms,
    } = *snap;
    let pod_reqs = k8s_types::resources::pod_requests(pod);
    let mut state = CycleState::new();
    let (pre, status, _) = {
        let h = ReplayHandle {
            fwk,
            nodes,
            index,
            api: &mut *api,
        };
        fwk.run_pre_filter(&mut state, pod, &h)
    };
    if !status.is_success() {
        return None;
    }
    let skips = fwk.filter_skips(&state);
    let Buffers {
        feasible,
        cand_idx,
        failed,
    } = buf;
    feasible.clear();
    cand_idx.clear();
    failed.clear();
    // Speed: nodes whose GPUs cannot host the pod are left out before the framework runs. They
    // are nodes GpuShare's Filter (the profile's first filter) rejects, so the feasible set is
    // unchanged; building ~1000 rejection statuses per pod dominated the run time.
    // Likewise for CPU and memory, NodeResourcesFit's checks on the pod's requests.
    let (cpu, mem) = (pod_reqs.milli_cpu, pod_reqs.memory);
    let any_model = shape.models.is_empty();
    cand_idx.extend((0..nodes.len()).filter(|i| {
        let n = &nodes[*i];
        rooms[*i].admits(cpu, mem, shape, n)
            && (any_model || !shape.wants_gpu() || shape.accepts_model(n.gpus().model()))
            && pre
                .node_names
                .as_ref()
                .is_none_or(|set| set.contains(n.name()))
    }));
    let candidates: Vec<&NodeInfo> = cand_idx.iter().map(|i| &nodes[*i]).collect();
    let mut scratch = FilterScratch::default();
    fwk.filter_chunk(&state, pod, &candidates, &skips, &mut scratch, failed);
    let mut next_failed = failed.iter().map(|(i, _)| *i).peekable();
    for (i, idx) in cand_idx.iter().enumerate() {
        if next_failed.peek() == Some(&i) {
            next_failed.next();
            continue;
        }
        feasible.push(*idx);
    }
    if failed.iter().any(|(_, s)| !s.is_rejected()) {
        return None;
    }
    let feasible: &[usize] = feasible;
    let host = match feasible.len() {
        0 => return None,
        1 => feasible[0],
        _ => {
            let refs: Vec<&NodeInfo> = feasible.iter().map(|i| &nodes[*i]).collect();
            let s = {
                let h = ReplayHandle {
                    fwk,
                    nodes,
                    index,
                    api: &mut *api,
                };
                fwk.run_pre_score(&mut state, pod, &refs, &h)
            };
            if !s.is_success() {
                return None;
            }
            let mut scratch = ScoreScratch::default();
            fwk.score_batch(&state, pod, &refs, &mut scratch).ok()?;
            select_host(feasible, &scratch.totals, rank)?
        }
    };
    let mut h = ReplayHandle {
        fwk,
        nodes,
        index,
        api: &mut *api,
    };
    let name = nodes[host].name().to_string();
    if !fwk.run_reserve(&mut state, pod, &name, &mut h).is_success() {
        fwk.run_unreserve(&mut state, pod, &name, &mut h);
        return None;
    }
    let bound = binding_annotations::annotated(&state, pod).unwrap_or_else(|| Arc::clone(pod));
    Some((host, bound))
}

/// The simulator's `selectHost`: the highest total; among equal totals the candidate with the
/// smallest `rank` (its renamed node name sorts first).
pub fn select_host(candidates: &[usize], totals: &[i64], rank: &[usize]) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_host_picks_the_maximum_then_the_smallest_rank() {
        let rank = [2, 0, 1];
        assert_eq!(select_host(&[0, 1, 2], &[5, 9, 7], &rank), Some(1));
        assert_eq!(select_host(&[0, 1, 2], &[9, 5, 9], &rank), Some(2));
        assert_eq!(select_host(&[0, 2], &[9, 9], &rank), Some(2));
        assert_eq!(select_host(&[], &[], &rank), None);
    }
}
