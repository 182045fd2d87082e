//! Scheduler benchmark workloads as data: the shapes of upstream
//! `test/integration/scheduler_perf/config/performance-config.yaml` (SchedulingBasic,
//! SchedulingNodeAffinity, TopologySpreading, SchedulingPodAntiAffinity, PreemptionBasic) plus a
//! gang workload shaped like upstream's `cpg/performance-config.yaml` gang cases (groups of 3),
//! and a Deployments workload (pods controlled by ReplicaSets, so PodTopologySpread's system
//! default constraints apply to them, as they do to every Deployment's pods in a real cluster),
//! with the node and pod templates of `config/templates/node-default.yaml`,
//! `config/pod-default.yaml`, `pod-with-node-affinity.yaml`, `pod-with-topology-spreading.yaml`,
//! `pod-with-pod-anti-affinity.yaml`, `pod-low-priority.yaml` and `pod-high-priority.yaml`.
//!
//! Defined once and used by the criterion benches (`benches/scheduler_perf.rs`, full sizes) and
//! by the integration test `tests/perf_workloads.rs` (tiny sizes, as upstream runs its
//! `integration-test` label), so both exercise the same objects.
//!
//! Deliberate differences from upstream's harness: node names are `node-00000`, ... and pod names
//! `<prefix>000000`, ... instead of random `generateName` suffixes (so name order is creation
//! order); zone labels are assigned round-robin (upstream's `labelNodePrepareStrategy` picks a
//! value per node); pods are created already known to the scheduler instead of through an
//! apiserver.

use k8s_types::object::Shared;
use std::collections::BTreeMap;

use k8s_types::apps::ReplicaSet;
use k8s_types::core::{
    Affinity, Container, ContainerPort, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement,
    NodeSelectorTerm, Pod, PodAffinity, PodAffinityTerm, ResourceList, ResourceRequirements,
    TopologySpreadConstraint, POD_GROUP_LABEL,
};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::OwnerReference;
use k8s_types::object::Object;
use k8s_types::scheduling::PodGroup;
use k8s_types::Quantity;

use crate::config::KubeSchedulerConfiguration;
use crate::scheduler::detached::Decision;
use crate::Scheduler;
use k8s_sched_framework::ConfigError;

/// Label key of a node's hostname (upstream `v1.LabelHostname`).
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
/// Label key of a node's zone (upstream `v1.LabelTopologyZone`).
pub const LABEL_ZONE: &str = "topology.kubernetes.io/zone";

/// Node allocatable CPU of upstream `node-default.yaml`: 4 CPU (milli-CPU 4000).
pub const NODE_CPU: &str = "4";
/// Node allocatable memory of upstream `node-default.yaml`: 32Gi (bytes).
pub const NODE_MEMORY: &str = "32Gi";
/// Node allocatable pods of upstream `node-default.yaml`.
pub const NODE_PODS: &str = "110";

/// The pod templates of the workloads (upstream `config/*.yaml` pod files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodTemplate {
    /// `pod-default.yaml`: 100m CPU, 500Mi memory, containerPort 80 (no hostPort).
    Default,
    /// `pod-with-node-affinity.yaml`: the default pod requiring zone In [zone1, zone2].
    NodeAffinity,
    /// `pod-with-topology-spreading.yaml`: label color=blue, a DoNotSchedule zone constraint
    /// with maxSkew 5 over pods labelled color=blue.
    TopologySpreading,
    /// `pod-with-pod-anti-affinity.yaml`: label color=green, required anti-affinity to
    /// color=green pods on the same hostname in namespaces sched-0 and sched-1.
    PodAntiAffinity,
    /// `pod-low-priority.yaml`: priority 0 (unset), 900m CPU, 500Mi, terminationGracePeriod 0.
    LowPriority,
    /// `pod-high-priority.yaml`: priority 10, 3000m CPU, 500Mi.
    HighPriority,
    /// A gang member: the default pod labelled `scheduling.x-k8s.io/pod-group: gang-<i / size>`.
    Gang {
        /// Members per PodGroup (also the PodGroup's `minMember`).
        size: usize,
    },
    /// A Deployment's pod: the default pod labelled `app: rs-<i / size>` and controlled by the
    /// ReplicaSet `rs-<i / size>` (selector `app: rs-<i / size>`), so PodTopologySpread's system
    /// default constraints (hostname maxSkew 3, zone maxSkew 5, `ScheduleAnyway`) spread it.
    ReplicaSet {
        /// Pods per ReplicaSet.
        size: usize,
    },
}

