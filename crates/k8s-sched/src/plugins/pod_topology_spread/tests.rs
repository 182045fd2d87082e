//! PodTopologySpread unit tests, table-driven, with the cases and expected values of upstream
//! `podtopologyspread/filtering_test.go` (`TestPreFilterState`, `TestPreFilterStateAddPod`,
//! `TestSingleConstraint`, `TestMultipleConstraints`) and `scoring_test.go` (`TestPreScoreSkip`,
//! `TestPreScoreStateEmptyNodes`, `TestPodTopologySpreadScore`). Each case carries the upstream
//! case name. Every PreScore is also checked against upstream's count over every pod
//! ([`PreScoreState::compute`]), here and on randomized clusters.

use std::collections::BTreeMap;

use k8s_sched_framework::{Code, CycleState, NodeScore, PodInfo};
use k8s_types::apps::ReplicaSet;
use k8s_types::core::{Node, Pod};
use k8s_types::labels::LabelSelector;
use k8s_types::object::Object;

use super::filtering::{PreFilterState, PRE_FILTER_STATE_KEY};
use super::scoring::{topology_normalizing_weight, PreScoreState, PRE_SCORE_STATE_KEY};
use super::*;
use crate::config::pod_topology_spread_args::{DefaultConstraint, LIST_DEFAULTING};
use crate::plugins::fixtures::{exists, req_selector, FakeHandle, NodeBuilder, PodBuilder};
use crate::plugins::node_affinity::has_required_node_affinity;

const DNS: &str = "DoNotSchedule";
const SA: &str = "ScheduleAnyway";
const HOST: &str = "kubernetes.io/hostname";
const TAINT: &str = "node.kubernetes.io/unschedulable";

fn foo() -> LabelSelector {
    exists("foo")
}
fn bar() -> LabelSelector {
    exists("bar")
}

fn list_plugin() -> PodTopologySpread {
    PodTopologySpread::new(&PodTopologySpreadArgs {
        default_constraints: vec![],
        defaulting_type: LIST_DEFAULTING.into(),
    })
}

fn system_plugin() -> PodTopologySpread {
    PodTopologySpread::new(&PodTopologySpreadArgs::default())
}

/// `st.MakeNode().Name(n).Label("zone", z).Label("node", n)`.
fn zn(name: &str, zone: &str) -> Node {
    NodeBuilder::new(name)
        .label("zone", zone)
        .label("node", name)
        .obj()
}

/// `st.MakeNode().Name(n).Label("node", n)`.
fn nn(name: &str) -> Node {
    NodeBuilder::new(name).label("node", name).obj()
}

/// `st.MakePod().Name(name).Node(node).Label(k, "")` for each label key.
fn ep(name: &str, node: &str, labels: &[&str]) -> Pod {
    let mut b = PodBuilder::new(name).node(node);
    for l in labels {
        b = b.label(l, "");
    }
    b.obj()
}

fn four_zone_nodes() -> Vec<Node> {
    vec![
        zn("node-a", "zone1"),
        zn("node-b", "zone1"),
        zn("node-x", "zone2"),
        zn("node-y", "zone2"),
    ]
}

