//! FailedScheduling messages, conditions, preemption and Permit timeouts as upstream words them,
//! through the public API only.

use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_testing::{gang_pod, node, pod, pod_group, FakeApi};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::{PodSchedulingGate, Taint};
use k8s_types::object::{Kind, Object};
use k8s_types::Quantity;

fn scheduler() -> Scheduler {
    Scheduler::new(KubeSchedulerConfiguration::default()).unwrap()
}

#[test]
fn insufficient_cpu_everywhere_without_victims() {
    let mut api = FakeApi::new();
    for n in ["a", "b", "c"] {
        api.add(node(n, "1", "4Gi", &[]));
        let mut filler = pod(&format!("filler-{n}"), "800m", "1Gi", &[]);
        filler.spec.node_name = Some(n.into());
        api.add(filler);
    }
    api.add(pod("big", "500m", "1Gi", &[]));
    let mut s = scheduler();
    s.schedule(&mut api);
    let want = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
    assert_eq!(
        api.pod_event_messages("big", "FailedScheduling"),
        vec![want]
    );
    let p = api.pod("big");
    let c = p.condition("PodScheduled").unwrap();
    assert_eq!(c.status, "False");
    assert_eq!(c.reason.as_deref(), Some("Unschedulable"));
    assert_eq!(c.message.as_deref(), Some(want));
    let ev = api
        .events()
        .into_iter()
        .find(|e| e.reason == "FailedScheduling")
        .unwrap();
    assert_eq!(
        (ev.type_.as_str(), ev.source.component.as_str()),
        ("Warning", "default-scheduler")
    );
}

#[test]
fn reasons_are_counted_and_sorted_as_upstream() {
    let mut api = FakeApi::new();
    for n in ["n1", "n2"] {
        api.add(node(n, "1", "4Gi", &[]));
    }
    for n in ["n3", "n4", "n5"] {
        let mut t = node(n, "8", "16Gi", &[]);
        t.spec.taints.push(Taint {
            key: "dedicated".into(),
            value: "gpu".into(),
            effect: "NoSchedule".into(),
            time_added: None,
        });
        api.add(t);
    }
    // 2 CPUs: more than n1/n2 have at all (unresolvable), so preemption cannot help anywhere.
    api.add(pod("p", "2", "1Gi", &[]));
    let mut s = scheduler();
    s.schedule(&mut api);
    assert_eq!(
        api.pod_event_messages("p", "FailedScheduling"),
        vec!["0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."]
    );
}

#[test]
fn preemption_evicts_the_lower_priority_pod_and_nominates_the_node() {
    let mut api = FakeApi::new();
    api.add(node("only", "2", "4Gi", &[]));
    let mut low = pod("low", "1500m", "1Gi", &[]);
    low.spec.priority = Some(0);
    low.spec.node_name = Some("only".into());
    api.add(low);
    let mut high = pod("high", "1", "1Gi", &[]);
    high.spec.priority = Some(1000);
    api.add(high);
    let high_uid = api.pod("high").metadata.uid.unwrap();
    let mut s = scheduler();
    s.schedule(&mut api);

    // The victim is being deleted, marked as a preemption target, and told why.
    let victim = api.pod("low");
    assert!(victim.is_terminating());
    let dt = victim.condition("DisruptionTarget").unwrap();
    assert_eq!(dt.reason.as_deref(), Some("PreemptionByScheduler"));
    assert_eq!(
        dt.message.as_deref(),
        Some("default-scheduler: preempting to accommodate a higher priority pod")
    );
    assert_eq!(
        api.pod_event_messages("low", "Preempted"),
        vec![format!("Preempted by pod {high_uid} on node only")]
    );
    // The preemptor waits for the victim, nominated to the node.
    let p = api.pod("high");
    assert_eq!(p.node_name(), None);
    assert_eq!(p.status.nominated_node_name.as_deref(), Some("only"));
    assert_eq!(
        api.pod_event_messages("high", "FailedScheduling"),
        vec!["0/1 nodes are available: 1 Insufficient cpu."]
    );

    // The victim's graceful deletion (an assigned-pod update) and an unrelated new pod do not
    // requeue the preemptor: NodeResourcesFit, which rejected it, registers Pod Delete and Node
    // Add/UpdateNodeAllocatable only (upstream queueing hints).
    api.now += 1;
    api.add(pod("unrelated", "10m", "1Mi", &[]));
    s.schedule(&mut api);
    assert_eq!(
        s.pending_pod("default/high", api.now).map(|e| e.attempts),
        Some(1)
    );
    assert_eq!(api.pod_event_messages("high", "FailedScheduling").len(), 1);

    // A node allocatable increase is worth a retry (upstream `isSchedulableAfterNodeChange`);
    // while the victim terminates, the preemptor does not preempt again.
    let mut only = match api.get(&Kind::Node, "", "only") {
        Ok(Object::Node(n)) => n,
        other => panic!("node: {other:?}"),
    };
    only.status
        .allocatable
        .insert("cpu".into(), Quantity::parse("2200m").unwrap());
    api.update(Object::Node(only)).unwrap();
    api.now += 1;
    s.schedule(&mut api);
    assert_eq!(
        s.pending_pod("default/high", api.now).map(|e| e.attempts),
        Some(2)
    );
    assert_eq!(api.pod("high").node_name(), None);
    assert_eq!(
        api.pod_event_messages("high", "FailedScheduling").last().map(String::as_str),
        Some("0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node.")
    );

    // Once the victim is gone the preemptor lands on its nominated node (after its backoff).
    api.finish_deletions();
    for _ in 0..3 {
        api.now += 1;
        s.schedule(&mut api);
    }
    assert_eq!(api.pod("high").node_name(), Some("only"));
}