/// One scheduler_perf workload: create `nodes` nodes, `existing_pods` pods already bound (upstream
/// schedules them before measuring; here they are placed round-robin, as upstream's result on
/// identical nodes is an even spread), then schedule `measure_pods` pods and count pods/s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Upstream test name and workload, e.g. `SchedulingBasic/5000Nodes_10000Pods`.
    pub name: &'static str,
    /// Number of nodes.
    pub nodes: usize,
    /// Zone label values assigned round-robin to the nodes (none: no zone label).
    pub zones: &'static [&'static str],
    /// Pods placed before measuring.
    pub existing_pods: usize,
    /// Template and namespace of the existing pods.
    pub existing_template: PodTemplate,
    /// Namespace of the existing pods.
    pub existing_namespace: &'static str,
    /// Pods scheduled while measuring.
    pub measure_pods: usize,
    /// Template of the measured pods.
    pub measure_template: PodTemplate,
    /// Namespace of the measured pods.
    pub measure_namespace: &'static str,
    /// kube-scheduler's published scheduler_perf threshold for this shape, in pods/s (upstream
    /// `threshold:` of the 5000-node workloads), when there is one.
    pub upstream_threshold: Option<u32>,
}

const ZONES_1: &[&str] = &["zone1"];
const ZONES_MOON: &[&str] = &["moon-1", "moon-2", "moon-3"];

impl Workload {
    /// The same shape with other sizes (for the tiny integration-test versions).
    pub fn scaled(&self, nodes: usize, existing_pods: usize, measure_pods: usize) -> Workload {
        Workload {
            nodes,
            existing_pods,
            measure_pods,
            ..self.clone()
        }
    }

    /// Node `i` of the workload.
    pub fn node(&self, i: usize) -> Node {
        let zone = if self.zones.is_empty() {
            None
        } else {
            Some(self.zones[i % self.zones.len()])
        };
        make_node(&node_name(i), zone)
    }

    /// Every node, in name order.
    pub fn all_nodes(&self) -> Vec<Node> {
        (0..self.nodes).map(|i| self.node(i)).collect()
    }

    /// Existing pod `i`, bound round-robin to node `i % nodes`.
    pub fn existing_pod(&self, i: usize) -> Pod {
        let mut p = make_pod(self.existing_template, self.existing_namespace, "init-", i);
        if self.nodes > 0 {
            p.spec.node_name = Some(node_name(i % self.nodes));
        }
        p
    }

    /// Every existing pod.
    pub fn all_existing_pods(&self) -> Vec<Pod> {
        (0..self.existing_pods)
            .map(|i| self.existing_pod(i))
            .collect()
    }

    /// Measured pod `i` (pending).
    pub fn measure_pod(&self, i: usize) -> Pod {
        make_pod(self.measure_template, self.measure_namespace, "", i)
    }

    /// Every measured pod, in creation order.
    pub fn all_measure_pods(&self) -> Vec<Pod> {
        (0..self.measure_pods)
            .map(|i| self.measure_pod(i))
            .collect()
    }

    /// The PodGroups the measured pods belong to (gang workloads; empty otherwise).
    pub fn pod_groups(&self) -> Vec<PodGroup> {
        let PodTemplate::Gang { size } = self.measure_template else {
            return Vec::new();
        };
        let size = size.max(1);
        let groups = self.measure_pods.div_ceil(size);
        (0..groups)
            .map(|g| {
                let mut pg = PodGroup::default();
                pg.metadata.name = gang_name(g);
                pg.metadata.namespace = Some(self.measure_namespace.into());
                pg.spec.min_member = size as i32;
                pg
            })
            .collect()
    }

