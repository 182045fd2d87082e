//! The scheduler's cache follows the apiserver through watch events and, when the watch history
//! was compacted (`410 Gone`), through a relist (upstream informers' list-then-watch), using only
//! the public API and the test apiserver of `common`.

use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_testing::{node, pod, FakeApi};
use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::object::Kind;

fn scheduler() -> Scheduler {
    Scheduler::new(KubeSchedulerConfiguration::default()).expect("default profile")
}

#[test]
fn deletions_and_new_nodes_reach_the_cache_by_watch_and_by_relist() {
    let mut api = FakeApi::new();
    api.add(node("n1", "1", "4Gi", &[]));
    api.add(node("n2", "1", "4Gi", &[]));
    api.add(pod("p1", "600m", "1Gi", &[]));
    api.add(pod("p2", "600m", "1Gi", &[]));
    let mut s = scheduler();
    s.schedule(&mut api);
    // LeastAllocated spreads the two pods; ties go to the name sorting last.
    assert_eq!(api.pod("p1").node_name(), Some("n2"));
    assert_eq!(api.pod("p2").node_name(), Some("n1"));

    // 400m left on each node: p3 does not fit.
    api.add(pod("p3", "600m", "1Gi", &[]));
    api.now += 1;
    s.schedule(&mut api);
    assert_eq!(api.pod("p3").node_name(), None);
    assert_eq!(s.cache().node_info("n1").map(|n| n.pod_count()), Some(1));

    // A third node arrives by watch; p3 goes there after its 1-tick backoff.
    api.add(node("n3", "1", "4Gi", &[]));
    api.now += 1;
    s.schedule(&mut api);
    assert_eq!(api.pod("p3").node_name(), Some("n3"));
    assert_eq!(
        s.cache()
            .node_infos()
            .iter()
            .map(|n| n.name())
            .collect::<Vec<_>>(),
        vec!["n1", "n2", "n3"]
    );

    // The history is compacted, then p1 is deleted and p4 created: the next watch is 410 Gone,
    // the scheduler relists, sees n2's free CPU and places p4 there.
    api.compact();
    api.delete(
        &Kind::Pod,
        "default",
        "p1",
        DeleteOptions {
            grace_period_seconds: Some(0),
            ..Default::default()
        },
    )
    .expect("delete p1");
    api.add(pod("p4", "600m", "1Gi", &[]));
    api.now += 1;
    s.schedule(&mut api);
    assert_eq!(api.pod("p4").node_name(), Some("n2"));
    assert_eq!(s.cache().node_info("n2").map(|n| n.pod_count()), Some(1));
    assert_eq!(
        s.cache().node_info("n2").map(|n| n.requested().milli_cpu),
        Some(600)
    );
    // Every pod is known: p2, p3, p4.
    assert_eq!(s.cache().pods().len(), 3);
}
