//! `k8s-mini compare`: the same input run under two or more scheduler configurations, side by side
//! (docs/compare.md).
//!
//! Every configuration is an independent run of the same documents, exactly as `k8s-mini scenario
//! --scheduler-config FILE` runs them (a [`Column`] without a file keeps the input's own
//! `KubeSchedulerConfiguration`, or the defaults; one with a trace-replay [`Policy`] runs under
//! that policy's configuration). What each run is measured by, at its end:
//!
//! - **bound / pending**: pods with `spec.nodeName` (finished ones too: they were placed) / pods
//!   waiting to be scheduled ([`crate::capacity::is_pending`]).
//! - **time to bind**: per pod bound in this run, the tick its `PodScheduled` condition turned True
//!   minus the tick it was created; pods bound before the run started (restored bound from a dump
//!   or a snapshot) and pods deleted by the end (preemption victims) are not counted. Median and
//!   p99 by the **nearest-rank** definition: the value at rank `ceil(p/100 × n)` of the sorted list
//!   ([`nearest_rank`]).
//! - **preemptions**: `Preempted` events on pods (kube-scheduler's DefaultPreemption writes one per
//!   victim, `pkg/scheduler/framework/preemption/preemption.go`), their `count`s summed.
//! - **GPU fragmentation**: the capacity view's total (the FGD paper's measure,
//!   [`crate::capacity`]).
//! - **utilisation spread**: the population standard deviation, over the nodes, of each node's
//!   allocation ratio: CPU requested / allocatable over the nodes with allocatable CPU, GPU
//!   allocated / total over the nodes with GPUs ([`spread`]). 0 is perfectly even.
//! - **allocation over time**: GPU allocated and CPU requested summed over the nodes at the end of
//!   every tick that ran (sample tick `t`: the state tick `t` left), and once before the first
//!   tick; a sample is kept only when a value changed (the ticks skipped as idle change nothing).
//! - **pods placed differently**: pods matched by namespace and name (a pod named from a
//!   `generateName`: by it and its order of creation, [`PodPlacement::key`]), listed when their
//!   node is not the same in every run (`<pending>`: in the store, unbound; `<gone>`: not in the
//!   store).

mod render;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Event, Pod};
use k8s_types::meta::timestamp_tick;
use k8s_types::Tick;
use serde::Serialize;

use crate::capacity::{capacity_view, is_pending, node_pools};
use crate::cluster::Cluster;
use crate::load::prepare;
use crate::manifest::{Document, Loaded, Source};
use crate::manifest::{ManifestError, Manifests};
use crate::run::{drive, OutputFormat, Plan, RunOptions};
use crate::trace::Policy;

pub use render::{differences as difference_rows, metrics, render};

/// One configuration to run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Column {
    /// Its name in the output.
    pub name: String,
    /// A `KubeSchedulerConfiguration` file; `None`: the input's own configuration.
    pub scheduler_config: Option<PathBuf>,
    /// A trace-replay placement policy instead (`k8s-mini replay --policy`): its scheduler
    /// configuration ([`Policy::scheduler_config`], seed 0, FGD's target workload derived from the
    /// cluster's pods), the profile named `default-scheduler`; it replaces the input's own.
    pub policy: Option<Policy>,
}

/// What to compare.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The input's documents (cluster and workload together).
    pub manifests: Manifests,
    /// The path naming the run.
    pub path: PathBuf,
    /// The configurations, in output order.
    pub columns: Vec<Column>,
    /// Run exactly this many ticks (else the Scenario's `spec.ticks`, else until nothing changes).
    pub ticks: Option<u64>,
}

/// Allocation summed over the nodes after a tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// The tick that ran (the first sample: the state before the first tick, at the start tick).
    pub tick: Tick,
    /// Milli-GPU allocated.
    pub gpu_milli_allocated: i64,
    /// Milli-GPU of all nodes.
    pub gpu_milli_total: i64,
    /// Milli-CPU requested by the pods bound to nodes.
    pub cpu_milli_requested: i64,
    /// Milli-CPU allocatable on all nodes.
    pub cpu_milli_allocatable: i64,
}

