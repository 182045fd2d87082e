//! `spec.informerLag`: informers that deliver watch events late make writes from stale caches meet
//! `409 Conflict`, and the components retry as upstream's do. The counts are traced by hand in
//! the header of `scenarios/informer-lag.yaml` (a Deployment of 2 scaled to 4 at t=9, a pod
//! relabelled at t=12).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_cluster::manifest::parse_stream;
use k8s_cluster::{run_to_state, RunOptions, RunState};
use k8s_types::apiserver::ApiExt;
use k8s_types::core::Pod;

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(format!("{name}.yaml"))
}

/// Runs the bundled scenario `name` with its `spec:` line followed by `lag` (YAML of the
/// `informerLag` field, replacing the scenario's own, or nothing).
fn run(name: &str, lag: Option<&str>, every_tick: bool) -> RunState {
    run_with_steps(name, lag, "", every_tick)
}

/// [`run`] with `steps` (YAML list items, two-space indented) added before the scenario's own.
fn run_with_steps(name: &str, lag: Option<&str>, steps: &str, every_tick: bool) -> RunState {
    let path = scenario(name);
    let text = std::fs::read_to_string(&path).expect("scenario");
    let text: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("informerLag:"))
        .map(|l| match (l, lag) {
            ("spec:", Some(lag)) => format!("spec:\n  informerLag: {lag}\n"),
            ("  steps:", _) => format!("  steps:\n{steps}"),
            _ => format!("{l}\n"),
        })
        .collect();
    let manifests = parse_stream(&path.display().to_string(), &text).expect("parses");
    let opts = RunOptions {
        every_tick,
        ..Default::default()
    };
    run_to_state(manifests, &path, &opts, None).expect("runs")
}

fn conflicts(state: &RunState) -> Vec<(u64, String, &'static str, String)> {
    state
        .cluster
        .conflicts()
        .records()
        .iter()
        .map(|r| (r.tick, r.component.clone(), r.verb, r.kind.clone()))
        .collect()
}

fn ready_pods(state: &RunState) -> usize {
    state
        .cluster
        .api_ref()
        .list_typed::<Pod>(Some("default"), None)
        .iter()
        .filter(|p| p.is_ready())
        .count()
}

#[test]
fn a_lag_of_two_ticks_makes_exactly_three_conflicts() {
    let state = run("informer-lag", Some("{ticks: 2}"), false);
    // Traced by hand (scenarios/informer-lag.yaml): the Deployment controller writes status from
    // its cache of the end of t=7 at t=9 and of t=8 at t=10, both older than the scale step's
    // write at t=9; the ReplicaSet controller, at t=14, writes status on the ReplicaSet it cached
    // at the end of t=12, older than its own status write at t=13.
    assert_eq!(
        conflicts(&state),
        [
            (
                9,
                "deployment-controller".into(),
                "update_status",
                "Deployment".into()
            ),
            (
                10,
                "deployment-controller".into(),
                "update_status",
                "Deployment".into()
            ),
            (
                14,
                "replicaset-controller".into(),
                "update_status",
                "ReplicaSet".into()
            ),
        ]
    );
    let records = state.cluster.conflicts().records();
    assert_eq!(
        records[0].message,
        "Operation cannot be fulfilled on deployments.apps \"web\": the object has been \
         modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(
        records[2].message,
        "Operation cannot be fulfilled on replicasets.apps \"web-84d8bc7bcd\": the object has \
         been modified; please apply your changes to the latest version and try again"
    );
    // Both retried to convergence: 4 pods, all Ready.
    assert_eq!(ready_pods(&state), 4);
    let counts: BTreeMap<(String, String), u64> = state.cluster.conflicts().counts();
    assert_eq!(
        counts.get(&("deployment-controller".into(), "Deployment".into())),
        Some(&2)
    );
}

#[test]
fn skipping_idle_ticks_delivers_the_late_events_at_the_same_ticks() {
    let fast = run("informer-lag", Some("{ticks: 2}"), false);
    let every = run("informer-lag", Some("{ticks: 2}"), true);
    assert_eq!(conflicts(&fast), conflicts(&every));
    assert_eq!(
        fast.cluster.api_ref().revision(),
        every.cluster.api_ref().revision()
    );
}

#[test]
fn without_lag_or_with_one_tick_nothing_conflicts() {
    // Lag 0: every component sees every write before its turn. Lag 1: the scale (t=9) is seen at
    // t=10, when the Deployment controller has nothing queued from older state (its last status
    // write was at t=5, seen at t=6), and the ReplicaSet controller's status write of t=11 is
    // seen at t=12, before the relabel of t=12 queues it again at t=13.
    for lag in [None, Some("{ticks: 1}")] {
        let state = run("informer-lag", lag, false);
        assert_eq!(conflicts(&state), [], "{lag:?}");
        assert_eq!(ready_pods(&state), 4, "{lag:?}");
    }
}

