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

/// The bundled scenarios give the same output with and without fast-forward.
#[test]
fn bundled_scenarios_give_the_same_output_as_every_tick() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .filter(|p| !p.ends_with("alibaba-openb.yaml"))
        .collect();
    files.sort();
    for f in files {
        let (skipping, every) = outputs(&f, OutputFormat::Text);
        assert_eq!(skipping, every, "{}", f.display());
    }
}

/// `ticks: 2147483647` (the tick limit) on an idle cluster ends at once: only the ticks with
/// something to do run, and the node status reports in between are accounted for, not run.
#[test]
fn the_tick_limit_on_an_idle_cluster_ends_at_once() {
    let dir = std::env::temp_dir().join(format!("k8s-mini-ff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("idle.yaml");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(
            b"apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {name: idle}\nspec: {ticks: 2147483647}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n",
        )
        .unwrap();
    let start = Instant::now();
    let out = run_file(&path, &RunOptions::default()).unwrap();
    let took = start.elapsed();
    assert!(
        out.stdout.contains("# ran 2147483647 ticks"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Running"), "{}", out.stdout);
    // Debug build, shared cores: generous, but hours when every tick runs.
    assert!(took.as_secs() < 10, "took {took:?}");
}