struct FilterCase {
    name: &'static str,
    pod: Pod,
    nodes: Vec<Node>,
    existing: Vec<Pod>,
    want: Vec<(&'static str, Code)>,
}

fn run_filter_cases(cases: Vec<FilterCase>) {
    let pl = list_plugin();
    for c in cases {
        let h = FakeHandle::new(&c.nodes, &c.existing, vec![]);
        let mut state = CycleState::new();
        let (_, s) = pl.pre_filter(&mut state, &c.pod, &h);
        assert!(s.is_success(), "{}: PreFilter {s:?}", c.name);
        for (node, code) in &c.want {
            let got = pl.filter(&state, &c.pod, h.node(node));
            assert_eq!(got.code(), *code, "{}: node {node}: {got:?}", c.name);
        }
    }
}

fn p_foo() -> PodBuilder {
    PodBuilder::new("p").label("foo", "")
}

#[test]
fn single_constraint_filter_matches_upstream() {
    use Code::{Success as S, Unschedulable as U, UnschedulableAndUnresolvable as UU};
    let spread_a1_a2_b1_y3 = || {
        vec![
            ep("p-a1", "node-a", &["foo"]),
            ep("p-a2", "node-a", &["foo"]),
            ep("p-b1", "node-b", &["foo"]),
            ep("p-y1", "node-y", &["foo"]),
            ep("p-y2", "node-y", &["foo"]),
            ep("p-y3", "node-y", &["foo"]),
        ]
    };
    let all = |codes: [Code; 4]| {
        vec![
            ("node-a", codes[0]),
            ("node-b", codes[1]),
            ("node-x", codes[2]),
            ("node-y", codes[3]),
        ]
    };
    let cases = vec![
        FilterCase {
            name: "no existing pods",
            pod: p_foo().simple_spread(1, "zone", DNS, foo()).obj(),
            nodes: four_zone_nodes(),
            existing: vec![],
            want: all([S, S, S, S]),
        },
        FilterCase {
            name: "no existing pods, incoming pod doesn't match itself",
            pod: p_foo().simple_spread(1, "zone", DNS, bar()).obj(),
            nodes: four_zone_nodes(),
            existing: vec![],
            want: all([S, S, S, S]),
        },
        FilterCase {
            name: "existing pods in a different namespace do not count",
            pod: p_foo().simple_spread(1, "zone", DNS, foo()).obj(),
            nodes: four_zone_nodes(),
            existing: vec![
                PodBuilder::new("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
                PodBuilder::new("p-b1").namespace("ns2").node("node-a").label("foo", "").obj(),
                ep("p-x1", "node-x", &["foo"]),
                ep("p-y1", "node-y", &["foo"]),
            ],
            want: all([S, S, U, U]),
        },
        FilterCase {
            name: "existing pods do not match null selector",
            pod: p_foo()
                .spread(1, "zone", DNS, None, None, None, None, &[])
                .obj(),
            nodes: four_zone_nodes(),
            existing: vec![ep("p-x1", "node-x", &["foo"]), ep("p-y1", "node-y", &["foo"])],
            want: all([S, S, S, S]),
        },
        FilterCase {
            name: "pods spread across zones as 3/3, all nodes fit",
            pod: p_foo().simple_spread(1, "zone", DNS, foo()).obj(),
            nodes: four_zone_nodes(),
            existing: spread_a1_a2_b1_y3(),
            want: all([S, S, S, S]),
        },
        FilterCase {
            name: "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
            pod: p_foo().simple_spread(1, "zone", DNS, foo()).obj(),
            nodes: vec![
                zn("node-a", "zone1"),
                NodeBuilder::new("node-b")
                    .label("zon", "zone1")
                    .label("node", "node-b")
                    .obj(),
                zn("node-x", "zone2"),
                zn("node-y", "zone2"),
            ],
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo"]),
                ep("p-x1", "node-x", &["foo"]),
                ep("p-y1", "node-y", &["foo"]),
            ],
            want: all([S, UU, U, U]),
        },
        FilterCase {
            name: "pod cannot be scheduled as all nodes don't have label 'rack'",
            pod: p_foo().simple_spread(1, "rack", DNS, foo()).obj(),
            nodes: vec![zn("node-a", "zone1"), zn("node-x", "zone2")],
            existing: vec![],
            want: vec![("node-a", UU), ("node-x", UU)],
        },
        FilterCase {
            name: "pods spread across nodes as 2/1/0/3, only node-x fits",
            pod: p_foo().simple_spread(1, "node", DNS, foo()).obj(),
            nodes: four_zone_nodes(),
            existing: spread_a1_a2_b1_y3(),
            want: all([U, U, S, U]),
        },
        FilterCase {
            name: "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
            pod: p_foo().simple_spread(2, "node", DNS, foo()).obj(),
            nodes: four_zone_nodes(),
            existing: spread_a1_a2_b1_y3(),
            want: all([U, S, S, U]),
        },
        FilterCase {
            name: "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
            pod: PodBuilder::new("p")
                .label("bar", "")
                .simple_spread(1, "node", DNS, foo())
                .obj(),
            nodes: four_zone_nodes(),
            existing: spread_a1_a2_b1_y3(),
            want: all([U, S, S, U]),
        },
        FilterCase {
            name: "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
            pod: p_foo()
                .node_affinity("node", "In", &["node-a", "node-y"])
                .simple_spread(1, "node", DNS, foo())
                .obj(),
            nodes: four_zone_nodes(),
            existing: spread_a1_a2_b1_y3(),
            want: all([S, S, S, U]),
        },
        FilterCase {
            name: "terminating Pods should be excluded",
            pod: p_foo().simple_spread(1, "node", DNS, foo()).obj(),
            nodes: vec![nn("node-a"), nn("node-b")],
            existing: vec![
                PodBuilder::new("p-a")
                    .node("node-a")
                    .label("foo", "")
                    .terminating()
                    .obj(),
                ep("p-b", "node-b", &["foo"]),
            ],
            want: vec![("node-a", S), ("node-b", U)],
        },
        FilterCase {
            name: "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
            pod: p_foo()
                .node_affinity("node", "NotIn", &["node-b"])
                .simple_spread(1, "zone", DNS, foo())
                .obj(),
            nodes: four_zone_nodes(),
            existing: vec![
                ep("p-b1", "node-b", &["foo"]),
                ep("p-b2", "node-b", &["foo"]),
                ep("p-y1", "node-y", &["foo"]),
            ],
            want: all([S, S, U, U]),
        },
        FilterCase {
            name: "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
            pod: p_foo()
                .spread(2, "node", DNS, Some(foo()), Some(4), None, None, &[])
                .obj(),
            nodes: vec![nn("node-a"), nn("node-b"), nn("node-c")],
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-a2", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo"]),
                ep("p-b2", "node-b", &["foo"]),
                ep("p-c1", "node-c", &["foo"]),
            ],
            want: vec![("node-a", U), ("node-b", U), ("node-c", S)],
        },
        FilterCase {
            name: "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
            pod: p_foo()
                .spread(2, "node", DNS, Some(foo()), Some(2), None, None, &[])
                .obj(),
            nodes: vec![nn("node-a"), nn("node-b"), nn("node-c")],
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-a2", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo"]),
                ep("p-b2", "node-b", &["foo"]),
                ep("p-c1", "node-c", &["foo"]),
            ],
            want: vec![("node-a", S), ("node-b", S), ("node-c", S)],
        },
        FilterCase {
            name: "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
            pod: p_foo()
                .spread(2, "zone", DNS, Some(foo()), Some(3), None, None, &[])
                .obj(),
            nodes: four_zone_nodes(),
            existing: vec![
                ep("p-b1", "node-a", &["foo"]),
                ep("p-b2", "node-b", &["foo"]),
                ep("p-y1", "node-y", &["foo"]),
            ],
            want: all([U, U, S, S]),
        },
        FilterCase {
            name: "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
            pod: p_foo()
                .spread(2, "zone", DNS, Some(foo()), Some(1), None, None, &[])
                .obj(),
            nodes: four_zone_nodes(),
            existing: vec![
                ep("p-b1", "node-a", &["foo"]),
                ep("p-b2", "node-b", &["foo"]),
                ep("p-y1", "node-y", &["foo"]),
            ],
            want: all([S, S, S, S]),
        },
    ];
    run_filter_cases(cases);
}

#[test]
fn node_inclusion_policies_filter_matches_upstream() {
    use Code::{Success as S, Unschedulable as U};
    let foo_nodes = || {
        vec![
            NodeBuilder::new("node-a")
                .label("node", "node-a")
                .label("foo", "")
                .obj(),
            NodeBuilder::new("node-b")
                .label("node", "node-b")
                .label("foo", "")
                .obj(),
            NodeBuilder::new("node-x")
                .label("node", "node-x")
                .label("foo", "")
                .obj(),
            NodeBuilder::new("node-y").label("node", "node-y").obj(),
        ]
    };
    let tainted_nodes = || {
        vec![
            NodeBuilder::new("node-a")
                .label("node", "node-a")
                .label("foo", "")
                .obj(),
            NodeBuilder::new("node-b")
                .label("node", "node-b")
                .label("foo", "")
                .obj(),
            NodeBuilder::new("node-x")
                .label("node", "node-x")
                .label("foo", "")
                .obj(),
            NodeBuilder::new("node-y")
                .label("node", "node-y")
                .taint(TAINT, "NoSchedule")
                .obj(),
        ]
    };
    let existing = || {
        vec![
            ep("p-b1", "node-a", &["foo"]),
            ep("p-b2", "node-b", &["foo"]),
            ep("p-y1", "node-y", &["foo"]),
        ]
    };
    let all = |codes: [Code; 4]| {
        vec![
            ("node-a", codes[0]),
            ("node-b", codes[1]),
            ("node-x", codes[2]),
            ("node-y", codes[3]),
        ]
    };
    let cases = vec![
        FilterCase {
            name: "NodeAffinityPolicy honored with labelSelectors",
            pod: p_foo()
                .node_selector(&[("foo", "")])
                .simple_spread(1, "node", DNS, foo())
                .obj(),
            nodes: foo_nodes(),
            existing: existing(),
            want: all([U, U, S, S]),
        },
        FilterCase {
            name: "NodeAffinityPolicy ignored with labelSelectors",
            pod: p_foo()
                .node_selector(&[("foo", "")])
                .spread(1, "node", DNS, Some(foo()), None, Some("Ignore"), None, &[])
                .obj(),
            nodes: foo_nodes(),
            existing: existing(),
            want: all([U, U, S, U]),
        },
        FilterCase {
            name: "NodeAffinityPolicy honored with nodeAffinity",
            pod: p_foo()
                .node_affinity("foo", "In", &[""])
                .simple_spread(1, "node", DNS, foo())
                .obj(),
            nodes: foo_nodes(),
            existing: existing(),
            want: all([U, U, S, S]),
        },
        FilterCase {
            name: "NodeAffinityPolicy ignored with labelSelectors (nodeAffinity)",
            pod: p_foo()
                .node_affinity("foo", "In", &[""])
                .spread(1, "node", DNS, Some(foo()), None, Some("Ignore"), None, &[])
                .obj(),
            nodes: foo_nodes(),
            existing: existing(),
            want: all([U, U, S, U]),
        },
        FilterCase {
            name: "NodeTaintsPolicy honored",
            pod: p_foo()
                .spread(1, "node", DNS, Some(foo()), None, None, Some("Honor"), &[])
                .obj(),
            nodes: tainted_nodes(),
            existing: existing(),
            want: all([U, U, S, S]),
        },
        FilterCase {
            // Computed by hand: with the taint tolerated node-y counts again (1/1/0/1).
            name: "NodeTaintsPolicy honored, the pod tolerates the taint",
            pod: p_foo()
                .toleration(TAINT)
                .spread(1, "node", DNS, Some(foo()), None, None, Some("Honor"), &[])
                .obj(),
            nodes: tainted_nodes(),
            existing: existing(),
            want: all([U, U, S, U]),
        },
        FilterCase {
            name: "NodeTaintsPolicy ignored",
            pod: p_foo().simple_spread(1, "node", DNS, foo()).obj(),
            nodes: tainted_nodes(),
            existing: existing(),
            want: all([U, U, S, U]),
        },
    ];
    run_filter_cases(cases);
}

