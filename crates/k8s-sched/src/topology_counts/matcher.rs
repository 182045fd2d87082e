//! [`PodMatcher`]: which pods a counter of the [`TopologyIndex`](super::TopologyIndex) counts,
//! with the memo of the label maps its selectors were last evaluated on.

use std::collections::BTreeSet;
use std::hash::Hash;

use k8s_sched_framework::NodeInfo;
use k8s_types::core::Pod;
use k8s_types::meta::StringMap;

use super::label_pair_hash;
use crate::plugins::inter_pod_affinity::terms::{AffinityTerm, NamespaceLabels};
use crate::plugins::selector::Selector;

/// One condition of a [`PodMatcher`]: the pod's namespace is listed (or the namespace selector
/// matches an empty label set, i.e. it is `{}`) and its labels match `selector`. This is upstream
/// `AffinityTerm.Matches` with no namespace labels, which is how the incoming pod's terms (their
/// namespace selectors already merged) and PodTopologySpread's namespace check behave.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Clause {
    /// Namespaces a pod may be in.
    pub namespaces: BTreeSet<String>,
    /// A pod in any namespace qualifies when this matches the empty label set.
    pub namespace_selector: Selector,
    /// The pod's labels must match.
    pub selector: Selector,
}

impl Clause {
    /// True when `pod` satisfies the clause.
    #[inline]
    pub fn matches(&self, pod: &Pod) -> bool {
        self.namespace_matches(pod) && self.selector.matches(&pod.metadata.labels)
    }

    /// The namespace half of [`Clause::matches`].
    #[inline]
    fn namespace_matches(&self, pod: &Pod) -> bool {
        self.namespaces.contains(pod.metadata.namespace())
            || self.namespace_selector.matches(&NamespaceLabels::new())
    }
}

/// The last two label maps a counter's selectors were evaluated on, each with the outcome. The
/// pods of one template share one labels map (a [`StringMap`] copied from the template, see
/// `GetPodFromTemplate`), so recounting a node's pods mostly compares pointers instead of
/// matching selectors. An entry holds its map, so the address cannot be reused by another map
/// while it is remembered; the outcome depends only on the map's contents, never on the pod.
#[derive(Clone, Debug, Default)]
pub(super) struct LabelsMemo {
    entries: [Option<(StringMap, bool)>; 2],
    /// The entry the next miss replaces.
    next: usize,
}

impl LabelsMemo {
    /// The remembered outcome for `labels`, else `eval()` (then remembered).
    #[inline]
    pub(super) fn get_or(&mut self, labels: &StringMap, eval: impl FnOnce() -> bool) -> bool {
        for (map, outcome) in self.entries.iter().flatten() {
            if StringMap::ptr_eq(map, labels) {
                return *outcome;
            }
        }
        let outcome = eval();
        self.entries[self.next] = Some((labels.clone(), outcome));
        self.next = (self.next + 1) % self.entries.len();
        outcome
    }
}

/// Which pods a counter counts: every clause must hold.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PodMatcher {
    /// Pods with a `deletionTimestamp` are not counted (PodTopologySpread's
    /// `countPodsMatchSelector`); InterPodAffinity counts them.
    pub skip_terminating: bool,
    /// The conditions, ANDed; no clause matches no pod (upstream `podMatchesAllAffinityTerms`
    /// is false for no terms).
    pub clauses: Vec<Clause>,
}

impl PodMatcher {
    /// PodTopologySpread's `countPodsMatchSelector`: pods in `namespace`, not being deleted,
    /// matching `selector`.
    pub fn spread(namespace: &str, selector: &Selector) -> PodMatcher {
        PodMatcher {
            skip_terminating: true,
            clauses: vec![Clause {
                namespaces: BTreeSet::from([namespace.to_string()]),
                namespace_selector: Selector::Nothing,
                selector: selector.clone(),
            }],
        }
    }

    /// Pods matching every one of `terms` (incoming-pod terms, namespace selectors merged).
    pub fn all_terms(terms: &[AffinityTerm]) -> PodMatcher {
        PodMatcher {
            skip_terminating: false,
            clauses: terms
                .iter()
                .map(|t| Clause {
                    namespaces: t.namespaces.clone(),
                    namespace_selector: t.namespace_selector.clone(),
                    selector: t.selector.clone(),
                })
                .collect(),
        }
    }

    /// True when `pod` is counted.
    #[inline]
    pub fn matches(&self, pod: &Pod) -> bool {
        if self.skip_terminating && pod.metadata.deletion_timestamp.is_some() {
            return false;
        }
        !self.clauses.is_empty() && self.clauses.iter().all(|c| c.matches(pod))
    }

    /// [`PodMatcher::matches`], the label selectors' outcome taken from `memo` when the pod's
    /// labels map was evaluated last (the same answer: `matches` is the namespace checks and the
    /// selector checks of every clause, ANDed).
    #[inline]
    pub(super) fn matches_memo(&self, pod: &Pod, memo: &mut LabelsMemo) -> bool {
        if self.skip_terminating && pod.metadata.deletion_timestamp.is_some() {
            return false;
        }
        let labels = &pod.metadata.labels;
        !self.clauses.is_empty()
            && self.clauses.iter().all(|c| c.namespace_matches(pod))
            && memo.get_or(labels, || {
                self.clauses.iter().all(|c| c.selector.matches(labels))
            })
    }

    #[inline]
    pub(super) fn count(&self, node: &NodeInfo, memo: &mut LabelsMemo) -> u32 {
        node.pods()
            .iter()
            .filter(|p| self.matches_memo(&p.pod, memo))
            .count() as u32
    }

    /// The hash ([`label_pair_hash`]) of a label pair every matching pod carries, if the first
    /// clause that names one does: its first `matchLabels` pair, or else its first `In`
    /// requirement with a single value. `None` when no clause requires a pair.
    pub(super) fn required_label(&self) -> Option<u64> {
        self.clauses.iter().find_map(|c| match &c.selector {
            Selector::Match(s) => s
                .match_labels
                .iter()
                .next()
                .map(|(k, v)| label_pair_hash(k, v))
                .or_else(|| {
                    s.match_expressions
                        .iter()
                        .find_map(|r| match r.values.as_slice() {
                            [v] if r.operator == "In" => Some(label_pair_hash(&r.key, v)),
                            _ => None,
                        })
                }),
            Selector::Nothing => None,
        })
    }
}
