//! A PyTorchJob's conditions and replica counts, as kubeflow/training-operator v1 keeps them:
//! `pkg/util/status.go` (`UpdateJobConditions`, `setCondition`, `filterOutCondition`: a condition
//! replaces the one of its type; Running and Restarting replace each other; Succeeded or Failed
//! turn Running False; nothing changes once Failed), `pkg/core/status.go`
//! (`UpdateJobReplicaStatuses`: a Running pod is active, or failed when it is being deleted) and
//! `controller.v1/pytorch/pytorchjob_controller.go` `UpdateJobStatus` (with a Master: Running while
//! the master runs, Succeeded when every master pod succeeded; without one: Succeeded when every
//! worker did; a failed replica restarts the job unless its restartPolicy is Never, then it
//! fails). Reasons are `PyTorchJob` + the condition (`NewReason`).

use k8s_types::core::Pod;
use k8s_types::meta::tick_timestamp;
use k8s_types::Tick;

use super::types::{JobCondition, JobStatus, PyTorchJob, KIND, MASTER, WORKER};

/// Condition type `Created`.
pub const CREATED: &str = "Created";
/// Condition type `Running`.
pub const RUNNING: &str = "Running";
/// Condition type `Restarting`.
pub const RESTARTING: &str = "Restarting";
/// Condition type `Succeeded`.
pub const SUCCEEDED: &str = "Succeeded";
/// Condition type `Failed`.
pub const FAILED: &str = "Failed";

/// Upstream `NewReason(kind, reason)`: `PyTorchJobRunning`, ...
pub fn reason(condition: &str) -> String {
    format!("{KIND}{condition}")
}

fn is_true(status: &JobStatus, type_: &str) -> bool {
    status
        .conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// Upstream `IsSucceeded`.
pub fn is_succeeded(status: &JobStatus) -> bool {
    is_true(status, SUCCEEDED)
}

/// Upstream `IsFailed`.
pub fn is_failed(status: &JobStatus) -> bool {
    is_true(status, FAILED)
}

/// Upstream `IsFinished`.
pub fn is_finished(status: &JobStatus) -> bool {
    is_succeeded(status) || is_failed(status)
}

/// Upstream `UpdateJobConditions` (`newCondition` + `setCondition`) at tick `now`.
pub fn update_job_conditions(
    status: &mut JobStatus,
    type_: &str,
    cond_status: &str,
    reason: &str,
    message: &str,
    now: Tick,
) {
    if is_failed(status) {
        return;
    }
    let at = tick_timestamp(now);
    let mut condition = JobCondition {
        type_: type_.to_string(),
        status: cond_status.to_string(),
        reason: reason.to_string(),
        message: message.to_string(),
        last_update_time: Some(at.clone()),
        last_transition_time: Some(at),
    };
    if let Some(current) = status.conditions.iter().find(|c| c.type_ == type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition
                .last_transition_time
                .clone_from(&current.last_transition_time);
        }
    }
    let mut kept = Vec::with_capacity(status.conditions.len() + 1);
    for mut c in std::mem::take(&mut status.conditions) {
        if (type_ == RESTARTING && c.type_ == RUNNING)
            || (type_ == RUNNING && c.type_ == RESTARTING)
            || c.type_ == type_
        {
            continue;
        }
        if (type_ == FAILED || type_ == SUCCEEDED) && c.type_ == RUNNING {
            c.status = "False".to_string();
        }
        kept.push(c);
    }
    kept.push(condition);
    status.conditions = kept;
}

/// Upstream `UpdateJobReplicaStatuses` for one pod of replica type `rtype`.
pub fn count_pod(status: &mut JobStatus, rtype: &str, pod: &Pod) {
    let rs = status
        .replica_statuses
        .entry(rtype.to_string())
        .or_default();
    match pod.status.phase.as_deref() {
        Some("Running") if pod.metadata.deletion_timestamp.is_some() => rs.failed += 1,
        Some("Running") => rs.active += 1,
        Some("Succeeded") => rs.succeeded += 1,
        Some("Failed") => rs.failed += 1,
        _ => {}
    }
}

