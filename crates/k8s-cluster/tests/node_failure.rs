//! Node heartbeats, the node lifecycle controller and the failure steps end to end. Values by
//! hand from upstream's periods: the kubelet renews its Lease every 10 s (0.25 x 40 s,
//! `pkg/kubelet/nodelease`), the node lifecycle controller looks every 5 s (nodeMonitorPeriod)
//! and acts when now is strictly past the last observed heartbeat + 40 s
//! (nodeMonitorGracePeriod, `node_lifecycle_controller.go` `tryUpdateNodeHealth`); pods tolerate
//! the unreachable NoExecute taint for 300 s (DefaultTolerationSeconds). One tick = one second;
//! each tick renews Leases first, then runs the controllers (node lifecycle first), the scheduler
//! and the kubelets.

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::apiserver::ApiExt;
use k8s_types::coordination::Lease;
use k8s_types::core::{Event, Node, Pod};
use k8s_types::Object;

fn node(name: &str) -> Node {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    }))
    .expect("node")
}

fn pod(name: &str, node: &str) -> Object {
    Object::Pod(
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}
        }))
        .expect("pod"),
    )
}

fn cluster(nodes: &[&str]) -> Cluster {
    let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
    for n in nodes {
        c.add_node(node(n)).expect("add node");
    }
    c
}

/// Runs ticks up to and including `tick`.
fn run_to(c: &mut Cluster, tick: u64) {
    while c.now() <= tick {
        c.tick();
    }
}

fn ready(c: &mut Cluster, name: &str) -> (String, String) {
    let n: Node = c.api().get_typed("", name).expect("node");
    let r = n
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .expect("Ready");
    (r.status.clone(), r.reason.clone().unwrap_or_default())
}

fn taints(c: &mut Cluster, name: &str) -> Vec<(String, String, Option<String>)> {
    let n: Node = c.api().get_typed("", name).expect("node");
    n.spec
        .taints
        .iter()
        .map(|t| (t.key.clone(), t.effect.clone(), t.time_added.clone()))
        .collect()
}

fn events(c: &mut Cluster, reason: &str) -> Vec<(String, String, String)> {
    c.api()
        .list_typed::<Event>(None, None)
        .into_iter()
        .filter(|e| e.reason == reason)
        .map(|e| {
            (
                e.involved_object.name.into(),
                e.message.into(),
                e.source.component.into(),
            )
        })
        .collect()
}

/// How many times an event of this reason was recorded (correlated events count up).
fn event_count(c: &mut Cluster, reason: &str) -> i64 {
    c.api()
        .list_typed::<Event>(None, None)
        .into_iter()
        .filter(|e| e.reason == reason)
        .map(|e| i64::from(e.count))
        .sum()
}

#[test]
fn kubelet_renews_its_lease_every_ten_seconds() {
    let mut c = cluster(&["n1"]);
    run_to(&mut c, 0);
    let l: Lease = c.api().get_typed("kube-node-lease", "n1").expect("lease");
    assert_eq!(l.spec.holder_identity.as_deref(), Some("n1"));
    assert_eq!(l.spec.lease_duration_seconds, Some(40));
    assert_eq!(
        l.spec.renew_time.as_deref(),
        Some("1970-01-01T00:00:00.000000Z")
    );
    run_to(&mut c, 19);
    let l: Lease = c.api().get_typed("kube-node-lease", "n1").expect("lease");
    assert_eq!(
        l.spec.renew_time.as_deref(),
        Some("1970-01-01T00:00:10.000000Z")
    );
    run_to(&mut c, 20);
    let l: Lease = c.api().get_typed("kube-node-lease", "n1").expect("lease");
    assert_eq!(
        l.spec.renew_time.as_deref(),
        Some("1970-01-01T00:00:20.000000Z")
    );
    // A healthy node stays Ready without a status write: the Lease is the heartbeat.
    run_to(&mut c, 200);
    assert_eq!(ready(&mut c, "n1").0, "True");
    assert!(taints(&mut c, "n1").is_empty());
}