#[test]
fn preemption_policy_never_is_reported() {
    let mut api = FakeApi::new();
    api.add(node("only", "1", "4Gi", &[]));
    let mut low = pod("low", "1", "1Gi", &[]);
    low.spec.node_name = Some("only".into());
    api.add(low);
    let mut p = pod("polite", "1", "1Gi", &[]);
    p.spec.priority = Some(100);
    p.spec.preemption_policy = Some("Never".into());
    api.add(p);
    let mut s = scheduler();
    s.schedule(&mut api);
    assert_eq!(
        api.pod_event_messages("polite", "FailedScheduling"),
        vec!["0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."]
    );
    assert!(!api.pod("low").is_terminating());
}

#[test]
fn gang_prefilter_message_matches_scheduler_plugins() {
    let mut api = FakeApi::new();
    api.add(node("n1", "4", "8Gi", &[]));
    api.add(pod_group("pg1", 3));
    api.add(gang_pod("a", "pg1", "100m"));
    api.add(gang_pod("b", "pg1", "100m"));
    let mut s = scheduler();
    s.schedule(&mut api);
    assert_eq!(
        api.pod_event_messages("a", "FailedScheduling"),
        vec!["0/1 nodes are available: pre-filter pod a cannot find enough sibling pods, current pods number: 2, minMember of group: 3. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling., PodGroup default/pg1 gets rejected due to Pod a is unschedulable even after PostFilter"]
    );
    // The third member arrives: the gang is complete and schedules in the next tick.
    api.now += 1;
    api.add(gang_pod("c", "pg1", "100m"));
    s.schedule(&mut api);
    for n in ["a", "b", "c"] {
        assert_eq!(api.pod(n).node_name(), Some("n1"), "{n}");
    }
}

#[test]
fn waiting_gang_members_time_out_and_release_their_node() {
    let mut api = FakeApi::new();
    api.add(node("n1", "4", "8Gi", &[]));
    let mut pg = pod_group("slow", 2);
    pg.spec.schedule_timeout_seconds = Some(5);
    api.add(pg);
    api.add(gang_pod("m0", "slow", "1"));
    // The second member exists (so PreFilter passes: the group has minMember pods and both fit
    // n1) but asks for a scheduler no profile serves, so it never reaches Permit. (A gated member
    // would not do: upstream PreFilter then rejects m0, see the next test.)
    let mut other = gang_pod("m1", "slow", "1");
    other.spec.scheduler_name = Some("other-scheduler".into());
    api.add(other);
    let mut s = scheduler();
    s.schedule(&mut api);
    assert_eq!(s.waiting_pods().len(), 1);
    assert_eq!(
        s.cache().node_info("n1").unwrap().requested().milli_cpu,
        1000
    );
    assert_eq!(api.pod("m0").node_name(), None);
    for _ in 0..5 {
        api.now += 1;
        s.schedule(&mut api);
    }
    assert!(s.waiting_pods().is_empty());
    assert_eq!(s.cache().node_info("n1").unwrap().requested().milli_cpu, 0);
    assert_eq!(
        api.pod_event_messages("m0", "FailedScheduling"),
        vec!["0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin Coscheduling."]
    );
    // The other scheduler's pod was never attempted.
    assert!(api.pod_event_messages("m1", "FailedScheduling").is_empty());
}

