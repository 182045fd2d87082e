//! `Scheduler::set_explain` / `Scheduler::explanations` through the public API: the
//! percentageOfNodesToScore window and its rotating start index (upstream
//! `numFeasibleNodesToFind` / `nextStartNodeIndex` in `schedule_one.go`), a PreFilterResult that
//! restricts the nodes (NodeAffinity `matchFields metadata.name`), the nominated node evaluated
//! first (`evaluateNominatedNode`), a PreFilter rejection (no Filter runs, so no skip list), and
//! that explaining does not change any placement.

use std::collections::BTreeMap;

use k8s_sched::explain::{NodeVerdict, Outcome, PodKey};
use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_testing::{gang_pod, node, pod, pod_group, FakeApi};
use k8s_types::core::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
};

fn many_nodes(api: &mut FakeApi, n: usize) {
    for i in 0..n {
        api.add(node(&format!("node-{i:03}"), "4", "8Gi", &[]));
    }
}

fn config(percentage: Option<i32>) -> KubeSchedulerConfiguration {
    KubeSchedulerConfiguration {
        percentage_of_nodes_to_score: percentage,
        ..Default::default()
    }
}

#[test]
fn percentage_of_nodes_to_score_window_rotates() {
    // 120 nodes at 50%: upstream numFeasibleNodesToFind = max(120*50/100, 100) = 100.
    let mut api = FakeApi::new();
    many_nodes(&mut api, 120);
    api.add(pod("p1", "100m", "128Mi", &[]));
    api.add(pod("p2", "100m", "128Mi", &[]));
    let mut s = Scheduler::new(config(Some(50))).unwrap();
    s.set_explain(Some(PodKey::new("default", "p2")));
    s.schedule(&mut api);

    let ex = s.explanations();
    assert_eq!(ex.len(), 1, "only p2 is explained");
    let e = &ex[0];
    assert_eq!(e.attempt, 1);
    assert_eq!(e.num_nodes, 120);
    let w = e.window.as_ref().unwrap();
    assert_eq!(w.candidates, 120);
    assert_eq!(w.num_feasible_nodes_to_find, 100);
    assert_eq!(w.percentage_of_nodes_to_score, 50);
    // p1 went first and filtered nodes 0..99; p2 starts at 100, wraps, stops after 100 feasible
    // (100..119 then 0..79), so 80..99 are skipped.
    assert_eq!(w.start_index, 100);
    assert_eq!(w.evaluated, 100);
    assert_eq!(e.nodes.len(), 120, "every node is listed");
    let skipped: Vec<&str> = e
        .nodes
        .iter()
        .filter(|n| n.verdict == NodeVerdict::SkippedByPercentageOfNodesToScore)
        .map(|n| n.node.as_str())
        .collect();
    let want: Vec<String> = (80..100).map(|i| format!("node-{i:03}")).collect();
    assert_eq!(skipped, want);
    assert_eq!(e.scores.len(), 100);
    // Equal nodes: all totals tie; the name sorting last among the scored ones wins.
    assert_eq!(e.scores[0].node, "node-119");
    assert_eq!(e.scores[0].total, e.scores[99].total);
    assert_eq!(e.predicted.as_deref(), Some("node-119"));
    let outcomes: Vec<&Outcome> = e.outcomes.iter().map(|o| &o.outcome).collect();
    assert_eq!(
        outcomes,
        vec![
            &Outcome::Selected {
                node: "node-119".into()
            },
            &Outcome::Bound {
                node: "node-119".into()
            },
        ]
    );
    assert_eq!(api.pod("p2").spec.node_name.as_deref(), Some("node-119"));
    assert_eq!(api.pod("p1").spec.node_name.as_deref(), Some("node-099"));
}

