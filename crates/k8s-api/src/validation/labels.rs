//! Label maps and label selectors (upstream `k8s.io/apimachinery/pkg/apis/meta/v1/validation/
//! validation.go` `ValidateLabels`, `ValidateLabelName`, `ValidateLabelSelector`,
//! `ValidateLabelSelectorRequirement`, and `metav1.LabelSelectorAsSelector`'s error conditions).

use std::collections::BTreeMap;

use k8s_types::labels::{LabelSelector, LabelSelectorRequirement};
use k8s_types::status::FieldError;

use super::names::{is_label_value, is_qualified_name};
use super::{child, index, invalid_each, invalid_str, ErrorList};

/// Upstream `ValidateLabelName`: one `Invalid value` per problem with the key, at `path`.
pub fn validate_label_name(name: &str, path: &str) -> ErrorList {
    invalid_each(path, name, is_qualified_name(name))
}

/// Upstream `ValidateLabels`: keys must be qualified names and values valid label values; every
/// error is reported at the map's path (e.g. `metadata.labels`), in key order.
pub fn validate_labels(labels: &BTreeMap<String, String>, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    for (k, v) in labels {
        errs.extend(validate_label_name(k, path));
        errs.extend(invalid_each(path, v, is_label_value(v)));
    }
    errs
}

/// Upstream `ValidateLabelSelectorRequirement`.
pub fn validate_label_selector_requirement(r: &LabelSelectorRequirement, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    match r.operator.as_str() {
        "In" | "NotIn" => {
            if r.values.is_empty() {
                errs.push(FieldError::required(
                    child(path, "values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        }
        "Exists" | "DoesNotExist" => {
            if !r.values.is_empty() {
                errs.push(FieldError::forbidden(
                    child(path, "values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        }
        op => errs.push(invalid_str(
            child(path, "operator"),
            op,
            "not a valid selector operator",
        )),
    }
    errs.extend(validate_label_name(&r.key, &child(path, "key")));
    errs
}

/// Upstream `ValidateLabelSelector` (strict: label values in selectors must be valid).
pub fn validate_label_selector(sel: &LabelSelector, path: &str) -> ErrorList {
    let mut errs = validate_labels(&sel.match_labels, &child(path, "matchLabels"));
    for (i, r) in sel.match_expressions.iter().enumerate() {
        errs.extend(validate_label_selector_requirement(
            r,
            &index(&child(path, "matchExpressions"), i),
        ));
    }
    errs
}

/// Whether upstream `metav1.LabelSelectorAsSelector` accepts the selector (keys are qualified
/// names, values valid label values, a known operator with the right number of values).
pub fn selector_converts(sel: &LabelSelector) -> bool {
    let labels_ok = sel
        .match_labels
        .iter()
        .all(|(k, v)| is_qualified_name(k).is_empty() && is_label_value(v).is_empty());
    let exprs_ok = sel.match_expressions.iter().all(|r| {
        let count_ok = match r.operator.as_str() {
            "In" | "NotIn" => !r.values.is_empty(),
            "Exists" | "DoesNotExist" => r.values.is_empty(),
            _ => false,
        };
        count_ok
            && is_qualified_name(&r.key).is_empty()
            && r.values.iter().all(|v| is_label_value(v).is_empty())
    });
    labels_ok && exprs_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_errors_are_reported_at_the_map_path() {
        let mut l = BTreeMap::new();
        l.insert("app".to_string(), "-bad".to_string());
        let errs = validate_labels(&l, "metadata.labels");
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "metadata.labels: Invalid value: \"-bad\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
    }

    #[test]
    fn selector_requirements() {
        let r = LabelSelectorRequirement {
            key: "app".into(),
            operator: "In".into(),
            values: vec![],
        };
        let errs = validate_label_selector_requirement(&r, "spec.selector.matchExpressions[0]");
        assert_eq!(
            errs[0].to_string(),
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
        );
        let sel = LabelSelector {
            match_expressions: vec![r],
            ..Default::default()
        };
        assert!(!selector_converts(&sel));
        assert!(selector_converts(&LabelSelector::from_labels([("a", "b")])));
    }
}
