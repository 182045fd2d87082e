//! The `k8s-mini` binary as a user runs it, on `tests/fixtures/two-pods.yaml` (a node, a web
//! server, a container that crashes every 3 s; 30 ticks). The values are worked out by hand in the
//! fixture's comment: crash starts at t=1, is restarted at t=4 and t=17, and at the end (clock 30)
//! waits in CrashLoopBackOff with 2 restarts, the last container finished at t=20.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/two-pods.yaml")
}

fn k8s_mini(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_k8s-mini"))
        .args(args)
        .output()
        .expect("k8s-mini runs")
}

fn k8s_mini_stdin(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_k8s-mini"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("k8s-mini starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("k8s-mini ends")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// kubectl's columns and widths (tabwriter: columns at least 6 wide, 3 spaces of padding).
const PODS: &str = "\
NAME    READY   STATUS             RESTARTS      AGE
crash   0/1     CrashLoopBackOff   2 (10s ago)   30s
web     1/1     Running            0             30s
";

#[test]
fn get_pods_prints_kubectls_columns() {
    let f = fixture();
    let o = k8s_mini(&["get", "pods", "-f", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), PODS);
    // Short name, TYPE/NAME form, one pod.
    let o = k8s_mini(&["get", "po/web", "-f", f.to_str().unwrap()]);
    assert_eq!(
        stdout(&o),
        "NAME   READY   STATUS    RESTARTS   AGE\nweb    1/1     Running   0          30s\n"
    );
}

#[test]
fn get_pods_wide_adds_ip_node_nominated_node_and_readiness_gates() {
    let f = fixture();
    let o = k8s_mini(&["get", "pods", "-f", f.to_str().unwrap(), "-o", "wide"]);
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(
        lines[0],
        "NAME    READY   STATUS             RESTARTS      AGE   IP           NODE     NOMINATED NODE   READINESS GATES"
    );
    // Pod IPs come from node-a's pod CIDR 10.244.1.0/24 in binding order.
    assert!(
        lines[1].starts_with("crash   0/1     CrashLoopBackOff   2 (10s ago)   30s   10.244.1."),
        "{lines:?}"
    );
    assert!(
        lines[1].ends_with("   node-a   <none>           <none>"),
        "{lines:?}"
    );
    assert!(
        lines[2].ends_with("   node-a   <none>           <none>"),
        "{lines:?}"
    );
}

#[test]
fn output_name_and_all_namespaces() {
    let f = fixture();
    let o = k8s_mini(&["get", "pods", "-f", f.to_str().unwrap(), "-o", "name"]);
    assert_eq!(stdout(&o), "pod/crash\npod/web\n");
    let o = k8s_mini(&["get", "nodes", "-f", f.to_str().unwrap(), "-o", "name"]);
    assert_eq!(stdout(&o), "node/node-a\n");
    let o = k8s_mini(&["get", "pods", "-A", "-f", f.to_str().unwrap()]);
    assert!(
        stdout(&o).starts_with("NAMESPACE   NAME    READY"),
        "{}",
        stdout(&o)
    );
    // Another namespace holds nothing: kubectl's message on standard error, exit 0.
    let o = k8s_mini(&[
        "get",
        "pods",
        "-n",
        "kube-system",
        "-f",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "");
    assert_eq!(stderr(&o), "No resources found in kube-system namespace.\n");
}

#[test]
fn get_json_prints_the_object_and_a_list_for_several() {
    let f = fixture();
    let o = k8s_mini(&["get", "pod", "web", "-f", f.to_str().unwrap(), "-o", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["kind"], "Pod");
    assert_eq!(v["metadata"]["name"], "web");
    assert_eq!(v["spec"]["nodeName"], "node-a");
    let o = k8s_mini(&["get", "pods", "-f", f.to_str().unwrap(), "-o", "yaml"]);
    let text = stdout(&o);
    assert!(text.starts_with("apiVersion: v1\nitems:\n"), "{text}");
    assert!(
        text.ends_with("kind: List\nmetadata:\n  resourceVersion: ''\n"),
        "{text}"
    );
}

#[test]
fn at_tick_shows_the_state_when_the_clock_read_it() {
    // At 5 s: crash was restarted at t=4 (its first container finished then) and runs again.
    let f = fixture();
    let o = k8s_mini(&["get", "pods", "-f", f.to_str().unwrap(), "--at-tick", "5"]);
    assert_eq!(
        stdout(&o),
        "NAME    READY   STATUS    RESTARTS     AGE\ncrash   1/1     Running   1 (1s ago)   5s\nweb     1/1     Running   0            5s\n"
    );
}

#[test]
fn stdin_is_read_with_dash_f_dash() {
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    let o = k8s_mini_stdin(&["get", "pods", "-f", "-"], &text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), PODS);
    // A bad document read from standard input is reported as STDIN:line, exit 2.
    let o = k8s_mini_stdin(
        &["get", "pods", "-f", "-"],
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: c\n    image: i\n    resources: {requests: {cpu: 1.5.5}}\n",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with("error: STDIN:8: spec.containers[0].resources.requests.cpu"),
        "{err}"
    );
}

#[test]
fn a_directory_is_read_with_r_for_its_subdirectories() {
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    let docs: Vec<&str> = text.split("\n---\n").collect();
    assert_eq!(docs.len(), 4);
    let dir = std::env::temp_dir().join(format!("k8s-mini-dir-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("pods")).expect("dir");
    std::fs::write(dir.join("a-scenario.yaml"), docs[0]).expect("write");
    std::fs::write(dir.join("b-node.yml"), docs[1]).expect("write");
    std::fs::write(dir.join("notes.txt"), "not a manifest").expect("write");
    std::fs::write(dir.join("pods/web.yaml"), docs[2]).expect("write");
    std::fs::write(
        dir.join("pods/crash.json"),
        serde_json::to_string(&serde_yaml::from_str::<serde_json::Value>(docs[3]).expect("yaml"))
            .expect("json"),
    )
    .expect("write");
    let d = dir.to_str().unwrap();
    // Without -R the subdirectory is not read: the node only.
    let o = k8s_mini(&["get", "pods", "-f", d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(stderr(&o), "No resources found in default namespace.\n");
    let o = k8s_mini(&["get", "pods", "-f", d, "-R"]);
    assert_eq!(stdout(&o), PODS, "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn describe_pod_prints_kubectls_sections() {
    let f = fixture();
    let o = k8s_mini(&["describe", "pod", "web", "-f", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    // The first block aligns at its longest label ("Annotations:" + 2).
    assert_eq!(
        &lines[..3],
        [
            "Name:         web",
            "Namespace:    default",
            "Priority:     0"
        ]
    );
    assert!(lines[3].starts_with("Node:         node-a/"), "{text}");
    assert_eq!(
        &lines[4..12],
        [
            "Start Time:   Thu, 01 Jan 1970 00:00:00 +0000",
            "Labels:       app=web",
            "Annotations:  <none>",
            "Status:       Running",
            &format!(
                "IP:           {}",
                lines[8].trim_start_matches("IP:").trim()
            ),
            "IPs:",
            &format!("  IP:  {}", lines[8].trim_start_matches("IP:").trim()),
            "Containers:",
        ]
    );
    let containers = "\
  app:
    Container ID:   
    Image:          nginx:1.27
    Image ID:       
    Port:           80/TCP
    Host Port:      0/TCP
    State:          Running
      Started:      Thu, 01 Jan 1970 00:00:01 +0000
    Ready:          True
    Restart Count:  0
    Requests:
      cpu:        500m
      memory:     256Mi
    Environment:  <none>
    Mounts:       <none>
Conditions:
  Type                        Status
  PodReadyToStartContainers   True 
  Initialized                 True 
  Ready                       True 
  ContainersReady             True 
  PodScheduled                True 
Volumes:                      <none>
QoS Class:                    Burstable
Node-Selectors:               <none>
Tolerations:                  node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
                              node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
Events:
  Type    Reason     Age   From               Message
  ----    ------     ----  ----               -------
  Normal  Scheduled  30s   default-scheduler  Successfully assigned default/web to node-a
  Normal  Pulled     30s   kubelet            Container image \"nginx:1.27\" already present on machine
  Normal  Created    30s   kubelet            Created container: app
  Normal  Started    29s   kubelet            Started container app
";
    assert!(text.ends_with(containers), "{text}");
}

#[test]
fn describe_folds_repeated_events_as_kubectl() {
    let f = fixture();
    let o = k8s_mini(&["describe", "pod", "crash", "-f", f.to_str().unwrap()]);
    let text = stdout(&o);
    for line in [
        "    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1\n      Started:      Thu, 01 Jan 1970 00:00:17 +0000\n      Finished:     Thu, 01 Jan 1970 00:00:20 +0000\n    Ready:          False\n    Restart Count:  2\n",
        // Started at t=1, 4 and 17: last 13 s ago, the first 29 s ago.
        "  Normal   Started    13s (x3 over 29s)  kubelet            Started container app\n",
        // Back-off after the exits at t=7 and t=20.
        "  Warning  BackOff    10s (x2 over 23s)  kubelet            Back-off restarting failed container app in pod crash_default(",
    ] {
        assert!(text.contains(line), "{line}\n---\n{text}");
    }
}

#[test]
fn events_fold_repeats_and_node_start_up() {
    let f = fixture();
    let o = k8s_mini(&["events", "-f", f.to_str().unwrap()]);
    let text = stdout(&o);
    assert!(
        text.starts_with("LAST SEEN           TYPE      REASON      OBJECT      MESSAGE\n"),
        "{text}"
    );
    assert!(text.contains("\n10s (x2 over 23s)   Warning   BackOff     Pod/crash   Back-off restarting failed container app"), "{text}");
    assert!(!text.contains("Node/node-a"), "{text}");
    assert!(
        stderr(&o).starts_with("# 5 node start-up events of 1 node(s) not shown (Starting, "),
        "{}",
        stderr(&o)
    );
    let o = k8s_mini(&["events", "-f", f.to_str().unwrap(), "--all-node-events"]);
    assert!(
        stdout(&o)
            .contains("30s                 Normal    Starting                  Node/node-a   Starting kubelet.\n"),
        "{}",
        stdout(&o)
    );
    // `get events` is kubectl get's printer: no folding, lower-case kind.
    let o = k8s_mini(&["get", "events", "-f", f.to_str().unwrap()]);
    assert!(
        stdout(&o).contains(
            "13s         Normal    Started                   pod/crash     Started container app\n"
        ),
        "{}",
        stdout(&o)
    );
}

#[test]
fn exit_codes() {
    let f = fixture();
    let f = f.to_str().unwrap();
    // NotFound: kubectl's message, exit 1.
    let o = k8s_mini(&["describe", "pod", "nope", "-f", f]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "Error from server (NotFound): pods \"nope\" not found\n"
    );
    // Unknown resource type, unknown flag, missing file: 2.
    assert_eq!(
        k8s_mini(&["get", "widgets", "-f", f]).status.code(),
        Some(2)
    );
    assert_eq!(
        k8s_mini(&["get", "pods", "-f", f, "--bogus"]).status.code(),
        Some(2)
    );
    let o = k8s_mini(&["get", "pods", "-f", "/nonexistent/x.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/x.yaml"), "{}", stderr(&o));
    // A scenario whose expectation fails: 1; the same run passing: 0.
    assert_eq!(k8s_mini(&["scenario", f]).status.code(), Some(0));
    assert_eq!(
        k8s_mini(&["scenario", f, "--ticks", "10"]).status.code(),
        Some(1)
    );
}

#[test]
fn version_and_help() {
    let o = k8s_mini(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        format!("k8s-mini {}\n", env!("CARGO_PKG_VERSION"))
    );
    let o = k8s_mini(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = stdout(&o);
    assert!(help.contains("Exit codes:\n  0  done"), "{help}");
    assert!(help.contains("\n  2  bad input"), "{help}");
    let o = k8s_mini(&["get", "--help"]);
    assert!(
        stdout(&o).contains("-f, --filename <FILE|DIR|->"),
        "{}",
        stdout(&o)
    );
}

/// Warnings are diagnostics: standard error, never standard output (text mode included).
#[test]
fn warnings_go_to_standard_error() {
    let o = k8s_mini_stdin(
        &["scenario", "-f", "-"],
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stdout(&o).contains("warning"), "{}", stdout(&o));
    assert!(stderr(&o).contains("warning: "), "{}", stderr(&o));
}

/// `serve`'s bad input exits 2 before anything listens: a speed that is not a positive number, a
/// file that does not exist (named in the message).
#[test]
fn serve_refuses_bad_input_with_exit_2() {
    let f = fixture();
    let f = f.to_str().unwrap();
    let o = k8s_mini(&["serve", "-f", f, "--speed", "0", "--port", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), "error: --speed must be a positive number\n");
    let o = k8s_mini(&["serve", "-f", "/nonexistent/x.yaml", "--port", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/x.yaml"), "{}", stderr(&o));
}

#[test]
fn describe_node_by_prefix_and_other_types() {
    let f = fixture();
    let f = f.to_str().unwrap();
    // `node-` matches no node exactly: as kubectl, it is a prefix (node-a).
    let o = k8s_mini(&["describe", "no", "node-", "-f", f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("Name:               node-a\nRoles:              <none>\n"),
        "{text}"
    );
    // node-a allocates 4 CPUs and 8Gi: web 500m (12.5 -> 12 %) and 256Mi (3.1 -> 3 %), crash 250m
    // (6.25 -> 6 %); together 750m (18.75 -> 18 %).
    let pods = "\
Non-terminated Pods:          (2 in total)
  Namespace                   Name     CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age
  ---------                   ----     ------------  ----------  ---------------  -------------  ---
  default                     crash    250m (6%)     0 (0%)      0 (0%)           0 (0%)         30s
  default                     web      500m (12%)    0 (0%)      256Mi (3%)       0 (0%)         30s
Allocated resources:
  (Total limits may be over 100 percent, i.e., overcommitted.)
  Resource           Requests    Limits
  --------           --------    ------
  cpu                750m (18%)  0 (0%)
  memory             256Mi (3%)  0 (0%)
  ephemeral-storage  0 (0%)      0 (0%)
Events:
";
    assert!(text.contains(pods), "{text}");
    // A type with nothing of it: kubectl's message, exit 0; a name that matches nothing: 1.
    let o = k8s_mini(&["describe", "deploy", "-f", f]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stderr(&o), "No resources found in default namespace.\n");
    let o = k8s_mini(&["describe", "deploy/nope", "-f", f]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "Error from server (NotFound): deployments \"nope\" not found\n"
    );
    // A type describe does not know: 2.
    let o = k8s_mini(&["describe", "events", "-f", f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("describe knows pods (po), nodes (no)"),
        "{}",
        stderr(&o)
    );
}
