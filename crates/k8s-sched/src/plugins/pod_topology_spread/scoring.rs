//! PodTopologySpread's soft constraints (`whenUnsatisfiable: ScheduleAnyway`): PreScore counts
//! matching pods per domain of the filtered nodes over every node; Score gives each node
//! `sum over constraints of (pods in its domain * log(domains + 2) + maxSkew - 1)`, rounded
//! (`kubernetes.io/hostname` constraints count the node's own pods); NormalizeScore maps it so
//! fewer pods score higher: `100 * (max + min - score) / max`, nodes missing a topology key
//! scoring 0. Mirrors upstream `pkg/scheduler/framework/plugins/podtopologyspread/scoring.go`.
//!
//! [`PreScoreState::compute`] is upstream's count over every pod of every node, the reference;
//! [`PreScoreState::compute_indexed`] gives the same state from the per-selector counters of
//! `topology_counts` (the ones PreFilter reads), finding the filtered nodes' domains by
//! node position instead of label lookups, and Score then reads a node's domains and a hostname
//! constraint's count on the node from the same arrays ([`IndexedScore`]) instead of its labels
//! and pods.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::runtime::node_arrays::NodeGenerations;
use k8s_sched_framework::{CycleState, NodeInfo, NodeScore, Status, MAX_NODE_SCORE};
use k8s_types::core::node::node_labels;
use k8s_types::core::Pod;

use super::common::{
    count_pods_match_selector, node_labels_match_spread_constraints, TopologySpreadConstraint,
};
use crate::plugins::helper::go_round;
use crate::plugins::node_affinity::has_required_node_affinity;
use crate::topology_counts::{
    CounterId, DomainView, PodMatcher, SnapshotPositions, TopologyIndex, MAX_COUNTERS, NO_DOMAIN,
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
    /// Score's per-node inputs by node position, when PreScore read the topology index (`None`
    /// for [`PreScoreState::compute`]: Score then reads the node's labels and counts its pods).
    pub indexed: Option<IndexedScore>,
}

/// What Score reads for a node of the snapshot PreScore counted, by the node's position (address)
/// in it instead of its labels and pods: the generation the index counted at each position
/// (checked once per node: a node outside the snapshot, or changed since it was counted, is
/// scored from its labels and pods), and per constraint the node's domain id with the
/// constraint's term of the score, `scoreForCount` of its domain's count computed once per
/// domain, or for a `kubernetes.io/hostname` constraint from the matching pods on the node.
#[derive(Clone, Debug)]
pub struct IndexedScore {
    positions: SnapshotPositions,
    /// Per node position: the generation counted there (0: none). Every view of one index
    /// shares it.
    gens: Arc<Vec<u64>>,
    constraints: Vec<ScoreTerm>,
}

/// One constraint's share of [`IndexedScore`].
#[derive(Clone, Debug)]
struct ScoreTerm {
    /// Per node position: the domain id ([`NO_DOMAIN`]: the node lacks the key and the
    /// constraint adds nothing).
    domains: Arc<Vec<u32>>,
    count: ScoreCount,
}

/// Where [`IndexedScore`] finds a constraint's term for a node.
#[derive(Clone, Debug)]
enum ScoreCount {
    /// `scoreForCount` of the matching pods on the node (`kubernetes.io/hostname`), by position.
    PerNode {
        counts: Arc<Vec<u32>>,
        max_skew: i32,
        weight: f64,
    },
    /// `scoreForCount` of the node's domain's count, by domain id (a domain of no filtered node
    /// counts 0).
    PerDomain { scores: Vec<f64>, zero: f64 },
}

/// A [`ScoreTerm`] with its arrays borrowed (read per node without going through the `Arc`s).
#[derive(Clone, Copy)]
struct TermRef<'a> {
    domains: &'a [u32],
    count: CountRef<'a>,
}

#[derive(Clone, Copy)]
enum CountRef<'a> {
    PerNode {
        counts: &'a [u32],
        max_skew: i32,
        weight: f64,
    },
    PerDomain {
        scores: &'a [f64],
        zero: f64,
    },
}

impl ScoreTerm {
    fn borrow(&self) -> TermRef<'_> {
        TermRef {
            domains: &self.domains,
            count: match &self.count {
                ScoreCount::PerNode {
                    counts,
                    max_skew,
                    weight,
                } => CountRef::PerNode {
                    counts,
                    max_skew: *max_skew,
                    weight: *weight,
                },
                ScoreCount::PerDomain { scores, zero } => CountRef::PerDomain {
                    scores,
                    zero: *zero,
                },
            },
        }
    }
}

impl IndexedScore {
    /// The node's position when it is a node of the snapshot as counted.
    #[inline]
    fn counted_position(&self, node: &NodeInfo) -> Option<usize> {
        let pos = self.positions.position(node)?;
        match self.gens.get(pos) {
            Some(&g) if g != 0 && g == node.generation() => Some(pos),
            _ => None,
        }
    }

