//! Gang feasibility first (issue 13): a PodGroup that cannot reach `minMember` even with every
//! lower-priority pod gone preempts nothing, and one that can still preempts. Values computed by
//! hand from the fixtures: 8 GPUs per node, every pod asks for 8 GPUs, so a node holds one pod.

use std::path::{Path, PathBuf};

use k8s_cluster::{run_file, OutputFormat, RunOptions, RunOutcome};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{name}.yaml"))
}

fn run(name: &str, output: OutputFormat) -> RunOutcome {
    let opts = RunOptions {
        output,
        ..Default::default()
    };
    run_file(&fixture(name), &opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn final_list(name: &str) -> serde_json::Value {
    let out = run(name, OutputFormat::Json);
    serde_json::from_str(&out.stdout).expect("json output")
}

fn of_kind<'a>(list: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|o| o["kind"] == kind)
        .collect()
}

fn events_with_reason<'a>(list: &'a serde_json::Value, reason: &str) -> Vec<&'a serde_json::Value> {
    of_kind(list, "Event")
        .into_iter()
        .filter(|e| e["reason"] == reason)
        .collect()
}

/// (name, nodeName, phase) of the pods whose name starts with `prefix`, by name.
fn pods(list: &serde_json::Value, prefix: &str) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = of_kind(list, "Pod")
        .into_iter()
        .filter(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .starts_with(prefix)
        })
        .map(|p| {
            (
                p["metadata"]["name"].as_str().unwrap_or("").to_string(),
                p["spec"]["nodeName"].as_str().unwrap_or("").to_string(),
                p["status"]["phase"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The numbers: 10 members x 8 GPUs = 80 GPUs needed, 9 nodes x 8 = 72 GPUs in the
/// cluster. With the 5 low-priority pods gone each of the 9 nodes holds one member: 9 < 10. Before
/// the check the members preempted all 5 (5 Preempted events) and 0/10 were bound.
#[test]
fn an_infeasible_gang_preempts_nothing_and_says_why() {
    let out = run("gang-infeasible-72-gpus", OutputFormat::Text);
    assert_eq!(out.failures, 0, "{}", out.stdout);
    let list = final_list("gang-infeasible-72-gpus");
    assert_eq!(events_with_reason(&list, "Preempted").len(), 0);
    let batch = pods(&list, "batch-");
    assert_eq!(batch.len(), 5, "{batch:?}");
    assert!(batch
        .iter()
        .all(|(_, node, phase)| !node.is_empty() && phase == "Running"));
    let train = pods(&list, "train-");
    assert_eq!(train.len(), 10);
    assert!(train
        .iter()
        .all(|(_, node, phase)| node.is_empty() && phase == "Pending"));
    let want = "podGroup default/train cannot reach its quorum even if every lower-priority pod \
                were preempted: minMember 10, 0 placed, 10 to place, at most 9 fit (9 of 9 nodes \
                admit a member), resource gap: nvidia.com/gpu need 80, available 72";
    let failed: Vec<&str> = events_with_reason(&list, "FailedScheduling")
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(
        failed.iter().any(|m| m.contains(want)),
        "no FailedScheduling with {want:?}: {failed:#?}"
    );
    // No member was ever reserved, so none was rejected at Permit either.
    assert!(
        !failed.iter().any(|m| m.contains("optimistic rejection")),
        "{failed:#?}"
    );
    let pg = of_kind(&list, "PodGroup");
    assert_eq!(pg.len(), 1);
    assert_eq!(pg[0]["status"]["phase"], "Scheduling");
    assert_eq!(pg[0]["status"]["scheduled"], 0);
}

/// One node more (80 GPUs): with the 5 low-priority pods evicted all 10 members fit, so the check
/// lets preemption go on: 5 Preempted events and 10/10 bound, one member per node.
#[test]
fn a_feasible_gang_still_preempts() {
    let out = run("gang-feasible-80-gpus", OutputFormat::Text);
    assert_eq!(out.failures, 0, "{}", out.stdout);
    let list = final_list("gang-feasible-80-gpus");
    assert_eq!(events_with_reason(&list, "Preempted").len(), 5);
    let train = pods(&list, "train-");
    assert_eq!(train.len(), 10);
    let mut nodes: Vec<&str> = train.iter().map(|(_, n, _)| n.as_str()).collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), 10, "{train:?}");
    assert!(train.iter().all(|(_, _, phase)| phase == "Running"));
    assert!(pods(&list, "batch-").is_empty());
}

/// `--explain <namespace>/<podgroup>`: the gang's quorum, members, feasibility (the numbers of
/// the first test: 5 low-priority pods, 4 free nodes now, 9 with them gone, 80 vs 72 GPUs) and
/// each member's last FailedScheduling message, in one section.
#[test]
fn explain_a_pod_group_shows_quorum_shortfall_and_member_reasons() {
    let opts = RunOptions {
        explain: Some("default/train".to_string()),
        ..Default::default()
    };
    let out = run_file(&fixture("gang-infeasible-72-gpus"), &opts).expect("run");
    assert_eq!(out.failures, 0, "{}", out.stdout);
    let start = out
        .stdout
        .find("## explain podgroup default/train\n")
        .unwrap_or_else(|| panic!("no podgroup section in:\n{}", out.stdout));
    let lines: Vec<String> = out.stdout[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    let want = [
        "podGroup default/train: minMember 10, phase Scheduling, scheduled 0, running 0, succeeded 0, failed 0",
        "members: 10 exist (0 terminal not counted), 0 bound, 0 waiting at Permit, 10 pending",
        "feasibility at t=2 (attempt 1 of train-9, priority 1000): 0 placed, 10 to place for minMember 10",
        "fit now: at most 4; with the 5 lower-priority pods gone: at most 9 (9 of 9 nodes admit a member)",
        "node shortfall: 1",
        "resource shortfall: nvidia.com/gpu need 80, available 72 (8 missing)",
        "verdict: cannot reach its quorum even with preemption: Coscheduling PreFilter rejects its members, nothing is preempted",
        "last attempt of each member:",
    ];
    assert_eq!(&lines[..want.len()], &want[..], "{lines:#?}");
    let members = &lines[want.len()..];
    assert_eq!(members.len(), 10, "{members:#?}");
    for (i, l) in members.iter().enumerate() {
        assert!(
            l.starts_with(&format!(
                "train-{i} node - t=2 FailedScheduling (Unschedulable): 0/9 nodes are available: podGroup default/train cannot reach its quorum"
            )),
            "{l}"
        );
    }
}
