//! Affinity validation (upstream `pkg/apis/core/validation/validation.go` `validateAffinity`,
//! `ValidateNodeSelector`, `ValidateNodeSelectorRequirement`, `validateNodeFieldSelectorRequirement`,
//! `validatePreferredSchedulingTerms`, `validatePodAffinityTerm`, `validateWeightedPodAffinityTerms`,
//! `validateMatchLabelKeysAndMismatchLabelKeys`).

use k8s_types::core::{
    Affinity, NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm, PodAffinity,
    PodAffinityTerm, WeightedPodAffinityTerm,
};
use k8s_types::status::FieldError;

use super::labels::{validate_label_name, validate_label_selector};
use super::names::is_dns1123_label;
use super::{child, index, invalid_each, invalid_str, ErrorList};

const WEIGHT_RANGE: &str = "must be in the range 1-100";

/// Upstream `validateAffinity` at `path` (`spec.affinity`).
pub fn validate_affinity(affinity: &Affinity, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if let Some(na) = &affinity.node_affinity {
        errs.extend(validate_node_affinity(na, &child(path, "nodeAffinity")));
    }
    if let Some(pa) = &affinity.pod_affinity {
        errs.extend(validate_pod_affinity(pa, &child(path, "podAffinity")));
    }
    if let Some(paa) = &affinity.pod_anti_affinity {
        errs.extend(validate_pod_affinity(paa, &child(path, "podAntiAffinity")));
    }
    errs
}

fn validate_node_affinity(na: &NodeAffinity, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if let Some(required) = &na.required_during_scheduling_ignored_during_execution {
        let p = child(path, "requiredDuringSchedulingIgnoredDuringExecution");
        let terms_path = child(&p, "nodeSelectorTerms");
        if required.node_selector_terms.is_empty() {
            errs.push(FieldError::required(
                terms_path.clone(),
                "must have at least one node selector term",
            ));
        }
        for (i, term) in required.node_selector_terms.iter().enumerate() {
            errs.extend(validate_node_selector_term(term, &index(&terms_path, i)));
        }
    }
    let p = child(path, "preferredDuringSchedulingIgnoredDuringExecution");
    for (i, t) in na
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .enumerate()
    {
        let tp = index(&p, i);
        if !(1..=100).contains(&t.weight) {
            errs.push(FieldError::invalid(
                child(&tp, "weight"),
                t.weight.to_string(),
                WEIGHT_RANGE,
            ));
        }
        errs.extend(validate_node_selector_term(
            &t.preference,
            &child(&tp, "preference"),
        ));
    }
    errs
}

