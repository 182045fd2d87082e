//! Pod failures (upstream `pkg/controller/job/pod_failure_policy.go` `matchPodFailurePolicy`, and
//! `isPodFailed` and the tracking finalizer of `job_controller.go`).

use super::*;

/// The tick a pod finished (upstream `getFinishedTime`): the last container `finishedAt`, else
/// its deletion timestamp, else its creation.
pub(super) fn finished_tick(pod: &Pod) -> Tick {
    pod.status
        .init_container_statuses
        .iter()
        .chain(&pod.status.container_statuses)
        .filter_map(|c| c.state.terminated.as_ref())
        .filter_map(|t| t.finished_at.as_deref().and_then(timestamp_tick))
        .max()
        .or_else(|| {
            pod.metadata
                .deletion_timestamp
                .as_deref()
                .and_then(timestamp_tick)
        })
        .or_else(|| {
            pod.metadata
                .creation_timestamp
                .as_deref()
                .and_then(timestamp_tick)
        })
        .unwrap_or(0)
}

pub(super) fn has_tracking_finalizer(pod: &Pod) -> bool {
    pod.metadata
        .finalizers
        .iter()
        .any(|f| f == JOB_TRACKING_FINALIZER)
}

/// Upstream `onlyReplaceFailedPods`: podReplacementPolicy Failed.
pub(super) fn only_replace_failed_pods(job: &Job) -> bool {
    job.spec.pod_replacement_policy.as_deref() == Some(pod_replacement_policies::FAILED)
}

/// Upstream `isPodFailed`: phase Failed, or (unless only failed pods are replaced) being
/// deleted without having succeeded.
pub(super) fn is_pod_failed(pod: &Pod, job: &Job) -> bool {
    if pod.phase() == phases::FAILED {
        return true;
    }
    if only_replace_failed_pods(job) {
        return false;
    }
    pod.metadata.deletion_timestamp.is_some() && pod.phase() != phases::SUCCEEDED
}

/// Upstream `controller.CountTerminatingPods`: being deleted and not terminal.
pub(super) fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some() && !pod.is_terminal()
}

/// Upstream `matchPodFailurePolicy`: `(FailJob message, count the failure, matched action)`.
pub fn match_pod_failure_policy(
    policy: &PodFailurePolicy,
    pod: &Pod,
) -> (Option<String>, bool, Option<&'static str>) {
    for (i, rule) in policy.rules.iter().enumerate() {
        let matched: Option<String> = if let Some(req) = &rule.on_exit_codes {
            pod.status
                .container_statuses
                .iter()
                .chain(&pod.status.init_container_statuses)
                .find_map(|cs| {
                    let code = cs.state.terminated.as_ref()?.exit_code.unwrap_or(0);
                    if code == 0 || req.container_name.as_ref().is_some_and(|n| *n != cs.name) {
                        return None;
                    }
                    let listed = req.values.contains(&code);
                    let hit = match req.operator.as_str() {
                        "In" => listed,
                        "NotIn" => !listed,
                        _ => false,
                    };
                    hit.then(|| {
                        format!(
                            "Container {} for pod {}/{} failed with exit code {code} matching {} rule at index {i}",
                            cs.name,
                            pod.metadata.namespace(),
                            pod.metadata.name,
                            rule.action
                        )
                    })
                })
        } else if !rule.on_pod_conditions.is_empty() {
            pod.status.conditions.iter().find_map(|c| {
                rule.on_pod_conditions
                    .iter()
                    .any(|p| p.type_ == c.type_ && p.status == c.status)
                    .then(|| {
                        format!(
                            "Pod {}/{} has condition {} matching {} rule at index {i}",
                            pod.metadata.namespace(),
                            pod.metadata.name,
                            c.type_,
                            rule.action
                        )
                    })
            })
        } else {
            None
        };
        let Some(msg) = matched else {
            continue;
        };
        match rule.action.as_str() {
            actions::IGNORE => return (None, false, Some(actions::IGNORE)),
            actions::COUNT => return (None, true, Some(actions::COUNT)),
            actions::FAIL_JOB => return (Some(msg), true, Some(actions::FAIL_JOB)),
            actions::FAIL_INDEX => return (None, true, Some(actions::FAIL_INDEX)),
            _ => {}
        }
    }
    (None, true, None)
}