#[test]
fn multiple_constraints_filter_matches_upstream() {
    use Code::{Success as S, Unschedulable as U};
    let base = || {
        vec![
            ep("p-a1", "node-a", &["foo"]),
            ep("p-a2", "node-a", &["foo"]),
            ep("p-b1", "node-b", &["foo"]),
            ep("p-y1", "node-y", &["foo"]),
            ep("p-y2", "node-y", &["foo"]),
            ep("p-y3", "node-y", &["foo"]),
        ]
    };
    let zone_node = || {
        p_foo()
            .simple_spread(1, "zone", DNS, foo())
            .simple_spread(1, "node", DNS, foo())
            .obj()
    };
    let foo_bar = || {
        PodBuilder::new("p")
            .label("foo", "")
            .label("bar", "")
            .simple_spread(1, "zone", DNS, foo())
            .simple_spread(1, "node", DNS, bar())
            .obj()
    };
    let all = |codes: [Code; 4]| {
        vec![
            ("node-a", codes[0]),
            ("node-b", codes[1]),
            ("node-x", codes[2]),
            ("node-y", codes[3]),
        ]
    };
    let mut four = base();
    four.push(ep("p-y4", "node-y", &["foo"]));
    let cases = vec![
        FilterCase {
            name: "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
            pod: zone_node(),
            nodes: four_zone_nodes(),
            existing: base(),
            want: all([U, U, S, U]),
        },
        FilterCase {
            name: "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
            pod: zone_node(),
            nodes: four_zone_nodes(),
            existing: four,
            want: all([U, U, U, U]),
        },
        FilterCase {
            name: "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
            pod: foo_bar(),
            nodes: four_zone_nodes(),
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-y1", "node-y", &["bar"]),
            ],
            want: all([U, U, S, U]),
        },
    ];
    run_filter_cases(cases);
}

#[test]
fn filter_reasons_are_upstreams() {
    let pl = list_plugin();
    let pod = p_foo().simple_spread(1, "zone", DNS, foo()).obj();
    let nodes = vec![
        zn("node-a", "zone1"),
        NodeBuilder::new("node-b").label("node", "node-b").obj(),
        zn("node-x", "zone2"),
    ];
    let h = FakeHandle::new(&nodes, &[ep("p-a1", "node-a", &["foo"])], vec![]);
    let mut state = CycleState::new();
    assert!(pl.pre_filter(&mut state, &pod, &h).1.is_success());
    let s = pl.filter(&state, &pod, h.node("node-a"));
    assert_eq!(s.code(), Code::Unschedulable);
    assert_eq!(
        s.message(),
        "node(s) didn't match pod topology spread constraints"
    );
    let s = pl.filter(&state, &pod, h.node("node-b"));
    assert_eq!(s.code(), Code::UnschedulableAndUnresolvable);
    assert_eq!(
        s.message(),
        "node(s) didn't match pod topology spread constraints (missing required label)"
    );
    // Pods without hard constraints skip the Filter.
    let soft = p_foo().simple_spread(1, "zone", SA, foo()).obj();
    let mut state = CycleState::new();
    assert!(pl.pre_filter(&mut state, &soft, &h).1.is_skip());
}

#[test]
fn pre_filter_state_matches_upstream() {
    // TestPreFilterState "normal case with two spreadConstraints".
    let pod = p_foo()
        .simple_spread(1, "zone", DNS, foo())
        .simple_spread(1, "node", DNS, foo())
        .obj();
    let existing = vec![
        ep("p-a1", "node-a", &["foo"]),
        ep("p-a2", "node-a", &["foo"]),
        ep("p-b1", "node-b", &["foo"]),
        ep("p-y1", "node-y", &["foo"]),
        ep("p-y2", "node-y", &["foo"]),
        ep("p-y3", "node-y", &["foo"]),
        ep("p-y4", "node-y", &["foo"]),
    ];
    let h = FakeHandle::new(&four_zone_nodes(), &existing, vec![]);
    let mut state = CycleState::new();
    assert!(list_plugin()
        .pre_filter(&mut state, &pod, &h)
        .1
        .is_success());
    let s = state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .expect("state");
    let counts = |i: usize| -> Vec<(&str, i64)> {
        s.tp_value_to_match_num[i]
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect()
    };
    assert_eq!(counts(0), vec![("zone1", 3), ("zone2", 4)]);
    assert_eq!(
        counts(1),
        vec![("node-a", 2), ("node-b", 1), ("node-x", 0), ("node-y", 4)]
    );
    let path = |i: usize| {
        let p = &s.critical_paths[i].0;
        (
            (p[0].topology_value.as_str(), p[0].match_num),
            (p[1].topology_value.as_str(), p[1].match_num),
        )
    };
    assert_eq!(path(0), (("zone1", 3), ("zone2", 4)));
    assert_eq!(path(1), (("node-x", 0), ("node-b", 1)));
}

