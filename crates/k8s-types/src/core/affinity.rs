//! Node and pod affinity types (upstream `corev1.Affinity`, `NodeSelector`, `PodAffinityTerm`) and the
//! node-selector matching rules of `k8s.io/component-helpers/scheduling/corev1/nodeaffinity`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::labels::LabelSelector;

/// Upstream `corev1.Affinity`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    /// Node affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<NodeAffinity>,
    /// Pod affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_affinity: Option<PodAffinity>,
    /// Pod anti-affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_anti_affinity: Option<PodAffinity>,
}

/// Upstream `corev1.NodeAffinity`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeAffinity {
    /// Hard requirement: the terms are ORed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
    /// Soft preferences, summed by weight (1..100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred_during_scheduling_ignored_during_execution: Vec<PreferredSchedulingTerm>,
}

/// Upstream `corev1.NodeSelector`: ORed terms.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelector {
    /// The terms; a node matches when any term matches.
    #[serde(default)]
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

/// Upstream `corev1.NodeSelectorTerm`: ANDed requirements. An empty term matches nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorTerm {
    /// Requirements on node labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<NodeSelectorRequirement>,
    /// Requirements on node fields (only `metadata.name` upstream).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_fields: Vec<NodeSelectorRequirement>,
}

/// Upstream `corev1.NodeSelectorRequirement`; operators `In`, `NotIn`, `Exists`, `DoesNotExist`,
/// `Gt`, `Lt`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirement {
    /// Label key (or field name for matchFields).
    pub key: String,
    /// Operator.
    pub operator: String,
    /// Values; one integer for `Gt`/`Lt`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// Upstream `corev1.PreferredSchedulingTerm`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreferredSchedulingTerm {
    /// 1..100.
    pub weight: i32,
    /// The term.
    pub preference: NodeSelectorTerm,
}

/// Upstream `corev1.PodAffinity` / `PodAntiAffinity` (same shape).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinity {
    /// Hard terms, ANDed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_during_scheduling_ignored_during_execution: Vec<PodAffinityTerm>,
    /// Soft terms, weighted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred_during_scheduling_ignored_during_execution: Vec<WeightedPodAffinityTerm>,
}

/// Upstream `corev1.PodAffinityTerm`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinityTerm {
    /// Pods the term refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Namespaces; empty with no namespaceSelector means the pod's own namespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// Node label defining the topology domain, e.g. `kubernetes.io/hostname`.
    #[serde(default)]
    pub topology_key: String,
    /// Namespaces by label; an empty selector means all namespaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Label keys of the incoming pod whose values are merged into `labelSelector` as
    /// `key in (value)` when the pod is created (upstream `MatchLabelKeysInPodAffinity`, beta and
    /// on by default since v1.31; the apiserver does the merge).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_label_keys: Vec<String>,
    /// Label keys merged into `labelSelector` as `key notin (value)` when the pod is created.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mismatch_label_keys: Vec<String>,
}

/// Upstream `corev1.WeightedPodAffinityTerm`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WeightedPodAffinityTerm {
    /// 1..100.
    pub weight: i32,
    /// The term.
    pub pod_affinity_term: PodAffinityTerm,
}

/// Upstream `corev1.TopologySpreadConstraint`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpreadConstraint {
    /// Maximum permitted difference between domains (>= 1).
    pub max_skew: i32,
    /// Node label defining domains.
    pub topology_key: String,
    /// `DoNotSchedule` (hard) or `ScheduleAnyway` (soft).
    pub when_unsatisfiable: String,
    /// Pods counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Minimum number of eligible domains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_domains: Option<i32>,
    /// Pod label keys whose values are added to the selector.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_label_keys: Vec<String>,
    /// `Honor` (default) or `Ignore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity_policy: Option<String>,
    /// `Honor` or `Ignore` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_taints_policy: Option<String>,
}

impl NodeSelectorRequirement {
    /// Upstream `nodeaffinity` label requirement semantics; `Gt`/`Lt` compare integers and fail on
    /// a missing label or a non-integer value.
    pub fn matches_labels(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_value(labels.get(&self.key).map(String::as_str))
    }

    /// The same rule applied to one value (`None` = the key is absent).
    pub fn matches_value(&self, value: Option<&str>) -> bool {
        match self.operator.as_str() {
            "In" => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            "NotIn" => value.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            "Gt" | "Lt" => {
                let (Some(v), Some(bound)) = (value, self.values.first()) else {
                    return false;
                };
                let (Ok(v), Ok(bound)) = (v.parse::<i64>(), bound.parse::<i64>()) else {
                    return false;
                };
                if self.operator == "Gt" {
                    v > bound
                } else {
                    v < bound
                }
            }
            _ => false,
        }
    }
}

impl NodeSelectorTerm {
    /// True when every requirement holds; an empty term matches nothing (upstream).
    pub fn matches(&self, node_name: &str, labels: &BTreeMap<String, String>) -> bool {
        if self.match_expressions.is_empty() && self.match_fields.is_empty() {
            return false;
        }
        self.match_expressions
            .iter()
            .all(|r| r.matches_labels(labels))
            && self
                .match_fields
                .iter()
                .all(|r| r.key == "metadata.name" && r.matches_value(Some(node_name)))
    }
}

impl NodeSelector {
    /// True when any term matches.
    pub fn matches(&self, node_name: &str, labels: &BTreeMap<String, String>) -> bool {
        self.node_selector_terms
            .iter()
            .any(|t| t.matches(node_name, labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn node_selector_terms_are_ored_and_requirements_anded() {
        let labels: BTreeMap<String, String> = [
            ("zone".to_string(), "a".to_string()),
            ("gpus".into(), "8".into()),
        ]
        .into();
        let sel = NodeSelector {
            node_selector_terms: vec![
                NodeSelectorTerm {
                    match_expressions: vec![req("zone", "In", &["b"])],
                    match_fields: vec![],
                },
                NodeSelectorTerm {
                    match_expressions: vec![req("zone", "In", &["a"]), req("gpus", "Gt", &["4"])],
                    match_fields: vec![],
                },
            ],
        };
        assert!(sel.matches("n1", &labels));
        assert!(!req("gpus", "Lt", &["4"]).matches_labels(&labels));
        assert!(!req("missing", "Gt", &["4"]).matches_labels(&labels));
        assert!(!NodeSelectorTerm::default().matches("n1", &labels));
        let by_name = NodeSelectorTerm {
            match_expressions: vec![],
            match_fields: vec![req("metadata.name", "In", &["n1"])],
        };
        assert!(by_name.matches("n1", &labels));
        assert!(!by_name.matches("n2", &labels));
    }
}
