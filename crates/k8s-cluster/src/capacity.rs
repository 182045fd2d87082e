//! The capacity view (`k8s-mini capacity`, and the last section of a scenario run on a cluster of
//! more than [`BIG_CLUSTER_NODES`] nodes): per node pool, the nodes, GPUs total / allocated / free /
//! fragmented, CPU and memory requested against allocatable; then the pending pods counted per
//! reason.
//!
//! - A node's pool is the value of the first of the pool labels it carries (by default
//!   [`DEFAULT_POOL_LABELS`]: the well-known `node.kubernetes.io/instance-type`, then GPU Feature
//!   Discovery's `nvidia.com/gpu.product`), printed `label=value`; a node with none of them is in
//!   pool `<none>`. Pools are listed by name, then one `total` row.
//! - GPUs are counted in milli-GPU (1000 per GPU) so that shared GPUs
//!   (`alibabacloud.com/gpu-milli`) add up; the text prints GPUs (`2.5`). Allocated = total - free,
//!   free as the scheduler sees it (a node's GPUs minus what its bound, non-terminal pods hold).
//! - Fragmented is the FGD paper's measure (Weng et al., USENIX ATC '23, §3; k8s-sched
//!   `plugins/gpu/frag.rs`, reached through `k8s_sched::simulator::node_gpu_use`): free GPU that the
//!   target workload's typical pods cannot use, frequency-weighted. The target workload is the
//!   typical pods (`GetTypicalPods`, 95 % popularity threshold) of every non-terminal pod of the
//!   cluster, bound or pending: what the FGD plugin itself uses when it is given none.
//! - CPU and memory: the requests of the pods bound to the pool's nodes (`kubectl describe node`'s
//!   "Allocated resources") against the nodes' `status.allocatable`.
//! - Pending pods (not bound, not terminal, not being deleted) are counted per reason: for an
//!   `Unschedulable` pod each node-level reason of its `PodScheduled` message (`0/8 nodes are
//!   available: 3 Insufficient cpu, 5 node(s) had untolerated taint {gpu: true}. preemption: ...`
//!   gives `Insufficient cpu` and `node(s) had untolerated taint {gpu: true}`; a pod counts once
//!   under each reason it names), else its condition reason (`SchedulingGated`), else
//!   `no scheduling attempt yet`. Reasons are listed by count, then by name.
//! - The same per pool ([`pending_per_pool`]): a pending pod belongs to every pool with a node its
//!   nodeSelector and required node affinity admit.

use k8s_types::object::Shared;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::Arc;

use k8s_sched::config::TypicalPod;
use k8s_sched::simulator::{node_gpu_use, required_node_affinity_admits, typical_pods};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Node, Pod};
use k8s_types::resources::Resources;
use serde::Serialize;

use crate::output::table;
use crate::state::{allocated_by_node, format_amount, holds_resources};

/// Clusters with more nodes than this end a scenario run's text output with the capacity view
/// instead of a row per node and resource.
pub const BIG_CLUSTER_NODES: usize = 50;

/// The labels that name a node's pool, in order of preference.
pub const DEFAULT_POOL_LABELS: [&str; 2] =
    ["node.kubernetes.io/instance-type", "nvidia.com/gpu.product"];

/// The FGD target workload's popularity threshold, in percent (the paper's scripts' value).
const POPULARITY_THRESHOLD: u32 = 95;

/// Requested against allocatable, one resource.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Amounts {
    /// Sum of the nodes' `status.allocatable` (milli-CPU for cpu, bytes for memory).
    pub allocatable: i64,
    /// Sum of the requests of the pods bound there.
    pub requested: i64,
}

/// One pool's (or the whole cluster's) numbers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pool {
    /// `label=value`, `<none>`, or `total`.
    pub name: String,
    /// Nodes in the pool.
    pub nodes: usize,
    /// Nodes whose Ready condition is True.
    pub ready_nodes: usize,
    /// GPUs, in milli-GPU (1000 per GPU).
    pub gpu_milli_total: i64,
    /// `gpu_milli_total - gpu_milli_free`.
    pub gpu_milli_allocated: i64,
    /// Free milli-GPU.
    pub gpu_milli_free: i64,
    /// FGD fragmentation, milli-GPU (rounded to 2 decimals).
    pub gpu_milli_fragmented: f64,
    /// CPU, milli-CPU.
    pub cpu: Amounts,
    /// Memory, bytes.
    pub memory: Amounts,
}

