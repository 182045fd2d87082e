//! Malformed input gives a precise error (file, line, field path) and never a panic: the CLI maps
//! these errors to exit code 2.

use std::io::Write;

use k8s_cluster::{run_file, RunOptions};

fn run_text(text: &str) -> Result<k8s_cluster::RunOutcome, String> {
    let mut f = tempfile_in_target();
    f.1.write_all(text.as_bytes()).unwrap();
    run_file(&f.0, &RunOptions::default()).map_err(|e| e.to_string())
}

fn tempfile_in_target() -> (std::path::PathBuf, std::fs::File) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("k8s-mini-bad-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("case-{}.yaml", N.fetch_add(1, Ordering::SeqCst)));
    let f = std::fs::File::create(&path).unwrap();
    (path, f)
}

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\n";

#[test]
fn invalid_quantity_names_line_and_field() {
    let e = run_text(&format!(
        "{NODE}apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: c\n    image: i\n    resources:\n      requests:\n        cpu: 1.5.5\n"
    ))
    .unwrap_err();
    assert!(
        e.contains(":15: spec.containers[0].resources.requests.cpu: invalid quantity \"1.5.5\""),
        "{e}"
    );
}

#[test]
fn unknown_kind_is_rejected() {
    let e = run_text("apiVersion: v1\nkind: Pdo\nmetadata: {name: p}\n").unwrap_err();
    assert!(
        e.ends_with(":1: no matches for kind \"Pdo\" in version \"v1\""),
        "{e}"
    );
}

#[test]
fn bad_yaml_is_rejected_with_its_line() {
    let e = run_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [p\n").unwrap_err();
    assert!(e.contains("invalid YAML"), "{e}");
}

#[test]
fn missing_name_is_invalid() {
    let e = run_text(&format!(
        "{NODE}apiVersion: v1\nkind: Pod\nmetadata: {{labels: {{a: b}}}}\nspec: {{containers: [{{name: c, image: i}}]}}\n"
    ))
    .unwrap_err();
    assert!(e.contains(":6: metadata.name: Required value"), "{e}");
}

#[test]
fn duplicate_object_is_already_exists() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n";
    let e = run_text(&format!("{NODE}{pod}---\n{pod}")).unwrap_err();
    assert!(e.ends_with(": pods \"p\" already exists"), "{e}");
}

#[test]
fn seed_vllm_deployment_is_rejected_as_upstream_does() {
    // The vllm-server Deployment exactly as ../shared/seeds/001 writes it: no template labels.
    let seed = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm-server\nspec:\n  replicas: 3\n  selector:\n    matchLabels: { app: vllm }\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:latest\n          resources:\n            limits: { nvidia.com/gpu: 1 }\n";
    let e = run_text(seed).unwrap_err();
    assert!(e.contains("spec.template.metadata.labels"), "{e}");
    assert!(
        e.contains("`selector` does not match template `labels`"),
        "{e}"
    );
}

#[test]
fn unsimulated_builtin_kinds_are_kept_with_a_warning() {
    let out = run_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n")
        .expect("a ConfigMap is accepted");
    assert!(out.stderr.contains("warning: "), "{}", out.stderr);
    assert!(!out.stdout.contains("warning: "), "{}", out.stdout);
    assert!(out
        .stderr
        .contains("v1 ConfigMap is kept in the store but not simulated"));
    // A ReplicationController's selector feeds PodTopologySpread's default spreading: the
    // warning says so.
    let out = run_text(
        "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: web}\nspec: {selector: {app: web}}\n",
    )
    .expect("a ReplicationController is accepted");
    assert!(out.stderr.contains(
        "v1 ReplicationController is kept in the store; the scheduler reads its selector"
    ));
}

/// A pod for a scheduler no profile serves waits as upstream (no event), and the load says why.
#[test]
fn unserved_scheduler_names_are_warned_about() {
    let out = run_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '1', memory: 1Gi}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec: {schedulerName: volcano, containers: [{name: c, image: i}]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {schedulerName: yunikorn, containers: [{name: c, image: i}]}\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec:\n  ticks: 3\n  expect:\n  - pod: {name: train, nodeName: \"\", phase: Pending}\n")
        .expect("loads");
    assert_eq!(out.failures, 0, "{}", out.stdout);
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("no scheduler profile serves"))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", out.stderr);
    assert!(warnings[0].ends_with(":11: the pods of deployment default/web ask for schedulerName \"yunikorn\", which no scheduler profile serves: they stay Pending"), "{}", warnings[0]);
    assert!(warnings[1].ends_with(":6: pod default/train asks for schedulerName \"volcano\", which no scheduler profile serves: it stays Pending"), "{}", warnings[1]);
}