    /// True when Score reads `node` by position (it is a node of the snapshot as counted).
    pub fn knows(&self, node: &NodeInfo) -> bool {
        self.raw(node).is_some()
    }

    /// Upstream `Score`'s sum for `node` (not ignored), before rounding; `None` when `node` is
    /// not a node of the snapshot as counted.
    fn raw(&self, node: &NodeInfo) -> Option<f64> {
        self.raw_with(self.constraints.iter().map(ScoreTerm::borrow), node)
    }

    /// [`IndexedScore::raw`] with the terms borrowed once for many nodes. The terms are added
    /// in constraint order, each computed as `scoreForCount` computes it, so the sum is the same
    /// `f64`.
    #[inline]
    fn raw_with<'a>(
        &self,
        terms: impl IntoIterator<Item = TermRef<'a>>,
        node: &NodeInfo,
    ) -> Option<f64> {
        let pos = self.counted_position(node)?;
        let mut score = 0.0f64;
        for t in terms {
            let d = *t.domains.get(pos)?;
            // No such label: the constraint adds nothing.
            if d == NO_DOMAIN {
                continue;
            }
            score += match t.count {
                CountRef::PerNode {
                    counts,
                    max_skew,
                    weight,
                } => score_for_count(i64::from(*counts.get(pos)?), max_skew, weight),
                CountRef::PerDomain { scores, zero } => {
                    scores.get(d as usize).copied().unwrap_or(zero)
                }
            };
        }
        Some(score)
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
    let weights = weights(constraints, &counts, filtered.len() - ignored_nodes.len());
    (counts, ignored_nodes, weights)
}

/// [`init`] from the index's domain arrays: the filtered nodes' domains by node position and
/// domain id, no label lookup. `None` when a filtered node is not a node of the snapshot the
/// index counted (the caller then runs [`init`]).
fn init_indexed(
    constraints: &[TopologySpreadConstraint],
    ids: &[CounterId],
    views: &[DomainView],
    positions: SnapshotPositions,
    index: &TopologyIndex,
    filtered: &[&NodeInfo],
    require_all_topologies: bool,
) -> Option<Init> {
    let host: Vec<bool> = constraints
        .iter()
        .map(|c| c.topology_key == node_labels::HOSTNAME)
        .collect();
    // Per constraint: which domain ids a filtered node is in; the last entry stands for the
    // nodes without the key (domain ""). None for hostname constraints.
    let mut seen: Vec<Vec<bool>> = ids
        .iter()
        .zip(&host)
        .map(|(&id, &h)| match h {
            true => Vec::new(),
            false => vec![false; index.domain_ids(id) + 1],
        })
        .collect();
    // Every view shares the generations of the index; a node is read by position when the
    // generation counted there is its own. First the filtered nodes' positions (all of them
    // known, or the caller reads labels), then each view's domains over them.
    let gens: &[u64] = views.first().map_or(&[], |v| v.arrays().0.as_slice());
    let domains: Vec<&[u32]> = views.iter().map(|v| v.arrays().1.as_slice()).collect();
    if domains.iter().any(|d| d.len() < gens.len()) {
        return None;
    }
    let mut at: Vec<usize> = Vec::with_capacity(filtered.len());
    for node in filtered {
        let pos = positions.position(node)?;
        match gens.get(pos) {
            Some(&g) if g != 0 && g == node.generation() => at.push(pos),
            _ => return None,
        }
    }
    let mut ignored_nodes = BTreeSet::new();
    if require_all_topologies {
        let mut kept = 0;
        for i in 0..at.len() {
            let pos = at[i];
            if domains.iter().any(|d| d[pos] == NO_DOMAIN) {
                ignored_nodes.insert(filtered[i].name().to_string());
            } else {
                at[kept] = pos;
                kept += 1;
            }
        }
        at.truncate(kept);
    }
    for ((d, seen), &h) in domains.iter().zip(&mut seen).zip(&host) {
        if h {
            continue;
        }
        let without_key = seen.len() - 1;
        for &pos in &at {
            let slot = match d[pos] {
                NO_DOMAIN => without_key,
                id => id as usize,
            };
            seen[slot] = true;
        }
    }
    let counts: Vec<BTreeMap<String, i64>> = seen
        .iter()
        .zip(ids)
        .map(|(s, &id)| {
            s.iter()
                .enumerate()
                .filter(|(_, &x)| x)
                .map(|(d, _)| match d + 1 == s.len() {
                    true => (String::new(), 0),
                    false => (index.domain_value(id, d as u32).to_string(), 0),
                })
                .collect()
        })
        .collect();
    let weights = weights(constraints, &counts, filtered.len() - ignored_nodes.len());
    Some((counts, ignored_nodes, weights))
}

