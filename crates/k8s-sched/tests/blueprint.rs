//! The project blueprint's expected placements, through the public API only: bin-packing vs
//! spreading on equal nodes, GPU bin-packing, and all-or-nothing gangs.

use std::collections::BTreeMap;

use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_testing::{gang_pod, node, pod, pod_group, FakeApi};

fn three_equal_nodes(api: &mut FakeApi) {
    for n in ["node-a", "node-b", "node-c"] {
        api.add(node(n, "4", "8Gi", &[]));
    }
    for i in 0..3 {
        api.add(pod(&format!("web-{i}"), "500m", "512Mi", &[]));
    }
}

fn counts(api: &FakeApi) -> BTreeMap<String, usize> {
    api.placement()
}

#[test]
fn binpack_fills_the_last_node() {
    let mut api = FakeApi::new();
    three_equal_nodes(&mut api);
    let mut s = Scheduler::new(KubeSchedulerConfiguration::preset("binpack").unwrap()).unwrap();
    s.schedule(&mut api);
    let want: BTreeMap<String, usize> = [
        ("node-a".into(), 0),
        ("node-b".into(), 0),
        ("node-c".into(), 3),
    ]
    .into();
    assert_eq!(counts(&api), want);
    assert_eq!(
        api.pod_event_messages("web-0", "Scheduled"),
        vec!["Successfully assigned default/web-0 to node-c"]
    );
    let ev = api
        .events()
        .into_iter()
        .find(|e| e.reason == "Scheduled")
        .unwrap();
    assert_eq!(ev.type_, "Normal");
    assert_eq!(ev.source.component, "default-scheduler");
}

#[test]
fn spread_puts_one_pod_per_node() {
    let mut api = FakeApi::new();
    three_equal_nodes(&mut api);
    let mut s = Scheduler::new(KubeSchedulerConfiguration::preset("spread").unwrap()).unwrap();
    s.schedule(&mut api);
    let want: BTreeMap<String, usize> = [
        ("node-a".into(), 1),
        ("node-b".into(), 1),
        ("node-c".into(), 1),
    ]
    .into();
    assert_eq!(counts(&api), want);
    // Ties go to the name sorting last: web-0 -> node-c, web-1 -> node-b, web-2 -> node-a.
    assert_eq!(api.pod("web-0").node_name(), Some("node-c"));
    assert_eq!(api.pod("web-1").node_name(), Some("node-b"));
    assert_eq!(api.pod("web-2").node_name(), Some("node-a"));
}

#[test]
fn default_profile_spreads_like_the_spread_preset() {
    let mut api = FakeApi::new();
    three_equal_nodes(&mut api);
    let mut s = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();
    s.schedule(&mut api);
    let want: BTreeMap<String, usize> = [
        ("node-a".into(), 1),
        ("node-b".into(), 1),
        ("node-c".into(), 1),
    ]
    .into();
    assert_eq!(counts(&api), want);
}

#[test]
fn binpack_gpus() {
    let mut api = FakeApi::new();
    for n in ["gpu-node-1", "gpu-node-2"] {
        api.add(node(n, "32", "128Gi", &[("nvidia.com/gpu", "2")]));
    }
    for i in 0..3 {
        api.add(pod(
            &format!("vllm-{i}"),
            "4",
            "16Gi",
            &[("nvidia.com/gpu", "1")],
        ));
    }
    let mut s = Scheduler::new(KubeSchedulerConfiguration::preset("binpack").unwrap()).unwrap();
    s.schedule(&mut api);
    assert_eq!(api.pod("vllm-0").node_name(), Some("gpu-node-2"));
    assert_eq!(api.pod("vllm-1").node_name(), Some("gpu-node-2"));
    assert_eq!(api.pod("vllm-2").node_name(), Some("gpu-node-1"));
    let gpu2 = s.cache().node_info("gpu-node-2").unwrap();
    assert_eq!(gpu2.requested().get("nvidia.com/gpu"), 2);
}

fn gang_cluster(api: &mut FakeApi) {
    api.add(node("node-1", "2", "8Gi", &[]));
}

#[test]
fn gang_that_fits_is_bound_together() {
    let mut api = FakeApi::new();
    gang_cluster(&mut api);
    api.add(pod_group("gang-ok", 2));
    api.add(gang_pod("gang-ok-0", "gang-ok", "1"));
    api.add(gang_pod("gang-ok-1", "gang-ok", "1"));
    let mut s = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();
    s.schedule(&mut api);
    assert_eq!(api.pod("gang-ok-0").node_name(), Some("node-1"));
    assert_eq!(api.pod("gang-ok-1").node_name(), Some("node-1"));
    assert!(s.waiting_pods().is_empty());
    assert_eq!(
        s.cache().node_info("node-1").unwrap().requested().milli_cpu,
        2000
    );
    let pg = api.pod_group("gang-ok");
    assert_eq!(pg.status.phase.as_deref(), Some("Scheduled"));
    assert_eq!(pg.status.scheduled, 2);
}

