//! Power loss, GPU XID errors and control-plane restarts end to end. Values by hand from
//! upstream's defaults: Lease renewals every 10 s, the node lifecycle controller's 5 s monitor
//! period and 40 s grace period (a node silent since its t=0 renewal is marked at t=45, the first
//! pass strictly past 0 + 40), 300 s default toleration of the unreachable NoExecute taint (t=345),
//! a container starting one tick after its sandbox is created (the default `startup_ticks`).

use std::io::Write;

use k8s_cluster::{run_file, Cluster, ClusterConfig, OutputFormat, RunOptions};
use k8s_types::apiserver::ApiExt;
use k8s_types::core::{ContainerStatus, Event, Node, Pod};
use k8s_types::Object;

fn node(name: &str) -> Node {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    }))
    .expect("node")
}

fn pod(name: &str, node: &str, restart_policy: &str) -> Object {
    Object::Pod(
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "restartPolicy": restart_policy,
                     "containers": [{"name": "c", "image": "i"}]}
        }))
        .expect("pod"),
    )
}

fn cluster(nodes: &[&str]) -> Cluster {
    let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
    for n in nodes {
        c.add_node(node(n)).expect("add node");
    }
    c
}

/// Runs ticks up to and including `tick`.
fn run_to(c: &mut Cluster, tick: u64) {
    while c.now() <= tick {
        c.tick();
    }
}

fn ready(c: &mut Cluster, name: &str) -> String {
    let n: Node = c.api().get_typed("", name).expect("node");
    n.status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|r| r.status.clone())
        .expect("Ready")
}

fn n_taints(c: &mut Cluster, name: &str) -> usize {
    let n: Node = c.api().get_typed("", name).expect("node");
    n.spec.taints.len()
}

fn status(c: &mut Cluster, name: &str) -> (String, ContainerStatus) {
    let p: Pod = c.api().get_typed("default", name).expect("pod");
    let cs = p.status.container_statuses[0].clone();
    (
        p.status.phase.as_deref().unwrap_or_default().to_string(),
        cs,
    )
}

fn events(c: &mut Cluster, reason: &str) -> Vec<String> {
    c.api()
        .list_typed::<Event>(None, None)
        .into_iter()
        .filter(|e| e.reason == reason)
        .map(|e| format!("{} {}: {}", e.type_, e.involved_object.name, e.message))
        .collect()
}

const LOST_WHILE_RUNNING: &str =
    "The container could not be located when the pod was deleted.  The container used to be Running";

