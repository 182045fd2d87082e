//! InterPodAffinity's required terms: PreFilter counts, per topology pair, the existing pods whose
//! required anti-affinity matches the incoming pod, and the existing pods matching the incoming
//! pod's required affinity and anti-affinity terms ([`PreFilterState`]; with a
//! [`TopologyIndex`] the counts come from its per-term and per-selector tables instead of
//! visiting every pod, [`PreFilterState::compute_indexed`]); Filter checks a node's
//! pairs against those counts, with the "first pod of a group" exception for affinity;
//! AddPod/RemovePod update the counts for preemption. Mirrors upstream
//! `pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`.

use std::sync::Arc;

use crate::runtime::node_arrays::NodeGenerations;
use k8s_sched_framework::node_info::{label_hash, pod_has_required_anti_affinity};
use k8s_sched_framework::{CycleState, NodeInfo, PodInfo, Status};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::Pod;

use super::terms::{
    namespace_labels, pod_matches_all_affinity_terms, required_terms, AffinityTerm, CountsView,
    NamespaceLabels, TopologyCounts,
};
use crate::runtime::kernel::NodeGate;
use crate::topology_counts::{
    DomainView, NodeDomain, PodMatcher, SnapshotPositions, TopologyIndex,
};

/// CycleState key of the PreFilter state (upstream `"PreFilter" + Name`).
pub const PRE_FILTER_STATE_KEY: &str = "PreFilterInterPodAffinity";
/// Upstream `ErrReasonExistingAntiAffinityRulesNotMatch`.
pub const ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";
/// Upstream `ErrReasonAffinityRulesNotMatch`.
pub const ERR_REASON_AFFINITY_RULES_NOT_MATCH: &str = "node(s) didn't match pod affinity rules";
/// Upstream `ErrReasonAntiAffinityRulesNotMatch`.
pub const ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't match pod anti-affinity rules";

/// What PreFilter computed (upstream `preFilterState`). Cloned per node by preemption; the
/// incoming pod's terms and namespace labels are shared.
#[derive(Clone, Debug, Default)]
pub struct PreFilterState {
    /// Pairs -> existing pods whose required anti-affinity terms match the incoming pod.
    pub existing_anti_affinity_counts: CountsView,
    /// Pairs -> existing pods matching all of the incoming pod's required affinity terms.
    pub affinity_counts: CountsView,
    /// Pairs -> existing pods matching one of the incoming pod's required anti-affinity terms.
    pub anti_affinity_counts: CountsView,
    /// The incoming pod's required affinity terms (namespace selectors merged).
    pub affinity_terms: Arc<Vec<AffinityTerm>>,
    /// The incoming pod's required anti-affinity terms (namespace selectors merged).
    pub anti_affinity_terms: Arc<Vec<AffinityTerm>>,
    /// [`label_hash`] of each anti-affinity term's topology key, in term order.
    pub anti_affinity_key_hashes: Arc<Vec<u64>>,
    /// Labels of the incoming pod's namespace.
    pub namespace_labels: Arc<NamespaceLabels>,
    /// Placed pods with required pod affinity or preferred (anti-)affinity terms, the ones
    /// PreScore reads, when the index counted them (`None` otherwise).
    pub pods_with_scoring_terms: Option<usize>,
    /// The same verdicts by node position and integer domain id, when PreFilter read the
    /// index (`None` otherwise, and after AddPod/RemovePod).
    pub fast: Option<Arc<FastFilter>>,
}

/// What Filter needs to judge a node of the snapshot PreFilter counted without a label or
/// string lookup: per count table, the node's domain id and the domain's count (see
/// [`DomainView`]). The index's counts are never negative, so "the pair's count summed over
/// the terms with that key is > 0" is "one term's count is > 0". Gives exactly
/// [`filter_with`]'s verdict, or nothing for a node it does not know.
#[derive(Clone, Debug)]
pub struct FastFilter {
    positions: SnapshotPositions,
    /// Per incoming required affinity term.
    affinity: Vec<DomainView>,
    /// `affinity_counts` is empty and the pod matches all its own affinity terms.
    affinity_first_pod: bool,
    /// Per incoming required anti-affinity term.
    anti: Vec<DomainView>,
    /// Per placed pods' required anti-affinity term matching the incoming pod.
    existing: Vec<DomainView>,
}

/// Some view has a positive count in the node's domain; `None` when a view does not know the
/// node.
#[inline]
fn any_positive(views: &[DomainView], pos: usize, node: &NodeInfo) -> Option<bool> {
    for v in views {
        match v.domain(pos, node) {
            NodeDomain::Unknown => return None,
            NodeDomain::Missing => {}
            NodeDomain::Id(d) => {
                if v.count(d) > 0 {
                    return Some(true);
                }
            }
        }
    }
    Some(false)
}

