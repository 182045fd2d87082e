//! `policy/v1` PodDisruptionBudget and Eviction (upstream `k8s.io/api/policy/v1/types.go`:
//! `PodDisruptionBudget`, `PodDisruptionBudgetSpec`, `PodDisruptionBudgetStatus`, `Eviction`,
//! the `DisruptionAllowed` condition and its reasons, `UnhealthyPodEvictionPolicyType`), and the
//! condition helpers of `k8s.io/component-helpers/apps/poddisruptionbudget/helpers.go`
//! (`UpdateDisruptionAllowedCondition`, `ConditionsAreUpToDate`) with apimachinery's
//! `meta.SetStatusCondition`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::apps::IntOrString;
use crate::labels::LabelSelector;
use crate::meta::{tick_timestamp, ObjectMeta};
use crate::Tick;

/// Upstream `policyv1.DisruptionAllowedCondition`.
pub const DISRUPTION_ALLOWED_CONDITION: &str = "DisruptionAllowed";
/// Upstream `policyv1.SyncFailedReason`: the controller could not compute the status.
pub const SYNC_FAILED_REASON: &str = "SyncFailed";
/// Upstream `policyv1.SufficientPodsReason`: disruptions are allowed.
pub const SUFFICIENT_PODS_REASON: &str = "SufficientPods";
/// Upstream `policyv1.InsufficientPodsReason`: no disruption is allowed.
pub const INSUFFICIENT_PODS_REASON: &str = "InsufficientPods";
/// Upstream `policyv1.DisruptionBudgetCause`: the cause type of a 429 from the eviction subresource.
pub const DISRUPTION_BUDGET_CAUSE: &str = "DisruptionBudget";

/// Upstream `UnhealthyPodEvictionPolicyType` values.
pub mod unhealthy_pod_eviction_policies {
    /// Running but not Ready pods may be evicted only while the budget is healthy (the
    /// behaviour when the field is unset).
    pub const IF_HEALTHY_BUDGET: &str = "IfHealthyBudget";
    /// Running but not Ready pods may always be evicted.
    pub const ALWAYS_ALLOW: &str = "AlwaysAllow";
}

/// `policy/v1` PodDisruptionBudget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudget {
    /// `policy/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `PodDisruptionBudget`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: PodDisruptionBudgetSpec,
    /// Status, written by the disruption controller and the eviction subresource.
    #[serde(default)]
    pub status: PodDisruptionBudgetStatus,
}

/// Upstream `PodDisruptionBudgetSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetSpec {
    /// Pods that must still be available after an eviction (int or percent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
    /// Pods that may be unavailable after an eviction (int or percent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// The pods the budget covers (policy/v1: an empty selector selects every pod of the
    /// namespace for the disruption controller; a missing one selects none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// `IfHealthyBudget` (unset) or `AlwaysAllow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_pod_eviction_policy: Option<String>,
}

/// Upstream `metav1.Condition` as a PodDisruptionBudget carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PdbCondition {
    /// Condition type (`DisruptionAllowed`).
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// The `.metadata.generation` the condition was set from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// CamelCase reason.
    #[serde(default)]
    pub reason: String,
    /// Human-readable message.
    #[serde(default)]
    pub message: String,
}

/// Upstream `PodDisruptionBudgetStatus`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetStatus {
    /// The generation the controller last observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Pods the eviction subresource let go that the controller has not seen deleted yet: pod
    /// name -> eviction time.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub disrupted_pods: BTreeMap<String, String>,
    /// Evictions currently allowed.
    #[serde(default)]
    pub disruptions_allowed: i32,
    /// Healthy (Ready) pods.
    #[serde(default)]
    pub current_healthy: i32,
    /// Healthy pods the budget wants.
    #[serde(default)]
    pub desired_healthy: i32,
    /// Pods the budget counts (its controllers' scale, or the matching pods).
    #[serde(default)]
    pub expected_pods: i32,
    /// `DisruptionAllowed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<PdbCondition>,
}

impl PodDisruptionBudget {
    /// The `DisruptionAllowed` condition, if set.
    pub fn disruption_allowed_condition(&self) -> Option<&PdbCondition> {
        self.status
            .conditions
            .iter()
            .find(|c| c.type_ == DISRUPTION_ALLOWED_CONDITION)
    }

    /// Whether the budget lets unready pods go whatever its health (`AlwaysAllow`).
    pub fn always_allows_unhealthy(&self) -> bool {
        self.spec.unhealthy_pod_eviction_policy.as_deref()
            == Some(unhealthy_pod_eviction_policies::ALWAYS_ALLOW)
    }

    /// Whether this budget covers a pod with `labels` in `namespace` as the eviction subresource
    /// and the scheduler's preemption read it: a missing or empty selector matches nothing
    /// (upstream `getPodDisruptionBudgets` in `eviction.go`, `filterPodsWithPDBViolation` in
    /// `preemption.go`).
    pub fn covers_for_disruption(
        &self,
        namespace: &str,
        labels: &BTreeMap<String, String>,
    ) -> bool {
        self.metadata.namespace() == namespace
            && self
                .spec
                .selector
                .as_ref()
                .is_some_and(|s| !s.is_empty() && s.matches(labels))
    }
}

