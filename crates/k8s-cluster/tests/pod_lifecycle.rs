//! The kubelet's pod lifecycle end to end (issue "Pods that live and die"): restart back-off,
//! terminal phases, OOM kills, init containers and sidecars, image pulls and graceful termination,
//! read back from the final state of bundled and inline scenarios. The expected values are worked
//! out by hand from upstream's rules (see the comments in scenarios/*.yaml).

use std::io::Write;
use std::path::{Path, PathBuf};

use k8s_cluster::{run_file, OutputFormat, RunOptions};

fn bundled(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(format!("{name}.yaml"))
}

fn inline(text: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("k8s-mini-pod-lifecycle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.yaml"));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    path
}

fn final_state(path: &Path) -> serde_json::Value {
    let out = run_file(
        path,
        &RunOptions {
            output: OutputFormat::Json,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&out.stdout).unwrap()
}

fn object<'a>(list: &'a serde_json::Value, kind: &str, name: &str) -> &'a serde_json::Value {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn ts(tick: u64) -> String {
    k8s_types::meta::tick_timestamp(tick)
}

#[test]
fn crash_loop_restarts_follow_the_backoff() {
    let list = final_state(&bundled("crashloop"));
    let crash = object(&list, "Pod", "crash");
    let uid = crash["metadata"]["uid"].as_str().unwrap();
    assert_eq!(crash["status"]["phase"], "Running");
    let c = &crash["status"]["containerStatuses"][0];
    assert_eq!(c["restartCount"], 5);
    assert_eq!(c["ready"], false);
    assert_eq!(c["state"]["waiting"]["reason"], "CrashLoopBackOff");
    // Restarted at t=166 after an 80 s back-off; exited at t=169; the next back-off is 160 s.
    assert_eq!(
        c["state"]["waiting"]["message"],
        format!("back-off 2m40s restarting failed container=app pod=crash_default({uid})")
    );
    let last = &c["lastState"]["terminated"];
    assert_eq!(last["exitCode"], 1);
    assert_eq!(last["reason"], "Error");
    assert_eq!(last["startedAt"], ts(166));
    assert_eq!(last["finishedAt"], ts(169));

    let once = object(&list, "Pod", "once");
    assert_eq!(once["status"]["phase"], "Failed");
    let t = &once["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (t["exitCode"].as_i64(), t["reason"].as_str()),
        (Some(1), Some("Error"))
    );
    assert_eq!(t["finishedAt"], ts(4));
    let ready = once["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    assert_eq!(ready["reason"], "PodFailed");

    let batch = object(&list, "Pod", "batch");
    assert_eq!(batch["status"]["phase"], "Succeeded");
    let t = &batch["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (t["exitCode"].as_i64(), t["reason"].as_str()),
        (Some(0), Some("Completed"))
    );
    assert_eq!(t["finishedAt"], ts(11));
}

#[test]
fn oom_kills_report_137_and_restart() {
    let list = final_state(&bundled("oomkilled"));
    let c = &object(&list, "Pod", "leaky")["status"]["containerStatuses"][0];
    assert_eq!(c["restartCount"], 3);
    let last = &c["lastState"]["terminated"];
    assert_eq!(last["reason"], "OOMKilled");
    assert_eq!(last["exitCode"], 137);
    assert_eq!(last["startedAt"], ts(51));
    assert_eq!(last["finishedAt"], ts(71));
    assert_eq!(c["state"]["running"]["startedAt"], ts(91));
    let steady = &object(&list, "Pod", "steady")["status"]["containerStatuses"][0];
    assert_eq!(steady["restartCount"], 0);
}

#[test]
fn init_containers_run_in_order_and_the_sidecar_stops_last() {
    let list = final_state(&bundled("init-and-sidecars"));
    let job = object(&list, "Pod", "job");
    assert_eq!(job["status"]["phase"], "Succeeded");
    let inits = job["status"]["initContainerStatuses"].as_array().unwrap();
    let got: Vec<(String, i64, String, String)> = inits
        .iter()
        .map(|s| {
            let t = &s["state"]["terminated"];
            (
                s["name"].as_str().unwrap().to_string(),
                t["exitCode"].as_i64().unwrap(),
                t["startedAt"].as_str().unwrap().to_string(),
                t["finishedAt"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("migrate".into(), 0, ts(1), ts(6)),
            ("log-shipper".into(), 0, ts(6), ts(21)),
            ("wait-db".into(), 0, ts(6), ts(9)),
        ]
    );
    let app = &job["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (app["startedAt"].as_str(), app["finishedAt"].as_str()),
        (Some(ts(9).as_str()), Some(ts(19).as_str()))
    );

    let blocked = object(&list, "Pod", "blocked");
    assert_eq!(blocked["status"]["phase"], "Pending");
    let check = &blocked["status"]["initContainerStatuses"][0];
    assert_eq!(check["state"]["waiting"]["reason"], "CrashLoopBackOff");
    assert_eq!(check["restartCount"], 3);
    assert_eq!(
        blocked["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "PodInitializing"
    );
    let init = blocked["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Initialized")
        .unwrap();
    assert_eq!(
        init["message"],
        "containers with incomplete status: [check]"
    );
}

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '4', memory: 8Gi}, images: [{names: [\"cached:1.0\"], sizeBytes: 100}]}\n---\n";

#[test]
fn image_pulls_take_their_time_and_fail_with_backoff() {
    let text = format!(
        "{NODE}apiVersion: v1\nkind: Pod\nmetadata:\n  name: fresh\n  annotations:\n    sim.k8s-mini.io/behavior: '{{\"containers\": {{\"app\": {{\"pullSeconds\": 5, \"imageSizeBytes\": 4000}}}}}}'\nspec: {{containers: [{{name: app, image: \"big:2.0\"}}]}}\n---\n\
apiVersion: v1\nkind: Pod\nmetadata:\n  name: cached\n  annotations:\n    sim.k8s-mini.io/behavior: '{{\"containers\": {{\"app\": {{\"pullSeconds\": 5}}}}}}'\nspec: {{containers: [{{name: app, image: \"cached:1.0\"}}]}}\n---\n\
apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\n  annotations:\n    sim.k8s-mini.io/behavior: '{{\"containers\": {{\"app\": {{\"pullError\": \"manifest unknown\"}}}}}}'\nspec: {{containers: [{{name: app, image: \"nope:1.0\"}}]}}\n---\n\
apiVersion: v1\nkind: Pod\nmetadata:\n  name: never\n  annotations:\n    sim.k8s-mini.io/behavior: '{{\"containers\": {{\"app\": {{\"pullSeconds\": 1}}}}}}'\nspec: {{containers: [{{name: app, image: \"absent:1.0\", imagePullPolicy: Never}}]}}\n---\n\
apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec: {{ticks: 12}}\n"
    );
    let path = inline(&text, "pulls");
    let list = final_state(&path);
    // fresh: pulled t=0..5, then created and started (the sandbox was ready at t=1).
    let fresh = &object(&list, "Pod", "fresh")["status"]["containerStatuses"][0];
    assert_eq!(fresh["state"]["running"]["startedAt"], ts(5));
    // cached: IfNotPresent and listed in status.images: no pull, started with the sandbox.
    let cached = &object(&list, "Pod", "cached")["status"]["containerStatuses"][0];
    assert_eq!(cached["state"]["running"]["startedAt"], ts(1));
    // broken: failed at t=0 (ErrImagePull), ImagePullBackOff from t=1, retried at t=10.
    let broken = &object(&list, "Pod", "broken")["status"]["containerStatuses"][0];
    assert_eq!(broken["state"]["waiting"]["reason"], "ImagePullBackOff");
    assert_eq!(
        broken["state"]["waiting"]["message"],
        "Back-off pulling image \"nope:1.0\""
    );
    let never = &object(&list, "Pod", "never")["status"]["containerStatuses"][0];
    assert_eq!(never["state"]["waiting"]["reason"], "ErrImageNeverPull");
    // The node reports the pulled image, largest first.
    let images = &object(&list, "Node", "n1")["status"]["images"];
    assert_eq!(images[0]["names"][0], "big:2.0");
    assert_eq!(images[0]["sizeBytes"], 4000);
    assert_eq!(images[1]["names"][0], "cached:1.0");
    // The events say so, with upstream's messages.
    let events: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Event")
        .map(|e| {
            format!(
                "{} {} {}",
                e["involvedObject"]["name"].as_str().unwrap(),
                e["reason"].as_str().unwrap(),
                e["message"].as_str().unwrap()
            )
        })
        .collect();
    for want in [
        "fresh Pulling Pulling image \"big:2.0\"",
        "fresh Pulled Successfully pulled image \"big:2.0\" in 5s (5s including waiting). Image size: 4000 bytes.",
        "cached Pulled Container image \"cached:1.0\" already present on machine",
        "broken Failed Failed to pull image \"nope:1.0\": manifest unknown",
        "broken Failed Error: ErrImagePull",
        "broken BackOff Back-off pulling image \"nope:1.0\"",
        "broken Failed Error: ImagePullBackOff",
        "never ErrImageNeverPull Container image \"absent:1.0\" is not present with pull policy of Never",
    ] {
        assert!(events.iter().any(|e| e == want), "missing {want:?} in {events:#?}");
    }
}

#[test]
fn graceful_deletion_holds_resources_until_containers_stop() {
    // t=2: delete both. `quick` runs a 5 s preStop sleep then exits 2 s after SIGTERM (t=9);
    // `slow` ignores SIGTERM and is killed at the end of its 10 s grace period (t=12).
    let text = format!(
        "{NODE}apiVersion: v1\nkind: Pod\nmetadata:\n  name: quick\n  labels: {{app: x}}\n  annotations:\n    sim.k8s-mini.io/behavior: '{{\"containers\": {{\"app\": {{\"stop\": {{\"seconds\": 2}}}}}}}}'\nspec:\n  containers: [{{name: app, image: \"a:1\", resources: {{requests: {{cpu: '1'}}}}, lifecycle: {{preStop: {{sleep: {{seconds: 5}}}}}}}}]\n---\n\
apiVersion: v1\nkind: Pod\nmetadata: {{name: slow, labels: {{app: x}}}}\nspec:\n  terminationGracePeriodSeconds: 10\n  containers: [{{name: app, image: \"a:1\", resources: {{requests: {{cpu: '2'}}}}}}]\n---\n\
apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec:\n  ticks: 15\n  steps:\n  - {{at: 2, delete: {{kind: Pod, selector: app=x}}}}\n  expect:\n  - {{at: 8, nodeAllocated: {{n1: {{cpu: '3'}}}}}}\n  - {{at: 9, nodeAllocated: {{n1: {{cpu: '2'}}}}}}\n  - {{at: 11, nodeAllocated: {{n1: {{cpu: '2'}}}}}}\n  - {{at: 12, nodeAllocated: {{n1: {{cpu: '0'}}}}}}\n"
    );
    let path = inline(&text, "graceful");
    let out = run_file(&path, &RunOptions::default()).unwrap();
    assert_eq!(out.failures, 0, "{}", out.stdout);
    let list = final_state(&path);
    assert!(list["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["kind"] != "Pod"));
}

#[test]
fn bad_behavior_declarations_exit_2_with_line_and_field_path() {
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata:\n      labels: {app: web}\n      annotations:\n        sim.k8s-mini.io/behavior: '{\"containers\": {\"app\": {\"runs\": [{\"exitCode\": 300}]}}}'\n    spec: {containers: [{name: app, image: \"a:1\"}]}\n";
    let path = inline(text, "bad-annotation");
    let e = run_file(&path, &RunOptions::default()).unwrap_err();
    assert_eq!(e.source_loc.line, 10);
    assert_eq!(
        e.path,
        "spec.template.metadata.annotations[sim.k8s-mini.io/behavior].containers.app.runs[0].exitCode"
    );
    assert!(e.message.contains("300"), "{e}");

    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    sim.k8s-mini.io/behavior: '{\"containers\": {\"db\": {}}}'\nspec: {containers: [{name: app, image: \"a:1\"}]}\n";
    let e = run_file(&inline(text, "bad-container"), &RunOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:6: metadata.annotations[sim.k8s-mini.io/behavior].containers.db: Not found: the pod has no container \"db\"",
            std::env::temp_dir()
                .join(format!("k8s-mini-pod-lifecycle-{}", std::process::id()))
                .join("bad-container.yaml")
                .display()
        )
    );

    let text = "apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec:\n  behaviors:\n  - {selector: \"app in (\", behavior: {}}\n";
    let e = run_file(&inline(text, "bad-rule"), &RunOptions::default()).unwrap_err();
    assert_eq!(e.path, "spec.behaviors[0].selector");
    let text = "apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec:\n  behaviors:\n  - {behavior: {runz: []}}\n";
    let e = run_file(&inline(text, "bad-rule-field"), &RunOptions::default()).unwrap_err();
    assert!(e.to_string().contains("unknown field `runz`"), "{e}");
}