#[test]
fn a_silent_node_goes_unknown_is_tainted_and_its_pods_are_evicted_after_300_s() {
    let mut c = cluster(&["n1", "n2"]);
    c.apply(pod("p", "n2")).expect("pod");
    run_to(&mut c, 9);
    // Stopped before tick 10's renewal: the last renewal is t=0, observed at the t=0 pass.
    c.stop_kubelet("n2").expect("stop");
    run_to(&mut c, 44);
    assert_eq!(ready(&mut c, "n2"), ("True".into(), "KubeletReady".into()));
    run_to(&mut c, 45);
    assert_eq!(
        ready(&mut c, "n2"),
        ("Unknown".into(), "NodeStatusUnknown".into())
    );
    let n: Node = c.api().get_typed("", "n2").expect("node");
    for cond in &n.status.conditions {
        assert_eq!(cond.status, "Unknown", "{}", cond.type_);
        assert_eq!(
            cond.message.as_deref(),
            Some("Kubelet stopped posting node status.")
        );
        assert_eq!(
            cond.last_transition_time.as_deref(),
            Some("1970-01-01T00:00:45Z")
        );
    }
    let t45 = Some("1970-01-01T00:00:45Z".to_string());
    assert_eq!(
        taints(&mut c, "n2"),
        vec![
            (
                "node.kubernetes.io/unreachable".into(),
                "NoSchedule".into(),
                t45.clone()
            ),
            (
                "node.kubernetes.io/unreachable".into(),
                "NoExecute".into(),
                t45
            )
        ]
    );
    assert_eq!(ready(&mut c, "n1").0, "True");
    let p: Pod = c.api().get_typed("default", "p").expect("pod");
    let pr = p
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .expect("Ready");
    assert_eq!(pr.status, "False");
    assert_eq!(
        events(&mut c, "NodeNotReady"),
        vec![
            (
                "n2".into(),
                "Node n2 status is now: NodeNotReady".into(),
                "node-controller".into()
            ),
            (
                "p".into(),
                "Node is not ready".into(),
                "node-controller".into()
            )
        ]
    );
    // The 300 s toleration runs from t=45: still there at t=344, deleted at t=345.
    run_to(&mut c, 344);
    let p: Pod = c.api().get_typed("default", "p").expect("pod");
    assert!(p.metadata.deletion_timestamp.is_none());
    run_to(&mut c, 345);
    let p: Pod = c.api().get_typed("default", "p").expect("pod");
    assert_eq!(
        p.metadata.deletion_timestamp.as_deref(),
        Some("1970-01-01T00:06:15Z"),
        "deleted at 345 with the 30 s grace period"
    );
    // The stopped kubelet cannot finish it; back at t=400 it kills the pod, posts Ready, and the
    // controller's pass at t=405 removes the taints.
    run_to(&mut c, 399);
    assert!(c.api().get_typed::<Pod>("default", "p").is_ok());
    c.start_kubelet("n2", true).expect("start");
    run_to(&mut c, 400);
    assert_eq!(ready(&mut c, "n2"), ("True".into(), "KubeletReady".into()));
    assert_eq!(taints(&mut c, "n2").len(), 2);
    assert_eq!(
        event_count(&mut c, "Starting"),
        3,
        "n1 and n2 registering, n2 restarting"
    );
    run_to(&mut c, 405);
    assert!(taints(&mut c, "n2").is_empty());
    run_to(&mut c, 440);
    assert!(c.api().get_typed::<Pod>("default", "p").is_err());
}

#[test]
fn a_healed_partition_recovers_without_a_kubelet_restart() {
    let mut c = cluster(&["n1"]);
    run_to(&mut c, 12);
    // Renewals at 0 and 10 (observed at the t=10 pass): Unknown at the first pass past 50.
    c.stop_kubelet("n1").expect("partition");
    run_to(&mut c, 50);
    assert_eq!(ready(&mut c, "n1").0, "True");
    run_to(&mut c, 55);
    assert_eq!(ready(&mut c, "n1").0, "Unknown");
    c.start_kubelet("n1", false).expect("heal");
    run_to(&mut c, 56);
    assert_eq!(ready(&mut c, "n1").0, "True");
    assert_eq!(event_count(&mut c, "Starting"), 1, "no restart on heal");
    assert_eq!(event_count(&mut c, "NodeReady"), 1);
    run_to(&mut c, 60);
    assert!(taints(&mut c, "n1").is_empty());
}

#[test]
fn a_restarted_controller_manager_rebuilds_and_restarts_the_toleration_clock() {
    let mut c = cluster(&["n1", "n2"]);
    c.apply(pod("p", "n2")).expect("pod");
    run_to(&mut c, 9);
    c.stop_kubelet("n2").expect("stop");
    run_to(&mut c, 99);
    assert_eq!(taints(&mut c, "n2").len(), 2);
    // Upstream's taint eviction controller starts a pod's timer when it first processes it, so a
    // new process counts the 300 s again from t=100 (its first turn).
    c.restart_controller_manager();
    run_to(&mut c, 399);
    let p: Pod = c.api().get_typed("default", "p").expect("pod");
    assert!(p.metadata.deletion_timestamp.is_none());
    run_to(&mut c, 400);
    let p: Pod = c.api().get_typed("default", "p").expect("pod");
    assert!(p.metadata.deletion_timestamp.is_some());
    // The rebuilt node lifecycle controller kept the node Unknown and tainted (no duplicates).
    assert_eq!(ready(&mut c, "n2").0, "Unknown");
    assert_eq!(taints(&mut c, "n2").len(), 2);
}

#[test]
fn a_restarted_scheduler_schedules_from_a_fresh_list() {
    let mut c = cluster(&["n1"]);
    run_to(&mut c, 2);
    c.restart_scheduler().expect("restart");
    c.apply(Object::Pod(
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "q", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .expect("pod"),
    ))
    .expect("pod");
    run_to(&mut c, 3);
    let q: Pod = c.api().get_typed("default", "q").expect("pod");
    assert_eq!(q.spec.node_name.as_deref(), Some("n1"));
}

#[test]
fn stopping_twice_or_an_unknown_node_is_a_failed_step() {
    let mut c = cluster(&["n1"]);
    assert_eq!(
        c.stop_kubelet("nx"),
        Err("node \"nx\" has no kubelet".to_string())
    );
    c.stop_kubelet("n1").expect("stop");
    assert_eq!(
        c.stop_kubelet("n1"),
        Err("the kubelet of node \"n1\" is already stopped".to_string())
    );
    c.start_kubelet("n1", true).expect("start");
    assert_eq!(
        c.start_kubelet("n1", false),
        Err("the kubelet of node \"n1\" is not stopped".to_string())
    );
}
