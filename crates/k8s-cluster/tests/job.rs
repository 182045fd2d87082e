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
    Object::Job(Box::new(j))
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
        .map(|e| e.message.into())
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

/// Runs an inline scenario and returns (output, failures).
fn run_inline(text: &str, name: &str, output: k8s_cluster::OutputFormat) -> (String, usize) {
    let dir = std::env::temp_dir().join(format!("k8s-mini-job-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, text).expect("write");
    let opts = k8s_cluster::RunOptions {
        output,
        ..Default::default()
    };
    let out = k8s_cluster::run_file(&path, &opts).unwrap_or_else(|e| panic!("{e}"));
    (out.stdout, out.failures)
}

#[test]
fn backoff_limit_per_index_fails_only_the_failing_index() {
    // Indexed, completions 3, parallelism 3, backoffLimitPerIndex 1 (backoffLimit defaults to
    // MaxInt32); index 1 exits 1 after 5 s, the others exit 0 after 10 s. By hand:
    // t=0 three pods (job-index-failure-count "0"), started t=1; index 1 fails t=6.
    // t=7: not yet a failed index (count 0 < 1); its pod keeps the tracking finalizer until a
    //   replacement exists (podsWithDelayedDeletionPerIndex), so status.failed stays 0; per-index
    //   back-off: 1 failure -> 10 s from t=6 -> replacement at t=16 with failure count "1".
    // t=12: indexes 0 and 2 succeeded: completedIndexes "0,2".
    // t=17: the first index-1 pod is counted (failed 1) now that its replacement exists.
    // The replacement starts t=17 and fails t=22; t=23 its failure count 1 >= 1: index 1 failed,
    //   failedIndexes "1", 1 failed + 2 succeeded >= 3 completions: FailureTarget and Failed
    //   (FailedIndexes, "Job has failed indexes"), failed 2.
    let text = r#"
apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {name: per-index}
spec:
  ticks: 30
  behaviors:
  - selector: "batch.kubernetes.io/job-completion-index=1"
    behavior: {runs: [{seconds: 5, exitCode: 1}]}
  - behavior: {runs: [{seconds: 10, exitCode: 0}]}
  expect:
  - at: 0
    pods: {selector: "job-name=per-index", count: 3}
  - at: 7
    job: {name: per-index, active: 0, failed: 0, condition: "None"}
  - at: 12
    job: {name: per-index, succeeded: 2, completedIndexes: "0,2", failed: 0}
  - at: 15
    pods: {selector: "batch.kubernetes.io/job-completion-index=1", count: 1}
  - at: 16
    pods: {selector: "batch.kubernetes.io/job-completion-index=1", count: 2}
  - at: 17
    job: {name: per-index, active: 1, failed: 1, condition: "None"}
  - at: 22
    job: {name: per-index, failed: 1, condition: "None"}
  - at: 23
    job: {name: per-index, succeeded: 2, failed: 2, condition: Failed, reason: FailedIndexes, message: "Job has failed indexes"}
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {capacity: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: per-index}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 3
  backoffLimitPerIndex: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: "busybox:1.36"}]
"#;
    let (out, failures) = run_inline(text, "per-index", k8s_cluster::OutputFormat::Text);
    assert_eq!(failures, 0, "{out}");
    assert!(out.contains("result: 8/8 expectations held"), "{out}");
    // The index's pods carry its failure count: 0 for the first, 1 for the replacement.
    let (json, _) = run_inline(text, "per-index", k8s_cluster::OutputFormat::Json);
    let list: serde_json::Value = serde_json::from_str(&json).expect("json");
    let mut counts: Vec<(String, String)> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|o| o["kind"] == "Pod")
        .map(|o| {
            let a = &o["metadata"]["annotations"];
            (
                a["batch.kubernetes.io/job-completion-index"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                a["batch.kubernetes.io/job-index-failure-count"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    counts.sort();
    let want: Vec<(String, String)> = [("0", "0"), ("1", "0"), ("1", "1"), ("2", "0")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(counts, want);
    let job = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|o| o["kind"] == "Job")
        .expect("job");
    assert_eq!(job["status"]["failedIndexes"], "1");
    assert_eq!(job["status"]["completedIndexes"], "0,2");
    // The env reads the completion index label (PodIndexLabel).
    let pod = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|o| o["kind"] == "Pod")
        .expect("pod");
    assert_eq!(
        pod["spec"]["containers"][0]["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.labels['batch.kubernetes.io/job-completion-index']"
    );
}

#[test]
fn success_policy_completes_when_the_leader_index_succeeds() {
    // Indexed, completions 4, parallelism 4, successPolicy {succeededIndexes: "0"}: index 0 exits
    // 0 after 5 s, the others run until stopped. By hand: pods created t=0, started t=1; index 0
    // Succeeded t=6; t=7 the rule at index 0 is met: SuccessCriteriaMet (SuccessPolicy, "Matched
    // rules at index 0"), the 3 running pods deleted and not counted as failures; they ignore
    // SIGTERM, are killed after the 30 s grace period (t=37) and removed; t=38 Complete with the
    // same reason and message.
    let text = r#"
apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {name: leader}
spec:
  ticks: 45
  behaviors:
  - selector: "batch.kubernetes.io/job-completion-index=0"
    behavior: {runs: [{seconds: 5, exitCode: 0}]}
  expect:
  - at: 6
    job: {name: leader, active: 4, succeeded: 0, condition: "None"}
  - at: 7
    job: {name: leader, active: 0, succeeded: 1, failed: 0, terminating: 3, completedIndexes: "0", condition: SuccessCriteriaMet, reason: SuccessPolicy, message: "Matched rules at index 0"}
  - at: 37
    job: {name: leader, terminating: 3, condition: "None"}
  - at: 38
    job: {name: leader, succeeded: 1, failed: 0, terminating: 0, condition: Complete, reason: SuccessPolicy, message: "Matched rules at index 0"}
  - events: {reason: SuccessfulDelete, involvedObject: leader, count: 3}
  - events: {reason: Completed, involvedObject: leader, count: 1}
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {capacity: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: leader}
spec:
  completionMode: Indexed
  completions: 4
  parallelism: 4
  successPolicy:
    rules: [{succeededIndexes: "0"}]
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: "busybox:1.36"}]
"#;
    let (out, failures) = run_inline(text, "leader", k8s_cluster::OutputFormat::Text);
    assert_eq!(failures, 0, "{out}");
    assert!(out.contains("result: 6/6 expectations held"), "{out}");
}
