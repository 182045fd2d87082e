//! `--explain <namespace>/<pod>` end to end through [`run_file`]: the Filter verdicts, the Score
//! table and the outcome of `tests/fixtures/explain-two-nodes.yaml`, checked against numbers
//! computed by hand with upstream's formulas (cited per assertion), plus: explaining changes
//! nothing else in the output, json/yaml print it on standard error, bad keys are rejected.

use std::path::{Path, PathBuf};

use k8s_cluster::{run_file, OutputFormat, RunOptions, RunOutcome};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/explain-two-nodes.yaml")
}

fn run(explain: Option<&str>, output: OutputFormat) -> RunOutcome {
    let opts = RunOptions {
        output,
        explain: explain.map(str::to_string),
        ..Default::default()
    };
    run_file(&fixture(), &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// The lines of the `## explain <pod>` section, whitespace-normalized.
fn section(text: &str, pod: &str) -> Vec<String> {
    let header = format!("## explain {pod}");
    let start = text
        .find(&header)
        .unwrap_or_else(|| panic!("no {header} in:\n{text}"));
    text[start + header.len()..]
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

/// The single line starting with `prefix`.
fn line<'a>(lines: &'a [String], prefix: &str) -> &'a str {
    let found: Vec<&String> = lines.iter().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(found.len(), 1, "{prefix:?} in {lines:#?}");
    found[0]
}

#[test]
fn explains_filter_verdicts_scores_and_the_choice() {
    let out = run(Some("default/web-0"), OutputFormat::Text);
    assert_eq!(out.failures, 0, "{}", out.stdout);
    let s = section(&out.stdout, "default/web-0");
    assert_eq!(s[0], "attempt 1 at t=0, profile default-scheduler, 3 nodes");
    assert!(
        s[1].starts_with("PreFilter: Success (all nodes)"),
        "{}",
        s[1]
    );

    // Filter: node-c has 1 CPU allocatable, the pod requests 1500m (upstream fit.go message
    // "Insufficient cpu").
    assert_eq!(line(&s, "node-a Success"), "node-a Success");
    assert_eq!(line(&s, "node-b Success"), "node-b Success");
    assert!(
        line(&s, "node-c ").starts_with("node-c NodeResourcesFit: Insufficient cpu"),
        "{s:#?}"
    );

    // NodeResourcesFit LeastAllocated (upstream least_allocated.go
    // `(capacity - requested) * 100 / capacity`, integer, then the mean weighted by the resource
    // weights cpu=1, memory=1):
    //   node-a: cpu (4000-1500)*100/4000 = 62, memory (8Gi-1Gi)*100/8Gi = 87 -> (62+87)/2 = 74
    //   node-b: cpu (2000-1500)*100/2000 = 25, memory (4Gi-1Gi)*100/4Gi = 75 -> (25+75)/2 = 50
    // No NormalizeScore, weight 1.
    assert_eq!(
        line(&s, "node-a NodeResourcesFit "),
        "node-a NodeResourcesFit 74 74 1 74"
    );
    assert_eq!(
        line(&s, "node-b NodeResourcesFit "),
        "node-b NodeResourcesFit 50 50 1 50"
    );
    // NodeResourcesBalancedAllocation (upstream balanced_allocation.go: with two resources the
    // standard deviation is |f_cpu - f_mem| / 2, score (1 - std) * 100 truncated):
    //   node-a: f = 1500/4000 = 0.375, 1Gi/8Gi = 0.125 -> std 0.125 -> 87
    //   node-b: f = 0.75, 0.25 -> std 0.25 -> 75
    assert_eq!(
        line(&s, "node-a NodeResourcesBalancedAllocation "),
        "node-a NodeResourcesBalancedAllocation 87 87 1 87"
    );
    assert_eq!(
        line(&s, "node-b NodeResourcesBalancedAllocation "),
        "node-b NodeResourcesBalancedAllocation 75 75 1 75"
    );
    // TaintToleration: no PreferNoSchedule taints, raw 0; DefaultNormalizeScore(reverse) gives
    // every node 100 when the maximum is 0 (upstream helper/normalize_score.go); weight 3.
    assert_eq!(
        line(&s, "node-a TaintToleration "),
        "node-a TaintToleration 0 100 3 300"
    );
    // Totals: 300 + 74 + 87 = 461 and 300 + 50 + 75 = 425. The other default Score plugins add
    // 0 here: NodeAffinity, PodTopologySpread and InterPodAffinity skip at PreScore (no preferred
    // terms, no spread constraints or selector, no pod affinity), ImageLocality scores 0 (the image
    // is on no node).
    let total_a = line(&s, "node-a total");
    let total_b = line(&s, "node-b total");
    assert_eq!(total_a, "node-a total 461");
    assert_eq!(total_b, "node-b total 425");
    let pos = |l: &str| s.iter().position(|x| x == l).unwrap();
    assert!(pos(total_a) < pos(total_b), "highest total first");
    assert_eq!(line(&s, "selected:"), "selected: node-a");
    assert_eq!(line(&s, "t=0 Bound:"), "t=0 Bound: node-a");
    assert!(!s.iter().any(|l| l.starts_with("warning:")), "{s:#?}");
}

#[test]
fn explains_a_pod_that_fits_nowhere_attempt_by_attempt() {
    let out = run(Some("default/big"), OutputFormat::Text);
    let s = section(&out.stdout, "default/big");
    let first: Vec<String> = s
        .iter()
        .take_while(|l| !l.starts_with("attempt 2 "))
        .cloned()
        .collect();
    for node in ["node-a", "node-b", "node-c"] {
        assert!(
            line(&first, &format!("{node} "))
                .starts_with(&format!("{node} NodeResourcesFit: Insufficient cpu")),
            "{s:#?}"
        );
    }
    // Upstream FitError and DefaultPreemption messages: every node is
    // UnschedulableAndUnresolvable for cpu (8 CPU > allocatable), so preemption cannot help.
    let msg = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    assert_eq!(
        line(&s, "t=0 FailedScheduling"),
        format!("t=0 FailedScheduling (Unschedulable): {msg}")
    );
    assert!(
        line(&first, "PostFilter:")
            .starts_with("PostFilter: DefaultPreemption: preemption: 0/3 nodes are available"),
        "{first:#?}"
    );
    // Not retried within the run (upstream queueing hints): NodeResourcesFit, which rejected it,
    // registers Pod Delete and Node Add/UpdateNodeAllocatable only, and web-0's binding (an
    // AssignedPodAdd) reaches only pods with cross-topology terms; big waits for such an event
    // or the 5-minute flush.
    assert!(!s.iter().any(|l| l.starts_with("attempt 2 ")), "{s:#?}");
    assert!(!s.iter().any(|l| l.starts_with("Score:")), "{s:#?}");
}

#[test]
fn explaining_changes_nothing_else_and_goes_to_stderr_in_json() {
    let plain = run(None, OutputFormat::Text);
    let explained = run(Some("default/web-0"), OutputFormat::Text);
    let start = explained.stdout.find("## explain").unwrap();
    let end = explained.stdout[start..]
        .find("\n## expectations")
        .map_or(explained.stdout.len(), |i| start + i + 1);
    let without = format!("{}{}", &explained.stdout[..start], &explained.stdout[end..]);
    assert_eq!(without.replace("\n\n\n", "\n\n"), plain.stdout);
    assert_eq!(
        run(Some("default/web-0"), OutputFormat::Text).stdout,
        explained.stdout,
        "deterministic"
    );

    let json = run(Some("default/web-0"), OutputFormat::Json);
    assert_eq!(json.stdout, run(None, OutputFormat::Json).stdout);
    let s = section(&json.stderr, "default/web-0");
    assert_eq!(line(&s, "node-a total"), "node-a total 461");

    // A bare name means namespace default, as kubectl.
    let bare = run(Some("web-0"), OutputFormat::Text);
    assert_eq!(bare.stdout, explained.stdout);
}

#[test]
fn unknown_pods_and_bad_keys() {
    let out = run(Some("default/nope"), OutputFormat::Text);
    let s = section(&out.stdout, "default/nope");
    assert_eq!(s.len(), 1);
    assert!(
        s[0].starts_with("default/nope: no scheduling attempt"),
        "{s:?}"
    );

    let opts = RunOptions {
        explain: Some("a/b/c".into()),
        ..Default::default()
    };
    let e = run_file(&fixture(), &opts).unwrap_err().to_string();
    assert!(e.starts_with("--explain: invalid pod \"a/b/c\""), "{e}");
}

#[test]
fn names_the_post_filter_plugin_that_made_room() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/explain-preemption.yaml");
    let opts = RunOptions {
        explain: Some("default/high".to_string()),
        ..Default::default()
    };
    let out = run_file(&path, &opts).expect("runs");
    assert_eq!(out.failures, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("PostFilter: DefaultPreemption: Success; nominatedNodeName: n1"),
        "{}",
        out.stdout
    );
}
