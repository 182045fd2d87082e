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

use k8s_types::object::Shared;
use std::collections::BTreeSet;
use std::fmt;

use k8s_sched_framework::node_info::same_pod;
use k8s_sched_framework::{CycleState, FilterPlugin, Handle, NodeInfo};
use k8s_types::core::{Pod, ResourceList};
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
    /// available 72` (the `even if ...` part only when some pod could be evicted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "podGroup {} cannot reach its quorum", self.pod_group)?;
        if self.can_preempt && self.evictable_pods > 0 {
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
        out.scalar.insert(
            k.clone(),
            (v - used.scalar.get(k).copied().unwrap_or(0)).max(0),
        );
    }
    (out, (alloc.pods - count).max(0))
}

/// True when the node's static constraints (NodeAffinity, TaintToleration, NodeUnschedulable
/// Filters) admit `pod`; preemption cannot change them.
fn admits(pod: &Pod, node: &NodeInfo) -> bool {
    let state = CycleState::default();
    required_node_affinity_matches(pod, node)
        && (!node.has_taints() || TaintToleration.filter(&state, pod, node).is_success())
        && (!node.is_unschedulable() || NodeUnschedulable.filter(&state, pod, node).is_success())
}

/// Assesses `pg` for `pod`'s attempt (see the module docs for the rule); every node is scanned,
/// so every count is exact (for `--explain`).
pub fn assess(handle: &dyn Handle, pod: &Pod, pg: &PodGroup) -> GangFit {
    let members = handle.pod_group_pods(pod.metadata.namespace(), &pg.metadata.name);
    let placed = |p: &Pod| handle.assigned_node(p).is_some();
    assess_on(handle.node_infos(), &members, placed, pod, pg, false)
}

/// The PreFilter decision: like [`assess`], but the node scan stops as soon as the gang is known
/// to be feasible (a feasible gang, the common case, costs a few nodes; an infeasible result has
/// scanned every node, so its counts are exact).
///
/// # Errors
/// The assessment, when the gang cannot reach its quorum.
pub fn check_feasible(handle: &dyn Handle, pod: &Pod, pg: &PodGroup) -> Result<(), Box<GangFit>> {
    let members = handle.pod_group_pods(pod.metadata.namespace(), &pg.metadata.name);
    let placed = |p: &Pod| handle.assigned_node(p).is_some();
    let fit = assess_on(handle.node_infos(), &members, placed, pod, pg, true);
    if fit.feasible() {
        Ok(())
    } else {
        Err(Box::new(fit))
    }
}

/// Members whose node constraints are equal (nodeSelector, node affinity, tolerations): a node
/// admits all of a class or none, so each node checks each class once.
struct Class<'a> {
    representative: &'a Pod,
    members: Vec<usize>,
}

fn same_constraints(a: &Pod, b: &Pod) -> bool {
    a.spec.node_selector == b.spec.node_selector
        && a.spec.tolerations == b.spec.tolerations
        && a.spec
            .affinity
            .as_ref()
            .and_then(|x| x.node_affinity.as_ref())
            == b.spec
                .affinity
                .as_ref()
                .and_then(|x| x.node_affinity.as_ref())
}

/// Per resource of `names`, the prefix sums of the requests of `idx` sorted ascending
/// (`sums[r][k]` = the `k` smallest requests of resource `r` together).
fn prefix_sums(reqs: &[Resources], idx: &[usize], names: &[String]) -> Vec<Vec<i64>> {
    names
        .iter()
        .map(|n| {
            let mut v: Vec<i64> = idx.iter().map(|&i| reqs[i].get(n)).collect();
            v.sort_unstable();
            let mut sums = Vec::with_capacity(v.len() + 1);
            let mut acc = 0i64;
            sums.push(0);
            for x in v {
                acc = acc.saturating_add(x);
                sums.push(acc);
            }
            sums
        })
        .collect()
}

/// Upper bound on how many members with the given per-resource prefix sums fit on a node with
/// `free` resources and `free_pods` pod slots: resource by resource, the most of the smallest
/// requests that fit (a binary search on the prefix sums).
fn node_bound(
    sums: &[Vec<i64>],
    count: usize,
    names: &[String],
    free: &Resources,
    free_pods: i64,
) -> usize {
    let mut k = count.min(usize::try_from(free_pods).unwrap_or(0));
    for (r, name) in names.iter().enumerate() {
        let f = free.get(name);
        // sums[r] is non-decreasing; the number of prefixes (beyond the empty one) within `f`.
        let fit = sums[r].partition_point(|s| *s <= f).saturating_sub(1);
        k = k.min(fit);
    }
    k
}

