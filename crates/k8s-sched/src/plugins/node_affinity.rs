//! NodeAffinity (PreFilter, Filter, PreScore, Score): the pod's `nodeSelector` and required node
//! affinity must match the node; preferred terms add their weights, normalized to 0-100.
//! Upstream `pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go`. PreFilter returns Skip
//! for pods without either constraint and restricts the candidate nodes when every required term
//! names nodes through `matchFields` `metadata.name In`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_sched_framework::node_info::label_hash;
use k8s_sched_framework::{
    CycleState, FilterPlugin, Handle, NodeInfo, NodeScore, Plugin, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ScorePlugin, Status, MAX_NODE_SCORE,
};
use k8s_types::core::{Node, NodeSelector, NodeSelectorRequirement, Pod, PreferredSchedulingTerm};

use super::helper::default_normalize_score;
use super::names;
use crate::topology_counts::SnapshotPositions;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// Upstream `ErrReasonPod`.
pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
/// Upstream `errReasonConflict`.
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";
/// CycleState key of the preferred terms.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreNodeAffinity";
/// Upstream `metav1.ObjectNameField`.
const OBJECT_NAME_FIELD: &str = "metadata.name";

/// The preferred terms (non-empty, non-zero weight) of the pod.
#[derive(Clone, Debug, Default)]
pub struct PreScoreState(pub Vec<PreferredSchedulingTerm>);

/// The NodeAffinity plugin.
#[derive(Debug, Default)]
pub struct NodeAffinity;

impl NodeAffinity {
    /// Factory (`addedAffinity` args are not supported).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(NodeAffinity))
    }
}

impl Plugin for NodeAffinity {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::NODE_AFFINITY
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

/// True when the pod has a nodeSelector or required node affinity, i.e. when
/// [`required_node_affinity_matches`] can be false for some node.
pub fn has_required_node_affinity(pod: &Pod) -> bool {
    !pod.spec.node_selector.is_empty()
        || pod
            .spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .is_some_and(|na| {
                na.required_during_scheduling_ignored_during_execution
                    .is_some()
            })
}

/// True when the node satisfies the pod's nodeSelector and required node affinity (upstream
/// `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`).
pub fn required_node_affinity_matches(pod: &Pod, node: &NodeInfo) -> bool {
    required_node_affinity_admits(pod, node.node())
}

/// [`required_node_affinity_matches`] on a Node object (for views outside the scheduler, such as
/// the capacity view's pending pods per pool).
pub fn required_node_affinity_admits(pod: &Pod, n: &Node) -> bool {
    let labels = &n.metadata.labels;
    if !pod
        .spec
        .node_selector
        .iter()
        .all(|(k, v)| labels.get(k) == Some(v))
    {
        return false;
    }
    match pod
        .spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        }) {
        Some(sel) => sel.matches(&n.metadata.name, labels),
        None => true,
    }
}

/// The pod's nodeSelector and required node affinity with every label key hashed once, for
/// Filter loops over many nodes: the same verdict as [`required_node_affinity_matches`], read
/// from the node's [`k8s_sched_framework::node_info::LabelIndex`].
struct RequiredMatcher<'a> {
    /// nodeSelector: (key, key hash, value).
    node_selector: Vec<(&'a str, u64, &'a str)>,
    /// Required node affinity terms (ORed), when the pod has it.
    terms: Option<Vec<CompiledTerm<'a>>>,
}

/// One node selector term: expressions with hashed keys, and the field requirements.
struct CompiledTerm<'a> {
    expressions: Vec<(&'a NodeSelectorRequirement, u64)>,
    fields: &'a [NodeSelectorRequirement],
}

impl<'a> RequiredMatcher<'a> {
    fn new(pod: &'a Pod) -> RequiredMatcher<'a> {
        let required = pod
            .spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|na| {
                na.required_during_scheduling_ignored_during_execution
                    .as_ref()
            });
        RequiredMatcher {
            node_selector: pod
                .spec
                .node_selector
                .iter()
                .map(|(k, v)| (k.as_str(), label_hash(k), v.as_str()))
                .collect(),
            terms: required.map(|sel| {
                sel.node_selector_terms
                    .iter()
                    .map(|t| CompiledTerm {
                        expressions: t
                            .match_expressions
                            .iter()
                            .map(|r| (r, label_hash(&r.key)))
                            .collect(),
                        fields: &t.match_fields,
                    })
                    .collect()
            }),
        }
    }