/// A pod at the end of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodPlacement {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// What it is matched by across runs: `namespace/name`, or for a pod named from its
    /// `generateName`, `namespace/generateName#k` (k-th such pod by creation tick, then name, from 0).
    pub key: String,
    /// `spec.nodeName`.
    pub node: Option<String>,
    /// The tick of `metadata.creationTimestamp`.
    pub created_at: Option<Tick>,
    /// The tick `PodScheduled` turned True, when that was in this run.
    pub bound_at: Option<Tick>,
}

/// One node's allocation at the end of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeUse {
    /// Node name.
    pub name: String,
    /// Milli-CPU requested by the pods bound there.
    pub cpu_milli_requested: i64,
    /// Its allocatable milli-CPU.
    pub cpu_milli_allocatable: i64,
    /// Milli-GPU allocated.
    pub gpu_milli_allocated: i64,
    /// Its milli-GPU.
    pub gpu_milli_total: i64,
}

/// Median and p99 of a list of tick counts (nearest rank).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindTimes {
    /// Pods counted.
    pub pods: usize,
    /// The nearest-rank 50th percentile, in ticks.
    pub median: Option<u64>,
    /// The nearest-rank 99th percentile, in ticks.
    pub p99: Option<u64>,
}

/// One configuration's run, measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigRun {
    /// The column's name.
    pub name: String,
    /// The configuration file (`--policy NAME` for a policy), or `None` for the input's own.
    pub scheduler_config: Option<String>,
    /// The tick the run ended.
    pub ended_at: Tick,
    /// Pods with a node.
    pub pods_bound: usize,
    /// Pods waiting to be scheduled.
    pub pods_pending: usize,
    /// Time to bind.
    pub time_to_bind: BindTimes,
    /// Victims of preemption.
    pub preemptions: usize,
    /// Milli-GPU allocated at the end.
    pub gpu_milli_allocated: i64,
    /// Milli-GPU of all nodes.
    pub gpu_milli_total: i64,
    /// FGD fragmentation at the end, milli-GPU (rounded to 2 decimals).
    pub gpu_milli_fragmented: f64,
    /// Population std-dev of the nodes' CPU requested / allocatable.
    pub cpu_spread: f64,
    /// Population std-dev of the GPU nodes' GPU allocated / total.
    pub gpu_spread: f64,
    /// Every node at the end, by name.
    pub nodes: Vec<NodeUse>,
    /// Every pod at the end, by namespace and name.
    pub pods: Vec<PodPlacement>,
    /// Allocation over time.
    pub samples: Vec<Sample>,
    /// Steps of the input that failed in this run.
    pub failed_steps: Vec<String>,
}

/// A pod whose node is not the same in every run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    /// `namespace/name` in the first run that has the pod.
    pub pod: String,
    /// Per column, in column order: the node, `<pending>` or `<gone>`.
    pub nodes: Vec<String>,
}

/// The comparison.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The input.
    pub input: String,
    /// One run per configuration, in the order given.
    pub runs: Vec<ConfigRun>,
    /// Pods placed differently, by namespace and name.
    pub placed_differently: Vec<Difference>,
    /// Warnings from loading the input (also on standard error).
    pub warnings: Vec<String>,
}

/// The nearest-rank `p`-th percentile of `sorted` (ascending): the value at rank
/// `ceil(p/100 × n)`, rank 1 for `p = 0`; `None` for an empty list.
pub fn nearest_rank(sorted: &[u64], p: u32) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len() as u64;
    let rank = (u64::from(p) * n).div_ceil(100).clamp(1, n);
    usize::try_from(rank - 1)
        .ok()
        .and_then(|i| sorted.get(i).copied())
}

