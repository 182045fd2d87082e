//! Unit tests of the daemon set controller's pure parts: the rolling update's choices
//! (`update.go` `rollingUpdate`), the revision hash, the failed-pod back-off and
//! `shouldIgnoreNodeUpdate`. Values worked out by hand from upstream's rules.

use k8s_types::apps::{
    DaemonSet, DaemonSetUpdateStrategy, IntOrString, RollingUpdateDaemonSet,
    CONTROLLER_REVISION_HASH_LABEL,
};
use k8s_types::core::{Node, NodeCondition, Pod, PodCondition};
use k8s_types::meta::{tick_timestamp, tick_timestamp_compact};
use k8s_types::Tick;

use super::update::rolling_update;
use super::util::{node_verdicts, NodeVerdicts};
use super::{revision_hash, should_ignore_node_update, template_hash, Backoff, NodeToDaemonPods};

fn ds(max_unavailable: IntOrString, max_surge: IntOrString) -> DaemonSet {
    let mut d = DaemonSet::default();
    d.metadata.name = "agent".into();
    d.metadata.generation = Some(1);
    d.spec.update_strategy = Some(DaemonSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDaemonSet {
            max_unavailable: Some(max_unavailable),
            max_surge: Some(max_surge),
        }),
    });
    d
}

fn node(name: &str) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    n
}

/// A pod on `node` with revision `hash`, Ready since `ready_at` (None: not ready).
fn pod(name: &str, node: &str, hash: &str, ready_at: Option<Tick>) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = Some("default".into());
    p.metadata.creation_timestamp = Some(tick_timestamp(0).into());
    p.metadata
        .labels
        .insert(CONTROLLER_REVISION_HASH_LABEL.into(), hash.into());
    p.spec.node_name = Some(node.into());
    p.status.phase = Some("Running".into());
    if let Some(t) = ready_at {
        p.status.conditions.push(PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(tick_timestamp_compact(t)),
            ..Default::default()
        });
    }
    p
}

/// Every node of `nodes` should run the pod (no labels, no taints).
fn verdicts(nodes: &[Node], d: &DaemonSet) -> NodeVerdicts {
    node_verdicts(d, nodes)
}

fn by_node(pods: &[Pod]) -> NodeToDaemonPods<'_> {
    let mut m = NodeToDaemonPods::new();
    for p in pods {
        m.entry(p.spec.node_name.clone().unwrap_or_default())
            .or_default()
            .push(p);
    }
    m
}

#[test]
fn max_unavailable_percent_rounds_up_and_takes_nodes_in_name_order() {
    // 5 nodes, all old and available; maxUnavailable 30% of 5 = ceil(1.5) = 2.
    let d = ds(IntOrString::String("30%".into()), IntOrString::Int(0));
    let names = ["n1", "n2", "n3", "n4", "n5"];
    let nodes: Vec<Node> = names.iter().map(|n| node(n)).collect();
    let refs = verdicts(&nodes, &d);
    let pods: Vec<Pod> = names
        .iter()
        .map(|n| pod(&format!("p-{n}"), n, "old", Some(1)))
        .collect();
    let (del, create) = rolling_update(&d, &refs, &by_node(&pods), "new", 10);
    assert_eq!(del, ["p-n1", "p-n2"]);
    assert!(create.is_empty());
}

#[test]
fn unavailable_pods_count_against_the_budget_and_old_unavailable_ones_go_at_once() {
    // maxUnavailable 2 of 4. n1: new, not yet available (1 unavailable); n2: old, not ready
    // (replaced at once, 2 unavailable); n3, n4: old available, no budget left.
    let d = ds(IntOrString::Int(2), IntOrString::Int(0));
    let nodes: Vec<Node> = ["n1", "n2", "n3", "n4"].iter().map(|n| node(n)).collect();
    let refs = verdicts(&nodes, &d);
    let pods = vec![
        pod("p1", "n1", "new", None),
        pod("p2", "n2", "old", None),
        pod("p3", "n3", "old", Some(1)),
        pod("p4", "n4", "old", Some(1)),
    ];
    let (del, _) = rolling_update(&d, &refs, &by_node(&pods), "new", 10);
    assert_eq!(del, ["p2"]);
    // A node that should run the pod but has none counts as unavailable too
    // (updatedDesiredNodeCounts): with n1 empty, budget 2 - 1 = 1 -> p3.
    let pods = vec![
        pod("p3", "n3", "old", Some(1)),
        pod("p4", "n4", "old", Some(1)),
        pod("p2", "n2", "new", Some(1)),
    ];
    let (del, _) = rolling_update(&d, &refs, &by_node(&pods), "new", 10);
    assert_eq!(del, ["p3"]);
}

#[test]
fn min_ready_seconds_decides_availability() {
    // Ready at 5 with minReadySeconds 10: available only once 5 + 10 < now.
    let mut d = ds(IntOrString::Int(1), IntOrString::Int(0));
    d.spec.min_ready_seconds = Some(10);
    let nodes = [node("n1"), node("n2")];
    let refs = verdicts(&nodes, &d);
    let pods = vec![
        pod("p1", "n1", "new", Some(5)),
        pod("p2", "n2", "old", Some(0)),
    ];
    let (del, _) = rolling_update(&d, &refs, &by_node(&pods), "new", 15);
    assert!(del.is_empty(), "new pod not yet available at 15");
    let (del, _) = rolling_update(&d, &refs, &by_node(&pods), "new", 16);
    assert_eq!(del, ["p2"]);
}

