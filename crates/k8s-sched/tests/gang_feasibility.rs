//! Coscheduling's gang feasibility check end to end: a gang rejected because it cannot reach its
//! quorum (an equal-priority pod holds the capacity, so preemption cannot help) is moved back to
//! the queue when that pod leaves (the Pod Delete event Coscheduling registers for such pods),
//! not left for the 5-minute unschedulable flush.

use k8s_sched::QueueLocation;
use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_testing::{gang_pod, node, pod, pod_group, FakeApi};
use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::object::Kind;

/// node-1 (2 CPU) runs `big` (1 CPU, priority 0 like the gang); PodGroup `gang` (minMember 2)
/// has gang-0 and gang-1 (1 CPU each). Computed by hand: 1 CPU free, `big` is not evictable
/// (same priority), so at most 1 member fits: both are rejected at PreFilter at tick 1000 and
/// are unschedulable. When `big` is deleted, the hint queues both; they bind together.
#[test]
fn an_infeasible_gang_is_retried_when_capacity_frees_up() {
    let mut api = FakeApi::new();
    api.add(node("node-1", "2", "8Gi", &[]));
    let mut big = pod("big", "1", "128Mi", &[]);
    big.spec.node_name = Some("node-1".into());
    api.add(big);
    api.add(pod_group("gang", 2));
    api.add(gang_pod("gang-0", "gang", "1"));
    api.add(gang_pod("gang-1", "gang", "1"));
    let mut s = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();

    s.schedule(&mut api);
    assert!(s.waiting_pods().is_empty());
    for name in ["gang-0", "gang-1"] {
        let key = format!("default/{name}");
        assert_eq!(
            s.queue_location(&key, api.now),
            Some(QueueLocation::Unschedulable),
            "{key}"
        );
        let msgs = api.pod_event_messages(name, "FailedScheduling");
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert!(
            msgs[0].starts_with(
                "0/1 nodes are available: podGroup default/gang cannot reach its quorum: \
                 minMember 2, 0 placed, 2 to place, at most 1 fit (1 of 1 nodes admit a member), \
                 resource gap: cpu need 2, available 1."
            ),
            "{msgs:?}"
        );
    }

    api.now = 1001;
    api.delete(
        &Kind::Pod,
        "default",
        "big",
        DeleteOptions {
            grace_period_seconds: Some(0),
            ..Default::default()
        },
    )
    .unwrap();
    for _ in 0..3 {
        s.schedule(&mut api);
        api.now += 1;
    }
    assert_eq!(api.pod("gang-0").node_name(), Some("node-1"));
    assert_eq!(api.pod("gang-1").node_name(), Some("node-1"));
}
