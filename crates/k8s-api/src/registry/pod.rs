//! Pod strategy (upstream `pkg/registry/core/pod/strategy.go`): on create the status is reset to
//! `phase: Pending` with the computed `qosClass`, a pod with scheduling gates gets
//! `PodScheduled=False` reason `SchedulingGated`, and `generation` is 1; on update the status is kept
//! and `generation` increments when the spec changes.

use k8s_types::core::{condition_status, phases, pod_conditions, Pod, PodCondition, PodStatus};

use crate::qos::compute_pod_qos;

/// Upstream `v1.PodReasonSchedulingGated`.
pub const REASON_SCHEDULING_GATED: &str = "SchedulingGated";
/// Upstream message of the SchedulingGated condition.
pub const SCHEDULING_GATED_MESSAGE: &str =
    "Scheduling is blocked due to non-empty scheduling gates";

/// Upstream `podStrategy.PrepareForCreate`.
pub fn prepare_for_create(pod: &mut Pod) {
    pod.status = PodStatus {
        phase: Some(phases::PENDING.to_string()),
        qos_class: Some(compute_pod_qos(pod).to_string()),
        ..Default::default()
    };
    if !pod.spec.scheduling_gates.is_empty() {
        pod.status.conditions.push(PodCondition {
            type_: pod_conditions::POD_SCHEDULED.to_string(),
            status: condition_status::FALSE.to_string(),
            reason: Some(REASON_SCHEDULING_GATED.to_string()),
            message: Some(SCHEDULING_GATED_MESSAGE.to_string()),
            last_transition_time: None,
        });
    }
    pod.metadata.generation = Some(1);
}

/// Upstream `podStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut Pod, old: &Pod) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(0).saturating_add(1));
    }
}

/// Upstream `podStatusStrategy.PrepareForUpdate`.
pub fn prepare_for_status_update(new: &mut Pod, old: &Pod) {
    new.spec.clone_from(&old.spec);
    new.metadata
        .owner_references
        .clone_from(&old.metadata.owner_references);
    if new.status.qos_class.as_deref().unwrap_or("").is_empty() {
        new.status.qos_class.clone_from(&old.status.qos_class);
    }
}
