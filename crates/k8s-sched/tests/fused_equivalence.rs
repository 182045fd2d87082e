//! The fused node pass (`runtime/fused.rs`) against the generic per-plugin path: randomized
//! clusters (fixed seeds) are scheduled twice through the detached API, once with
//! `Scheduler::set_fused_node_pass(false)`, and every decision (node, or the FailedScheduling
//! message) must be identical, as must the final requests on every node. The clusters mix what
//! the kernels handle (cpu/memory requests, pod limits) with what sends a node or a plugin down
//! the exact path: cordoned nodes, NoSchedule and PreferNoSchedule taints, tolerations, host
//! ports, images, node selectors, ephemeral-storage and extended resources, zero requests,
//! higher-priority pods (preemption and nominated nodes), several percentageOfNodesToScore
//! values, and pods with topology spread constraints and required pod (anti-)affinity on zones
//! and hostnames, some nodes lacking the zone label (the PodTopologySpread and InterPodAffinity
//! gates, whose rejected nodes' statuses are only computed when the pod fits nowhere).
//!
//! Pods in two namespaces owned by ReplicaSets (the system default spreading constraints apply)
//! and pods with soft spread constraints are scored by PodTopologySpread's PreScore from its
//! topology index; a third run replaces that PreScore and Score with upstream's count over every
//! pod (`PreScoreState::compute`, as the `PerPodTopologySpread` plugin below), and every decision
//! must again be identical.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_sched::config::pod_topology_spread_args::{PodTopologySpreadArgs, SCHEDULE_ANYWAY};
use k8s_sched::plugins::pod_topology_spread::common::{
    build_default_constraints, filter_constraints,
};
use k8s_sched::plugins::pod_topology_spread::scoring::{PreScoreState, PRE_SCORE_STATE_KEY};
use k8s_sched::plugins::pod_topology_spread::PodTopologySpread;
use k8s_sched::{KubeSchedulerConfiguration, Registry, Scheduler};
use k8s_sched_framework::{
    CycleState, Handle, NodeInfo, NodeScore, Plugin, PreScorePlugin, ScorePlugin, Status,
};
use k8s_types::apps::ReplicaSet;
use k8s_types::core::{
    Affinity, Container, ContainerPort, Node, Pod, PodAffinity, PodAffinityTerm, ResourceList,
    ResourceRequirements, Taint, Toleration, TopologySpreadConstraint,
};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::OwnerReference;
use k8s_types::object::Object;
use k8s_types::Quantity;

/// PodTopologySpread's PreScore and Score as upstream computes them, counting every pod of every
/// node (`PreScoreState::compute`) instead of reading the plugin's topology index; enabled in
/// place of PodTopologySpread's PreScore and Score (its PreFilter and Filter stay).
struct PerPodTopologySpread(PodTopologySpread);

const PER_POD: &str = "PerPodTopologySpread";

