//! PodTopologySpread's soft constraints (`whenUnsatisfiable: ScheduleAnyway`): PreScore counts
//! matching pods per domain of the filtered nodes over every node; Score gives each node
//! `sum over constraints of (pods in its domain * log(domains + 2) + maxSkew - 1)`, rounded
//! (`kubernetes.io/hostname` constraints count the node's own pods); NormalizeScore maps it so
//! fewer pods score higher: `100 * (max + min - score) / max`, nodes missing a topology key
//! scoring 0. Mirrors upstream `pkg/scheduler/framework/plugins/podtopologyspread/scoring.go`.
//!
//! [`PreScoreState::compute`] is upstream's count over every pod of every node, the reference;
//! [`PreScoreState::compute_indexed`] gives the same state from the per-selector counters of
//! [`crate::topology_counts`] (the ones PreFilter reads), and Score then reads a hostname
//! constraint's count on a node from the same counters instead of visiting the node's pods.

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::core::node::node_labels;
use k8s_types::core::Pod;
use k8s_types::framework::{
    CycleState, NodeGenerations, NodeInfo, NodeScore, Status, MAX_NODE_SCORE,
};

use super::common::{
    count_pods_match_selector, node_labels_match_spread_constraints, TopologySpreadConstraint,
};
use crate::plugins::node_affinity::has_required_node_affinity;
use crate::topology_counts::{
    NodeCountView, PodMatcher, SnapshotPositions, TopologyIndex, MAX_COUNTERS,
};

/// CycleState key of the PreScore state (upstream `"PreScore" + Name`).
pub const PRE_SCORE_STATE_KEY: &str = "PreScorePodTopologySpread";

/// What PreScore computed (upstream `preScoreState`).
#[derive(Clone, Debug, Default)]
pub struct PreScoreState {
    /// The pod's soft constraints (or the soft default constraints).
    pub constraints: Vec<TopologySpreadConstraint>,
    /// Filtered nodes missing one of the topology keys: they score 0.
    pub ignored_nodes: BTreeSet<String>,
    /// Per constraint: domain of a filtered node -> matching pods on all nodes. Empty for
    /// `kubernetes.io/hostname` constraints (counted per node in Score).
    pub topology_value_to_pod_counts: Vec<BTreeMap<String, i64>>,
    /// Per constraint: `ln(number of domains + 2)`.
    pub topology_normalizing_weight: Vec<f64>,
    /// Per constraint: for a `kubernetes.io/hostname` constraint of a state read from the
    /// topology index, the matching pods per node of the snapshot (Score's count; empty
    /// otherwise, and Score counts the node's pods).
    pub node_counts: Vec<Option<NodeCounts>>,
}

/// The matching pods of one constraint on each node of the snapshot PreScore read, by the node's
/// position (address) in it; a node outside it, or changed since, has no count here.
#[derive(Clone, Debug)]
pub struct NodeCounts {
    positions: SnapshotPositions,
    view: NodeCountView,
}

impl NodeCounts {
    /// The count on `node`, when it is a node of the snapshot as counted.
    #[inline]
    pub fn get(&self, node: &NodeInfo) -> Option<i64> {
        self.view.count(self.positions.position(node)?, node)
    }
}

/// Upstream `initPreScoreState`'s walk over the filtered nodes: per constraint, every domain of a
/// filtered node (with count 0; none for `kubernetes.io/hostname`, counted per node in Score),
/// the filtered nodes missing a topology key when `require_all_topologies` (a node without the
/// key is in the domain `""` otherwise), and the normalizing weights.
type Init = (Vec<BTreeMap<String, i64>>, BTreeSet<String>, Vec<f64>);