#[test]
fn gang_that_cannot_reach_quorum_binds_nothing_and_releases_the_node() {
    let mut api = FakeApi::new();
    gang_cluster(&mut api);
    api.add(pod_group("gang-fail", 3));
    // preemptionPolicy Never: Coscheduling's gang feasibility check (which would reject these
    // members up front) only runs for members that may preempt, so the Permit rollback is what
    // this test exercises.
    for i in 0..3 {
        let mut p = gang_pod(&format!("gang-fail-{i}"), "gang-fail", "1");
        p.spec.preemption_policy = Some("Never".into());
        api.add(p);
    }
    let mut s = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();
    s.schedule(&mut api);
    for i in 0..3 {
        assert_eq!(api.pod(&format!("gang-fail-{i}")).node_name(), None);
    }
    let ni = s.cache().node_info("node-1").unwrap();
    assert_eq!(ni.requested().milli_cpu, 0);
    assert_eq!(ni.pod_count(), 0);
    assert!(s.waiting_pods().is_empty());
    // The member that did not fit explains the whole gang's rejection; the two that waited at
    // Permit were rolled back.
    assert_eq!(
        api.pod_event_messages("gang-fail-2", "FailedScheduling"),
        vec!["0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never., PodGroup default/gang-fail gets rejected due to Pod gang-fail-2 is unschedulable even after PostFilter"]
    );
    assert_eq!(
        api.pod_event_messages("gang-fail-0", "FailedScheduling"),
        vec!["0/1 nodes are available: 1 optimistic rejection in PostFilter."]
    );
    let cond = api.pod("gang-fail-0");
    let c = cond.condition("PodScheduled").unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_deref()),
        ("False", Some("Unschedulable"))
    );
    assert_eq!(
        api.pod_group("gang-fail").status.phase.as_deref(),
        Some("Scheduling")
    );
    assert_eq!(api.pod_group("gang-fail").status.scheduled, 0);
    // The next tick binds nothing and repeats no event, but every member is tried again (as
    // upstream with queueing hints and PodsToActivate): gang-fail-0 failed while gang-fail-1's
    // Permit had activated it (a ForceActivate event recorded while it was in flight), so it
    // backs off 1 tick instead of staying unschedulable; forgetting the members held at Permit
    // was an `AssignedPodDelete` (upstream `handleBindingCycleError`) that NodeResourcesFit's
    // hint answers with Queue for gang-fail-2. At the next tick gang-fail-0 waits at Permit and
    // ActivateSiblings moves gang-fail-1 (unschedulable) to activeQ, so the pass repeats tick
    // 1000's: two members wait, gang-fail-2 does not fit, PostFilter rejects the gang.
    api.now += 1;
    s.schedule(&mut api);
    assert_eq!(
        api.pod_event_messages("gang-fail-0", "FailedScheduling")
            .len(),
        1
    );
    assert_eq!(
        api.pod_event_messages("gang-fail-2", "FailedScheduling")
            .len(),
        1
    );
    for i in 0..3 {
        let key = format!("default/gang-fail-{i}");
        assert_eq!(
            s.pending_pod(&key, api.now).map(|e| e.attempts),
            Some(2),
            "{key}"
        );
    }
    assert!(s.waiting_pods().is_empty());
    assert_eq!(
        s.cache().node_info("node-1").unwrap().requested().milli_cpu,
        0
    );
    for i in 0..3 {
        assert_eq!(api.pod(&format!("gang-fail-{i}")).node_name(), None);
    }
}

#[test]
fn two_gangs_on_one_node_all_or_nothing() {
    let mut api = FakeApi::new();
    gang_cluster(&mut api);
    api.add(pod_group("gang-ok", 2));
    api.add(pod_group("gang-fail", 3));
    api.add(gang_pod("gang-ok-0", "gang-ok", "1"));
    api.add(gang_pod("gang-ok-1", "gang-ok", "1"));
    for i in 0..3 {
        api.add(gang_pod(&format!("gang-fail-{i}"), "gang-fail", "1"));
    }
    let mut s = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();
    for _ in 0..3 {
        s.schedule(&mut api);
        api.now += 1;
    }
    assert_eq!(api.pod("gang-ok-0").node_name(), Some("node-1"));
    assert_eq!(api.pod("gang-ok-1").node_name(), Some("node-1"));
    for i in 0..3 {
        assert_eq!(api.pod(&format!("gang-fail-{i}")).node_name(), None);
    }
    let ni = s.cache().node_info("node-1").unwrap();
    assert_eq!(ni.requested().milli_cpu, 2000);
    assert_eq!(ni.pod_count(), 2);
    assert!(s.waiting_pods().is_empty());
}
