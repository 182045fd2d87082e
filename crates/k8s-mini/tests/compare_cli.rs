//! `k8s-mini compare` as a user runs it, on `examples/compare/` (the placements and numbers worked
//! out by hand in `crates/k8s-cluster/tests/compare.rs`): the numbers of the table recomputed from
//! the JSON, the SVG and HTML files, the exit codes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn example(name: &str) -> String {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/compare")
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

fn base_args() -> Vec<String> {
    [
        "compare",
        "-f",
        &example("cluster.yaml"),
        "-f",
        &example("workload.yaml"),
        "--config",
        &example("least-allocated.yaml"),
        "--config",
        &example("most-allocated.yaml"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn run(extra: &[&str]) -> Output {
    let mut a = base_args();
    a.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    k8s_mini(&a)
}

/// The nearest-rank percentile, written again from its definition: rank ceil(p × n / 100).
fn nearest_rank(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank - 1])
}

fn std_dev(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt()
}

fn i(v: &Value) -> i64 {
    v.as_i64().expect("integer")
}

/// Every number of a run recomputed from its rows in the JSON: bound and pending from the pods,
/// the percentiles from the pods' created/bound ticks, the spreads from the nodes, GPU allocated
/// from the nodes and the last sample; the pods placed differently from the pods of both runs.
#[test]
fn the_json_numbers_are_recomputed_from_its_rows() {
    let o = run(&["-o", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    let mut placement: Vec<BTreeMap<String, String>> = Vec::new();
    for r in runs {
        let pods = r["pods"].as_array().expect("pods");
        let bound = pods.iter().filter(|p| !p["node"].is_null()).count();
        assert_eq!(r["podsBound"], bound);
        assert_eq!(r["podsPending"], pods.len() - bound);
        let mut t: Vec<u64> = pods
            .iter()
            .filter(|p| !p["boundAt"].is_null())
            .map(|p| (i(&p["boundAt"]) - i(&p["createdAt"])) as u64)
            .collect();
        t.sort_unstable();
        assert_eq!(r["timeToBind"]["pods"], t.len());
        assert_eq!(
            r["timeToBind"]["median"],
            nearest_rank(&t, 50.0).expect("some")
        );
        assert_eq!(
            r["timeToBind"]["p99"],
            nearest_rank(&t, 99.0).expect("some")
        );
        let nodes = r["nodes"].as_array().expect("nodes");
        let cpu: Vec<f64> = nodes
            .iter()
            .map(|n| i(&n["cpuMilliRequested"]) as f64 / i(&n["cpuMilliAllocatable"]) as f64)
            .collect();
        let gpu: Vec<f64> = nodes
            .iter()
            .map(|n| i(&n["gpuMilliAllocated"]) as f64 / i(&n["gpuMilliTotal"]) as f64)
            .collect();
        let close = |a: f64, b: &Value| (a - b.as_f64().expect("float")).abs() < 1e-9;
        assert!(close(std_dev(&cpu), &r["cpuSpread"]), "{}", r["cpuSpread"]);
        assert!(close(std_dev(&gpu), &r["gpuSpread"]), "{}", r["gpuSpread"]);
        let gpu_alloc: i64 = nodes.iter().map(|n| i(&n["gpuMilliAllocated"])).sum();
        assert_eq!(i(&r["gpuMilliAllocated"]), gpu_alloc);
        let last = r["samples"].as_array().expect("samples").last().cloned();
        assert_eq!(i(&last.expect("a sample")["gpuMilliAllocated"]), gpu_alloc);
        placement.push(
            pods.iter()
                .map(|p| {
                    let name = format!(
                        "{}/{}",
                        p["namespace"].as_str().unwrap_or(""),
                        p["name"].as_str().unwrap_or("")
                    );
                    let key = p["key"].as_str().unwrap_or("").to_string();
                    // The example's pods have no generateName: the key is the name.
                    assert_eq!(key, name);
                    (key, p["node"].as_str().unwrap_or("<pending>").to_string())
                })
                .collect(),
        );
    }
    let differ: Vec<Value> = placement[0]
        .iter()
        .filter(|(k, n)| placement[1].get(*k) != Some(n))
        .map(|(k, n)| serde_json::json!({"pod": k, "nodes": [n, placement[1][k]]}))
        .collect();
    assert_eq!(v["placedDifferently"], Value::Array(differ));
    assert_eq!(v["placedDifferently"].as_array().map(Vec::len), Some(3));
}

/// The text table shows the same measures (the hand-worked values of the example).
#[test]
fn the_text_table_has_a_column_per_configuration() {
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0));
    let t = stdout(&o);
    assert!(
        t.contains("MEASURE                          least-allocated  most-allocated\n"),
        "{t}"
    );
    assert!(
        t.contains("pods pending                     1                0\n"),
        "{t}"
    );
    assert!(
        t.contains("GPUs fragmented (FGD)            1.6              0\n"),
        "{t}"
    );
    assert!(
        t.contains("CPU allocation spread (std-dev)  0.0589           0.2041\n"),
        "{t}"
    );
    assert!(
        t.contains("default/train    <pending>        gpu-b\n"),
        "{t}"
    );
    // YAML is the same data.
    let y = stdout(&run(&["-o", "yaml"]));
    assert!(y.contains("podsPending: 1\n"), "{y}");
}

#[test]
fn svg_and_html_files_are_written_self_contained() {
    let dir = std::env::temp_dir().join(format!("k8s-mini-compare-cli-{}", std::process::id()));
    let svg_dir = dir.join("svg");
    let html = dir.join("compare.html");
    let o = run(&[
        "--svg-out",
        &svg_dir.display().to_string(),
        "--html-out",
        &html.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    for name in ["least-allocated.svg", "most-allocated.svg"] {
        let s = std::fs::read_to_string(svg_dir.join(name)).expect("svg written");
        assert!(s.starts_with("<svg"), "{name}");
        assert!(
            s.contains("GPU allocated") && s.contains("CPU requested"),
            "{name}"
        );
    }
    let page = std::fs::read_to_string(&html).expect("html written");
    assert_eq!(page.matches("<svg").count(), 2);
    assert!(page.contains("<td>GPUs fragmented (FGD)</td><td>1.6</td><td>0</td>"));
    assert!(!page.contains("<script") && !page.contains("https://"));
    // Byte-identical on a second run: every run is deterministic.
    let again = run(&["--html-out", &html.display().to_string()]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&html).expect("html"), page);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exit_codes_for_bad_input_and_unwritable_output() {
    // One configuration: bad input.
    let o = k8s_mini(&[
        "compare",
        "-f",
        &example("cluster.yaml"),
        "--config",
        &example("least-allocated.yaml"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    // A configuration file that does not exist.
    let o = k8s_mini(&[
        "compare",
        "-f",
        &example("cluster.yaml"),
        "--config",
        "scenario",
        "--config",
        "/nonexistent/most.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/most.yaml"));
    // An unknown policy.
    let o = k8s_mini(&[
        "compare",
        "-f",
        &example("cluster.yaml"),
        "--config",
        "scenario",
        "--policy",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown policy \"nope\""));
    // The comparison printed, the HTML file not writable: 1.
    let o = run(&["--html-out", "/nonexistent/dir/page.html"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("MEASURE"));
}