/// An event the status update asks for: (type, reason, message).
pub type StatusEvent = (&'static str, String, String);

/// Upstream PyTorch `UpdateJobStatus` at tick `now`: startTime, then per replica type in name
/// order (Master before Worker) the Running / Succeeded / Restarting / Failed conditions and
/// completionTime. Returns the events to record.
pub fn update_job_status(job: &PyTorchJob, status: &mut JobStatus, now: Tick) -> Vec<StatusEvent> {
    let mut events = Vec::new();
    if status.start_time.is_none() {
        status.start_time = Some(tick_timestamp(now));
    }
    let name = &job.metadata.name;
    let ns = job.metadata.namespace();
    let specs = &job.spec.pytorch_replica_specs;
    let has_master = specs.contains_key(MASTER);
    for (rtype, spec) in specs {
        let rs = status
            .replica_statuses
            .get(rtype)
            .cloned()
            .unwrap_or_default();
        let replicas = spec.replicas();
        let expected = replicas - rs.succeeded;
        let (running, failed, succeeded) = (rs.active, rs.failed, rs.succeeded);
        if has_master {
            if rtype == MASTER {
                if running > 0 {
                    let msg = format!("PyTorchJob {name} is running.");
                    update_job_conditions(status, RUNNING, "True", &reason(RUNNING), &msg, now);
                }
                if expected == 0 {
                    let msg = format!("PyTorchJob {name} is successfully completed.");
                    events.push(("Normal", reason(SUCCEEDED), msg.clone()));
                    status
                        .completion_time
                        .get_or_insert_with(|| tick_timestamp(now));
                    update_job_conditions(status, SUCCEEDED, "True", &reason(SUCCEEDED), &msg, now);
                    return events;
                }
            }
        } else if rtype == WORKER {
            if expected == 0 || (job.spec.elastic_policy.is_some() && succeeded > 0) {
                let msg = format!("PyTorchJob {ns}/{name} successfully completed.");
                events.push(("Normal", reason(SUCCEEDED), msg.clone()));
                status
                    .completion_time
                    .get_or_insert_with(|| tick_timestamp(now));
                update_job_conditions(status, SUCCEEDED, "True", &reason(SUCCEEDED), &msg, now);
            } else if running > 0 {
                let msg = format!("PyTorchJob {ns}/{name} is running.");
                update_job_conditions(status, RUNNING, "True", &reason(RUNNING), &msg, now);
            }
        }
        if failed > 0 && replicas > succeeded + running {
            if spec.restart_policy() != "Never" {
                let msg = format!(
                    "PyTorchJob {name} is restarting because {failed} {rtype} replica(s) failed."
                );
                events.push(("Warning", reason(RESTARTING), msg.clone()));
                update_job_conditions(status, RESTARTING, "True", &reason(RESTARTING), &msg, now);
            } else {
                let msg = format!(
                    "PyTorchJob {name} is failed because {failed} {rtype} replica(s) failed."
                );
                events.push(("Normal", reason(FAILED), msg.clone()));
                status
                    .completion_time
                    .get_or_insert_with(|| tick_timestamp(now));
                update_job_conditions(status, FAILED, "True", &reason(FAILED), &msg, now);
            }
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(s: &JobStatus) -> Vec<(String, String)> {
        s.conditions
            .iter()
            .map(|c| (c.type_.clone(), c.status.clone()))
            .collect()
    }

    /// `filterOutCondition`: Running and Restarting replace each other, Succeeded turns Running
    /// False and keeps it; nothing changes after Failed.
    #[test]
    fn conditions_follow_set_condition() {
        let mut s = JobStatus::default();
        update_job_conditions(&mut s, CREATED, "True", "PyTorchJobCreated", "c", 0);
        update_job_conditions(&mut s, RUNNING, "True", "PyTorchJobRunning", "r", 5);
        update_job_conditions(&mut s, RESTARTING, "True", "PyTorchJobRestarting", "x", 6);
        assert_eq!(
            types(&s),
            vec![
                ("Created".into(), "True".into()),
                ("Restarting".into(), "True".into())
            ]
        );
        update_job_conditions(&mut s, RUNNING, "True", "PyTorchJobRunning", "r", 7);
        update_job_conditions(&mut s, SUCCEEDED, "True", "PyTorchJobSucceeded", "s", 9);
        assert_eq!(
            types(&s),
            vec![
                ("Created".into(), "True".into()),
                ("Running".into(), "False".into()),
                ("Succeeded".into(), "True".into())
            ]
        );
        // The same status and reason again changes nothing (timestamps included).
        let before = s.clone();
        update_job_conditions(&mut s, SUCCEEDED, "True", "PyTorchJobSucceeded", "s", 20);
        assert_eq!(s, before);
        let mut f = JobStatus::default();
        update_job_conditions(&mut f, FAILED, "True", "PyTorchJobFailed", "f", 1);
        update_job_conditions(&mut f, RUNNING, "True", "PyTorchJobRunning", "r", 2);
        assert_eq!(types(&f), vec![("Failed".into(), "True".into())]);
    }
}