/// A dump of pods without their ReplicaSet: the owner lives outside the input, so the garbage
/// collector keeps the pods (it deleted them at tick 0 before), and one warning names the owner.
#[test]
fn pods_whose_owner_is_not_in_the_input_are_kept() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web-abc-1\n  uid: 11111111-1111-1111-1111-111111111111\n  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: 22222222-2222-2222-2222-222222222222, controller: true}]\nspec: {nodeName: n1, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec:\n  ticks: 5\n  expect:\n  - {at: 4, pod: {name: web-abc-1, nodeName: n1, phase: Running}}\n  - {at: 4, nodeAllocated: {n1: {cpu: '1'}}}\n";
    let out = run_text(text).expect("loads");
    assert_eq!(out.failures, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("warning: 1 owner(s) named by ownerReferences are not in the input; their dependents are kept as if they lived outside it: ReplicaSet default/web-abc"),
        "{}",
        out.stdout
    );
}

#[test]
fn failed_expectation_reports_expected_and_actual() {
    let text = format!(
        "{NODE}apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{containers: [{{name: c, image: i}}]}}\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec:\n  ticks: 3\n  expect:\n  - pod: {{name: p, nodeName: elsewhere}}\n"
    );
    let out = run_text(&text).expect("runs");
    assert_eq!(out.exit_code(), 1);
    assert!(
        out.stdout
            .contains("FAIL  end      pod default/p: expected nodeName \"elsewhere\", got \"n1\""),
        "{}",
        out.stdout
    );
}

#[test]
fn container_state_expectations_follow_the_kubelet_and_report_each_field() {
    let text = format!(
        "{NODE}apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{containers: [{{name: c, image: i}}]}}\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec:\n  ticks: 3\n  expect:\n  - at: 0\n    pod: {{name: p, status: ContainerCreating, ready: false, containers: {{c: {{state: waiting, reason: ContainerCreating, ready: false}}}}}}\n  - pod: {{name: p, status: Running, ready: true, restartCount: 0, containers: {{c: {{state: running, ready: true, restartCount: 0}}}}}}\n  - pods: {{status: Pending, containers: {{c: {{state: terminated, exitCode: 0}}}}}}\n"
    );
    let out = run_text(&text).expect("runs");
    assert_eq!(out.exit_code(), 1);
    assert!(
        out.stdout.contains("PASS  t=0      pod default/p\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("PASS  end      pod default/p\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "FAIL  end      pods (all): expected status Pending, got p=Running; \
             container c: expected state terminated, got p=running; \
             container c: expected exitCode 0, got p=<none>\n"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn set_image_names_exactly_one_workload() {
    let scenario = "apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  steps:\n  - at: 1\n    setImage: {deployment: web, daemonset: agent, image: 'x:2'}\n";
    let e = run_text(&format!("{NODE}{scenario}")).unwrap_err();
    assert!(
        e.contains("spec.steps[0].setImage: setImage needs exactly one of deployment, daemonset and statefulset, found 2"),
        "{e}"
    );
    let scenario = "apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  steps:\n  - at: 1\n    setImage: {image: 'x:2'}\n";
    let e = run_text(&format!("{NODE}{scenario}")).unwrap_err();
    assert!(e.contains("found 0"), "{e}");
}

#[test]
fn informer_lag_fields_are_checked() {
    let scenario = |lag: &str| {
        format!(
            "apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {{name: s}}\nspec:\n  informerLag: {lag}\n"
        )
    };
    let e = run_text(&scenario("{tick: 2}")).unwrap_err();
    assert!(
        e.contains(":5: spec.informerLag.tick: spec.informerLag: unknown field `tick`"),
        "{e}"
    );
    let e = run_text(&scenario("{scheduler: -1}")).unwrap_err();
    assert!(
        e.contains("spec.informerLag.scheduler: invalid type: integer `-1`"),
        "{e}"
    );
    let e = run_text(&scenario("{controllerManager: 4294967296}")).unwrap_err();
    assert!(
        e.contains("spec.informerLag.controllerManager: Invalid value: 4294967296: must be at most 2147483647"),
        "{e}"
    );
}
