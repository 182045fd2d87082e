//! The CronJob controller end to end (apiserver defaults, validation and strategy, controller, Job
//! controller, kubelet). Expected values are worked out by hand from upstream's
//! `pkg/controller/cronjob/cronjob_controllerv2.go` and `utils.go` (`getJobFromTemplate2`,
//! `getJobName`, `mostRecentScheduleTime`, `nextScheduleTime`), `pkg/apis/batch/v1/defaults.go`
//! and `pkg/apis/batch/validation`; tick N is N seconds after 1970-01-01T00:00:00Z.

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::apiserver::ApiExt;
use k8s_types::batch::{CronJob, Job};
use k8s_types::core::{Event, Node};
use k8s_types::Object;

fn cluster() -> Cluster {
    let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
    let node: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "node-1"},
        "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}
    }))
    .expect("node");
    c.add_node(node).expect("add node");
    c
}

fn cron_job(name: &str, extra: serde_json::Value) -> Object {
    let mut spec = serde_json::json!({
        "schedule": "*/1 * * * *",
        "jobTemplate": {
            "metadata": {"labels": {"app": name}, "annotations": {"team": "batch"}},
            "spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "work", "image": "busybox:1.36"}]
            }}}
        }
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        spec[k] = v;
    }
    let cj: CronJob = serde_json::from_value(serde_json::json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec
    }))
    .expect("cronjob");
    Object::CronJob(Box::new(cj))
}

fn run_to(c: &mut Cluster, tick: u64) {
    while c.now() <= tick {
        c.tick();
    }
}

fn jobs(c: &mut Cluster) -> Vec<Job> {
    c.api().list_typed::<Job>(Some("default"), None)
}

fn events(c: &mut Cluster, object: &str, reason: &str) -> Vec<String> {
    c.api()
        .list_typed::<Event>(None, None)
        .into_iter()
        .filter(|e| e.involved_object.name == object && e.reason == reason)
        .map(|e| e.message.into())
        .collect()
}

#[test]
fn defaults_and_validation_through_the_apiserver() {
    let mut c = cluster();
    c.apply(cron_job("nightly", serde_json::json!({})))
        .expect("create");
    let cj: CronJob = c.api().get_typed("default", "nightly").expect("get");
    // SetDefaults_CronJob.
    assert_eq!(cj.spec.concurrency_policy, "Allow");
    assert_eq!(cj.spec.suspend, Some(false));
    assert_eq!(cj.spec.successful_jobs_history_limit, Some(3));
    assert_eq!(cj.spec.failed_jobs_history_limit, Some(1));
    assert_eq!(cj.metadata.generation, Some(1));
    // ParseStandard rejects a sixth field; the answer is 422 Invalid with upstream's message.
    let err = c
        .apply(cron_job(
            "bad",
            serde_json::json!({"schedule": "0 * * * * *"}),
        ))
        .unwrap_err();
    assert_eq!(err.code, 422);
    assert!(
        err.message.contains(
            "spec.schedule: Invalid value: \"0 * * * * *\": expected exactly 5 fields, found 6: [0 * * * * *]"
        ),
        "{}",
        err.message
    );
}

#[test]
fn job_from_template_at_the_scheduled_tick() {
    let mut c = cluster();
    c.apply(cron_job("hello", serde_json::json!({})))
        .expect("create");
    run_to(&mut c, 59);
    assert!(jobs(&mut c).is_empty());
    run_to(&mut c, 60);
    let js = jobs(&mut c);
    assert_eq!(js.len(), 1);
    let j = &js[0];
    // getJobName: 60 s = minute 1 since the epoch.
    assert_eq!(j.metadata.name, "hello-1");
    assert_eq!(
        j.metadata
            .annotations
            .get("batch.kubernetes.io/cronjob-scheduled-timestamp")
            .map(String::as_str),
        Some("1970-01-01T00:01:00Z")
    );
    assert_eq!(
        j.metadata.annotations.get("team").map(String::as_str),
        Some("batch")
    );
    assert_eq!(
        j.metadata.labels.get("app").map(String::as_str),
        Some("hello")
    );
    let owner = j.metadata.controller_ref().expect("controller ref");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("CronJob", "hello")
    );
    assert_eq!(owner.block_owner_deletion, Some(true));
    // The Job controller, next in the tick, created its pod.
    assert_eq!(
        j.metadata.creation_timestamp.as_deref(),
        Some("1970-01-01T00:01:00Z")
    );
    let cj: CronJob = c.api().get_typed("default", "hello").expect("get");
    assert_eq!(cj.status.active.len(), 1);
    assert_eq!(cj.status.active[0].name, "hello-1");
    assert_eq!(cj.status.active[0].kind, "Job");
    assert_eq!(
        cj.status.last_schedule_time.as_deref(),
        Some("1970-01-01T00:01:00Z")
    );
    assert_eq!(
        events(&mut c, "hello", "SuccessfulCreate"),
        ["Created job hello-1"]
    );
}

#[test]
fn time_zone_moves_the_schedule_and_the_annotation() {
    // 09:02 in Asia/Tokyo (UTC+9, no daylight saving since 1951) is 00:02 UTC: tick 120.
    let mut c = cluster();
    c.apply(cron_job(
        "tokyo",
        serde_json::json!({"schedule": "2 9 * * *", "timeZone": "Asia/Tokyo"}),
    ))
    .expect("create");
    run_to(&mut c, 119);
    assert!(jobs(&mut c).is_empty());
    run_to(&mut c, 120);
    let js = jobs(&mut c);
    assert_eq!(js[0].metadata.name, "tokyo-2");
    assert_eq!(
        js[0]
            .metadata
            .annotations
            .get("batch.kubernetes.io/cronjob-scheduled-timestamp")
            .map(String::as_str),
        Some("1970-01-01T09:02:00+09:00")
    );
}

