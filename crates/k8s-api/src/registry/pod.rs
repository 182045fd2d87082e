//! Pod strategy (upstream `pkg/registry/core/pod/strategy.go`): on create the status is reset to
//! `phase: Pending` with the computed `qosClass`, a pod with scheduling gates gets
//! `PodScheduled=False` reason `SchedulingGated`, `generation` is 1, and the pod (anti-)affinity
//! terms' `matchLabelKeys` / `mismatchLabelKeys` are merged into their label selectors; on update
//! the status is kept and `generation` increments when the spec changes.

use std::collections::BTreeMap;

use k8s_types::core::{
    condition_status, phases, pod_conditions, Pod, PodAffinity, PodAffinityTerm, PodCondition,
    PodStatus,
};
use k8s_types::labels::LabelSelectorRequirement;

use crate::qos::compute_pod_qos;

/// Upstream `v1.PodReasonSchedulingGated`.
pub const REASON_SCHEDULING_GATED: &str = "SchedulingGated";
/// Upstream message of the SchedulingGated condition.
pub const SCHEDULING_GATED_MESSAGE: &str =
    "Scheduling is blocked due to non-empty scheduling gates";

/// Upstream `podStrategy.PrepareForCreate`.
pub fn prepare_for_create(pod: &mut Pod) {
    pod.status = PodStatus {
        phase: Some(phases::PENDING.into()),
        qos_class: Some(compute_pod_qos(pod).into()),
        ..Default::default()
    };
    if !pod.spec.scheduling_gates.is_empty() {
        pod.status.conditions.push(PodCondition {
            type_: pod_conditions::POD_SCHEDULED.into(),
            status: condition_status::FALSE.into(),
            reason: Some(REASON_SCHEDULING_GATED.into()),
            message: Some(SCHEDULING_GATED_MESSAGE.into()),
            last_transition_time: None,
        });
    }
    pod.metadata.generation = Some(1);
    mutate_pod_affinity(pod);
}

/// Upstream `mutatePodAffinity` (feature `MatchLabelKeysInPodAffinity`, on by default since
/// v1.31): in every required and preferred term of `podAffinity` and `podAntiAffinity`, each key
/// of `matchLabelKeys` that the pod's labels have becomes the requirement `key In (value)` of the
/// term's `labelSelector`, and each such key of `mismatchLabelKeys` `key NotIn (value)`, appended
/// after the selector's own expressions, in key-list order. A term without a `labelSelector`
/// (which matches no pod) is left as it is; keys the pod lacks are ignored.
pub fn mutate_pod_affinity(pod: &mut Pod) {
    let labels = pod.metadata.labels.clone();
    let Some(affinity) = pod.spec.affinity.as_mut() else {
        return;
    };
    for pa in [
        affinity.pod_affinity.as_mut(),
        affinity.pod_anti_affinity.as_mut(),
    ]
    .into_iter()
    .flatten()
    {
        merge_label_keys(pa, &labels);
    }
}

fn merge_label_keys(pa: &mut PodAffinity, labels: &BTreeMap<String, String>) {
    let preferred = pa
        .preferred_during_scheduling_ignored_during_execution
        .iter_mut()
        .map(|w| &mut w.pod_affinity_term);
    let required = pa
        .required_during_scheduling_ignored_during_execution
        .iter_mut();
    for term in preferred.chain(required) {
        apply_label_keys(term, labels);
    }
}

/// Upstream `applyMatchLabelKeysAndMismatchLabelKeys`.
fn apply_label_keys(term: &mut PodAffinityTerm, labels: &BTreeMap<String, String>) {
    let Some(selector) = term.label_selector.as_mut() else {
        return;
    };
    for (keys, operator) in [
        (&term.match_label_keys, "In"),
        (&term.mismatch_label_keys, "NotIn"),
    ] {
        for key in keys {
            if let Some(value) = labels.get(key) {
                selector.match_expressions.push(LabelSelectorRequirement {
                    key: key.clone(),
                    operator: operator.to_string(),
                    values: vec![value.clone()],
                });
            }
        }
    }
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
    // The stored spec itself, shared with the stored version (never a copy: see `CowArc`).
    new.spec = old.spec.clone();
    if new.metadata.owner_references != old.metadata.owner_references {
        new.metadata
            .owner_references
            .clone_from(&old.metadata.owner_references);
    }
    if new.status.qos_class.as_deref().unwrap_or("").is_empty() {
        new.status.qos_class.clone_from(&old.status.qos_class);
    }
}