/// scheduler-plugins `core.go` PreFilter: each gated member counts against the surplus over
/// minMember; with 2 members, minMember 2 and one gated, the other is rejected with upstream's
/// message; with a third (ungated) member the surplus covers the gated one.
#[test]
fn gated_members_that_break_the_quorum_reject_the_gang_at_prefilter() {
    let mut api = FakeApi::new();
    api.add(node("n1", "4", "8Gi", &[]));
    api.add(pod_group("gated", 2));
    api.add(gang_pod("g0", "gated", "1"));
    let mut gated = gang_pod("g1", "gated", "1");
    gated.spec.scheduling_gates.push(PodSchedulingGate {
        name: "wait".into(),
    });
    api.add(gated);
    let mut s = scheduler();
    s.schedule(&mut api);
    let msgs = api.pod_event_messages("g0", "FailedScheduling");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(
        msgs[0].starts_with(
            "0/1 nodes are available: pre-filter pod g0 cannot proceed due to gated pods in the same PodGroup."
        ),
        "{msgs:?}"
    );
    assert!(s.waiting_pods().is_empty());
    // A third member: 3 pods - minMember 2 leaves room for one gated member.
    api.now += 1;
    api.add(gang_pod("g2", "gated", "1"));
    s.schedule(&mut api);
    assert_eq!(api.pod("g0").node_name(), Some("n1"));
    assert_eq!(api.pod("g2").node_name(), Some("n1"));
    assert_eq!(api.pod("g1").node_name(), None);
}

#[test]
fn no_nodes_is_a_scheduler_error() {
    let mut api = FakeApi::new();
    api.add(pod("lonely", "1", "1Gi", &[]));
    let mut s = scheduler();
    s.schedule(&mut api);
    assert_eq!(
        api.pod_event_messages("lonely", "FailedScheduling"),
        vec!["no nodes available to schedule pods"]
    );
    let p = api.pod("lonely");
    assert_eq!(
        p.condition("PodScheduled").unwrap().reason.as_deref(),
        Some("SchedulerError")
    );
}

#[test]
fn unchanged_failures_are_not_repeated_and_retry_waits_for_a_change() {
    let mut api = FakeApi::new();
    api.add(node("n1", "1", "4Gi", &[]));
    api.add(pod("big", "2", "1Gi", &[]));
    let mut s = scheduler();
    s.schedule(&mut api);
    let attempts = |s: &Scheduler, now| s.pending_pod("default/big", now).map(|e| e.attempts);
    assert_eq!(attempts(&s, api.now), Some(1));
    for _ in 0..5 {
        api.now += 1;
        s.schedule(&mut api);
    }
    // Nothing changed: no retry, one event.
    assert_eq!(attempts(&s, api.now), Some(1));
    assert_eq!(api.pod_event_messages("big", "FailedScheduling").len(), 1);
    // A bigger node appears: the pod is retried and bound.
    api.add(node("n2", "4", "8Gi", &[]));
    api.now += 1;
    s.schedule(&mut api);
    assert_eq!(api.pod("big").node_name(), Some("n2"));
}

/// scheduler-plugins `CheckClusterResource`: `minResources` (cpu 10) plus `pods: minMember` against
/// the free resources of n1 (4 CPU): the gap is 10 - 4 = 6 CPUs, printed as upstream's
/// `resource gap: map[...]` with the canonical quantity.
#[test]
fn min_resources_beyond_the_cluster_reject_the_gang_at_prefilter() {
    let mut api = FakeApi::new();
    api.add(node("n1", "4", "8Gi", &[]));
    let mut pg = pod_group("big", 2);
    let mut min = k8s_types::core::ResourceList::new();
    min.insert("cpu".into(), k8s_types::Quantity::parse("10").unwrap());
    pg.spec.min_resources = Some(min);
    api.add(pg);
    api.add(gang_pod("b0", "big", "1"));
    api.add(gang_pod("b1", "big", "1"));
    let mut s = scheduler();
    s.schedule(&mut api);
    let msgs = api.pod_event_messages("b0", "FailedScheduling");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(
        msgs[0].starts_with("0/1 nodes are available: resource gap: map[cpu:6]."),
        "{msgs:?}"
    );
    assert_eq!(api.pod("b0").node_name(), None);
    assert!(s.waiting_pods().is_empty());
}
