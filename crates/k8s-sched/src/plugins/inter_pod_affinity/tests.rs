//! InterPodAffinity unit tests, table-driven, with the cases and expected statuses and scores of
//! upstream `interpodaffinity/filtering_test.go` (`TestRequiredAffinitySingleNode`,
//! `TestRequiredAffinityMultipleNodes`) and `scoring_test.go` (`TestPreferredAffinity`,
//! `TestPreferredAffinityWithHardPodAffinitySymmetricWeight`). Upstream's current Filter returns
//! one reason per status; the older two-reason form is not reproduced.

use k8s_sched_framework::{Code, CycleState, NodeScore, PodInfo};
use k8s_types::core::{Namespace, Node, Pod, PodAffinityTerm};
use k8s_types::labels::LabelSelector;
use k8s_types::object::Object;

use super::*;
use crate::plugins::fixtures::{map, req_selector, FakeHandle, NodeBuilder, PodBuilder, TermKind};

const IN: &str = "In";
const NOT_IN: &str = "NotIn";
const EXISTS: &str = "Exists";
const R: TermKind = TermKind::Required;

fn plugin(weight: i32, ignore: bool) -> InterPodAffinity {
    InterPodAffinity::new(&InterPodAffinityArgs {
        hard_pod_affinity_weight: Some(weight),
        ignore_preferred_terms_of_existing_pods: ignore,
    })
}

fn node(name: &str, labels: &[(&str, &str)]) -> Node {
    NodeBuilder::new(name).labels(labels).obj()
}

/// A pod with labels (namespace `""` as upstream's wrapper).
fn pod(labels: &[(&str, &str)]) -> PodBuilder {
    let mut b = PodBuilder::new("p");
    for (k, v) in labels {
        b = b.label(k, v);
    }
    b
}

fn term(sel: LabelSelector, topology_key: &str) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: Some(sel),
        topology_key: topology_key.into(),
        ..Default::default()
    }
}

/// A selector ANDing several requirements.
fn reqs(items: &[(&str, &str, &[&str])]) -> LabelSelector {
    let mut s = LabelSelector::default();
    for (k, op, vals) in items {
        s.match_expressions
            .extend(req_selector(k, op, vals).match_expressions);
    }
    s
}

