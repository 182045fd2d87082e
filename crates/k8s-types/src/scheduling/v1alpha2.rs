//! Native gang scheduling's API, `scheduling.k8s.io/v1alpha2` `Workload` and `PodGroup`, as
//! Kubernetes v1.36 serves them (upstream `staging/src/k8s.io/api/scheduling/v1alpha2/types.go`;
//! KEP-4671 "Gang Scheduling using Workload Object" and KEP-5832 "Decouple PodGroup API"). Both are
//! behind the `GenericWorkload` feature gate (alpha, off by default in v1.36). Pods join a
//! PodGroup by `spec.schedulingGroup.podGroupName` ([`crate::core::PodSchedulingGroup`]).
//!
//! Not to be confused with the coscheduling PodGroup of scheduler-plugins
//! (`scheduling.x-k8s.io/v1alpha1`, [`crate::scheduling::PodGroup`]): same kind name, another group.

use serde::{Deserialize, Serialize};

use crate::meta::ObjectMeta;
use crate::policy::PdbCondition;

/// The API version of both kinds.
pub const API_VERSION: &str = "scheduling.k8s.io/v1alpha2";
/// Upstream `WorkloadMaxPodGroupTemplates`.
pub const WORKLOAD_MAX_POD_GROUP_TEMPLATES: usize = 8;
/// Upstream `PodGroupConditionTypeScheduled`.
pub const POD_GROUP_SCHEDULED: &str = "PodGroupScheduled";
/// Upstream `PodGroupConditionScheduled` (a reason).
pub const REASON_SCHEDULED: &str = "Scheduled";
/// Upstream `PodGroupConditionUnschedulable` (a reason).
pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";

/// `metav1.Condition` (the same shape a PodDisruptionBudget carries).
pub type Condition = PdbCondition;

/// Upstream `Workload`: the static template of a workload's pod groups and their policies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workload {
    /// `scheduling.k8s.io/v1alpha2`.
    #[serde(default)]
    pub api_version: String,
    /// `Workload`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Upstream `WorkloadSpec`.
    #[serde(default)]
    pub spec: WorkloadSpec,
}

/// Upstream `WorkloadSpec`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpec {
    /// The controlling object (a Job, ...), for tools; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_ref: Option<TypedLocalObjectReference>,
    /// At most 8 templates, unique by name; immutable.
    #[serde(default)]
    pub pod_group_templates: Vec<PodGroupTemplate>,
}

/// Upstream `TypedLocalObjectReference` (scheduling's own copy).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypedLocalObjectReference {
    /// The group; empty for core.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
    /// The name.
    #[serde(default)]
    pub name: String,
}

/// Upstream `PodGroupTemplate`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupTemplate {
    /// A DNS label, unique in the Workload.
    #[serde(default)]
    pub name: String,
    /// Exactly one of basic / gang.
    #[serde(default)]
    pub scheduling_policy: PodGroupSchedulingPolicy,
}

/// Upstream `PodGroupSchedulingPolicy`: a union, exactly one member set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupSchedulingPolicy {
    /// Standard pod-by-pod scheduling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic: Option<BasicSchedulingPolicy>,
    /// All-or-nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gang: Option<GangSchedulingPolicy>,
}

/// Upstream `BasicSchedulingPolicy` (intentionally empty).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BasicSchedulingPolicy {}

/// Upstream `GangSchedulingPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GangSchedulingPolicy {
    /// Pods that must be schedulable together (>= 1).
    #[serde(default)]
    pub min_count: i32,
}

/// Upstream `PodGroup` (`scheduling.k8s.io/v1alpha2`): one runtime scheduling unit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroup {
    /// `scheduling.k8s.io/v1alpha2`.
    #[serde(default)]
    pub api_version: String,
    /// `PodGroup`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Upstream `PodGroupSpec`.
    #[serde(default)]
    pub spec: PodGroupSpec,
    /// Upstream `PodGroupStatus` (written by kube-scheduler).
    #[serde(default, skip_serializing_if = "PodGroupStatus::is_empty")]
    pub status: PodGroupStatus,
}

/// Upstream `PodGroupSpec`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupSpec {
    /// The template it was made from; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_group_template_ref: Option<PodGroupTemplateReference>,
    /// Copied from the template; immutable.
    #[serde(default)]
    pub scheduling_policy: PodGroupSchedulingPolicy,
}

impl PodGroupSpec {
    /// The gang's `minCount`, when the policy is `gang`.
    pub fn gang_min_count(&self) -> Option<i32> {
        self.scheduling_policy.gang.as_ref().map(|g| g.min_count)
    }
}

/// Upstream `PodGroupTemplateReference` (a union; only `workload` exists).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupTemplateReference {
    /// The Workload template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadPodGroupTemplateReference>,
}

/// Upstream `WorkloadPodGroupTemplateReference`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadPodGroupTemplateReference {
    /// The Workload's name.
    #[serde(default)]
    pub workload_name: String,
    /// The template's name in it.
    #[serde(default)]
    pub pod_group_template_name: String,
}

/// Upstream `PodGroupStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupStatus {
    /// `PodGroupScheduled` (reasons `Scheduled`, `Unschedulable`, `Preempted`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

impl PodGroupStatus {
    /// No condition yet.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }
}
