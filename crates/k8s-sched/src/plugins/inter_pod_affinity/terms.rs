//! Processed pod affinity terms (upstream `framework.AffinityTerm`, `WeightedAffinityTerm`,
//! `newAffinityTerm`, `getNamespacesFromPodAffinityTerm`, `AffinityTerm.Matches` in
//! `pkg/scheduler/framework/types.go`), the namespace helpers of upstream
//! `pkg/scheduler/framework/plugins/interpodaffinity/plugin.go`
//! (`mergeAffinityTermNamespacesIfNotEmpty`, `GetNamespaceLabelsSnapshot`) and the
//! topology-pair counters of `filtering.go` (`topologyToMatchedTermCount`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Namespace, Node, Pod, PodAffinityTerm, WeightedPodAffinityTerm};

use crate::plugins::selector::Selector;

/// Labels of a namespace.
pub type NamespaceLabels = BTreeMap<String, String>;

/// A pod (anti-)affinity term with its selectors parsed, relative to the pod that declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffinityTerm {
    /// Namespaces named by the term; the declaring pod's own namespace when the term names none
    /// and has no namespaceSelector.
    pub namespaces: BTreeSet<String>,
    /// Pods the term refers to (nil `labelSelector` = nothing).
    pub selector: Selector,
    /// Node label defining the topology domain.
    pub topology_key: String,
    /// Namespaces by label (nil = nothing, `{}` = every namespace).
    pub namespace_selector: Selector,
}

/// A preferred term with its weight (upstream `WeightedAffinityTerm`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightedAffinityTerm {
    /// The term.
    pub term: AffinityTerm,
    /// 1-100 (any value is used as given).
    pub weight: i32,
}

impl AffinityTerm {
    /// Upstream `newAffinityTerm` for a term of `pod`.
    pub fn new(pod: &Pod, term: &PodAffinityTerm) -> AffinityTerm {
        let mut namespaces = BTreeSet::new();
        if term.namespaces.is_empty() && term.namespace_selector.is_none() {
            namespaces.insert(pod.metadata.namespace().to_string());
        } else {
            namespaces.extend(term.namespaces.iter().cloned());
        }
        AffinityTerm {
            namespaces,
            selector: Selector::from_label_selector(term.label_selector.as_ref()),
            topology_key: term.topology_key.clone(),
            namespace_selector: Selector::from_label_selector(term.namespace_selector.as_ref()),
        }
    }

    /// Upstream `AffinityTerm.Matches`: `pod` is in one of the namespaces (or in a namespace
    /// whose labels `ns_labels` match the namespaceSelector) and its labels match the selector.
    pub fn matches(&self, pod: &Pod, ns_labels: &NamespaceLabels) -> bool {
        if self.namespaces.contains(pod.metadata.namespace())
            || self.namespace_selector.matches(ns_labels)
        {
            return self.selector.matches(&pod.metadata.labels);
        }
        false
    }

    /// Upstream `mergeAffinityTermNamespacesIfNotEmpty`: for a term of the incoming pod, a
    /// non-empty namespaceSelector is resolved into the names of the matching Namespace objects
    /// and then replaced by "nothing"; an empty one (every namespace) is kept. Without an
    /// apiserver no namespace matches.
    pub fn merge_namespaces(&mut self, api: Option<&dyn ApiClient>) {
        if self.namespace_selector.is_empty() {
            return;
        }
        if let (Selector::Match(sel), Some(api)) = (&self.namespace_selector, api) {
            for ns in api.list_typed::<Namespace>(None, Some(sel)) {
                self.namespaces.insert(ns.metadata.name);
            }
        }
        self.namespace_selector = Selector::Nothing;
    }
}

fn pod_affinity(pod: &Pod, anti: bool) -> Option<&k8s_types::core::PodAffinity> {
    let a = pod.spec.affinity.as_ref()?;
    if anti {
        a.pod_anti_affinity.as_ref()
    } else {
        a.pod_affinity.as_ref()
    }
}