#[test]
fn a_powered_off_node_goes_unknown_and_its_pods_restart_with_container_status_unknown() {
    let mut c = cluster(&["n1", "n2"]);
    c.apply(pod("web", "n2", "Always")).expect("pod");
    c.apply(pod("batch", "n2", "Never")).expect("pod");
    run_to(&mut c, 9);
    assert_eq!(status(&mut c, "web").1.restart_count, 0);
    c.power_off("n2").expect("power off");
    // Silent since its t=0 renewal: Unknown and tainted at the first pass past 0 + 40 s.
    run_to(&mut c, 44);
    assert_eq!(ready(&mut c, "n2"), "True");
    run_to(&mut c, 45);
    assert_eq!(ready(&mut c, "n2"), "Unknown");
    assert_eq!(n_taints(&mut c, "n2"), 2);
    // Nothing was written for the pods in between: their last status says running.
    assert!(status(&mut c, "web").1.state.running.is_some());
    run_to(&mut c, 99);
    c.power_on("n2").expect("power on");
    run_to(&mut c, 100);
    assert_eq!(ready(&mut c, "n2"), "True");
    let rebooted = events(&mut c, "Rebooted");
    assert_eq!(rebooted.len(), 1);
    assert!(
        rebooted[0].starts_with("Warning n2: Node n2 has been rebooted, boot id: "),
        "{rebooted:?}"
    );
    // The new kubelet's event correlator starts empty: a second Starting Event, not a count-up.
    let starting = events(&mut c, "Starting");
    assert_eq!(
        starting.iter().filter(|e| e.contains(" n2:")).count(),
        2,
        "{starting:?}"
    );
    // restartPolicy Always: the container is lost (restartCount 0 + 1) and created again; the
    // pod stays Running (a waiting container with a last termination counts as stopped).
    let (phase, cs) = status(&mut c, "web");
    assert_eq!(phase, "Running");
    assert_eq!(cs.restart_count, 1);
    let waiting = cs.state.waiting.expect("waiting");
    assert_eq!(waiting.reason.as_deref(), Some("ContainerCreating"));
    let last = cs.last_state.terminated.expect("last state");
    assert_eq!(last.reason.as_deref(), Some("ContainerStatusUnknown"));
    assert_eq!(last.exit_code, Some(137));
    assert_eq!(last.message.as_deref(), Some(LOST_WHILE_RUNNING));
    assert_eq!(last.finished_at, None);
    // restartPolicy Never: not run again, Failed, the state turned terminated by TerminatePod.
    let (phase, cs) = status(&mut c, "batch");
    assert_eq!(phase, "Failed");
    assert_eq!(cs.restart_count, 1);
    let term = cs.state.terminated.expect("terminated");
    assert_eq!(term.reason.as_deref(), Some("ContainerStatusUnknown"));
    assert_eq!(term.exit_code, Some(137));
    assert_eq!(
        term.message.as_deref(),
        Some("The container could not be located when the pod was terminated")
    );
    assert_eq!(
        cs.last_state.terminated.expect("last").message.as_deref(),
        Some(LOST_WHILE_RUNNING)
    );
    // One tick later the new container runs; the runtime has no previous container to report.
    run_to(&mut c, 101);
    let (phase, cs) = status(&mut c, "web");
    assert_eq!(phase, "Running");
    assert_eq!(cs.restart_count, 1);
    assert!(cs.state.running.is_some());
    assert!(cs.ready);
    assert!(cs.last_state.terminated.is_none());
    // The controller's next 5 s pass (t=105) sees the node Ready and removes the taints.
    run_to(&mut c, 104);
    assert_eq!(n_taints(&mut c, "n2"), 2);
    run_to(&mut c, 105);
    assert_eq!(n_taints(&mut c, "n2"), 0);
}

#[test]
fn pods_evicted_while_the_node_is_off_are_removed_when_it_boots() {
    let mut c = cluster(&["n1", "n2"]);
    c.apply(pod("web", "n2", "Always")).expect("pod");
    run_to(&mut c, 9);
    c.power_off("n2").expect("power off");
    // Tainted at t=45, the 300 s toleration runs out at t=345: deleted, but nothing on the node
    // can confirm it.
    run_to(&mut c, 344);
    let p: Pod = c.api().get_typed("default", "web").expect("pod");
    assert!(p.metadata.deletion_timestamp.is_none());
    run_to(&mut c, 345);
    let p: Pod = c.api().get_typed("default", "web").expect("pod");
    assert!(p.metadata.deletion_timestamp.is_some());
    run_to(&mut c, 399);
    assert!(c.api().get_typed::<Pod>("default", "web").is_ok());
    let before = c.api().revision();
    c.power_on("n2").expect("power on");
    run_to(&mut c, 400);
    assert!(c.api().get_typed::<Pod>("default", "web").is_err());
    // Before deleting it the kubelet wrote its terminal status (upstream `TerminatePod`): Failed,
    // the lost container terminated ContainerStatusUnknown, no restart counted (it was deleted).
    let last_status = c
        .api()
        .watch(&k8s_types::Kind::Pod, before)
        .expect("watch")
        .into_iter()
        .filter_map(|e| match &*e.object {
            Object::Pod(p) if p.metadata.name == "web" => Some(p.status.clone()),
            _ => None,
        })
        .find(|s| s.phase.as_deref() == Some("Failed"))
        .expect("a Failed status before the deletion");
    let cs = &last_status.container_statuses[0];
    assert_eq!(cs.restart_count, 0);
    let term = cs.state.terminated.as_ref().expect("terminated");
    assert_eq!(term.reason.as_deref(), Some("ContainerStatusUnknown"));
    assert_eq!(term.exit_code, Some(137));
    assert_eq!(
        cs.last_state
            .terminated
            .as_ref()
            .and_then(|t| t.message.as_deref()),
        Some(LOST_WHILE_RUNNING)
    );
}

