//! The Scenario steps named after kubectl commands that change objects in place: `patch`
//! (`kubectl patch --type merge`, RFC 7386), `rolloutRestart` (`kubectl rollout restart`) and
//! `createJobFromCronJob` (`kubectl create job --from=cronjob/...`), run from YAML as a user
//! writes them, with the final state read from `--output json`.

use std::io::Write;

use k8s_cluster::{run_file, OutputFormat, RunOptions};

fn run(text: &str, output: OutputFormat) -> k8s_cluster::RunOutcome {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("k8s-mini-patch-steps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("case-{}.yaml", N.fetch_add(1, Ordering::SeqCst)));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let opts = RunOptions {
        output,
        ..Default::default()
    };
    run_file(&path, &opts).expect("scenario loads")
}

/// The object of `kind` named `name` in the final `v1` List.
fn item(list: &serde_json::Value, kind: &str, name: &str) -> serde_json::Value {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '8', memory: 16Gi, pods: '110'}}\n---\n";

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web, tier: front}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: 'app:v1'}]
---
";

#[test]
fn merge_patch_merges_maps_removes_nulls_and_goes_through_the_update() {
    let out = run(
        &format!(
            "{NODE}{DEPLOYMENT}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  ticks: 10
  steps:
  - at: 2
    patch: {{kind: Deployment, name: web, merge: {{metadata: {{labels: {{tier: null, owner: me}}}}, spec: {{replicas: 3}}}}}}
  - at: 3
    patch: {{kind: Deployment, name: web, merge: {{spec: {{replicas: 3}}}}}}
  expect:
  - at: 9
    deployment: {{name: web, replicas: 3, availableReplicas: 3}}
"
        ),
        OutputFormat::Json,
    );
    assert_eq!(out.failures, 0, "{}", out.stderr);
    let list: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let d = item(&list, "Deployment", "web");
    // `tier: null` removed the key, `owner` was added, `app` kept (maps merge key by key).
    assert_eq!(
        d["metadata"]["labels"],
        serde_json::json!({"app": "web", "owner": "me"})
    );
    assert_eq!(d["spec"]["replicas"], 3);
}