/// The population standard deviation of `xs` (0 for an empty list).
pub fn spread(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt()
}

fn sample(cluster: &Cluster, tick: Tick) -> Sample {
    let mut s = Sample {
        tick,
        ..Sample::default()
    };
    for (_, n) in node_pools(cluster.api_ref(), &[], false) {
        s.gpu_milli_allocated += n.gpu_milli_allocated;
        s.gpu_milli_total += n.gpu_milli_total;
        s.cpu_milli_requested += n.cpu.requested;
        s.cpu_milli_allocatable += n.cpu.allocatable;
    }
    s
}

fn push_sample(samples: &mut Vec<Sample>, s: Sample) {
    let same = samples.last().is_some_and(|l| {
        (
            l.gpu_milli_allocated,
            l.gpu_milli_total,
            l.cpu_milli_requested,
            l.cpu_milli_allocatable,
        ) == (
            s.gpu_milli_allocated,
            s.gpu_milli_total,
            s.cpu_milli_requested,
            s.cpu_milli_allocatable,
        )
    });
    if !same {
        samples.push(s);
    }
}

fn placement(p: &Pod, start: Tick, end: Tick) -> PodPlacement {
    let created_at = p
        .metadata
        .creation_timestamp
        .as_deref()
        .and_then(timestamp_tick);
    let bound_at = p
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "PodScheduled" && c.status == "True")
        .and_then(|c| c.last_transition_time.as_deref())
        .and_then(timestamp_tick)
        .filter(|b| (start..=end).contains(b) && p.node_name().is_some());
    PodPlacement {
        namespace: p.metadata.namespace().to_string(),
        name: p.metadata.name.clone(),
        key: format!("{}/{}", p.metadata.namespace(), p.metadata.name),
        node: p.node_name().map(str::to_string),
        created_at,
        bound_at,
    }
}

/// The input with `policy`'s scheduler configuration in place of its own (see [`Column::policy`]).
fn with_policy(m: &Manifests, policy: Policy) -> Result<Manifests, ManifestError> {
    let source = Source {
        file: format!("--policy {}", policy.name()),
        line: 0,
    };
    let mut cfg = policy.scheduler_config(0, &[]).map_err(|e| ManifestError {
        source_loc: source.clone(),
        path: String::new(),
        message: e.to_string(),
    })?;
    for p in &mut cfg.profiles {
        p.scheduler_name = Some("default-scheduler".to_string());
    }
    let mut out = m.clone();
    out.docs
        .retain(|d| !matches!(d.doc, Document::SchedulerConfig(_)));
    out.docs.push(Loaded {
        doc: Document::SchedulerConfig(Box::new(cfg)),
        source,
        positions: None,
    });
    Ok(out)
}

/// Generated names come from the store's revision (k8s-api `names.rs`), which differs between runs
/// once their writes differ: pods named from a `generateName` are matched by it and their order of
/// creation instead (see [`PodPlacement::key`]).
fn match_keys(all: &[Pod], pods: &mut [PodPlacement]) {
    let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, p) in all.iter().enumerate() {
        if let Some(g) = p.metadata.generate_name.as_deref() {
            if !g.is_empty() && p.metadata.name.starts_with(g) && p.metadata.name.len() > g.len() {
                groups
                    .entry((p.metadata.namespace().to_string(), g.to_string()))
                    .or_default()
                    .push(i);
            }
        }
    }
    for ((ns, g), mut idx) in groups {
        idx.sort_by(|a, b| {
            (pods[*a].created_at, &pods[*a].name).cmp(&(pods[*b].created_at, &pods[*b].name))
        });
        for (k, i) in idx.into_iter().enumerate() {
            pods[i].key = format!("{ns}/{g}#{k}");
        }
    }
}