#[test]
fn a_lagging_scheduler_does_not_bind_its_assumed_pods_again() {
    // Only the scheduler lags: it binds the 2 pods created at t=0 at t=0 (its first list is
    // current) and still sees them unbound at t=1; they are assumed in its cache (upstream
    // `IsAssumedPod`), so it does not try again (a second bind would be a 409 `pod ... is already
    // assigned to node`). The 2 pods created at t=9 reach it at t=11.
    let state = run(
        "informer-lag",
        Some("{controllerManager: 0, scheduler: 2}"),
        false,
    );
    assert_eq!(conflicts(&state), []);
    assert_eq!(ready_pods(&state), 4);
    let pods = state
        .cluster
        .api_ref()
        .list_typed::<Pod>(Some("default"), None);
    let mut bound: Vec<String> = pods
        .iter()
        .filter_map(|p| {
            p.status
                .conditions
                .iter()
                .find(|c| c.type_ == "PodScheduled")
                .and_then(|c| c.last_transition_time.as_deref().map(str::to_string))
        })
        .collect();
    bound.sort_unstable();
    assert_eq!(
        bound,
        [
            "1970-01-01T00:00:00Z",
            "1970-01-01T00:00:00Z",
            "1970-01-01T00:00:11Z",
            "1970-01-01T00:00:11Z"
        ]
    );
}

#[test]
fn the_statefulset_status_updater_retries_five_times_from_its_lister() {
    // Upstream's status updater retries with retry.DefaultRetry (5 steps) and re-reads the
    // StatefulSet from the lister, which lags as much as the informer: every failed status write
    // is five 409s in one tick, never more.
    let state = run("statefulset-ordered", Some("{ticks: 2}"), false);
    let mut per_tick: BTreeMap<u64, usize> = BTreeMap::new();
    for (tick, component, verb, kind) in conflicts(&state) {
        if component == "statefulset-controller" {
            assert_eq!((verb, kind.as_str()), ("update_status", "StatefulSet"));
            *per_tick.entry(tick).or_insert(0) += 1;
        }
    }
    assert!(!per_tick.is_empty());
    assert!(per_tick.values().all(|n| *n == 5), "{per_tick:?}");
}

#[test]
fn the_node_lifecycle_controller_retries_its_node_writes_on_a_fresh_get() {
    // node-failure with lag 2 (its kubelet stops at t=10, comes back at t=400), and the node
    // cordoned at t=44 and uncordoned at t=404. At t=45 the controller marks the node Unknown on
    // its cache of the end of t=43 (before the cordon): 409, then upstream's NodeHealthUpdateRetry
    // writes it on a fresh GET. At t=405 it removes the taints on its cache of the end of t=403
    // (before the uncordon): 409, then RetryOnConflict(UpdateTaintBackoff) on a fresh GET. Nothing
    // else writes a Node in those windows: exactly these two conflicts.
    let steps =
        "  - at: 44\n    cordon: {node: node-b}\n  - at: 404\n    uncordon: {node: node-b}\n";
    let state = run_with_steps("node-failure", Some("{ticks: 2}"), steps, false);
    assert_eq!(
        conflicts(&state),
        [
            (
                45,
                "node-lifecycle-controller".into(),
                "update_status",
                "Node".into()
            ),
            (
                405,
                "node-lifecycle-controller".into(),
                "update",
                "Node".into()
            ),
        ]
    );
    let node: k8s_types::core::Node = state
        .cluster
        .api_ref()
        .get_typed("", "node-b")
        .expect("node-b");
    assert!(node.spec.taints.is_empty(), "{:?}", node.spec.taints);
    assert!(!node.spec.unschedulable);
    let every = run_with_steps("node-failure", Some("{ticks: 2}"), steps, true);
    assert_eq!(conflicts(&state), conflicts(&every));
}

#[test]
fn long_idle_stretches_under_lag_give_the_output_of_every_tick() {
    // node-failure (420 ticks, long idle stretches) and cronjob (400 ticks) with informers 3 ticks
    // late: the text output of the run that skips idle ticks (waking when a late watch event
    // becomes visible, `Cluster::next_lagged_delivery`) equals that of simulating every tick,
    // byte for byte.
    for name in ["node-failure", "cronjob"] {
        let path = scenario(name);
        let text = std::fs::read_to_string(&path).expect("scenario");
        let at = text.find("kind: Scenario").expect("a Scenario");
        let spec = at + text[at..].find("\nspec:\n").expect("spec") + "\nspec:\n".len();
        let text = format!(
            "{}  informerLag: {{ticks: 3}}\n{}",
            &text[..spec],
            &text[spec..]
        );
        let output = |every_tick: bool| {
            let manifests = parse_stream(&path.display().to_string(), &text).expect("parses");
            let opts = RunOptions {
                every_tick,
                ..Default::default()
            };
            let mut out = Vec::new();
            k8s_cluster::run_manifests_to(manifests, &path, &opts, &mut out).expect("runs");
            String::from_utf8(out).expect("utf-8")
        };
        let fast = output(false);
        assert!(
            fast.contains("# informer lag: controller-manager 3 ticks"),
            "{name}"
        );
        assert_eq!(fast, output(true), "{name}");
    }
}