/// apimachinery `meta.SetStatusCondition`: replaces the condition of the same type, keeping its
/// `lastTransitionTime` unless the status changes (a new condition gets `now`).
pub fn set_status_condition(conditions: &mut Vec<PdbCondition>, mut cond: PdbCondition, now: Tick) {
    match conditions.iter_mut().find(|c| c.type_ == cond.type_) {
        Some(existing) => {
            if existing.status != cond.status {
                existing.status = cond.status;
                existing.last_transition_time = Some(tick_timestamp(now));
            }
            existing.reason = cond.reason;
            existing.message = cond.message;
            existing.observed_generation = cond.observed_generation;
        }
        None => {
            if cond.last_transition_time.is_none() {
                cond.last_transition_time = Some(tick_timestamp(now));
            }
            conditions.push(cond);
        }
    }
}

/// Upstream `UpdateDisruptionAllowedCondition`: `True`/`SufficientPods` when disruptions are
/// allowed, else `False`/`InsufficientPods`, at the status's observed generation.
pub fn update_disruption_allowed_condition(pdb: &mut PodDisruptionBudget, now: Tick) {
    let (status, reason) = if pdb.status.disruptions_allowed > 0 {
        ("True", SUFFICIENT_PODS_REASON)
    } else {
        ("False", INSUFFICIENT_PODS_REASON)
    };
    let cond = PdbCondition {
        type_: DISRUPTION_ALLOWED_CONDITION.to_string(),
        status: status.to_string(),
        observed_generation: pdb.status.observed_generation,
        last_transition_time: None,
        reason: reason.to_string(),
        message: String::new(),
    };
    set_status_condition(&mut pdb.status.conditions, cond, now);
}

/// Upstream `ConditionsAreUpToDate`: the condition exists, the status observed the current
/// generation, and the condition agrees with `disruptionsAllowed`.
pub fn conditions_are_up_to_date(pdb: &PodDisruptionBudget) -> bool {
    let Some(c) = pdb.disruption_allowed_condition() else {
        return false;
    };
    if pdb.status.observed_generation != pdb.metadata.generation {
        return false;
    }
    if pdb.status.disruptions_allowed > 0 {
        c.status == "True" && c.reason == SUFFICIENT_PODS_REASON
    } else {
        c.status == "False" && c.reason == INSUFFICIENT_PODS_REASON
    }
}

/// `policy/v1` Eviction: the body of a `create` on `pods/<name>/eviction` (the pod's name and
/// namespace, and the options of the deletion it asks for).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Eviction {
    /// The pod's name and namespace.
    pub metadata: ObjectMeta,
    /// `deleteOptions` (the grace period; `None` uses the pod's).
    pub delete_options: crate::apiserver::DeleteOptions,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdb(allowed: i32) -> PodDisruptionBudget {
        let mut p = PodDisruptionBudget::default();
        p.metadata.generation = Some(1);
        p.status.observed_generation = Some(1);
        p.status.disruptions_allowed = allowed;
        p
    }

    #[test]
    fn condition_follows_disruptions_allowed_and_keeps_transition_time() {
        let mut p = pdb(1);
        assert!(!conditions_are_up_to_date(&p));
        update_disruption_allowed_condition(&mut p, 5);
        let c = p.disruption_allowed_condition().unwrap().clone();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", "SufficientPods")
        );
        assert_eq!(
            c.last_transition_time.as_deref(),
            Some("1970-01-01T00:00:05Z")
        );
        assert!(conditions_are_up_to_date(&p));
        // Same status later: the transition time stays.
        update_disruption_allowed_condition(&mut p, 9);
        assert_eq!(
            p.disruption_allowed_condition()
                .unwrap()
                .last_transition_time
                .as_deref(),
            Some("1970-01-01T00:00:05Z")
        );
        p.status.disruptions_allowed = 0;
        assert!(!conditions_are_up_to_date(&p));
        update_disruption_allowed_condition(&mut p, 12);
        let c = p.disruption_allowed_condition().unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "InsufficientPods")
        );
        assert_eq!(
            c.last_transition_time.as_deref(),
            Some("1970-01-01T00:00:12Z")
        );
        // A newer generation makes the conditions stale.
        p.metadata.generation = Some(2);
        assert!(!conditions_are_up_to_date(&p));
    }

    #[test]
    fn empty_or_missing_selector_covers_nothing_for_eviction() {
        let mut p = pdb(1);
        p.metadata.namespace = Some("default".into());
        let labels: BTreeMap<String, String> = [("app".to_string(), "web".to_string())].into();
        assert!(!p.covers_for_disruption("default", &labels));
        p.spec.selector = Some(LabelSelector::default());
        assert!(!p.covers_for_disruption("default", &labels));
        p.spec.selector = Some(LabelSelector::from_labels([("app", "web")]));
        assert!(p.covers_for_disruption("default", &labels));
        assert!(!p.covers_for_disruption("other", &labels));
    }
}
