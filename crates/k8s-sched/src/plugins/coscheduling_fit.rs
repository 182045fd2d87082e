//! Gang feasibility for Coscheduling: could the PodGroup reach its quorum at all, and what is
//! short? Two checks:
//!
//! - [`check_cluster_resource`]: scheduler-plugins `pkg/coscheduling/core/core.go`
//!   `CheckClusterResource` / `getNodeResource`, the PodGroup's `minResources` (plus
//!   `pods: minMember`) against the free resources of the nodes, where each node's free amount
//!   leaves out the pods of the group itself. Upstream walks the nodes in lister order and stops as
//!   soon as the request is covered; k8s-mini walks them in name order (the result is the same:
//!   the sum does not depend on the order).
//! - [`assess`] (k8s-mini's own, scheduler-plugins has no such check; see `docs/fidelity.md`):
//!   could `minMember` members be placed if every pod that preemption could evict for this pod
//!   were gone? Members already placed (bound, assumed or waiting at Permit) stay where they are;
//!   the `need = minMember - placed` others must fit into what is left. A pod is evictable when its
//!   priority is lower than the preemptor's (upstream `SelectVictimsOnNode` considers exactly those)
//!   and the preemptor's `preemptionPolicy` is not `Never`. A node can hold a member only if the
//!   member's static node constraints admit it: nodeSelector and required node affinity
//!   (NodeAffinity), NoSchedule/NoExecute taints (TaintToleration), `spec.unschedulable`
//!   (NodeUnschedulable): preemption cannot change those (upstream marks them
//!   UnschedulableAndUnresolvable). Per node, the members it could hold are bounded by each
//!   resource separately: the largest `k` such that the `k` smallest requests of the members it
//!   admits fit in the node's free amount (and `k` pod slots are left). The gang is infeasible when
//!   these bounds summed over the nodes are below `need`, or when, for some resource, the `need`
//!   smallest member requests exceed the free amount of all admitting nodes together. Both are
//!   necessary conditions (any placement satisfies them), so a gang the check rejects can never
//!   fit, and one it passes may still fail Filter later (inter-pod affinity, ports, GPU devices)
//!   as before.

use std::collections::BTreeSet;
use std::fmt;

use k8s_types::core::{Pod, ResourceList};
use k8s_types::framework::node_info::same_pod;
use k8s_types::framework::{CycleState, FilterPlugin, Handle, NodeInfo};
use k8s_types::quantity::{Format, Quantity};
use k8s_types::resources::{pod_requests, Resources};
use k8s_types::scheduling::PodGroup;

use super::node_affinity::required_node_affinity_matches;
use super::node_unschedulable::NodeUnschedulable;
use super::taint_toleration::TaintToleration;

/// One resource's shortfall: what the gang needs against what the nodes could give.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceGap {
    /// Resource name (`cpu`, `memory`, `nvidia.com/gpu`, ...).
    pub resource: String,
    /// What the members still to place need at least (sum of the smallest requests).
    pub need: i64,
    /// Free on the nodes that admit a member, with every evictable pod gone.
    pub available: i64,
}

impl ResourceGap {
    /// `need - available`.
    pub fn missing(&self) -> i64 {
        self.need.saturating_sub(self.available)
    }
}

/// The feasibility of one PodGroup as seen by one member's scheduling attempt.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GangFit {
    /// `<namespace>/<podgroup>`.
    pub pod_group: String,
    /// `spec.minMember`.
    pub min_member: i32,
    /// Non-terminal members that exist.
    pub members: usize,
    /// Members placed on a node (bound, assumed or waiting at Permit).
    pub placed: usize,
    /// Members still to place to reach the quorum (`minMember - placed`, at least 0).
    pub need: usize,
    /// The priority whose lower-priority pods count as evictable.
    pub priority: i32,
    /// False when the member's `preemptionPolicy` is `Never` (nothing is evictable).
    pub can_preempt: bool,
    /// Evictable pods (priority below `priority`) on the nodes, all nodes together.
    pub evictable_pods: usize,
    /// Nodes that admit at least one unplaced member (selector, affinity, taints, cordon).
    pub admitting_nodes: usize,
    /// Nodes in the snapshot.
    pub nodes: usize,
    /// Upper bound on the unplaced members the nodes can hold as they are.
    pub fit_now: usize,
    /// Upper bound on the unplaced members the nodes can hold with every evictable pod gone.
    pub fit_with_preemption: usize,
    /// Resources whose summed need exceeds what the admitting nodes could give (with every
    /// evictable pod gone), in resource-name order.
    pub gaps: Vec<ResourceGap>,
}

impl GangFit {
    /// True unless the gang provably cannot reach `minMember`, even with preemption.
    pub fn feasible(&self) -> bool {
        self.fit_with_preemption >= self.need && self.gaps.is_empty()
    }

    /// Nodes missing for the quorum: `need - fit_with_preemption`, at least 0.
    pub fn node_shortfall(&self) -> usize {
        self.need.saturating_sub(self.fit_with_preemption)
    }
}

