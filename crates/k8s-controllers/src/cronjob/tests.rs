//! The schedule arithmetic of `utils.go`, with values worked out by hand (one tick = one second
//! after the epoch).

use k8s_types::batch::schedule::Schedule;
use k8s_types::batch::{CronJob, Job};
use k8s_types::meta::tick_timestamp;

use super::utils::*;

fn cj(created: u64, last: Option<u64>, sds: Option<i64>) -> CronJob {
    let mut cj = CronJob::default();
    cj.metadata.name = "cj".into();
    cj.metadata.creation_timestamp = Some(tick_timestamp(created).into());
    cj.status.last_schedule_time = last.map(tick_timestamp);
    cj.spec.starting_deadline_seconds = sds;
    cj
}

fn hourly() -> Schedule {
    Schedule::parse("0 * * * *", None).expect("schedule")
}

#[test]
fn most_recent_schedule_time_as_upstream() {
    let s = hourly();
    // Before the first activation: nothing due.
    let mr = most_recent_schedule_time(&cj(0, None, None), 3599, &s, false);
    assert_eq!(
        (mr.earliest, mr.most_recent, mr.missed),
        (0, None, MissedSchedules::None)
    );
    // Between t1 and t2: t1.
    let mr = most_recent_schedule_time(&cj(0, None, None), 3600, &s, false);
    assert_eq!(
        (mr.most_recent, mr.missed),
        (Some(3600), MissedSchedules::None)
    );
    // Three missed (3600, 7200, 10800): (10805 - 3600) / 3600 + 1 = 3, the most recent is 10800.
    let mr = most_recent_schedule_time(&cj(0, None, None), 10_805, &s, false);
    assert_eq!(
        (mr.most_recent, mr.missed),
        (Some(10_800), MissedSchedules::Few)
    );
    // From lastScheduleTime 10800, 101 hours later: (374401 - 14400) / 3600 + 1 = 101 > 100.
    let mr = most_recent_schedule_time(&cj(0, Some(10_800), None), 374_401, &s, false);
    assert_eq!(
        (mr.most_recent, mr.missed),
        (Some(374_400), MissedSchedules::Many)
    );
    // startingDeadlineSeconds 60 moves earliest to now - 60 = 10745: only 10800 is due.
    let c = cj(0, None, Some(60));
    let mr = most_recent_schedule_time(&c, 10_805, &s, true);
    assert_eq!(
        (mr.earliest, mr.most_recent, mr.missed),
        (10_745, Some(10_800), MissedSchedules::None)
    );
    // ... but not when asked without the deadline (nextScheduleTimeDuration).
    let mr = most_recent_schedule_time(&c, 10_805, &s, false);
    assert_eq!((mr.earliest, mr.missed), (0, MissedSchedules::Few));
}

#[test]
fn next_schedule_time_and_requeue() {
    let s = Schedule::parse("*/1 * * * *", None).expect("schedule");
    // Created at 0; at 30 nothing is due and the next activation is 30 s away.
    assert_eq!(
        next_schedule_time(&cj(0, None, None), 30, &s),
        (None, false, None)
    );
    assert_eq!(next_schedule_time_duration(&cj(0, None, None), 30, &s), 30);
    // At 60, 60 is due; after it, the next is 120.
    assert_eq!(
        next_schedule_time(&cj(0, None, None), 60, &s),
        (Some(60), false, None)
    );
    assert_eq!(next_schedule_time_duration(&cj(0, None, None), 60, &s), 60);
    // With lastScheduleTime 60, at 61 nothing is due, next in 59 s.
    assert_eq!(
        next_schedule_time(&cj(0, Some(60), None), 61, &s),
        (None, false, None)
    );
    assert_eq!(
        next_schedule_time_duration(&cj(0, Some(60), None), 61, &s),
        59
    );
    // 101 minutes missed since creation: the most recent, with the warning flag.
    assert_eq!(
        next_schedule_time(&cj(0, None, None), 6070, &s),
        (Some(6060), true, None)
    );
    // A schedule that never fires (31 February) is upstream's error.
    let never = Schedule::parse("59 23 31 2 *", None).expect("parses as upstream");
    let (t, _, err) = next_schedule_time(&cj(0, None, None), 60, &never);
    assert_eq!(t, None);
    assert_eq!(
        err.as_deref(),
        Some("time difference between two schedules is less than 1 second")
    );
}

#[test]
fn job_names_and_history_order() {
    let c = cj(0, None, None);
    // getTimeHashInMinutes: 1970-01-01T01:00:00Z is minute 60.
    assert_eq!(job_name(&c, 3600), "cj-60");
    assert_eq!(job_name(&c, 3659), "cj-60");
    let job = |name: &str, start: Option<u64>| {
        let mut j = Job::default();
        j.metadata.name = name.into();
        j.status.start_time = start.map(tick_timestamp);
        j
    };
    let mut js = [
        job("d", None),
        job("c", Some(20)),
        job("b", Some(10)),
        job("a", Some(20)),
    ];
    js.sort_by(by_job_start_time);
    let names: Vec<&str> = js.iter().map(|j| j.metadata.name.as_str()).collect();
    // By start time, ties by name, Jobs without a start time last.
    assert_eq!(names, ["b", "a", "c", "d"]);
}

#[test]
fn job_from_template_carries_the_scheduled_time_in_the_zone() {
    let mut c = cj(0, None, None);
    c.metadata.uid = Some("u-1".into());
    c.metadata.namespace = Some("team".into());
    c.spec.time_zone = Some("America/New_York".into());
    c.spec
        .job_template
        .metadata
        .labels
        .insert("app".into(), "x".into());
    let j = job_from_template(&c, 86_400).expect("job");
    assert_eq!(j.metadata.name, "cj-1440");
    assert_eq!(j.metadata.namespace.as_deref(), Some("team"));
    // 1970-01-02T00:00:00Z is 19:00 the day before in New York (EST, UTC-5).
    assert_eq!(
        j.metadata
            .annotations
            .get("batch.kubernetes.io/cronjob-scheduled-timestamp")
            .map(String::as_str),
        Some("1970-01-01T19:00:00-05:00")
    );
    let owner = j.metadata.controller_ref().expect("owner");
    assert_eq!(
        (
            owner.api_version.as_str(),
            owner.kind.as_str(),
            owner.uid.as_str()
        ),
        ("batch/v1", "CronJob", "u-1")
    );
    assert_eq!(j.metadata.labels.get("app").map(String::as_str), Some("x"));
}