#[test]
fn power_steps_refuse_what_the_machine_state_does_not_allow() {
    let mut c = cluster(&["n1"]);
    run_to(&mut c, 1);
    assert_eq!(
        c.power_on("n1").unwrap_err(),
        "node \"n1\" is not powered off"
    );
    assert_eq!(c.power_off("nx").unwrap_err(), "node \"nx\" has no kubelet");
    c.power_off("n1").expect("power off");
    assert_eq!(
        c.power_off("n1").unwrap_err(),
        "node \"n1\" is already powered off"
    );
    assert_eq!(
        c.start_kubelet("n1", true).unwrap_err(),
        "node \"n1\" is powered off"
    );
    assert_eq!(
        c.stop_kubelet("n1").unwrap_err(),
        "node \"n1\" is powered off"
    );
    c.power_on("n1").expect("power on");
    // A kubelet stopped before the power loss comes back with the machine.
    c.stop_kubelet("n1").expect("stop");
    c.power_off("n1")
        .expect("power off a node whose kubelet is stopped");
    c.power_on("n1").expect("power on");
    assert_eq!(
        c.start_kubelet("n1", true).unwrap_err(),
        "the kubelet of node \"n1\" is not stopped"
    );
}

fn run(text: &str) -> k8s_cluster::RunOutcome {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("k8s-mini-power-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("case-{}.yaml", N.fetch_add(1, Ordering::SeqCst)));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let opts = RunOptions {
        output: OutputFormat::Text,
        ..Default::default()
    };
    run_file(&path, &opts).expect("scenario loads")
}

const GPU_NODE: &str = "apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status: {capacity: {cpu: '8', memory: 16Gi, pods: '110', nvidia.com/gpu: '2'}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
  - name: c
    image: cuda
    resources: {limits: {nvidia.com/gpu: 1}}
---
";

