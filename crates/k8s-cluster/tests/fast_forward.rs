//! Fast-forward: the run skips the ticks in which nothing can happen, and its output is byte for
//! byte the output of simulating every tick (`RunOptions::every_tick`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use k8s_cluster::{run_file, OutputFormat, RunOptions};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn outputs(path: &Path, output: OutputFormat) -> (String, String) {
    let run = |every_tick| {
        let o = run_file(
            path,
            &RunOptions {
                output,
                every_tick,
                ..Default::default()
            },
        )
        .unwrap();
        format!("{}\n--- stderr\n{}", o.stdout, o.stderr)
    };
    (run(false), run(true))
}

/// Timers of every kind across long idle gaps: an hourly CronJob whose Jobs run 100 s and are
/// deleted 600 s after finishing (TTL-after-finished), a crash-looping pod (back-off up to 300 s), a
/// Deployment with readiness probes and a PDB, a pod that never fits (scheduler backoff and
/// 5-minute flush), a scale and a delete with a 120 s grace period as steps, an expectation range,
/// two nodes with their periodic status reports (json/yaml carry their heartbeat times and every
/// resourceVersion).
#[test]
fn idle_gaps_give_the_same_output_as_every_tick() {
    let path = fixture("fast-forward-idle-gaps.yaml");
    for output in [OutputFormat::Text, OutputFormat::Json] {
        let (skipping, every) = outputs(&path, output);
        assert_eq!(skipping, every, "{output:?}");
    }
    let (text, _) = outputs(&path, OutputFormat::Text);
    assert!(text.contains("# ran 7300 ticks"), "{text}");
    assert!(text.contains("result: 2/2 expectations held"), "{text}");
}

/// Node Lease heartbeats and the node lifecycle controller across long idle gaps: a kubelet
/// stopped at t=7003 after its renewal at t=7000 goes Unknown at t=7045 (the first monitor pass
/// past 7000 + 40), as when every tick runs; it comes back at t=12007 (taints gone at the pass at
/// t=12010); another node cut off at t=15001, after a status report at t=15000 that the pass at
/// t=15005 observes, goes Unknown at t=15050. The json output carries
/// every Node's heartbeat times and every object's resourceVersion.
#[test]
fn leases_across_idle_gaps_give_the_same_output_as_every_tick() {
    let path = fixture("fast-forward-leases.yaml");
    for output in [OutputFormat::Text, OutputFormat::Json] {
        let (skipping, every) = outputs(&path, output);
        assert_eq!(skipping, every, "{output:?}");
    }
    let (text, _) = outputs(&path, OutputFormat::Text);
    assert!(text.contains("# ran 20000 ticks"), "{text}");
    assert!(text.contains("result: 8/8 expectations held"), "{text}");
}

/// Every bundled scenario gives the same output, text and json, with and without fast-forward.
#[test]
fn bundled_scenarios_give_the_same_output_as_every_tick() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    for f in files {
        for output in [OutputFormat::Text, OutputFormat::Json] {
            let (skipping, every) = outputs(&f, output);
            assert_eq!(skipping, every, "{} {output:?}", f.display());
        }
    }
}

const IDLE: &str = "apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {name: idle}\nspec: {ticks: TICKS}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n";

/// Runs the idle cluster (two nodes, one pod) for `ticks` ticks; the json output and the time taken.
fn run_idle(ticks: u64, every_tick: bool) -> (serde_json::Value, std::time::Duration) {
    let dir = std::env::temp_dir().join(format!("k8s-mini-ff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("idle-{ticks}-{every_tick}.yaml"));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(IDLE.replace("TICKS", &ticks.to_string()).as_bytes())
        .unwrap();
    let opts = RunOptions {
        output: OutputFormat::Json,
        every_tick,
        ..Default::default()
    };
    let start = Instant::now();
    let out = run_file(&path, &opts).unwrap();
    let took = start.elapsed();
    (serde_json::from_str(&out.stdout).unwrap(), took)
}

/// A Node's `metadata.resourceVersion` and its Ready condition's `lastHeartbeatTime`.
fn node_heartbeat(list: &serde_json::Value, name: &str) -> (i64, String) {
    let node = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "Node" && o["metadata"]["name"] == name)
        .unwrap();
    let rv = node["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let ready = node["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    (rv, ready["lastHeartbeatTime"].as_str().unwrap().to_string())
}

/// `ticks: 2147483647` (the tick limit) on an idle cluster of two nodes ends at once: the Lease
/// renewals (every 10 s per node) and node status reports (every 300 s) in between are accounted
/// for, not run. Hand-computed: the last report is at t=2147483400 (7158278 * 300,
/// 2038-01-19T03:10:00Z); from the reports at t=900 (the last of a 1000-tick run, which matches
/// running every tick) to those at t=2147483400 the store wrote 2 * 214748250 Lease renewals and
/// 2 * 7158275 status reports, so node n2's resourceVersion is 443813050 higher.
#[test]
fn the_tick_limit_on_an_idle_cluster_ends_at_once() {
    let (short, _) = run_idle(1000, false);
    let (short_every, _) = run_idle(1000, true);
    assert_eq!(short, short_every);
    let (long, took) = run_idle(2_147_483_647, false);
    let (rv_short, hb_short) = node_heartbeat(&short, "n2");
    let (rv_long, hb_long) = node_heartbeat(&long, "n2");
    assert_eq!(hb_short, "1970-01-01T00:15:00Z");
    assert_eq!(hb_long, "2038-01-19T03:10:00Z");
    assert_eq!(rv_long - rv_short, 2 * 214_748_250 + 2 * 7_158_275);
    assert_eq!(node_heartbeat(&long, "n1").0, rv_long - 1);
    // Debug build, shared cores: about 0.15 s measured; hours when every tick runs.
    assert!(took.as_secs() < 3, "took {took:?}");
}
