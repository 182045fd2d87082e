//! The namespace deletion conditions, after upstream
//! `pkg/controller/namespace/deletion/status_condition_utils.go` (`conditionTypes`, `okMessages`,
//! `okReasons`, `ProcessContentTotals`, `makeDeleteContentCondition`, `updateConditions`): every
//! sync of a terminating namespace sets all five types, True with the failure's reason and message
//! or False with the "ok" variant; `lastTransitionTime` changes only when the status flips.

use serde_json::{json, Map, Value};

/// Upstream `v1.NamespaceDeletionDiscoveryFailure`.
pub const DELETION_DISCOVERY_FAILURE: &str = "NamespaceDeletionDiscoveryFailure";
/// Upstream `v1.NamespaceDeletionGVParsingFailure`.
pub const DELETION_GV_PARSING_FAILURE: &str = "NamespaceDeletionGroupVersionParsingFailure";
/// Upstream `v1.NamespaceDeletionContentFailure`.
pub const DELETION_CONTENT_FAILURE: &str = "NamespaceDeletionContentFailure";
/// Upstream `v1.NamespaceContentRemaining`.
pub const CONTENT_REMAINING: &str = "NamespaceContentRemaining";
/// Upstream `v1.NamespaceFinalizersRemaining`.
pub const FINALIZERS_REMAINING: &str = "NamespaceFinalizersRemaining";

/// Upstream `conditionTypes`, in upstream's order (the order new conditions are appended in).
pub const CONDITION_TYPES: [&str; 5] = [
    DELETION_DISCOVERY_FAILURE,
    DELETION_GV_PARSING_FAILURE,
    DELETION_CONTENT_FAILURE,
    CONTENT_REMAINING,
    FINALIZERS_REMAINING,
];

/// Upstream `okReasons` and `okMessages`: the False variant of each condition type.
pub fn ok_reason_and_message(type_: &str) -> (&'static str, &'static str) {
    match type_ {
        DELETION_DISCOVERY_FAILURE => (
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        DELETION_GV_PARSING_FAILURE => (
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        DELETION_CONTENT_FAILURE => (
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        _ => ("ContentRemoved", "All content successfully removed"),
    }
}

/// A failing (True) condition found by one sync: type, reason, message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failing {
    /// Condition type.
    pub type_: &'static str,
    /// Reason.
    pub reason: String,
    /// Message.
    pub message: String,
}

/// Upstream `ProcessContentTotals`: `remaining` is `(resource.group, count)` for every kind with
/// instances left, `finalizers` is `(finalizer, count)`; both give one True condition each, their
/// entries sorted as strings.
pub fn content_totals(
    remaining: &[(String, usize)],
    finalizers: &[(String, usize)],
) -> Vec<Failing> {
    let mut out = Vec::new();
    let mut rs: Vec<String> = remaining
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(gr, n)| format!("{gr} has {n} resource instances"))
        .collect();
    if !remaining.is_empty() {
        rs.sort();
        out.push(Failing {
            type_: CONTENT_REMAINING,
            reason: "SomeResourcesRemain".into(),
            message: format!("Some resources are remaining: {}", rs.join(", ")),
        });
    }
    let mut fs: Vec<String> = finalizers
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(f, n)| format!("{f} in {n} resource instances"))
        .collect();
    if !finalizers.is_empty() {
        fs.sort();
        out.push(Failing {
            type_: FINALIZERS_REMAINING,
            reason: "SomeFinalizerRemain".into(),
            message: format!("Some finalizers are remaining: {}", fs.join(", ")),
        });
    }
    out
}

/// Upstream `makeDeleteContentCondition`: the delete errors, sorted, in one True condition.
pub fn delete_content_failure(errors: &[String]) -> Option<Failing> {
    if errors.is_empty() {
        return None;
    }
    let mut msgs = errors.to_vec();
    msgs.sort();
    Some(Failing {
        type_: DELETION_CONTENT_FAILURE,
        reason: "ContentDeletionFailed".into(),
        message: format!(
            "Failed to delete all resource types, {} remaining: {}",
            msgs.len(),
            msgs.join(", ")
        ),
    })
}

