//! kube-scheduler v1.36's PodGroup scheduling cycle with delayed preemption (KEP-4671 "The
//! Workload Scheduling Cycle", "Scheduling Algorithm", "Failure Handling", "Delayed
//! Preemption"; upstream `pkg/scheduler/schedule_one_podgroup.go` and GangScheduling's
//! `PlacementFeasible`), on with k8s-mini's `PodGroupSchedulingCycle` gate. Each cluster has
//! three nodes of 2 CPUs; the gangs are Indexed Jobs whose Workload and PodGroup the Job
//! controller makes (gang minCount = parallelism). Values worked out by hand in each test.

use std::collections::BTreeMap;

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_sched::explain::PodGroupCycleOutcome;
use k8s_types::apiserver::ApiExt;
use k8s_types::core::{Event, Node, Pod};
use k8s_types::scheduling::v1alpha2::PodGroup;
use k8s_types::Object;

const GATES: [&str; 4] = [
    "GenericWorkload",
    "GangScheduling",
    "EnableWorkloadWithJob",
    "PodGroupSchedulingCycle",
];

/// The gang gates with k8s-mini's v1.35 emulation: the Permit-only path.
const V1_35: [&str; 4] = [
    "GenericWorkload",
    "GangScheduling",
    "EnableWorkloadWithJob",
    "!PodGroupSchedulingCycle",
];

fn cluster(gates: &[&str]) -> Cluster {
    // `!Gate` turns a gate off.
    let feature_gates: BTreeMap<String, bool> = gates
        .iter()
        .map(|g| match g.strip_prefix('!') {
            Some(off) => (off.to_string(), false),
            None => (g.to_string(), true),
        })
        .collect();
    let mut c = Cluster::new(ClusterConfig {
        feature_gates,
        ..Default::default()
    })
    .expect("cluster");
    for n in ["node-a", "node-b", "node-c"] {
        let node: Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": n},
            "status": {"capacity": {"cpu": "2", "memory": "16Gi", "pods": "110"}}
        }))
        .expect("node");
        c.add_node(node).expect("add node");
    }
    for (name, value) in [("low", 10), ("high", 1000)] {
        let pc = serde_json::from_value(serde_json::json!({
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value
        }))
        .expect("priority class");
        c.apply(Object::PriorityClass(pc)).expect("priority class");
    }
    c
}

/// An Indexed Job of `n` workers of `cpu` CPUs each, priority class `class`.
fn job(n: i32, cpu: &str, class: &str) -> Object {
    Object::Job(
        serde_json::from_value(serde_json::json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "train", "namespace": "default"},
            "spec": {
                "parallelism": n, "completions": n, "completionMode": "Indexed",
                "template": {"spec": {
                    "restartPolicy": "Never",
                    "priorityClassName": class,
                    "containers": [{"name": "w", "image": "busybox:1.36",
                                    "resources": {"requests": {"cpu": cpu}}}]
                }}
            }
        }))
        .expect("job"),
    )
}

/// A low-priority pod of 1 CPU bound to `node`.
fn filler(name: &str, node: &str) -> Object {
    Object::Pod(
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "filler"}},
            "spec": {
                "nodeName": node,
                "priorityClassName": "low",
                "containers": [{"name": "c", "image": "busybox:1.36",
                                "resources": {"requests": {"cpu": "1"}}}]
            }
        }))
        .expect("pod"),
    )
}

fn workers(c: &mut Cluster) -> Vec<Pod> {
    c.api()
        .list_typed::<Pod>(Some("default"), None)
        .into_iter()
        .filter(|p| p.metadata.name.starts_with("train-"))
        .collect()
}

fn events(c: &mut Cluster, reason: &str) -> Vec<Event> {
    c.api()
        .list_typed::<Event>(Some("default"), None)
        .into_iter()
        .filter(|e| e.reason == reason)
        .collect()
}

fn pod_group_name(c: &mut Cluster) -> String {
    c.api()
        .list_typed::<PodGroup>(Some("default"), None)
        .remove(0)
        .metadata
        .name
}

/// Three 2-CPU workers on three 2-CPU nodes: the cycle places one per node (each node is full
/// after one) on one snapshot and all three bind in the same tick, without any of them waiting
/// at Permit.
#[test]
fn a_feasible_gang_binds_as_one_unit_in_one_cycle() {
    let mut c = cluster(&GATES);
    c.apply(job(3, "2", "high")).expect("job");
    let mut bound_at = None;
    for _ in 0..5 {
        c.tick();
        assert!(c.scheduler().waiting_pods().is_empty());
        let n = workers(&mut c)
            .iter()
            .filter(|p| p.node_name().is_some())
            .count();
        assert!(n == 0 || n == 3, "partial gang bound: {n}");
        if n == 3 && bound_at.is_none() {
            bound_at = Some(c.now());
        }
    }
    assert!(bound_at.is_some());
    let mut nodes: Vec<String> = workers(&mut c)
        .iter()
        .filter_map(|p| p.node_name().map(str::to_string))
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["node-a", "node-b", "node-c"]);
    let pg = pod_group_name(&mut c);
    let cycle = c
        .scheduler()
        .pod_group_cycle("default", &pg)
        .expect("a cycle ran")
        .clone();
    assert_eq!(cycle.outcome, PodGroupCycleOutcome::Scheduled);
    assert_eq!((cycle.members, cycle.placed, cycle.victims), (3, 3, 0));
    assert_eq!(events(&mut c, "FailedScheduling").len(), 0);
}

