//! PodTopologySpread's hard constraints (`whenUnsatisfiable: DoNotSchedule`): PreFilter counts
//! the matching pods per topology domain over every node once per attempt ([`PreFilterState`]
//! with the two smallest domains per constraint, upstream's "critical paths"), reading the
//! per-selector counters of [`crate::topology_counts`] instead of every pod
//! ([`PreFilterState::compute_indexed`]; [`PreFilterState::compute`] is upstream's count over
//! every pod, the reference it must equal); Filter checks
//! `matching pods in the node's domain + 1 (if the pod matches itself) - global minimum <=
//! maxSkew`, where the global minimum is 0 while fewer than `minDomains` domains exist;
//! AddPod/RemovePod update the counts for preemption. Mirrors upstream
//! `pkg/scheduler/framework/plugins/podtopologyspread/filtering.go`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::runtime::node_arrays::NodeGenerations;
use k8s_sched_framework::node_info::label_hash;
use k8s_sched_framework::{CycleState, NodeInfo, PodInfo, Status};
use k8s_types::core::Pod;

use super::common::{
    count_pods_match_selector, node_labels_match_spread_constraints, TopologySpreadConstraint,
};
use crate::plugins::node_affinity::has_required_node_affinity;
use crate::runtime::kernel::NodeGate;
use crate::topology_counts::{
    DomainView, NodeDomain, PodMatcher, SnapshotPositions, TopologyIndex, MAX_COUNTERS,
};

/// CycleState key of the PreFilter state (upstream `"PreFilter" + Name`).
pub const PRE_FILTER_STATE_KEY: &str = "PreFilterPodTopologySpread";
/// Upstream `ErrReasonConstraintsNotMatch`.
pub const ERR_REASON_CONSTRAINTS_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints";
/// Upstream `ErrReasonNodeLabelNotMatch`.
pub const ERR_REASON_NODE_LABEL_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";

/// Upstream `math.MaxInt32`, the match number of an empty critical path.
const EMPTY_PATH_MATCH_NUM: i64 = i32::MAX as i64;

/// One domain and its number of matching pods (upstream `criticalPaths` entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CriticalPath {
    /// The topology value (domain).
    pub topology_value: String,
    /// Matching pods in the domain.
    pub match_num: i64,
}

/// The two domains with the fewest matching pods of one constraint (upstream `criticalPaths`):
/// `[0]` always holds the minimum; `[1]` is >= `[0]` but not necessarily the second minimum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CriticalPaths(pub [CriticalPath; 2]);

impl Default for CriticalPaths {
    fn default() -> CriticalPaths {
        let empty = CriticalPath {
            topology_value: String::new(),
            match_num: EMPTY_PATH_MATCH_NUM,
        };
        CriticalPaths([empty.clone(), empty])
    }
}

impl CriticalPaths {
    /// Upstream `criticalPaths.update`.
    pub fn update(&mut self, tp_val: &str, num: i64) {
        let p = &mut self.0;
        let i = if tp_val == p[0].topology_value {
            Some(0)
        } else if tp_val == p[1].topology_value {
            Some(1)
        } else {
            None
        };
        match i {
            Some(i) => {
                p[i].match_num = num;
                if p[0].match_num > p[1].match_num {
                    p.swap(0, 1);
                }
            }
            None => {
                if num < p[0].match_num {
                    p[1] = p[0].clone();
                    p[0] = CriticalPath {
                        topology_value: tp_val.to_string(),
                        match_num: num,
                    };
                } else if num < p[1].match_num {
                    p[1] = CriticalPath {
                        topology_value: tp_val.to_string(),
                        match_num: num,
                    };
                }
            }
        }
    }
}

/// What PreFilter computed (upstream `preFilterState`). Cloned per node by preemption; the
/// constraints are shared.
#[derive(Clone, Debug, Default)]
pub struct PreFilterState {
    /// The pod's hard constraints (or the hard default constraints).
    pub constraints: Arc<Vec<TopologySpreadConstraint>>,
    /// Per constraint: the two smallest domains.
    pub critical_paths: Vec<CriticalPaths>,
    /// Per constraint: domain -> matching pods.
    pub tp_value_to_match_num: Vec<BTreeMap<String, i64>>,
    /// The same verdicts by node position and integer domain id, when PreFilter read the
    /// counters' per-domain totals (`None` otherwise, and after AddPod/RemovePod).
    pub fast: Option<Arc<FastFilter>>,
}

