//! InterPodAffinity's preferred terms: PreScore sums, per topology pair, the weights of the
//! incoming pod's preferred (anti-)affinity terms matched by existing pods, and of the existing
//! pods' required affinity (`hardPodAffinityWeight`) and preferred (anti-)affinity terms matched
//! by the incoming pod; Score adds up the pairs of the node; NormalizeScore scales min..max to
//! 0..100. Mirrors upstream `pkg/scheduler/framework/plugins/interpodaffinity/scoring.go`.

use std::collections::BTreeMap;

use k8s_sched_framework::node_info::pod_has_affinity;
use k8s_sched_framework::{CycleState, NodeInfo, NodeScore, Status, MAX_NODE_SCORE};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::{Node, Pod};

use super::terms::{
    has_preferred_terms, namespace_labels, preferred_terms, required_terms, AffinityTerm,
    NamespaceLabels, WeightedAffinityTerm,
};

/// CycleState key of the PreScore state (upstream `"PreScore" + Name`).
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreInterPodAffinity";

/// Topology key -> value -> summed weight (upstream `scoreMap`).
pub type ScoreMap = BTreeMap<String, BTreeMap<String, i64>>;

/// What PreScore computed (upstream `preScoreState`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreScoreState {
    /// Pair -> summed weight; a pair is present once a term matched, even if its sum is 0.
    pub topology_score: ScoreMap,
}

/// Upstream `scoreMap.processTerm`.
fn process_term(
    m: &mut ScoreMap,
    term: &AffinityTerm,
    weight: i32,
    pod: &Pod,
    ns_labels: &NamespaceLabels,
    node: &Node,
    multiplier: i32,
) {
    if !term.matches(pod, ns_labels) {
        return;
    }
    if let Some(tv) = node.metadata.labels.get(&term.topology_key) {
        *m.entry(term.topology_key.clone())
            .or_default()
            .entry(tv.clone())
            .or_insert(0) += i64::from(weight * multiplier);
    }
}

fn process_terms(
    m: &mut ScoreMap,
    terms: &[WeightedAffinityTerm],
    pod: &Pod,
    ns_labels: &NamespaceLabels,
    node: &Node,
    multiplier: i32,
) {
    for t in terms {
        process_term(m, &t.term, t.weight, pod, ns_labels, node, multiplier);
    }
}

/// The incoming pod's processed preferred terms and namespace labels.
struct Incoming<'a> {
    pod: &'a Pod,
    affinity: Vec<WeightedAffinityTerm>,
    anti_affinity: Vec<WeightedAffinityTerm>,
    namespace_labels: NamespaceLabels,
}

/// Upstream `processExistingPod`.
fn process_existing_pod(
    m: &mut ScoreMap,
    incoming: &Incoming<'_>,
    existing: &Pod,
    node: &Node,
    hard_pod_affinity_weight: i32,
) {
    if node.metadata.labels.is_empty() {
        return;
    }
    // The incoming pod's terms have their namespace selectors merged: no namespace labels.
    let none = NamespaceLabels::new();
    process_terms(m, &incoming.affinity, existing, &none, node, 1);
    process_terms(m, &incoming.anti_affinity, existing, &none, node, -1);
    let ns = &incoming.namespace_labels;
    if hard_pod_affinity_weight > 0 {
        for t in required_terms(existing, false) {
            process_term(m, &t, hard_pod_affinity_weight, incoming.pod, ns, node, 1);
        }
    }
    process_terms(
        m,
        &preferred_terms(existing, false),
        incoming.pod,
        ns,
        node,
        1,
    );
    process_terms(
        m,
        &preferred_terms(existing, true),
        incoming.pod,
        ns,
        node,
        -1,
    );
}

/// Upstream `PreScore`: `Skip` when the incoming pod has no preferred terms and
/// `ignore_preferred_terms_of_existing_pods` is set, or when no term matched anywhere.
/// `affinity_nodes` are the nodes with pods with affinity when the caller keeps that list
/// (upstream `HavePodsWithAffinityList`); `None` finds them in `all_nodes`.
#[allow(clippy::too_many_arguments)]
pub fn pre_score(
    state: &mut CycleState,
    pod: &Pod,
    all_nodes: &[NodeInfo],
    affinity_nodes: Option<&[&NodeInfo]>,
    api: Option<&dyn ApiClient>,
    hard_pod_affinity_weight: i32,
    ignore_preferred_terms_of_existing_pods: bool,
) -> Status {
    let has_constraints = has_preferred_terms(pod, false) || has_preferred_terms(pod, true);
    if ignore_preferred_terms_of_existing_pods && !has_constraints {
        return Status::skip();
    }
    let mut incoming = Incoming {
        pod,
        affinity: preferred_terms(pod, false),
        anti_affinity: preferred_terms(pod, true),
        namespace_labels: NamespaceLabels::new(),
    };
    for t in incoming
        .affinity
        .iter_mut()
        .chain(incoming.anti_affinity.iter_mut())
    {
        t.term.merge_namespaces(api);
    }
    // Unless the incoming pod has preferred terms, only pods with affinity matter.
    let nodes: Vec<&NodeInfo> = match affinity_nodes {
        Some(list) if !has_constraints => list.to_vec(),
        _ => all_nodes
            .iter()
            .filter(|n| has_constraints || n.num_pods_with_affinity() > 0)
            .collect(),
    };
    let any_relevant = has_constraints || !nodes.is_empty();
    if any_relevant {
        incoming.namespace_labels = namespace_labels(pod.metadata.namespace(), api);
    }
    let mut topology_score = ScoreMap::new();
    for node in nodes {
        for pi in node.pods() {
            if !has_constraints && !pod_has_affinity(&pi.pod) {
                continue;
            }
            process_existing_pod(
                &mut topology_score,
                &incoming,
                &pi.pod,
                node.node(),
                hard_pod_affinity_weight,
            );
        }
    }
    if topology_score.is_empty() {
        return Status::skip();
    }
    state.write(PRE_SCORE_STATE_KEY, PreScoreState { topology_score });
    Status::success()
}

impl PreScoreState {
    /// Upstream `Score`: the summed weights of the node's pairs (positive for affinity, negative
    /// for anti-affinity).
    pub fn score(&self, node: &NodeInfo) -> i64 {
        let labels = &node.node().metadata.labels;
        self.topology_score
            .iter()
            .filter_map(|(k, values)| labels.get(k).and_then(|v| values.get(v)))
            .sum()
    }

    /// Upstream `NormalizeScore`: `100 * (score - min) / (max - min)` in floating point,
    /// truncated; all 0 when every node has the same score.
    pub fn normalize(&self, scores: &mut [NodeScore<'_>]) {
        if self.topology_score.is_empty() {
            return;
        }
        let mut min_count = i64::MAX;
        let mut max_count = i64::MIN;
        for s in scores.iter() {
            max_count = max_count.max(s.score);
            min_count = min_count.min(s.score);
        }
        let diff = max_count.saturating_sub(min_count);
        for s in scores.iter_mut() {
            let f = if diff > 0 {
                MAX_NODE_SCORE as f64 * ((s.score - min_count) as f64 / diff as f64)
            } else {
                0.0
            };
            s.score = f as i64;
        }
    }
}

/// Status of a missing PreScore state.
pub fn missing_state() -> Status {
    Status::error(format!(
        "failed to read {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
    ))
}

/// Reads the PreScore state.
pub fn read(state: &CycleState) -> Option<&PreScoreState> {
    state.read::<PreScoreState>(PRE_SCORE_STATE_KEY)
}