struct FilterCase {
    name: &'static str,
    pod: Pod,
    pods: Vec<Pod>,
    nodes: Vec<Node>,
    /// `None`: PreFilter must Skip. Otherwise one (code, reason) per node in order.
    want: Option<Vec<(Code, &'static str)>>,
}

const OK: (Code, &str) = (Code::Success, "");

fn aff_fail() -> (Code, &'static str) {
    (
        Code::UnschedulableAndUnresolvable,
        ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    )
}
fn anti_fail() -> (Code, &'static str) {
    (
        Code::Unschedulable,
        ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    )
}
fn existing_fail() -> (Code, &'static str) {
    (
        Code::Unschedulable,
        ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    )
}

fn run_filter_cases(cases: Vec<FilterCase>) {
    let pl = plugin(1, false);
    for c in cases {
        let h = FakeHandle::new(&c.nodes, &c.pods, vec![]);
        let mut state = CycleState::new();
        let (_, s) = pl.pre_filter(&mut state, &c.pod, &h);
        let Some(want) = c.want else {
            assert!(s.is_skip(), "{}: PreFilter {s:?}", c.name);
            continue;
        };
        assert!(s.is_success(), "{}: PreFilter {s:?}", c.name);
        for (n, (code, reason)) in c.nodes.iter().zip(want) {
            let got = pl.filter(&state, &c.pod, h.node(&n.metadata.name));
            assert_eq!(
                (got.code(), got.message().as_str()),
                (code, reason),
                "{}: node {}",
                c.name,
                n.metadata.name
            );
        }
    }
}

#[test]
fn required_affinity_single_node_matches_upstream() {
    let pod_label = [("service", "securityscan")];
    let pod_label2 = [("security", "S1")];
    let node1 = || vec![node("node1", &[("region", "r1"), ("zone", "z11")])];
    let existing = || vec![pod(&pod_label).node("node1").obj()];
    let cases = vec![
        FilterCase {
            name: "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
            pod: PodBuilder::new("p").obj(),
            pods: vec![],
            nodes: node1(),
            want: None,
        },
        FilterCase {
            name: "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
            pod: pod(&pod_label2)
                .affinity(false, R, "service", IN, &["securityscan", "value2"], "region")
                .obj(),
            pods: existing(),
            nodes: node1(),
            want: Some(vec![OK]),
        },
        FilterCase {
            name: "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
            pod: pod(&pod_label2)
                .affinity(false, R, "service", NOT_IN, &["securityscan3", "value3"], "region")
                .obj(),
            pods: existing(),
            nodes: node1(),
            want: Some(vec![OK]),
        },
        FilterCase {
            name: "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
            pod: pod(&pod_label2)
                .pod_affinity_term(
                    false,
                    R,
                    PodAffinityTerm {
                        label_selector: Some(req_selector(
                            "service",
                            IN,
                            &["securityscan", "value2"],
                        )),
                        namespaces: vec!["DiffNameSpace".into()],
                        ..Default::default()
                    },
                )
                .obj(),
            pods: vec![pod(&pod_label).namespace("ns").node("node1").obj()],
            nodes: node1(),
            want: Some(vec![aff_fail()]),
        },
        FilterCase {
            name: "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
            pod: pod(&pod_label)
                .affinity(false, R, "service", IN, &["antivirusscan", "value2"], "")
                .obj(),
            pods: existing(),
            nodes: node1(),
            want: Some(vec![aff_fail()]),
        },
        FilterCase {
            name: "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
            pod: pod(&pod_label2)
                .pod_affinity_term(
                    false,
                    R,
                    term(
                        reqs(&[("service", EXISTS, &[]), ("wrongkey", "DoesNotExist", &[])]),
                        "region",
                    ),
                )
                .pod_affinity_term(
                    false,
                    R,
                    term(
                        reqs(&[
                            ("service", IN, &["securityscan"]),
                            ("service", NOT_IN, &["WrongValue"]),
                        ]),
                        "region",
                    ),
                )
                .obj(),
            pods: existing(),
            nodes: node1(),
            want: Some(vec![OK]),
        },
        FilterCase {
            name: "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
            pod: pod(&pod_label2)
                .pod_affinity_term(
                    false,
                    R,
                    term(
                        reqs(&[("service", EXISTS, &[]), ("wrongkey", "DoesNotExist", &[])]),
                        "region",
                    ),
                )
                .pod_affinity_term(
                    false,
                    R,
                    term(
                        reqs(&[
                            ("service", IN, &["securityscan2"]),
                            ("service", NOT_IN, &["WrongValue"]),
                        ]),
                        "region",
                    ),
                )
                .obj(),
            pods: existing(),
            nodes: node1(),
            want: Some(vec![aff_fail()]),
        },
        FilterCase {
            name: "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
            pod: pod(&pod_label2)
                .affinity(false, R, "service", IN, &["securityscan", "value2"], "region")
                .affinity(true, R, "service", IN, &["antivirusscan", "value2"], "node")
                .obj(),
            pods: existing(),
            nodes: node1(),
            want: Some(vec![OK]),
        },
        FilterCase {
            name: "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
            pod: pod(&pod_label2)
                .affinity(false, R, "service", IN, &["securityscan", "value2"], "region")
                .affinity(true, R, "service", IN, &["antivirusscan", "value2"], "node")
                .obj(),
            pods: vec![pod(&pod_label)
                .node("node1")
                .affinity(true, R, "service", IN, &["antivirusscan", "value2"], "node")
                .obj()],
            nodes: node1(),
            want: Some(vec![OK]),
        },
        FilterCase {
            name: "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
            pod: pod(&pod_label2)
                .affinity(false, R, "service", IN, &["securityscan", "value2"], "region")
                .affinity(true, R, "service", IN, &["securityscan", "value2"], "zone")
                .obj(),
            pods: existing(),
            nodes: node1(),
            want: Some(vec![anti_fail()]),
        },
        FilterCase {
            name: "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
            pod: pod(&pod_label)
                .affinity(false, R, "service", IN, &["securityscan", "value2"], "region")
                .affinity(true, R, "service", IN, &["antivirusscan", "value2"], "node")
                .obj(),
            pods: vec![pod(&pod_label)
                .node("node1")
                .affinity(true, R, "service", IN, &["securityscan", "value2"], "zone")
                .obj()],
            nodes: node1(),
            want: Some(vec![existing_fail()]),
        },
        FilterCase {
            name: "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
            pod: pod(&pod_label)
                .affinity(false, R, "service", NOT_IN, &["securityscan", "value2"], "region")
                .obj(),
            pods: vec![pod(&[("service", "securityscan")]).node("node2").obj()],
            nodes: node1(),
            want: Some(vec![aff_fail()]),
        },
        FilterCase {
            name: "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
            pod: pod(&pod_label).obj(),
            pods: vec![pod(&pod_label)
                .node("node1")
                .affinity(true, R, "service", IN, &["securityscan", "value2"], "zone")
                .obj()],
            nodes: node1(),
            want: Some(vec![existing_fail()]),
        },
        FilterCase {
            name: "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
            pod: pod(&pod_label).obj(),
            pods: vec![pod(&pod_label)
                .node("node1")
                .affinity(true, R, "service", NOT_IN, &["securityscan", "value2"], "zone")
                .obj()],
            nodes: node1(),
            want: None,
        },
        FilterCase {
            name: "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
            pod: pod(&pod_label)
                .affinity(true, R, "service", EXISTS, &[], "region")
                .affinity(true, R, "security", EXISTS, &[], "region")
                .obj(),
            pods: vec![pod(&pod_label2)
                .node("node1")
                .affinity(true, R, "security", EXISTS, &[], "zone")
                .obj()],
            nodes: node1(),
            want: Some(vec![anti_fail()]),
        },
        FilterCase {
            name: "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
            pod: pod(&pod_label)
                .affinity(true, R, "service", EXISTS, &[], "zone")
                .affinity(true, R, "security", EXISTS, &[], "zone")
                .obj(),
            pods: vec![pod(&pod_label2)
                .node("node1")
                .affinity(true, R, "security", EXISTS, &[], "zone")
                .obj()],
            nodes: node1(),
            want: Some(vec![anti_fail()]),
        },
        FilterCase {
            name: "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
            pod: pod(&pod_label2)
                .affinity(true, R, "security", EXISTS, &[], "zone")
                .obj(),
            pods: vec![pod(&pod_label)
                .node("node1")
                .affinity(true, R, "service", EXISTS, &[], "zone")
                .affinity(true, R, "security", EXISTS, &[], "zone")
                .obj()],
            nodes: node1(),
            want: Some(vec![existing_fail()]),
        },
        FilterCase {
            name: "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
            pod: pod(&[("abc", ""), ("xyz", "")])
                .affinity(true, R, "abc", EXISTS, &[], "zone")
                .affinity(true, R, "def", EXISTS, &[], "zone")
                .obj(),
            pods: vec![pod(&[("def", ""), ("xyz", "")])
                .node("node1")
                .affinity(true, R, "abc", EXISTS, &[], "zone")
                .affinity(true, R, "def", EXISTS, &[], "zone")
                .obj()],
            nodes: node1(),
            want: Some(vec![anti_fail()]),
        },
    ];
    run_filter_cases(cases);
}

#[test]
fn required_affinity_multiple_nodes_matches_upstream() {
    let china = [("region", "China")];
    let china_az1 = [("region", "China"), ("az", "az1")];
    let india = [("region", "India")];
    let r1 = |n: &str, z: &str| node(n, &[("region", "r1"), ("zone", z), ("hostname", n)]);
    let cases = vec![
        FilterCase {
            name: "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
            pod: PodBuilder::new("p")
                .affinity(false, R, "foo", IN, &["bar"], "region")
                .obj(),
            pods: vec![pod(&[("foo", "bar")]).node("node1").obj()],
            nodes: vec![node("node1", &china), node("node2", &china_az1), node("node3", &india)],
            want: Some(vec![OK, OK, aff_fail()]),
        },
        FilterCase {
            name: "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
            pod: pod(&[("foo", "bar"), ("service", "securityscan")])
                .affinity(false, R, "foo", IN, &["bar"], "zone")
                .affinity(false, R, "service", IN, &["securityscan"], "zone")
                .obj(),
            pods: vec![pod(&[("foo", "bar")]).node("nodeA").obj()],
            nodes: vec![
                node("nodeA", &[("zone", "az1"), ("hostname", "h1")]),
                node("nodeB", &[("zone", "az2"), ("hostname", "h2")]),
            ],
            want: Some(vec![OK, OK]),
        },
        FilterCase {
            name: "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
            pod: pod(&[("foo", "bar"), ("service", "securityscan")])
                .affinity(false, R, "foo", IN, &["bar"], "zone")
                .affinity(false, R, "service", IN, &["securityscan"], "zone")
                .obj(),
            pods: vec![pod(&[("foo", "bar")]).node("nodeA").obj()],
            nodes: vec![
                node("nodeA", &[("zoneLabel", "az1"), ("hostname", "h1")]),
                node("nodeB", &[("zoneLabel", "az2"), ("hostname", "h2")]),
            ],
            want: Some(vec![aff_fail(), aff_fail()]),
        },
        FilterCase {
            name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
            pod: PodBuilder::new("p")
                .affinity(true, R, "foo", IN, &["abc"], "region")
                .obj(),
            pods: vec![pod(&[("foo", "abc")]).node("nodeA").obj()],
            nodes: vec![
                node("nodeA", &[("region", "r1"), ("hostname", "nodeA")]),
                node("nodeB", &[("region", "r1"), ("hostname", "nodeB")]),
            ],
            want: Some(vec![anti_fail(), anti_fail()]),
        },
        FilterCase {
            name: "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
            pod: PodBuilder::new("p")
                .affinity(true, R, "foo", IN, &["abc"], "region")
                .affinity(true, R, "service", IN, &["securityscan"], "zone")
                .obj(),
            pods: vec![pod(&[("foo", "abc"), ("service", "securityscan")])
                .node("nodeA")
                .obj()],
            nodes: vec![r1("nodeA", "z1"), r1("nodeB", "z2")],
            want: Some(vec![anti_fail(), anti_fail()]),
        },
        FilterCase {
            name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
            pod: PodBuilder::new("p")
                .affinity(true, R, "foo", IN, &["abc"], "region")
                .obj(),
            pods: vec![pod(&[("foo", "abc")]).node("nodeA").obj()],
            nodes: vec![node("nodeA", &china), node("nodeB", &china_az1), node("nodeC", &india)],
            want: Some(vec![anti_fail(), anti_fail(), OK]),
        },
        FilterCase {
            name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
            pod: pod(&[("foo", "123")])
                .namespace("NS1")
                .affinity(true, R, "foo", IN, &["bar"], "region")
                .obj(),
            pods: vec![
                pod(&[("foo", "bar")]).namespace("NS1").node("nodeA").obj(),
                PodBuilder::new("q")
                    .namespace("NS2")
                    .node("nodeC")
                    .affinity(true, R, "foo", IN, &["123"], "region")
                    .obj(),
            ],
            nodes: vec![node("nodeA", &china), node("nodeB", &china_az1), node("nodeC", &india)],
            want: Some(vec![anti_fail(), anti_fail(), OK]),
        },
        FilterCase {
            name: "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
            pod: pod(&[("foo", "")]).obj(),
            pods: vec![PodBuilder::new("q")
                .node("nodeA")
                .affinity(true, R, "foo", EXISTS, &[], "invalid-node-label")
                .obj()],
            nodes: vec![
                node("nodeA", &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")]),
                node("nodeB", &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeB")]),
            ],
            want: None,
        },
        FilterCase {
            name: "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
            pod: PodBuilder::new("p")
                .node("nodeA")
                .affinity(true, R, "foo", EXISTS, &[], "invalid-node-label")
                .obj(),
            pods: vec![pod(&[("foo", "")]).node("nodeA").obj()],
            nodes: vec![
                node("nodeA", &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeA")]),
                node("nodeB", &[("region", "r1"), ("zone", "z1"), ("hostname", "nodeB")]),
            ],
            want: Some(vec![OK, OK]),
        },
        FilterCase {
            name: "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
            pod: pod(&[("foo", ""), ("bar", "")]).obj(),
            pods: vec![
                PodBuilder::new("q1")
                    .node("nodeA")
                    .affinity(true, R, "foo", EXISTS, &[], "zone")
                    .obj(),
                PodBuilder::new("q2")
                    .node("nodeA")
                    .affinity(true, R, "bar", EXISTS, &[], "region")
                    .obj(),
            ],
            nodes: vec![r1("nodeA", "z1"), r1("nodeB", "z2")],
            want: Some(vec![existing_fail(), existing_fail()]),
        },
        FilterCase {
            name: "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
            pod: PodBuilder::new("p")
                .affinity(true, R, "foo", EXISTS, &[], "zone")
                .affinity(true, R, "bar", EXISTS, &[], "region")
                .obj(),
            pods: vec![
                pod(&[("foo", "")]).node("nodeA").obj(),
                pod(&[("bar", "")]).node("nodeB").obj(),
            ],
            nodes: vec![r1("nodeA", "z1"), r1("nodeB", "z2")],
            want: Some(vec![anti_fail(), anti_fail()]),
        },
        FilterCase {
            name: "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
            pod: pod(&[("foo", ""), ("bar", "")]).obj(),
            pods: vec![PodBuilder::new("q")
                .node("nodeA")
                .affinity(true, R, "foo", EXISTS, &[], "invalid-node-label")
                .affinity(true, R, "bar", EXISTS, &[], "zone")
                .obj()],
            nodes: vec![r1("nodeA", "z1"), r1("nodeB", "z2")],
            want: Some(vec![existing_fail(), OK]),
        },
        FilterCase {
            name: "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
            pod: PodBuilder::new("p")
                .affinity(true, R, "foo", EXISTS, &[], "invalid-node-label")
                .affinity(true, R, "bar", EXISTS, &[], "zone")
                .obj(),
            pods: vec![pod(&[("foo", ""), ("bar", "")]).node("nodeA").obj()],
            nodes: vec![r1("nodeA", "z1"), r1("nodeB", "z2")],
            want: Some(vec![anti_fail(), OK]),
        },
        FilterCase {
            name: "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
            pod: pod(&[("foo", ""), ("bar", "")]).obj(),
            pods: vec![PodBuilder::new("q")
                .node("nodeA")
                .affinity(true, R, "foo", EXISTS, &[], "region")
                .affinity(true, R, "bar", EXISTS, &[], "zone")
                .obj()],
            nodes: vec![r1("nodeA", "z1"), r1("nodeB", "z2")],
            want: Some(vec![existing_fail(), existing_fail()]),
        },
        FilterCase {
            name: "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
            pod: PodBuilder::new("p")
                .affinity(true, R, "foo", EXISTS, &[], "region")
                .affinity(true, R, "bar", EXISTS, &[], "zone")
                .obj(),
            pods: vec![pod(&[("foo", ""), ("bar", "")]).node("nodeA").obj()],
            nodes: vec![r1("nodeA", "z1"), r1("nodeB", "z2")],
            want: Some(vec![anti_fail(), anti_fail()]),
        },
    ];
    run_filter_cases(cases);
}

#[test]
fn add_and_remove_pod_follow_upstream_update_with_pod() {
    // A pod added on nodeA with anti-affinity against the incoming pod's labels blocks nodeA's
    // zone; removing it again unblocks it (upstream AddPod/RemovePod via updateWithPod).
    let pl = plugin(1, false);
    let incoming = PodBuilder::new("p")
        .label("app", "web")
        .affinity(true, R, "app", IN, &["db"], "zone")
        .obj();
    let nodes = vec![
        node("nodeA", &[("zone", "z1")]),
        node("nodeB", &[("zone", "z2")]),
    ];
    let h = FakeHandle::new(&nodes, &[], vec![]);
    let mut state = CycleState::new();
    assert!(pl.pre_filter(&mut state, &incoming, &h).1.is_success());
    let blocker = PodInfo::new(k8s_types::object::Shared::from_typed(
        PodBuilder::new("q")
            .label("app", "cache")
            .node("nodeA")
            .affinity(true, R, "app", IN, &["web"], "zone")
            .obj(),
    ));
    assert!(pl
        .add_pod(&mut state, &incoming, &blocker, h.node("nodeA"))
        .is_success());
    assert_eq!(
        pl.filter(&state, &incoming, h.node("nodeA")).message(),
        ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
    );
    assert!(pl.filter(&state, &incoming, h.node("nodeB")).is_success());
    // A db pod added on nodeB violates the incoming pod's own anti-affinity there.
    let db = PodInfo::new(k8s_types::object::Shared::from_typed(
        PodBuilder::new("d").label("app", "db").node("nodeB").obj(),
    ));
    assert!(pl
        .add_pod(&mut state, &incoming, &db, h.node("nodeB"))
        .is_success());
    assert_eq!(
        pl.filter(&state, &incoming, h.node("nodeB")).message(),
        ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
    );
    assert!(pl
        .remove_pod(&mut state, &incoming, &blocker, h.node("nodeA"))
        .is_success());
    assert!(pl.filter(&state, &incoming, h.node("nodeA")).is_success());
}

fn namespaces() -> Vec<Object> {
    [
        ("subteam1.team1", "team1"),
        ("subteam2.team1", "team1"),
        ("subteam1.team2", "team2"),
        ("subteam2.team2", "team2"),
    ]
    .iter()
    .map(|(n, team)| {
        let mut ns = Namespace::default();
        ns.metadata.name = (*n).into();
        ns.metadata.labels = map(&[("team", team)]).into();
        Object::Namespace(Box::new(ns))
    })
    .collect()
}

struct ScoreCase {
    name: &'static str,
    pod: Pod,
    pods: Vec<Pod>,
    nodes: Vec<Node>,
    /// `None`: PreScore must Skip.
    want: Option<Vec<i64>>,
}

fn run_score_cases(pl: &InterPodAffinity, cases: Vec<ScoreCase>) {
    for c in cases {
        let h = FakeHandle::new(&c.nodes, &c.pods, namespaces());
        let refs: Vec<&NodeInfo> = h.nodes.iter().collect();
        let mut state = CycleState::new();
        let s = pl.pre_score_with_handle(&mut state, &c.pod, &refs, &h);
        let Some(want) = c.want else {
            assert!(s.is_skip(), "{}: PreScore {s:?}", c.name);
            continue;
        };
        assert!(s.is_success(), "{}: PreScore {s:?}", c.name);
        let mut scores: Vec<NodeScore> = refs
            .iter()
            .map(|n| NodeScore {
                name: n.name(),
                score: pl.score(&state, &c.pod, n).expect("score"),
            })
            .collect();
        assert!(pl.normalize_score(&state, &c.pod, &mut scores).is_success());
        let got: Vec<i64> = scores.iter().map(|s| s.score).collect();
        assert_eq!(got, want, "{}", c.name);
    }
}

/// Upstream `stayWithS1InRegion` etc.: a builder adding one preferred term.
fn pref(
    b: PodBuilder,
    anti: bool,
    weight: i32,
    sel: LabelSelector,
    topology_key: &str,
) -> PodBuilder {
    b.pod_affinity_term(anti, TermKind::Preferred(weight), term(sel, topology_key))
}

fn security(v: &str) -> LabelSelector {
    req_selector("security", IN, &[v])
}

fn stay_with_s1_in_region(b: PodBuilder) -> PodBuilder {
    pref(b, false, 5, security("S1"), "region")
}
fn stay_with_s2_in_region(b: PodBuilder) -> PodBuilder {
    pref(b, false, 6, security("S2"), "region")
}
fn away_from_s1_in_az(b: PodBuilder) -> PodBuilder {
    pref(b, true, 5, security("S1"), "az")
}
fn away_from_s2_in_az(b: PodBuilder) -> PodBuilder {
    pref(b, true, 5, security("S2"), "az")
}
fn stay_with_s1_in_region_away_from_s2_in_az(b: PodBuilder) -> PodBuilder {
    pref(
        pref(b, false, 8, security("S1"), "region"),
        true,
        5,
        security("S2"),
        "az",
    )
}
fn with_namespace_selector(b: PodBuilder, anti: bool) -> PodBuilder {
    b.pod_affinity_term(
        anti,
        TermKind::Preferred(5),
        PodAffinityTerm {
            label_selector: Some(security("S1")),
            topology_key: "region".into(),
            namespaces: vec!["subteam2.team2".into()],
            namespace_selector: Some(req_selector("team", IN, &["team1"])),
            ..Default::default()
        },
    )
}
fn hard_affinity(b: PodBuilder) -> PodBuilder {
    b.pod_affinity_term(false, R, term(security_in(&["S1", "value2"]), "region"))
        .pod_affinity_term(
            false,
            R,
            term(
                reqs(&[("security", EXISTS, &[]), ("wrongkey", "DoesNotExist", &[])]),
                "region",
            ),
        )
}
fn security_in(values: &[&str]) -> LabelSelector {
    req_selector("security", IN, values)
}

#[test]
fn preferred_affinity_scores_match_upstream() {
    let s1 = [("security", "S1")];
    let s2 = [("security", "S2")];
    let china = [("region", "China")];
    let india = [("region", "India")];
    let az1 = [("az", "az1")];
    let az2 = [("az", "az2")];
    let china_az1 = [("region", "China"), ("az", "az1")];
    let on = |labels: &[(&str, &str)], n: &str| pod(labels).node(n);
    let cases = vec![
        ScoreCase {
            name: "all nodes are same priority as Affinity is nil",
            pod: pod(&s1).obj(),
            pods: vec![],
            nodes: vec![node("node1", &china), node("node2", &india), node("node3", &az1)],
            want: None,
        },
        ScoreCase {
            name: "Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn't match either pods in nodes or in topology key",
            pod: stay_with_s1_in_region(pod(&s1)).obj(),
            pods: vec![
                on(&s1, "node1").obj(),
                on(&s2, "node2").obj(),
                on(&s1, "node3").obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india), node("node3", &az1)],
            want: Some(vec![100, 0, 0]),
        },
        ScoreCase {
            name: "All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
            pod: stay_with_s1_in_region(PodBuilder::new("p")).obj(),
            pods: vec![on(&s1, "node1").obj()],
            nodes: vec![node("node1", &china), node("node2", &china_az1), node("node3", &india)],
            want: Some(vec![100, 100, 0]),
        },
        ScoreCase {
            name: "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
            pod: stay_with_s2_in_region(pod(&s1)).obj(),
            pods: vec![
                on(&s2, "node1").obj(),
                on(&s2, "node1").obj(),
                on(&s2, "node2").obj(),
                on(&s2, "node3").obj(),
                on(&s2, "node4").obj(),
                on(&s2, "node5").obj(),
            ],
            nodes: vec![
                node("node1", &china),
                node("node2", &india),
                node("node3", &china),
                node("node4", &china),
                node("node5", &india),
            ],
            want: Some(vec![100, 0, 100, 100, 0]),
        },
        ScoreCase {
            name: "Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
            pod: pref(
                pref(
                    pod(&s1),
                    false,
                    8,
                    reqs(&[("security", NOT_IN, &["S1"]), ("security", IN, &["S2"])]),
                    "region",
                ),
                false,
                2,
                reqs(&[("security", EXISTS, &[]), ("wrongkey", "DoesNotExist", &[])]),
                "region",
            )
            .obj(),
            pods: vec![
                on(&s1, "node1").obj(),
                on(&s2, "node2").obj(),
                on(&s1, "node3").obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india), node("node3", &az1)],
            want: Some(vec![20, 100, 0]),
        },
        ScoreCase {
            name: "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
            pod: pod(&s2).obj(),
            pods: vec![
                stay_with_s1_in_region(on(&s1, "node1")).obj(),
                stay_with_s2_in_region(on(&s2, "node2")).obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india), node("node3", &az1)],
            want: Some(vec![0, 100, 0]),
        },
        ScoreCase {
            name: "Affinity symmetry with namespace selector",
            pod: pod(&s1).namespace("subteam1.team1").obj(),
            pods: vec![
                with_namespace_selector(on(&s1, "node1"), false).obj(),
                stay_with_s2_in_region(on(&s2, "node2")).obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india), node("node3", &az1)],
            want: Some(vec![100, 0, 0]),
        },
        ScoreCase {
            name: "AntiAffinity symmetry with namespace selector",
            pod: pod(&s1).namespace("subteam1.team1").obj(),
            pods: vec![
                with_namespace_selector(on(&s1, "node1"), true).obj(),
                stay_with_s2_in_region(on(&s2, "node2")).obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india), node("node3", &az1)],
            want: Some(vec![0, 100, 100]),
        },
        ScoreCase {
            name: "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
            pod: pod(&s1).obj(),
            pods: vec![
                hard_affinity(on(&s1, "node1")).obj(),
                hard_affinity(on(&s2, "node2")).obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india), node("node3", &az1)],
            want: Some(vec![100, 100, 0]),
        },
        ScoreCase {
            name: "Anti Affinity: pod that does not match existing pods in node will get high score ",
            pod: away_from_s1_in_az(pod(&s1)).obj(),
            pods: vec![on(&s1, "node1").obj(), on(&s2, "node2").obj()],
            nodes: vec![node("node1", &az1), node("node2", &china)],
            want: Some(vec![0, 100]),
        },
        ScoreCase {
            name: "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
            pod: away_from_s1_in_az(pod(&s1)).obj(),
            pods: vec![on(&s1, "node1").obj(), on(&s1, "node2").obj()],
            nodes: vec![node("node1", &az1), node("node2", &china)],
            want: Some(vec![0, 100]),
        },
        ScoreCase {
            name: "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
            pod: away_from_s1_in_az(pod(&s1)).obj(),
            pods: vec![
                on(&s1, "node1").obj(),
                on(&s1, "node1").obj(),
                on(&s2, "node2").obj(),
            ],
            nodes: vec![node("node1", &az1), node("node2", &india)],
            want: Some(vec![0, 100]),
        },
        ScoreCase {
            name: "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
            pod: pod(&s2).obj(),
            pods: vec![
                away_from_s2_in_az(on(&s1, "node1")).obj(),
                away_from_s1_in_az(on(&s2, "node2")).obj(),
            ],
            nodes: vec![node("node1", &az1), node("node2", &az2)],
            want: Some(vec![0, 100]),
        },
        ScoreCase {
            name: "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
            pod: stay_with_s1_in_region_away_from_s2_in_az(pod(&s1)).obj(),
            pods: vec![on(&s1, "node1").obj(), on(&s1, "node2").obj()],
            nodes: vec![node("node1", &china), node("node2", &az1)],
            want: Some(vec![100, 0]),
        },
        ScoreCase {
            name: "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
            pod: stay_with_s1_in_region_away_from_s2_in_az(pod(&s1)).obj(),
            pods: vec![
                on(&s1, "node1").obj(),
                on(&s1, "node1").obj(),
                on(&s1, "node2").obj(),
                on(&s1, "node3").obj(),
                on(&s1, "node3").obj(),
                on(&s1, "node4").obj(),
                on(&s1, "node5").obj(),
            ],
            nodes: vec![
                node("node1", &china_az1),
                node("node2", &india),
                node("node3", &china),
                node("node4", &china),
                node("node5", &india),
            ],
            want: Some(vec![100, 0, 100, 100, 0]),
        },
        ScoreCase {
            name: "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
            pod: stay_with_s1_in_region_away_from_s2_in_az(pod(&s1)).obj(),
            pods: vec![
                on(&s1, "node1").obj(),
                on(&s2, "node2").obj(),
                stay_with_s1_in_region_away_from_s2_in_az(PodBuilder::new("q").node("node3"))
                    .obj(),
                away_from_s1_in_az(PodBuilder::new("q").node("node4")).obj(),
            ],
            nodes: vec![
                node("node1", &china),
                node("node2", &az1),
                node("node3", &india),
                node("node4", &az2),
            ],
            want: Some(vec![100, 0, 100, 0]),
        },
        ScoreCase {
            name: "Avoid panic when partial nodes in a topology don't have pods with affinity",
            pod: pod(&s1).obj(),
            pods: vec![
                on(&s1, "node1").obj(),
                stay_with_s1_in_region_away_from_s2_in_az(PodBuilder::new("q").node("node2"))
                    .obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &china)],
            want: Some(vec![0, 0]),
        },
        ScoreCase {
            name: "Affinity with pods matching NamespaceSelector",
            pod: with_namespace_selector(pod(&s1).namespace("subteam1.team1"), false).obj(),
            pods: vec![
                on(&s1, "node1").namespace("subteam1.team1").obj(),
                on(&s1, "node1").namespace("subteam1.team1").obj(),
                on(&s1, "node1").namespace("subteam1.team2").obj(),
                on(&s1, "node2").namespace("subteam2.team1").obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india)],
            want: Some(vec![100, 0]),
        },
        ScoreCase {
            name: "Affinity with pods matching both NamespaceSelector and Namespaces fields",
            pod: with_namespace_selector(pod(&s1).namespace("subteam1.team1"), false).obj(),
            pods: vec![
                on(&s1, "node1").namespace("subteam1.team1").obj(),
                on(&s1, "node1").namespace("subteam1.team1").obj(),
                on(&s1, "node1").namespace("subteam2.team2").obj(),
                on(&s1, "node2").namespace("subteam2.team1").obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india)],
            want: Some(vec![100, 0]),
        },
        ScoreCase {
            name: "Affinity with pods matching NamespaceSelector (anti-affinity)",
            pod: with_namespace_selector(pod(&s1).namespace("subteam1.team1"), true).obj(),
            pods: vec![
                on(&s1, "node1").namespace("subteam1.team1").obj(),
                on(&s1, "node1").namespace("subteam1.team1").obj(),
                on(&s1, "node1").namespace("subteam1.team2").obj(),
                on(&s1, "node2").namespace("subteam2.team1").obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india)],
            want: Some(vec![0, 100]),
        },
        ScoreCase {
            name: "Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)",
            pod: with_namespace_selector(pod(&s1).namespace("subteam1.team1"), true).obj(),
            pods: vec![
                on(&s1, "node1").namespace("subteam1.team1").obj(),
                on(&s1, "node1").namespace("subteam1.team1").obj(),
                on(&s1, "node1").namespace("subteam2.team2").obj(),
                on(&s1, "node2").namespace("subteam2.team1").obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india)],
            want: Some(vec![0, 100]),
        },
        ScoreCase {
            name: "Do not ignore preferred terms of existing pods",
            pod: pod(&s2).obj(),
            pods: vec![
                stay_with_s1_in_region_away_from_s2_in_az(on(&s1, "node1")).obj(),
                stay_with_s2_in_region(on(&s2, "node2")).obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india)],
            want: Some(vec![0, 100]),
        },
        ScoreCase {
            name: "No nodes to score",
            pod: pod(&s2).obj(),
            pods: vec![],
            nodes: vec![],
            want: None,
        },
    ];
    run_score_cases(&plugin(1, false), cases);

    run_score_cases(
        &plugin(1, true),
        vec![ScoreCase {
            name: "Ignore preferred terms of existing pods",
            pod: pod(&s2).obj(),
            pods: vec![
                stay_with_s1_in_region_away_from_s2_in_az(on(&s1, "node1")).obj(),
                stay_with_s2_in_region(on(&s2, "node2")).obj(),
            ],
            nodes: vec![node("node1", &china), node("node2", &india)],
            want: None,
        }],
    );
}