/// What Filter needs to judge a node of the snapshot PreFilter counted without a label or
/// string lookup: per constraint, the node's domain id and the domain's count (see
/// [`DomainView`]), the global minimum, `maxSkew` and `selfMatchNum`. Gives exactly
/// [`filter_with`]'s verdict, or nothing for a node it does not know.
#[derive(Clone, Debug)]
pub struct FastFilter {
    positions: SnapshotPositions,
    /// Per constraint: the domains, the `maxSkew` and `selfMatchNum - minMatchNum` bound.
    constraints: Vec<(DomainView, i64, i64)>,
}

impl FastFilter {
    /// The same verdicts as a fused-pass gate: per constraint, a domain passes when its count
    /// plus `selfMatchNum - minMatchNum` is at most `maxSkew`; a node without the key fails.
    pub fn gate(&self) -> NodeGate {
        let mut g = self.positions.gate();
        for (view, max_skew, self_minus_min) in &self.constraints {
            g.push(view.gate(i64::MIN, max_skew.saturating_sub(*self_minus_min), false));
        }
        g
    }

    /// The verdict for `node`: `None` when the node is not one PreFilter counted.
    #[inline]
    pub fn judge(&self, node: &NodeInfo) -> Option<Status> {
        let pos = self.positions.position(node)?;
        for (view, max_skew, self_minus_min) in &self.constraints {
            match view.domain(pos, node) {
                NodeDomain::Unknown => return None,
                NodeDomain::Missing => {
                    return Some(Status::unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH))
                }
                NodeDomain::Id(d) => {
                    if view.count(d) + self_minus_min > *max_skew {
                        return Some(Status::unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH));
                    }
                }
            }
        }
        Some(Status::success())
    }
}

