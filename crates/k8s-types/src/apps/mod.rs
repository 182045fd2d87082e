//! The `apps/v1` API group: Deployment and ReplicaSet.

pub mod deployment;
pub mod replica_set;

pub use deployment::*;
pub use replica_set::*;

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
