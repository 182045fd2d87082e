//! The scheduler_perf workload shapes of `k8s_sched::perf_workloads` at tiny sizes, run as plain
//! tests (upstream runs the `integration-test` label of
//! `test/integration/scheduler_perf/config/performance-config.yaml` the same way): the same
//! objects the criterion benches use, through the detached API only, checking that every pod the
//! shape allows is scheduled and where it went.

use k8s_types::object::Shared;
use std::collections::BTreeMap;

use k8s_sched::perf_workloads::{self as w, RunStats, Workload, LABEL_ZONE};
use k8s_sched::{Decision, Scheduler};
use k8s_types::core::Pod;

fn run(wl: &Workload) -> (Scheduler, Vec<Shared<Pod>>, RunStats) {
    let (mut s, pods) = w::load(wl, None).expect("default profile");
    let stats = w::run(&mut s, &pods);
    (s, pods, stats)
}

/// Pods per node in the scheduler's cache.
fn pods_per_node(s: &Scheduler) -> BTreeMap<String, usize> {
    s.cache()
        .node_infos()
        .iter()
        .map(|n| (n.name().to_string(), n.pod_count()))
        .collect()
}

#[test]
fn scheduling_basic_spreads_pods_evenly() {
    // 5 nodes with one existing pod each, 10 more pods: LeastAllocated and BalancedAllocation
    // send each pod to an emptiest node, so every node ends with 3 pods.
    let wl = w::SCHEDULING_BASIC_500.scaled(5, 5, 10);
    let (s, _, stats) = run(&wl);
    assert_eq!(
        stats,
        RunStats {
            bound: 10,
            attempts: 10,
            unschedulable: 0
        }
    );
    assert!(pods_per_node(&s).values().all(|n| *n == 3));
    // 3 pods of 100m / 500Mi on each node.
    for n in s.cache().node_infos() {
        assert_eq!(n.requested().milli_cpu, 300);
        assert_eq!(n.requested().memory, 3 * 500 * 1024 * 1024);
    }
}

#[test]
fn scheduling_basic_fills_nodes_up_to_their_cpu() {
    // 2 nodes of 4 CPU hold 40 pods of 100m each: 40 existing, 40 more fit, the 41st finds
    // every node's CPU taken (memory: 40 x 500Mi = 20Gi of 32Gi, pods: 40 of 110).
    let wl = w::SCHEDULING_BASIC_500.scaled(2, 40, 41);
    let (s, pods, stats) = run(&wl);
    assert_eq!(stats.bound, 40);
    assert_eq!(stats.unschedulable, 1);
    assert!(pods_per_node(&s).values().all(|n| *n == 40));
    let mut s = s;
    let again = s.schedule_one(Shared::clone(&pods[40]));
    assert_eq!(
        again.decision,
        Decision::Unschedulable {
            message: "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are \
                      available: 2 No preemption victims found for incoming pod."
                .to_string()
        }
    );
}

#[test]
fn node_affinity_pods_land_only_in_allowed_zones() {
    let wl = w::SCHEDULING_NODE_AFFINITY_5000.scaled(4, 4, 8);
    let (s, pods, stats) = run(&wl);
    assert_eq!(stats.bound, 8);
    assert!(s.cache().node_infos().iter().all(|n| n
        .node()
        .metadata
        .labels
        .get(LABEL_ZONE)
        .map(String::as_str)
        == Some("zone1")));
    // A node outside zone1/zone2 is never chosen.
    let mut s = s;
    let mut other = wl.node(99);
    other
        .metadata
        .labels
        .insert(LABEL_ZONE.to_string(), "zone3".to_string());
    s.add_node(other);
    let mut p = (*pods[0]).clone();
    p.metadata.name = "extra".into();
    p.metadata.uid = Some("uid-extra".into());
    let r = s.schedule_one(p);
    assert_ne!(r.decision.bound_node(), Some(w::node_name(99).as_str()));
    assert!(r.decision.bound_node().is_some());
}

#[test]
fn topology_spreading_keeps_zones_within_max_skew() {
    // 6 nodes in 3 zones, 6 existing default pods, 12 spreading pods (maxSkew 5 on the zone).
    let wl = w::TOPOLOGY_SPREADING_5000.scaled(6, 6, 12);
    let (s, _, stats) = run(&wl);
    assert_eq!(stats.bound, 12);
    let mut blue_per_zone: BTreeMap<String, usize> = BTreeMap::new();
    for n in s.cache().node_infos() {
        let zone = n.node().metadata.labels[LABEL_ZONE].clone();
        let blue = n
            .pods()
            .iter()
            .filter(|p| p.pod.metadata.labels.get("color").map(String::as_str) == Some("blue"))
            .count();
        *blue_per_zone.entry(zone).or_default() += blue;
    }
    assert_eq!(blue_per_zone.len(), 3);
    // Even spread by the resource scores: 4 blue pods per zone.
    assert!(blue_per_zone.values().all(|n| *n == 4), "{blue_per_zone:?}");
}

#[test]
fn pod_anti_affinity_allows_one_green_pod_per_node() {
    // 10 nodes, 3 green pods already placed (sched-0), 10 more green pods (sched-1) whose
    // required anti-affinity covers both namespaces: only the 7 free nodes take one each.
    let wl = w::SCHEDULING_POD_ANTI_AFFINITY_5000.scaled(10, 3, 10);
    assert_eq!(wl.expected_scheduled(), 7);
    let (s, pods, stats) = run(&wl);
    assert_eq!(stats.bound, 7);
    assert_eq!(stats.unschedulable, 3);
    assert!(pods_per_node(&s).values().all(|n| *n == 1));
    let mut s = s;
    let r = s.schedule_one(Shared::clone(&pods[9]));
    match r.decision {
        Decision::Unschedulable { message } => assert!(
            message.starts_with(
                "0/10 nodes are available: 10 node(s) didn't match pod anti-affinity rules."
            ),
            "{message}"
        ),
        other => panic!("expected Unschedulable, got {other:?}"),
    }
}

