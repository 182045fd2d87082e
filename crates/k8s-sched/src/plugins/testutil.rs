//! Test builders for plugin unit tests: nodes and pods shaped like upstream's
//! `pkg/scheduler/testing` wrappers (`st.MakeNode().Capacity(...)`, `st.MakePod().Req(...)`).

use k8s_types::object::Shared;
use std::sync::Arc;

use k8s_sched_framework::{CycleState, NodeInfo, Plugin, PodInfo};
use k8s_types::core::{Container, Node, Pod, ResourceList};
use k8s_types::Quantity;

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_else(|e| panic!("bad quantity {s}: {e}"))
}

/// A container requesting `k1: v1, k2: v2`.
pub fn container(k1: &str, v1: &str, k2: &str, v2: &str) -> Container {
    let mut requests = ResourceList::new();
    requests.insert(k1.into(), q(v1));
    requests.insert(k2.into(), q(v2));
    let mut c = Container::default();
    c.resources.requests = requests.into();
    c
}

/// A pod with one container per `(k1, v1, k2, v2)`, like `st.MakePod().Req(...).Req(...)`.
pub fn pod(containers: &[(&str, &str, &str, &str)]) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = "pod".into();
    p.metadata.namespace = Some("default".into());
    p.spec.containers = containers
        .iter()
        .map(|(a, b, c, d)| container(a, b, c, d))
        .collect();
    p
}

/// A node with allocatable cpu/memory/pods=110 and extra scalar resources, plus existing pods
/// each requesting `(cpu, memory)` in one container.
pub fn node(
    name: &str,
    cpu: &str,
    memory: &str,
    scalars: &[(&str, &str)],
    existing: &[(&str, &str)],
) -> NodeInfo {
    let pods = existing
        .iter()
        .enumerate()
        .map(|(i, (c, m))| {
            let mut p = pod(&[("cpu", c, "memory", m)]);
            p.metadata.name = format!("existing-{i}");
            p
        })
        .collect();
    node_with_pods(name, cpu, memory, scalars, pods)
}

/// A node with allocatable cpu/memory/pods=110 and extra scalar resources, plus existing pods.
pub fn node_with_pods(
    name: &str,
    cpu: &str,
    memory: &str,
    scalars: &[(&str, &str)],
    pods: Vec<Pod>,
) -> NodeInfo {
    let mut n = Node::default();
    n.metadata.name = name.into();
    let a = &mut n.status.allocatable;
    a.insert("cpu".into(), q(cpu));
    a.insert("memory".into(), q(memory));
    a.insert("pods".into(), q("110"));
    for (k, v) in scalars {
        a.insert((*k).into(), q(v));
    }
    let mut ni = NodeInfo::new(Arc::new(n));
    for (i, mut p) in pods.into_iter().enumerate() {
        p.metadata.name = format!("{name}-existing-{i}");
        ni.add_pod(PodInfo::new(Shared::from_typed(p)));
    }
    ni
}

/// Runs PreScore then Score of `plugin` for `pod` on every node; raw scores in node order.
pub fn score_all(plugin: &dyn Plugin, pod: &Pod, nodes: &[NodeInfo]) -> Vec<i64> {
    let mut state = CycleState::new();
    let refs: Vec<&NodeInfo> = nodes.iter().collect();
    if let Some(ps) = plugin.as_pre_score() {
        let s = ps.pre_score(&mut state, pod, &refs);
        assert!(s.is_success(), "PreScore: {s:?}");
    }
    let sp = plugin.as_score().expect("a Score plugin");
    let one_by_one: Vec<i64> = nodes
        .iter()
        .map(|n| sp.score(&state, pod, n).expect("score"))
        .collect();
    // The batch path the scheduler uses must give the same raw scores.
    let mut batch = vec![0; nodes.len()];
    sp.score_nodes(&state, pod, &refs, &mut batch)
        .expect("score_nodes");
    assert_eq!(batch, one_by_one, "score_nodes differs from score");
    one_by_one
}