impl Pool {
    fn add(&mut self, o: &Pool) {
        self.nodes += o.nodes;
        self.ready_nodes += o.ready_nodes;
        self.gpu_milli_total += o.gpu_milli_total;
        self.gpu_milli_allocated += o.gpu_milli_allocated;
        self.gpu_milli_free += o.gpu_milli_free;
        self.gpu_milli_fragmented += o.gpu_milli_fragmented;
        self.cpu.allocatable += o.cpu.allocatable;
        self.cpu.requested += o.cpu.requested;
        self.memory.allocatable += o.memory.allocatable;
        self.memory.requested += o.memory.requested;
    }
}

/// Pending pods sharing one reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingReason {
    /// The reason (see the module docs).
    pub reason: String,
    /// Pending pods naming it.
    pub pods: usize,
}

/// The pending pods one pool's nodes could take (see [`pending_per_pool`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolPending {
    /// The pool's name, or [`NO_POOL_ADMITS`].
    pub pool: String,
    /// Pending pods that belong to it.
    pub pods: usize,
    /// Those pods per reason, by count descending, then reason.
    pub reasons: Vec<PendingReason>,
}

/// The group of pending pods whose nodeSelector and required node affinity admit no node at all.
pub const NO_POOL_ADMITS: &str = "<no node admits>";

/// The capacity view of a cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityView {
    /// The labels pools are named by, in order of preference.
    pub pool_labels: Vec<String>,
    /// Pools by name.
    pub pools: Vec<Pool>,
    /// All pools together.
    pub total: Pool,
    /// Pending pods.
    pub pending_pods: usize,
    /// Pending pods per reason, by count descending, then reason.
    pub pending: Vec<PendingReason>,
    /// Pending pods per pool (pools by name, then [`NO_POOL_ADMITS`]), pools with none left out.
    pub pending_per_pool: Vec<PoolPending>,
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The pool of `node`: `label=value` of the first of `labels` it carries, else `<none>`.
pub fn pool_of(node: &Node, labels: &[String]) -> String {
    labels
        .iter()
        .find_map(|l| node.metadata.labels.get(l).map(|v| format!("{l}={v}")))
        .unwrap_or_else(|| "<none>".to_string())
}

/// True for a pod waiting to be scheduled: not bound, not terminal, not being deleted.
pub fn is_pending(p: &Pod) -> bool {
    p.node_name().is_none() && !p.is_terminal() && p.metadata.deletion_timestamp.is_none()
}

/// The reasons a pending pod is counted under (see the module docs).
pub fn pending_reasons(p: &Pod) -> Vec<String> {
    let Some(c) = p
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "PodScheduled" && c.status == "False")
    else {
        return vec!["no scheduling attempt yet".to_string()];
    };
    let reason = c.reason.as_deref().unwrap_or_default().to_string();
    let message = c.message.as_deref().unwrap_or_default().to_string();
    if reason != "Unschedulable" {
        return vec![if reason.is_empty() {
            "no reason given".to_string()
        } else {
            reason
        }];
    }
    node_reasons(&message)
}

/// The node-level reasons of a `FailedScheduling` message (`0/N nodes are available: 3 Insufficient
/// cpu, 1 node(s) ... . preemption: ...`), counts dropped; a message of another form, or whose
/// node-level part names no counts (a PreFilter rejection), gives its text up to the first `: `
/// (e.g. a gang's `podGroup default/train cannot reach its quorum even if every lower-priority pod
/// were preempted`).
pub fn node_reasons(message: &str) -> Vec<String> {
    const AVAILABLE: &str = "nodes are available: ";
    let Some(at) = message.find(AVAILABLE) else {
        let head = message.split(": ").next().unwrap_or(message).trim();
        return vec![head.trim_end_matches('.').to_string()];
    };
    let rest = &message[at + AVAILABLE.len()..];
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        // A PreFilter rejection names no node counts (`0/4 nodes are available: podGroup
        // default/train cannot reach its quorum ...: minMember 6, ...`): its head is the reason.
        let head = rest.split(": ").next().unwrap_or(rest).trim();
        return vec![head.trim_end_matches('.').to_string()];
    }
    let rest = rest.split(" preemption: ").next().unwrap_or(rest).trim();
    let rest = rest.strip_suffix('.').unwrap_or(rest);
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    let bytes = rest.as_bytes();
    let mut push = |s: &str| {
        let s = s.trim();
        let s = match s.split_once(' ') {
            Some((n, r)) if n.chars().all(|c| c.is_ascii_digit()) => r,
            _ => s,
        };
        if !s.is_empty() {
            out.push(s.to_string());
        }
    };
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => depth -= 1,
            b',' if depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                push(&rest[start..i]);
                start = i + 2;
            }
            _ => {}
        }
    }
    push(&rest[start.min(rest.len())..]);
    out
}