#[test]
fn preemption_basic_evicts_three_low_priority_pods_per_high_priority_pod() {
    // 2 nodes full of 900m pods (4 each, 3600m of 4000m); each 3000m high-priority pod preempts
    // the 3 victims it needs on one node, then binds there.
    let wl = w::PREEMPTION_BASIC_500.scaled(2, 8, 2);
    let (s, _, stats) = run(&wl);
    assert_eq!(
        stats,
        RunStats {
            bound: 2,
            attempts: 4,
            unschedulable: 0
        }
    );
    for n in s.cache().node_infos() {
        assert_eq!(n.pod_count(), 2);
        assert_eq!(n.requested().milli_cpu, 900 + 3000);
    }
    // The 6 victims are gone.
    assert_eq!(s.cache().pods().len(), 8 - 6 + 2);
}

#[test]
fn gang_members_wait_until_the_group_is_complete() {
    let wl = w::GANG_5000.scaled(5, 2, 6);
    let (mut s, pods) = w::load(&wl, None).expect("default profile");
    let first = s.schedule_one(Shared::clone(&pods[0]));
    assert!(matches!(first.decision, Decision::Waiting { .. }));
    let second = s.schedule_one(Shared::clone(&pods[1]));
    assert!(matches!(second.decision, Decision::Waiting { .. }));
    let third = s.schedule_one(Shared::clone(&pods[2]));
    assert!(third.decision.bound_node().is_some());
    // The two waiting siblings bind with the third, in the order they started waiting.
    let others: Vec<&str> = third.others.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(others, vec!["gang/gang-pod-000000", "gang/gang-pod-000001"]);
    assert!(third.others.iter().all(|(_, d)| d.bound_node().is_some()));
    let rest = w::run(&mut s, &pods[3..]);
    assert_eq!(rest.bound, 3);
    assert!(s.waiting_pods().is_empty());
}

#[test]
fn gang_without_enough_members_is_rejected_by_prefilter() {
    // minMember 3 but only 2 members exist: Coscheduling's PreFilter rejects the pod; its
    // PostFilter adds the group rejection after DefaultPreemption's reason.
    let wl = w::GANG_5000.scaled(3, 0, 2);
    let (mut s, pods) = w::load(&wl, None).expect("default profile");
    let r = s.schedule_one(Shared::clone(&pods[0]));
    assert_eq!(
        r.decision,
        Decision::Unschedulable {
            message: "0/3 nodes are available: pre-filter pod gang-pod-000000 cannot find enough \
                      sibling pods, current pods number: 2, minMember of group: 3. preemption: \
                      0/3 nodes are available: 3 Preemption is not helpful for scheduling., \
                      PodGroup gang/gang-00000 gets rejected due to Pod gang-pod-000000 is \
                      unschedulable even after PostFilter"
                .to_string()
        }
    );
}

#[test]
fn loading_a_workload_puts_its_existing_pods_in_the_cache_before_the_run() {
    // 4 nodes, 6 existing pods placed round-robin: 2, 2, 1, 1 before anything is scheduled, so
    // the measured run does not include adding them.
    let wl = w::SCHEDULING_BASIC_500.scaled(4, 6, 1);
    let (s, _) = w::load(&wl, None).expect("default profile");
    let counts: Vec<usize> = pods_per_node(&s).into_values().collect();
    assert_eq!(counts, [2, 2, 1, 1]);
}

#[test]
fn deployment_pods_get_the_system_default_spreading() {
    // Node A is much larger, so the resource scores prefer it, but it already holds a pod of
    // the ReplicaSet: with the ReplicaSet known, PodTopologySpread's system default constraints
    // (weight 2) send the next pod of the set to B; without it they do not apply.
    let wl = w::DEPLOYMENTS_500.scaled(2, 0, 2);
    let place = |with_replica_set: bool| {
        let mut s = Scheduler::new(Default::default()).expect("default profile");
        let mut a = w::make_node("node-a", Some("moon-1"));
        for (k, v) in [("cpu", "64"), ("memory", "256Gi")] {
            let q = k8s_types::Quantity::parse(v).expect("quantity");
            a.status.allocatable.insert(k.to_string(), q.clone());
            a.status.capacity.insert(k.to_string(), q);
        }
        s.add_node(a);
        s.add_node(w::make_node("node-b", Some("moon-2")));
        if with_replica_set {
            for rs in wl.replica_sets() {
                s.add_object(k8s_types::object::Object::ReplicaSet(Box::new(rs)));
            }
        }
        let mut first = wl.measure_pod(0);
        first.spec.node_name = Some("node-a".into());
        s.add_pod(first);
        let r = s.schedule_one(wl.measure_pod(1));
        r.decision.bound_node().map(str::to_string)
    };
    assert_eq!(place(true).as_deref(), Some("node-b"));
    assert_eq!(place(false).as_deref(), Some("node-a"));
    // The whole shape at a small size: every pod is placed, spread over the nodes.
    let (s, _, stats) = run(&w::DEPLOYMENTS_500.scaled(6, 6, 24));
    assert_eq!(stats.bound, 24);
    assert!(
        pods_per_node(&s).values().all(|n| *n == 5),
        "{:?}",
        pods_per_node(&s)
    );
}