fn init(
    constraints: &[TopologySpreadConstraint],
    filtered: &[&NodeInfo],
    require_all_topologies: bool,
) -> Init {
    let mut counts: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new(); constraints.len()];
    let mut ignored_nodes = BTreeSet::new();
    for node in filtered {
        let labels = &node.node().metadata.labels;
        if require_all_topologies && !node_labels_match_spread_constraints(labels, constraints) {
            ignored_nodes.insert(node.name().to_string());
            continue;
        }
        for (i, c) in constraints.iter().enumerate() {
            // Per-node counts are computed in Score.
            if c.topology_key == node_labels::HOSTNAME {
                continue;
            }
            let value = labels
                .get(&c.topology_key)
                .map(String::as_str)
                .unwrap_or("");
            if !counts[i].contains_key(value) {
                counts[i].insert(value.to_string(), 0);
            }
        }
    }
    let weights = constraints
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let size = if c.topology_key == node_labels::HOSTNAME {
                filtered.len() - ignored_nodes.len()
            } else {
                counts[i].len()
            };
            topology_normalizing_weight(size)
        })
        .collect();
    (counts, ignored_nodes, weights)
}

/// Upstream `topologyNormalizingWeight`: `ln(size + 2)`.
pub fn topology_normalizing_weight(size: usize) -> f64 {
    (size as f64 + 2.0).ln()
}

/// Upstream `scoreForCount`: `cnt * weight + (maxSkew - 1)`.
pub fn score_for_count(cnt: i64, max_skew: i32, tp_weight: f64) -> f64 {
    cnt as f64 * tp_weight + f64::from(max_skew - 1)
}

impl PreScoreState {
    /// Upstream `initPreScoreState` + the counting of `PreScore`: domains come from `filtered`,
    /// pods are counted on `all_nodes`. `require_all_topologies` is false only for the system
    /// default constraints (nodes without a zone then form the zone `""`).
    pub fn compute(
        pod: &Pod,
        constraints: Vec<TopologySpreadConstraint>,
        filtered: &[&NodeInfo],
        all_nodes: &[NodeInfo],
        require_all_topologies: bool,
    ) -> PreScoreState {
        let (mut counts, ignored_nodes, weights) =
            init(&constraints, filtered, require_all_topologies);
        let ns = pod.metadata.namespace();
        for node in all_nodes {
            let labels = &node.node().metadata.labels;
            if require_all_topologies && !node_labels_match_spread_constraints(labels, &constraints)
            {
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
                // Only domains of candidate nodes are counted.
                let Some(total) = counts[i].get_mut(value) else {
                    continue;
                };
                *total += count_pods_match_selector(node.pods(), &c.selector, ns);
            }
        }
        PreScoreState {
            node_counts: vec![None; constraints.len()],
            constraints,
            ignored_nodes,
            topology_value_to_pod_counts: counts,
            topology_normalizing_weight: weights,
        }
    }