#[test]
fn add_pod_updates_state_as_upstream() {
    // TestPreFilterStateAddPod "node a and x both impact topologyKeyToMinPodsMap on zone and
    // node".
    let pl = list_plugin();
    let pod = p_foo()
        .simple_spread(1, "zone", DNS, foo())
        .simple_spread(1, "node", DNS, foo())
        .obj();
    let nodes = vec![zn("node-a", "zone1"), zn("node-x", "zone2")];
    let h = FakeHandle::new(&nodes, &[], vec![]);
    let mut state = CycleState::new();
    assert!(pl.pre_filter(&mut state, &pod, &h).1.is_success());
    let added = PodInfo::new(k8s_types::object::Shared::from_typed(ep(
        "p-a1",
        "node-a",
        &["foo"],
    )));
    assert!(pl
        .add_pod(&mut state, &pod, &added, h.node("node-a"))
        .is_success());
    let s = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
    let c0: BTreeMap<&str, i64> = s.tp_value_to_match_num[0]
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(c0, BTreeMap::from([("zone1", 1), ("zone2", 0)]));
    let p = &s.critical_paths[1].0;
    assert_eq!(
        (p[0].topology_value.as_str(), p[0].match_num),
        ("node-x", 0)
    );
    assert_eq!(
        (p[1].topology_value.as_str(), p[1].match_num),
        ("node-a", 1)
    );
    // Removing it again restores the empty-cluster counts.
    assert!(pl
        .remove_pod(&mut state, &pod, &added, h.node("node-a"))
        .is_success());
    let s = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
    assert_eq!(s.tp_value_to_match_num[0].get("zone1"), Some(&0));

    // "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled":
    // node-a fails the preemptor's node affinity, so its pods are not counted.
    let pod = p_foo()
        .node_affinity("foo", "NotIn", &["bar"])
        .simple_spread(1, "zone", DNS, foo())
        .obj();
    let nodes = vec![
        NodeBuilder::new("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
        NodeBuilder::new("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
    ];
    let existing = vec![
        PodBuilder::new("p-a2")
            .node("node-a")
            .label("foo", "")
            .label("zone", "zone1")
            .obj(),
        PodBuilder::new("p-b1")
            .node("node-b")
            .label("foo", "")
            .label("zone", "zone2")
            .obj(),
    ];
    let h = FakeHandle::new(&nodes, &existing, vec![]);
    let mut state = CycleState::new();
    assert!(pl.pre_filter(&mut state, &pod, &h).1.is_success());
    let added = PodInfo::new(k8s_types::object::Shared::from_typed(
        PodBuilder::new("p-a1")
            .node("node-a")
            .label("foo", "")
            .label("zone", "zone1")
            .obj(),
    ));
    assert!(pl
        .add_pod(&mut state, &pod, &added, h.node("node-a"))
        .is_success());
    let s = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY).unwrap();
    let c0: Vec<(&str, i64)> = s.tp_value_to_match_num[0]
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(c0, vec![("zone2", 1)]);
    let p = &s.critical_paths[0].0;
    assert_eq!((p[0].topology_value.as_str(), p[0].match_num), ("zone2", 1));
    assert_eq!(p[1].match_num, i64::from(i32::MAX));
}

struct ScoreCase {
    name: &'static str,
    pod: Pod,
    existing: Vec<Pod>,
    nodes: Vec<Node>,
    failed: Vec<Node>,
    objects: Vec<Object>,
    want: Vec<(&'static str, i64)>,
}

fn hn(name: &str) -> Node {
    NodeBuilder::new(name).label(HOST, name).obj()
}

fn zh(name: &str, zone: &str) -> Node {
    NodeBuilder::new(name)
        .label("zone", zone)
        .label(HOST, name)
        .obj()
}

fn run_score_cases(cases: Vec<ScoreCase>) {
    // Upstream runs TestPodTopologySpreadScore with `defaultingType: System`.
    let pl = system_plugin();
    for c in cases {
        let mut all = c.nodes.clone();
        all.extend(c.failed.iter().cloned());
        let h = FakeHandle::new(&all, &c.existing, c.objects);
        let filtered: Vec<&NodeInfo> = c.nodes.iter().map(|n| h.node(&n.metadata.name)).collect();
        let mut state = CycleState::new();
        let s = pl.pre_score_with_handle(&mut state, &c.pod, &filtered, &h);
        assert!(s.is_success(), "{}: PreScore {s:?}", c.name);
        assert_pre_score_matches_per_pod_count(&pl, &c.pod, &filtered, &h, c.name);
        let mut scores: Vec<NodeScore> = filtered
            .iter()
            .map(|n| NodeScore {
                name: n.name(),
                score: pl.score(&state, &c.pod, n).expect("score"),
            })
            .collect();
        assert!(pl.normalize_score(&state, &c.pod, &mut scores).is_success());
        let got: Vec<(&str, i64)> = scores.iter().map(|s| (s.name, s.score)).collect();
        assert_eq!(got, c.want, "{}", c.name);
    }
}

/// PreScore through the plugin (the topology index, [`PreScoreState::compute_indexed`]) and
/// upstream's count over every pod ([`PreScoreState::compute`]) give the same state, the same
/// Score on every filtered node and the same NormalizeScore. Returns the reference state (`None`
/// when PreScore skips) and whether Score read every filtered node by position.
fn assert_pre_score_matches_per_pod_count(
    pl: &PodTopologySpread,
    pod: &Pod,
    filtered: &[&NodeInfo],
    h: &FakeHandle,
    what: &str,
) -> Option<(PreScoreState, bool)> {
    let mut state = CycleState::new();
    let s = pl.pre_score_with_handle(&mut state, pod, filtered, h);
    let constraints = pl.constraints(pod, SA, Some(&h.api));
    if constraints.is_empty() || h.nodes.is_empty() {
        assert!(s.is_skip(), "{what}: {s:?}");
        return None;
    }
    assert!(s.is_success(), "{what}: {s:?}");
    let require_all = !pod.spec.topology_spread_constraints.is_empty() || !pl.system_defaulted;
    let want = PreScoreState::compute(pod, constraints, filtered, &h.nodes, require_all);
    let got = scoring::read(&state).expect("PreScore state");
    assert_eq!(got.constraints, want.constraints, "{what}: constraints");
    assert_eq!(
        got.ignored_nodes, want.ignored_nodes,
        "{what}: ignored nodes"
    );
    assert_eq!(
        got.topology_value_to_pod_counts, want.topology_value_to_pod_counts,
        "{what}: counts"
    );
    assert_eq!(
        got.topology_normalizing_weight, want.topology_normalizing_weight,
        "{what}: weights"
    );
    let indexed = got.indexed.as_ref().expect("read from the index");
    let by_position = filtered.iter().all(|n| indexed.knows(n));
    let mut got_scores = Vec::new();
    let mut want_scores = Vec::new();
    for n in filtered {
        let a = pl.score(&state, pod, n).expect("score");
        let b = want.score(pod, n);
        assert_eq!(a, b, "{what}: Score on {}", n.name());
        got_scores.push(NodeScore {
            name: n.name(),
            score: a,
        });
        want_scores.push(NodeScore {
            name: n.name(),
            score: b,
        });
    }
    let mut batch = vec![0; filtered.len()];
    pl.score_nodes(&state, pod, filtered, &mut batch)
        .expect("score_nodes");
    let one_by_one: Vec<i64> = got_scores.iter().map(|s| s.score).collect();
    assert_eq!(batch, one_by_one, "{what}: score_nodes");
    assert!(pl
        .normalize_score(&state, pod, &mut got_scores)
        .is_success());
    want.normalize(&mut want_scores);
    assert_eq!(got_scores, want_scores, "{what}: NormalizeScore");
    Some((want, by_position))
}

fn service(selector: &[(&str, &str)]) -> Object {
    let mut s = k8s_types::core::Service::default();
    s.metadata.name = "svc".into();
    s.spec.selector = Some(
        selector
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    Object::Service(Box::new(s))
}

#[test]
fn score_matches_upstream_single_constraint() {
    let host = |n| -> Pod { p_foo().simple_spread(n, HOST, SA, foo()).obj() };
    let p2103 = || {
        vec![
            ep("p-a1", "node-a", &["foo"]),
            ep("p-a2", "node-a", &["foo"]),
            ep("p-b1", "node-b", &["foo"]),
            ep("p-d1", "node-d", &["foo"]),
            ep("p-d2", "node-d", &["foo"]),
            ep("p-d3", "node-d", &["foo"]),
        ]
    };
    let p4321 = || {
        vec![
            ep("p-a1", "node-a", &["foo"]),
            ep("p-a2", "node-a", &["foo"]),
            ep("p-a3", "node-a", &["foo"]),
            ep("p-a4", "node-a", &["foo"]),
            ep("p-b1", "node-b", &["foo"]),
            ep("p-b2", "node-b", &["foo"]),
            ep("p-b3", "node-b", &["foo"]),
            ep("p-c1", "node-c", &["foo"]),
            ep("p-c2", "node-c", &["foo"]),
            ep("p-d1", "node-d", &["foo"]),
        ]
    };
    let p4213 = || {
        vec![
            ep("p-a1", "node-a", &["foo"]),
            ep("p-a2", "node-a", &["foo"]),
            ep("p-a3", "node-a", &["foo"]),
            ep("p-a4", "node-a", &["foo"]),
            ep("p-b1", "node-b", &["foo"]),
            ep("p-b2", "node-b", &["foo"]),
            ep("p-x1", "node-x", &["foo"]),
            ep("p-y1", "node-y", &["foo"]),
            ep("p-y2", "node-y", &["foo"]),
            ep("p-y3", "node-y", &["foo"]),
        ]
    };
    let abcd = || vec![hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")];
    let cases = vec![
        ScoreCase {
            name: "one constraint on node, no existing pods",
            pod: host(1),
            existing: vec![],
            nodes: vec![hn("node-a"), hn("node-b")],
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 100), ("node-b", 100)],
        },
        ScoreCase {
            name: "one constraint on node, only one node is candidate",
            pod: host(1),
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-a2", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo"]),
            ],
            nodes: vec![hn("node-a")],
            failed: vec![hn("node-b")],
            objects: vec![],
            want: vec![("node-a", 100)],
        },
        ScoreCase {
            name: "one constraint on node, all nodes have the same number of matching pods",
            pod: host(1),
            existing: vec![ep("p-a1", "node-a", &["foo"]), ep("p-b1", "node-b", &["foo"])],
            nodes: vec![hn("node-a"), hn("node-b")],
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 100), ("node-b", 100)],
        },
        ScoreCase {
            name: "one constraint on node, all 4 nodes are candidates",
            pod: host(1),
            existing: p2103(),
            nodes: abcd(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 20), ("node-b", 60), ("node-c", 100), ("node-d", 0)],
        },
        ScoreCase {
            name: "one constraint on node, null selector",
            pod: p_foo()
                .spread(1, HOST, SA, None, None, None, None, &[])
                .obj(),
            existing: p2103(),
            nodes: abcd(),
            failed: vec![],
            objects: vec![],
            want: vec![
                ("node-a", 100),
                ("node-b", 100),
                ("node-c", 100),
                ("node-d", 100),
            ],
        },
        ScoreCase {
            name: "one constraint on node, all 4 nodes are candidates, maxSkew=2",
            pod: host(2),
            existing: p2103(),
            nodes: abcd(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 33), ("node-b", 66), ("node-c", 100), ("node-d", 16)],
        },
        ScoreCase {
            name: "one constraint on node, all 4 nodes are candidates, maxSkew=3",
            pod: host(3),
            existing: p4321(),
            nodes: abcd(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)],
        },
        ScoreCase {
            name: "system defaulting, nodes don't have zone, pods match service",
            pod: p_foo().obj(),
            existing: p4321(),
            nodes: abcd(),
            failed: vec![],
            objects: vec![service(&[("foo", "")])],
            want: vec![("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)],
        },
        ScoreCase {
            name: "one constraint on node, 3 out of 4 nodes are candidates",
            pod: host(1),
            existing: p4213(),
            nodes: vec![hn("node-a"), hn("node-b"), hn("node-x")],
            failed: vec![hn("node-y")],
            objects: vec![],
            want: vec![("node-a", 33), ("node-b", 83), ("node-x", 100)],
        },
        ScoreCase {
            name: "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
            pod: host(1),
            existing: p4213(),
            nodes: vec![
                hn("node-a"),
                NodeBuilder::new("node-b").label("n", "node-b").obj(),
                hn("node-x"),
            ],
            failed: vec![hn("node-y")],
            objects: vec![],
            want: vec![("node-a", 16), ("node-b", 0), ("node-x", 100)],
        },
        ScoreCase {
            name: "one constraint on zone, 3 out of 4 nodes are candidates",
            pod: p_foo().simple_spread(1, "zone", SA, foo()).obj(),
            existing: p4213(),
            nodes: vec![
                zh("node-a", "zone1"),
                zh("node-b", "zone1"),
                zh("node-x", "zone2"),
            ],
            failed: vec![zh("node-y", "zone2")],
            objects: vec![],
            want: vec![("node-a", 75), ("node-b", 75), ("node-x", 100)],
        },
        ScoreCase {
            name: "existing pods in a different namespace do not count",
            pod: host(1),
            existing: vec![
                PodBuilder::new("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
                ep("p-a2", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo"]),
                ep("p-b2", "node-b", &["foo"]),
            ],
            nodes: vec![hn("node-a"), hn("node-b")],
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 100), ("node-b", 33)],
        },
        ScoreCase {
            name: "terminating Pods should be excluded",
            pod: host(1),
            existing: vec![
                PodBuilder::new("p-a")
                    .node("node-a")
                    .label("foo", "")
                    .terminating()
                    .obj(),
                ep("p-b", "node-b", &["foo"]),
            ],
            nodes: vec![hn("node-a"), hn("node-b")],
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 100), ("node-b", 0)],
        },
        ScoreCase {
            name: "minDomains has no effect when ScheduleAnyway",
            pod: p_foo()
                .spread(2, "node", SA, Some(foo()), Some(10), None, None, &[])
                .obj(),
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-a2", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo"]),
                ep("p-b2", "node-b", &["foo"]),
                ep("p-c1", "node-c", &["foo"]),
            ],
            nodes: vec![nn("node-a"), nn("node-b"), nn("node-c")],
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 75), ("node-b", 75), ("node-c", 100)],
        },
    ];
    run_score_cases(cases);
}