fn validate_node_selector_term(term: &NodeSelectorTerm, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    for (j, r) in term.match_expressions.iter().enumerate() {
        errs.extend(validate_node_selector_requirement(
            r,
            &index(&child(path, "matchExpressions"), j),
        ));
    }
    for (j, r) in term.match_fields.iter().enumerate() {
        let p = index(&child(path, "matchFields"), j);
        if r.key != "metadata.name" {
            errs.push(invalid_str(
                child(&p, "key"),
                &r.key,
                "not a valid field selector key",
            ));
        }
        match r.operator.as_str() {
            "In" | "NotIn" if r.values.len() != 1 => errs.push(FieldError::required(
                child(&p, "values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )),
            "In" | "NotIn" => {}
            op => errs.push(invalid_str(
                child(&p, "operator"),
                op,
                "not a valid selector operator",
            )),
        }
    }
    errs
}

/// Upstream `ValidateNodeSelectorRequirement`.
fn validate_node_selector_requirement(r: &NodeSelectorRequirement, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    match r.operator.as_str() {
        "In" | "NotIn" if r.values.is_empty() => errs.push(FieldError::required(
            child(path, "values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if !r.values.is_empty() => errs.push(FieldError::forbidden(
            child(path, "values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "Gt" | "Lt" if r.values.len() != 1 => errs.push(FieldError::required(
            child(path, "values"),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        op => errs.push(invalid_str(
            child(path, "operator"),
            op,
            "not a valid selector operator",
        )),
    }
    errs.extend(validate_label_name(&r.key, &child(path, "key")));
    errs
}

fn validate_pod_affinity(pa: &PodAffinity, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let p = child(path, "requiredDuringSchedulingIgnoredDuringExecution");
    for (i, term) in pa
        .required_during_scheduling_ignored_during_execution
        .iter()
        .enumerate()
    {
        errs.extend(validate_pod_affinity_term(term, &index(&p, i)));
    }
    let p = child(path, "preferredDuringSchedulingIgnoredDuringExecution");
    for (i, w) in pa
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .enumerate()
    {
        errs.extend(validate_weighted_term(w, &index(&p, i)));
    }
    errs
}

fn validate_weighted_term(w: &WeightedPodAffinityTerm, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if !(1..=100).contains(&w.weight) {
        errs.push(FieldError::invalid(
            child(path, "weight"),
            w.weight.to_string(),
            WEIGHT_RANGE,
        ));
    }
    errs.extend(validate_pod_affinity_term(
        &w.pod_affinity_term,
        &child(path, "podAffinityTerm"),
    ));
    errs
}

/// Upstream `validatePodAffinityTerm`.
fn validate_pod_affinity_term(term: &PodAffinityTerm, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if let Some(sel) = &term.label_selector {
        errs.extend(validate_label_selector(sel, &child(path, "labelSelector")));
    }
    if let Some(sel) = &term.namespace_selector {
        errs.extend(validate_label_selector(
            sel,
            &child(path, "namespaceSelector"),
        ));
    }
    for ns in &term.namespaces {
        errs.extend(invalid_each(
            &child(path, "namespace"),
            ns,
            is_dns1123_label(ns),
        ));
    }
    errs.extend(validate_label_keys_fields(term, path));
    // Upstream reports both: Required, then the label-name errors of the empty key.
    if term.topology_key.is_empty() {
        errs.push(FieldError::required(
            child(path, "topologyKey"),
            "can not be empty",
        ));
    }
    errs.extend(validate_label_name(
        &term.topology_key,
        &child(path, "topologyKey"),
    ));
    errs
}

/// Upstream `validateMatchLabelKeysAndMismatchLabelKeys` (after the create-time merge, so a key
/// of `matchLabelKeys` that the selector already had appears twice): every key is a label name
/// and needs a `labelSelector`; a `matchLabelKeys` key may not also be a selector key (reported
/// at upstream's path, the term's path indexed by the key's position); a key may not be in both
/// lists.
fn validate_label_keys_fields(term: &PodAffinityTerm, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let sel = term.label_selector.as_ref();
    for (field, keys) in [
        ("matchLabelKeys", &term.match_label_keys),
        ("mismatchLabelKeys", &term.mismatch_label_keys),
    ] {
        if keys.is_empty() {
            continue;
        }
        let p = child(path, field);
        if sel.is_none() {
            errs.push(FieldError::forbidden(
                p,
                "must not be specified when labelSelector is not set",
            ));
            continue;
        }
        for (i, key) in keys.iter().enumerate() {
            errs.extend(validate_label_name(key, &index(&p, i)));
        }
    }
    if let Some(sel) = sel {
        let mut seen: std::collections::BTreeSet<&str> =
            sel.match_labels.keys().map(String::as_str).collect();
        for e in &sel.match_expressions {
            // Upstream keeps the last position of a key listed twice.
            let at = term.match_label_keys.iter().rposition(|k| *k == e.key);
            if let (Some(i), true) = (at, seen.contains(e.key.as_str())) {
                errs.push(invalid_str(
                    index(path, i),
                    &e.key,
                    "exists in both matchLabelKeys and labelSelector",
                ));
            }
            seen.insert(&e.key);
        }
    }
    let p = child(path, "matchLabelKeys");
    for (i, k) in term.match_label_keys.iter().enumerate() {
        if term.mismatch_label_keys.contains(k) {
            errs.push(invalid_str(
                index(&p, i),
                k,
                "exists in both matchLabelKeys and mismatchLabelKeys",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::labels::{LabelSelector, LabelSelectorRequirement};

    fn term(op: &str, values: &[&str], topology_key: &str) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: Some(LabelSelector {
                match_labels: Default::default(),
                match_expressions: vec![LabelSelectorRequirement {
                    key: "app".into(),
                    operator: op.into(),
                    values: values.iter().map(|v| v.to_string()).collect(),
                }],
            }),
            topology_key: topology_key.into(),
            ..Default::default()
        }
    }

    fn messages(a: &Affinity) -> Vec<String> {
        validate_affinity(a, "spec.affinity")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn pod_affinity_terms_follow_upstream_rules() {
        let a = Affinity {
            pod_anti_affinity: Some(PodAffinity {
                required_during_scheduling_ignored_during_execution: vec![
                    term("Foo", &["x"], "zone"),
                    term("In", &[], ""),
                ],
                preferred_during_scheduling_ignored_during_execution: vec![
                    WeightedPodAffinityTerm {
                        weight: 0,
                        pod_affinity_term: term("Exists", &[], "zone"),
                    },
                ],
            }),
            ..Default::default()
        };
        let p = "spec.affinity.podAntiAffinity";
        assert_eq!(
            messages(&a),
            vec![
                format!("{p}.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator: Invalid value: \"Foo\": not a valid selector operator"),
                format!("{p}.requiredDuringSchedulingIgnoredDuringExecution[1].labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
                format!("{p}.requiredDuringSchedulingIgnoredDuringExecution[1].topologyKey: Required value: can not be empty"),
                // Upstream validates the empty key as a label name too (validatePodAffinityTerm).
                format!("{p}.requiredDuringSchedulingIgnoredDuringExecution[1].topologyKey: Invalid value: \"\": name part must be non-empty"),
                format!("{p}.requiredDuringSchedulingIgnoredDuringExecution[1].topologyKey: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
                format!("{p}.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100"),
            ]
        );
    }

    #[test]
    fn node_affinity_needs_terms_and_valid_requirements() {
        let a = Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(
                    k8s_types::core::NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_expressions: vec![NodeSelectorRequirement {
                                key: "gpus".into(),
                                operator: "Gt".into(),
                                values: vec![],
                            }],
                            match_fields: vec![],
                        }],
                    },
                ),
                preferred_during_scheduling_ignored_during_execution: vec![],
            }),
            ..Default::default()
        };
        assert_eq!(
            messages(&a),
            vec!["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"]
        );
    }
}
