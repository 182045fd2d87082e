//! End to end: the `drain` step as `kubectl drain` runs it (staging/src/k8s.io/kubectl/pkg/drain):
//! filter errors, `--force`, retries on 429 until `--timeout`, and the eviction's marks on the pods.

use std::io::Write;

use k8s_cluster::{run_file, OutputFormat, RunOptions, RunOutcome};

fn run(text: &str, name: &str, output: OutputFormat) -> RunOutcome {
    let dir = std::env::temp_dir().join(format!("k8s-mini-drain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.yaml"));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    run_file(
        &path,
        &RunOptions {
            output,
            ..Default::default()
        },
    )
    .unwrap()
}

const NODES: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\n";

const BARE: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: bare}\nspec:\n  nodeName: n1\n  terminationGracePeriodSeconds: 2\n  containers: [{name: c, image: busybox}]\n";

fn drain_lines(out: &RunOutcome) -> Vec<String> {
    out.stdout
        .lines()
        .filter(|l| l.contains(" drain n1") && !l.contains("step:"))
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn unmanaged_pods_stop_the_drain_without_force() {
    let scenario = format!(
        "{NODES}{BARE}---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {{name: d}}\nspec:\n  ticks: 4\n  steps:\n  - at: 2\n    drain: {{node: n1, ignoreDaemonsets: true}}\n"
    );
    let out = run(&scenario, "no-force", OutputFormat::Text);
    assert_eq!(out.failures, 1);
    assert_eq!(
        drain_lines(&out),
        vec![
            "t=2 drain n1: node/n1 cordoned",
            "t=2 drain n1: There are pending nodes to be drained:",
            "t=2 drain n1:  n1",
            "t=2 drain n1 FAILED: error: cannot delete Pods declare no controller (use --force to override): default/bare",
        ]
    );
}

#[test]
fn force_evicts_unmanaged_pods_with_a_warning() {
    let scenario = format!(
        "{NODES}{BARE}---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {{name: d}}\nspec:\n  ticks: 8\n  steps:\n  - at: 2\n    drain: {{node: n1, force: true}}\n"
    );
    let out = run(&scenario, "force", OutputFormat::Text);
    assert_eq!(out.failures, 0, "{}", out.stdout);
    // Grace period 2 s from t=2: gone at the end of t=4, seen by the next poll.
    assert_eq!(
        drain_lines(&out),
        vec![
            "t=2 drain n1: node/n1 cordoned",
            "t=2 drain n1: Warning: deleting Pods that declare no controller: default/bare",
            "t=2 drain n1: evicting pod default/bare",
            "t=5 drain n1: pod/bare evicted",
            "t=5 drain n1: node/n1 drained",
        ]
    );
}

#[test]
fn an_exhausted_budget_is_retried_every_5s_until_the_timeout() {
    // One replica and minAvailable 1: the budget never allows a disruption.
    let scenario = format!(
        "{NODES}apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      nodeName: n1\n      containers: [{{name: c, image: nginx}}]\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: web}}\nspec:\n  minAvailable: 1\n  selector: {{matchLabels: {{app: web}}}}\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {{name: d}}\nspec:\n  ticks: 20\n  steps:\n  - at: 3\n    drain: {{node: n1, timeoutSeconds: 12}}\n  expect:\n  - at: 3\n    podDisruptionBudget: {{name: web, expectedPods: 1, desiredHealthy: 1, currentHealthy: 1, disruptionsAllowed: 0, reason: InsufficientPods}}\n"
    );
    let out = run(&scenario, "timeout", OutputFormat::Text);
    let lines = drain_lines(&out);
    let attempts: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains(": evicting pod"))
        .collect();
    // t=3, 8, 13; the deadline is t=15.
    assert_eq!(attempts.len(), 3, "{lines:#?}");
    assert!(attempts[2].starts_with("t=13 drain n1: evicting pod default/web-"));
    let retry = lines.iter().find(|l| l.contains("will retry")).unwrap();
    assert!(retry.ends_with("(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget."), "{retry}");
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("t=15 drain n1 FAILED: error: error when evicting pods/\"web-")
            && last.ends_with("-n \"default\": global timeout reached: 12s"),
        "{last}"
    );
    assert_eq!(out.failures, 1);
}

#[test]
fn evicted_pods_carry_the_disruption_target_condition() {
    // The pod ignores SIGTERM and has a long grace period: at the end it is still terminating.
    let scenario = format!(
        "{NODES}apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: web}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      nodeName: n1\n      terminationGracePeriodSeconds: 100\n      containers: [{{name: c, image: nginx}}]\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {{name: d}}\nspec:\n  ticks: 6\n  steps:\n  - at: 3\n    drain: {{node: n1}}\n"
    );
    let out = run(&scenario, "condition", OutputFormat::Json);
    // The drain is still waiting when the run ends: a failed step.
    assert_eq!(out.failures, 1);
    assert!(out
        .stderr
        .contains("t=6 drain n1 FAILED: the run ended at tick 6 before the node was drained"));
    let list: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let evicted: Vec<&serde_json::Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Pod" && o["metadata"]["deletionTimestamp"].is_string())
        .collect();
    assert_eq!(evicted.len(), 1);
    let cond = evicted[0]["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "DisruptionTarget")
        .unwrap();
    assert_eq!(cond["reason"], "EvictionByEvictionAPI");
    assert_eq!(cond["message"], "Eviction API: evicting");
    assert_eq!(cond["lastTransitionTime"], "1970-01-01T00:00:03Z");
    assert_eq!(
        evicted[0]["metadata"]["deletionTimestamp"],
        "1970-01-01T00:01:43Z"
    );
}

#[test]
fn the_evict_step_posts_one_eviction_and_fails_on_a_budget() {
    // `bare` (grace period 2 s) is evicted at t=2 and gone at t=4; `web`'s only pod is protected by
    // minAvailable 1, so its eviction answers 429 and the step fails with the budget's message.
    let scenario = format!(
        "{NODES}{BARE}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      nodeName: n1\n      containers: [{{name: c, image: nginx}}]\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: web}}\nspec:\n  minAvailable: 1\n  selector: {{matchLabels: {{app: web}}}}\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {{name: d}}\nspec:\n  ticks: 6\n  steps:\n  - at: 2\n    evict: {{name: bare}}\n  expect:\n  - at: 1\n    pods: {{selector: app=web, count: 1}}\n  - at: 5\n    pods: {{selector: '!app', count: 0}}\n"
    );
    let out = run(&scenario, "evict", OutputFormat::Text);
    assert_eq!(out.failures, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains("t=2 step: pod/bare evicted"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("PASS  t=5"), "{}", out.stdout);
    let web_pod = out
        .stdout
        .lines()
        .find(|l| l.contains("web-") && l.contains("Running"))
        .and_then(|l| l.split_whitespace().nth(1))
        .expect("the web pod in the pods table")
        .to_string();
    let blocked = format!(
        "{NODES}{BARE}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      nodeName: n1\n      containers: [{{name: c, image: nginx}}]\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: web}}\nspec:\n  minAvailable: 1\n  selector: {{matchLabels: {{app: web}}}}\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {{name: d}}\nspec:\n  ticks: 6\n  steps:\n  - at: 4\n    evict: {{name: {web_pod}}}\n"
    );
    let out = run(&blocked, "evict-blocked", OutputFormat::Text);
    assert_eq!(out.failures, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "t=4 step FAILED: Cannot evict pod as it would violate the pod's disruption budget."
        ),
        "{}",
        out.stdout
    );
}
