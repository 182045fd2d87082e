//! The real client is the test: kubectl v1.32 (`/usr/bin/kubectl`, on CI too) against `serve`
//! started in-process on an ephemeral port with a paused clock, through a rolling update, a watch,
//! a cordon and drain, describe, events, delete and bad requests; then the recorded session
//! replayed by the scenario runner to the same state, byte for byte.

mod common_serve;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common_serve::{words, Env};
use k8s_mini::serve::Clock;

#[test]
fn kubectl_drives_a_rolling_update_a_drain_and_the_recording_replays() {
    let env = Env::new("rollout", true);
    assert_eq!(
        env.ok(&["apply", "-f", "web.yaml"]),
        "deployment.apps/web created\n"
    );
    assert_eq!(env.server().step(5), Some(5));
    let pods = env.ok(&["get", "pods", "-o", "wide"]);
    let lines: Vec<&str> = pods.lines().collect();
    assert_eq!(
        words(lines[0]),
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED",
            "NODE",
            "READINESS",
            "GATES"
        ]
    );
    assert_eq!(lines.len(), 4, "{pods}");
    for l in &lines[1..] {
        let w = words(l);
        // Created at tick 0, read at tick 5: Running for 5 s, on one of the two nodes.
        assert_eq!(&w[1..5], ["1/1", "Running", "0", "5s"], "{l}");
        assert!(w[5].starts_with("10.244."), "{l}");
        assert!(w[6] == "node-1" || w[6] == "node-2", "{l}");
    }
    assert_eq!(
        words(env.ok(&["get", "deploy", "web"]).lines().nth(1).unwrap()),
        ["web", "3/3", "3", "3", "5s"]
    );

    assert_eq!(
        env.ok(&["scale", "deploy/web", "--replicas=4"]),
        "deployment.apps/web scaled\n"
    );
    env.server().step(6);
    assert_eq!(
        words(env.ok(&["get", "deploy", "web"]).lines().nth(1).unwrap())[1],
        "4/4"
    );

    assert_eq!(
        env.ok(&["set", "image", "deploy/web", "app=app:v2"]),
        "deployment.apps/web image updated\n"
    );
    let status = env.while_ticking(&["rollout", "status", "deploy/web", "--timeout=60s"]);
    let out = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{out}");
    assert!(
        out.ends_with("deployment \"web\" successfully rolled out\n"),
        "{out}"
    );
    // Two ReplicaSets: the new one with 4 replicas (app:v2), the old one scaled to 0.
    let rs = env.ok(&["get", "rs", "-o", "wide", "--no-headers"]);
    let mut rows: Vec<Vec<&str>> = rs.lines().map(words).collect();
    rows.sort_by_key(|r| r[1].to_string());
    assert_eq!(rows.len(), 2, "{rs}");
    assert_eq!((rows[0][1], rows[0][6]), ("0", "app:v1"));
    assert_eq!((rows[1][1], rows[1][3], rows[1][6]), ("4", "4", "app:v2"));

    assert_eq!(
        env.ok(&["rollout", "undo", "deploy/web"]),
        "deployment.apps/web rolled back\n"
    );
    env.server().step(40);
    assert_eq!(
        env.ok(&[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image} {.status.availableReplicas}"
        ]),
        "app:v1 4"
    );

    // A bounded watch: a deleted pod shows Terminating and its replacement appears.
    let victim = env.ok(&["get", "pods", "-o", "jsonpath={.items[0].metadata.name}"]);
    let mut watch = env
        .cmd(&["get", "pods", "-w", "--no-headers"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The initial list (4 pods) first, then the changes.
    for _ in 0..4 {
        rx.recv_timeout(Duration::from_secs(20)).unwrap();
    }
    env.ok(&["delete", "pod", &victim, "--wait=false"]);
    env.server().step(2);
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|l: &String| l.starts_with(&victim) && l.contains("Terminating"))
    {
        seen.push(
            rx.recv_timeout(Duration::from_secs(20))
                .expect("watch event"),
        );
    }
    let _ = watch.kill();
    let _ = watch.wait();

    assert_eq!(env.ok(&["cordon", "node-1"]), "node/node-1 cordoned\n");
    let nodes = env.ok(&["get", "nodes", "--no-headers"]);
    assert_eq!(
        words(nodes.lines().next().unwrap())[1],
        "Ready,SchedulingDisabled"
    );
    let drain = env.while_ticking(&["drain", "node-1", "--ignore-daemonsets", "--timeout=60s"]);
    let out = String::from_utf8_lossy(&drain.stdout);
    assert!(
        drain.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&drain.stderr)
    );
    assert!(out.ends_with("node/node-1 drained\n"), "{out}");
    env.server().step(40);
    let wide = env.ok(&["get", "pods", "-o", "wide", "--no-headers"]);
    assert_eq!(wide.lines().count(), 4, "{wide}");
    assert!(wide.lines().all(|l| words(l)[6] == "node-2"), "{wide}");

    let describe = env.ok(&["describe", "deploy", "web"]);
    assert!(
        describe.contains(
            "Replicas:               4 desired | 4 updated | 4 total | 4 available | 0 unavailable"
        ),
        "{describe}"
    );
    assert!(describe.contains("ScalingReplicaSet"), "{describe}");
    let events = env.ok(&["get", "events"]);
    assert_eq!(
        words(events.lines().next().unwrap()),
        ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    );
    assert!(events.contains("Killing"), "{events}");

    // Bad requests: an unsupported field selector (400) and an invalid object (422).
    let bad = env.run(&["get", "pods", "--field-selector", "spec.image=x"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("(BadRequest)"));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("field label not supported: spec.image"));
    std::fs::write(
        env.dir.join("bad.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers: [{name: c, image: \"\"}]\n",
    )
    .unwrap();
    let invalid = env.run(&["apply", "-f", "bad.yaml"]);
    let invalid = String::from_utf8_lossy(&invalid.stderr);
    assert!(
        invalid.contains("The Pod \"bad\" is invalid: spec.containers[0].image: Required value"),
        "{invalid}"
    );

    assert_eq!(
        env.ok(&["delete", "deploy", "web", "--wait=false"]),
        "deployment.apps \"web\" deleted\n"
    );
    env.server().step(40);
    let none = env.run(&["get", "pods"]);
    assert_eq!(
        String::from_utf8_lossy(&none.stderr),
        "No resources found in default namespace.\n"
    );

    // The recording replays to the same state, byte for byte.
    env.assert_replays();
}

