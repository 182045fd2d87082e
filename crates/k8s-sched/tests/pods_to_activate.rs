//! PodsToActivate end to end (upstream `PodsToActivate` + `SchedulingQueue.Activate`, used by
//! scheduler-plugins Coscheduling's `ActivateSiblings` at Permit Wait): a gang member rejected
//! earlier goes back to activeQ as soon as a sibling reaches Permit, so the gang binds ticks
//! after the blocker leaves instead of after the 5-minute unschedulable flush.

use k8s_sched::QueueLocation;
use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_testing::{gang_pod, node, pod, pod_group, FakeApi};
use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::object::Kind;

/// node-1 (2 CPU) runs `big` (1 CPU); PodGroup `gang` (minMember 2) has gang-0 and gang-1
/// (1 CPU each, created in that order). Computed by hand:
///
/// - tick 1000: gang-0 fits the free CPU and waits at Permit; gang-1 does not fit, and
///   Coscheduling's PostFilter rejects the waiting gang-0 (gap 1/2 > 10%). gang-0 (rejected by
///   Coscheduling, which registers Pod Add and PodGroup Add/Update only) is unschedulable;
///   forgetting its assumed copy is an AssignedPodDelete, which NodeResourcesFit's hint
///   answers with Queue, so gang-1 backs off for 1 tick.
/// - tick 1001: `big` is gone (AssignedPodDelete: Coscheduling did not register it, gang-0 stays
///   unschedulable). gang-1 fits and waits at Permit; ActivateSiblings moves gang-0 to activeQ,
///   after its turn in this tick's pass (it sorts first: same queue timestamp, created first).
/// - tick 1002: gang-0 fits beside the waiting gang-1, Permit counts 1 + 1 >= 2 and allows
///   both: both are bound at tick 1002. (Without activation gang-0 would wait for the flush at
///   tick 1300, and gang-1 would time out at Permit at tick 1061.)
#[test]
fn rejected_member_is_activated_when_a_sibling_waits_and_the_gang_binds_at_tick_1002() {
    let mut api = FakeApi::new();
    assert_eq!(api.now, 1000);
    api.add(node("node-1", "2", "8Gi", &[]));
    let mut big = pod("big", "1", "128Mi", &[]);
    big.spec.node_name = Some("node-1".into());
    api.add(big);
    api.add(pod_group("gang", 2));
    // preemptionPolicy Never: the gang feasibility check (which would reject both members up
    // front while `big` holds the CPU) only runs for members that may preempt.
    for name in ["gang-0", "gang-1"] {
        let mut p = gang_pod(name, "gang", "1");
        p.spec.preemption_policy = Some("Never".into());
        api.add(p);
    }
    let mut s = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();

    s.schedule(&mut api);
    assert!(s.waiting_pods().is_empty());
    assert_eq!(
        s.queue_location("default/gang-0", api.now),
        Some(QueueLocation::Unschedulable)
    );
    assert_eq!(
        s.queue_location("default/gang-1", api.now),
        Some(QueueLocation::Backoff)
    );

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
    s.schedule(&mut api);
    let waiting: Vec<String> = s.waiting_pods().iter().map(|w| w.pod.key()).collect();
    assert_eq!(waiting, vec!["default/gang-1"]);
    assert_eq!(
        s.queue_location("default/gang-0", api.now),
        Some(QueueLocation::Active)
    );
    assert_eq!(
        s.pending_pod("default/gang-0", api.now).map(|e| e.attempts),
        Some(1)
    );
    assert_eq!(api.pod("gang-0").node_name(), None);
    assert_eq!(api.pod("gang-1").node_name(), None);

    api.now = 1002;
    s.schedule(&mut api);
    assert_eq!(api.pod("gang-0").node_name(), Some("node-1"));
    assert_eq!(api.pod("gang-1").node_name(), Some("node-1"));
    assert!(s.waiting_pods().is_empty());
    assert_eq!(
        api.pod_group("gang").status.phase.as_deref(),
        Some("Scheduled")
    );
}