/// An XID the plugin does not ignore (79, the GPU fell off the bus) takes device 0 out of
/// allocatable (2 -> 1) while the pod holding it keeps running; an application XID (31, a memory
/// page fault) changes nothing.
#[test]
fn a_critical_xid_makes_the_gpu_unhealthy_an_application_xid_does_not() {
    let out = run(&format!(
        "{GPU_NODE}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: xid}}
spec:
  ticks: 12
  steps:
  - {{at: 5, deviceHealth: {{node: gpu-1, device: '1', xid: 31}}}}
  - {{at: 8, deviceHealth: {{node: gpu-1, device: '0', xid: 79}}}}
  expect:
  - {{at: 6, nodeFree: {{gpu-1: {{nvidia.com/gpu: '1'}}}}}}
  - {{at: 8, nodeFree: {{gpu-1: {{nvidia.com/gpu: '0'}}}}}}
  - {{at: 11, pod: {{name: trainer, phase: Running, restartCount: 0, devices: {{nvidia.com/gpu: ['0']}}}}}}
"
    ));
    assert_eq!(out.failures, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "t=5 step: nvidia-device-plugin on gpu-1: Skipping event Xid=31 (GPU memory page fault) on Device=1"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "t=8 step: nvidia-device-plugin on gpu-1: XidCriticalError: Xid=79 on Device=0; marking device as unhealthy."
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn an_xid_on_a_missing_device_fails_the_step_and_healthy_with_xid_is_bad_input() {
    let out = run(&format!(
        "{GPU_NODE}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: xid}}
spec:
  ticks: 3
  steps:
  - {{at: 1, deviceHealth: {{node: gpu-1, device: '7', xid: 79}}}}
"
    ));
    assert_eq!(out.failures, 1);
    assert!(
        out.stdout.contains("node \"gpu-1\" has no device \"7\""),
        "{}",
        out.stdout
    );
    let dir = std::env::temp_dir().join(format!("k8s-mini-power-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.yaml");
    std::fs::write(
        &path,
        format!(
            "{GPU_NODE}apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
metadata: {{name: xid}}
spec:
  steps:
  - {{at: 1, deviceHealth: {{node: gpu-1, device: '0', xid: 79, healthy: false}}}}
"
        ),
    )
    .unwrap();
    let err = match run_file(&path, &RunOptions::default()) {
        Ok(_) => panic!("healthy with xid must be bad input"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("spec.steps[0].deviceHealth: healthy and xid exclude each other"),
        "{err}"
    );
}

/// The bundled `restart-recovery` scenario prints exactly what the same input without its three
/// restart steps prints, but for those step lines: every component rebuilds from the apiserver
/// and the controllers are level-triggered, so the restarts change neither an event nor the end
/// state.
#[test]
fn restarts_leave_the_run_as_it_was_without_them() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/restart-recovery.yaml"
    );
    let text = std::fs::read_to_string(path).expect("scenario");
    let mut without = String::new();
    let mut skip = false;
    for line in text.lines() {
        if line.starts_with("  - at: ") {
            skip = false;
        }
        if line.trim_start().starts_with("restart") {
            // Drop the step: its `- at:` line was the previous one.
            let at = without.trim_end().rfind('\n').expect("an at line");
            without.truncate(at + 1);
            skip = true;
            continue;
        }
        if !skip {
            without.push_str(line);
            without.push('\n');
        }
    }
    assert_eq!(
        without.matches("restart").count(),
        text.matches("restart").count() - 3
    );
    let with = run(&text);
    let plain = run(&without);
    assert_eq!(with.failures, 0, "{}", with.stdout);
    assert_eq!(plain.failures, 0, "{}", plain.stdout);
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.contains(" step: restart "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(with
        .stdout
        .contains("t=40 step: restart kube-apiserver, kube-controller-manager and kube-scheduler"));
    assert_eq!(strip(&with.stdout), strip(&plain.stdout));
}

/// After a power loss the new sandbox runs the init containers again, a container that finished
/// under `restartPolicy: OnFailure` (exit 0) stays finished, the one that was running starts again
/// with its restart count + 1 (its second declared run). Times by hand: sandbox ready at t=1,
/// `setup` runs 1..3, `done` and `srv` start at 3, `done` exits 0 at 8; power off at 10, on at 20:
/// new sandbox ready at 21, `setup` runs 21..23, `srv` starts at 23. The pod stays Running while
/// `setup` runs again (a regular container had started, upstream `HasAnyRegularContainerStarted`).
#[test]
fn after_a_boot_init_containers_run_again_and_finished_containers_stay_finished() {
    let mut c = cluster(&["n1"]);
    let p: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "worker", "namespace": "default", "annotations": {
            "sim.k8s-mini.io/behavior":
                "containers: {setup: {runs: [{seconds: 2}]}, done: {runs: [{seconds: 5}]}, srv: {runs: [{}, {}]}}"
        }},
        "spec": {"nodeName": "n1", "restartPolicy": "OnFailure",
                 "initContainers": [{"name": "setup", "image": "i"}],
                 "containers": [{"name": "done", "image": "i"}, {"name": "srv", "image": "i"}]}
    }))
    .expect("pod");
    c.apply(Object::Pod(Box::new(p))).expect("pod");
    run_to(&mut c, 9);
    let p: Pod = c.api().get_typed("default", "worker").expect("pod");
    let done = &p.status.container_statuses[0];
    assert_eq!(done.name, "done");
    assert_eq!(
        done.state
            .terminated
            .as_ref()
            .and_then(|t| t.finished_at.clone()),
        Some("1970-01-01T00:00:08Z".into())
    );
    c.power_off("n1").expect("off");
    run_to(&mut c, 19);
    c.power_on("n1").expect("on");
    run_to(&mut c, 22);
    let p: Pod = c.api().get_typed("default", "worker").expect("pod");
    assert_eq!(p.status.phase.as_deref(), Some("Running"));
    let setup = &p.status.init_container_statuses[0];
    assert!(setup.state.running.is_some(), "{setup:?}");
    let [done, srv] = &p.status.container_statuses[..] else {
        panic!("two statuses")
    };
    assert_eq!(
        done.state
            .terminated
            .as_ref()
            .and_then(|t| t.reason.clone()),
        Some("Completed".into())
    );
    assert_eq!(done.restart_count, 0);
    assert_eq!(srv.restart_count, 1);
    assert_eq!(
        srv.last_state
            .terminated
            .as_ref()
            .and_then(|t| t.reason.clone()),
        Some("ContainerStatusUnknown".into())
    );
    run_to(&mut c, 23);
    let p: Pod = c.api().get_typed("default", "worker").expect("pod");
    let srv = &p.status.container_statuses[1];
    assert_eq!(
        srv.state
            .running
            .as_ref()
            .and_then(|r| r.started_at.clone()),
        Some("1970-01-01T00:00:23Z".into())
    );
    assert_eq!(srv.restart_count, 1);
}