impl FastFilter {
    /// The same verdicts as a fused-pass gate: every affinity term's key present and, unless
    /// the pod is the first of its group, a matching pod in each term's domain; no pod matching
    /// an anti-affinity term, and no existing pod's anti-affinity term, in the node's domains
    /// (a node without such a key passes those).
    pub fn gate(&self) -> NodeGate {
        let mut g = self.positions.gate();
        // The first pod of a group only needs the keys: any count passes.
        let min = if self.affinity_first_pod { i64::MIN } else { 1 };
        for v in &self.affinity {
            g.push(v.gate(min, i64::MAX, false));
        }
        for v in self.anti.iter().chain(&self.existing) {
            g.push(v.gate(i64::MIN, 0, true));
        }
        g
    }

    /// The verdict for `node`: `None` when the node is not one PreFilter counted.
    #[inline]
    pub fn judge(&self, node: &NodeInfo) -> Option<Status> {
        let pos = self.positions.position(node)?;
        let mut pods_exist = true;
        for v in &self.affinity {
            match v.domain(pos, node) {
                NodeDomain::Unknown => return None,
                NodeDomain::Missing => {
                    return Some(Status::unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH))
                }
                NodeDomain::Id(d) => {
                    if v.count(d) <= 0 {
                        pods_exist = false;
                    }
                }
            }
        }
        if !pods_exist && !self.affinity_first_pod {
            return Some(Status::unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH));
        }
        if any_positive(&self.anti, pos, node)? {
            return Some(Status::unschedulable(
                ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
            ));
        }
        if any_positive(&self.existing, pos, node)? {
            return Some(Status::unschedulable(
                ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
            ));
        }
        Some(Status::success())
    }
}

impl PreFilterState {
    /// Upstream `PreFilter` without the Skip decision: `None` when nothing constrains the pod
    /// (no required terms and no existing pod's anti-affinity matches it).
    ///
    /// `anti_nodes` are the nodes with pods with required anti-affinity when the caller keeps that
    /// list (upstream `HavePodsWithRequiredAntiAffinityList`); `None` finds them in `all_nodes`.
    pub fn compute(
        pod: &Pod,
        all_nodes: &[NodeInfo],
        anti_nodes: Option<&[&NodeInfo]>,
        api: Option<&dyn ApiClient>,
    ) -> Option<PreFilterState> {
        let anti_nodes: Vec<&NodeInfo> = match anti_nodes {
            Some(list) => list.to_vec(),
            None => all_nodes
                .iter()
                .filter(|n| n.num_pods_with_required_anti_affinity() > 0)
                .collect(),
        };
        let (affinity_terms, anti_affinity_terms, ns_labels) =
            incoming_terms(pod, !anti_nodes.is_empty(), api)?;

        // Existing pods' required anti-affinity (upstream getExistingAntiAffinityCounts over the
        // nodes that have such pods).
        let mut existing = TopologyCounts::default();
        for node in &anti_nodes {
            for pi in node.pods() {
                if !pod_has_required_anti_affinity(&pi.pod) {
                    continue;
                }
                let terms = required_terms(&pi.pod, true);
                existing.update_with_anti_affinity_terms(&terms, pod, &ns_labels, node.node(), 1);
            }
        }

        // Existing pods matching the incoming pod's terms (upstream
        // getIncomingAffinityAntiAffinityCounts over every pod of every node).
        let mut affinity = TopologyCounts::default();
        let mut anti = TopologyCounts::default();
        if !affinity_terms.is_empty() || !anti_affinity_terms.is_empty() {
            let none = NamespaceLabels::new();
            for node in all_nodes {
                for pi in node.pods() {
                    affinity.update_with_affinity_terms(&affinity_terms, &pi.pod, node.node(), 1);
                    anti.update_with_anti_affinity_terms(
                        &anti_affinity_terms,
                        &pi.pod,
                        &none,
                        node.node(),
                        1,
                    );
                }
            }
        }

        if existing.is_empty() && affinity_terms.is_empty() && anti_affinity_terms.is_empty() {
            return None;
        }
        Some(PreFilterState {
            existing_anti_affinity_counts: existing.into(),
            affinity_counts: affinity.into(),
            anti_affinity_counts: anti.into(),
            affinity_terms: Arc::new(affinity_terms),
            anti_affinity_key_hashes: Arc::new(
                anti_affinity_terms
                    .iter()
                    .map(|t| label_hash(&t.topology_key))
                    .collect(),
            ),
            anti_affinity_terms: Arc::new(anti_affinity_terms),
            namespace_labels: Arc::new(ns_labels),
            pods_with_scoring_terms: None,
            fast: None,
        })
    }