impl Plugin for PerPodTopologySpread {
    fn name(&self) -> &str {
        PER_POD
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreScorePlugin for PerPodTopologySpread {
    fn pre_score(&self, _state: &mut CycleState, _pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        Status::error("PerPodTopologySpread needs the handle")
    }

    /// Upstream `PreScore` with the system default constraints.
    fn pre_score_with_handle(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        handle: &dyn Handle,
    ) -> Status {
        let all = handle.node_infos();
        if all.is_empty() {
            return Status::skip();
        }
        let own = &pod.spec.topology_spread_constraints;
        let constraints = if own.is_empty() {
            build_default_constraints(
                self.0.default_constraints(),
                pod,
                SCHEDULE_ANYWAY,
                Some(handle.client()),
            )
        } else {
            filter_constraints(own, &pod.metadata.labels, SCHEDULE_ANYWAY)
        };
        if constraints.is_empty() {
            return Status::skip();
        }
        let s = PreScoreState::compute(pod, constraints, nodes, all, !own.is_empty());
        assert!(s.indexed.is_none());
        state.write(PRE_SCORE_STATE_KEY, s);
        Status::success()
    }
}

impl ScorePlugin for PerPodTopologySpread {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        self.0.score(state, pod, node)
    }

    fn normalize_score(
        &self,
        state: &CycleState,
        pod: &Pod,
        scores: &mut [NodeScore<'_>],
    ) -> Status {
        self.0.normalize_score(state, pod, scores)
    }
}

/// The default profile with PodTopologySpread's PreScore and Score done by
/// [`PerPodTopologySpread`] (same weight).
const PER_POD_PROFILE: &str = r#"
profiles:
- schedulerName: default-scheduler
  plugins:
    preScore:
      disabled: [{name: PodTopologySpread}]
      enabled: [{name: PerPodTopologySpread}]
    score:
      disabled: [{name: PodTopologySpread}]
      enabled: [{name: PerPodTopologySpread, weight: 2}]
"#;

/// How a run scores PodTopologySpread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spread {
    /// The plugin as configured by default (its topology index).
    Indexed,
    /// [`PerPodTopologySpread`].
    PerPod,
}

/// The namespaces of the pods; every one has the ReplicaSets `rs-web` and `rs-api`.
const NAMESPACES: [&str; 2] = ["default", "team-a"];

fn replica_set(ns: &str, app: &str) -> Object {
    let mut rs = ReplicaSet::default();
    rs.metadata.name = format!("rs-{app}");
    rs.metadata.namespace = Some(ns.into());
    rs.spec.selector = Some(LabelSelector {
        match_labels: BTreeMap::from([("app".to_string(), app.to_string())]),
        ..Default::default()
    });
    Object::ReplicaSet(Box::new(rs))
}

/// xorshift64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

fn q(s: &str) -> Quantity {
    Quantity::parse(s).expect("valid quantity")
}

fn taint(key: &str, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        value: "x".into(),
        effect: effect.into(),
        time_added: None,
    }
}

fn node(r: &mut Rng, i: usize) -> Node {
    let mut n = Node::default();
    n.metadata.name = format!("node-{i:04}");
    n.metadata
        .labels
        .insert("kubernetes.io/hostname".into(), n.metadata.name.clone());
    let zone = r.pick(&[
        "zone-a", "zone-b", "zone-c", "zone-a", "zone-b", "zone-c", "",
    ]);
    if !zone.is_empty() {
        n.metadata
            .labels
            .insert("topology.kubernetes.io/zone".into(), zone.into());
    }
    let mut a = ResourceList::new();
    a.insert(
        "cpu".into(),
        q(r.pick(&["1", "2", "4", "4", "8", "3500m", "0"])),
    );
    a.insert(
        "memory".into(),
        q(r.pick(&["1Gi", "4Gi", "32Gi", "32Gi", "1000Ti", "0"])),
    );
    a.insert("pods".into(), q(r.pick(&["3", "10", "110", "110"])));
    if r.chance(20) {
        a.insert("ephemeral-storage".into(), q(r.pick(&["1Gi", "10Gi"])));
    }
    if r.chance(15) {
        a.insert("example.com/foo".into(), q(r.pick(&["1", "4"])));
    }
    n.status.capacity = a.clone();
    n.status.allocatable = a;
    if r.chance(8) {
        n.spec.unschedulable = true;
    }
    if r.chance(8) {
        n.spec.taints.push(taint("dedicated", "NoSchedule"));
    }
    if r.chance(10) {
        n.spec.taints.push(taint("spot", "PreferNoSchedule"));
    }
    if r.chance(10) {
        n.status.images.push(serde_json::json!({
            "names": ["example.com/app:1.0"],
            "sizeBytes": 300 * 1024 * 1024
        }));
    }
    n
}

