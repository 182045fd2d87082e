//! The FGD paper's replay protocol (Weng et al., USENIX ATC '23, §6.1; reconstructed from the paper
//! and its public simulator, hkust-adsl/kubernetes-scheduler-simulator `pkg/simulator/core.go`
//! `Simulate`, `simulator.go` `SortClusterPods`, `TunePodsByNodeTotalResource`/`tuneUpPods`,
//! `SchedulePods`, `analysis.go` `ClusterGpuFragReport`), run on k8s-sched's
//! [`Simulator`] (the scheduler's framework against an in-memory snapshot; this file keeps the
//! protocol and the metrics, the scheduler does every scheduling step):
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
//! the shuffle and the inflation). So ties go to the node with the smallest permutation rank (this
//! file draws the ranks, [`Simulator::new`] applies them). All randomness derives from the seed;
//! the generator differs from Go's `math/rand`, so runs match the paper in distribution, not pod
//! by pod.

use k8s_types::object::Shared;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_sched::config::TypicalPod;
use k8s_sched::simulator::{typical_pods, Simulator};
use k8s_types::core::{Node, Pod};
use k8s_types::gpushare::{GpuRequest, GPU_INDEX_ANNOTATION};
use k8s_types::resources::pod_requests;
use k8s_types::rng::SplitMix64;

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
    workload: Vec<(TracePod, Shared<Pod>)>,
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
        let mut workload: Vec<(TracePod, Shared<Pod>)> = trace
            .pods
            .iter()
            .map(|p| (p.clone(), Shared::from_typed(p.to_pod())))
            .collect();
        workload.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let typical = typical_pods(
            workload.iter().map(|(_, p)| &**p),
            opts.popularity_threshold,
        );
        Ok(Prepared {
            nodes,
            workload,
            typical,
            capacity_milli,
        })
    }

    /// The target workload of these pods alone (what [`Prepared::new`] computes, without
    /// preparing the nodes and the arrival sequence): the pods in name order, as imported.
    pub fn typical_of<'a>(
        pods: impl IntoIterator<Item = &'a TracePod>,
        popularity_threshold: u32,
    ) -> Vec<TypicalPod> {
        let mut sorted: Vec<&TracePod> = pods.into_iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let pods: Vec<Pod> = sorted.iter().map(|p| p.to_pod()).collect();
        typical_pods(&pods, popularity_threshold)
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
    pub fn arrivals(&self, rng: &mut SplitMix64, inflation: f64) -> Vec<Shared<Pod>> {
        let n = self.workload.len();
        let mut order: Vec<usize> = (0..n).collect();
        rng.shuffle(&mut order);
        let mut out: Vec<Shared<Pod>> = order
            .iter()
            .map(|i| Shared::clone(&self.workload[*i].1))
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
                out.push(Shared::from_typed(
                    tp.to_pod_named(&format!("{}-tuned-{i}", tp.name)),
                ));
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
    // The simulator's node renaming: node i (in name order) gets rank perm[i], drawn after the
    // shuffle and the inflation.
    let mut arrivals = prep.arrivals(&mut rng, opts.inflation);
    if let Some(m) = opts.max_arrivals {
        arrivals.truncate(m);
    }
    let n = prep.nodes.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| {
        prep.nodes[*a]
            .metadata
            .name
            .cmp(&prep.nodes[*b].metadata.name)
    });
    let mut perm: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut perm);
    let mut rank = vec![0usize; n];
    for (i, node) in order.iter().enumerate() {
        rank[*node] = perm[i];
    }
    let mut sim = Simulator::new(cfg, &prep.nodes, Some(rank)).map_err(|e| TraceError::Config {
        policy: policy.name().into(),
        message: e.to_string(),
    })?;
    let mut frag: Vec<f64> = (0..n)
        .map(|i| sim.node_gpu_frag(i, &prep.typical))
        .collect();
    let mut frag_total: f64 = frag.iter().sum();
    let mut samples = Vec::with_capacity(arrivals.len() + 1);
    let (mut arrived, mut used) = (0i64, 0i64);
    samples.push(Sample {
        arrived_milli: 0,
        used_milli: 0,
        frag_milli: frag_total,
    });
    let mut placements = Vec::new();
    let mut placed = 0usize;
    for pod in &arrivals {
        let gpu_milli = gpu_milli(pod);
        arrived += gpu_milli;
        let host = sim.schedule_pod(pod);
        let mut gpus = String::new();
        if let Some(h) = &host {
            gpus = h
                .pod
                .metadata
                .annotations
                .get(GPU_INDEX_ANNOTATION)
                .cloned()
                .unwrap_or_default();
            used += gpu_milli;
            let f = sim.node_gpu_frag(h.node, &prep.typical);
            frag_total += f - frag[h.node];
            frag[h.node] = f;
            placed += 1;
        }
        if opts.record_placements {
            placements.push(Placement {
                pod: pod.metadata.name.clone(),
                node: host
                    .as_ref()
                    .and_then(|h| sim.node_name(h.node))
                    .map(str::to_string),
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

/// A pod's GPU request in milli-GPU (`count * milli`, the GPU-share convention of
/// [`k8s_types::gpushare`]; 0 without GPUs).
fn gpu_milli(pod: &Pod) -> i64 {
    GpuRequest::from_requests(&pod_requests(pod))
        .unwrap_or_default()
        .total_milli()
}
