//! Every bundled scenario runs with all expectations holding, twice with byte-identical output, and
//! the blueprint's numbers are read back from the final state (not only from the scenario files).

use std::path::{Path, PathBuf};

use k8s_cluster::{run_file, OutputFormat, RunOptions};

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(format!("{name}.yaml"))
}

fn run(name: &str, output: OutputFormat) -> k8s_cluster::RunOutcome {
    let opts = RunOptions {
        output,
        ..Default::default()
    };
    run_file(&scenario(name), &opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn final_list(name: &str) -> serde_json::Value {
    let out = run(name, OutputFormat::Json);
    serde_json::from_str(&out.stdout).expect("json output")
}

fn pods(list: &serde_json::Value) -> Vec<&serde_json::Value> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|o| o["kind"] == "Pod")
        .collect()
}

#[test]
fn every_bundled_scenario_passes_and_is_deterministic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("scenarios dir")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "yaml"))
        .map(|e| e.path().file_stem().unwrap().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    for name in names {
        let a = run(&name, OutputFormat::Text);
        assert_eq!(a.failures, 0, "{name} failed:\n{}", a.stdout);
        assert!(a.checks > 0, "{name} checks nothing");
        let b = run(&name, OutputFormat::Text);
        assert_eq!(a.stdout, b.stdout, "{name} is not deterministic");
    }
}

#[test]
fn gpu_device_plugin_matches_the_blueprint() {
    let list = final_list("gpu-device-plugin");
    let mut placed: Vec<(String, String, String)> = pods(&list)
        .iter()
        .map(|p| {
            (
                p["metadata"]["name"].as_str().unwrap().to_string(),
                p["spec"]["nodeName"].as_str().unwrap_or("").to_string(),
                p["metadata"]["annotations"]["k8s-mini.io/allocated-devices"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    placed.sort();
    let want = [
        ("vllm-0", "gpu-node-2", "nvidia.com/gpu=0"),
        ("vllm-1", "gpu-node-2", "nvidia.com/gpu=1"),
        ("vllm-2", "gpu-node-1", "nvidia.com/gpu=0"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(placed, want);
    // The nodes' GPU capacity came from the device plugin: 2 each.
    for node in list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Node")
    {
        assert_eq!(node["status"]["capacity"]["nvidia.com/gpu"], "2");
    }
}

#[test]
fn binpack_vs_spread_matches_the_blueprint() {
    let list = final_list("binpack-vs-spread");
    let mut spread: Vec<String> = pods(&list)
        .iter()
        .filter(|p| p["metadata"]["labels"]["demo"] == "spread")
        .map(|p| p["spec"]["nodeName"].as_str().unwrap().to_string())
        .collect();
    spread.sort();
    assert_eq!(spread, vec!["node-a", "node-b", "node-c"]);
    // The binpack pods were all on node-c: their Scheduled events say so.
    let scheduled: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Event" && o["reason"] == "Scheduled")
        .filter(|o| {
            o["involvedObject"]["name"]
                .as_str()
                .unwrap()
                .starts_with("binpack-")
        })
        .map(|o| o["message"].as_str().unwrap())
        .collect();
    assert_eq!(scheduled.len(), 3);
    assert!(
        scheduled.iter().all(|m| m.ends_with(" to node-c")),
        "{scheduled:?}"
    );
}

#[test]
fn gang_scheduling_is_all_or_nothing() {
    let list = final_list("gang-scheduling");
    for p in pods(&list) {
        let name = p["metadata"]["name"].as_str().unwrap();
        let bound = p["spec"]["nodeName"].as_str().is_some();
        assert_eq!(bound, name.starts_with("gang-ok"), "{name}");
    }
}

#[test]
fn rolling_update_ends_on_v2_with_three_pods() {
    let list = final_list("rolling-update");
    let web: Vec<&serde_json::Value> = pods(&list)
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["app"] == "web")
        .collect();
    assert_eq!(web.len(), 3);
    for p in &web {
        assert_eq!(p["spec"]["containers"][0]["image"], "app:v2");
        assert_eq!(p["status"]["phase"], "Running");
    }
    let rs: Vec<(i64, &str)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "ReplicaSet")
        .map(|o| {
            (
                o["spec"]["replicas"].as_i64().unwrap(),
                o["spec"]["template"]["spec"]["containers"][0]["image"]
                    .as_str()
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!(rs.len(), 2, "{rs:?}");
    assert!(
        rs.contains(&(0, "app:v1")) && rs.contains(&(3, "app:v2")),
        "{rs:?}"
    );
}
