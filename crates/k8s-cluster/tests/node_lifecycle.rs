//! End to end: taint-based eviction (NoExecute with and without tolerationSeconds) and PodGC of pods
//! whose node was deleted, with the ReplicaSet replacing what they remove.

use std::io::Write;

use k8s_cluster::{run_file, OutputFormat, RunOptions};

fn run(text: &str, name: &str) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!("k8s-mini-node-lifecycle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.yaml"));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = run_file(
        &path,
        &RunOptions {
            output: OutputFormat::Json,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out.failures, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

const NODES: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\n";

fn pods_on(list: &serde_json::Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Pod")
        .map(|p| {
            (
                p["metadata"]["name"].as_str().unwrap().to_string(),
                p["spec"]["nodeName"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn no_execute_taint_evicts_after_toleration_seconds() {
    // Both pods run on n2; at tick 2 n2 gets a NoExecute taint.
    let text = format!(
        "{NODES}apiVersion: v1\nkind: Pod\nmetadata: {{name: strict}}\nspec: {{nodeName: n2, containers: [{{name: c, image: i}}]}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: patient}}\nspec:\n  nodeName: n2\n  containers: [{{name: c, image: i}}]\n  tolerations: [{{key: maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 5}}]\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec:\n  ticks: 12\n  steps:\n  - {{at: 2, taint: {{node: n2, key: maintenance, effect: NoExecute}}}}\n  expect:\n  - {{at: 1, podsPerNode: {{counts: {{n1: 0, n2: 2}}}}}}\n  - {{at: 2, pods: {{count: 1}}}}\n  - {{at: 6, pods: {{count: 1}}}}\n  - {{at: 7, pods: {{count: 0}}}}\n"
    );
    let list = run(&text, "taint");
    // Evicted pods terminate gracefully: at the end (t=11) both still take their 30 s grace period,
    // deleted at t=2 (strict) and t=7 (patient).
    let mut deleting: Vec<(String, String)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Pod")
        .map(|p| {
            (
                p["metadata"]["name"].as_str().unwrap().to_string(),
                p["metadata"]["deletionTimestamp"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    deleting.sort();
    assert_eq!(
        deleting,
        vec![
            ("patient".to_string(), "1970-01-01T00:00:37Z".to_string()),
            ("strict".to_string(), "1970-01-01T00:00:32Z".to_string())
        ]
    );
    // Listed in key order (event names start with the pod name); the timing is checked above.
    let evictions: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Event" && o["reason"] == "TaintManagerEviction")
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        evictions,
        [
            "Marking for deletion Pod default/patient",
            "Marking for deletion Pod default/strict"
        ]
    );
}

#[test]
fn pods_of_a_deleted_node_are_collected_after_quarantine_and_replaced() {
    let text = format!(
        "{NODES}apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: web}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: 3}}}}}}]}}\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nspec:\n  ticks: 50\n  steps:\n  - {{at: 3, delete: {{kind: Node, name: n2}}}}\n  expect:\n  - {{at: 42, pods: {{selector: app=web, count: 2, scheduled: 2}}}}\n  - {{at: 44, pods: {{selector: app=web, count: 2, scheduled: 1}}}}\n"
    );
    let list = run(&text, "podgc");
    let pods = pods_on(&list);
    // One pod still on n1; the replacement of the collected one is pending (n1 has 1 CPU left).
    let on_n1 = pods.iter().filter(|(_, n)| n == "n1").count();
    let pending = pods.iter().filter(|(_, n)| n.is_empty()).count();
    assert_eq!((pods.len(), on_n1, pending), (2, 1, 1), "{pods:?}");
}

#[test]
fn cordon_and_uncordon_are_recorded_by_the_kubelet() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cordon-events.yaml");
    let out = run_file(&path, &RunOptions::default()).unwrap();
    assert_eq!(out.failures, 0, "{}", out.stdout);
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("Schedulable "))
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("2 ")
            && lines[0].ends_with("Node n1 status is now: NodeNotSchedulable")
    );
    assert!(
        lines[1].starts_with("4 ") && lines[1].ends_with("Node n1 status is now: NodeSchedulable")
    );
}

/// The kubelet skips recomputing its node status while nothing it reads changed (the stored Node
/// version, its resources, its pulled images), but a write of its Node by someone else is a
/// change: the next sync restores the condition the kubelet owns, before any periodic report is
/// due (upstream's kubelet posts a changed status at once, `nodeStatusUpdateFrequency`).
#[test]
fn a_node_condition_changed_by_another_writer_is_restored_at_the_next_sync() {
    use k8s_cluster::{Cluster, ClusterConfig};
    use k8s_types::apiserver::ApiExt;
    use k8s_types::core::Node;

    let node: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    }))
    .unwrap();
    let mut c = Cluster::new(ClusterConfig::default()).unwrap();
    c.add_node(node).unwrap();
    let memory_pressure = |c: &mut Cluster| {
        let n = c.api().get_typed::<Node>("", "n1").unwrap();
        let cond = n
            .status
            .conditions
            .iter()
            .find(|x| x.type_ == "MemoryPressure");
        let cond = cond.expect("MemoryPressure condition");
        (cond.status.clone(), n.metadata.resource_version.clone())
    };
    while c.now() <= 5 {
        c.tick();
    }
    let (status, written) = memory_pressure(&mut c);
    assert_eq!(status, "False");
    // Quiet ticks: no node status write (nothing changed, no report due).
    while c.now() <= 8 {
        c.tick();
    }
    assert_eq!(memory_pressure(&mut c).1, written);
    let mut n = c.api().get_typed::<Node>("", "n1").unwrap();
    for cond in &mut n.status.conditions {
        if cond.type_ == "MemoryPressure" {
            cond.status = "True".into();
        }
    }
    c.api().update_status_typed(n).unwrap();
    assert_eq!(memory_pressure(&mut c).0, "True");
    let at = c.now();
    while c.now() <= at + 1 {
        c.tick();
    }
    assert_eq!(memory_pressure(&mut c).0, "False");
}
