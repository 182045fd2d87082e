//! CustomResourceDefinitions and custom resources through the whole load path (manifest ->
//! apiserver -> store), and the bundled PyTorchJob operator on them. Messages are
//! apiextensions-apiserver's (kube-openapi's texts, `kubeOpenAPIResultToFieldErrors`), lines are
//! counted by hand in the inputs below.

use std::io::Write;
use std::path::{Path, PathBuf};

use k8s_cluster::{run_file, OutputFormat, RunOptions};

/// The bundled PyTorchJob CRD.
const CRD: &str = k8s_controllers::operators::pytorchjob::CRD_YAML;

fn write(text: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("k8s-mini-crd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("case-{}.yaml", N.fetch_add(1, Ordering::SeqCst)));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    path
}

fn run_err(text: &str) -> String {
    match run_file(&write(text), &RunOptions::default()) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn final_list(text: &str) -> serde_json::Value {
    let opts = RunOptions {
        output: OutputFormat::Json,
        ..Default::default()
    };
    let out = run_file(&write(text), &opts).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&out.stdout).expect("json")
}

fn item<'a>(list: &'a serde_json::Value, kind: &str, name: &str) -> &'a serde_json::Value {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// A PyTorchJob with `replicas` as given (line 9 of this text is `replicas:`).
fn job(replicas: &str, extra_spec: &str) -> String {
    format!(
        "apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
spec:
{extra_spec}  pytorchReplicaSpecs:
    Master:
      restartPolicy: Never
      replicas: {replicas}
      template:
        spec:
          containers: [{{name: pytorch, image: pytorch:2.4}}]
"
    )
}

#[test]
fn a_wrong_type_is_exit_2_with_file_line_and_the_apiservers_message() {
    // The CR comes before its CRD: CRDs are created first.
    let text = format!("{}---\n{CRD}", job("\"two\"", ""));
    let e = run_err(&text);
    assert!(
        e.ends_with(
            ":9: spec.pytorchReplicaSpecs.Master.replicas: Invalid value: \"string\": spec.pytorchReplicaSpecs.Master.replicas in body must be of type integer: \"string\""
        ),
        "{e}"
    );
}

#[test]
fn several_errors_are_the_invalid_status_message() {
    // Required `pytorchReplicaSpecs` missing and a wrong-typed runPolicy field: both reported, as
    // kube-apiserver's 422 message `<Kind>.<group> "<name>" is invalid: [...]`.
    let text = format!(
        "{CRD}---\napiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: bad}}\nspec:\n  runPolicy: {{backoffLimit: 1.5}}\n"
    );
    let e = run_err(&text);
    assert!(
        e.ends_with(
            "PyTorchJob.kubeflow.org \"bad\" is invalid: [spec.pytorchReplicaSpecs: Required value, spec.runPolicy.backoffLimit: Invalid value: \"number\": spec.runPolicy.backoffLimit in body must be of type integer: \"number\"]"
        ),
        "{e}"
    );
}

#[test]
fn a_custom_resource_without_its_crd_is_an_error() {
    let e = run_err(&job("1", ""));
    assert!(
        e.ends_with(
            ":1: no matches for kind \"PyTorchJob\" in version \"kubeflow.org/v1\": ensure CRDs are installed first"
        ),
        "{e}"
    );
    // A version the CRD does not serve is no better.
    let text = format!(
        "{CRD}---\n{}",
        job("1", "").replace("kubeflow.org/v1\n", "kubeflow.org/v2\n")
    );
    let e = run_err(&text);
    assert!(
        e.contains("no matches for kind \"PyTorchJob\" in version \"kubeflow.org/v2\""),
        "{e}"
    );
    // A malformed CRD is refused with upstream's message.
    let bad = CRD.replace(
        "name: pytorchjobs.kubeflow.org",
        "name: pytorchjob.kubeflow.org",
    );
    let e = run_err(&bad);
    assert!(
        e.contains("metadata.name: Invalid value: \"pytorchjob.kubeflow.org\": must be spec.names.plural+\".\"+spec.group"),
        "{e}"
    );
}

#[test]
fn unknown_fields_are_pruned_and_defaults_applied() {
    // `runPolicy.suspend` defaults to false in the CRD; `typo` is not in the schema; the pod
    // template preserves unknown fields.
    let text = format!(
        "{CRD}---\n{}",
        job("1", "  typo: 1\n  runPolicy: {cleanPodPolicy: None}\n")
    );
    let list = final_list(&text);
    let spec = &item(&list, "PyTorchJob", "train")["spec"];
    assert_eq!(spec["runPolicy"]["suspend"], false);
    assert!(spec.get("typo").is_none(), "{spec}");
    assert_eq!(
        spec["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["image"],
        "pytorch:2.4"
    );
    let crd = item(
        &list,
        "CustomResourceDefinition",
        "pytorchjobs.kubeflow.org",
    );
    assert_eq!(crd["status"]["conditions"][1]["type"], "Established");
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "PyTorchJob");
}

/// The scenario carries the bundled CRD verbatim (the file's comment header aside).
#[test]
fn the_scenario_carries_the_bundled_crd() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/pytorchjob-operator.yaml");
    let scenario = std::fs::read_to_string(path).unwrap();
    let body: String = CRD
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(scenario.contains(&body));
}

const NODES: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '32', memory: 64Gi, pods: '110'}}\n---\n";

