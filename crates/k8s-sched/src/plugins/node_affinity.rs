//! NodeAffinity (PreFilter, Filter, PreScore, Score): the pod's `nodeSelector` and required node
//! affinity must match the node; preferred terms add their weights, normalized to 0-100.
//! Upstream `pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go`. PreFilter returns Skip
//! for pods without either constraint and restricts the candidate nodes when every required term
//! names nodes through `matchFields` `metadata.name In`.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_types::core::{Pod, PreferredSchedulingTerm};
use k8s_types::framework::{
    CycleState, FilterPlugin, Handle, NodeInfo, NodeScore, Plugin, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ScorePlugin, Status, MAX_NODE_SCORE,
};

use super::helper::default_normalize_score;
use super::names;
use crate::error::ConfigError;
use crate::registry::PluginArgs;

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

/// True when the node satisfies the pod's nodeSelector and required node affinity (upstream
/// `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`).
pub fn required_node_affinity_matches(pod: &Pod, node: &NodeInfo) -> bool {
    let n = node.node();
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

impl PreFilterPlugin for NodeAffinity {
    fn pre_filter(
        &self,
        _state: &mut CycleState,
        pod: &Pod,
        _handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
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
        for (i, node) in nodes.iter().enumerate() {
            if !required_node_affinity_matches(pod, node) {
                failed.push((i, Status::unresolvable(ERR_REASON_POD)));
            }
        }
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
        match state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) {
            Some(s) => Ok(score_terms(&s.0, node)),
            None => Ok(score_terms(&preferred_terms(pod), node)),
        }
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let computed;
        let terms = match state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) {
            Some(s) => &s.0,
            None => {
                computed = preferred_terms(pod);
                &computed
            }
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::{
        Affinity, Node, NodeAffinity as NodeAffinitySpec, NodeSelectorRequirement, NodeSelectorTerm,
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
}
