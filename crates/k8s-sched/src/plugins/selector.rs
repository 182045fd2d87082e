//! [`Selector`]: a label selector with upstream's distinction between "nothing" and
//! "everything" (upstream `k8s.io/apimachinery/pkg/labels` `Nothing()`, `Everything()`,
//! `metav1.LabelSelectorAsSelector`, `labels.SelectorFromSet`, `Selector.Add`), as
//! PodTopologySpread and InterPodAffinity use it: a nil `labelSelector` matches no pod, an empty
//! one matches every pod.

use std::collections::BTreeMap;

use k8s_types::labels::{LabelSelector, LabelSelectorRequirement};

/// A parsed label selector.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Selector {
    /// Matches nothing (upstream `labels.Nothing()`, what a nil `*metav1.LabelSelector`
    /// converts to).
    Nothing,
    /// Matches labels that satisfy every requirement; no requirement matches everything.
    Match(LabelSelector),
}

impl Selector {
    /// Upstream `metav1.LabelSelectorAsSelector`: `None` -> [`Selector::Nothing`], an empty
    /// selector -> everything.
    pub fn from_label_selector(sel: Option<&LabelSelector>) -> Selector {
        match sel {
            None => Selector::Nothing,
            Some(s) => Selector::Match(s.clone()),
        }
    }

    /// Matches every label set (upstream `labels.Everything()`).
    pub fn everything() -> Selector {
        Selector::Match(LabelSelector::default())
    }

    /// Upstream `labels.SelectorFromSet`: `key = value` for each pair (an empty set matches
    /// everything).
    pub fn from_set(set: &BTreeMap<String, String>) -> Selector {
        Selector::Match(LabelSelector {
            match_labels: set.clone(),
            match_expressions: Vec::new(),
        })
    }

    /// True when `labels` satisfy the selector.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::Match(s) => s.matches(labels),
        }
    }

    /// Upstream `Selector.Empty`: true when there is no requirement (matches everything); false
    /// for [`Selector::Nothing`].
    pub fn is_empty(&self) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::Match(s) => s.is_empty(),
        }
    }

    /// The requirements of the selector (upstream `Selector.Requirements`): `None` for
    /// [`Selector::Nothing`]; `matchLabels` become `key In (value)`.
    pub fn requirements(&self) -> Option<Vec<LabelSelectorRequirement>> {
        match self {
            Selector::Nothing => None,
            Selector::Match(s) => {
                let mut out: Vec<LabelSelectorRequirement> = s
                    .match_labels
                    .iter()
                    .map(|(k, v)| LabelSelectorRequirement {
                        key: k.clone(),
                        operator: "In".to_string(),
                        values: vec![v.clone()],
                    })
                    .collect();
                out.extend(s.match_expressions.iter().cloned());
                Some(out)
            }
        }
    }

    /// Upstream `Selector.Add`: the selector with `reqs` ANDed in ([`Selector::Nothing`] stays
    /// nothing).
    pub fn with_requirements(self, reqs: Vec<LabelSelectorRequirement>) -> Selector {
        match self {
            Selector::Nothing => Selector::Nothing,
            Selector::Match(mut s) => {
                s.match_expressions.extend(reqs);
                Selector::Match(s)
            }
        }
    }

    /// Upstream `mergeLabelSetWithSelector` (PodTopologySpread `matchLabelKeys`): the set's
    /// `key = value` requirements plus the requirements of `s` (none when `s` matches nothing, as
    /// upstream's `Requirements()` reports no requirements for `Nothing`).
    pub fn merge_label_set(set: &BTreeMap<String, String>, s: &Selector) -> Selector {
        let merged = Selector::from_set(set);
        match s.requirements() {
            Some(reqs) => merged.with_requirements(reqs),
            None => merged,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn nil_matches_nothing_and_empty_matches_everything() {
        let l = labels(&[("foo", "")]);
        assert!(!Selector::from_label_selector(None).matches(&l));
        assert!(!Selector::Nothing.is_empty());
        let empty = Selector::from_label_selector(Some(&LabelSelector::default()));
        assert!(empty.matches(&l));
        assert!(empty.is_empty());
    }

    #[test]
    fn merged_set_is_anded_and_keeps_both_values_of_a_key() {
        let s = Selector::from_label_selector(Some(&LabelSelector::from_labels([("app", "web")])));
        let merged = Selector::merge_label_set(&labels(&[("app", "db"), ("tier", "x")]), &s);
        // app=db from the set and app=web from the selector: nothing can match both.
        assert!(!merged.matches(&labels(&[("app", "web"), ("tier", "x")])));
        let merged = Selector::merge_label_set(&labels(&[("tier", "x")]), &s);
        assert!(merged.matches(&labels(&[("app", "web"), ("tier", "x")])));
        assert!(!merged.matches(&labels(&[("app", "web")])));
        // Merging into Nothing keeps only the set, as upstream.
        let merged = Selector::merge_label_set(&labels(&[("tier", "x")]), &Selector::Nothing);
        assert!(merged.matches(&labels(&[("tier", "x")])));
    }
}