#[test]
fn watch_resumes_from_a_resource_version_and_errors_are_status_objects() {
    let env = Env::new("watch", false);
    env.ok(&["apply", "-f", "web.yaml"]);
    env.server().step(1);
    let list: serde_json::Value = serde_json::from_str(&env.ok(&[
        "get",
        "--raw",
        "/apis/apps/v1/namespaces/default/deployments",
    ]))
    .unwrap();
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    env.ok(&["scale", "deploy/web", "--replicas=5"]);
    env.server().step(60);
    // From the list's resourceVersion: the scale (spec.replicas 5) comes first, then the status
    // updates; a bookmark at tick 60.
    let path = format!("/apis/apps/v1/namespaces/default/deployments?watch=1&resourceVersion={rv}&timeoutSeconds=1&allowWatchBookmarks=true");
    let events: Vec<serde_json::Value> = env
        .ok(&["get", "--raw", &path])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["type"], "MODIFIED");
    assert_eq!(events[0]["object"]["spec"]["replicas"], 5);
    assert!(events.iter().all(|e| e["type"] == "MODIFIED"));
    assert!(events.last().unwrap()["object"]["status"]["availableReplicas"] == 5);
    // Compacted away: the watch cache answers with an ERROR event carrying a 410 Expired Status.
    let gone = env.ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/pods?watch=1&resourceVersion=1&timeoutSeconds=1",
    ]);
    let e: serde_json::Value = serde_json::from_str(gone.trim()).unwrap();
    assert_eq!(e["type"], "ERROR");
    assert_eq!(e["object"]["code"], 410);
    assert_eq!(e["object"]["reason"], "Expired");
    // Unknown path, unknown object, conflict, too large a body.
    let missing = env.run(&["get", "--raw", "/api/v1/nope"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("(NotFound)"));
    let nf = env.run(&["get", "deploy", "nope"]);
    assert_eq!(
        String::from_utf8_lossy(&nf.stderr),
        "Error from server (NotFound): deployments.apps \"nope\" not found\n"
    );
    let mut dep: serde_json::Value =
        serde_json::from_str(&env.ok(&["get", "deploy", "web", "-o", "json"])).unwrap();
    dep["metadata"]["resourceVersion"] = serde_json::json!("1");
    std::fs::write(env.dir.join("stale.json"), dep.to_string()).unwrap();
    let conflict = env.run(&["replace", "-f", "stale.json"]);
    assert!(String::from_utf8_lossy(&conflict.stderr).contains("(Conflict)"));
    assert!(String::from_utf8_lossy(&conflict.stderr).contains("the object has been modified"));
    std::fs::write(env.dir.join("huge.json"), vec![b' '; 4 * 1024 * 1024]).unwrap();
    let huge = env.run(&[
        "create",
        "--raw",
        "/api/v1/namespaces/default/pods",
        "-f",
        "huge.json",
    ]);
    assert!(
        String::from_utf8_lossy(&huge.stderr).contains("Request entity too large"),
        "{}",
        String::from_utf8_lossy(&huge.stderr)
    );
    // The server still answers.
    assert!(env.ok(&["get", "deploy", "web"]).contains("5/5"));
}

