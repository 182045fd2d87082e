//! The success policy (upstream `pkg/controller/job/success_policy.go` `matchSuccessPolicy`) and the
//! Job conditions (`newCondition`, `ensureJobConditionStatus`, `pastBackoffLimitOnFailure`).

use super::*;

/// Upstream `matchSuccessPolicy` (`success_policy.go`): the message of the first rule met by the
/// succeeded indexes (`Matched rules at index N`).
pub fn match_success_policy(
    policy: Option<&SuccessPolicy>,
    completions: usize,
    succeeded: &BTreeSet<usize>,
) -> Option<String> {
    let policy = policy?;
    if succeeded.is_empty() {
        return None;
    }
    for (i, rule) in policy.rules.iter().enumerate() {
        let met = if let Some(s) = &rule.succeeded_indexes {
            let required = parse_indexes(s, completions);
            if required.is_empty() {
                continue;
            }
            // matchSucceededIndexesRule
            let contains = required.intersection(succeeded).count();
            match rule.succeeded_count {
                Some(c) => contains as i64 >= i64::from(c),
                None => contains == required.len(),
            }
        } else {
            rule.succeeded_count
                .is_some_and(|c| succeeded.len() as i64 >= i64::from(c))
        };
        if met {
            return Some(format!("Matched rules at index {i}"));
        }
    }
    None
}

/// Upstream `newCondition`.
pub(super) fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Tick,
) -> JobCondition {
    let ts = tick_timestamp(now);
    JobCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        last_probe_time: Some(ts.clone()),
        last_transition_time: Some(ts),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        message: (!message.is_empty()).then(|| message.to_string()),
    }
}

/// Upstream `ensureJobConditionStatus`: updates the condition of `type_` when its status,
/// reason or message differ; appends it when missing unless the status is False. Returns
/// whether the list changed.
pub(super) fn ensure_condition(
    list: &mut Vec<JobCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Tick,
) -> bool {
    let new = new_condition(type_, status, reason, message, now);
    if let Some(c) = list.iter_mut().find(|c| c.type_ == type_) {
        if c.status != new.status || c.reason != new.reason || c.message != new.message {
            *c = new;
            return true;
        }
        return false;
    }
    if status != condition_status::FALSE {
        list.push(new);
        return true;
    }
    false
}

/// Upstream `pastBackoffLimitOnFailure`: restartPolicy OnFailure and the restarts of the
/// pending/running pods' containers reach backoffLimit (any restart when it is 0).
pub(super) fn past_backoff_limit_on_failure(job: &Job, pods: &[&Pod]) -> bool {
    if job.spec.template.spec.restart_policy.as_deref() != Some("OnFailure") {
        return false;
    }
    let restarts: i32 = pods
        .iter()
        .filter(|p| p.phase() == phases::RUNNING || p.phase() == phases::PENDING)
        .flat_map(|p| {
            p.status
                .init_container_statuses
                .iter()
                .chain(&p.status.container_statuses)
        })
        .map(|c| c.restart_count)
        .sum();
    let limit = job.spec.backoff_limit.unwrap_or(6);
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}