/// Every node of the cluster `api` holds, in the apiserver's list order (by name), as a pool of one named by `labels` (see
/// [`pool_of`]). `fragmentation`: compute the FGD fragmentation (else 0, and cheaper: no target
/// workload is built).
pub fn node_pools(
    api: &dyn ApiClient,
    labels: &[String],
    fragmentation: bool,
) -> Vec<(String, Pool)> {
    let pods: Vec<Pod> = api.list_typed(None, None);
    let typical: Vec<TypicalPod> = if fragmentation {
        typical_pods(
            pods.iter().filter(|p| !p.is_terminal()),
            POPULARITY_THRESHOLD,
        )
    } else {
        Vec::new()
    };
    let mut on_node: BTreeMap<&str, Vec<Shared<Pod>>> = BTreeMap::new();
    for p in pods.iter().filter(|p| holds_resources(p)) {
        if let Some(n) = p.node_name() {
            on_node
                .entry(n)
                .or_default()
                .push(Shared::from_typed(p.clone()));
        }
    }
    let alloc = allocated_by_node(api);
    let mut out = Vec::new();
    for node in api.list_typed::<Node>(None, None) {
        let name = node.metadata.name.clone();
        let pool = pool_of(&node, labels);
        let allocatable = Resources::from_list(&node.status.allocatable);
        let used = alloc.get(&name).cloned().unwrap_or_default();
        let ready = node.is_ready();
        let empty = Vec::new();
        let gpu = node_gpu_use(
            Arc::new(node),
            on_node.get(name.as_str()).unwrap_or(&empty),
            &typical,
        );
        let total = i64::try_from(gpu.gpus).unwrap_or(0) * 1000;
        let one = Pool {
            name: pool,
            nodes: 1,
            ready_nodes: usize::from(ready),
            gpu_milli_total: total,
            gpu_milli_allocated: total - gpu.milli_left,
            gpu_milli_free: gpu.milli_left,
            gpu_milli_fragmented: if fragmentation { gpu.frag_milli } else { 0.0 },
            cpu: Amounts {
                allocatable: allocatable.milli_cpu,
                requested: used.milli_cpu,
            },
            memory: Amounts {
                allocatable: allocatable.memory,
                requested: used.memory,
            },
        };
        out.push((name, one));
    }
    out
}

/// The pending pods per reason, by count descending, then reason (a pod once under each reason).
fn count_reasons<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Vec<PendingReason> {
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for p in pods {
        let mut rs = pending_reasons(p);
        rs.sort();
        rs.dedup();
        for r in rs {
            *reasons.entry(r).or_insert(0) += 1;
        }
    }
    let mut out: Vec<PendingReason> = reasons
        .into_iter()
        .map(|(reason, pods)| PendingReason { reason, pods })
        .collect();
    out.sort_by(|a, b| b.pods.cmp(&a.pods).then(a.reason.cmp(&b.reason)));
    out
}

/// The pending pods grouped per pool: a pod belongs to every pool holding at least one node its
/// `nodeSelector` and required node affinity admit (kube-scheduler's NodeAffinity Filter,
/// `pkg/scheduler/framework/plugins/nodeaffinity`, through k8s-sched's
/// `simulator::required_node_affinity_admits`), so a pod without either belongs to every pool; taints,
/// resources and the other filters are not looked at (they are what the reasons say). A pod no
/// node admits is grouped under [`NO_POOL_ADMITS`]. Within a pool a pod counts under the reasons
/// of its whole `FailedScheduling` message ([`pending_reasons`]), which covers every node, the
/// other pools' too: the message does not say which node gave which reason.
pub fn pending_per_pool(nodes: &[Node], labels: &[String], pending: &[&Pod]) -> Vec<PoolPending> {
    let mut groups: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
    for p in pending {
        let pools: BTreeSet<String> = nodes
            .iter()
            .filter(|n| required_node_affinity_admits(p, n))
            .map(|n| pool_of(n, labels))
            .collect();
        if pools.is_empty() {
            groups
                .entry(NO_POOL_ADMITS.to_string())
                .or_default()
                .push(p);
        }
        for pool in pools {
            groups.entry(pool).or_default().push(p);
        }
    }
    let none = groups.remove(NO_POOL_ADMITS);
    let mut out: Vec<PoolPending> = groups
        .into_iter()
        .map(|(pool, pods)| PoolPending {
            pool,
            pods: pods.len(),
            reasons: count_reasons(pods),
        })
        .collect();
    if let Some(pods) = none {
        out.push(PoolPending {
            pool: NO_POOL_ADMITS.to_string(),
            pods: pods.len(),
            reasons: count_reasons(pods),
        });
    }
    out
}

