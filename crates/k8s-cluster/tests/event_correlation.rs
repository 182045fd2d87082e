//! End to end: the components' event correlators (client-go `tools/record/events_cache.go`) as the
//! event table and the final Events show them.

use std::io::Write;

use k8s_cluster::{run_file, OutputFormat, RunOptions};

const SCENARIO: &str = "\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: burst}
spec:
  replicas: 30
  selector: {matchLabels: {app: burst}}
  template:
    metadata: {labels: {app: burst}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
spec:
  ticks: 302
  steps:
  - {at: 300, scale: {kind: ReplicaSet, name: burst, replicas: 31}}
";

fn run(output: OutputFormat) -> String {
    let dir =
        std::env::temp_dir().join(format!("k8s-mini-event-correlation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("burst-{output:?}.yaml"));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(SCENARIO.as_bytes())
        .unwrap();
    let out = run_file(
        &path,
        &RunOptions {
            output,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out.failures, 0, "{}", out.stderr);
    out.stdout
}

/// The SuccessfulCreate rows of the event table, with runs of spaces collapsed.
fn create_rows(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("## events"))
        .take_while(|l| !l.starts_with("## pods"))
        .filter(|l| l.contains("SuccessfulCreate"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn a_burst_of_30_creates_prints_25_rows_and_the_dropped_ones_count_300_ticks_later() {
    let rows = create_rows(&run(OutputFormat::Text));
    // 30 creates at tick 0: rows for 9 Events of their own, then the aggregate created (count 1)
    // and counted up 15 times; the spam filter's 25 tokens are gone, so 5 print nothing.
    assert_eq!(rows.len(), 26, "{rows:#?}");
    for row in &rows[..9] {
        assert!(row.starts_with("0 Normal SuccessfulCreate replicaset/burst Created pod: burst-"));
    }
    assert!(rows[9].starts_with(
        "0 Normal SuccessfulCreate replicaset/burst (combined from similar events): Created pod: burst-"
    ));
    assert!(rows[10].starts_with("0 (x2 over 0s) Normal SuccessfulCreate"));
    assert!(rows[24].starts_with("0 (x16 over 0s) Normal SuccessfulCreate"));
    // Tick 300: one token is back, the group (last seen at 0) is within 600 s, so the 31st create
    // counts the aggregate up; its logger entry had counted the 5 dropped ones: 16 + 5 + 1.
    assert!(
        rows[25].starts_with(
            "300 (x22 over 300s) Normal SuccessfulCreate replicaset/burst (combined from similar events): Created pod: burst-"
        ),
        "{}",
        rows[25]
    );
}

#[test]
fn a_burst_of_30_creates_leaves_ten_events() {
    let list: serde_json::Value = serde_json::from_str(&run(OutputFormat::Json)).unwrap();
    let creates: Vec<&serde_json::Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Event" && o["reason"] == "SuccessfulCreate")
        .collect();
    assert_eq!(creates.len(), 10);
    let counts: Vec<i64> = creates
        .iter()
        .map(|e| e["count"].as_i64().unwrap())
        .collect();
    assert_eq!(counts.iter().filter(|&&c| c == 1).count(), 9);
    assert!(counts.contains(&22));
    let aggregate = creates.iter().find(|e| e["count"] == 22).unwrap();
    assert_eq!(aggregate["firstTimestamp"], "1970-01-01T00:00:00Z");
    assert_eq!(aggregate["lastTimestamp"], "1970-01-01T00:05:00Z");
}