/// Upstream `updateConditions` over a namespace's `status` (a JSON object): each of the five types
/// gets its failing condition or the ok variant; a condition not there is appended, one whose
/// status, reason or message differs is updated in place (`lastTransitionTime = now` only when its
/// status changes). Returns whether anything changed.
pub fn update_conditions(status: &mut Map<String, Value>, failing: &[Failing], now: &str) -> bool {
    let mut conditions: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut changed = false;
    for type_ in CONDITION_TYPES {
        let (st, reason, message) = match failing.iter().find(|f| f.type_ == type_) {
            Some(f) => ("True", f.reason.clone(), f.message.clone()),
            None => {
                let (r, m) = ok_reason_and_message(type_);
                ("False", r.to_string(), m.to_string())
            }
        };
        let existing = conditions
            .iter_mut()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(type_));
        match existing {
            None => {
                conditions.push(json!({
                    "type": type_,
                    "status": st,
                    "lastTransitionTime": now,
                    "reason": reason,
                    "message": message,
                }));
                changed = true;
            }
            Some(c) => {
                let field =
                    |c: &Value, f: &str| c.get(f).and_then(Value::as_str).map(str::to_string);
                let same = field(c, "status").as_deref() == Some(st)
                    && field(c, "reason").as_deref() == Some(reason.as_str())
                    && field(c, "message").as_deref() == Some(message.as_str());
                if !same {
                    if field(c, "status").as_deref() != Some(st) {
                        c["lastTransitionTime"] = json!(now);
                    }
                    c["status"] = json!(st);
                    c["reason"] = json!(reason);
                    c["message"] = json!(message);
                    changed = true;
                }
            }
        }
    }
    status.insert("conditions".to_string(), Value::Array(conditions));
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_content_is_one_sorted_condition() {
        let f = content_totals(&[("pods.".into(), 2), ("deployments.apps".into(), 1)], &[]);
        assert_eq!(
            f,
            vec![Failing {
                type_: CONTENT_REMAINING,
                reason: "SomeResourcesRemain".into(),
                message: "Some resources are remaining: deployments.apps has 1 resource instances, pods. has 2 resource instances".into(),
            }]
        );
        let e = delete_content_failure(&["b".into(), "a".into()]).map(|f| f.message);
        assert_eq!(
            e.as_deref(),
            Some("Failed to delete all resource types, 2 remaining: a, b")
        );
    }

    #[test]
    fn conditions_are_all_set_and_flip_with_a_new_transition_time() {
        let mut status = Map::new();
        let failing = content_totals(&[("pods.".into(), 1)], &[]);
        assert!(update_conditions(&mut status, &failing, "T1"));
        let conds = status["conditions"].as_array().cloned().unwrap_or_default();
        let types: Vec<&str> = conds.iter().filter_map(|c| c["type"].as_str()).collect();
        assert_eq!(types, CONDITION_TYPES.to_vec());
        assert_eq!(conds[3]["status"], "True");
        assert_eq!(conds[4]["status"], "False");
        assert_eq!(conds[4]["reason"], "ContentRemoved");
        // Same input: nothing changes.
        assert!(!update_conditions(&mut status, &failing, "T2"));
        // Content gone: NamespaceContentRemaining flips to False at T3, the others keep T1.
        assert!(update_conditions(&mut status, &[], "T3"));
        let conds = status["conditions"].as_array().cloned().unwrap_or_default();
        assert_eq!(conds[3]["status"], "False");
        assert_eq!(conds[3]["message"], "All content successfully removed");
        assert_eq!(conds[3]["lastTransitionTime"], "T3");
        assert_eq!(conds[0]["lastTransitionTime"], "T1");
    }
}