    /// [`PreFilterState::compute`] from `index` (synced to `all_nodes` here): the existing pods'
    /// anti-affinity counts are the tables of the distinct placed terms that match the incoming
    /// pod, and the incoming pod's terms read one counter per term (pods matching all affinity
    /// terms, or one anti-affinity term, per the term's topology key). The same counts, without
    /// visiting pods. `any_existing_anti` tells whether some node has pods with required
    /// anti-affinity (upstream `HavePodsWithRequiredAntiAffinityList`); it is only read when the
    /// pod has no required terms (true is always safe: the counts decide). `generations` are the
    /// nodes' generations in one array when the caller has them (`runtime::node_arrays::node_generations`).
    pub fn compute_indexed(
        pod: &Pod,
        all_nodes: &[NodeInfo],
        generations: Option<NodeGenerations>,
        any_existing_anti: bool,
        api: Option<&dyn ApiClient>,
        index: &mut TopologyIndex,
    ) -> Option<PreFilterState> {
        let (affinity_terms, anti_affinity_terms, ns_labels) =
            incoming_terms(pod, any_existing_anti, api)?;
        index.sync_with_terms(all_nodes, generations);

        let mut existing_views = Vec::new();
        let existing = CountsView::new(
            index
                .existing_anti_affinity_term_views()
                .filter(|(t, _, _)| t.matches(pod, &ns_labels))
                .map(|(t, m, view)| {
                    existing_views.push(view);
                    (t.topology_key.clone(), Arc::clone(m))
                })
                .collect(),
        );
        let mut affinity_parts = Vec::with_capacity(affinity_terms.len());
        let mut affinity_views = Vec::with_capacity(affinity_terms.len());
        if !affinity_terms.is_empty() {
            let matcher = PodMatcher::all_terms(&affinity_terms);
            for t in &affinity_terms {
                let id = index.counter(all_nodes, &matcher, &t.topology_key);
                affinity_parts.push((t.topology_key.clone(), Arc::clone(index.totals(id))));
                affinity_views.push(index.domain_view(id));
            }
        }
        let mut anti_parts = Vec::with_capacity(anti_affinity_terms.len());
        let mut anti_views = Vec::with_capacity(anti_affinity_terms.len());
        for t in &anti_affinity_terms {
            let matcher = PodMatcher::all_terms(std::slice::from_ref(t));
            let id = index.counter(all_nodes, &matcher, &t.topology_key);
            anti_parts.push((t.topology_key.clone(), Arc::clone(index.totals(id))));
            anti_views.push(index.domain_view(id));
        }

        if existing.is_empty() && affinity_terms.is_empty() && anti_affinity_terms.is_empty() {
            return None;
        }
        let affinity_counts = CountsView::new(affinity_parts);
        let fast = FastFilter {
            positions: SnapshotPositions::of(all_nodes),
            affinity: affinity_views,
            affinity_first_pod: affinity_counts.is_empty()
                && pod_matches_all_affinity_terms(&affinity_terms, pod),
            anti: anti_views,
            existing: existing_views,
        };
        Some(PreFilterState {
            existing_anti_affinity_counts: existing,
            affinity_counts,
            anti_affinity_counts: CountsView::new(anti_parts),
            affinity_terms: Arc::new(affinity_terms),
            anti_affinity_key_hashes: Arc::new(
                anti_affinity_terms
                    .iter()
                    .map(|t| label_hash(&t.topology_key))
                    .collect(),
            ),
            anti_affinity_terms: Arc::new(anti_affinity_terms),
            namespace_labels: Arc::new(ns_labels),
            pods_with_scoring_terms: Some(index.pods_with_scoring_terms()),
            fast: Some(Arc::new(fast)),
        })
    }

    /// Upstream `updateWithPod`: counts `updated` (+1/-1) as if it ran on `node`.
    pub fn update_with_pod(&mut self, incoming: &Pod, updated: &Pod, node: &NodeInfo, m: i64) {
        self.fast = None;
        let n = node.node();
        let updated_anti = required_terms(updated, true);
        self.existing_anti_affinity_counts
            .update_with_anti_affinity_terms(&updated_anti, incoming, &self.namespace_labels, n, m);
        let terms = Arc::clone(&self.affinity_terms);
        self.affinity_counts
            .update_with_affinity_terms(&terms, updated, n, m);
        // The incoming pod's terms have their namespace selectors merged: no namespace labels.
        let anti = Arc::clone(&self.anti_affinity_terms);
        self.anti_affinity_counts.update_with_anti_affinity_terms(
            &anti,
            updated,
            &NamespaceLabels::new(),
            n,
            m,
        );
    }

    /// Upstream `satisfyExistingPodsAntiAffinity`.
    fn satisfy_existing_pods_anti_affinity(&self, node: &NodeInfo) -> bool {
        if self.existing_anti_affinity_counts.is_empty() {
            return true;
        }
        !self
            .existing_anti_affinity_counts
            .any_label_positive(node.label_index())
    }