    /// The ReplicaSets controlling the measured pods (Deployments workloads; empty otherwise).
    pub fn replica_sets(&self) -> Vec<ReplicaSet> {
        let PodTemplate::ReplicaSet { size } = self.measure_template else {
            return Vec::new();
        };
        let size = size.max(1);
        (0..self.measure_pods.div_ceil(size))
            .map(|r| {
                let mut rs = ReplicaSet::default();
                rs.metadata.name = replica_set_name(r);
                rs.metadata.namespace = Some(self.measure_namespace.into());
                rs.metadata.uid = Some(format!("uid-{}", replica_set_name(r)));
                rs.spec.replicas = Some(size as i32);
                rs.spec.selector = Some(selector("app", &replica_set_name(r)));
                rs
            })
            .collect()
    }

    /// How many measured pods end up bound when the scheduler is exact: every one, except for
    /// the anti-affinity shape, where each node takes at most one green pod.
    pub fn expected_scheduled(&self) -> usize {
        match self.measure_template {
            PodTemplate::PodAntiAffinity => self
                .measure_pods
                .min(self.nodes.saturating_sub(self.existing_pods)),
            _ => self.measure_pods,
        }
    }
}

/// Name of node `i`: `node-00000`.
pub fn node_name(i: usize) -> String {
    format!("node-{i:05}")
}

/// Name of ReplicaSet `r`: `rs-00000`.
pub fn replica_set_name(r: usize) -> String {
    format!("rs-{r:05}")
}

/// Name of PodGroup `g`: `gang-00000`.
pub fn gang_name(g: usize) -> String {
    format!("gang-{g:05}")
}

fn q(s: &str) -> Quantity {
    // The constants of this module are valid quantities.
    Quantity::parse(s).unwrap_or_else(|_| Quantity::zero())
}

/// A node shaped like upstream `node-default.yaml` (4 CPU, 32Gi, 110 pods), labelled with its
/// hostname and, when given, a zone.
pub fn make_node(name: &str, zone: Option<&str>) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.to_string();
    n.metadata
        .labels
        .insert(LABEL_HOSTNAME.to_string(), name.to_string());
    if let Some(z) = zone {
        n.metadata
            .labels
            .insert(LABEL_ZONE.to_string(), z.to_string());
    }
    let mut a = ResourceList::new();
    a.insert("cpu".to_string(), q(NODE_CPU));
    a.insert("memory".to_string(), q(NODE_MEMORY));
    a.insert("pods".to_string(), q(NODE_PODS));
    n.status.capacity = a.clone();
    n.status.allocatable = a;
    n
}