#[test]
fn surge_creates_up_to_max_surge_and_deletes_old_pods_whose_new_pod_is_available() {
    // maxSurge 2 of 4: n1 has an available new pod beside its old one (old deleted); n2 a new
    // pod not yet available (1 surge in use); n3 old not ready (new pod at once, outside the
    // budget); n4, n5 old available: one more surge allowed -> n4.
    let d = ds(IntOrString::Int(0), IntOrString::Int(2));
    let nodes: Vec<Node> = ["n1", "n2", "n3", "n4", "n5"]
        .iter()
        .map(|n| node(n))
        .collect();
    let refs = verdicts(&nodes, &d);
    let mut new1 = pod("new1", "n1", "new", Some(3));
    new1.metadata.creation_timestamp = Some(tick_timestamp(2).into());
    let pods = vec![
        pod("old1", "n1", "old", Some(1)),
        new1,
        pod("old2", "n2", "old", Some(1)),
        pod("new2", "n2", "new", None),
        pod("old3", "n3", "old", None),
        pod("old4", "n4", "old", Some(1)),
        pod("old5", "n5", "old", Some(1)),
    ];
    let (del, create) = rolling_update(&d, &refs, &by_node(&pods), "new", 10);
    assert_eq!(del, ["old1"]);
    assert_eq!(create, ["n3", "n4"]);
}

#[test]
fn revision_hash_adopts_the_newest_pods_label_only_at_first_sight() {
    let mut d = ds(IntOrString::Int(1), IntOrString::Int(0));
    let mut a = pod("a", "n1", "h-old", Some(1));
    a.metadata.creation_timestamp = Some(tick_timestamp(1).into());
    let mut b = pod("b", "n2", "h-new", Some(1));
    b.metadata.creation_timestamp = Some(tick_timestamp(2).into());
    assert_eq!(revision_hash(&d, &[&a, &b], None), "h-new");
    assert_eq!(revision_hash(&d, &[], None), template_hash(&d));
    // The decision holds while the generation does; a new generation uses the template.
    let known = (1, "h-new".to_string());
    assert_eq!(revision_hash(&d, &[], Some(&known)), "h-new");
    d.metadata.generation = Some(2);
    assert_eq!(
        revision_hash(&d, &[&a, &b], Some(&known)),
        template_hash(&d)
    );
}

#[test]
fn failed_pod_backoff_doubles_from_one_second_to_fifteen_minutes() {
    // flowcontrol.NewBackOff(1s, 15m): IsInBackOffSinceUpdate(now) is now - lastUpdate < delay.
    let mut b = Backoff::default();
    assert_eq!(b.in_backoff("k", 0), None);
    b.next("k", 0);
    assert_eq!(b.in_backoff("k", 0), Some(1));
    assert_eq!(b.in_backoff("k", 1), None);
    b.next("k", 1);
    assert_eq!(b.in_backoff("k", 2), Some(2));
    assert_eq!(b.in_backoff("k", 3), None);
    for t in 3..20 {
        b.next("k", t);
    }
    assert_eq!(b.in_backoff("k", 20), Some(900));
    // An entry older than twice the maximum has expired: back to 1 s.
    b.next("k", 20 + 1801);
    assert_eq!(b.in_backoff("k", 20 + 1801), Some(1));
}

#[test]
fn node_updates_of_heartbeats_only_are_ignored() {
    let mut old = node("n1");
    old.status.conditions.push(NodeCondition {
        type_: "Ready".into(),
        status: "True".into(),
        last_heartbeat_time: Some(tick_timestamp(1)),
        ..Default::default()
    });
    let mut cur = old.clone();
    cur.metadata.resource_version = Some("9".into());
    cur.status.conditions[0].last_heartbeat_time = Some(tick_timestamp(2));
    assert!(should_ignore_node_update(&old, &cur));
    // A True condition appearing, or a label change, is not ignored.
    let mut pressure = cur.clone();
    pressure.status.conditions.push(NodeCondition {
        type_: "MemoryPressure".into(),
        status: "True".into(),
        ..Default::default()
    });
    assert!(!should_ignore_node_update(&old, &pressure));
    let mut relabelled = cur.clone();
    relabelled
        .metadata
        .labels
        .insert("role".into(), "infra".into());
    assert!(!should_ignore_node_update(&old, &relabelled));
    // Any other status or spec field changing is not ignored either (upstream compares the whole
    // Node but its resourceVersion and conditions).
    let mut imaged = cur.clone();
    imaged
        .status
        .images
        .push(serde_json::json!({"names": ["busybox:1.36"]}));
    assert!(!should_ignore_node_update(&old, &imaged));
    let mut grown = cur.clone();
    grown
        .status
        .capacity
        .insert("nvidia.com/gpu".into(), "8".parse().unwrap());
    assert!(!should_ignore_node_update(&old, &grown));
    let mut cordoned = cur.clone();
    cordoned.spec.unschedulable = true;
    assert!(!should_ignore_node_update(&old, &cordoned));
    // Nor any metadata field but the resourceVersion.
    let mut annotated = cur.clone();
    annotated
        .metadata
        .annotations
        .insert("node.alpha.kubernetes.io/ttl".into(), "0".into());
    assert!(!should_ignore_node_update(&old, &annotated));
    let mut finalized = cur.clone();
    finalized
        .metadata
        .finalizers
        .push("example.com/keep".into());
    assert!(!should_ignore_node_update(&old, &finalized));
    let mut deleted = cur.clone();
    deleted.metadata.deletion_timestamp = Some(tick_timestamp(3).into());
    assert!(!should_ignore_node_update(&old, &deleted));
}