impl PreFilterState {
    /// Upstream `calPreFilterState` over `all_nodes` with the given constraints.
    pub fn compute(
        pod: &Pod,
        constraints: Vec<TopologySpreadConstraint>,
        all_nodes: &[NodeInfo],
    ) -> PreFilterState {
        let mut tp: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new(); constraints.len()];
        let ns = pod.metadata.namespace();
        for node in all_nodes {
            let labels = &node.node().metadata.labels;
            if !node_labels_match_spread_constraints(labels, &constraints) {
                continue;
            }
            for (i, c) in constraints.iter().enumerate() {
                if !c.match_node_inclusion_policies(pod, node) {
                    continue;
                }
                let value = labels
                    .get(&c.topology_key)
                    .map(String::as_str)
                    .unwrap_or("");
                let count = count_pods_match_selector(node.pods(), &c.selector, ns);
                match tp[i].get_mut(value) {
                    Some(n) => *n += count,
                    None => {
                        tp[i].insert(value.to_string(), count);
                    }
                }
            }
        }
        PreFilterState::from_counts(constraints, tp)
    }

    /// The state for per-constraint domain counts `tp` (the critical paths follow from them).
    fn from_counts(
        constraints: Vec<TopologySpreadConstraint>,
        tp: Vec<BTreeMap<String, i64>>,
    ) -> PreFilterState {
        let critical_paths = tp
            .iter()
            .map(|m| {
                let mut p = CriticalPaths::default();
                for (v, n) in m {
                    p.update(v, *n);
                }
                p
            })
            .collect();
        PreFilterState {
            constraints: Arc::new(constraints),
            critical_paths,
            tp_value_to_match_num: tp,
            fast: None,
        }
    }

    /// [`PreFilterState::compute`] from the counters of `index` (synced to `all_nodes` here):
    /// the same state, without visiting pods. When every node has every constraint's key and
    /// no node inclusion policy can exclude a node (the pod has no nodeSelector or required node
    /// affinity under `nodeAffinityPolicy: Honor`, and no node is tainted under
    /// `nodeTaintsPolicy: Honor`), the counts are the counters' per-domain totals; otherwise the
    /// per-node counts are summed over the nodes the policies include. `generations` are the
    /// nodes' generations in one array when the caller has them (`runtime::node_arrays::node_generations`).
    pub fn compute_indexed(
        pod: &Pod,
        constraints: Vec<TopologySpreadConstraint>,
        all_nodes: &[NodeInfo],
        generations: Option<NodeGenerations>,
        index: &mut TopologyIndex,
    ) -> PreFilterState {
        if constraints.len() > MAX_COUNTERS / 2 {
            return PreFilterState::compute(pod, constraints, all_nodes);
        }
        index.sync_generations(all_nodes, generations);
        let ns = pod.metadata.namespace();
        let ids: Vec<_> = constraints
            .iter()
            .map(|c| {
                index.counter(
                    all_nodes,
                    &PodMatcher::spread(ns, &c.selector),
                    &c.topology_key,
                )
            })
            .collect();
        let has_node_affinity = has_required_node_affinity(pod);
        let every_node_counts = constraints.iter().all(|c| {
            index.all_nodes_have_key(&c.topology_key)
                && !(c.honor_node_affinity && has_node_affinity)
                && !(c.honor_node_taints && index.tainted_nodes() > 0)
        });
        if every_node_counts {
            let tp = ids.iter().map(|&id| index.domain_counts(id)).collect();
            let mut state = PreFilterState::from_counts(constraints, tp);
            let fast = FastFilter {
                positions: SnapshotPositions::of(all_nodes),
                constraints: ids
                    .iter()
                    .zip(state.constraints.iter())
                    .enumerate()
                    .map(|(i, (&id, c))| {
                        let self_match = i64::from(c.selector.matches(&pod.metadata.labels));
                        (
                            index.domain_view(id),
                            i64::from(c.max_skew),
                            self_match - state.min_match_num(i, c.min_domains),
                        )
                    })
                    .collect(),
            };
            state.fast = Some(Arc::new(fast));
            return state;
        }
        let mut tp: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new(); constraints.len()];
        for (pos, node) in all_nodes.iter().enumerate() {
            if ids.iter().any(|&id| index.domain_at(id, pos).is_none()) {
                continue;
            }
            for (i, c) in constraints.iter().enumerate() {
                if !c.match_node_inclusion_policies(pod, node) {
                    continue;
                }
                let value = index.domain_at(ids[i], pos).unwrap_or("");
                let count = index.count_on_node(ids[i], pos);
                match tp[i].get_mut(value) {
                    Some(n) => *n += count,
                    None => {
                        tp[i].insert(value.to_string(), count);
                    }
                }
            }
        }
        PreFilterState::from_counts(constraints, tp)
    }

    /// Upstream `minMatchNum`: the global minimum for constraint `i`, 0 while fewer than
    /// `min_domains` domains exist.
    pub fn min_match_num(&self, i: usize, min_domains: i32) -> i64 {
        let min = self.critical_paths[i].0[0].match_num;
        if (self.tp_value_to_match_num[i].len() as i64) < i64::from(min_domains) {
            return 0;
        }
        min
    }

    /// Upstream `updateWithPod`: counts `updated` (+1 or -1) in its node's domains.
    pub fn update_with_pod(&mut self, updated: &Pod, preemptor: &Pod, node: &NodeInfo, delta: i64) {
        self.fast = None;
        if updated.metadata.namespace() != preemptor.metadata.namespace() {
            return;
        }
        let labels = &node.node().metadata.labels;
        if !node_labels_match_spread_constraints(labels, &self.constraints) {
            return;
        }
        let constraints = Arc::clone(&self.constraints);
        for (i, c) in constraints.iter().enumerate() {
            if !c.selector.matches(&updated.metadata.labels) {
                continue;
            }
            if !c.match_node_inclusion_policies(preemptor, node) {
                continue;
            }
            let v = labels
                .get(&c.topology_key)
                .map(String::as_str)
                .unwrap_or("");
            let n = self.tp_value_to_match_num[i]
                .entry(v.to_string())
                .or_insert(0);
            *n += delta;
            let n = *n;
            self.critical_paths[i].update(v, n);
        }
    }
}