fn container(cpu: &str, memory: &str) -> Container {
    let mut r = ResourceList::new();
    r.insert("cpu".to_string(), q(cpu));
    r.insert("memory".to_string(), q(memory));
    Container {
        name: "pause".to_string(),
        image: "registry.k8s.io/pause:3.10".to_string(),
        resources: ResourceRequirements {
            requests: r.clone().into(),
            limits: r.into(),
            claims: Vec::new(),
        },
        ports: vec![ContainerPort {
            container_port: 80,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn selector(key: &str, value: &str) -> LabelSelector {
    LabelSelector {
        match_labels: BTreeMap::from([(key.to_string(), value.to_string())]),
        match_expressions: Vec::new(),
    }
}

/// Pod `i` of a template in `namespace`, named `<prefix><template prefix><i:06>`, pending.
pub fn make_pod(template: PodTemplate, namespace: &str, prefix: &str, i: usize) -> Pod {
    let mut p = Pod::default();
    p.metadata.namespace = Some(namespace.into());
    p.metadata.uid = Some(format!("uid-{namespace}-{prefix}{i}"));
    let (name_prefix, cpu) = match template {
        PodTemplate::Default => ("pod-", "100m"),
        PodTemplate::NodeAffinity => ("node-affinity-", "100m"),
        PodTemplate::TopologySpreading => ("spreading-pod-", "100m"),
        PodTemplate::PodAntiAffinity => ("anti-affinity-pod-", "100m"),
        PodTemplate::LowPriority => ("low-pod-", "900m"),
        PodTemplate::HighPriority => ("high-pod-", "3000m"),
        PodTemplate::Gang { .. } => ("gang-pod-", "100m"),
        PodTemplate::ReplicaSet { .. } => ("rs-pod-", "100m"),
    };
    p.metadata.name = format!("{prefix}{name_prefix}{i:06}");
    p.spec.containers.push(container(cpu, "500Mi"));
    match template {
        PodTemplate::Default => {}
        PodTemplate::NodeAffinity => {
            p.spec.affinity = Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_expressions: vec![NodeSelectorRequirement {
                                key: LABEL_ZONE.to_string(),
                                operator: "In".to_string(),
                                values: vec!["zone1".to_string(), "zone2".to_string()],
                            }],
                            match_fields: Vec::new(),
                        }],
                    }),
                    preferred_during_scheduling_ignored_during_execution: Vec::new(),
                }),
                ..Default::default()
            });
        }
        PodTemplate::TopologySpreading => {
            p.metadata
                .labels
                .insert("color".to_string(), "blue".to_string());
            p.spec
                .topology_spread_constraints
                .push(TopologySpreadConstraint {
                    max_skew: 5,
                    topology_key: LABEL_ZONE.to_string(),
                    when_unsatisfiable: "DoNotSchedule".to_string(),
                    label_selector: Some(selector("color", "blue")),
                    ..Default::default()
                });
        }
        PodTemplate::PodAntiAffinity => {
            p.metadata
                .labels
                .insert("color".to_string(), "green".to_string());
            p.spec.affinity = Some(Affinity {
                pod_anti_affinity: Some(PodAffinity {
                    required_during_scheduling_ignored_during_execution: vec![PodAffinityTerm {
                        label_selector: Some(selector("color", "green")),
                        namespaces: vec!["sched-0".to_string(), "sched-1".to_string()],
                        topology_key: LABEL_HOSTNAME.to_string(),
                        ..Default::default()
                    }],
                    preferred_during_scheduling_ignored_during_execution: Vec::new(),
                }),
                ..Default::default()
            });
        }
        PodTemplate::LowPriority => {
            p.spec.termination_grace_period_seconds = Some(0);
        }
        PodTemplate::HighPriority => {
            p.spec.priority = Some(10);
        }
        PodTemplate::Gang { size } => {
            p.metadata
                .labels
                .insert(POD_GROUP_LABEL.to_string(), gang_name(i / size.max(1)));
        }
        PodTemplate::ReplicaSet { size } => {
            let rs = replica_set_name(i / size.max(1));
            p.metadata.labels.insert("app".to_string(), rs.clone());
            p.metadata.owner_references.push(OwnerReference {
                api_version: "apps/v1".to_string(),
                kind: "ReplicaSet".to_string(),
                uid: format!("uid-{rs}"),
                name: rs,
                controller: Some(true),
                block_owner_deletion: Some(true),
            });
        }
    }
    p
}

/// `SchedulingBasic/500Nodes`: 500 nodes, 500 existing pods, 1000 measured default pods.
pub const SCHEDULING_BASIC_500: Workload = Workload {
    name: "SchedulingBasic/500Nodes",
    nodes: 500,
    zones: &[],
    existing_pods: 500,
    existing_template: PodTemplate::Default,
    existing_namespace: "default",
    measure_pods: 1000,
    measure_template: PodTemplate::Default,
    measure_namespace: "default",
    upstream_threshold: None,
};

/// `SchedulingBasic/5000Nodes_10000Pods`: 5000 nodes, 1000 existing, 10000 measured; upstream
/// threshold 680 pods/s.
pub const SCHEDULING_BASIC_5000: Workload = Workload {
    name: "SchedulingBasic/5000Nodes_10000Pods",
    nodes: 5000,
    zones: &[],
    existing_pods: 1000,
    existing_template: PodTemplate::Default,
    existing_namespace: "default",
    measure_pods: 10000,
    measure_template: PodTemplate::Default,
    measure_namespace: "default",
    upstream_threshold: Some(680),
};

/// `SchedulingBasic` at 15000 nodes: 15000 nodes, 1000 existing, 10000 measured.
pub const SCHEDULING_BASIC_15000: Workload = Workload {
    name: "SchedulingBasic/15000Nodes_10000Pods",
    nodes: 15000,
    zones: &[],
    existing_pods: 1000,
    existing_template: PodTemplate::Default,
    existing_namespace: "default",
    measure_pods: 10000,
    measure_template: PodTemplate::Default,
    measure_namespace: "default",
    upstream_threshold: None,
};