    /// Upstream `NodeSelectorTerm` semantics as `k8s_types::core::NodeSelectorTerm::matches`: an
    /// empty term
    /// matches nothing, requirements are ANDed, terms ORed.
    fn matches(&self, node: &NodeInfo) -> bool {
        let labels = node.label_index();
        if !self
            .node_selector
            .iter()
            .all(|&(k, h, v)| labels.get_hashed(k, h) == Some(v))
        {
            return false;
        }
        let Some(terms) = &self.terms else {
            return true;
        };
        terms.iter().any(|t| {
            if t.expressions.is_empty() && t.fields.is_empty() {
                return false;
            }
            t.expressions
                .iter()
                .all(|&(r, h)| r.matches_value(labels.get_hashed(&r.key, h)))
                && t.fields
                    .iter()
                    .all(|r| r.key == OBJECT_NAME_FIELD && r.matches_value(Some(node.name())))
        })
    }
}

/// Filter verdicts kept across pods with the same nodeSelector and required node affinity
/// (consecutive pods of one Deployment), per node position of the snapshot. A verdict depends
/// only on those constraints and on the Node object, so it is keyed by
/// [`NodeInfo::node_generation`]: a node whose generation differs (another node at the position,
/// a relabelled node, a clone of unknown position) is matched again. Kept per thread, like the
/// scheduler's scratch buffers; any pod with other constraints starts a new memo.
#[derive(Debug, Default)]
struct VerdictMemo {
    /// Where the snapshot of the last PreFilter on this thread is (a hint for positions).
    positions: SnapshotPositions,
    /// The constraints the verdicts are for.
    node_selector: BTreeMap<String, String>,
    required: Option<NodeSelector>,
    /// Per position: (node generation, verdict); generation 0 means none.
    verdicts: Vec<(u64, bool)>,
}

thread_local! {
    static VERDICT_MEMO: RefCell<VerdictMemo> = RefCell::new(VerdictMemo::default());
}

/// The pod's required node affinity (upstream `requiredDuringSchedulingIgnoredDuringExecution`).
fn required_selector(pod: &Pod) -> Option<&NodeSelector> {
    pod.spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
}

impl VerdictMemo {
    /// Makes the memo the one for `pod`'s constraints (dropping other verdicts).
    fn select(&mut self, pod: &Pod) {
        let required = required_selector(pod);
        if self.node_selector != pod.spec.node_selector || self.required.as_ref() != required {
            self.node_selector = pod.spec.node_selector.clone();
            self.required = required.cloned();
            self.verdicts.iter_mut().for_each(|v| *v = (0, false));
        }
    }

    /// The verdict for `node`, from the memo or from `m` (and then remembered).
    #[inline]
    fn verdict(&mut self, m: &RequiredMatcher<'_>, node: &NodeInfo) -> bool {
        let Some(pos) = self.positions.position(node) else {
            return m.matches(node);
        };
        let g = node.node_generation();
        if let Some(&(seen, v)) = self.verdicts.get(pos) {
            if seen == g {
                return v;
            }
        }
        let v = m.matches(node);
        if self.verdicts.len() <= pos {
            self.verdicts.resize(pos + 1, (0, false));
        }
        self.verdicts[pos] = (g, v);
        v
    }
}