/// Status of a missing PreFilter state (upstream `getPreFilterState` error, as a status).
fn missing_state() -> Status {
    Status::error(format!(
        "reading {PRE_FILTER_STATE_KEY:?} from cycleState: not found"
    ))
}

/// Upstream `PodTopologySpread.Filter`.
pub fn filter(state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
    let Some(s) = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
        return missing_state();
    };
    if let Some(status) = s.fast.as_deref().and_then(|f| f.judge(node)) {
        return status;
    }
    filter_with(s, &PodConstants::new(s, pod), node)
}

/// The fused-pass gate of this attempt, when PreFilter read the index (see
/// [`FastFilter::gate`]).
pub fn gate(state: &CycleState) -> Option<NodeGate> {
    let s = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY)?;
    s.fast.as_deref().map(FastFilter::gate)
}

/// [`filter`] over many nodes, reading the state and the pod's own values once
/// (`FilterPlugin::filter_nodes`).
pub fn filter_nodes(
    state: &CycleState,
    pod: &Pod,
    nodes: &[&NodeInfo],
    failed: &mut Vec<(usize, Status)>,
) {
    let Some(s) = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
        failed.extend((0..nodes.len()).map(|i| (i, missing_state())));
        return;
    };
    let k = PodConstants::new(s, pod);
    for (i, node) in nodes.iter().enumerate() {
        let status = match s.fast.as_deref().and_then(|f| f.judge(node)) {
            Some(status) => status,
            None => filter_with(s, &k, node),
        };
        if !status.is_success() {
            failed.push((i, status));
        }
    }
}

/// Per constraint, what Filter reads that does not depend on the node: the hash of the topology
/// key and whether the pod matches its own selector (`selfMatchNum`).
struct PodConstants {
    key_hashes: Vec<u64>,
    self_match: Vec<i64>,
}

impl PodConstants {
    fn new(s: &PreFilterState, pod: &Pod) -> PodConstants {
        PodConstants {
            key_hashes: s
                .constraints
                .iter()
                .map(|c| label_hash(&c.topology_key))
                .collect(),
            self_match: s
                .constraints
                .iter()
                .map(|c| i64::from(c.selector.matches(&pod.metadata.labels)))
                .collect(),
        }
    }
}

fn filter_with(s: &PreFilterState, k: &PodConstants, node: &NodeInfo) -> Status {
    let labels = node.label_index();
    for (i, c) in s.constraints.iter().enumerate() {
        let Some(tp_val) = labels.get_hashed(&c.topology_key, k.key_hashes[i]) else {
            return Status::unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);
        };
        let min_match_num = s.min_match_num(i, c.min_domains);
        let match_num = s.tp_value_to_match_num[i].get(tp_val).copied().unwrap_or(0);
        let skew = match_num + k.self_match[i] - min_match_num;
        if skew > i64::from(c.max_skew) {
            return Status::unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH);
        }
    }
    Status::success()
}

/// Upstream `AddPod`/`RemovePod` (delta +1/-1).
pub fn update_state(
    state: &mut CycleState,
    pod_to_schedule: &Pod,
    pod: &PodInfo,
    node: &NodeInfo,
    delta: i64,
) -> Status {
    let Some(s) = state.read_mut::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
        return missing_state();
    };
    s.update_with_pod(&pod.pod, pod_to_schedule, node, delta);
    Status::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_paths_keep_the_two_smallest() {
        // Upstream filtering_test.go TestPreFilterState "normal case with two spreadConstraints":
        // node counts 2/1/0/4 -> {node-x 0, node-b 1}.
        let mut p = CriticalPaths::default();
        for (v, n) in [("node-a", 2), ("node-b", 1), ("node-x", 0), ("node-y", 4)] {
            p.update(v, n);
        }
        assert_eq!(p.0[0].topology_value, "node-x");
        assert_eq!(p.0[0].match_num, 0);
        assert_eq!(p.0[1].topology_value, "node-b");
        assert_eq!(p.0[1].match_num, 1);
        // An existing path going up swaps the two.
        p.update("node-x", 3);
        assert_eq!(p.0[0].topology_value, "node-b");
        assert_eq!(p.0[1].match_num, 3);
    }
}