/// `SchedulingNodeAffinity/5000Nodes_10000Pods`: nodes in zone1, 5000 existing, 10000 measured
/// pods requiring zone1 or zone2; upstream threshold 220 pods/s.
pub const SCHEDULING_NODE_AFFINITY_5000: Workload = Workload {
    name: "SchedulingNodeAffinity/5000Nodes_10000Pods",
    nodes: 5000,
    zones: ZONES_1,
    existing_pods: 5000,
    existing_template: PodTemplate::NodeAffinity,
    existing_namespace: "default",
    measure_pods: 10000,
    measure_template: PodTemplate::NodeAffinity,
    measure_namespace: "default",
    upstream_threshold: Some(220),
};

/// `TopologySpreading/5000Nodes`: nodes in 3 zones, 5000 existing default pods, 2000 measured
/// spreading pods; upstream threshold 460 pods/s.
pub const TOPOLOGY_SPREADING_5000: Workload = Workload {
    name: "TopologySpreading/5000Nodes",
    nodes: 5000,
    zones: ZONES_MOON,
    existing_pods: 5000,
    existing_template: PodTemplate::Default,
    existing_namespace: "default",
    measure_pods: 2000,
    measure_template: PodTemplate::TopologySpreading,
    measure_namespace: "default",
    upstream_threshold: Some(460),
};

/// `SchedulingPodAntiAffinity/5000Nodes`: 1000 existing anti-affinity pods in sched-0, 2000
/// measured in sched-1; upstream threshold 60 pods/s.
pub const SCHEDULING_POD_ANTI_AFFINITY_5000: Workload = Workload {
    name: "SchedulingPodAntiAffinity/5000Nodes",
    nodes: 5000,
    zones: &[],
    existing_pods: 1000,
    existing_template: PodTemplate::PodAntiAffinity,
    existing_namespace: "sched-0",
    measure_pods: 2000,
    measure_template: PodTemplate::PodAntiAffinity,
    measure_namespace: "sched-1",
    upstream_threshold: Some(60),
};

/// `PreemptionBasic/500Nodes`: 2000 existing low-priority 900m pods fill every node's CPU (4 per
/// node), then 500 high-priority 3000m pods each preempt 3 of them.
pub const PREEMPTION_BASIC_500: Workload = Workload {
    name: "PreemptionBasic/500Nodes",
    nodes: 500,
    zones: &[],
    existing_pods: 2000,
    existing_template: PodTemplate::LowPriority,
    existing_namespace: "default",
    measure_pods: 500,
    measure_template: PodTemplate::HighPriority,
    measure_namespace: "default",
    upstream_threshold: None,
};

/// `Gang/5000Nodes_1000Groups_3000Pods`: 1000 PodGroups with minMember 3 (upstream
/// `cpg/performance-config.yaml` CPGGangScheduling 5000Nodes_..._3000Pods groups of 3), 1000
/// existing default pods.
pub const GANG_5000: Workload = Workload {
    name: "Gang/5000Nodes_1000Groups_3000Pods",
    nodes: 5000,
    zones: &[],
    existing_pods: 1000,
    existing_template: PodTemplate::Default,
    existing_namespace: "default",
    measure_pods: 3000,
    measure_template: PodTemplate::Gang { size: 3 },
    measure_namespace: "gang",
    upstream_threshold: None,
};

/// `Deployments/500Nodes_5000Pods`: nodes in 3 zones, 500 existing default pods, 5000 measured
/// pods of 10 ReplicaSets of 500 (no upstream counterpart: scheduler_perf's pods have no owner,
/// so its workloads never meet the system default spreading every Deployment's pods get).
pub const DEPLOYMENTS_500: Workload = Workload {
    name: "Deployments/500Nodes_5000Pods",
    nodes: 500,
    zones: ZONES_MOON,
    existing_pods: 500,
    existing_template: PodTemplate::Default,
    existing_namespace: "default",
    measure_pods: 5000,
    measure_template: PodTemplate::ReplicaSet { size: 500 },
    measure_namespace: "default",
    upstream_threshold: None,
};

