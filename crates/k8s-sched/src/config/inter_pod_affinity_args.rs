//! `InterPodAffinityArgs` with upstream's defaulting and validation (upstream
//! `staging/src/k8s.io/kube-scheduler/config/v1/types_pluginargs.go` `InterPodAffinityArgs`,
//! `pkg/scheduler/apis/config/v1/defaults.go` `SetDefaults_InterPodAffinityArgs`,
//! `pkg/scheduler/apis/config/validation/validation_pluginargs.go`
//! `ValidateInterPodAffinityArgs`).

use serde::{Deserialize, Serialize};

use k8s_types::status::FieldError;

/// Upstream `v1.DefaultHardPodAffinitySymmetricWeight`.
pub const DEFAULT_HARD_POD_AFFINITY_WEIGHT: i32 = 1;
/// Upstream `maxHardPodAffinityWeight`.
pub const MAX_HARD_POD_AFFINITY_WEIGHT: i32 = 100;

/// Upstream `InterPodAffinityArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InterPodAffinityArgs {
    /// Score weight of an existing pod's required affinity term that the incoming pod matches
    /// (0-100, default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_pod_affinity_weight: Option<i32>,
    /// Skip existing pods' preferred terms when the incoming pod has no preferred terms.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_preferred_terms_of_existing_pods: bool,
}

impl InterPodAffinityArgs {
    /// Upstream defaults: `hardPodAffinityWeight: 1`.
    pub fn defaulted(mut self) -> InterPodAffinityArgs {
        self.hard_pod_affinity_weight
            .get_or_insert(DEFAULT_HARD_POD_AFFINITY_WEIGHT);
        self
    }

    /// The weight (default applied).
    pub fn hard_pod_affinity_weight(&self) -> i32 {
        self.hard_pod_affinity_weight
            .unwrap_or(DEFAULT_HARD_POD_AFFINITY_WEIGHT)
    }

    /// Upstream `ValidateInterPodAffinityArgs`.
    pub fn validate(&self, path: &str) -> Vec<FieldError> {
        let w = self.hard_pod_affinity_weight();
        if (0..=MAX_HARD_POD_AFFINITY_WEIGHT).contains(&w) {
            return Vec::new();
        }
        let field = if path.is_empty() {
            "hardPodAffinityWeight".to_string()
        } else {
            format!("{path}.hardPodAffinityWeight")
        };
        vec![FieldError::invalid(
            field,
            w.to_string(),
            format!("not in valid range [0, {MAX_HARD_POD_AFFINITY_WEIGHT}]"),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_defaults_to_one_and_is_range_checked() {
        // Upstream validation_pluginargs_test.go TestValidateInterPodAffinityArgs.
        let a = InterPodAffinityArgs::default().defaulted();
        assert_eq!(a.hard_pod_affinity_weight, Some(1));
        assert!(a.validate("args").is_empty());
        for ok in [0, 100] {
            let a = InterPodAffinityArgs {
                hard_pod_affinity_weight: Some(ok),
                ..Default::default()
            };
            assert!(a.validate("args").is_empty(), "{ok}");
        }
        let a = InterPodAffinityArgs {
            hard_pod_affinity_weight: Some(-1),
            ..Default::default()
        };
        assert_eq!(
            a.validate("args")[0].to_string(),
            "args.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"
        );
        let a = InterPodAffinityArgs {
            hard_pod_affinity_weight: Some(101),
            ..Default::default()
        };
        assert_eq!(
            a.validate("")[0].to_string(),
            "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"
        );
    }
}