/// The capacity view of the cluster `api` holds, pools named by `pool_labels` (empty: the defaults).
pub fn capacity_view(api: &dyn ApiClient, pool_labels: &[String]) -> CapacityView {
    let labels: Vec<String> = if pool_labels.is_empty() {
        DEFAULT_POOL_LABELS.iter().map(|s| s.to_string()).collect()
    } else {
        pool_labels.to_vec()
    };
    let pods: Vec<Pod> = api.list_typed(None, None);
    let mut pools: BTreeMap<String, Pool> = BTreeMap::new();
    for (_, one) in node_pools(api, &labels, true) {
        pools
            .entry(one.name.clone())
            .or_insert_with(|| Pool {
                name: one.name.clone(),
                ..Pool::default()
            })
            .add(&one);
    }
    let mut total = Pool {
        name: "total".to_string(),
        ..Pool::default()
    };
    let mut pools: Vec<Pool> = pools.into_values().collect();
    for p in &mut pools {
        total.add(p);
        p.gpu_milli_fragmented = round2(p.gpu_milli_fragmented);
    }
    total.gpu_milli_fragmented = round2(total.gpu_milli_fragmented);
    let pending_list: Vec<&Pod> = pods.iter().filter(|p| is_pending(p)).collect();
    let nodes: Vec<Node> = api.list_typed(None, None);
    let pending_per_pool = pending_per_pool(&nodes, &labels, &pending_list);
    let pending_pods = pending_list.len();
    let pending = count_reasons(pending_list);
    CapacityView {
        pool_labels: labels,
        pools,
        total,
        pending_pods,
        pending,
        pending_per_pool,
    }
}

/// Milli-GPU as GPUs: `8`, `2.5`, `0.33`.
pub fn gpus(milli: f64) -> String {
    let g = round2(milli / 1000.0);
    if g.fract() == 0.0 {
        format!("{g:.0}")
    } else {
        let s = format!("{g:.2}");
        s.trim_end_matches('0').to_string()
    }
}

fn requested_of(resource: &str, a: &Amounts) -> String {
    let pct = if a.allocatable > 0 {
        format!(
            " ({}%)",
            i128::from(a.requested) * 100 / i128::from(a.allocatable)
        )
    } else {
        String::new()
    };
    format!(
        "{}/{}{pct}",
        format_amount(resource, a.requested),
        format_amount(resource, a.allocatable)
    )
}

/// The view as text: the pool table (with a `total` row), then the pending pods per reason.
pub fn render(v: &CapacityView) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "pools by label: {}", v.pool_labels.join(", then "));
    let row = |p: &Pool| {
        vec![
            p.name.clone(),
            format!("{}/{}", p.ready_nodes, p.nodes),
            gpus(p.gpu_milli_total as f64),
            gpus(p.gpu_milli_allocated as f64),
            gpus(p.gpu_milli_free as f64),
            gpus(p.gpu_milli_fragmented),
            requested_of("cpu", &p.cpu),
            requested_of("memory", &p.memory),
        ]
    };
    let mut rows: Vec<Vec<String>> = v.pools.iter().map(row).collect();
    rows.push(row(&v.total));
    o.push_str(&table(
        &[
            "POOL",
            "READY/NODES",
            "GPUS",
            "GPU-ALLOCATED",
            "GPU-FREE",
            "GPU-FRAGMENTED",
            "CPU-REQUESTED",
            "MEMORY-REQUESTED",
        ],
        &rows,
    ));
    let _ = writeln!(o, "pending pods: {}", v.pending_pods);
    if !v.pending.is_empty() {
        let rows: Vec<Vec<String>> = v
            .pending
            .iter()
            .map(|r| vec![r.pods.to_string(), r.reason.clone()])
            .collect();
        o.push_str(&table(&["PODS", "REASON"], &rows));
    }
    if !v.pending_per_pool.is_empty() {
        let _ = writeln!(
            o,
            "pending pods per pool (the pools their node selection admits):"
        );
        let mut rows: Vec<Vec<String>> = Vec::new();
        for g in &v.pending_per_pool {
            for r in &g.reasons {
                rows.push(vec![
                    g.pool.clone(),
                    g.pods.to_string(),
                    r.pods.to_string(),
                    r.reason.clone(),
                ]);
            }
        }
        o.push_str(&table(&["POOL", "PENDING", "PODS", "REASON"], &rows));
    }
    o
}
