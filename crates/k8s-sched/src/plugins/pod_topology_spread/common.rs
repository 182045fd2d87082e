//! What PodTopologySpread's Filter and Score share: the parsed constraint
//! ([`TopologySpreadConstraint`], with its selector, minDomains and node inclusion policies), the
//! pod's hard or soft constraints (`matchLabelKeys` merged into the selector), the default
//! constraints with the selector deduced from the pod's owners, and pod counting. Mirrors upstream
//! `pkg/scheduler/framework/plugins/podtopologyspread/common.go`.

use std::collections::BTreeMap;

use k8s_sched_framework::{NodeInfo, PodInfo};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::taints::{effects, find_untolerated};
use k8s_types::core::{Pod, TopologySpreadConstraint as ApiConstraint};

use super::default_selector::default_selector;
use crate::plugins::node_affinity::required_node_affinity_matches;
use crate::plugins::selector::Selector;

/// Upstream `v1.NodeInclusionPolicyHonor`.
pub const NODE_INCLUSION_POLICY_HONOR: &str = "Honor";
/// Upstream `v1.NodeInclusionPolicyIgnore`.
pub const NODE_INCLUSION_POLICY_IGNORE: &str = "Ignore";

/// A topology spread constraint with its selector parsed (upstream `topologySpreadConstraint`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologySpreadConstraint {
    /// Maximum permitted skew.
    pub max_skew: i32,
    /// Node label defining the domains.
    pub topology_key: String,
    /// Pods counted (`labelSelector` plus `matchLabelKeys`).
    pub selector: Selector,
    /// Minimum number of eligible domains (1 when unset).
    pub min_domains: i32,
    /// `nodeAffinityPolicy: Honor` (the default): only nodes matching the pod's nodeSelector and
    /// required node affinity count.
    pub honor_node_affinity: bool,
    /// `nodeTaintsPolicy: Honor` (default Ignore): only nodes whose NoSchedule/NoExecute taints
    /// the pod tolerates count.
    pub honor_node_taints: bool,
}

impl TopologySpreadConstraint {
    /// Upstream `matchNodeInclusionPolicies`: whether `node` counts for this constraint when
    /// scheduling `pod`.
    pub fn match_node_inclusion_policies(&self, pod: &Pod, node: &NodeInfo) -> bool {
        if self.honor_node_affinity && !required_node_affinity_matches(pod, node) {
            return false;
        }
        if self.honor_node_taints
            && find_untolerated(
                &node.node().spec.taints,
                &pod.spec.tolerations,
                &[effects::NO_SCHEDULE, effects::NO_EXECUTE],
            )
            .is_some()
        {
            return false;
        }
        true
    }
}

/// Upstream `filterTopologySpreadConstraints`: the constraints whose `whenUnsatisfiable` is
/// `action`, parsed; `matchLabelKeys` add `key = <pod's value>` for the keys the pod has.
pub fn filter_constraints(
    constraints: &[ApiConstraint],
    pod_labels: &BTreeMap<String, String>,
    action: &str,
) -> Vec<TopologySpreadConstraint> {
    let mut out = Vec::new();
    for c in constraints {
        if c.when_unsatisfiable != action {
            continue;
        }
        let mut selector = Selector::from_label_selector(c.label_selector.as_ref());
        if !c.match_label_keys.is_empty() {
            let set: BTreeMap<String, String> = c
                .match_label_keys
                .iter()
                .filter_map(|k| pod_labels.get(k).map(|v| (k.clone(), v.clone())))
                .collect();
            if !set.is_empty() {
                selector = Selector::merge_label_set(&set, &selector);
            }
        }
        out.push(TopologySpreadConstraint {
            max_skew: c.max_skew,
            topology_key: c.topology_key.clone(),
            selector,
            min_domains: c.min_domains.unwrap_or(1),
            honor_node_affinity: c
                .node_affinity_policy
                .as_deref()
                .is_none_or(|p| p == NODE_INCLUSION_POLICY_HONOR),
            honor_node_taints: c.node_taints_policy.as_deref() == Some(NODE_INCLUSION_POLICY_HONOR),
        });
    }
    out
}

/// Upstream `buildDefaultConstraints`: the default constraints with `action`, each with the
/// selector of the pod's Services and controller (upstream `helper.DefaultSelector`); empty when
/// that selector is empty, or when there is no apiserver to read them from.
pub fn build_default_constraints(
    defaults: &[ApiConstraint],
    pod: &Pod,
    action: &str,
    api: Option<&dyn ApiClient>,
) -> Vec<TopologySpreadConstraint> {
    let mut constraints = filter_constraints(defaults, &pod.metadata.labels, action);
    if constraints.is_empty() {
        return constraints;
    }
    let Some(api) = api else {
        return Vec::new();
    };
    let selector = default_selector(pod, api);
    if selector.is_empty() {
        return Vec::new();
    }
    for c in &mut constraints {
        c.selector = selector.clone();
    }
    constraints
}

/// Upstream `nodeLabelsMatchSpreadConstraints`: the node has every constraint's topology key.
pub fn node_labels_match_spread_constraints(
    labels: &BTreeMap<String, String>,
    constraints: &[TopologySpreadConstraint],
) -> bool {
    constraints
        .iter()
        .all(|c| labels.contains_key(&c.topology_key))
}

/// Upstream `countPodsMatchSelector`: pods in namespace `ns`, not being deleted, whose labels
/// match `selector`.
pub fn count_pods_match_selector(pods: &[PodInfo], selector: &Selector, ns: &str) -> i64 {
    pods.iter()
        .filter(|p| {
            p.pod.metadata.deletion_timestamp.is_none()
                && p.pod.metadata.namespace() == ns
                && selector.matches(&p.pod.metadata.labels)
        })
        .count() as i64
}
