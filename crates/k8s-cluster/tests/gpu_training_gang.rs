//! The bundled `gpu-training-gang` scenario (issue 13 item 5): a 64-GPU native gang on nine busy
//! H100 nodes, and the `--explain <podgroup>` view of a native (`scheduling.k8s.io/v1alpha2`)
//! PodGroup. Values worked out by hand in the scenario's header comment: 12 one-GPU inference pods
//! spread over 9 nodes (1 on six nodes, 2 on three), 8 workers of 8 GPUs each preempt the cheapest
//! victims (6 nodes x 1 + 2 nodes x 2 = 10), bind together after the 30 s grace period.

use std::path::{Path, PathBuf};

use k8s_cluster::{run_file, OutputFormat, RunOptions};

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../scenarios/{name}.yaml"))
}

/// The PodGroup the Job controller made (its name carries hashes; found, not guessed).
fn pod_group_name(list: &serde_json::Value) -> String {
    let groups: Vec<&serde_json::Value> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|o| o["kind"] == "PodGroup" && o["apiVersion"] == "scheduling.k8s.io/v1alpha2")
        .collect();
    assert_eq!(groups.len(), 1);
    groups[0]["metadata"]["name"]
        .as_str()
        .expect("name")
        .to_string()
}

fn explain_lines(stdout: &str, key: &str) -> Vec<String> {
    let start = stdout
        .find(&format!("## explain podgroup {key}\n"))
        .unwrap_or_else(|| panic!("no podgroup section in:\n{stdout}"));
    stdout[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_gang_preempts_ten_inference_pods_and_binds_one_worker_per_node() {
    let out = run_file(&scenario("gpu-training-gang"), &RunOptions::default()).expect("run");
    assert_eq!(out.failures, 0, "{}", out.stdout);
    let json = run_file(
        &scenario("gpu-training-gang"),
        &RunOptions {
            output: OutputFormat::Json,
            ..Default::default()
        },
    )
    .expect("run");
    let list: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    let items = list["items"].as_array().expect("items");
    let preempted = items
        .iter()
        .filter(|o| o["kind"] == "Event" && o["reason"] == "Preempted")
        .count();
    assert_eq!(preempted, 10);
    let mut worker_nodes: Vec<&str> = items
        .iter()
        .filter(|o| {
            o["kind"] == "Pod"
                && o["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "llama-pretrain"
        })
        .map(|p| p["spec"]["nodeName"].as_str().unwrap_or(""))
        .collect();
    worker_nodes.sort_unstable();
    worker_nodes.dedup();
    assert_eq!(worker_nodes.len(), 8, "{worker_nodes:?}");
    assert!(!worker_nodes.contains(&"gpu-node-h100x8-6"));
}

/// At t=45 the 8 workers are nominated after preemption and wait for their victims to go: the
/// native gang view shows the `PodGroupScheduled` condition kube-scheduler wrote, the 8 pending
/// members and, per member, the node it was nominated to. The k-th worker's message counts k
/// nodes with insufficient memory: the workers nominated before it (1Ti each) on their nodes.
#[test]
fn explain_a_native_pod_group_while_the_victims_terminate() {
    let json = run_file(
        &scenario("gpu-training-gang"),
        &RunOptions {
            output: OutputFormat::Json,
            ..Default::default()
        },
    )
    .expect("run");
    let name = pod_group_name(&serde_json::from_str(&json.stdout).expect("json"));
    let key = format!("default/{name}");
    let out = run_file(
        &scenario("gpu-training-gang"),
        &RunOptions {
            explain: Some(key.clone()),
            ticks: Some(45),
            ..Default::default()
        },
    )
    .expect("run");
    let lines = explain_lines(&out.stdout, &key);
    let want = [
        format!("podGroup {key} (scheduling.k8s.io/v1alpha2): gang minCount 8, PodGroupScheduled False (Unschedulable)"),
        "template: workload llama-pretrain-6cdbf495dc, podGroupTemplate llama-pretrain-pgt-0".to_string(),
        "condition message: 0/9 nodes are available: 9 Insufficient nvidia.com/gpu.".to_string(),
        "members: 8 exist (0 terminal not counted), 0 bound, 0 waiting at Permit, 8 pending".to_string(),
        // v1.36's PodGroup cycle at t=30: every worker placeable only with victims gone, the 10
        // inference pods chosen for them evicted once the whole group fits (delayed preemption).
        "last PodGroup cycle (t=30): waiting for preemption (victims evicted); 8 of minCount 8 placeable (0 bound before, 0 placed, 8 only with preemption) of 8 pending evaluated".to_string(),
        "victims chosen: 10 (evicted)".to_string(),
        "message: pod group is waiting for preemption to complete".to_string(),
        "last attempt of each member:".to_string(),
    ];
    assert_eq!(&lines[..want.len()], &want[..], "{lines:#?}");
    let members = &lines[want.len()..];
    assert_eq!(members.len(), 8, "{members:#?}");
    for (k, l) in members.iter().enumerate() {
        // One snapshot for the whole cycle: no worker sees another's memory taken.
        let memory = "";
        assert!(
            l.starts_with(&format!("llama-pretrain-{k}-"))
                && l.contains(" node - t=30 FailedScheduling (Unschedulable), nominated gpu-node-h100x8-")
                && l.ends_with(&format!(
                    "after preemption: 0/9 nodes are available: {memory}9 Insufficient nvidia.com/gpu."
                )),
            "{l}"
        );
    }
}