fn env_of(pod: &serde_json::Value) -> Vec<(String, String)> {
    pod["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Workers only (no Master): worker-0 has the master role, no MASTER_* or RANK env is set
/// (`setPodEnv` sets them only with a Master), PET_NNODES is the 2 replicas; the job succeeds when
/// both workers have (`UpdateJobStatus` without a master: "<ns>/<name> successfully completed.").
#[test]
fn workers_only_job_succeeds_when_every_worker_has() {
    let behavior =
        "{\"containers\": {\"pytorch\": {\"runs\": [{\"seconds\": 5, \"exitCode\": 0}]}}}";
    let text = format!(
        "{NODES}{CRD}---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: w}}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        metadata:
          annotations: {{sim.k8s-mini.io/behavior: '{behavior}'}}
        spec:
          containers: [{{name: pytorch, image: pytorch:2.4}}]
"
    );
    let list = final_list(&text);
    let w0 = item(&list, "Pod", "w-worker-0");
    assert_eq!(
        w0["metadata"]["labels"]["training.kubeflow.org/job-role"],
        "master"
    );
    assert_eq!(w0["spec"]["restartPolicy"], "OnFailure");
    let env: Vec<(String, String)> = env_of(w0);
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        env,
        pairs(&[
            ("PYTHONUNBUFFERED", "1"),
            ("PET_NPROC_PER_NODE", "auto"),
            ("PET_NNODES", "2")
        ])
    );
    let w1 = item(&list, "Pod", "w-worker-1");
    assert!(w1["metadata"]["labels"]
        .get("training.kubeflow.org/job-role")
        .is_none());
    let status = &item(&list, "PyTorchJob", "w")["status"];
    let last = status["conditions"].as_array().unwrap().last().unwrap();
    assert_eq!(last["type"], "Succeeded");
    assert_eq!(
        last["message"],
        "PyTorchJob default/w successfully completed."
    );
    assert_eq!(status["replicaStatuses"]["Worker"]["succeeded"], 2);
    // Started at t=1, exited at t=6, seen by the operator at t=7.
    assert_eq!(status["completionTime"], "1970-01-01T00:00:07Z");
}

/// restartPolicy Never: a worker exiting 1 fails the job ("is failed because 1 Worker replica(s)
/// failed."), and its master keeps running (cleanPodPolicy None).
#[test]
fn a_failed_worker_with_restart_policy_never_fails_the_job() {
    let ok = "{\"containers\": {\"pytorch\": {\"runs\": [{\"seconds\": 100, \"exitCode\": 0}]}}}";
    let fail = "{\"containers\": {\"pytorch\": {\"runs\": [{\"seconds\": 3, \"exitCode\": 1}]}}}";
    let text = format!(
        "{NODES}{CRD}---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: f}}
spec:
  pytorchReplicaSpecs:
    Master:
      restartPolicy: Never
      template:
        metadata:
          annotations: {{sim.k8s-mini.io/behavior: '{ok}'}}
        spec:
          containers: [{{name: pytorch, image: pytorch:2.4}}]
    Worker:
      restartPolicy: Never
      template:
        metadata:
          annotations: {{sim.k8s-mini.io/behavior: '{fail}'}}
        spec:
          containers: [{{name: pytorch, image: pytorch:2.4}}]
---
apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: f}}
spec: {{ticks: 20}}
"
    );
    let list = final_list(&text);
    let master = item(&list, "Pod", "f-master-0");
    // RANK 0 for the master, 1 for worker-0; WORLD_SIZE 2.
    let env = env_of(master);
    assert!(env.contains(&("RANK".into(), "0".into())), "{env:?}");
    assert!(env.contains(&("WORLD_SIZE".into(), "2".into())), "{env:?}");
    assert!(env_of(item(&list, "Pod", "f-worker-0")).contains(&("RANK".into(), "1".into())));
    assert_eq!(master["status"]["phase"], "Running");
    let status = &item(&list, "PyTorchJob", "f")["status"];
    let failed = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Failed")
        .expect("Failed condition");
    assert_eq!(failed["reason"], "PyTorchJobFailed");
    assert_eq!(
        failed["message"],
        "PyTorchJob f is failed because 1 Worker replica(s) failed."
    );
    // The worker exits at t=4 (started t=1, 3 s), the operator sees it at t=5.
    assert_eq!(failed["lastTransitionTime"], "1970-01-01T00:00:05Z");
}

/// A dump's custom resource (it carries a uid and a resourceVersion: existing state) whose CRD the
/// dump lacks is kept, not validated, and named in one warning; the same object without them is new
/// and refused as kubectl refuses it (see `a_custom_resource_without_its_crd_is_an_error`).
#[test]
fn an_existing_custom_resource_without_its_crd_is_kept_with_a_warning() {
    let dumped = job("1", "").replace(
        "  name: train\n",
        "  name: train\n  uid: 0b1c-train\n  resourceVersion: \"42\"\n",
    );
    let opts = RunOptions {
        output: OutputFormat::Json,
        ..Default::default()
    };
    let out = run_file(&write(&dumped), &opts).unwrap_or_else(|e| panic!("{e}"));
    let list: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let kept = item(&list, "PyTorchJob", "train");
    assert_eq!(kept["metadata"]["uid"], "0b1c-train");
    assert!(
        out.stderr.contains(
            "1 custom resource(s) of the input's existing state have no CustomResourceDefinition in the input; kept, not validated: PyTorchJob train"
        ),
        "{}",
        out.stderr
    );
}