#[test]
fn score_matches_upstream_two_constraints() {
    let zone_host = |zs: LabelSelector, hs: LabelSelector| -> Pod {
        PodBuilder::new("p")
            .label("foo", "")
            .label("bar", "")
            .simple_spread(1, "zone", SA, zs)
            .simple_spread(1, HOST, SA, hs)
            .obj()
    };
    let abxy = || {
        vec![
            zh("node-a", "zone1"),
            zh("node-b", "zone1"),
            zh("node-x", "zone2"),
            zh("node-y", "zone2"),
        ]
    };
    let cases = vec![
        ScoreCase {
            name: "two Constraints on zone and node, 2 out of 4 nodes are candidates",
            pod: p_foo()
                .simple_spread(1, "zone", SA, foo())
                .simple_spread(1, HOST, SA, foo())
                .obj(),
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-a2", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo"]),
                ep("p-x1", "node-x", &["foo"]),
                ep("p-x2", "node-x", &["foo"]),
                ep("p-y1", "node-y", &["foo"]),
                ep("p-y2", "node-y", &["foo"]),
                ep("p-y3", "node-y", &["foo"]),
                ep("p-y4", "node-y", &["foo"]),
            ],
            nodes: vec![zh("node-a", "zone1"), zh("node-x", "zone2")],
            failed: vec![zh("node-b", "zone1"), zh("node-y", "zone2")],
            objects: vec![],
            want: vec![("node-a", 100), ("node-x", 63)],
        },
        ScoreCase {
            name: "two Constraints on zone, 2 out of 4 nodes are candidates",
            pod: PodBuilder::new("p")
                .label("foo", "")
                .label("bar", "")
                .simple_spread(1, "zone", SA, foo())
                .simple_spread(1, "zone", SA, bar())
                .obj(),
            existing: vec![
                ep("p-a1", "node-a", &["foo", "bar"]),
                ep("p-a2", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo", "bar"]),
                ep("p-y1", "node-y", &["foo"]),
                ep("p-y2", "node-y", &["foo", "bar"]),
                ep("p-y3", "node-y", &["foo"]),
            ],
            nodes: vec![
                NodeBuilder::new("node-a").label("zone", "zone1").obj(),
                NodeBuilder::new("node-x").label("zone", "zone2").obj(),
            ],
            failed: vec![
                NodeBuilder::new("node-b").label("zone", "zone1").obj(),
                NodeBuilder::new("node-y").label("zone", "zone2").obj(),
            ],
            objects: vec![],
            want: vec![("node-a", 85), ("node-x", 100)],
        },
        ScoreCase {
            name: "two Constraints on zone and node, with different labelSelectors",
            pod: zone_host(foo(), bar()),
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo", "bar"]),
                ep("p-y1", "node-y", &["foo"]),
                ep("p-y2", "node-y", &["bar"]),
            ],
            nodes: abxy(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 60), ("node-b", 20), ("node-x", 100), ("node-y", 60)],
        },
        ScoreCase {
            name: "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
            pod: zone_host(foo(), bar()),
            existing: vec![
                ep("p-b1", "node-b", &["bar"]),
                ep("p-x1", "node-x", &["foo"]),
                ep("p-y1", "node-y", &["foo", "bar"]),
            ],
            nodes: abxy(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 100), ("node-b", 60), ("node-x", 40), ("node-y", 0)],
        },
        ScoreCase {
            name: "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
            pod: zone_host(foo(), bar()),
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo", "bar"]),
                ep("p-y1", "node-y", &["foo"]),
                ep("p-y2", "node-y", &["bar"]),
            ],
            nodes: vec![
                zh("node-a", "zone1"),
                zh("node-b", "zone1"),
                zh("node-x", "zone2"),
            ],
            failed: vec![zh("node-y", "zone2")],
            objects: vec![],
            want: vec![("node-a", 50), ("node-b", 25), ("node-x", 100)],
        },
    ];
    run_score_cases(cases);
}

