//! Queueing hints of the in-tree plugins through the public API, with cases from upstream's own
//! test tables (named per test), and the scheduler-level behaviour: a pod rejected for
//! `Insufficient cpu` is not retried after an unrelated node label change but is after a pod
//! assigned to a node is deleted.

use k8s_sched::config::{InterPodAffinityArgs, NodeResourcesFitArgs, PodTopologySpreadArgs};
use k8s_sched::plugins::inter_pod_affinity::InterPodAffinity;
use k8s_sched::plugins::node_affinity::NodeAffinity;
use k8s_sched::plugins::node_name::NodeName;
use k8s_sched::plugins::node_ports::NodePorts;
use k8s_sched::plugins::node_resources::fit::NodeResourcesFit;
use k8s_sched::plugins::node_unschedulable::NodeUnschedulable;
use k8s_sched::plugins::pod_topology_spread::PodTopologySpread;
use k8s_sched::plugins::taint_toleration::TaintToleration;
use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_sched_framework::{EventObject, EventResource, Plugin, QueueingHint};
use k8s_testing::{node, pod, FakeApi};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::{Node, Pod};
use k8s_types::object::{Kind, Object};

use QueueingHint::{Queue, QueueSkip};

fn yaml_pod(y: &str) -> Pod {
    serde_yaml::from_str(y).unwrap()
}

fn yaml_node(y: &str) -> Node {
    serde_yaml::from_str(y).unwrap()
}

/// A node whose capacity and allocatable are `res` plus 32 pods (upstream `st.MakeNode().
/// Capacity`).
fn cap_node(res: &[(&str, &str)]) -> Node {
    let mut y = String::from("metadata: {name: n}\nstatus:\n  allocatable:\n    pods: '32'\n");
    for (k, v) in res {
        y.push_str(&format!("    {k}: '{v}'\n"));
    }
    yaml_node(&y)
}

