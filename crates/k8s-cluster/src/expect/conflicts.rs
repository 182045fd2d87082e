//! The `conflicts` expectation: how many `409 Conflict`s the components were answered so far
//! (`k8s_types::conflict`), by component and kind.

use serde::Deserialize;

use k8s_types::conflict::ConflictLog;

use super::CheckResult;

/// `conflicts`: the conflicts up to the expectation's tick, of one component and/or kind (all
/// when absent).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConflictsExpectation {
    /// The component that wrote, e.g. `replicaset-controller`, `default-scheduler`, `kubelet`.
    #[serde(default)]
    pub component: Option<String>,
    /// The kind written, e.g. `ReplicaSet`.
    #[serde(default)]
    pub kind: Option<String>,
    /// Exact number.
    #[serde(default)]
    pub count: Option<usize>,
    /// Minimum number.
    #[serde(default)]
    pub min_count: Option<usize>,
    /// Maximum number.
    #[serde(default)]
    pub max_count: Option<usize>,
}

/// Checks `c` against the conflicts logged so far.
pub(crate) fn check_conflicts(log: &ConflictLog, c: &ConflictsExpectation) -> CheckResult {
    let got = log
        .records()
        .iter()
        .filter(|r| c.component.as_ref().is_none_or(|x| *x == r.component))
        .filter(|r| c.kind.as_ref().is_none_or(|x| *x == r.kind))
        .count();
    let what = format!(
        "conflicts {} {}",
        c.component.as_deref().unwrap_or("*"),
        c.kind.as_deref().unwrap_or("*")
    );
    let mut problems = Vec::new();
    if let Some(n) = c.count.filter(|n| *n != got) {
        problems.push(format!("expected {n}, got {got}"));
    }
    if let Some(n) = c.min_count.filter(|n| got < *n) {
        problems.push(format!("expected at least {n}, got {got}"));
    }
    if let Some(n) = c.max_count.filter(|n| got > *n) {
        problems.push(format!("expected at most {n}, got {got}"));
    }
    CheckResult {
        what,
        failure: (!problems.is_empty()).then(|| problems.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_filter_by_component_and_kind() {
        let log = ConflictLog::new();
        let c = ConflictsExpectation {
            count: Some(0),
            ..Default::default()
        };
        assert_eq!(check_conflicts(&log, &c).failure, None);
        let c = ConflictsExpectation {
            component: Some("replicaset-controller".into()),
            min_count: Some(1),
            ..Default::default()
        };
        assert_eq!(
            check_conflicts(&log, &c).failure.as_deref(),
            Some("expected at least 1, got 0")
        );
    }
}
