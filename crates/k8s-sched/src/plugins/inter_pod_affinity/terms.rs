//! Processed pod affinity terms (upstream `framework.AffinityTerm`, `WeightedAffinityTerm`,
//! `newAffinityTerm`, `getNamespacesFromPodAffinityTerm`, `AffinityTerm.Matches` in
//! `pkg/scheduler/framework/types.go`), the namespace helpers of upstream
//! `pkg/scheduler/framework/plugins/interpodaffinity/plugin.go`
//! (`mergeAffinityTermNamespacesIfNotEmpty`, `GetNamespaceLabelsSnapshot`) and the
//! topology-pair counters of `filtering.go` (`topologyToMatchedTermCount`), also as a
//! [`CountsView`] over the shared tables of [`crate::topology_counts`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_sched_framework::node_info::{label_hash, LabelIndex};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Namespace, Node, Pod, PodAffinityTerm, WeightedPodAffinityTerm};

use crate::plugins::selector::Selector;
use crate::topology_counts::DomainCounts;

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

/// True when the pod has required pod affinity or anti-affinity terms.
pub fn has_required_terms(pod: &Pod) -> bool {
    [false, true].into_iter().any(|anti| {
        pod_affinity(pod, anti).is_some_and(|pa| {
            !pa.required_during_scheduling_ignored_during_execution
                .is_empty()
        })
    })
}

/// True when the pod has required pod affinity terms, or preferred pod affinity or
/// anti-affinity terms: the terms of an existing pod that InterPodAffinity's PreScore reads.
pub fn has_scoring_terms(pod: &Pod) -> bool {
    has_preferred_terms(pod, false)
        || has_preferred_terms(pod, true)
        || pod_affinity(pod, false).is_some_and(|pa| {
            !pa.required_during_scheduling_ignored_during_execution
                .is_empty()
        })
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
        .map(|n| n.metadata.labels.into_inner())
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

/// Topology pair counts read from shared per-key tables plus a private overlay: what
/// [`TopologyCounts`] holds, without copying the index's tables into every cycle state. `get`
/// sums the tables of the key and the overlay; AddPod/RemovePod (preemption, nominated pods)
/// change only the overlay.
#[derive(Clone, Debug, Default)]
pub struct CountsView {
    /// Per topology key (with its [`label_hash`]): value -> count tables, summed.
    groups: Vec<(String, u64, Vec<Arc<DomainCounts>>)>,
    /// Changes made after PreFilter.
    delta: TopologyCounts,
}

impl CountsView {
    /// A view summing `parts` ((topology key, table); a key may appear more than once).
    pub fn new(parts: Vec<(String, Arc<DomainCounts>)>) -> CountsView {
        let mut groups: Vec<(String, u64, Vec<Arc<DomainCounts>>)> = Vec::new();
        for (k, m) in parts {
            match groups.iter_mut().find(|g| g.0 == k) {
                Some(g) => g.2.push(m),
                None => {
                    let h = label_hash(&k);
                    groups.push((k, h, vec![m]));
                }
            }
        }
        CountsView {
            groups,
            delta: TopologyCounts::default(),
        }
    }

    /// The count of (key, value), 0 when absent.
    pub fn get(&self, key: &str, value: &str) -> i64 {
        self.get_hashed(key, label_hash(key), value)
    }

    /// [`CountsView::get`] with the key's [`label_hash`] known.
    pub fn get_hashed(&self, key: &str, key_hash: u64, value: &str) -> i64 {
        let base: i64 = self
            .groups
            .iter()
            .filter(|g| g.1 == key_hash && g.0 == key)
            .flat_map(|g| g.2.iter())
            .filter_map(|m| m.get(value))
            .sum();
        if self.delta.is_empty() {
            base
        } else {
            base + self.delta.get(key, value)
        }
    }

    fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        let base = self.groups.iter().flat_map(|(k, _, ms)| {
            ms.iter()
                .flat_map(move |m| m.keys().map(move |v| (k.as_str(), v.as_str())))
        });
        let delta = self
            .delta
            .0
            .iter()
            .flat_map(|(k, m)| m.keys().map(move |v| (k.as_str(), v.as_str())));
        base.chain(delta)
    }

    /// True when no pair has a non-zero count (upstream: the map is empty, pairs reaching 0
    /// being removed).
    pub fn is_empty(&self) -> bool {
        if self.delta.is_empty() {
            return self.groups.iter().all(|g| g.2.iter().all(|m| m.is_empty()));
        }
        self.pairs().all(|(k, v)| self.get(k, v) == 0)
    }

    /// True when one of a node's labels is a pair with a count > 0.
    pub fn any_label_positive(&self, labels: &LabelIndex) -> bool {
        self.groups.iter().any(|(k, h, _)| {
            labels
                .get_hashed(k, *h)
                .is_some_and(|v| self.get_hashed(k, *h, v) > 0)
        }) || self
            .delta
            .0
            .keys()
            .any(|k| labels.get(k).is_some_and(|v| self.get(k, v) > 0))
    }

    /// Every pair with a non-zero count, as [`TopologyCounts`] (tests compare views by it).
    #[cfg(test)]
    pub fn to_counts(&self) -> TopologyCounts {
        let mut out = TopologyCounts::default();
        for (k, v) in self.pairs() {
            let n = self.get(k, v);
            if n != 0 {
                out.0
                    .entry(k.to_string())
                    .or_default()
                    .insert(v.to_string(), n);
            }
        }
        out
    }

    /// [`TopologyCounts::update_with_affinity_terms`] on the overlay.
    pub fn update_with_affinity_terms(
        &mut self,
        terms: &[AffinityTerm],
        pod: &Pod,
        node: &Node,
        value: i64,
    ) {
        self.delta
            .update_with_affinity_terms(terms, pod, node, value);
    }

    /// [`TopologyCounts::update_with_anti_affinity_terms`] on the overlay.
    pub fn update_with_anti_affinity_terms(
        &mut self,
        terms: &[AffinityTerm],
        pod: &Pod,
        ns_labels: &NamespaceLabels,
        node: &Node,
        value: i64,
    ) {
        self.delta
            .update_with_anti_affinity_terms(terms, pod, ns_labels, node, value);
    }
}

impl From<TopologyCounts> for CountsView {
    fn from(c: TopologyCounts) -> CountsView {
        CountsView {
            groups: Vec::new(),
            delta: c,
        }
    }
}