/// Per constraint, upstream's `topologyNormalizingWeight` of its number of domains (`nodes`, the
/// filtered nodes not ignored, for `kubernetes.io/hostname`).
fn weights(
    constraints: &[TopologySpreadConstraint],
    counts: &[BTreeMap<String, i64>],
    nodes: usize,
) -> Vec<f64> {
    constraints
        .iter()
        .zip(counts)
        .map(|(c, m)| {
            let size = if c.topology_key == node_labels::HOSTNAME {
                nodes
            } else {
                m.len()
            };
            topology_normalizing_weight(size)
        })
        .collect()
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
            indexed: None,
            constraints,
            ignored_nodes,
            topology_value_to_pod_counts: counts,
            topology_normalizing_weight: weights,
        }
    }

    /// [`PreScoreState::compute`] from the counters of `index` (synced to `all_nodes` here): the
    /// same state, without visiting pods or reading labels, plus what Score reads by node position
    /// ([`IndexedScore`]). A constraint's domain counts are the counters' per-domain totals when every node
    /// counts for it: no node inclusion policy can exclude a node (the pod has no nodeSelector or
    /// required node affinity under `nodeAffinityPolicy: Honor`, and no node is tainted under
    /// `nodeTaintsPolicy: Honor`) and, when `require_all_topologies`, every node has every
    /// constraint's key (without it, the nodes lacking the key add their pods to the domain
    /// `""`, as upstream reads a missing label as `""`). Otherwise the per-node counts are summed
    /// over the nodes upstream's `PreScore` counts. `generations` as for
    /// `TopologyIndex::sync_generations`.
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
        let positions = SnapshotPositions::of(all_nodes);
        let views: Vec<DomainView> = ids.iter().map(|&id| index.domain_view(id)).collect();
        let (mut counts, ignored_nodes, weights) = init_indexed(
            &constraints,
            &ids,
            &views,
            positions,
            index,
            filtered,
            require_all_topologies,
        )
        .unwrap_or_else(|| init(&constraints, filtered, require_all_topologies));
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
        // Every view shares the generations of the index as synced above.
        let gens = views
            .first()
            .map(|v| Arc::clone(v.arrays().0))
            .unwrap_or_default();
        let score_terms = constraints
            .iter()
            .zip(&ids)
            .zip(views)
            .enumerate()
            .map(|(i, ((c, &id), view))| {
                debug_assert!(Arc::ptr_eq(view.arrays().0, &gens));
                let weight = weights[i];
                let count = if c.topology_key == node_labels::HOSTNAME {
                    ScoreCount::PerNode {
                        counts: Arc::clone(index.node_counts(id)),
                        max_skew: c.max_skew,
                        weight,
                    }
                } else {
                    let zero = score_for_count(0, c.max_skew, weight);
                    let mut scores = vec![zero; index.domain_ids(id)];
                    for (value, &n) in &counts[i] {
                        // "" without a domain id: the nodes lacking the key, which Score skips.
                        if let Some(d) = index.domain_id(id, value) {
                            scores[d as usize] = score_for_count(n, c.max_skew, weight);
                        }
                    }
                    ScoreCount::PerDomain { scores, zero }
                };
                ScoreTerm {
                    domains: Arc::clone(view.arrays().1),
                    count,
                }
            })
            .collect();
        PreScoreState {
            constraints,
            ignored_nodes,
            topology_value_to_pod_counts: counts,
            topology_normalizing_weight: weights,
            indexed: Some(IndexedScore {
                positions,
                gens,
                constraints: score_terms,
            }),
        }
    }

    /// Upstream `Score` on each of `nodes` into `scores`: [`PreScoreState::score`] per node,
    /// with what Score reads by position borrowed once.
    pub fn score_nodes(&self, pod: &Pod, nodes: &[&NodeInfo], scores: &mut [i64]) {
        let indexed = self
            .indexed
            .as_ref()
            .filter(|_| self.ignored_nodes.is_empty());
        let Some(ix) = indexed else {
            for (node, out) in nodes.iter().zip(scores.iter_mut()) {
                *out = self.score(pod, node);
            }
            return;
        };
        let terms: Vec<TermRef<'_>> = ix.constraints.iter().map(ScoreTerm::borrow).collect();
        for (node, out) in nodes.iter().zip(scores.iter_mut()) {
            *out = match ix.raw_with(terms.iter().copied(), node) {
                // Go's math.Round rounds half away from zero (`go_round`).
                Some(raw) => go_round(raw),
                None => self.score_from_labels(pod, node),
            };
        }
    }

    /// Upstream `Score`: the node's raw score.
    pub fn score(&self, pod: &Pod, node: &NodeInfo) -> i64 {
        if !self.ignored_nodes.is_empty() && self.ignored_nodes.contains(node.name()) {
            return 0;
        }
        if let Some(raw) = self.indexed.as_ref().and_then(|x| x.raw(node)) {
            // Go's math.Round rounds half away from zero (`go_round`).
            return go_round(raw);
        }
        self.score_from_labels(pod, node)
    }

    /// [`PreScoreState::score`] of a node not ignored, from its labels and pods.
    fn score_from_labels(&self, pod: &Pod, node: &NodeInfo) -> i64 {
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
        // Go's math.Round rounds half away from zero (`go_round`).
        go_round(score)
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