impl PreFilterPlugin for NodeAffinity {
    fn pre_filter(
        &self,
        _state: &mut CycleState,
        pod: &Pod,
        handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
        let positions = SnapshotPositions::of(handle.node_infos());
        VERDICT_MEMO.with(|m| {
            if let Ok(mut m) = m.try_borrow_mut() {
                m.positions = positions;
            }
        });
        let required = pod
            .spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|na| {
                na.required_during_scheduling_ignored_during_execution
                    .as_ref()
            });
        let Some(required) = required else {
            if pod.spec.node_selector.is_empty() {
                return (None, Status::skip());
            }
            return (None, Status::success());
        };
        if required.node_selector_terms.is_empty() {
            return (None, Status::success());
        }
        // Nodes named through matchFields metadata.name In: ANDed within a term, ORed across terms.
        let mut node_names: Option<BTreeSet<String>> = None;
        for term in &required.node_selector_terms {
            let mut term_names: Option<BTreeSet<String>> = None;
            for r in &term.match_fields {
                if r.key == OBJECT_NAME_FIELD && r.operator == "In" {
                    let s: BTreeSet<String> = r.values.iter().cloned().collect();
                    term_names = Some(match term_names {
                        None => s,
                        Some(prev) => prev.intersection(&s).cloned().collect(),
                    });
                }
            }
            let Some(term_names) = term_names else {
                // A term without node-name affinity allows every node.
                return (None, Status::success());
            };
            node_names
                .get_or_insert_with(BTreeSet::new)
                .extend(term_names);
        }
        match node_names {
            Some(names) if names.is_empty() => (None, Status::unresolvable(ERR_REASON_CONFLICT)),
            Some(names) => (
                Some(PreFilterResult {
                    node_names: Some(names),
                }),
                Status::success(),
            ),
            None => (None, Status::success()),
        }
    }
}

impl FilterPlugin for NodeAffinity {
    fn filter(&self, _state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if required_node_affinity_matches(pod, node) {
            Status::success()
        } else {
            Status::unresolvable(ERR_REASON_POD)
        }
    }

    fn filter_nodes(
        &self,
        _state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        failed: &mut Vec<(usize, Status)>,
    ) {
        let m = RequiredMatcher::new(pod);
        VERDICT_MEMO.with(|memo| match memo.try_borrow_mut() {
            Ok(mut memo) => {
                memo.select(pod);
                for (i, node) in nodes.iter().enumerate() {
                    if !memo.verdict(&m, node) {
                        failed.push((i, Status::unresolvable(ERR_REASON_POD)));
                    }
                }
            }
            Err(_) => {
                for (i, node) in nodes.iter().enumerate() {
                    if !m.matches(node) {
                        failed.push((i, Status::unresolvable(ERR_REASON_POD)));
                    }
                }
            }
        });
    }
}