/// Four 2-CPU workers on three 2-CPU nodes: in the one cycle train-0..2 are placed (one per
/// node), train-3 fits nowhere; PlacementFeasible: 3 scheduled + 0 remaining < 4. The whole group
/// is rejected in that same tick: nothing reserved, nobody waiting at Permit (the v1.35 path
/// would hold three reservations for 5 minutes), no timeout ever, and each placed member carries
/// PlacementFeasible's message.
#[test]
fn an_infeasible_gang_is_rejected_at_once_with_nothing_reserved() {
    let mut c = cluster(&GATES);
    c.apply(job(4, "2", "high")).expect("job");
    while c.now() <= 320 {
        c.tick();
        assert!(c.scheduler().waiting_pods().is_empty(), "t={}", c.now());
        assert!(workers(&mut c).iter().all(|p| p.node_name().is_none()));
    }
    let failed = events(&mut c, "FailedScheduling");
    let group_msg = "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining";
    assert_eq!(
        failed.iter().filter(|e| e.message == group_msg).count(),
        3,
        "{failed:?}"
    );
    // train-3's own FitError; no lower-priority pod to preempt.
    assert_eq!(
        failed
            .iter()
            .filter(|e| e.message
                == "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")
            .count(),
        1
    );
    assert!(failed.iter().all(|e| !e.message.contains("timeout")));
    let pg = pod_group_name(&mut c);
    let cycle = c
        .scheduler()
        .pod_group_cycle("default", &pg)
        .expect("cycles ran")
        .clone();
    assert_eq!(cycle.outcome, PodGroupCycleOutcome::Unschedulable);
    assert_eq!(cycle.message, group_msg);
    assert_eq!(
        cycle
            .first_blocking
            .as_ref()
            .map(|(p, _)| p.starts_with("train-3-")),
        Some(true)
    );
}

/// Each node runs a 1-CPU low-priority filler, so no 2-CPU worker fits anywhere (checked with the
/// cycle and, for the feasible gang, without it).
/// - 3 workers: each needs its node's one filler gone; with delayed preemption the cycle plans
///   the three nominations on one snapshot (3 >= minCount 3), then evicts the 3 fillers and
///   nominates the workers. They bind together once the fillers' 30 s grace period has run out.
/// - 4 workers: the fourth finds no node even with every filler gone (3 nodes, 4 pods of a
///   whole node each): 3 + 0 < 4, the group is rejected and **nothing** is preempted.
#[test]
fn delayed_preemption_evicts_only_for_a_gang_that_can_be_placed() {
    for gates in [&GATES[..], &V1_35[..]] {
        let mut c = cluster(gates);
        for (i, n) in ["node-a", "node-b", "node-c"].iter().enumerate() {
            c.apply(filler(&format!("filler-{i}"), n)).expect("filler");
        }
        for _ in 0..10 {
            c.tick();
        }
        c.apply(job(3, "2", "high")).expect("job");
        let start = c.now();
        let mut bound_at = None;
        while c.now() < start + 60 {
            c.tick();
            let n = workers(&mut c)
                .iter()
                .filter(|p| p.node_name().is_some())
                .count();
            assert!(n == 0 || n == 3, "partial gang bound: {n}");
            if n == 3 && bound_at.is_none() {
                bound_at = Some(c.now());
            }
        }
        assert_eq!(events(&mut c, "Preempted").len(), 3);
        let bound_at = bound_at.expect("the gang binds");
        // Evicted in the Job's first scheduling tick (t=10), gone once the 30 s grace period has
        // run out, bound right after: t=42 with the cycle and without it (the v1.35 path evicts the
        // same three victims at t=10), so the cycle changes whether victims are evicted, not when
        // a feasible gang lands.
        assert_eq!(bound_at, 42);
    }

    let mut c = cluster(&GATES);
    for (i, n) in ["node-a", "node-b", "node-c"].iter().enumerate() {
        c.apply(filler(&format!("filler-{i}"), n)).expect("filler");
    }
    c.tick();
    c.apply(job(4, "2", "high")).expect("job");
    for _ in 0..400 {
        c.tick();
    }
    assert_eq!(events(&mut c, "Preempted").len(), 0);
    let fillers = c
        .api()
        .list_typed::<Pod>(Some("default"), None)
        .into_iter()
        .filter(|p| {
            p.metadata.name.starts_with("filler-") && p.metadata.deletion_timestamp.is_none()
        })
        .count();
    assert_eq!(fillers, 3);
    assert!(workers(&mut c).iter().all(|p| p.node_name().is_none()));
}

/// Without the `PodGroupSchedulingCycle` gate the same infeasible gang takes the v1.35 Permit
/// path: three members wait at Permit (reserved) after the first tick, no group cycle is
/// recorded.
#[test]
fn without_the_gate_the_permit_path_is_kept() {
    let mut c = cluster(&V1_35);
    c.apply(job(4, "2", "high")).expect("job");
    c.tick();
    c.tick();
    assert_eq!(c.scheduler().waiting_pods().len(), 3);
    let pg = pod_group_name(&mut c);
    assert!(c.scheduler().pod_group_cycle("default", &pg).is_none());
}
