//! The Job controller end to end (apiserver defaults and strategy, controller, kubelet): suspend and
//! resume, activeDeadlineSeconds, a suspended running Job's pods not counted as failures, and the
//! OnFailure restart limit. Expected values are worked out by hand from upstream's
//! `pkg/controller/job/job_controller.go` (`syncJob`, `manageJob`, `pastActiveDeadline`,
//! `pastBackoffLimitOnFailure`, `deleteJobPods`), one tick = one second, startupTicks 1.

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::apiserver::ApiExt;
use k8s_types::batch::Job;
use k8s_types::core::{Event, Node, Pod};
use k8s_types::meta::tick_timestamp;
use k8s_types::Object;

fn cluster_with_node() -> Cluster {
    let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
    let node: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "node-1"},
        "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}
    }))
    .expect("node");
    c.add_node(node).expect("add node");
    c
}

fn job(name: &str, extra: serde_json::Value, behavior: Option<&str>) -> Object {
    let mut spec = serde_json::json!({
        "parallelism": 2,
        "completions": 2,
        "template": {
            "metadata": {},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "work", "image": "busybox:1.36"}]
            }
        }
    });
    if let Some(b) = behavior {
        spec["template"]["metadata"]["annotations"] =
            serde_json::json!({"sim.k8s-mini.io/behavior": b});
    }
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        if k == "restartPolicy" {
            spec["template"]["spec"]["restartPolicy"] = v;
        } else {
            spec[k] = v;
        }
    }
    let j: Job = serde_json::from_value(serde_json::json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec
    }))
    .expect("job");
    Object::Job(j)
}

fn get(c: &mut Cluster, name: &str) -> Job {
    c.api().get_typed::<Job>("default", name).expect("job")
}

fn run_to(c: &mut Cluster, tick: u64) {
    while c.now() <= tick {
        c.tick();
    }
}

fn cond<'a>(j: &'a Job, t: &str) -> Option<(&'a str, &'a str, &'a str)> {
    j.condition(t).map(|c| {
        (
            c.status.as_str(),
            c.reason.as_deref().unwrap_or(""),
            c.message.as_deref().unwrap_or(""),
        )
    })
}

fn events(c: &mut Cluster, object: &str, reason: &str) -> Vec<String> {
    c.api()
        .list_typed::<Event>(None, None)
        .into_iter()
        .filter(|e| e.involved_object.name == object && e.reason == reason)
        .map(|e| e.message)
        .collect()
}

fn job_pods(c: &mut Cluster, name: &str) -> Vec<Pod> {
    let sel = k8s_types::labels::LabelSelector::parse(&format!("job-name={name}")).expect("sel");
    c.api().list_typed::<Pod>(Some("default"), Some(&sel))
}

#[test]
fn suspended_job_starts_on_resume_and_fails_past_its_deadline() {
    let mut c = cluster_with_node();
    c.apply(job(
        "sus",
        serde_json::json!({"suspend": true, "activeDeadlineSeconds": 100}),
        None,
    ))
    .expect("apply");
    run_to(&mut c, 4);
    let j = get(&mut c, "sus");
    // Created suspended: no pods, no startTime, Suspended=True (JobSuspended, "Job suspended").
    assert!(job_pods(&mut c, "sus").is_empty());
    assert_eq!(j.status.start_time, None);
    assert_eq!(
        cond(&j, "Suspended"),
        Some(("True", "JobSuspended", "Job suspended"))
    );
    assert_eq!(events(&mut c, "sus", "Suspended"), ["Job suspended"]);

    // Resumed at the start of tick 5: pods created in tick 5, startTime reset to tick 5.
    let mut j = get(&mut c, "sus");
    j.spec.suspend = Some(false);
    c.api().update_typed(j).expect("resume");
    run_to(&mut c, 5);
    let j = get(&mut c, "sus");
    assert_eq!(
        cond(&j, "Suspended"),
        Some(("False", "JobResumed", "Job resumed"))
    );
    assert_eq!(
        j.status.start_time.as_deref(),
        Some(tick_timestamp(5).as_str())
    );
    assert_eq!(j.status.active, 2);
    assert_eq!(events(&mut c, "sus", "Resumed"), ["Job resumed"]);
    assert_eq!(events(&mut c, "sus", "SuccessfulCreate").len(), 2);

    // activeDeadlineSeconds 100 from startTime 5: at tick 105 FailureTarget (DeadlineExceeded),
    // both running pods deleted and counted failed; they ignore SIGTERM, are killed after the 30 s
    // grace period (tick 135) and removed; tick 136 Failed.
    run_to(&mut c, 104);
    assert_eq!(get(&mut c, "sus").condition("FailureTarget"), None);
    run_to(&mut c, 105);
    let j = get(&mut c, "sus");
    let msg = "Job was active longer than specified deadline";
    assert_eq!(
        cond(&j, "FailureTarget"),
        Some(("True", "DeadlineExceeded", msg))
    );
    assert_eq!((j.status.active, j.status.failed), (0, 2));
    assert_eq!(j.status.terminating, Some(2));
    assert_eq!(j.finished_type(), None);
    run_to(&mut c, 135);
    assert_eq!(get(&mut c, "sus").finished_type(), None);
    run_to(&mut c, 136);
    let j = get(&mut c, "sus");
    assert_eq!(cond(&j, "Failed"), Some(("True", "DeadlineExceeded", msg)));
    assert_eq!(j.status.terminating, Some(0));
    assert_eq!(j.status.completion_time, None);
    assert_eq!(events(&mut c, "sus", "DeadlineExceeded"), [msg]);
}