/// [`assess`] on explicit inputs: the snapshot's `nodes`, the group's pods (any phase) and
/// whether a pod is placed on a node; with `stop_when_feasible` the scan ends at the first node
/// after which the gang is known to fit.
pub fn assess_on(
    nodes: &[NodeInfo],
    group_pods: &[Shared<Pod>],
    is_placed: impl Fn(&Pod) -> bool,
    pod: &Pod,
    pg: &PodGroup,
    stop_when_feasible: bool,
) -> GangFit {
    let ns = pod.metadata.namespace();
    let name = pg.metadata.name.as_str();
    let members: Vec<&Shared<Pod>> = group_pods.iter().filter(|p| !p.is_terminal()).collect();
    let is_member = |p: &Pod| p.metadata.namespace() == ns && p.pod_group() == Some(name);
    let mut placed = 0usize;
    let mut unplaced: Vec<&Pod> = Vec::new();
    for m in &members {
        if same_pod(m, pod) || !is_placed(m) {
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
    let mut classes: Vec<Class<'_>> = Vec::new();
    for (i, m) in unplaced.iter().enumerate() {
        match classes
            .iter_mut()
            .find(|c| same_constraints(c.representative, m))
        {
            Some(c) => c.members.push(i),
            None => classes.push(Class {
                representative: m,
                members: vec![i],
            }),
        }
    }
    let all: Vec<usize> = (0..unplaced.len()).collect();
    let all_sums = prefix_sums(&reqs, &all, &names);
    // Per resource: the `need` smallest member requests together.
    let need_sum: Vec<i64> = all_sums.iter().map(|s| s[need.min(s.len() - 1)]).collect();
    let mut available = vec![0i64; names.len()];
    let (mut fit_now, mut fit_with, mut admitting, mut evictable_pods) = (0, 0, 0, 0);
    let mut admitted_classes: Vec<bool> = vec![false; classes.len()];
    for node in nodes {
        evictable_pods += node.pods().iter().filter(|p| evictable(&p.pod)).count();
        for (c, slot) in classes.iter().zip(admitted_classes.iter_mut()) {
            *slot = admits(c.representative, node);
        }
        if !admitted_classes.iter().any(|a| *a) {
            continue;
        }
        admitting += 1;
        let subset;
        let (sums, count) = if admitted_classes.iter().all(|a| *a) {
            (&all_sums, unplaced.len())
        } else {
            let idx: Vec<usize> = classes
                .iter()
                .zip(&admitted_classes)
                .filter(|(_, a)| **a)
                .flat_map(|(c, _)| c.members.iter().copied())
                .collect();
            subset = prefix_sums(&reqs, &idx, &names);
            (&subset, idx.len())
        };
        let (free, pods) = free_on(node, |_| true);
        fit_now += node_bound(sums, count, &names, &free, pods);
        let (free, pods) = free_on(node, |p| !evictable(p));
        fit_with += node_bound(sums, count, &names, &free, pods);
        for (i, n) in names.iter().enumerate() {
            available[i] = available[i].saturating_add(free.get(n));
        }
        if stop_when_feasible
            && fit_with >= need
            && need_sum.iter().zip(&available).all(|(n, a)| n <= a)
        {
            break;
        }
    }
    let mut gaps = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if need_sum[i] > available[i] {
            gaps.push(ResourceGap {
                resource: n.clone(),
                need: need_sum[i],
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
        nodes: nodes.len(),
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
            let have = if name == "pods" { pods } else { free.get(name) };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil::{node_with_pods, pod};
    use std::sync::Arc;

    const GPU: &str = "nvidia.com/gpu";

    fn gpu_pod(name: &str, gpus: &str, prio: i32, group: Option<&str>) -> Pod {
        let mut p = pod(&[("cpu", "1", GPU, gpus)]);
        p.metadata.name = name.into();
        p.spec.priority = Some(prio);
        if let Some(g) = group {
            p.metadata
                .labels
                .insert("scheduling.x-k8s.io/pod-group".into(), g.into());
        }
        p
    }

    fn gpu_node(name: &str, pods: Vec<Pod>) -> NodeInfo {
        node_with_pods(name, "32", "256Gi", &[(GPU, "8")], pods)
    }

    fn group(min: i32) -> PodGroup {
        let mut pg = PodGroup::default();
        pg.metadata.name = "train".into();
        pg.metadata.namespace = Some("default".into());
        pg.spec.min_member = min;
        pg
    }

    fn members(n: usize, gpus: &str) -> Vec<Shared<Pod>> {
        (0..n)
            .map(|i| Shared::from_typed(gpu_pod(&format!("train-{i}"), gpus, 1000, Some("train"))))
            .collect()
    }

    /// 3 nodes of 8 GPUs, two of them full with a low-priority 8-GPU pod (priority 10).
    fn cluster() -> Vec<NodeInfo> {
        vec![
            gpu_node("n0", vec![gpu_pod("low-0", "8", 10, None)]),
            gpu_node("n1", vec![gpu_pod("low-1", "8", 10, None)]),
            gpu_node("n2", vec![]),
        ]
    }

    #[test]
    fn a_gang_larger_than_the_cluster_is_infeasible_even_with_preemption() {
        let m = members(4, "8");
        let fit = assess_on(&cluster(), &m, |_| false, &m[0], &group(4), false);
        // Free now: n2 only (1 member); with both low pods gone: 3 nodes x 1 member.
        assert_eq!((fit.placed, fit.need), (0, 4));
        assert_eq!((fit.fit_now, fit.fit_with_preemption), (1, 3));
        assert_eq!((fit.evictable_pods, fit.admitting_nodes), (2, 3));
        assert_eq!(fit.node_shortfall(), 1);
        assert_eq!(
            fit.gaps,
            vec![ResourceGap {
                resource: GPU.into(),
                need: 32,
                available: 24
            }]
        );
        assert!(!fit.feasible());
        assert_eq!(
            fit.to_string(),
            "podGroup default/train cannot reach its quorum even if every lower-priority pod were \
             preempted: minMember 4, 0 placed, 4 to place, at most 3 fit (3 of 3 nodes admit a \
             member), resource gap: nvidia.com/gpu need 32, available 24"
        );
    }

    #[test]
    fn a_gang_that_fits_after_preemption_is_feasible() {
        let m = members(3, "8");
        let fit = assess_on(&cluster(), &m, |_| false, &m[0], &group(3), false);
        assert_eq!((fit.fit_now, fit.fit_with_preemption), (1, 3));
        assert!(fit.gaps.is_empty());
        assert!(fit.feasible());
    }

    #[test]
    fn equal_or_higher_priority_pods_and_policy_never_are_not_evictable() {
        let m = members(3, "8");
        // The occupants have the gang's priority: preemption cannot evict them.
        let nodes = vec![
            gpu_node("n0", vec![gpu_pod("peer-0", "8", 1000, None)]),
            gpu_node("n1", vec![gpu_pod("low-1", "8", 10, None)]),
            gpu_node("n2", vec![]),
        ];
        let fit = assess_on(&nodes, &m, |_| false, &m[0], &group(3), false);
        assert_eq!((fit.fit_with_preemption, fit.evictable_pods), (2, 1));
        assert!(!fit.feasible());
        let mut never = (*m[0]).clone();
        never.spec.preemption_policy = Some("Never".into());
        let fit = assess_on(&cluster(), &m, |_| false, &never, &group(3), false);
        assert_eq!((fit.fit_now, fit.fit_with_preemption), (1, 1));
        assert!(!fit.can_preempt);
    }

    #[test]
    fn placed_members_keep_their_place_and_lower_the_need() {
        // train-0 is bound on n2 (its GPUs used there); 2 more must fit after preemption.
        let m = members(3, "8");
        let nodes = vec![
            gpu_node("n0", vec![gpu_pod("low-0", "8", 10, None)]),
            gpu_node("n1", vec![gpu_pod("low-1", "8", 10, None)]),
            gpu_node("n2", vec![(*m[0]).clone()]),
        ];
        let placed = |p: &Pod| p.metadata.name == "train-0";
        let fit = assess_on(&nodes, &m, placed, &m[1], &group(3), false);
        assert_eq!((fit.placed, fit.need, fit.fit_with_preemption), (1, 2, 2));
        assert!(fit.feasible());
    }

    #[test]
    fn node_selectors_and_taints_limit_the_admitting_nodes() {
        let m: Vec<Shared<Pod>> = members(2, "8")
            .into_iter()
            .map(|p| {
                let mut p = (*p).clone();
                p.spec.node_selector.insert("pool".into(), "a".into());
                Shared::from_typed(p)
            })
            .collect();
        let mut nodes = cluster();
        let mut n = nodes[2].node().clone();
        n.metadata.labels.insert("pool".into(), "a".into());
        nodes[2] = {
            let mut ni = NodeInfo::new(Arc::new(n));
            ni.add_pod(k8s_sched_framework::PodInfo::new(Shared::from_typed(
                gpu_pod("low-2", "8", 10, None),
            )));
            ni
        };
        let fit = assess_on(&nodes, &m, |_| false, &m[0], &group(2), false);
        // Only n2 has pool=a: one 8-GPU member after evicting low-2.
        assert_eq!((fit.admitting_nodes, fit.fit_with_preemption), (1, 1));
        assert_eq!(fit.gaps[0].need, 16);
        assert_eq!(fit.gaps[0].available, 8);
        assert!(!fit.feasible());
    }

    #[test]
    fn mixed_requests_are_bounded_by_the_smallest_ones() {
        // One free 8-GPU node: requests 2 and 6 fit together (8), 6 and 6 do not.
        let node = vec![gpu_node("n0", vec![])];
        let mk = |a: &str, b: &str| {
            vec![
                Shared::from_typed(gpu_pod("train-0", a, 1000, Some("train"))),
                Shared::from_typed(gpu_pod("train-1", b, 1000, Some("train"))),
            ]
        };
        let m = mk("2", "6");
        assert!(assess_on(&node, &m, |_| false, &m[0], &group(2), false).feasible());
        let m = mk("6", "6");
        let fit = assess_on(&node, &m, |_| false, &m[0], &group(2), false);
        assert_eq!(fit.fit_with_preemption, 1);
        assert!(!fit.feasible());
    }

    #[test]
    fn members_with_different_selectors_count_only_where_admitted() {
        // train-0 may go anywhere, train-1 only to pool=a (n1). Both 8 GPUs, two free nodes.
        let mut n1 = gpu_node("n1", vec![]).node().clone();
        n1.metadata.labels.insert("pool".into(), "a".into());
        let nodes = vec![gpu_node("n0", vec![]), NodeInfo::new(Arc::new(n1))];
        let mut picky = gpu_pod("train-1", "8", 1000, Some("train"));
        picky.spec.node_selector.insert("pool".into(), "a".into());
        let m = vec![
            Shared::from_typed(gpu_pod("train-0", "8", 1000, Some("train"))),
            Shared::from_typed(picky),
        ];
        let fit = assess_on(&nodes, &m, |_| false, &m[0], &group(2), false);
        // n0 admits train-0 only (1), n1 both but holds one (1): 2 in all.
        assert_eq!((fit.admitting_nodes, fit.fit_with_preemption), (2, 2));
        assert!(fit.feasible());
        // The early-exit scan reaches the same verdict, here after both nodes.
        assert!(assess_on(&nodes, &m, |_| false, &m[0], &group(2), true).feasible());
        // Three members, the third also picky: n1 still holds only one of the two picky ones.
        let mut m3 = m.clone();
        let mut picky2 = gpu_pod("train-2", "8", 1000, Some("train"));
        picky2.spec.node_selector.insert("pool".into(), "a".into());
        m3.push(Shared::from_typed(picky2));
        let fit = assess_on(&nodes, &m3, |_| false, &m3[0], &group(3), true);
        assert_eq!(fit.fit_with_preemption, 2);
        assert!(!fit.feasible());
    }

    #[test]
    fn the_early_exit_scan_stops_once_feasible() {
        // 3 free nodes, minMember 1: the scan stops after the first node.
        let nodes = vec![
            gpu_node("n0", vec![]),
            gpu_node("n1", vec![]),
            gpu_node("n2", vec![]),
        ];
        let m = members(1, "8");
        let quick = assess_on(&nodes, &m, |_| false, &m[0], &group(1), true);
        let full = assess_on(&nodes, &m, |_| false, &m[0], &group(1), false);
        assert_eq!((quick.admitting_nodes, full.admitting_nodes), (1, 3));
        assert!(quick.feasible() && full.feasible());
    }

    #[test]
    fn check_cluster_resource_follows_scheduler_plugins() {
        let mut own = gpu_pod("train-0", "8", 1000, Some("train"));
        own.metadata.namespace = Some("default".into());
        let nodes = vec![
            gpu_node("n0", vec![own]),
            gpu_node("n1", vec![gpu_pod("low-1", "4", 10, None)]),
        ];
        let list = |pairs: &[(&str, &str)]| -> ResourceList {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_string(), Quantity::parse(v).expect("quantity")))
                .collect()
        };
        // The group's own pod does not count as used: 8 + 4 GPUs free.
        assert_eq!(
            check_cluster_resource(&nodes, &list(&[(GPU, "12")]), 2, "default", "train"),
            Ok(())
        );
        // 64 CPUs - the low pod's 1 CPU = 63 free; 16 GPUs asked, 12 free.
        assert_eq!(
            check_cluster_resource(
                &nodes,
                &list(&[("cpu", "64"), (GPU, "16")]),
                2,
                "default",
                "train"
            ),
            Err("resource gap: map[cpu:1 nvidia.com/gpu:4]".to_string())
        );
        // pods: minMember against 110 + 109 free slots.
        assert_eq!(
            check_cluster_resource(&nodes, &list(&[]), 220, "default", "train"),
            Err("resource gap: map[pods:1]".to_string())
        );
    }
}