fn pod(r: &mut Rng, name: &str, node_name: Option<String>) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = Some("default".into());
    if r.chance(15) {
        p.metadata.namespace = Some(NAMESPACES[1].into());
    }
    p.metadata.uid = Some(format!("uid-{name}"));
    let mut req = ResourceList::new();
    let cpu = r.pick(&["", "100m", "100m", "500m", "2", "3"]);
    if !cpu.is_empty() {
        req.insert("cpu".into(), q(cpu));
    }
    let mem = r.pick(&["", "100Mi", "500Mi", "500Mi", "2Gi"]);
    if !mem.is_empty() {
        req.insert("memory".into(), q(mem));
    }
    if r.chance(5) {
        req.insert("ephemeral-storage".into(), q("2Gi"));
    }
    if r.chance(5) {
        req.insert("example.com/foo".into(), q("1"));
    }
    let mut c = Container {
        name: "c".into(),
        image: if r.chance(20) {
            "example.com/app:1.0".into()
        } else {
            "registry.k8s.io/pause:3.10".into()
        },
        resources: ResourceRequirements {
            requests: req.into(),
            limits: Default::default(),
            claims: Vec::new(),
        },
        ..Default::default()
    };
    if r.chance(8) {
        c.ports.push(ContainerPort {
            container_port: 80,
            host_port: Some(8080),
            ..Default::default()
        });
    }
    p.spec.containers.push(c);
    if r.chance(10) {
        p.spec.tolerations.push(Toleration {
            key: "dedicated".into(),
            operator: "Exists".into(),
            ..Default::default()
        });
    }
    if r.chance(5) {
        p.spec.tolerations.push(Toleration {
            key: "node.kubernetes.io/unschedulable".into(),
            operator: "Exists".into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        });
    }
    if r.chance(10) {
        p.spec.node_selector = BTreeMap::from([(
            "topology.kubernetes.io/zone".to_string(),
            "zone-b".to_string(),
        )]);
    }
    if node_name.is_none() && r.chance(5) {
        p.spec.priority = Some(1000);
    }
    let key = |r: &mut Rng| {
        r.pick(&["topology.kubernetes.io/zone", "kubernetes.io/hostname"])
            .to_string()
    };
    let selector = |app: &str| {
        Some(LabelSelector {
            match_labels: BTreeMap::from([("app".to_string(), app.to_string())]),
            ..Default::default()
        })
    };
    if r.chance(20) {
        p.metadata.labels.insert("app".into(), "web".into());
        if r.chance(70) {
            p.spec
                .topology_spread_constraints
                .push(TopologySpreadConstraint {
                    max_skew: 1 + r.below(2) as i32,
                    topology_key: key(r),
                    when_unsatisfiable: "DoNotSchedule".into(),
                    label_selector: selector("web"),
                    ..Default::default()
                });
        }
    }
    if r.chance(15) {
        p.metadata.labels.insert("tier".into(), "db".into());
        let term = PodAffinityTerm {
            label_selector: Some(LabelSelector {
                match_labels: BTreeMap::from([("tier".to_string(), "db".to_string())]),
                ..Default::default()
            }),
            topology_key: key(r),
            ..Default::default()
        };
        let affinity = PodAffinity {
            required_during_scheduling_ignored_during_execution: vec![term],
            ..Default::default()
        };
        let a = p.spec.affinity.get_or_insert_with(Affinity::default);
        if r.chance(75) {
            a.pod_anti_affinity = Some(affinity);
        } else {
            a.pod_affinity = Some(affinity);
        }
    }
    if r.chance(5) {
        let term = PodAffinityTerm {
            label_selector: selector("web"),
            topology_key: "topology.kubernetes.io/zone".into(),
            ..Default::default()
        };
        p.spec
            .affinity
            .get_or_insert_with(Affinity::default)
            .pod_affinity = Some(PodAffinity {
            required_during_scheduling_ignored_during_execution: vec![term],
            ..Default::default()
        });
    }
    // Owned by a ReplicaSet of its namespace (the system default spreading applies), or with
    // soft spread constraints of its own.
    if r.chance(40) {
        let app = r.pick(&["web", "api"]);
        p.metadata.labels.insert("app".into(), app.into());
        p.metadata.owner_references.push(OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: format!("rs-{app}"),
            uid: format!("uid-rs-{app}"),
            controller: Some(true),
            block_owner_deletion: None,
        });
    } else if r.chance(15) {
        p.metadata.labels.insert("app".into(), "api".into());
        p.spec
            .topology_spread_constraints
            .push(TopologySpreadConstraint {
                max_skew: 1 + r.below(3) as i32,
                topology_key: key(r),
                when_unsatisfiable: SCHEDULE_ANYWAY.into(),
                label_selector: selector("api"),
                node_affinity_policy: [None, Some("Ignore".to_string())][r.below(2) as usize]
                    .clone(),
                node_taints_policy: [None, Some("Honor".to_string())][r.below(2) as usize].clone(),
                ..Default::default()
            });
    }
    p.spec.node_name = node_name;
    p
}