#[test]
fn suspending_a_running_job_deletes_its_pods_without_counting_failures() {
    let mut c = cluster_with_node();
    c.apply(job("pause", serde_json::json!({}), None))
        .expect("apply");
    run_to(&mut c, 9);
    let pods = job_pods(&mut c, "pause");
    assert_eq!(pods.len(), 2);
    // Every pod carries the tracking finalizer while it runs.
    assert!(pods
        .iter()
        .all(|p| p.metadata.finalizers == ["batch.kubernetes.io/job-tracking"]));
    let mut j = get(&mut c, "pause");
    j.spec.suspend = Some(true);
    c.api().update_typed(j).expect("suspend");
    run_to(&mut c, 10);
    let j = get(&mut c, "pause");
    // deleteJobPods removes the finalizer before deleting: the pods are not failures.
    assert_eq!((j.status.active, j.status.failed), (0, 0));
    assert_eq!(j.status.terminating, Some(2));
    assert_eq!(
        cond(&j, "Suspended"),
        Some(("True", "JobSuspended", "Job suspended"))
    );
    assert_eq!(events(&mut c, "pause", "SuccessfulDelete").len(), 2);
    assert!(job_pods(&mut c, "pause")
        .iter()
        .all(|p| p.metadata.finalizers.is_empty() && p.metadata.deletion_timestamp.is_some()));
    // Killed after the 30 s grace period (tick 40), gone; tick 41 terminating 0, still no failure.
    run_to(&mut c, 41);
    let j = get(&mut c, "pause");
    assert_eq!(j.status.terminating, Some(0));
    assert_eq!(j.status.failed, 0);
    assert_eq!(j.finished_type(), None);
}

#[test]
fn on_failure_restarts_count_against_the_backoff_limit() {
    let mut c = cluster_with_node();
    c.apply(job(
        "flaky",
        serde_json::json!({"parallelism": 1, "completions": 1, "backoffLimit": 1, "restartPolicy": "OnFailure"}),
        Some("containers:\n  work: {runs: [{seconds: 2, exitCode: 1}]}\n"),
    ))
    .expect("apply");
    // Started tick 1, exits 1 at tick 3 and is restarted in place at once (restartCount 1): at
    // tick 4 the restarts (1) reach backoffLimit 1 (pastBackoffLimitOnFailure).
    run_to(&mut c, 3);
    assert_eq!(get(&mut c, "flaky").condition("FailureTarget"), None);
    run_to(&mut c, 4);
    let j = get(&mut c, "flaky");
    let msg = "Job has reached the specified backoff limit";
    assert_eq!(
        cond(&j, "FailureTarget"),
        Some(("True", "BackoffLimitExceeded", msg))
    );
    // The deleted pod (never phase Failed) counts as the one failure.
    assert_eq!(j.status.failed, 1);
    run_to(&mut c, 60);
    let j = get(&mut c, "flaky");
    assert_eq!(
        cond(&j, "Failed"),
        Some(("True", "BackoffLimitExceeded", msg))
    );
    assert_eq!(events(&mut c, "flaky", "BackoffLimitExceeded"), [msg]);
}