#[test]
fn the_clock_runs_at_speed_and_a_server_dry_run_stores_nothing() {
    let started = Instant::now();
    let env = Env::with_clock("speed", false, Clock::Speed(100.0));
    std::thread::sleep(Duration::from_millis(500));
    let clock: serde_json::Value =
        serde_json::from_str(&env.ok(&["get", "--raw", "/k8s-mini/v1/clock"])).unwrap();
    assert_eq!(clock["paused"], false);
    assert_eq!(clock["speed"], 100.0);
    // 100 ticks per second since the start (a loaded machine may run behind, never ahead).
    let tick = clock["tick"].as_u64().unwrap();
    let most = (started.elapsed().as_secs_f64() * 100.0).ceil() as u64;
    assert!(tick >= 10 && tick <= most, "{clock}, at most {most}");
    assert_eq!(
        env.ok(&["apply", "-f", "web.yaml", "--dry-run=server"]),
        "deployment.apps/web created (server dry run)\n"
    );
    let none = env.run(&["get", "deploy"]);
    assert_eq!(
        String::from_utf8_lossy(&none.stderr),
        "No resources found in default namespace.\n"
    );
}

/// `kubectl get crd`, `get pytorchjobs -A` (the CRD's printer columns), `apply -f` of a custom
/// resource, and `get workloads -A` / `get podgroups.scheduling.k8s.io -A` on the native gang.
#[test]
fn kubectl_gets_crds_custom_resources_and_v1alpha2_workloads() {
    let env = Env::on_scenario("crd", "pytorchjob-operator.yaml");
    let crds = env.ok(&["get", "crd"]);
    let lines: Vec<&str> = crds.lines().collect();
    assert_eq!(words(lines[0]), ["NAME", "CREATED", "AT"]);
    assert_eq!(
        words(lines[1]),
        ["pytorchjobs.kubeflow.org", "1970-01-01T00:00:00Z"]
    );
    // Two ticks (t=0 and t=1) run: the operator has marked mnist Created; read at t=2.
    env.server().step(2);
    let jobs = env.ok(&["get", "pytorchjobs", "-A"]);
    let lines: Vec<&str> = jobs.lines().collect();
    assert_eq!(words(lines[0]), ["NAMESPACE", "NAME", "STATE", "AGE"]);
    assert_eq!(words(lines[1]), ["default", "mnist", "Created", "2s"]);
    assert_eq!(lines.len(), 2, "{jobs}");
    std::fs::write(
        env.dir.join("tiny.yaml"),
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: tiny}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template:\n        spec:\n          containers: [{name: pytorch, image: pytorch:2}]\n",
    )
    .unwrap();
    let out = env.ok(&["apply", "-f", "tiny.yaml"]);
    assert_eq!(out.trim(), "pytorchjob.kubeflow.org/tiny created");
    let names = env.ok(&["get", "pytorchjobs", "-o", "name"]);
    assert_eq!(
        names.lines().collect::<Vec<_>>(),
        [
            "pytorchjob.kubeflow.org/mnist",
            "pytorchjob.kubeflow.org/tiny"
        ]
    );
    // A second apply of the same file changes nothing (client-side apply's merge patch).
    let out = env.ok(&["apply", "-f", "tiny.yaml"]);
    assert_eq!(out.trim(), "pytorchjob.kubeflow.org/tiny unchanged");
    // A label (a merge patch of the custom resource), then the delete; both are recorded as
    // steps naming the kind with its apiVersion, and the session replays.
    let out = env.ok(&["label", "pytorchjob", "tiny", "team=a"]);
    assert_eq!(out.trim(), "pytorchjob.kubeflow.org/tiny labeled");
    let out = env.ok(&["delete", "pytorchjob", "tiny"]);
    assert_eq!(out.trim(), "pytorchjob.kubeflow.org \"tiny\" deleted");
    env.server().step(1);
    env.assert_replays();
    drop(env);

    let env = Env::on_scenario("workloads", "native-gang.yaml");
    let w = env.ok(&["get", "workloads", "-A"]);
    let lines: Vec<&str> = w.lines().collect();
    assert_eq!(words(lines[0]), ["NAMESPACE", "NAME", "AGE"]);
    assert_eq!(words(lines[1]), ["default", "training", "0s"]);
    let pg = env.ok(&["get", "podgroups.scheduling.k8s.io", "-o", "name"]);
    assert!(
        pg.lines()
            .all(|l| l.starts_with("podgroup.scheduling.k8s.io/")),
        "{pg}"
    );
    assert!(
        pg.contains("podgroup.scheduling.k8s.io/training-workers"),
        "{pg}"
    );
    // The native PodGroup, not the coscheduling one of the same kind name.
    let out = env.ok(&[
        "label",
        "podgroups.scheduling.k8s.io",
        "training-workers",
        "team=a",
    ]);
    assert_eq!(
        out.trim(),
        "podgroup.scheduling.k8s.io/training-workers labeled"
    );
    env.server().step(1);
    env.assert_replays();
}