impl fmt::Display for GangFit {
    /// The PreFilter message for an infeasible gang, e.g. `podGroup default/train cannot reach
    /// its quorum even if every lower-priority pod were preempted: minMember 10, 0 placed, 10 to
    /// place, at most 9 fit (9 of 9 nodes admit a member), resource gap: nvidia.com/gpu need 80,
    /// available 72`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "podGroup {} cannot reach its quorum", self.pod_group)?;
        if self.can_preempt {
            f.write_str(" even if every lower-priority pod were preempted")?;
        }
        write!(
            f,
            ": minMember {}, {} placed, {} to place, at most {} fit ({} of {} nodes admit a member)",
            self.min_member,
            self.placed,
            self.need,
            self.fit_with_preemption,
            self.admitting_nodes,
            self.nodes
        )?;
        if !self.gaps.is_empty() {
            f.write_str(", resource gap: ")?;
            let parts: Vec<String> = self
                .gaps
                .iter()
                .map(|g| {
                    format!(
                        "{} need {}, available {}",
                        g.resource,
                        show(&g.resource, g.need),
                        show(&g.resource, g.available)
                    )
                })
                .collect();
            f.write_str(&parts.join("; "))?;
        }
        Ok(())
    }
}

/// A resource amount in its canonical quantity form (`cpu` in milli-units, memory in bytes).
pub fn show(resource: &str, v: i64) -> String {
    match resource {
        "cpu" => Quantity::from_milli(v, Format::DecimalSI).to_string(),
        "memory" | "ephemeral-storage" => Quantity::from_value(v, Format::BinarySI).to_string(),
        _ if resource.starts_with("hugepages-") => {
            Quantity::from_value(v, Format::BinarySI).to_string()
        }
        _ => Quantity::from_value(v, Format::DecimalSI).to_string(),
    }
}

/// The resource names the gang's requests use (pods excluded), in name order.
fn resource_names(reqs: &[Resources]) -> Vec<String> {
    let mut names = BTreeSet::new();
    for r in reqs {
        if r.milli_cpu > 0 {
            names.insert("cpu".to_string());
        }
        if r.memory > 0 {
            names.insert("memory".to_string());
        }
        if r.ephemeral_storage > 0 {
            names.insert("ephemeral-storage".to_string());
        }
        for (k, v) in &r.scalar {
            if *v > 0 {
                names.insert(k.clone());
            }
        }
    }
    names.into_iter().collect()
}

/// A node's free resources (allocatable minus the requests of the pods `keep` selects) and free
/// pod slots.
fn free_on(node: &NodeInfo, keep: impl Fn(&Pod) -> bool) -> (Resources, i64) {
    let mut used = Resources::default();
    let mut count = 0i64;
    for p in node.pods() {
        if keep(&p.pod) {
            used.add(&p.requests);
            count += 1;
        }
    }
    let alloc = node.allocatable();
    // Signed: a node already over-committed has nothing free (not a wrapped amount).
    let mut out = Resources {
        milli_cpu: (alloc.milli_cpu - used.milli_cpu).max(0),
        memory: (alloc.memory - used.memory).max(0),
        ephemeral_storage: (alloc.ephemeral_storage - used.ephemeral_storage).max(0),
        ..Resources::default()
    };
    for (k, v) in &alloc.scalar {
        out.scalar
            .insert(k.clone(), (v - used.scalar.get(k).copied().unwrap_or(0)).max(0));
    }
    (out, (alloc.pods - count).max(0))
}

/// The largest `k <= sorted.len()` whose `k` first (smallest) values sum to at most `free`.
fn prefix_fit(sorted: &[i64], free: i64) -> usize {
    let mut sum = 0i64;
    for (i, v) in sorted.iter().enumerate() {
        sum = sum.saturating_add(*v);
        if sum > free {
            return i;
        }
    }
    sorted.len()
}

/// Upper bound on how many of `reqs` (the admitted members' requests) fit on a node with `free`
/// resources and `free_pods` pod slots.
fn node_bound(reqs: &[&Resources], names: &[String], free: &Resources, free_pods: i64) -> usize {
    let mut k = reqs.len().min(usize::try_from(free_pods).unwrap_or(0));
    for name in names {
        let mut vals: Vec<i64> = reqs.iter().map(|r| r.get(name)).collect();
        vals.sort_unstable();
        k = k.min(prefix_fit(&vals, free.get(name)));
    }
    k
}

/// True when the node's static constraints (NodeAffinity, TaintToleration, NodeUnschedulable
/// Filters) admit `pod`; preemption cannot change them.
fn admits(pod: &Pod, node: &NodeInfo) -> bool {
    let state = CycleState::default();
    required_node_affinity_matches(pod, node)
        && (!node.has_taints() || TaintToleration.filter(&state, pod, node).is_success())
        && (!node.is_unschedulable() || NodeUnschedulable.filter(&state, pod, node).is_success())
}