#[test]
fn score_matches_upstream_policies_and_match_label_keys() {
    let abc_foo = || {
        vec![
            NodeBuilder::new("node-a")
                .label("node", "node-a")
                .label("foo", "")
                .obj(),
            NodeBuilder::new("node-b")
                .label("node", "node-b")
                .label("foo", "")
                .obj(),
            NodeBuilder::new("node-c").label("node", "node-c").obj(),
        ]
    };
    let abc_taint = || {
        vec![
            nn("node-a"),
            nn("node-b"),
            NodeBuilder::new("node-c")
                .label("node", "node-c")
                .taint(TAINT, "NoSchedule")
                .obj(),
        ]
    };
    let existing = || {
        vec![
            ep("p-a1", "node-a", &["foo"]),
            ep("p-a2", "node-a", &["foo"]),
            ep("p-b1", "node-b", &["foo"]),
            ep("p-c1", "node-c", &["foo"]),
        ]
    };
    let abcd_zone = || {
        vec![
            zh("node-a", "zone1"),
            zh("node-b", "zone1"),
            zh("node-c", "zone2"),
            zh("node-d", "zone2"),
        ]
    };
    let cases = vec![
        ScoreCase {
            name: "NodeAffinityPolicy honoed with labelSelectors",
            pod: p_foo()
                .node_selector(&[("foo", "")])
                .simple_spread(1, "node", SA, foo())
                .obj(),
            existing: existing(),
            nodes: abc_foo(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 0), ("node-b", 33), ("node-c", 100)],
        },
        ScoreCase {
            name: "NodeAffinityPolicy ignored with labelSelectors",
            pod: p_foo()
                .node_selector(&[("foo", "")])
                .spread(1, "node", SA, Some(foo()), None, Some("Ignore"), None, &[])
                .obj(),
            existing: existing(),
            nodes: abc_foo(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 66), ("node-b", 100), ("node-c", 100)],
        },
        ScoreCase {
            name: "NodeAffinityPolicy honoed with nodeAffinity",
            pod: p_foo()
                .node_affinity("foo", "In", &[""])
                .simple_spread(1, "node", SA, foo())
                .obj(),
            existing: existing(),
            nodes: abc_foo(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 0), ("node-b", 33), ("node-c", 100)],
        },
        ScoreCase {
            name: "NodeAffinityPolicy ignored with nodeAffinity",
            pod: p_foo()
                .node_affinity("foo", "In", &[""])
                .spread(1, "node", SA, Some(foo()), None, Some("Ignore"), None, &[])
                .obj(),
            existing: existing(),
            nodes: abc_foo(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 66), ("node-b", 100), ("node-c", 100)],
        },
        ScoreCase {
            name: "NodeTaintsPolicy honored",
            pod: p_foo()
                .spread(1, "node", SA, Some(foo()), None, None, Some("Honor"), &[])
                .obj(),
            existing: existing(),
            nodes: abc_taint(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 0), ("node-b", 33), ("node-c", 100)],
        },
        ScoreCase {
            name: "NodeTaintsPolicy ignored",
            pod: p_foo().simple_spread(1, "node", SA, foo()).obj(),
            existing: existing(),
            nodes: abc_taint(),
            failed: vec![],
            objects: vec![],
            want: vec![("node-a", 66), ("node-b", 100), ("node-c", 100)],
        },
        ScoreCase {
            name: "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
            pod: PodBuilder::new("p")
                .label("foo", "")
                .label("bar", "")
                .spread(
                    1,
                    "zone",
                    SA,
                    Some(LabelSelector::default()),
                    None,
                    None,
                    None,
                    &["foo"],
                )
                .spread(
                    1,
                    HOST,
                    SA,
                    Some(LabelSelector::default()),
                    None,
                    None,
                    None,
                    &["bar"],
                )
                .obj(),
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo", "bar"]),
                ep("p-y1", "node-c", &["foo"]),
                ep("p-y2", "node-c", &["bar"]),
            ],
            nodes: abcd_zone(),
            failed: vec![],
            objects: vec![],
            want: vec![
                ("node-a", 60),
                ("node-b", 20),
                ("node-c", 60),
                ("node-d", 100),
            ],
        },
        ScoreCase {
            name: "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
            pod: PodBuilder::new("p")
                .label("foo", "")
                .label("bar", "")
                .label("baz", "")
                .simple_spread(1, "zone", SA, foo())
                .spread(1, HOST, SA, Some(bar()), None, None, None, &["baz"])
                .obj(),
            existing: vec![
                ep("p-a1", "node-a", &["foo"]),
                ep("p-b1", "node-b", &["foo", "bar", "baz"]),
                ep("p-c1", "node-c", &["foo"]),
                ep("p-c2", "node-c", &["bar"]),
                ep("p-d3", "node-c", &["bar", "baz"]),
            ],
            nodes: abcd_zone(),
            failed: vec![],
            objects: vec![],
            want: vec![
                ("node-a", 60),
                ("node-b", 20),
                ("node-c", 60),
                ("node-d", 100),
            ],
        },
    ];
    run_score_cases(cases);
}