/// `Deployments/5000Nodes_10000Pods`: nodes in 3 zones, 1000 existing default pods, 10000
/// measured pods of 20 ReplicaSets of 500.
pub const DEPLOYMENTS_5000: Workload = Workload {
    name: "Deployments/5000Nodes_10000Pods",
    nodes: 5000,
    zones: ZONES_MOON,
    existing_pods: 1000,
    existing_template: PodTemplate::Default,
    existing_namespace: "default",
    measure_pods: 10000,
    measure_template: PodTemplate::ReplicaSet { size: 500 },
    measure_namespace: "default",
    upstream_threshold: None,
};

/// Every workload, in the order of the benchmark table.
pub const ALL: &[Workload] = &[
    SCHEDULING_BASIC_500,
    SCHEDULING_BASIC_5000,
    SCHEDULING_BASIC_15000,
    SCHEDULING_NODE_AFFINITY_5000,
    TOPOLOGY_SPREADING_5000,
    SCHEDULING_POD_ANTI_AFFINITY_5000,
    PREEMPTION_BASIC_500,
    GANG_5000,
    DEPLOYMENTS_500,
    DEPLOYMENTS_5000,
];

/// A scheduler (default profile, detached mode) loaded with a workload's nodes, existing pods,
/// PodGroups and ReplicaSets, and the measured pods (gang members are already known to it, as an informer would
/// have delivered them; the others are added when scheduled).
///
/// `percentage` sets `percentageOfNodesToScore` (`None`: upstream's adaptive default).
///
/// # Errors
/// A [`ConfigError`] if the default configuration does not build (it does).
pub fn load(
    w: &Workload,
    percentage: Option<i32>,
) -> Result<(Scheduler, Vec<Shared<Pod>>), ConfigError> {
    let config = KubeSchedulerConfiguration {
        percentage_of_nodes_to_score: percentage,
        ..KubeSchedulerConfiguration::default()
    };
    let mut s = Scheduler::new(config)?;
    for i in 0..w.nodes {
        s.add_node(w.node(i));
    }
    for i in 0..w.existing_pods {
        s.add_pod(w.existing_pod(i));
    }
    for g in w.pod_groups() {
        s.add_pod_group(g);
    }
    for rs in w.replica_sets() {
        s.add_object(Object::ReplicaSet(Box::new(rs)));
    }
    let pods: Vec<Shared<Pod>> = (0..w.measure_pods)
        .map(|i| Shared::from_typed(w.measure_pod(i)))
        .collect();
    if matches!(w.measure_template, PodTemplate::Gang { .. }) {
        for p in &pods {
            s.add_pod(Shared::clone(p));
        }
    }
    // The initial pods reach the cache here, outside the measured run.
    s.apply_detached_changes();
    Ok((s, pods))
}

/// What [`run`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Pods bound (including gang members bound when their group completed).
    pub bound: usize,
    /// Scheduling attempts.
    pub attempts: usize,
    /// Pods left unscheduled after their attempts.
    pub unschedulable: usize,
}

/// Schedules `pods` in order with [`Scheduler::schedule_one`]. A pod that triggered preemption
/// (its attempt failed but nominated a node) is attempted once more right away, as upstream's
/// queue does once the victims are gone.
pub fn run(s: &mut Scheduler, pods: &[Shared<Pod>]) -> RunStats {
    let mut stats = RunStats::default();
    for p in pods {
        let mut r = s.schedule_one(Shared::clone(p));
        stats.attempts += 1;
        if matches!(r.decision, Decision::Unschedulable { .. }) && s.is_nominated(p) {
            r = s.schedule_one(Shared::clone(p));
            stats.attempts += 1;
        }
        let bound_now = r
            .others
            .iter()
            .filter(|(_, d)| d.bound_node().is_some())
            .count();
        stats.bound += bound_now;
        match r.decision {
            Decision::Bound { .. } => stats.bound += 1,
            Decision::Waiting { .. } => {}
            _ => stats.unschedulable += 1,
        }
    }
    stats
}
