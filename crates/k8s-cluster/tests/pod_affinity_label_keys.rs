//! A pod affinity term's `matchLabelKeys` reaches the scheduler as upstream's apiserver leaves it
//! (merged into the label selector at create), end to end through `run_file`: the pod joins the
//! zone of the pod with the same `ver` label (fixture `match-label-keys.yaml`).

use std::path::Path;

use k8s_cluster::{run_file, OutputFormat, RunOptions};

#[test]
fn match_label_keys_restrict_pod_affinity_to_the_same_version() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/match-label-keys.yaml");
    let opts = RunOptions {
        output: OutputFormat::Json,
        ..Default::default()
    };
    let out = run_file(&path, &opts).expect("the scenario runs");
    assert_eq!(out.failures, 0, "{}", out.stderr);
    let list: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let p = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|o| o["kind"] == "Pod" && o["metadata"]["name"] == "p")
        .expect("pod p");
    assert_eq!(p["spec"]["nodeName"], "node-1");
    let expressions = &p["spec"]["affinity"]["podAffinity"]
        ["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]["matchExpressions"];
    assert_eq!(
        expressions,
        &serde_json::json!([{"key": "ver", "operator": "In", "values": ["v2"]}])
    );
}