fn preferred_terms(pod: &Pod) -> Vec<PreferredSchedulingTerm> {
    pod.spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .map(|na| {
            na.preferred_during_scheduling_ignored_during_execution
                .iter()
                .filter(|t| {
                    t.weight != 0
                        && !(t.preference.match_expressions.is_empty()
                            && t.preference.match_fields.is_empty())
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn score_terms(terms: &[PreferredSchedulingTerm], node: &NodeInfo) -> i64 {
    let n = node.node();
    terms
        .iter()
        .filter(|t| t.preference.matches(&n.metadata.name, &n.metadata.labels))
        .map(|t| i64::from(t.weight))
        .sum()
}

impl PreScorePlugin for NodeAffinity {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        let terms = preferred_terms(pod);
        if terms.is_empty() {
            return Status::skip();
        }
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(terms));
        Status::success()
    }
}

impl ScorePlugin for NodeAffinity {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let stored =
            state.read_or_compute(PRE_SCORE_STATE_KEY, || PreScoreState(preferred_terms(pod)));
        Ok(score_terms(&stored.0, node))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let stored =
            state.read_or_compute(PRE_SCORE_STATE_KEY, || PreScoreState(preferred_terms(pod)));
        let terms = &stored.0;
        for (node, out) in nodes.iter().zip(scores.iter_mut()) {
            *out = score_terms(terms, node);
        }
        Ok(())
    }

    fn normalize_score(
        &self,
        _state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore<'_>],
    ) -> Status {
        default_normalize_score(MAX_NODE_SCORE, false, scores);
        Status::success()
    }
}

/// Queueing hints (upstream `nodeaffinity/node_affinity.go` `EventsToRegister`,
/// `isSchedulableAfterNodeChange`).
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::as_nodes;
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };

    impl EnqueueExtensions for NodeAffinity {
        /// Node Add|UpdateNodeLabel with a hint.
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![ClusterEventWithHint::with_hint(
                EventResource::Node,
                ActionType::ADD | ActionType::UPDATE_NODE_LABEL,
            )]
        }

        fn queueing_hint(
            &self,
            _registered: &ClusterEvent,
            pod: &Pod,
            old: Option<EventObject<'_>>,
            new: Option<EventObject<'_>>,
        ) -> Result<QueueingHint, String> {
            let (original, modified) = as_nodes(old, new)?;
            let modified = modified.ok_or("a node event needs the new node")?;
            let matches = |n: &k8s_types::core::Node| {
                required_node_affinity_matches(pod, &NodeInfo::new(Arc::new(n.clone())))
            };
            if !matches(modified) {
                return Ok(QueueingHint::QueueSkip);
            }
            // Added and matching, or changed from not matching to matching.
            Ok(match original {
                Some(o) if matches(o) => QueueingHint::QueueSkip,
                _ => QueueingHint::Queue,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::{
        Affinity, Node, NodeAffinity as NodeAffinitySpec, NodeSelector, NodeSelectorRequirement,
        NodeSelectorTerm,
    };

    fn node(name: &str, labels: &[(&str, &str)]) -> NodeInfo {
        let mut n = Node::default();
        n.metadata.name = name.into();
        n.metadata.labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        NodeInfo::new(Arc::new(n))
    }

    fn term(key: &str, values: &[&str]) -> NodeSelectorTerm {
        NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement {
                key: key.into(),
                operator: "In".into(),
                values: values.iter().map(|v| v.to_string()).collect(),
            }],
            match_fields: vec![],
        }
    }

    #[test]
    fn selector_mismatch_is_rejected_with_upstream_reason() {
        let mut pod = Pod::default();
        pod.spec.node_selector.insert("disk".into(), "ssd".into());
        let s = NodeAffinity.filter(&CycleState::new(), &pod, &node("a", &[("disk", "hdd")]));
        assert_eq!(
            s.message(),
            "node(s) didn't match Pod's node affinity/selector"
        );
        assert!(NodeAffinity
            .filter(&CycleState::new(), &pod, &node("a", &[("disk", "ssd")]))
            .is_success());
    }

    #[test]
    fn batch_filter_with_hashed_keys_equals_filter() {
        // Every combination of nodeSelector / required terms over nodes with and without the
        // labels gives filter_nodes the statuses filter gives.
        let nodes = [
            node("n1", &[("zone", "z1"), ("disk", "ssd")]),
            node("n2", &[("zone", "z2")]),
            node("n3", &[]),
            node("n4", &[("zone", ""), ("disk", "hdd"), ("gpu", "8")]),
        ];
        let refs: Vec<&NodeInfo> = nodes.iter().collect();
        let mut pods = Vec::new();
        for op in ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"] {
            let mut t = term("zone", &["z1", ""]);
            t.match_expressions[0].operator = op.into();
            if op == "Gt" || op == "Lt" {
                t.match_expressions[0].key = "gpu".into();
                t.match_expressions[0].values = vec!["4".into()];
            }
            let mut p = Pod::default();
            p.spec.affinity = Some(Affinity {
                node_affinity: Some(NodeAffinitySpec {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: vec![
                            t,
                            NodeSelectorTerm::default(),
                            NodeSelectorTerm {
                                match_expressions: vec![],
                                match_fields: vec![NodeSelectorRequirement {
                                    key: "metadata.name".into(),
                                    operator: "In".into(),
                                    values: vec!["n3".into()],
                                }],
                            },
                        ],
                    }),
                    preferred_during_scheduling_ignored_during_execution: vec![],
                }),
                ..Default::default()
            });
            pods.push(p.clone());
            p.spec.node_selector.insert("disk".into(), "ssd".into());
            pods.push(p);
        }
        let mut selector_only = Pod::default();
        selector_only
            .spec
            .node_selector
            .insert("zone".into(), String::new());
        pods.push(selector_only);
        let mut matched = 0;
        for pod in &pods {
            let state = CycleState::new();
            let mut failed = Vec::new();
            NodeAffinity.filter_nodes(&state, pod, &refs, &mut failed);
            let failed: Vec<usize> = failed.iter().map(|(i, _)| *i).collect();
            for (i, n) in nodes.iter().enumerate() {
                let single = NodeAffinity.filter(&state, pod, n).is_success();
                assert_eq!(!single, failed.contains(&i), "node {i}");
                matched += usize::from(single);
            }
        }
        // The cases are not all-pass or all-fail.
        assert!(matched > 0 && matched < pods.len() * nodes.len());
    }

    #[test]
    fn preferred_terms_score_normalized() {
        // Computed by hand with upstream's DefaultNormalizeScore: weights 2, 4, 5 over three
        // nodes matching 1, 2 and 3 of the terms.
        let mut pod = Pod::default();
        pod.spec.affinity = Some(Affinity {
            node_affinity: Some(NodeAffinitySpec {
                required_during_scheduling_ignored_during_execution: None,
                preferred_during_scheduling_ignored_during_execution: vec![
                    PreferredSchedulingTerm {
                        weight: 2,
                        preference: term("foo", &["bar"]),
                    },
                    PreferredSchedulingTerm {
                        weight: 4,
                        preference: term("key", &["value"]),
                    },
                    PreferredSchedulingTerm {
                        weight: 5,
                        preference: term("az", &["az1"]),
                    },
                ],
            }),
            ..Default::default()
        });
        let nodes = [
            node("node1", &[("foo", "bar")]),
            node("node2", &[("foo", "bar"), ("key", "value")]),
            node("node3", &[("foo", "bar"), ("key", "value"), ("az", "az1")]),
        ];
        let mut state = CycleState::new();
        let refs: Vec<&NodeInfo> = nodes.iter().collect();
        assert!(NodeAffinity.pre_score(&mut state, &pod, &refs).is_success());
        let mut scores: Vec<NodeScore> = nodes
            .iter()
            .map(|n| NodeScore {
                name: n.name(),
                score: NodeAffinity.score(&state, &pod, n).unwrap(),
            })
            .collect();
        NodeAffinity.normalize_score(&state, &pod, &mut scores);
        // Raw 2, 6, 11 -> 100*2/11 = 18, 100*6/11 = 54, 100.
        assert_eq!(
            scores.iter().map(|s| s.score).collect::<Vec<_>>(),
            vec![18, 54, 100]
        );
    }

    #[test]
    fn memoized_verdicts_follow_relabelled_nodes_and_new_constraints() {
        let mut nodes = vec![node("a", &[("zone", "z1")]), node("b", &[("zone", "z2")])];
        let with_selector = |zone: &str| {
            let mut p = Pod::default();
            p.spec.node_selector.insert("zone".into(), zone.into());
            p
        };
        let failed_on = |nodes: &[NodeInfo], pod: &Pod| {
            VERDICT_MEMO.with(|m| m.borrow_mut().positions = SnapshotPositions::of(nodes));
            let refs: Vec<&NodeInfo> = nodes.iter().collect();
            let mut failed = Vec::new();
            NodeAffinity.filter_nodes(&CycleState::new(), pod, &refs, &mut failed);
            failed.iter().map(|(i, _)| *i).collect::<Vec<_>>()
        };
        let z1 = with_selector("z1");
        assert_eq!(failed_on(&nodes, &z1), vec![1]);
        // Remembered under each node's generation.
        VERDICT_MEMO.with(|m| {
            let m = m.borrow();
            assert_eq!(m.verdicts[0], (nodes[0].node_generation(), true));
            assert_eq!(m.verdicts[1], (nodes[1].node_generation(), false));
        });
        // Node b relabelled into z1 at the same position: matched again.
        nodes[1] = node("b", &[("zone", "z1")]);
        assert_eq!(failed_on(&nodes, &z1), Vec::<usize>::new());
        // Other constraints: the earlier verdicts are not reused.
        assert_eq!(failed_on(&nodes, &with_selector("z2")), vec![0, 1]);
    }
}