fn allocatable_gpus(c: &mut Cluster, node: &str) -> Option<String> {
    let n: Node = c.api().get_typed("", node).expect("node");
    n.status
        .allocatable
        .get("nvidia.com/gpu")
        .map(ToString::to_string)
}

/// A GPU made Unhealthy drops out of allocatable at the kubelet's next sync (2 -> 1); after a
/// power cycle the restarted device plugin lists it Healthy again (2).
#[test]
fn a_power_cycle_restarts_the_device_plugin_with_every_gpu_healthy() {
    let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
    let gpu: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "g1"},
        "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110", "nvidia.com/gpu": "2"}}
    }))
    .expect("node");
    c.add_node(gpu).expect("node");
    run_to(&mut c, 2);
    assert_eq!(allocatable_gpus(&mut c, "g1").as_deref(), Some("2"));
    c.set_device_health("g1", "1", false).expect("device");
    run_to(&mut c, 3);
    assert_eq!(allocatable_gpus(&mut c, "g1").as_deref(), Some("1"));
    assert_eq!(c.device_healthy("g1", "1"), Ok(Some(false)));
    c.power_off("g1").expect("off");
    run_to(&mut c, 9);
    c.power_on("g1").expect("on");
    assert_eq!(c.device_healthy("g1", "1"), Ok(Some(true)));
    run_to(&mut c, 10);
    assert_eq!(allocatable_gpus(&mut c, "g1").as_deref(), Some("2"));
}

/// The restarted scheduler attempts the unschedulable pod at its first pass (t=20), ten ticks
/// before the node that fits it joins: its queue, with the pod's back-off and unschedulable
/// state, died with the old process.
#[test]
fn a_restarted_scheduler_retries_an_unschedulable_pod_at_once() {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/restart-recovery.yaml"
    ));
    let opts = RunOptions {
        ticks: Some(40),
        explain: Some("default/big".into()),
        ..Default::default()
    };
    let out = run_file(path, &opts).expect("runs");
    let attempts: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("attempt "))
        .collect();
    assert_eq!(attempts.len(), 2, "{}", out.stdout);
    assert!(
        attempts[0].starts_with("attempt 1 at t=20,"),
        "{attempts:?}"
    );
    assert!(
        attempts[1].starts_with("attempt 2 at t=30,"),
        "{attempts:?}"
    );
}
