//! Taints and tolerations, with upstream's matching rules (`k8s.io/api/core/v1/toleration.go`
//! `ToleratesTaint`, `taint.go` `MatchTaint`).

use serde::{Deserialize, Serialize};

/// Upstream `corev1.Taint`. `effect` is `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// Taint key.
    pub key: String,
    /// Optional value.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
    /// RFC 3339, only for NoExecute taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_added: Option<String>,
}

/// Upstream `corev1.Toleration`. `operator` is `Equal` (default) or `Exists`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    /// Empty key with operator Exists tolerates everything.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
    /// `Equal` (also when empty) or `Exists`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub operator: String,
    /// Value compared with `Equal`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// Empty matches every effect.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub effect: String,
    /// For NoExecute: how long the pod stays bound after the taint appears (seconds = ticks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// Taint effects.
pub mod effects {
    /// Pods that do not tolerate it are not scheduled.
    pub const NO_SCHEDULE: &str = "NoSchedule";
    /// The scheduler tries to avoid the node.
    pub const PREFER_NO_SCHEDULE: &str = "PreferNoSchedule";
    /// Not scheduled, and running pods are evicted.
    pub const NO_EXECUTE: &str = "NoExecute";
}

impl Toleration {
    /// Upstream `Toleration.ToleratesTaint`: effects match (or the toleration's is empty), keys match
    /// (or the toleration's is empty with `Exists`), and with `Equal` the values are equal.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if !self.effect.is_empty() && self.effect != taint.effect {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.operator.as_str() {
            "" | "Equal" => self.value == taint.value,
            "Exists" => true,
            _ => false,
        }
    }
}

impl Taint {
    /// The form upstream prints in scheduling messages: `{key: value}`.
    pub fn to_message_string(&self) -> String {
        format!("{{{}: {}}}", self.key, self.value)
    }
}

/// True when some toleration in `tolerations` tolerates `taint`.
pub fn tolerated(taint: &Taint, tolerations: &[Toleration]) -> bool {
    tolerations.iter().any(|t| t.tolerates(taint))
}

/// The first taint with an effect in `effects` that no toleration tolerates (upstream
/// `v1helper.FindMatchingUntoleratedTaint`).
pub fn find_untolerated<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    effects: &[&str],
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| effects.contains(&t.effect.as_str()))
        .find(|t| !tolerated(t, tolerations))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.into(),
            effect: effect.into(),
            time_added: None,
        }
    }

    fn tol(key: &str, op: &str, value: &str, effect: &str) -> Toleration {
        Toleration {
            key: key.into(),
            operator: op.into(),
            value: value.into(),
            effect: effect.into(),
            toleration_seconds: None,
        }
    }

    #[test]
    fn tolerates_follows_upstream_cases() {
        let t = taint("dedicated", "gpu", "NoSchedule");
        assert!(tol("dedicated", "Equal", "gpu", "NoSchedule").tolerates(&t));
        assert!(tol("dedicated", "", "gpu", "").tolerates(&t));
        assert!(!tol("dedicated", "Equal", "cpu", "NoSchedule").tolerates(&t));
        assert!(tol("dedicated", "Exists", "", "").tolerates(&t));
        assert!(tol("", "Exists", "", "").tolerates(&t));
        assert!(!tol("dedicated", "Exists", "", "NoExecute").tolerates(&t));
        assert!(!tol("other", "Exists", "", "").tolerates(&t));
    }

    #[test]
    fn find_untolerated_respects_effect_filter() {
        let taints = vec![
            taint("a", "1", "PreferNoSchedule"),
            taint("b", "2", "NoSchedule"),
        ];
        let found = find_untolerated(&taints, &[], &["NoSchedule", "NoExecute"]);
        assert_eq!(found.map(|t| t.key.as_str()), Some("b"));
        assert_eq!(found.unwrap().to_message_string(), "{b: 2}");
        let tols = vec![tol("b", "Exists", "", "")];
        assert!(find_untolerated(&taints, &tols, &["NoSchedule", "NoExecute"]).is_none());
    }
}