#[test]
fn patch_steps_print_kubectl_answers() {
    let out = run(
        &format!(
            "{NODE}{DEPLOYMENT}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  ticks: 4
  steps:
  - at: 1
    patch: {{kind: Deployment, name: web, merge: {{spec: {{replicas: 2}}}}}}
  - at: 2
    patch: {{kind: Deployment, name: web, merge: {{spec: {{replicas: 2}}}}}}
  - at: 3
    patch: {{kind: Deployment, name: nope, merge: {{spec: {{replicas: 2}}}}}}
"
        ),
        OutputFormat::Text,
    );
    assert!(
        out.stdout
            .contains("t=1 step: deployment.apps/web patched\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("t=2 step: deployment.apps/web patched (no change)\n"),
        "{}",
        out.stdout
    );
    // A missing object is the apiserver's NotFound, and the run fails (exit 1).
    assert!(
        out.stdout
            .contains("t=3 step FAILED: deployments.apps \"nope\" not found"),
        "{}",
        out.stdout
    );
    assert_eq!(out.exit_code(), 1);
}

#[test]
fn invalid_patch_is_refused_by_validation() {
    let out = run(
        &format!(
            "{NODE}{DEPLOYMENT}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  ticks: 3
  steps:
  - at: 1
    patch: {{kind: Deployment, name: web, merge: {{spec: {{replicas: -1}}}}}}
"
        ),
        OutputFormat::Text,
    );
    assert!(
        out.stdout
            .contains("spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        "{}",
        out.stdout
    );
    assert_eq!(out.exit_code(), 1);
}

#[test]
fn rollout_restart_stamps_the_template_and_rolls_out() {
    let out = run(
        &format!(
            "{NODE}{DEPLOYMENT}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  ticks: 40
  steps:
  - at: 5
    rolloutRestart: {{deployment: web}}
"
        ),
        OutputFormat::Json,
    );
    assert_eq!(out.failures, 0, "{}", out.stderr);
    let list: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let d = item(&list, "Deployment", "web");
    assert_eq!(
        d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"],
        "1970-01-01T00:00:05Z"
    );
    // A new ReplicaSet for the new template: two in all, the new one with the pod.
    let rss: Vec<&serde_json::Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "ReplicaSet")
        .collect();
    assert_eq!(rss.len(), 2);
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
}

#[test]
fn rollout_restart_refuses_a_paused_deployment() {
    let out = run(
        &format!(
            "{NODE}{DEPLOYMENT}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  ticks: 4
  steps:
  - at: 1
    patch: {{kind: Deployment, name: web, merge: {{spec: {{paused: true}}}}}}
  - at: 2
    rolloutRestart: {{deployment: web}}
"
        ),
        OutputFormat::Text,
    );
    assert!(
        out.stdout.contains(
            "t=2 step FAILED: can't restart paused deployment (run rollout resume first)"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn create_job_from_cron_job_as_kubectl() {
    let out = run(
        &format!(
            "{NODE}apiVersion: batch/v1
kind: CronJob
metadata: {{name: nightly}}
spec:
  schedule: '0 3 * * *'
  jobTemplate:
    metadata: {{labels: {{app: nightly}}, annotations: {{team: batch}}}}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{{name: work, image: busybox}}]
---
apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  ticks: 3
  steps:
  - at: 1
    createJobFromCronJob: {{name: by-hand, cronJob: nightly}}
  expect:
  - cronJob: {{name: nightly, jobs: [by-hand], active: [], lastScheduleTime: ''}}
  - events: {{reason: UnexpectedJob, involvedObject: nightly, minCount: 1}}
"
        ),
        OutputFormat::Json,
    );
    assert_eq!(out.failures, 0, "{}", out.stderr);
    let list: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let j = item(&list, "Job", "by-hand");
    assert_eq!(
        j["metadata"]["annotations"],
        serde_json::json!({"cronjob.kubernetes.io/instantiate": "manual", "team": "batch"})
    );
    assert_eq!(j["metadata"]["labels"]["app"], "nightly");
    let owner = &j["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "CronJob");
    assert_eq!(owner["name"], "nightly");
    assert_eq!(owner["controller"], true);
    // kubectl leaves blockOwnerDeletion unset.
    assert!(owner.get("blockOwnerDeletion").is_none(), "{owner}");
}

#[test]
fn a_step_with_two_actions_is_bad_input() {
    let text = format!(
        "{NODE}{DEPLOYMENT}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  steps:
  - at: 1
    rolloutRestart: {{deployment: web}}
    patch: {{kind: Deployment, name: web, merge: {{}}}}
"
    );
    let dir = std::env::temp_dir().join(format!("k8s-mini-patch-steps-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("two.yaml");
    std::fs::write(&path, text).unwrap();
    let err = run_file(&path, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("spec.steps[0]: a step needs exactly one action, found 2"),
        "{err}"
    );
}

#[test]
fn patch_removes_a_scheduling_gate_and_resumes_a_job() {
    let out = run(
        &format!(
            "{NODE}apiVersion: v1
kind: Pod
metadata: {{name: gated}}
spec:
  schedulingGates: [{{name: example.com/quota}}]
  containers: [{{name: app, image: app}}]
---
apiVersion: batch/v1
kind: Job
metadata: {{name: later}}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: work, image: busybox}}]
---
apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  ticks: 12
  steps:
  - at: 5
    patch: {{kind: Pod, name: gated, merge: {{spec: {{schedulingGates: null}}}}}}
  - at: 5
    patch: {{kind: Job, name: later, merge: {{spec: {{suspend: false}}}}}}
  expect:
  - at: 4
    pod: {{name: gated, nodeName: '', status: SchedulingGated}}
  - at: 4
    job: {{name: later, active: 0, condition: Suspended}}
  - at: 5
    pod: {{name: gated, nodeName: n1}}
  - at: 5
    job: {{name: later, active: 1}}
"
        ),
        OutputFormat::Text,
    );
    assert_eq!(out.failures, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains("t=5 step: pod/gated patched\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("t=5 step: job.batch/later patched\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_patch_of_an_unknown_kind_is_bad_input() {
    let text = format!(
        "{NODE}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  steps:
  - at: 1
    patch: {{kind: Deploymnet, name: web, merge: {{spec: {{replicas: 2}}}}}}
"
    );
    let dir =
        std::env::temp_dir().join(format!("k8s-mini-patch-steps-kind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kind.yaml");
    std::fs::write(&path, text).unwrap();
    let err = run_file(&path, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("spec.steps[0].patch.kind: unknown kind \"Deploymnet\""),
        "{err}"
    );
}