/// Time to bind of the pods bound in the run (see the module docs).
pub fn bind_times(pods: &[PodPlacement]) -> BindTimes {
    let mut ticks: Vec<u64> = pods
        .iter()
        .filter_map(|p| match (p.created_at, p.bound_at) {
            (Some(c), Some(b)) if b >= c => Some(b - c),
            _ => None,
        })
        .collect();
    ticks.sort_unstable();
    BindTimes {
        pods: ticks.len(),
        median: nearest_rank(&ticks, 50),
        p99: nearest_rank(&ticks, 99),
    }
}

fn preemptions(api: &dyn ApiClient) -> usize {
    api.list_typed::<Event>(None, None)
        .iter()
        .filter(|e| e.involved_object.kind == "Pod" && e.reason == "Preempted")
        .map(|e| usize::try_from(e.count.max(1)).unwrap_or(1))
        .sum()
}

fn ratio(a: i64, b: i64) -> f64 {
    a as f64 / b as f64
}

fn run_one(req: &Request, col: &Column) -> Result<(ConfigRun, Vec<String>), ManifestError> {
    let opts = RunOptions {
        ticks: req.ticks,
        scheduler_config: col.scheduler_config.clone(),
        output: OutputFormat::Json,
        explain: None,
        every_tick: false,
        snapshot_out: None,
        snapshot_out_at_tick: None,
        snapshot_in: None,
        exit_after: false,
    };
    let manifests = match col.policy {
        Some(policy) => with_policy(&req.manifests, policy)?,
        None => req.manifests.clone(),
    };
    let p = prepare(manifests, &req.path, &opts)?;
    let start = p.cluster.now();
    let mut samples = Vec::new();
    push_sample(&mut samples, sample(&p.cluster, start));
    let mut observe = |c: &Cluster| push_sample(&mut samples, sample(c, c.now().saturating_sub(1)));
    let driven = drive(
        p.cluster,
        Plan {
            scenario: &p.scenario,
            steps: &p.steps,
            other_kinds: &p.other_kinds,
            resumed: p.resumed,
            observe: Some(&mut observe),
        },
        &opts,
        None,
    );
    let cluster = driven.cluster;
    let api = cluster.api_ref();
    let end = cluster.now();
    let all: Vec<Pod> = api.list_typed(None, None);
    let mut pods: Vec<PodPlacement> = all.iter().map(|p| placement(p, start, end)).collect();
    match_keys(&all, &mut pods);
    let nodes: Vec<NodeUse> = node_pools(api, &[], false)
        .into_iter()
        .map(|(name, n)| NodeUse {
            name,
            cpu_milli_requested: n.cpu.requested,
            cpu_milli_allocatable: n.cpu.allocatable,
            gpu_milli_allocated: n.gpu_milli_allocated,
            gpu_milli_total: n.gpu_milli_total,
        })
        .collect();
    let cpu: Vec<f64> = nodes
        .iter()
        .filter(|n| n.cpu_milli_allocatable > 0)
        .map(|n| ratio(n.cpu_milli_requested, n.cpu_milli_allocatable))
        .collect();
    let gpu: Vec<f64> = nodes
        .iter()
        .filter(|n| n.gpu_milli_total > 0)
        .map(|n| ratio(n.gpu_milli_allocated, n.gpu_milli_total))
        .collect();
    let view = capacity_view(api, &[]);
    let run = ConfigRun {
        name: col.name.clone(),
        scheduler_config: match col.policy {
            Some(p) => Some(format!("--policy {}", p.name())),
            None => col
                .scheduler_config
                .as_ref()
                .map(|f| f.display().to_string()),
        },
        ended_at: end,
        pods_bound: all
            .iter()
            .filter(|p| p.node_name().is_some() && p.metadata.deletion_timestamp.is_none())
            .count(),
        pods_pending: all.iter().filter(|p| is_pending(p)).count(),
        time_to_bind: bind_times(&pods),
        preemptions: preemptions(api),
        gpu_milli_allocated: view.total.gpu_milli_allocated,
        gpu_milli_total: view.total.gpu_milli_total,
        gpu_milli_fragmented: view.total.gpu_milli_fragmented,
        cpu_spread: spread(&cpu),
        gpu_spread: spread(&gpu),
        nodes,
        pods,
        samples,
        failed_steps: driven
            .step_rows
            .iter()
            .filter(|r| r.contains("FAILED"))
            .cloned()
            .collect(),
    };
    Ok((run, p.warnings))
}

