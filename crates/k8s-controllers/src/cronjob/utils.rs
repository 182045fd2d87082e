//! Upstream `pkg/controller/cronjob/utils.go`: the active list, the schedule arithmetic
//! (`mostRecentScheduleTime`, `nextScheduleTimeDuration`, `nextScheduleTime`), the Job made from
//! the template (`getJobFromTemplate2`, `getJobName`, `getTimeHashInMinutes`) and the history
//! order (`byJobStartTime`). Times are whole seconds since the epoch (= ticks).

use std::cmp::Ordering;

use k8s_types::batch::schedule::{format_rfc3339_in, load_location, Schedule};
use k8s_types::batch::{CronJob, Job, CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION};
use k8s_types::meta::{timestamp_tick, ObjectMeta, ObjectReference};
use k8s_types::Kind;

use crate::controller_utils::new_controller_ref;

/// Upstream's threshold of `missedSchedulesType` `manyMissed`: more than 100 missed start times.
pub const TOO_MANY_MISSED: i64 = 100;

/// Upstream `missedSchedulesType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissedSchedules {
    /// `noneMissed`.
    None,
    /// `fewMissed`.
    Few,
    /// `manyMissed` (more than [`TOO_MANY_MISSED`]).
    Many,
}

/// What upstream's `mostRecentScheduleTime` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MostRecent {
    /// The last schedule time, else the creation time (or `now - startingDeadlineSeconds`).
    pub earliest: i64,
    /// The most recent time a Job should have been created, if any is due.
    pub most_recent: Option<i64>,
    /// How many start times were missed since `earliest`.
    pub missed: MissedSchedules,
    /// The schedule fires less than a second apart (or never: robfig gives the zero time).
    pub error: Option<String>,
}

/// Upstream `inActiveList`.
pub fn in_active_list(cj: &CronJob, uid: &str) -> bool {
    cj.status.active.iter().any(|r| r.uid == uid)
}

/// Upstream `inActiveListByName`.
pub fn in_active_list_by_name(cj: &CronJob, namespace: &str, name: &str) -> bool {
    cj.status
        .active
        .iter()
        .any(|r| r.name == name && r.namespace == namespace)
}

/// Upstream `deleteFromActiveList`.
pub fn delete_from_active_list(cj: &mut CronJob, uid: &str) {
    cj.status.active.retain(|r| r.uid != uid);
}

fn tick_of(ts: Option<&str>) -> Option<i64> {
    ts.and_then(timestamp_tick)
        .and_then(|t| i64::try_from(t).ok())
}

/// Upstream `mostRecentScheduleTime`. From `earliest` (the last schedule time, else the creation
/// time; with `include_starting_deadline` no earlier than `now - startingDeadlineSeconds`), the
/// next two activations t1 and t2 give the interval; the missed count is
/// `(now - t1) / interval + 1`, and the most recent activation is searched from
/// `t1 + (missed - 2) * interval`, as upstream does.
pub fn most_recent_schedule_time(
    cj: &CronJob,
    now: i64,
    schedule: &Schedule,
    include_starting_deadline: bool,
) -> MostRecent {
    let mut earliest = tick_of(cj.status.last_schedule_time.as_deref())
        .or_else(|| tick_of(cj.metadata.creation_timestamp.as_deref()))
        .unwrap_or(0);
    if include_starting_deadline {
        if let Some(sds) = cj.spec.starting_deadline_seconds {
            let deadline = now.saturating_sub(sds);
            if deadline > earliest {
                earliest = deadline;
            }
        }
    }
    let mut out = MostRecent {
        earliest,
        most_recent: None,
        missed: MissedSchedules::None,
        error: None,
    };
    let too_close = || Some("time difference between two schedules is less than 1 second".into());
    let Some(t1) = schedule.next(earliest) else {
        out.error = too_close();
        return out;
    };
    if now < t1 {
        return out;
    }
    let Some(t2) = schedule.next(t1) else {
        out.error = too_close();
        return out;
    };
    if now < t2 {
        out.most_recent = Some(t1);
        return out;
    }
    let interval = t2 - t1;
    if interval < 1 {
        out.error = too_close();
        return out;
    }
    let missed = (now - t1) / interval + 1;
    let potential_earliest = t1 + (missed - 2) * interval;
    let mut t = schedule.next(potential_earliest);
    while let Some(at) = t.filter(|at| *at <= now) {
        out.most_recent = Some(at);
        t = schedule.next(at);
    }
    out.missed = if missed > TOO_MANY_MISSED {
        MissedSchedules::Many
    } else if missed > 0 {
        MissedSchedules::Few
    } else {
        MissedSchedules::None
    };
    out
}