/// The pod's required affinity (`anti = false`) or anti-affinity terms (upstream
/// `PodInfo.RequiredAffinityTerms` / `RequiredAntiAffinityTerms`).
pub fn required_terms(pod: &Pod, anti: bool) -> Vec<AffinityTerm> {
    pod_affinity(pod, anti)
        .map(|pa| {
            pa.required_during_scheduling_ignored_during_execution
                .iter()
                .map(|t| AffinityTerm::new(pod, t))
                .collect()
        })
        .unwrap_or_default()
}

/// The pod's preferred affinity or anti-affinity terms (upstream
/// `PodInfo.PreferredAffinityTerms` / `PreferredAntiAffinityTerms`).
pub fn preferred_terms(pod: &Pod, anti: bool) -> Vec<WeightedAffinityTerm> {
    pod_affinity(pod, anti)
        .map(|pa| {
            pa.preferred_during_scheduling_ignored_during_execution
                .iter()
                .map(|w: &WeightedPodAffinityTerm| WeightedAffinityTerm {
                    term: AffinityTerm::new(pod, &w.pod_affinity_term),
                    weight: w.weight,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// True when the pod has preferred affinity (`anti = false`) or anti-affinity terms.
pub fn has_preferred_terms(pod: &Pod, anti: bool) -> bool {
    pod_affinity(pod, anti).is_some_and(|pa| {
        !pa.preferred_during_scheduling_ignored_during_execution
            .is_empty()
    })
}

/// Upstream `GetNamespaceLabelsSnapshot`: the labels of namespace `ns`, empty when it does not
/// exist (or there is no apiserver).
pub fn namespace_labels(ns: &str, api: Option<&dyn ApiClient>) -> NamespaceLabels {
    api.and_then(|a| a.get_typed::<Namespace>("", ns).ok())
        .map(|n| n.metadata.labels)
        .unwrap_or_default()
}

/// Upstream `podMatchesAllAffinityTerms`: `pod` matches every term (false for no terms). The
/// terms are the incoming pod's, with namespace selectors already merged.
pub fn pod_matches_all_affinity_terms(terms: &[AffinityTerm], pod: &Pod) -> bool {
    if terms.is_empty() {
        return false;
    }
    let none = NamespaceLabels::new();
    terms.iter().all(|t| t.matches(pod, &none))
}

/// Topology pair (key, value) -> count (upstream `topologyToMatchedTermCount`), nested so a node
/// label can be looked up without allocating.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyCounts(pub BTreeMap<String, BTreeMap<String, i64>>);

impl TopologyCounts {
    /// True when no pair is counted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The count of (key, value), 0 when absent.
    pub fn get(&self, key: &str, value: &str) -> i64 {
        self.0
            .get(key)
            .and_then(|m| m.get(value))
            .copied()
            .unwrap_or(0)
    }

    /// Upstream `update`: adds `value` to (key, node's value of key) when the node has the key;
    /// a pair that reaches 0 is removed.
    pub fn update(&mut self, node: &Node, key: &str, value: i64) {
        let Some(tv) = node.metadata.labels.get(key) else {
            return;
        };
        let values = self.0.entry(key.to_string()).or_default();
        let n = values.entry(tv.clone()).or_insert(0);
        *n += value;
        if *n == 0 {
            values.remove(tv);
            if values.is_empty() {
                self.0.remove(key);
            }
        }
    }

    /// Upstream `updateWithAffinityTerms`: when `pod` matches all `terms`, counts every term's
    /// pair on `node`.
    pub fn update_with_affinity_terms(
        &mut self,
        terms: &[AffinityTerm],
        pod: &Pod,
        node: &Node,
        value: i64,
    ) {
        if pod_matches_all_affinity_terms(terms, pod) {
            for t in terms {
                self.update(node, &t.topology_key, value);
            }
        }
    }

    /// Upstream `updateWithAntiAffinityTerms`: counts the pair of each term `pod` matches.
    pub fn update_with_anti_affinity_terms(
        &mut self,
        terms: &[AffinityTerm],
        pod: &Pod,
        ns_labels: &NamespaceLabels,
        node: &Node,
        value: i64,
    ) {
        for t in terms {
            if t.matches(pod, ns_labels) {
                self.update(node, &t.topology_key, value);
            }
        }
    }
}