#[test]
fn missed_schedules_resume_the_most_recent_and_warn_past_100() {
    // Suspended from tick 0; resumed at 6070 (a patch through the apiserver): the start times
    // 60, 120, ..., 6060 were missed, (6070 - 60) / 60 + 1 = 101 > 100.
    let mut c = cluster();
    c.apply(cron_job("late", serde_json::json!({"suspend": true})))
        .expect("create");
    c.apply(cron_job("few", serde_json::json!({"suspend": true})))
        .expect("create");
    run_to(&mut c, 6069);
    assert!(jobs(&mut c).is_empty());
    for name in ["late", "few"] {
        let mut cj: CronJob = c.api().get_typed("default", name).expect("get");
        cj.spec.suspend = Some(false);
        if name == "few" {
            // Within the deadline only 6060 counts: no warning.
            cj.spec.starting_deadline_seconds = Some(30);
        }
        c.api().update_typed(cj).expect("resume");
    }
    run_to(&mut c, 6070);
    assert_eq!(
        events(&mut c, "late", "TooManyMissedTimes"),
        ["too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"]
    );
    assert!(events(&mut c, "few", "TooManyMissedTimes").is_empty());
    let mut names: Vec<String> = jobs(&mut c).into_iter().map(|j| j.metadata.name).collect();
    names.sort();
    // Only the most recent missed time (6060 s = minute 101) starts a Job.
    assert_eq!(names, ["few-101", "late-101"]);
}

#[test]
fn missing_active_job_is_dropped() {
    let mut c = cluster();
    c.apply(cron_job("gone", serde_json::json!({})))
        .expect("create");
    run_to(&mut c, 61);
    c.api()
        .delete(
            &k8s_types::Kind::Job,
            "default",
            "gone-1",
            Default::default(),
        )
        .expect("delete");
    run_to(&mut c, 62);
    // The Job's deletion queues the CronJob: the Job is in neither the informer nor the
    // apiserver, so it leaves the active list with MissingJob.
    let cj: CronJob = c.api().get_typed("default", "gone").expect("get");
    assert!(cj.status.active.is_empty(), "{:?}", cj.status.active);
    assert_eq!(
        events(&mut c, "gone", "MissingJob"),
        ["Active job went missing: gone-1"]
    );
}

#[test]
fn a_dump_lists_jobs_before_their_cron_job() {
    // `kubectl get jobs,cronjobs -o yaml` order: the Job first, owned by the CronJob's old uid.
    // CronJobs are created before Jobs, so the owner reference is remapped to the new uid.
    let text = "apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: nightly-5
  ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: nightly, uid: old-cj, controller: true}]
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, uid: old-cj}
spec:
  schedule: '0 3 * * *'
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: work, image: busybox}]
---
apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  ticks: 5
  expect:
  - cronJob: {name: nightly, jobs: [nightly-5]}
";
    let dir = std::env::temp_dir().join(format!("k8s-mini-cronjob-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("dump.yaml");
    std::fs::write(&path, text).expect("write");
    let out = k8s_cluster::run_file(&path, &k8s_cluster::RunOptions::default()).expect("loads");
    assert_eq!(out.failures, 0, "{}", out.stdout);
    assert!(!out.stderr.contains("outside"), "{}", out.stderr);
}

#[test]
fn a_new_schedule_waits_for_its_next_time() {
    // Daily at midnight, created at 0; at 200 the schedule becomes */1. Upstream's updateCronJob
    // requeues the key for the next time of the new schedule (nextScheduleTimeDuration: 60, 120
    // and 180 were "missed" since creation, the most recent is 180, the next 240) instead of
    // syncing now, so the first Job is for 240 (minute 4), not the missed 180 at once.
    let mut c = cluster();
    c.apply(cron_job(
        "moved",
        serde_json::json!({"schedule": "0 0 * * *"}),
    ))
    .expect("create");
    run_to(&mut c, 199);
    let mut cj: CronJob = c.api().get_typed("default", "moved").expect("get");
    cj.spec.schedule = "*/1 * * * *".into();
    c.api().update_typed(cj).expect("update");
    run_to(&mut c, 239);
    assert!(jobs(&mut c).is_empty());
    run_to(&mut c, 240);
    let names: Vec<String> = jobs(&mut c).into_iter().map(|j| j.metadata.name).collect();
    assert_eq!(names, ["moved-4"]);
}

#[test]
fn a_tz_prefix_is_refused_on_update_of_an_object_without_one() {
    let mut c = cluster();
    c.apply(cron_job("tz", serde_json::json!({})))
        .expect("create");
    run_to(&mut c, 10);
    let mut cj: CronJob = c.api().get_typed("default", "tz").expect("get");
    cj.spec.schedule = "TZ=Mars/Olympus */1 * * * *".into();
    let err = c.api().update_typed(cj).unwrap_err();
    // Validation refuses the prefix on an object that had none (upstream validateScheduleFormat).
    assert!(
        err.message
            .contains("cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
        "{}",
        err.message
    );
}