/// Upstream `nextScheduleTimeDuration`: seconds from `now` to the activation after the most
/// recent one (after `earliest` when none was missed; after `now` when some were, or on error).
/// Upstream adds 100 ms against clock skew; here the key is requeued for the very tick of the
/// activation (at least one tick ahead).
pub fn next_schedule_time_duration(cj: &CronJob, now: i64, schedule: &Schedule) -> i64 {
    let mr = most_recent_schedule_time(cj, now, schedule, false);
    let base = if mr.error.is_some() {
        now
    } else {
        match mr.most_recent {
            Some(t) => t,
            None if mr.missed == MissedSchedules::None => mr.earliest,
            None => now,
        }
    };
    schedule
        .next(base)
        .map_or(i64::MAX, |next| next.saturating_sub(now))
        .max(1)
}

/// Upstream `nextScheduleTime`: the most recent unmet activation (with
/// `startingDeadlineSeconds`), whether more than 100 were missed, and the error of
/// [`most_recent_schedule_time`].
pub fn next_schedule_time(
    cj: &CronJob,
    now: i64,
    schedule: &Schedule,
) -> (Option<i64>, bool, Option<String>) {
    let mr = most_recent_schedule_time(cj, now, schedule, true);
    match mr.most_recent {
        Some(t) if t <= now => (Some(t), mr.missed == MissedSchedules::Many, mr.error),
        _ => (None, false, mr.error),
    }
}

/// Upstream `getTimeHashInMinutes`: minutes since the epoch.
pub fn time_hash_in_minutes(scheduled: i64) -> i64 {
    scheduled / 60
}

/// Upstream `getJobName`: `<cronjob>-<scheduled time in minutes since the epoch>`.
pub fn job_name(cj: &CronJob, scheduled: i64) -> String {
    format!("{}-{}", cj.metadata.name, time_hash_in_minutes(scheduled))
}

/// Upstream `getJobFromTemplate2`: the template's labels, annotations and spec, the
/// deterministic name, the `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation (the
/// scheduled time in the CronJob's zone, RFC 3339; CronJobsScheduledAnnotation is on since
/// v1.32) and the CronJob as controller owner.
///
/// # Errors
/// The CronJob's time zone is unknown (Go's `time.LoadLocation` error).
pub fn job_from_template(cj: &CronJob, scheduled: i64) -> Result<Job, String> {
    let template = &cj.spec.job_template;
    let mut annotations = template.metadata.annotations.clone();
    let zone = load_location(cj.spec.time_zone.as_deref())?;
    annotations.insert(
        CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION.to_string(),
        format_rfc3339_in(scheduled, &zone),
    );
    Ok(Job {
        api_version: Kind::Job.api_version().to_string(),
        kind: Kind::Job.name().to_string(),
        metadata: ObjectMeta {
            name: job_name(cj, scheduled),
            namespace: cj.metadata.namespace.clone(),
            labels: template.metadata.labels.clone(),
            annotations,
            owner_references: vec![new_controller_ref(&cj.metadata, &Kind::CronJob)].into(),
            ..Default::default()
        },
        spec: template.spec.clone(),
        status: Default::default(),
    })
}

/// Upstream `getRef` (`ref.GetReference`): kind, namespace, name, uid, apiVersion and
/// resourceVersion of the Job.
pub fn job_ref(job: &Job) -> ObjectReference {
    ObjectReference {
        kind: Kind::Job.name().into(),
        namespace: job.metadata.namespace().into(),
        name: job.metadata.name.as_str().into(),
        uid: job.metadata.uid.as_deref().unwrap_or_default().into(),
        api_version: Kind::Job.api_version().into(),
        resource_version: job
            .metadata
            .resource_version
            .as_deref()
            .unwrap_or_default()
            .into(),
        field_path: Default::default(),
    }
}

/// Upstream `byJobStartTime`: by `status.startTime`, Jobs without one last, ties by name.
pub fn by_job_start_time(a: &Job, b: &Job) -> Ordering {
    let (sa, sb) = (
        tick_of(a.status.start_time.as_deref()),
        tick_of(b.status.start_time.as_deref()),
    );
    match (sa, sb) {
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (x, y) if x == y => a.metadata.name.cmp(&b.metadata.name),
        (x, y) => x.cmp(&y),
    }
}

/// Upstream `getFinishedStatus` / `IsJobFinished`: the True Complete or Failed condition's type.
pub fn finished_status(job: &Job) -> Option<&str> {
    job.finished_type()
}