fn replica_set(name: &str, selector: LabelSelector) -> Object {
    let mut rs = ReplicaSet::default();
    rs.metadata.name = name.into();
    rs.metadata.namespace = Some("default".into());
    rs.spec.selector = Some(selector);
    Object::ReplicaSet(Box::new(rs))
}

#[test]
fn pre_score_skips_as_upstream() {
    // TestPreScoreSkip "the pod doesn't have soft topology spread Constraints".
    let nodes = vec![hn("node-a"), hn("node-b")];
    let h = FakeHandle::new(&nodes, &[], vec![]);
    let refs: Vec<&NodeInfo> = h.nodes.iter().collect();
    let pod = PodBuilder::new("p").namespace("default").obj();
    let mut state = CycleState::new();
    assert!(list_plugin()
        .pre_score_with_handle(&mut state, &pod, &refs, &h)
        .is_skip());

    // "default constraints and a replicaset that doesn't match": the pod's owner rs2 does not
    // exist, so the default selector is empty.
    let pl = PodTopologySpread::new(&PodTopologySpreadArgs {
        default_constraints: vec![DefaultConstraint {
            max_skew: 2,
            topology_key: "planet".into(),
            when_unsatisfiable: SA.into(),
            ..Default::default()
        }],
        defaulting_type: LIST_DEFAULTING.into(),
    });
    let nodes = vec![NodeBuilder::new("node-a").label("planet", "mars").obj()];
    let h = FakeHandle::new(&nodes, &[], vec![replica_set("rs1", exists("tar"))]);
    let refs: Vec<&NodeInfo> = h.nodes.iter().collect();
    let pod = PodBuilder::new("p")
        .namespace("default")
        .label("foo", "bar")
        .label("baz", "sup")
        .owner("apps/v1", "ReplicaSet", "rs2")
        .obj();
    let mut state = CycleState::new();
    assert!(pl
        .pre_score_with_handle(&mut state, &pod, &refs, &h)
        .is_skip());
}

#[test]
fn system_default_constraints_use_the_replica_set_selector() {
    // TestPreScoreStateEmptyNodes "system default constraints and a replicaset": nodes without a
    // zone are not excluded, they form the zone "".
    let nodes = vec![
        NodeBuilder::new("node-a")
            .label(HOST, "node-a")
            .label("topology.kubernetes.io/zone", "mars")
            .obj(),
        NodeBuilder::new("node-b")
            .label(HOST, "node-b")
            .label("topology.kubernetes.io/zone", "mars")
            .obj(),
        hn("node-c"),
        hn("node-d"),
    ];
    let h = FakeHandle::new(&nodes, &[], vec![replica_set("rs1", foo())]);
    let refs: Vec<&NodeInfo> = h.nodes.iter().collect();
    let pod = PodBuilder::new("p")
        .namespace("default")
        .label("foo", "tar")
        .label("baz", "sup")
        .owner("apps/v1", "ReplicaSet", "rs1")
        .obj();
    let mut state = CycleState::new();
    let pl = system_plugin();
    assert!(pl
        .pre_score_with_handle(&mut state, &pod, &refs, &h)
        .is_success());
    let s = state
        .read::<scoring::PreScoreState>(PRE_SCORE_STATE_KEY)
        .unwrap();
    let keys: Vec<(i32, &str)> = s
        .constraints
        .iter()
        .map(|c| (c.max_skew, c.topology_key.as_str()))
        .collect();
    assert_eq!(keys, vec![(3, HOST), (5, "topology.kubernetes.io/zone")]);
    for c in &s.constraints {
        assert!(c.selector.matches(&pod.metadata.labels));
        assert!(!c
            .selector
            .matches(&BTreeMap::from([("baz".to_string(), "sup".to_string())])));
    }
    assert!(s.topology_value_to_pod_counts[0].is_empty());
    let zones: Vec<(&str, i64)> = s.topology_value_to_pod_counts[1]
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(zones, vec![("", 0), ("mars", 0)]);
    assert_eq!(
        s.topology_normalizing_weight,
        vec![
            topology_normalizing_weight(4),
            topology_normalizing_weight(2)
        ]
    );
    assert!(s.ignored_nodes.is_empty());
}

#[test]
fn factory_validates_args_with_field_paths() {
    let args = serde_json::json!({
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]
    });
    let err = PodTopologySpread::factory(&PluginArgs {
        name: names::POD_TOPOLOGY_SPREAD,
        args: Some(&args),
        path: "profiles[0].pluginConfig[0].args".into(),
    })
    .err()
    .expect("invalid args");
    assert_eq!(
        err.to_string(),
        "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"
    );
    let ok = PodTopologySpread::factory(&PluginArgs {
        name: names::POD_TOPOLOGY_SPREAD,
        args: None,
        path: "profiles[0].pluginConfig".into(),
    })
    .expect("defaults");
    assert_eq!(ok.name(), "PodTopologySpread");
    assert_eq!(
        system_plugin().default_constraints(),
        system_default_constraints()
    );
}

/// xorshift64: a fixed-seed generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const ZONE: &str = "topology.kubernetes.io/zone";

fn replica_set_in(ns: &str, name: &str, app: &str) -> Object {
    let mut rs = ReplicaSet::default();
    rs.metadata.name = name.into();
    rs.metadata.namespace = Some(ns.into());
    rs.spec.selector = Some(req_selector("app", "In", &[app]));
    Object::ReplicaSet(Box::new(rs))
}