/// `kubectl delete --cascade=orphan` and `--cascade=foreground` (kubectl sends
/// `propagationPolicy: Orphan` / `Foreground` in the DeleteOptions body): the orphaned
/// ReplicaSet keeps running without its owner; the ReplicaSet deleted in the foreground stays,
/// with its `foregroundDeletion` finalizer and a deletionTimestamp, until its 3 pods have
/// terminated (default 30 s grace), then goes; the recorded session replays byte for byte.
#[test]
fn kubectl_delete_cascade_orphan_and_foreground() {
    let env = Env::new("cascade", true);
    env.ok(&["apply", "-f", "web.yaml"]);
    env.server().step(5);
    let rs = env.ok(&["get", "rs", "-o", "jsonpath={.items[0].metadata.name}"]);
    // `--wait=false`: kubectl would otherwise wait for the object to go, which takes a tick of
    // the garbage collector, and the clock is paused.
    assert_eq!(
        env.ok(&[
            "delete",
            "deployment",
            "web",
            "--cascade=orphan",
            "--wait=false"
        ]),
        "deployment.apps \"web\" deleted\n"
    );
    env.server().step(1);
    assert!(env.run(&["get", "deployment", "web"]).status.code() == Some(1));
    assert_eq!(
        env.ok(&[
            "get",
            "rs",
            &rs,
            "-o",
            "jsonpath={.metadata.ownerReferences}"
        ]),
        ""
    );
    let running = env.ok(&["get", "pods", "-o", "jsonpath={.items[*].status.phase}"]);
    assert_eq!(running, "Running Running Running");

    let out = env.run(&["delete", "rs", &rs, "--cascade=foreground", "--wait=false"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env.server().step(2);
    assert_eq!(
        env.ok(&["get", "rs", &rs, "-o", "jsonpath={.metadata.finalizers}"]),
        "[\"foregroundDeletion\"]"
    );
    env.server().step(40);
    assert!(env.run(&["get", "rs", &rs]).status.code() == Some(1));
    assert_eq!(env.ok(&["get", "pods", "-o", "name"]), "");
    env.assert_replays();
}

/// kubectl's text and ours, line by line: byte for byte, except that kubectl's ages are against the
/// real clock (`56y` for the virtual clock's 1970 timestamps): a line where kubectl prints `56y`
/// is compared word by word with the ages left out, and so is the Events table, whose Age column
/// sets its alignment.
fn assert_same_but_ages(kubectl: &str, ours: &str, what: &str) {
    let (k, m): (Vec<&str>, Vec<&str>) = (kubectl.lines().collect(), ours.lines().collect());
    assert_eq!(
        k.len(),
        m.len(),
        "{what}: line counts differ\n--- kubectl\n{kubectl}--- k8s-mini\n{ours}"
    );
    let mut in_events = false;
    for (kl, ml) in k.iter().zip(&m) {
        in_events |= kl.starts_with("Events:");
        let age = |w: &str| w.trim_matches(|c| c == '(' || c == ')') == "56y";
        if in_events || kl.split_whitespace().any(age) {
            let (kw, mw) = (words(kl), words(ml));
            assert_eq!(kw.len(), mw.len(), "{what}:\n{kl}\n{ml}");
            for (a, b) in kw.iter().zip(&mw) {
                assert!(age(a) || a == b, "{what}:\n{kl}\n{ml}");
            }
        } else {
            assert_eq!(kl, ml, "{what}\n--- kubectl\n{kubectl}--- k8s-mini\n{ours}");
        }
    }
}

/// The real `kubectl describe` against `serve` is the oracle for `k8s-mini describe`: the same
/// scenario, stepped to the same tick, prints the same text for nodes (the GPU node's
/// `nvidia.com/gpu` allocation, a sidecar's requests), a Deployment mid-rollout and its
/// ReplicaSets, Jobs. (Pods are not compared here: the pods `serve` returns carry no `status.podIPs`, so
/// kubectl prints `IPs: <none>`.)
#[test]
fn describe_matches_kubectl_describe_on_the_same_cluster() {
    let cases: [(&str, u64, &[&str]); 5] = [
        (
            "rolling-update.yaml",
            30,
            &["node", "deployment", "replicaset", "pod"],
        ),
        ("service-endpoints.yaml", 40, &["service", "pod"]),
        ("gpu-device-plugin.yaml", 10, &["node"]),
        ("init-and-sidecars.yaml", 25, &["node"]),
        ("job-completions.yaml", 40, &["job", "node"]),
    ];
    for (file, ticks, types) in cases {
        let env = Env::on_scenario("describe", file);
        env.server().step(ticks);
        let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(file);
        for ty in types {
            let kubectl = env.ok(&["describe", ty]);
            let o = Command::new(env!("CARGO_BIN_EXE_k8s-mini"))
                .args(["describe", ty, "-f"])
                .arg(&scenario)
                .args(["--at-tick", &ticks.to_string()])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let ours = String::from_utf8_lossy(&o.stdout);
            assert!(ours.contains("Name:"), "{ours}");
            assert_same_but_ages(
                &kubectl,
                &ours,
                &format!("{file} at {ticks}: describe {ty}"),
            );
        }
        if file == "service-endpoints.yaml" {
            // Server-side printing (printService's columns) and `k8s-mini get` print the same.
            let kubectl = env.ok(&["get", "svc", "-o", "wide"]);
            let o = Command::new(env!("CARGO_BIN_EXE_k8s-mini"))
                .args(["get", "svc", "-o", "wide", "-f"])
                .arg(&scenario)
                .args(["--at-tick", &ticks.to_string()])
                .output()
                .unwrap();
            assert_eq!(kubectl, String::from_utf8_lossy(&o.stdout));
            assert_eq!(
                kubectl.lines().next().map(words),
                Some(vec![
                    "NAME",
                    "TYPE",
                    "CLUSTER-IP",
                    "EXTERNAL-IP",
                    "PORT(S)",
                    "AGE",
                    "SELECTOR"
                ])
            );
            assert!(kubectl.contains("80:30086/TCP"), "{kubectl}");
        }
    }
}