#[test]
fn pre_filter_result_restricts_the_candidates() {
    let mut api = FakeApi::new();
    for n in ["node-a", "node-b", "node-c"] {
        api.add(node(n, "4", "8Gi", &[]));
    }
    let mut p = pod("pinned", "100m", "128Mi", &[]);
    p.spec.affinity = Some(Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_fields: vec![NodeSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "In".into(),
                        values: vec!["node-b".into()],
                    }],
                    ..Default::default()
                }],
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    api.add(p);
    let mut s = Scheduler::new(config(None)).unwrap();
    s.set_explain(Some(PodKey::new("default", "pinned")));
    s.schedule(&mut api);
    let e = &s.explanations()[0];
    assert_eq!(e.pre_filter.status, None);
    assert_eq!(e.pre_filter.node_names, Some(vec!["node-b".to_string()]));
    assert_eq!(e.pre_filter.restricted_by, vec!["NodeAffinity".to_string()]);
    let verdicts: BTreeMap<&str, &NodeVerdict> = e
        .nodes
        .iter()
        .map(|n| (n.node.as_str(), &n.verdict))
        .collect();
    assert_eq!(verdicts["node-a"], &NodeVerdict::NotInPreFilterResult);
    assert_eq!(verdicts["node-b"], &NodeVerdict::Success);
    assert_eq!(verdicts["node-c"], &NodeVerdict::NotInPreFilterResult);
    assert_eq!(e.window.as_ref().unwrap().candidates, 1);
    // One feasible node: upstream schedulePod returns it without PreScore/Score.
    assert!(e.scores.is_empty());
    assert!(e.score_note.is_some());
    assert_eq!(e.predicted.as_deref(), Some("node-b"));
}

#[test]
fn nominated_node_is_filtered_first_and_wins_alone() {
    let mut api = FakeApi::new();
    for n in ["node-a", "node-b", "node-c"] {
        api.add(node(n, "4", "8Gi", &[]));
    }
    let mut p = pod("nominee", "100m", "128Mi", &[]);
    p.status.nominated_node_name = Some("node-a".into());
    api.add(p);
    let mut s = Scheduler::new(config(None)).unwrap();
    s.set_explain(Some(PodKey::new("default", "nominee")));
    s.schedule(&mut api);
    let e = &s.explanations()[0];
    let nn = e.nominated_node.as_ref().unwrap();
    assert_eq!(nn.node, "node-a");
    assert_eq!(nn.verdict, NodeVerdict::Success);
    assert!(e.window.is_none(), "the other nodes are never filtered");
    for n in &e.nodes[1..] {
        assert!(
            matches!(n.verdict, NodeVerdict::NotEvaluated(_)),
            "{}: {:?}",
            n.node,
            n.verdict
        );
    }
    // Without the nomination the tie-break would pick node-c; the nominated node wins.
    assert_eq!(api.pod("nominee").spec.node_name.as_deref(), Some("node-a"));
    assert_eq!(e.predicted.as_deref(), Some("node-a"));
}

#[test]
fn explaining_changes_no_placement() {
    let place = |explain: bool| {
        let mut api = FakeApi::new();
        many_nodes(&mut api, 7);
        for i in 0..12 {
            api.add(pod(&format!("w-{i:02}"), "700m", "1Gi", &[]));
        }
        let mut s = Scheduler::new(config(None)).unwrap();
        if explain {
            s.set_explain(Some(PodKey::new("default", "w-05")));
        }
        s.schedule(&mut api);
        let placed: BTreeMap<String, Option<String>> = (0..12)
            .map(|i| {
                let name = format!("w-{i:02}");
                let node = api.pod(&name).spec.node_name.clone();
                (name, node)
            })
            .collect();
        let explained = s.explanations().to_vec();
        (placed, explained)
    };
    let (plain, none) = place(false);
    let (explained, ex) = place(true);
    assert!(none.is_empty());
    assert_eq!(plain, explained);
    assert_eq!(ex.len(), 1);
    assert_eq!(ex[0].predicted, explained["w-05"]);
}

#[test]
fn a_rejecting_pre_filter_shows_no_filter_skip_list() {
    // Coscheduling's PreFilter rejects a gang member whose group has 2 of its 3 members; the
    // plugins that returned Skip before it are not listed, since no Filter runs at all.
    let mut api = FakeApi::new();
    api.add(node("n1", "4", "8Gi", &[]));
    api.add(pod_group("pg1", 3));
    api.add(gang_pod("a", "pg1", "100m"));
    api.add(gang_pod("b", "pg1", "100m"));
    let mut s = Scheduler::new(config(None)).unwrap();
    s.set_explain(Some(PodKey::new("default", "a")));
    s.schedule(&mut api);
    let e = &s.explanations()[0];
    assert!(e.pre_filter.status.is_some());
    let text = e.to_string();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("PreFilter:"))
        .expect("a PreFilter line");
    assert_eq!(
        line,
        "  PreFilter: Coscheduling: pre-filter pod a cannot find enough sibling pods, current pods number: 2, minMember of group: 3 [UnschedulableAndUnresolvable]"
    );
}