/// Assesses `pg` for `pod`'s attempt (see the module docs for the rule).
pub fn assess(handle: &dyn Handle, pod: &Pod, pg: &PodGroup) -> GangFit {
    let ns = pod.metadata.namespace();
    let name = pg.metadata.name.as_str();
    let members: Vec<_> = handle
        .pod_group_pods(ns, name)
        .into_iter()
        .filter(|p| !p.is_terminal())
        .collect();
    let is_member = |p: &Pod| p.metadata.namespace() == ns && p.pod_group() == Some(name);
    let mut placed = 0usize;
    let mut unplaced: Vec<&Pod> = Vec::new();
    for m in &members {
        if same_pod(m, pod) || handle.assigned_node(m).is_none() {
            if !m.is_terminating() || same_pod(m, pod) {
                unplaced.push(m);
            }
        } else {
            placed += 1;
        }
    }
    if !unplaced.iter().any(|m| same_pod(m, pod)) {
        unplaced.push(pod);
    }
    let reqs: Vec<Resources> = unplaced.iter().map(|p| pod_requests(p)).collect();
    let names = resource_names(&reqs);
    let need = usize::try_from(pg.spec.min_member)
        .unwrap_or(0)
        .saturating_sub(placed);
    let priority = pod.priority();
    let can_preempt = pod.spec.preemption_policy.as_deref() != Some("Never");
    // Unplaced members are not on any node; placed ones keep their place.
    let evictable = |p: &Pod| can_preempt && p.priority() < priority && !is_member(p);
    let mut need_sorted: Vec<Vec<i64>> = names
        .iter()
        .map(|n| {
            let mut v: Vec<i64> = reqs.iter().map(|r| r.get(n)).collect();
            v.sort_unstable();
            v
        })
        .collect();
    let mut available = vec![0i64; names.len()];
    let (mut fit_now, mut fit_with, mut admitting, mut evictable_pods) = (0, 0, 0, 0);
    for node in handle.node_infos() {
        evictable_pods += node.pods().iter().filter(|p| evictable(&p.pod)).count();
        let admitted: Vec<&Resources> = unplaced
            .iter()
            .zip(&reqs)
            .filter(|(m, _)| admits(m, node))
            .map(|(_, r)| r)
            .collect();
        if admitted.is_empty() {
            continue;
        }
        admitting += 1;
        let (free, pods) = free_on(node, |_| true);
        fit_now += node_bound(&admitted, &names, &free, pods);
        let (free, pods) = free_on(node, |p| !evictable(p));
        fit_with += node_bound(&admitted, &names, &free, pods);
        for (i, n) in names.iter().enumerate() {
            available[i] = available[i].saturating_add(free.get(n));
        }
    }
    let mut gaps = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let sorted = &mut need_sorted[i];
        let need_sum = sorted.iter().take(need).fold(0i64, |a, v| a.saturating_add(*v));
        if need_sum > available[i] {
            gaps.push(ResourceGap {
                resource: n.clone(),
                need: need_sum,
                available: available[i],
            });
        }
    }
    GangFit {
        pod_group: format!("{ns}/{name}"),
        min_member: pg.spec.min_member,
        members: members.len(),
        placed,
        need,
        priority,
        can_preempt,
        evictable_pods,
        admitting_nodes: admitting,
        nodes: handle.node_infos().len(),
        fit_now: fit_now.min(unplaced.len()),
        fit_with_preemption: fit_with.min(unplaced.len()),
        gaps,
    }
}

/// scheduler-plugins `CheckClusterResource`: `Err(message)` with the remaining gap when the nodes'
/// free resources (each node without the group's own pods) do not cover `min_resources` plus
/// `pods: min_member`. The message is upstream's `resource gap: map[...]`, with each quantity in
/// its canonical form (upstream prints the Go structs of the quantities).
///
/// # Errors
/// The gap, as described.
pub fn check_cluster_resource(
    nodes: &[NodeInfo],
    min_resources: &ResourceList,
    min_member: i32,
    namespace: &str,
    pod_group: &str,
) -> Result<(), String> {
    let mut want = Resources::from_list(min_resources);
    want.pods = i64::from(min_member);
    let mut remaining: Vec<(String, i64)> = Vec::new();
    for name in ["cpu", "ephemeral-storage", "memory", "pods"] {
        let v = want.get(name);
        if v > 0 {
            remaining.push((name.to_string(), v));
        }
    }
    for (k, v) in &want.scalar {
        if *v > 0 {
            remaining.push((k.clone(), *v));
        }
    }
    remaining.sort();
    let own = |p: &Pod| !(p.metadata.namespace() == namespace && p.pod_group() == Some(pod_group));
    for node in nodes {
        if remaining.is_empty() {
            break;
        }
        let (free, pods) = free_on(node, own);
        remaining.retain_mut(|(name, v)| {
            let have = if name == "pods" {
                pods
            } else {
                free.get(name)
            };
            *v -= have;
            *v > 0
        });
    }
    if remaining.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = remaining
        .iter()
        .map(|(n, v)| format!("{n}:{}", show(n, *v)))
        .collect();
    Err(format!("resource gap: map[{}]", parts.join(" ")))
}