/// Per node at the end: name, requested milli-CPU, requested bytes of memory, pod count.
type Usage = Vec<(String, i64, i64, usize)>;

/// One randomized cluster scheduled with the fused pass on or off: every decision, and the
/// (cpu, memory, pods) requested on every node at the end.
fn run(seed: u64, fused: bool, spread: Spread) -> (Vec<String>, Usage) {
    let mut r = Rng(seed);
    let nodes = 5 + r.below(150) as usize;
    let percentage = [None, Some(100), Some(30), Some(5)][r.below(4) as usize];
    let mut s = match spread {
        Spread::Indexed => Scheduler::new(KubeSchedulerConfiguration {
            percentage_of_nodes_to_score: percentage,
            ..KubeSchedulerConfiguration::default()
        }),
        Spread::PerPod => {
            let mut registry = Registry::new();
            registry
                .register(
                    PER_POD,
                    Box::new(|_| {
                        let pl = PodTopologySpread::new(&PodTopologySpreadArgs::default());
                        Ok(Arc::new(PerPodTopologySpread(pl)) as Arc<dyn Plugin>)
                    }),
                )
                .expect("a new name");
            let mut config =
                KubeSchedulerConfiguration::from_yaml(PER_POD_PROFILE).expect("valid profile");
            config.percentage_of_nodes_to_score = percentage;
            Scheduler::with_registry(config, registry)
        }
    }
    .expect("default profile");
    s.set_fused_node_pass(fused);
    for ns in NAMESPACES {
        for app in ["web", "api"] {
            s.add_object(replica_set(ns, app));
        }
    }
    for i in 0..nodes {
        s.add_node(node(&mut r, i));
    }
    for i in 0..r.below(nodes as u64 * 3) {
        let on = format!("node-{:04}", r.below(nodes as u64));
        s.add_pod(pod(&mut r, &format!("existing-{i}"), Some(on)));
    }
    let mut decisions = Vec::new();
    for i in 0..(20 + r.below(120)) {
        s.set_now(i);
        let res = s.schedule_one(pod(&mut r, &format!("pod-{i}"), None));
        decisions.push(format!("{res:?}"));
    }
    let usage = s
        .cache()
        .node_infos()
        .iter()
        .map(|n| {
            (
                n.name().to_string(),
                n.requested().milli_cpu,
                n.requested().memory,
                n.pod_count(),
            )
        })
        .collect();
    (decisions, usage)
}

#[test]
fn fused_and_generic_paths_place_every_pod_alike() {
    let mut bound = 0;
    let mut unschedulable = 0;
    for seed in 1..=30u64 {
        let seed = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let (fused, fused_usage) = run(seed, true, Spread::Indexed);
        let (generic, generic_usage) = run(seed, false, Spread::Indexed);
        let (per_pod, per_pod_usage) = run(seed, true, Spread::PerPod);
        assert_eq!(fused.len(), generic.len());
        assert_eq!(fused.len(), per_pod.len());
        for (i, ((a, b), c)) in fused.iter().zip(&generic).zip(&per_pod).enumerate() {
            assert_eq!(a, b, "seed {seed:#x}, pod {i}");
            assert_eq!(a, c, "seed {seed:#x}, pod {i}: PodTopologySpread per pod");
        }
        assert_eq!(fused_usage, generic_usage, "seed {seed:#x}");
        assert_eq!(fused_usage, per_pod_usage, "seed {seed:#x}");
        bound += fused.iter().filter(|d| d.contains("Bound")).count();
        unschedulable += fused.iter().filter(|d| d.contains("Unschedulable")).count();
    }
    // The clusters exercise both outcomes.
    assert!(bound > 1000, "{bound}");
    assert!(unschedulable > 100, "{unschedulable}");
}