#[test]
fn hard_pod_affinity_symmetric_weight_matches_upstream() {
    let service_s1 = [("service", "S1")];
    let hard = |n: &str| {
        PodBuilder::new("q")
            .node(n)
            .pod_affinity_term(
                false,
                R,
                PodAffinityTerm {
                    label_selector: Some(req_selector("service", IN, &["S1"])),
                    namespaces: vec!["".into(), "subteam2.team2".into()],
                    namespace_selector: Some(req_selector("team", IN, &["team1"])),
                    topology_key: "region".into(),
                    ..Default::default()
                },
            )
            .obj()
    };
    let nodes = || {
        vec![
            node("node1", &[("region", "China")]),
            node("node2", &[("region", "India")]),
            node("node3", &[("az", "az1")]),
        ]
    };
    let case = |name, ns: Option<&str>, want| {
        let mut p = pod(&service_s1);
        if let Some(ns) = ns {
            p = p.namespace(ns);
        }
        ScoreCase {
            name,
            pod: p.obj(),
            pods: vec![hard("node1"), hard("node2")],
            nodes: nodes(),
            want,
        }
    };
    run_score_cases(
        &plugin(1, false),
        vec![
            case("with default weight", None, Some(vec![100, 100, 0])),
            case("with no matching namespace", Some("subteam1.team2"), None),
            case(
                "with matching NamespaceSelector",
                Some("subteam1.team1"),
                Some(vec![100, 100, 0]),
            ),
            case(
                "with matching Namespaces",
                Some("subteam2.team2"),
                Some(vec![100, 100, 0]),
            ),
        ],
    );
    run_score_cases(
        &plugin(0, false),
        vec![case("with zero weight", None, None)],
    );
}

#[test]
fn factory_validates_hard_pod_affinity_weight() {
    let args = serde_json::json!({"hardPodAffinityWeight": 101});
    let err = InterPodAffinity::factory(&PluginArgs {
        name: names::INTER_POD_AFFINITY,
        args: Some(&args),
        path: "profiles[0].pluginConfig[2].args".into(),
    })
    .err()
    .expect("invalid");
    assert_eq!(
        err.to_string(),
        "profiles[0].pluginConfig[2].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"
    );
}