/// A random cluster: nodes with or without a zone (some with the zone `""`), a few without a
/// hostname label, some tainted, some with a disk label; pods in two namespaces, some of them
/// terminating.
fn random_cluster(rng: &mut Rng) -> (Vec<Node>, Vec<Pod>) {
    let n = 1 + rng.below(30);
    let mut nodes = Vec::new();
    for i in 0..n {
        let name = format!("node-{i:02}");
        let mut b = NodeBuilder::new(&name);
        if rng.below(12) != 0 {
            b = b.label(HOST, &name);
        }
        match rng.below(6) {
            0 => {}
            1 => b = b.label(ZONE, ""),
            _ => b = b.label(ZONE, rng.pick(&["z0", "z1", "z2"])),
        }
        if rng.below(2) == 0 {
            b = b.label("disk", rng.pick(&["ssd", "hdd"]));
        }
        if rng.below(6) == 0 {
            b = b.taint("dedicated", "NoSchedule");
        }
        nodes.push(b.obj());
    }
    let mut pods = Vec::new();
    for k in 0..rng.below(n * 6 + 1) {
        let node = format!("node-{:02}", rng.below(n));
        let mut b = PodBuilder::new(&format!("e{k}"))
            .namespace(rng.pick(&["ns-a", "ns-b"]))
            .label("app", rng.pick(&["web", "db", "cache"]))
            .node(&node);
        if rng.below(2) == 0 {
            b = b.label("tier", rng.pick(&["fe", "be"]));
        }
        if rng.below(10) == 0 {
            b = b.terminating();
        }
        pods.push(b.obj());
    }
    (nodes, pods)
}

/// An incoming pod: owned by a ReplicaSet or selected by a Service (the default constraints
/// apply), or with its own soft constraints on the zone, the hostname or the disk label, with
/// random node inclusion policies, matchLabelKeys, nodeSelector, node affinity and tolerations.
fn random_incoming(rng: &mut Rng, i: usize) -> Pod {
    let app = rng.pick(&["web", "db", "cache"]);
    let mut b = PodBuilder::new(&format!("p{i}"))
        .namespace(rng.pick(&["ns-a", "ns-b"]))
        .label("app", app)
        .label("tier", rng.pick(&["fe", "be"]));
    match rng.below(4) {
        // Owned by its ReplicaSet (rs-cache exists in no namespace: only a Service can select).
        0 | 1 => b = b.owner("apps/v1", "ReplicaSet", &format!("rs-{app}")),
        // No owner: only the Service of app=cache in ns-a selects it.
        2 => {}
        _ => {
            for _ in 0..1 + rng.below(2) {
                let key = rng.pick(&[ZONE, ZONE, HOST, "disk"]);
                let sel = req_selector("app", "In", &[app, rng.pick(&["web", "db"])]);
                let affinity_policy = [None, Some("Honor"), Some("Ignore")][rng.below(3)];
                let taints_policy = [None, Some("Honor"), Some("Ignore")][rng.below(3)];
                let keys: &[&str] = if rng.below(3) == 0 { &["tier"] } else { &[] };
                let when = if rng.below(6) == 0 { DNS } else { SA };
                b = b.spread(
                    1 + rng.below(3) as i32,
                    key,
                    when,
                    Some(sel),
                    None,
                    affinity_policy,
                    taints_policy,
                    keys,
                );
            }
        }
    }
    match rng.below(5) {
        0 => b = b.node_selector(&[("disk", "ssd")]),
        1 => b = b.node_affinity(ZONE, "In", &["z0", "z1", ""]),
        _ => {}
    }
    if rng.below(3) == 0 {
        b = b.toleration("dedicated");
    }
    b.obj()
}

#[test]
fn pre_score_from_the_index_equals_the_per_pod_count_on_random_clusters() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // System defaults (nodes without a zone are in the zone ""), and listed defaults (every key
    // required); each keeps its index from cluster to cluster.
    let plugins = [
        system_plugin(),
        PodTopologySpread::new(&PodTopologySpreadArgs {
            default_constraints: vec![
                DefaultConstraint {
                    max_skew: 2,
                    topology_key: ZONE.into(),
                    when_unsatisfiable: SA.into(),
                    ..Default::default()
                },
                DefaultConstraint {
                    max_skew: 1,
                    topology_key: HOST.into(),
                    when_unsatisfiable: SA.into(),
                    ..Default::default()
                },
            ],
            defaulting_type: LIST_DEFAULTING.into(),
        }),
    ];
    let objects = vec![
        replica_set_in("ns-a", "rs-web", "web"),
        replica_set_in("ns-b", "rs-web", "web"),
        replica_set_in("ns-a", "rs-db", "db"),
        replica_set_in("ns-b", "rs-db", "db"),
        {
            let mut svc = service(&[("app", "cache")]);
            if let Object::Other(u, _) = &mut svc {
                u.metadata.namespace = Some("ns-a".into());
            }
            svc
        },
    ];
    #[derive(Debug, Default)]
    struct Seen {
        states: usize,
        nonzero: usize,
        empty_zone_counted: usize,
        ignored: usize,
        by_position: usize,
        foreign: usize,
        /// A node inclusion policy could exclude nodes (the count is summed node by node).
        policies: usize,
    }
    let mut seen = Seen::default();
    for round in 0..150 {
        let (nodes, pods) = random_cluster(&mut rng);
        let h = FakeHandle::new(&nodes, &pods, objects.clone());
        for i in 0..6 {
            let pod = random_incoming(&mut rng, i);
            let pl = &plugins[rng.below(2)];
            // A random subset of the nodes passed Filter; sometimes one of them is a copy from
            // outside the snapshot (as preemption's), which Score reads by its labels and pods.
            let copy;
            let mut filtered: Vec<&NodeInfo> =
                h.nodes.iter().filter(|_| rng.below(4) != 0).collect();
            if !filtered.is_empty() && rng.below(5) == 0 {
                let k = rng.below(filtered.len());
                copy = filtered[k].clone();
                filtered[k] = &copy;
                seen.foreign += 1;
            }
            let what = format!("round {round}, pod {i}");
            let Some((want, by_position)) =
                assert_pre_score_matches_per_pod_count(pl, &pod, &filtered, &h, &what)
            else {
                continue;
            };
            seen.states += 1;
            seen.by_position += usize::from(by_position);
            let counts = &want.topology_value_to_pod_counts;
            seen.nonzero += usize::from(counts.iter().any(|m| m.values().any(|&n| n > 0)));
            seen.empty_zone_counted += usize::from(
                pod.spec.topology_spread_constraints.is_empty()
                    && counts.iter().any(|m| m.get("").is_some_and(|&n| n > 0)),
            );
            seen.ignored += usize::from(!want.ignored_nodes.is_empty());
            let tainted = h.nodes.iter().any(NodeInfo::has_taints);
            seen.policies += usize::from(want.constraints.iter().any(|c| {
                (c.honor_node_affinity && has_required_node_affinity(&pod))
                    || (c.honor_node_taints && tainted)
            }));
        }
    }
    assert!(
        seen.states > 400
            && seen.nonzero > 200
            && seen.empty_zone_counted > 80
            && seen.ignored > 150
            && seen.by_position > 250
            && seen.foreign > 80
            && seen.policies > 150,
        "{seen:?}"
    );
}