    /// Upstream `satisfyPodAntiAffinity`.
    fn satisfy_pod_anti_affinity(&self, node: &NodeInfo) -> bool {
        if self.anti_affinity_counts.is_empty() {
            return true;
        }
        let labels = node.label_index();
        let hashes = &self.anti_affinity_key_hashes;
        !self.anti_affinity_terms.iter().enumerate().any(|(i, t)| {
            let h = hashes
                .get(i)
                .copied()
                .unwrap_or_else(|| label_hash(&t.topology_key));
            labels
                .get_hashed(&t.topology_key, h)
                .is_some_and(|v| self.anti_affinity_counts.get_hashed(&t.topology_key, h, v) > 0)
        })
    }

    /// Upstream `satisfyPodAffinity`: every term's pair on the node has a matching pod; a node
    /// missing a topology key fails. When no pod anywhere matches, the pod may still go where all
    /// keys exist if it matches its own terms (the first pod of a group).
    fn satisfy_pod_affinity(&self, pod: &Pod, node: &NodeInfo) -> bool {
        let labels = node.label_index();
        let mut pods_exist = true;
        for t in self.affinity_terms.iter() {
            match labels.get(&t.topology_key) {
                Some(v) => {
                    if self.affinity_counts.get(&t.topology_key, v) <= 0 {
                        pods_exist = false;
                    }
                }
                None => return false,
            }
        }
        if !pods_exist {
            return self.affinity_counts.is_empty()
                && pod_matches_all_affinity_terms(&self.affinity_terms, pod);
        }
        true
    }
}

/// The start of upstream's PreFilter: the incoming pod's required affinity and anti-affinity
/// terms (namespace selectors merged) and its namespace's labels; `None` (Skip) when it has no
/// required term and no placed pod has required anti-affinity.
fn incoming_terms(
    pod: &Pod,
    any_existing_anti: bool,
    api: Option<&dyn ApiClient>,
) -> Option<(Vec<AffinityTerm>, Vec<AffinityTerm>, NamespaceLabels)> {
    let mut affinity_terms = required_terms(pod, false);
    let mut anti_affinity_terms = required_terms(pod, true);
    if !any_existing_anti && affinity_terms.is_empty() && anti_affinity_terms.is_empty() {
        return None;
    }
    for t in affinity_terms
        .iter_mut()
        .chain(anti_affinity_terms.iter_mut())
    {
        t.merge_namespaces(api);
    }
    let ns_labels = namespace_labels(pod.metadata.namespace(), api);
    Some((affinity_terms, anti_affinity_terms, ns_labels))
}

fn missing_state() -> Status {
    Status::error(format!(
        "error reading {PRE_FILTER_STATE_KEY:?} from cycleState: not found"
    ))
}

/// Upstream `InterPodAffinity.Filter`.
pub fn filter(state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
    match state.read::<PreFilterState>(PRE_FILTER_STATE_KEY) {
        Some(s) => match s.fast.as_deref().and_then(|f| f.judge(node)) {
            Some(status) => status,
            None => filter_with(s, pod, node),
        },
        None => missing_state(),
    }
}

/// The fused-pass gate of this attempt, when PreFilter read the index (see
/// [`FastFilter::gate`]).
pub fn gate(state: &CycleState) -> Option<NodeGate> {
    let s = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY)?;
    s.fast.as_deref().map(FastFilter::gate)
}

/// [`filter`] over many nodes, reading the state once (`FilterPlugin::filter_nodes`).
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
    let fast = s.fast.as_deref();
    for (i, node) in nodes.iter().enumerate() {
        let status = match fast.and_then(|f| f.judge(node)) {
            Some(status) => status,
            None => filter_with(s, pod, node),
        };
        if !status.is_success() {
            failed.push((i, status));
        }
    }
}

fn filter_with(s: &PreFilterState, pod: &Pod, node: &NodeInfo) -> Status {
    if !s.satisfy_pod_affinity(pod, node) {
        return Status::unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH);
    }
    if !s.satisfy_pod_anti_affinity(node) {
        return Status::unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH);
    }
    if !s.satisfy_existing_pods_anti_affinity(node) {
        return Status::unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH);
    }
    Status::success()
}

/// Upstream `AddPod`/`RemovePod` (`m` = +1/-1).
pub fn update_state(
    state: &mut CycleState,
    pod_to_schedule: &Pod,
    pod: &PodInfo,
    node: &NodeInfo,
    m: i64,
) -> Status {
    let Some(s) = state.read_mut::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
        return missing_state();
    };
    s.update_with_pod(pod_to_schedule, &pod.pod, node, m);
    Status::success()
}
