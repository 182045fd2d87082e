//! The `apps/v1` API group: Deployment, ReplicaSet, DaemonSet, StatefulSet and ControllerRevision.

pub mod controller_revision;
pub mod daemon_set;
pub mod deployment;
pub mod replica_set;
pub mod stateful_set;

pub use controller_revision::*;
pub use daemon_set::*;
pub use deployment::*;
pub use replica_set::*;
pub use stateful_set::*;

use serde::{Deserialize, Serialize};

use crate::core::PodSpec;
use crate::meta::ObjectMeta;

/// Upstream `corev1.PodTemplateSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PodTemplateSpec {
    /// Labels and annotations given to each pod.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The pod spec.
    #[serde(default)]
    pub spec: PodSpec,
}

/// Serde helper for upstream's `omitempty` on an `int32` status field: 0 is left out of the
/// output (a missing field reads back as 0).
pub(crate) fn is_zero(v: &i32) -> bool {
    *v == 0
}

/// An `int-or-string` value (upstream `intstr.IntOrString`), e.g. `maxSurge: 1` or `maxSurge: 25%`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IntOrString {
    /// An integer.
    Int(i32),
    /// A string, usually a percentage such as `25%`.
    String(String),
}

impl IntOrString {
    /// Upstream `intstr.GetScaledValueFromIntOrPercent`: an int is returned as is; `N%` is
    /// `N * total / 100`, rounded up when `round_up`, else down.
    ///
    /// # Errors
    /// A message when the string is not an integer percentage.
    pub fn scaled_value(&self, total: i32, round_up: bool) -> Result<i32, String> {
        match self {
            IntOrString::Int(v) => Ok(*v),
            IntOrString::String(s) => {
                let pct: i64 = s
                    .strip_suffix('%')
                    .and_then(|p| p.parse().ok())
                    .ok_or_else(|| format!("invalid value for IntOrString: invalid type: string is not a percentage: {s:?}"))?;
                let product = pct * i64::from(total);
                let v = if round_up {
                    (product + 99).div_euclid(100)
                } else {
                    product.div_euclid(100)
                };
                Ok(v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_scale_like_upstream() {
        // Upstream: 25% of 10 rounded up is 3 (maxSurge), rounded down is 2 (maxUnavailable).
        let p = IntOrString::String("25%".into());
        assert_eq!(p.scaled_value(10, true), Ok(3));
        assert_eq!(p.scaled_value(10, false), Ok(2));
        assert_eq!(p.scaled_value(3, true), Ok(1));
        assert_eq!(p.scaled_value(3, false), Ok(0));
        assert_eq!(IntOrString::Int(1).scaled_value(3, false), Ok(1));
        assert!(IntOrString::String("abc".into())
            .scaled_value(3, false)
            .is_err());
    }
}

#[cfg(test)]
mod omitempty_tests {
    use super::*;

    /// Upstream's JSON tags: every DeploymentStatus count is `omitempty`; ReplicaSetStatus keeps
    /// `replicas` (no `omitempty`) and drops the other zero counts.
    #[test]
    fn zero_status_counts_are_left_out_as_upstream() {
        let d = serde_json::to_value(DeploymentStatus::default()).expect("json");
        assert_eq!(d, serde_json::json!({}));
        let rs = serde_json::to_value(ReplicaSetStatus::default()).expect("json");
        assert_eq!(rs, serde_json::json!({"replicas": 0}));
        let d = DeploymentStatus {
            replicas: 3,
            available_replicas: 2,
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&d).expect("json"),
            serde_json::json!({"replicas": 3, "availableReplicas": 2})
        );
        // A missing field reads back as 0.
        let back: DeploymentStatus = serde_json::from_value(serde_json::json!({})).expect("read");
        assert_eq!(back, DeploymentStatus::default());
    }
}