/// A pod with one container requesting `res` (upstream `newResourcePod`).
fn req_pod(res: &[(&str, &str)]) -> Pod {
    let mut y = String::from(
        "metadata: {name: p, namespace: default, uid: target}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: {",
    );
    y.push_str(
        &res.iter()
            .map(|(k, v)| format!("'{k}': '{v}'"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    y.push_str("}\n");
    yaml_pod(&y)
}

/// Asks `plugin`'s hint registered for `resource`.
fn hint(
    plugin: &dyn Plugin,
    resource: EventResource,
    pod: &Pod,
    old: Option<EventObject<'_>>,
    new: Option<EventObject<'_>>,
) -> Result<QueueingHint, String> {
    let ext = plugin.as_enqueue_extensions().unwrap();
    let reg = ext
        .events_to_register()
        .into_iter()
        .find(|r| r.event.resource == resource)
        .unwrap();
    assert!(reg.has_hint);
    ext.queueing_hint(&reg.event, pod, old, new)
}

fn n(node: &Node) -> Option<EventObject<'_>> {
    Some(EventObject::Node(node))
}

fn p(pod: &Pod) -> Option<EventObject<'_>> {
    Some(EventObject::Pod(pod))
}

const A: &str = "example.com/aaa";
const B: &str = "example.com/bbb";

/// Upstream `noderesources/fit_test.go` `Test_isSchedulableAfterNodeChange`.
#[test]
fn node_resources_fit_after_node_change() {
    let fit = NodeResourcesFit::new(&NodeResourcesFitArgs::default());
    let h = |pod: &Pod, old: Option<&Node>, new: &Node| {
        hint(&fit, EventResource::Node, pod, old.and_then(n), n(new)).unwrap()
    };
    let mem2 = req_pod(&[("memory", "2")]);
    let mem2_a1 = req_pod(&[("memory", "2"), (A, "1")]);
    // skip-queue-on-node-add-without-sufficient-resources
    assert_eq!(h(&mem2, None, &cap_node(&[("memory", "1")])), QueueSkip);
    // skip-queue-on-node-add-without-required-resource-type
    assert_eq!(
        h(&req_pod(&[(A, "1")]), None, &cap_node(&[(B, "1")])),
        QueueSkip
    );
    // queue-on-node-add-with-sufficient-resources
    assert_eq!(
        h(&mem2_a1, None, &cap_node(&[("memory", "4"), (A, "2")])),
        Queue
    );
    // skip-queue-on-node-unrelated-changes
    assert_eq!(
        h(
            &mem2_a1,
            Some(&cap_node(&[("memory", "2"), (A, "2")])),
            &cap_node(&[("memory", "2"), (A, "1"), (B, "2")])
        ),
        QueueSkip
    );
    // queue-on-pod-requested-resources-increase
    assert_eq!(
        h(
            &mem2_a1,
            Some(&cap_node(&[("memory", "2"), (A, "1")])),
            &cap_node(&[("memory", "2"), (A, "2")])
        ),
        Queue
    );
    // skip-queue-on-node-changes-from-suitable-to-unsuitable
    assert_eq!(
        h(
            &mem2_a1,
            Some(&cap_node(&[("memory", "4"), (A, "2")])),
            &cap_node(&[("memory", "1"), (A, "2")])
        ),
        QueueSkip
    );
    // queue-on-node-changes-from-unsuitable-to-suitable
    assert_eq!(
        h(
            &mem2_a1,
            Some(&cap_node(&[("memory", "1"), (A, "2")])),
            &cap_node(&[("memory", "4"), (A, "2")])
        ),
        Queue
    );
    // backoff-wrong-new-object: a hint error (the queue then moves the pod).
    assert!(hint(&fit, EventResource::Node, &mem2, None, p(&mem2)).is_err());
}

/// Upstream `noderesources/fit_test.go` `Test_isSchedulableAfterPodEvent` (deletions and
/// scale-downs, InPlacePodVerticalScaling on).
#[test]
fn node_resources_fit_after_pod_event() {
    let fit = NodeResourcesFit::new(&NodeResourcesFitArgs::default());
    let target = req_pod(&[("cpu", "1")]);
    let h = |old: &Pod, new: Option<&Pod>| {
        hint(&fit, EventResource::Pod, &target, p(old), new.and_then(p)).unwrap()
    };
    let scheduled = |cpu: &str, mem: &str| {
        yaml_pod(&format!(
            "metadata: {{name: s, namespace: default, uid: s}}\nspec:\n  nodeName: n\n  containers:\n  - name: c\n    resources:\n      requests: {{cpu: '{cpu}', memory: '{mem}'}}\n"
        ))
    };
    // queue-on-deleted: a scheduled pod was deleted.
    assert_eq!(h(&scheduled("1", "1Gi"), None), Queue);
    // skip-queue-on-unscheduled-pod-deleted.
    assert_eq!(h(&req_pod(&[("cpu", "1")]), None), QueueSkip);
    // queue-on-other-pod-scaled-down: the cpu the target needs went down.
    assert_eq!(
        h(&scheduled("2", "1Gi"), Some(&scheduled("1", "1Gi"))),
        Queue
    );
    // skip-queue-on-other-pod-unrelated-resource-scaled-down: only memory went down.
    assert_eq!(
        h(&scheduled("1", "2Gi"), Some(&scheduled("1", "1Gi"))),
        QueueSkip
    );
    // queue-on-target-pod-scaled-down: the target itself.
    assert_eq!(h(&target, Some(&req_pod(&[("cpu", "500m")]))), Queue);
}

/// Upstream `nodeunschedulable/node_unschedulable_test.go` `TestIsSchedulableAfterNodeChange`.
#[test]
fn node_unschedulable_after_node_change() {
    let pl = NodeUnschedulable;
    let pod = Pod::default();
    let h = |old: Option<&Node>, new: &Node| {
        hint(&pl, EventResource::Node, &pod, old.and_then(n), n(new)).unwrap()
    };
    let cordoned = yaml_node("metadata: {name: n}\nspec: {unschedulable: true}\n");
    let open = yaml_node("metadata: {name: n}\nspec: {unschedulable: false}\n");
    let tainted = |unschedulable: bool| {
        yaml_node(&format!(
            "metadata: {{name: n}}\nspec:\n  unschedulable: {unschedulable}\n  taints: [{{key: node.kubernetes.io/not-ready, effect: NoExecute}}]\n"
        ))
    };
    // skip-queue-on-unschedulable-node-added
    assert_eq!(h(None, &cordoned), QueueSkip);
    // queue-on-schedulable-node-added
    assert_eq!(h(None, &open), Queue);
    // skip-unrelated-change-unschedulable-true
    assert_eq!(h(Some(&cordoned), &tainted(true)), QueueSkip);
    // skip-unrelated-change-unschedulable-false
    assert_eq!(h(Some(&open), &tainted(false)), QueueSkip);
    // queue-on-unschedulable-field-change
    assert_eq!(h(Some(&cordoned), &open), Queue);
    // backoff-wrong-old-object
    assert!(hint(&pl, EventResource::Node, &pod, p(&pod), n(&cordoned)).is_err());
}

/// Upstream `tainttoleration/taint_toleration_test.go` `Test_isSchedulableAfterNodeChange` and
/// `Test_isSchedulableAfterPodTolerationChange`.
#[test]
fn taint_toleration_hints() {
    let pl = TaintToleration;
    let tainted = yaml_node(
        "metadata: {name: n}\nspec:\n  taints: [{key: taint-key, value: taint-value, effect: NoSchedule}]\n",
    );
    let clean = yaml_node("metadata: {name: n}\n");
    let plain = yaml_pod("metadata: {name: p, uid: p}\n");
    let tolerant = yaml_pod(
        "metadata: {name: p, uid: p}\nspec:\n  tolerations: [{key: taint-key, operator: Equal, value: taint-value, effect: NoSchedule}]\n",
    );
    let h = |pod: &Pod, old: Option<&Node>, new: &Node| {
        hint(&pl, EventResource::Node, pod, old.and_then(n), n(new)).unwrap()
    };
    // skip-queue-on-untoleratedtaint-node-added
    assert_eq!(h(&plain, None, &tainted), QueueSkip);
    // queue-on-toleratedtaint-node-added
    assert_eq!(h(&tolerant, None, &tainted), Queue);
    // skip-unrelated-change: still untolerated.
    assert_eq!(h(&plain, Some(&tainted), &tainted), QueueSkip);
    // queue-on-taint-change: the untolerated taint was removed.
    assert_eq!(h(&plain, Some(&tainted), &clean), Queue);
    // Pod toleration change: only the pod itself.
    let other = yaml_pod("metadata: {name: o, uid: o}\n");
    let hp = |new: &Pod| hint(&pl, EventResource::Pod, &plain, p(&plain), p(new)).unwrap();
    assert_eq!(hp(&tolerant), Queue);
    assert_eq!(hp(&other), QueueSkip);
}

/// Upstream `nodeaffinity/node_affinity_test.go` `Test_isSchedulableAfterNodeChange`.
#[test]
fn node_affinity_after_node_change() {
    let pl = NodeAffinity;
    let pod = yaml_pod("metadata: {name: p}\nspec:\n  nodeSelector: {foo: bar}\n");
    let unlabelled = yaml_node("metadata: {name: n}\n");
    let matching = yaml_node("metadata: {name: n, labels: {foo: bar}}\n");
    let matching2 = yaml_node("metadata: {name: n, labels: {foo: bar, x: y}}\n");
    let h = |pod: &Pod, old: Option<&Node>, new: &Node| {
        hint(&pl, EventResource::Node, pod, old.and_then(n), n(new)).unwrap()
    };
    // node updates to match the pod affinity
    assert_eq!(h(&pod, Some(&unlabelled), &matching), Queue);
    // node updates but it doesn't match the pod affinity
    assert_eq!(h(&pod, Some(&unlabelled), &unlabelled), QueueSkip);
    // node updates but the pod affinity was already satisfied
    assert_eq!(h(&pod, Some(&matching), &matching2), QueueSkip);
    // new node that matches / doesn't match
    assert_eq!(h(&pod, None, &matching), Queue);
    assert_eq!(h(&pod, None, &unlabelled), QueueSkip);
    // pod without node affinity: any added node
    assert_eq!(h(&Pod::default(), None, &unlabelled), Queue);
}

/// Upstream `nodeports/node_ports_test.go` `TestNodePortsIsSchedulableAfterPodDeleted`.
#[test]
fn node_ports_after_pod_deleted() {
    let pl = NodePorts;
    let port_pod = |name: &str, port: i32, node: &str| {
        let node = if node.is_empty() {
            String::new()
        } else {
            format!("  nodeName: {node}\n")
        };
        yaml_pod(&format!(
            "metadata: {{name: {name}, uid: {name}}}\nspec:\n{node}  containers:\n  - name: c\n    ports: [{{containerPort: 80, hostPort: {port}}}]\n"
        ))
    };
    let target = port_pod("t", 8080, "");
    let h = |deleted: &Pod| hint(&pl, EventResource::Pod, &target, p(deleted), None).unwrap();
    // skip-queue-on-unscheduled
    assert_eq!(h(&port_pod("d", 8080, "")), QueueSkip);
    // skip-queue-on-non-hostport
    assert_eq!(
        h(&yaml_pod(
            "metadata: {name: d}\nspec:\n  nodeName: n\n  containers: [{name: c}]\n"
        )),
        QueueSkip
    );
    // skip-queue-on-unrelated-hostport
    assert_eq!(h(&port_pod("d", 8081, "n")), QueueSkip);
    // queue-on-released-hostport
    assert_eq!(h(&port_pod("d", 8080, "n")), Queue);
    // backoff-wrong-old-object
    let node = Node::default();
    assert!(hint(&pl, EventResource::Pod, &target, n(&node), None).is_err());
}

/// Upstream `nodename/node_name_test.go` `TestIsSchedulableAfterNodeAdd`.
#[test]
fn node_name_after_node_add() {
    let pl = NodeName;
    let named = yaml_pod("metadata: {name: p}\nspec: {nodeName: foo}\n");
    let h = |pod: &Pod, node: &str| {
        let nd = yaml_node(&format!("metadata: {{name: {node}}}\n"));
        hint(&pl, EventResource::Node, pod, None, n(&nd)).unwrap()
    };
    assert_eq!(h(&named, "foo"), Queue);
    assert_eq!(h(&named, "bar"), QueueSkip);
    assert_eq!(h(&Pod::default(), "bar"), Queue);
}

/// Upstream `interpodaffinity/plugin_test.go` `Test_isSchedulableAfterPodChange` and
/// `Test_isSchedulableAfterNodeChange`.
#[test]
fn inter_pod_affinity_hints() {
    let pl = InterPodAffinity::new(&InterPodAffinityArgs::default());
    let with_affinity = yaml_pod(
        "metadata: {name: p, namespace: ns1}\nspec:\n  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {service: securityscan}}\n        topologyKey: zone\n",
    );
    let with_anti = yaml_pod(
        "metadata: {name: p, namespace: ns1}\nspec:\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {service: securityscan}}\n        topologyKey: zone\n",
    );
    let other = |labels: &str, node: &str| {
        let node = if node.is_empty() {
            String::new()
        } else {
            format!("spec: {{nodeName: {node}}}\n")
        };
        yaml_pod(&format!(
            "metadata: {{name: o, namespace: ns1, labels: {{{labels}}}}}\n{node}"
        ))
    };
    let hp = |pod: &Pod, old: Option<&Pod>, new: Option<&Pod>| {
        hint(
            &pl,
            EventResource::Pod,
            pod,
            old.and_then(p),
            new.and_then(p),
        )
        .unwrap()
    };
    // add a pod which matches the pod affinity
    assert_eq!(
        hp(
            &with_affinity,
            None,
            Some(&other("service: securityscan", "n1"))
        ),
        Queue
    );
    // add an un-scheduled pod
    assert_eq!(
        hp(
            &with_affinity,
            None,
            Some(&other("service: securityscan", ""))
        ),
        QueueSkip
    );
    // add a pod which doesn't match the pod affinity
    assert_eq!(
        hp(&with_affinity, None, Some(&other("service: other", "n1"))),
        QueueSkip
    );
    // update a pod from non-match to match pod affinity
    assert_eq!(
        hp(
            &with_affinity,
            Some(&other("service: other", "n1")),
            Some(&other("service: securityscan", "n1"))
        ),
        Queue
    );
    // delete a pod which doesn't match / matches pod's anti-affinity
    assert_eq!(
        hp(&with_anti, Some(&other("service: other", "n1")), None),
        QueueSkip
    );
    assert_eq!(
        hp(
            &with_anti,
            Some(&other("service: securityscan", "n1")),
            None
        ),
        Queue
    );
    // update a pod from match to non-match pod's anti-affinity
    assert_eq!(
        hp(
            &with_anti,
            Some(&other("service: securityscan", "n1")),
            Some(&other("service: other", "n1"))
        ),
        Queue
    );
    // nodes: with / without a matched topologyKey
    let zoned = yaml_node("metadata: {name: n, labels: {zone: zone1}}\n");
    let plain = yaml_node("metadata: {name: n, labels: {aaa: bbb}}\n");
    let hn = |pod: &Pod, new: &Node| hint(&pl, EventResource::Node, pod, None, n(new)).unwrap();
    assert_eq!(hn(&with_affinity, &zoned), Queue);
    assert_eq!(hn(&with_affinity, &plain), QueueSkip);
    assert_eq!(hn(&with_anti, &zoned), Queue);
}

/// Upstream `podtopologyspread/plugin_test.go` `Test_isSchedulableAfterNodeChange` and
/// `Test_isSchedulableAfterPodChange`.
#[test]
fn pod_topology_spread_hints() {
    let pl = PodTopologySpread::new(&PodTopologySpreadArgs::default());
    let pod = yaml_pod(
        "metadata: {name: p, namespace: default, uid: p, labels: {foo: ''}}\nspec:\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchExpressions: [{key: foo, operator: Exists}]}}\n  - {maxSkew: 1, topologyKey: node, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchExpressions: [{key: foo, operator: Exists}]}}\n",
    );
    let nd = |labels: &str| yaml_node(&format!("metadata: {{name: n, labels: {{{labels}}}}}\n"));
    let hn = |old: Option<&Node>, new: Option<&Node>| {
        hint(
            &pl,
            EventResource::Node,
            &pod,
            old.and_then(n),
            new.and_then(n),
        )
        .unwrap()
    };
    // add a new node with matched topologyKey
    assert_eq!(hn(None, Some(&nd("zone: zone1, node: node1"))), Queue);
    // add a new node without matched topologyKey
    assert_eq!(hn(None, Some(&nd("zone: zone1"))), QueueSkip);
    // update node topologyKey
    assert_eq!(
        hn(
            Some(&nd("zone: zone1, node: node1")),
            Some(&nd("zone: zone2, node: node1"))
        ),
        Queue
    );
    // update node label but not topologyKey
    assert_eq!(
        hn(
            Some(&nd("zone: zone1, node: node1")),
            Some(&nd("zone: zone1, node: node1, aaa: bbb"))
        ),
        QueueSkip
    );
    // delete a node with / without matched topologyKey
    assert_eq!(hn(Some(&nd("zone: zone1, node: node1")), None), Queue);
    assert_eq!(hn(Some(&nd("zone: zone1")), None), QueueSkip);

    let other = |ns: &str, labels: &str, node: bool| {
        let spec = if node { "spec: {nodeName: n1}\n" } else { "" };
        yaml_pod(&format!(
            "metadata: {{name: o, namespace: {ns}, uid: o, labels: {{{labels}}}}}\n{spec}"
        ))
    };
    let hp = |old: Option<&Pod>, new: Option<&Pod>| {
        hint(
            &pl,
            EventResource::Pod,
            &pod,
            old.and_then(p),
            new.and_then(p),
        )
        .unwrap()
    };
    // add pod with labels match topologySpreadConstraints selector
    assert_eq!(hp(None, Some(&other("default", "foo: ''", true))), Queue);
    // add un-scheduled pod
    assert_eq!(
        hp(None, Some(&other("default", "foo: ''", false))),
        QueueSkip
    );
    // add pod with labels not matching the selector
    assert_eq!(
        hp(None, Some(&other("default", "bar: ''", true))),
        QueueSkip
    );
    // add pod in a different namespace
    assert_eq!(hp(None, Some(&other("ns2", "foo: ''", true))), QueueSkip);
    // update pod's labels to match / irrelevantly
    assert_eq!(
        hp(
            Some(&other("default", "bar: ''", true)),
            Some(&other("default", "foo: ''", true))
        ),
        Queue
    );
    assert_eq!(
        hp(
            Some(&other("default", "foo: ''", true)),
            Some(&other("default", "foo: '', bar: ''", true))
        ),
        QueueSkip
    );
    // delete a matching pod
    assert_eq!(hp(Some(&other("default", "foo: ''", true)), None), Queue);
}

fn update_node(api: &mut FakeApi, name: &str, f: impl FnOnce(&mut Node)) {
    let mut nd = match api.get(&Kind::Node, "", name) {
        Ok(Object::Node(n)) => n,
        other => panic!("node {name}: {other:?}"),
    };
    f(&mut nd);
    api.update(Object::Node(nd)).unwrap();
}

/// The queue end to end: `Insufficient cpu` is not retried on a node label change (NodeResourcesFit
/// registers Node Add|UpdateNodeAllocatable), is retried when a pod assigned to a node is deleted.
#[test]
fn insufficient_cpu_waits_for_a_pod_deletion_not_a_label_change() {
    let mut api = FakeApi::new();
    api.add(node("n1", "4", "8Gi", &[]));
    let mut big = pod("big", "3", "1Gi", &[]);
    big.spec.node_name = Some("n1".into());
    api.add(big);
    api.add(pod("web", "2", "1Gi", &[]));
    let mut s = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();
    s.schedule(&mut api);
    assert_eq!(api.pod("web").node_name(), None);
    let entry = s.pending_pod("default/web", api.now).unwrap();
    assert_eq!(entry.attempts, 1);
    assert_eq!(
        entry.unschedulable_plugins.iter().collect::<Vec<_>>(),
        vec!["NodeResourcesFit"]
    );

    // A label change on the node: no retry, even long after the backoff.
    update_node(&mut api, "n1", |nd| {
        nd.metadata.labels.insert("disk".into(), "ssd".into());
    });
    for _ in 0..5 {
        api.now += 1;
        s.schedule(&mut api);
    }
    assert_eq!(s.pending_pod("default/web", api.now).unwrap().attempts, 1);
    assert_eq!(api.pod("web").node_name(), None);

    // The assigned pod is deleted: retried and bound.
    api.delete(&Kind::Pod, "default", "big", Default::default())
        .unwrap();
    api.finish_deletions();
    api.now += 1;
    s.schedule(&mut api);
    assert_eq!(api.pod("web").node_name(), Some("n1"));
}

/// An unrelated node being added does not retry a pod NodeResourcesFit rejected unless the new
/// node could hold it (upstream `isFit` on the added node).
#[test]
fn only_a_node_that_fits_retries_insufficient_cpu() {
    let mut api = FakeApi::new();
    api.add(node("n1", "1", "8Gi", &[]));
    api.add(pod("web", "2", "1Gi", &[]));
    let mut s = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();
    s.schedule(&mut api);
    api.add(node("n2", "1", "8Gi", &[]));
    for _ in 0..3 {
        api.now += 1;
        s.schedule(&mut api);
    }
    assert_eq!(s.pending_pod("default/web", api.now).unwrap().attempts, 1);
    api.add(node("n3", "4", "8Gi", &[]));
    api.now += 1;
    s.schedule(&mut api);
    assert_eq!(api.pod("web").node_name(), Some("n3"));
}
