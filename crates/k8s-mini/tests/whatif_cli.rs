//! `k8s-mini whatif` and `k8s-mini capacity` as a user runs them, on the what-if fixtures of
//! k8s-cluster (`crates/k8s-cluster/tests/fixtures/whatif/`, the numbers worked out in
//! `crates/k8s-cluster/tests/whatif.rs` and `capacity.rs`): the exit codes (0 fits, 1 does not,
//! 2 bad input) and the same answer as text and as data.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../k8s-cluster/tests/fixtures/whatif")
        .join(name);
    p.display().to_string()
}

fn k8s_mini(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_k8s-mini"))
        .args(args)
        .output()
        .expect("k8s-mini runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_fitting_gang_exits_0_and_names_its_victim() {
    let (c, g) = (fixture("cluster.yaml"), fixture("gang-2.yaml"));
    let o = k8s_mini(&["whatif", "-f", &c, "--add", &g]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("fits: yes (2 of 2 workload pods bound, 0 pending)"),
        "{text}"
    );
    assert!(
        text.contains("default/train-1  1000      t=47   gpu-2"),
        "{text}"
    );
    assert!(text.contains("## preempted: 1\n"), "{text}");
    // The same answer as data.
    let o = k8s_mini(&["whatif", "-f", &c, "--add", &g, "-o", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["fits"], true);
    assert_eq!(v["pods"][1]["boundAt"], 47);
    assert_eq!(v["preempted"][0]["by"], "default/train-1");
    let o = k8s_mini(&["whatif", "-f", &c, "--add", &g, "-o", "yaml"]);
    assert!(stdout(&o).contains("fits: true\n"), "{}", stdout(&o));
}

#[test]
fn a_gang_that_does_not_fit_exits_1_with_the_nodes_it_needs() {
    let o = k8s_mini(&[
        "whatif",
        "-f",
        &fixture("cluster.yaml"),
        "--add",
        &fixture("gang-6.yaml"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("fits: no (0 of 6 workload pods bound, 6 pending)"),
        "{text}"
    );
    assert!(text.contains("node shortfall: 3\n"), "{text}");
    assert!(text.contains(
        "3 more nodes like gpu-0 (cpu=32, memory=256Gi, nvidia.com/gpu=8, pods=110) make it fit\n"
    ), "{text}");
    assert!(
        text.contains(": +1 no, +2 no, +4 fits, +3 fits\n"),
        "{text}"
    );
}

#[test]
fn bad_input_exits_2() {
    let c = fixture("cluster.yaml");
    let o = k8s_mini(&[
        "whatif",
        "-f",
        &c,
        "--add",
        &fixture("gang-2.yaml"),
        "--like",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--like"), "{}", stderr(&o));
    let o = k8s_mini(&["whatif", "-f", &c, "--scale", "pod/web=3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot scale \"pod\""),
        "{}",
        stderr(&o)
    );
    let o = k8s_mini(&["whatif", "-f", &c]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nothing to add"), "{}", stderr(&o));
    let o = k8s_mini(&["whatif", "--help"]);
    assert!(stdout(&o).contains("1  it does not fit"), "{}", stdout(&o));
}

#[test]
fn capacity_prints_the_pools_as_text_and_json() {
    let f = fixture("capacity.yaml");
    let o = k8s_mini(&["capacity", "-f", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("\npending pods: 1\nPODS  REASON\n1     Insufficient nvidia.com/gpu\n"),
        "{text}"
    );
    let o = k8s_mini(&["capacity", "-f", &f, "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["pools"][1]["gpuMilliFragmented"], 2000.0);
    assert_eq!(v["total"]["gpuMilliAllocated"], 1000);
}

/// The README's example (`examples/whatif/`): the dump of the mixed GPU cluster plus a 4 x 6-GPU
/// gang. By hand: each H100 node has 8 GPUs, one taken by an inference pod (priority 100000) and,
/// on two nodes, 4 by a `trainer` StatefulSet pod (priority 1000); a worker needs 6, so each worker
/// takes a node of its own and the two trainer pods are preempted (priority 1000 < 10000). The
/// members bind together after the victims' 30 s grace period: settled at t=12, bound at t=43.
#[test]
fn the_readme_example_preempts_the_two_trainer_pods() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/whatif");
    let (c, g) = (
        root.join("cluster-dump.yaml").display().to_string(),
        root.join("training-gang.yaml").display().to_string(),
    );
    let o = k8s_mini(&["whatif", "-f", &c, "--add", &g]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("fits: yes (4 of 4 workload pods bound, 0 pending)"),
        "{text}"
    );
    assert!(text.contains("## preempted: 2"), "{text}");
    for victim in ["ml/trainer-0", "ml/trainer-1"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(victim) && l.contains("StatefulSet/trainer  1000")),
            "{victim}: {text}"
        );
    }
    assert_eq!(
        text.matches("  t=43  gpu-node-h100x8-").count(),
        4,
        "{text}"
    );
}