/// The pods whose node differs between the runs, matched by [`PodPlacement::key`], in key order;
/// each named by its name in the first run that has it.
fn differences(runs: &[ConfigRun]) -> Vec<Difference> {
    let by_run: Vec<BTreeMap<&str, &PodPlacement>> = runs
        .iter()
        .map(|r| r.pods.iter().map(|p| (p.key.as_str(), p)).collect())
        .collect();
    let keys: BTreeSet<&str> = by_run.iter().flat_map(|m| m.keys().copied()).collect();
    let mut out = Vec::new();
    for k in keys {
        let nodes: Vec<String> = by_run
            .iter()
            .map(|m| match m.get(k) {
                None => "<gone>".to_string(),
                Some(p) => p.node.clone().unwrap_or_else(|| "<pending>".to_string()),
            })
            .collect();
        if nodes.iter().any(|n| *n != nodes[0]) {
            let pod = by_run
                .iter()
                .find_map(|m| m.get(k))
                .map_or_else(|| k.to_string(), |p| format!("{}/{}", p.namespace, p.name));
            out.push(Difference { pod, nodes });
        }
    }
    out
}

/// Runs `req`'s input once per configuration and compares the runs.
///
/// # Errors
/// Bad input: the input does not load, or a configuration file does not (its file, line and
/// field); fewer than two configurations.
pub fn compare(req: &Request) -> Result<Comparison, ManifestError> {
    if req.columns.len() < 2 {
        return Err(ManifestError {
            source_loc: crate::manifest::Source {
                file: "--config".into(),
                line: 0,
            },
            path: String::new(),
            message: format!(
                "give at least two configurations to compare ({} given)",
                req.columns.len()
            ),
        });
    }
    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    for (i, col) in req.columns.iter().enumerate() {
        let (run, w) = run_one(req, col)?;
        if i == 0 {
            warnings = w;
        }
        runs.push(run);
    }
    Ok(Comparison {
        input: req.path.display().to_string(),
        placed_differently: differences(&runs),
        runs,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest rank: n = 10, p50 is rank ceil(5.0) = 5, p99 rank ceil(9.9) = 10; n = 3, p50 is
    /// rank ceil(1.5) = 2; n = 1, every percentile is the one value.
    #[test]
    fn nearest_rank_picks_the_ceiling_rank() {
        let ten: Vec<u64> = (1..=10).map(|x| x * 10).collect();
        assert_eq!(nearest_rank(&ten, 50), Some(50));
        assert_eq!(nearest_rank(&ten, 99), Some(100));
        assert_eq!(nearest_rank(&ten, 0), Some(10));
        assert_eq!(nearest_rank(&[4, 7, 9], 50), Some(7));
        assert_eq!(nearest_rank(&[4, 7, 9], 99), Some(9));
        assert_eq!(nearest_rank(&[3], 50), Some(3));
        assert_eq!(nearest_rank(&[], 50), None);
    }

    /// Ratios 0, 1, 0.5, 0.5: mean 0.5, squared deviations 0.25, 0.25, 0, 0: variance 0.125,
    /// std-dev sqrt(0.125) = 0.35355...
    #[test]
    fn spread_is_the_population_std_dev() {
        assert!((spread(&[0.0, 1.0, 0.5, 0.5]) - 0.125f64.sqrt()).abs() < 1e-12);
        assert_eq!(spread(&[0.3, 0.3]), 0.0);
        assert_eq!(spread(&[]), 0.0);
    }
}