    /// [`PreScoreState::compute`] from the counters of `index` (synced to `all_nodes` here): the
    /// same state, without visiting pods, plus each hostname constraint's per-node counts for
    /// Score. A constraint's domain counts are the counters' per-domain totals when every node
    /// counts for it: no node inclusion policy can exclude a node (the pod has no nodeSelector or
    /// required node affinity under `nodeAffinityPolicy: Honor`, and no node is tainted under
    /// `nodeTaintsPolicy: Honor`) and, when `require_all_topologies`, every node has every
    /// constraint's key (without it, the nodes lacking the key add their pods to the domain
    /// `""`, as upstream reads a missing label as `""`). Otherwise the per-node counts are summed
    /// over the nodes upstream's `PreScore` counts. `generations` as for
    /// [`TopologyIndex::sync_generations`].
    pub fn compute_indexed(
        pod: &Pod,
        constraints: Vec<TopologySpreadConstraint>,
        filtered: &[&NodeInfo],
        all_nodes: &[NodeInfo],
        require_all_topologies: bool,
        generations: Option<NodeGenerations>,
        index: &mut TopologyIndex,
    ) -> PreScoreState {
        if constraints.len() > MAX_COUNTERS / 2 {
            return PreScoreState::compute(
                pod,
                constraints,
                filtered,
                all_nodes,
                require_all_topologies,
            );
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
        let (mut counts, ignored_nodes, weights) =
            init(&constraints, filtered, require_all_topologies);
        let has_node_affinity = has_required_node_affinity(pod);
        let tainted = index.tainted_nodes() > 0;
        let every_node_has_keys = !require_all_topologies
            || constraints
                .iter()
                .all(|c| index.all_nodes_have_key(&c.topology_key));
        for (i, c) in constraints.iter().enumerate() {
            // Hostname constraints have no domains here (Score counts per node).
            if counts[i].is_empty() {
                continue;
            }
            let every_node_counts = every_node_has_keys
                && !(c.honor_node_affinity && has_node_affinity)
                && !(c.honor_node_taints && tainted);
            if every_node_counts {
                let totals = index.totals(ids[i]);
                for (value, n) in counts[i].iter_mut() {
                    *n = totals.get(value.as_str()).copied().unwrap_or(0);
                }
                if !require_all_topologies {
                    if let Some(n) = counts[i].get_mut("") {
                        *n += index.count_without_key(ids[i]);
                    }
                }
                continue;
            }
            for (pos, node) in all_nodes.iter().enumerate() {
                if require_all_topologies
                    && ids.iter().any(|&id| index.domain_at(id, pos).is_none())
                {
                    continue;
                }
                let value = index.domain_at(ids[i], pos).unwrap_or("");
                // Only domains of candidate nodes are counted.
                let Some(total) = counts[i].get_mut(value) else {
                    continue;
                };
                if !c.match_node_inclusion_policies(pod, node) {
                    continue;
                }
                *total += index.count_on_node(ids[i], pos);
            }
        }
        let positions = SnapshotPositions::of(all_nodes);
        let node_counts = constraints
            .iter()
            .zip(&ids)
            .map(|(c, &id)| {
                (c.topology_key == node_labels::HOSTNAME).then(|| NodeCounts {
                    positions,
                    view: index.node_count_view(id),
                })
            })
            .collect();
        PreScoreState {
            constraints,
            ignored_nodes,
            topology_value_to_pod_counts: counts,
            topology_normalizing_weight: weights,
            node_counts,
        }
    }

    /// Upstream `Score`: the node's raw score.
    pub fn score(&self, pod: &Pod, node: &NodeInfo) -> i64 {
        if self.ignored_nodes.contains(node.name()) {
            return 0;
        }
        let labels = &node.node().metadata.labels;
        let mut score = 0.0f64;
        for (i, c) in self.constraints.iter().enumerate() {
            let Some(tp_val) = labels.get(&c.topology_key) else {
                continue;
            };
            let cnt = if c.topology_key == node_labels::HOSTNAME {
                match self.node_counts.get(i).and_then(Option::as_ref) {
                    Some(n) => n.get(node),
                    None => None,
                }
                .unwrap_or_else(|| {
                    count_pods_match_selector(node.pods(), &c.selector, pod.metadata.namespace())
                })
            } else {
                self.topology_value_to_pod_counts[i]
                    .get(tp_val.as_str())
                    .copied()
                    .unwrap_or(0)
            };
            score += score_for_count(cnt, c.max_skew, self.topology_normalizing_weight[i]);
        }
        // Go's math.Round rounds half away from zero, as f64::round.
        score.round() as i64
    }

    /// Upstream `NormalizeScore`.
    pub fn normalize(&self, scores: &mut [NodeScore<'_>]) {
        let mut min_score = i64::MAX;
        let mut max_score = 0i64;
        for s in scores.iter() {
            if self.ignored_nodes.contains(s.name) {
                continue;
            }
            min_score = min_score.min(s.score);
            max_score = max_score.max(s.score);
        }
        for s in scores.iter_mut() {
            if self.ignored_nodes.contains(s.name) {
                s.score = 0;
                continue;
            }
            if max_score == 0 {
                s.score = MAX_NODE_SCORE;
                continue;
            }
            s.score = MAX_NODE_SCORE * (max_score + min_score - s.score) / max_score;
        }
    }
}

/// Status of a missing PreScore state (upstream `getPreScoreState` error).
pub fn missing_state() -> Status {
    Status::error(format!(
        "error reading {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
    ))
}

/// Reads the PreScore state.
pub fn read(state: &CycleState) -> Option<&PreScoreState> {
    state.read::<PreScoreState>(PRE_SCORE_STATE_KEY)
}