#[test]
fn a_pre_filter_result_advances_the_start_index_modulo_all_nodes() {
    // Upstream findNodesThatFitPod: nextStartNodeIndex = (index + feasible + NodeToStatus.Len())
    // % len(allNodes), the search itself starting at the index modulo the candidates. A pod
    // pinned to 3 of 200 nodes (matchFields metadata.name) finds its 3 nodes feasible, so the
    // next pod starts at 3, not at 0.
    let mut api = FakeApi::new();
    many_nodes(&mut api, 200);
    let mut pinned = pod("pinned", "100m", "128Mi", &[]);
    pinned.spec.affinity = Some(Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_fields: vec![NodeSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "In".into(),
                        values: vec!["node-010".into(), "node-020".into(), "node-030".into()],
                    }],
                    ..Default::default()
                }],
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    api.add(pinned);
    api.add(pod("next", "100m", "128Mi", &[]));
    let mut s = Scheduler::new(config(Some(50))).unwrap();
    s.set_explain(Some(PodKey::new("default", "next")));
    s.schedule(&mut api);
    let w = s.explanations()[0].window.clone().unwrap();
    assert_eq!(w.candidates, 200);
    assert_eq!(w.num_feasible_nodes_to_find, 100);
    assert_eq!(w.start_index, 3);
    assert_eq!(w.evaluated, 100);
}

/// A PreFilter plugin that counts its calls per pod.
struct CountPreFilter(std::sync::Mutex<BTreeMap<String, usize>>);

impl k8s_sched_framework::Plugin for CountPreFilter {
    fn name(&self) -> &str {
        "CountPreFilter"
    }
    fn as_pre_filter(&self) -> Option<&dyn k8s_sched_framework::PreFilterPlugin> {
        Some(self)
    }
}

impl k8s_sched_framework::PreFilterPlugin for CountPreFilter {
    fn pre_filter(
        &self,
        _state: &mut k8s_sched_framework::CycleState,
        pod: &k8s_types::core::Pod,
        _handle: &dyn k8s_sched_framework::Handle,
    ) -> (
        Option<k8s_sched_framework::PreFilterResult>,
        k8s_sched_framework::Status,
    ) {
        *self
            .0
            .lock()
            .unwrap()
            .entry(pod.metadata.name.clone())
            .or_default() += 1;
        (None, k8s_sched_framework::Status::success())
    }
}

#[test]
fn explaining_observes_the_attempt_instead_of_running_it_again() {
    // Each pod has one attempt; the explained one still runs PreFilter once (the observer records
    // the real attempt; before, the explanation ran the plugins a second time).
    let counter = std::sync::Arc::new(CountPreFilter(Default::default()));
    let mut registry = k8s_sched::Registry::new();
    let c = std::sync::Arc::clone(&counter);
    registry
        .register(
            "CountPreFilter",
            Box::new(move |_| Ok(c.clone() as std::sync::Arc<dyn k8s_sched_framework::Plugin>)),
        )
        .unwrap();
    let config = KubeSchedulerConfiguration::from_yaml(
        "profiles:\n- plugins: {preFilter: {enabled: [{name: CountPreFilter}]}}\n",
    )
    .unwrap();
    let mut api = FakeApi::new();
    many_nodes(&mut api, 3);
    api.add(pod("a", "100m", "128Mi", &[]));
    api.add(pod("b", "100m", "128Mi", &[]));
    let mut s = Scheduler::with_registry(config, registry).unwrap();
    s.set_explain(Some(PodKey::new("default", "b")));
    s.schedule(&mut api);
    let calls = counter.0.lock().unwrap().clone();
    assert_eq!(calls.get("a"), Some(&1));
    assert_eq!(calls.get("b"), Some(&1));
    let ex = s.explanations();
    assert_eq!(ex.len(), 1);
    // b's explanation has the three nodes, all feasible, scored, and names the selected node.
    assert_eq!(ex[0].nodes.len(), 3);
    assert!(ex[0]
        .nodes
        .iter()
        .all(|n| n.verdict == NodeVerdict::Success));
    assert_eq!(ex[0].scores.len(), 3);
    let selected = ex[0].outcomes.iter().find_map(|o| match &o.outcome {
        Outcome::Selected { node } => Some(node.clone()),
        _ => None,
    });
    assert_eq!(selected, ex[0].predicted);
}
