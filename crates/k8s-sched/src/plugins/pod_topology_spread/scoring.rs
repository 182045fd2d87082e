//! PodTopologySpread's soft constraints (`whenUnsatisfiable: ScheduleAnyway`): PreScore counts
//! matching pods per domain of the filtered nodes over every node; Score gives each node
//! `sum over constraints of (pods in its domain * log(domains + 2) + maxSkew - 1)`, rounded;
//! NormalizeScore maps it so fewer pods score higher: `100 * (max + min - score) / max`, nodes
//! missing a topology key scoring 0. Mirrors upstream
//! `pkg/scheduler/framework/plugins/podtopologyspread/scoring.go`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::core::node::node_labels;
use k8s_types::core::Pod;
use k8s_types::framework::{CycleState, NodeInfo, NodeScore, Status, MAX_NODE_SCORE};

use super::common::{
    count_pods_match_selector, node_labels_match_spread_constraints, TopologySpreadConstraint,
};

/// CycleState key of the PreScore state (upstream `"PreScore" + Name`).
pub const PRE_SCORE_STATE_KEY: &str = "PreScorePodTopologySpread";

/// What PreScore computed (upstream `preScoreState`).
#[derive(Clone, Debug, Default, PartialEq)]
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
        let mut counts: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new(); constraints.len()];
        let mut ignored_nodes = BTreeSet::new();
        for node in filtered {
            let labels = &node.node().metadata.labels;
            if require_all_topologies && !node_labels_match_spread_constraints(labels, &constraints)
            {
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
            constraints,
            ignored_nodes,
            topology_value_to_pod_counts: counts,
            topology_normalizing_weight: weights,
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
                count_pods_match_selector(node.pods(), &c.selector, pod.metadata.namespace())
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
