//! The DaemonSet controller end to end (apiserver defaults and validation, controller, scheduler,
//! kubelet). Expected values are worked out by hand from upstream's
//! `pkg/controller/daemon/daemon_controller.go` (`podsShouldBeOnNode`, `syncNodes`,
//! `updateDaemonSetStatus`), `update.go` (`rollingUpdate`) and `util/daemonset_util.go`; one tick
//! = one second, startupTicks 1: a pod created at tick t is bound at t, Ready at t + 1, seen
//! Ready by the controller at t + 2.

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::apiserver::ApiExt;
use k8s_types::apps::DaemonSet;
use k8s_types::core::{Event, Node, Pod};
use k8s_types::labels::LabelSelector;
use k8s_types::Object;

fn node(name: &str, role: &str) -> Node {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": {"role": role}},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    }))
    .expect("node")
}

fn cluster(nodes: &[(&str, &str)]) -> Cluster {
    let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
    for (n, role) in nodes {
        c.add_node(node(n, role)).expect("add node");
    }
    c
}

fn daemon_set(name: &str, spec: serde_json::Value) -> Object {
    let mut s = serde_json::json!({
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "img:v1"}]}
        }
    });
    for (k, v) in spec.as_object().cloned().unwrap_or_default() {
        if k == "nodeSelector" || k == "terminationGracePeriodSeconds" {
            s["template"]["spec"][k] = v;
        } else {
            s[k] = v;
        }
    }
    let ds: DaemonSet = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": s
    }))
    .expect("ds");
    Object::DaemonSet(Box::new(ds))
}

fn get(c: &mut Cluster, name: &str) -> DaemonSet {
    c.api().get_typed::<DaemonSet>("default", name).expect("ds")
}

fn run_to(c: &mut Cluster, tick: u64) {
    while c.now() <= tick {
        c.tick();
    }
}

/// Live (not terminating) pods of `app` by node, with their images.
fn placement(c: &mut Cluster, app: &str) -> Vec<(String, String)> {
    let sel = LabelSelector::parse(&format!("app={app}")).expect("sel");
    let mut v: Vec<(String, String)> = c
        .api()
        .list_typed::<Pod>(Some("default"), Some(&sel))
        .into_iter()
        .filter(|p| !p.is_terminating())
        .map(|p| {
            (
                p.node_name().unwrap_or("").to_string(),
                p.spec.containers[0].image.clone(),
            )
        })
        .collect();
    v.sort();
    v
}

fn events(c: &mut Cluster, object: &str, reason: &str) -> Vec<String> {
    c.api()
        .list_typed::<Event>(None, None)
        .into_iter()
        .filter(|e| e.involved_object.name == object && e.reason == reason)
        .map(|e| e.message.into())
        .collect()
}

fn set_image(c: &mut Cluster, name: &str, image: &str) {
    let mut ds = get(c, name);
    ds.spec.template.spec.containers[0].image = image.into();
    c.api().update_typed(ds).expect("set image");
}

fn pair(n: &str, i: &str) -> (String, String) {
    (n.to_string(), i.to_string())
}

#[test]
fn daemon_pods_carry_default_tolerations_node_affinity_and_revision_label() {
    let mut c = cluster(&[("node-1", "worker")]);
    c.apply(daemon_set("agent", serde_json::json!({})))
        .expect("apply");
    run_to(&mut c, 0);
    let sel = LabelSelector::parse("app=agent").expect("sel");
    let pods = c.api().list_typed::<Pod>(Some("default"), Some(&sel));
    assert_eq!(pods.len(), 1);
    let p = &pods[0];
    assert_eq!(p.metadata.generate_name.as_deref(), Some("agent-"));
    let owner = &p.metadata.owner_references[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("DaemonSet", "agent")
    );
    assert!(p.metadata.labels.contains_key("controller-revision-hash"));
    // Upstream AddOrUpdateDaemonPodTolerations: 6 tolerations, not-ready/unreachable without
    // tolerationSeconds (so DefaultTolerationSeconds adds nothing).
    let tols: Vec<(&str, &str, Option<i64>)> = p
        .spec
        .tolerations
        .iter()
        .map(|t| (t.key.as_str(), t.effect.as_str(), t.toleration_seconds))
        .collect();
    assert_eq!(
        tols,
        [
            ("node.kubernetes.io/not-ready", "NoExecute", None),
            ("node.kubernetes.io/unreachable", "NoExecute", None),
            ("node.kubernetes.io/disk-pressure", "NoSchedule", None),
            ("node.kubernetes.io/memory-pressure", "NoSchedule", None),
            ("node.kubernetes.io/pid-pressure", "NoSchedule", None),
            ("node.kubernetes.io/unschedulable", "NoSchedule", None),
        ]
    );
    let terms = &p
        .spec
        .affinity
        .as_ref()
        .unwrap()
        .node_affinity
        .as_ref()
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap()
        .node_selector_terms;
    assert_eq!(terms[0].match_fields[0].key, "metadata.name");
    assert_eq!(terms[0].match_fields[0].values, ["node-1"]);
    // Bound by the scheduler in the same tick.
    assert_eq!(p.node_name(), Some("node-1"));
    assert_eq!(
        events(&mut c, "agent", "SuccessfulCreate"),
        [format!("Created pod: {}", p.metadata.name)]
    );
}

#[test]
fn node_that_stops_matching_loses_its_pod() {
    let mut c = cluster(&[("node-1", "worker"), ("node-2", "worker")]);
    c.apply(daemon_set(
        "agent",
        serde_json::json!({"nodeSelector": {"role": "worker"}, "terminationGracePeriodSeconds": 0}),
    ))
    .expect("apply");
    run_to(&mut c, 4);
    assert_eq!(
        placement(&mut c, "agent"),
        [pair("node-1", "img:v1"), pair("node-2", "img:v1")]
    );
    // node-2 relabelled role=infra at tick 5: updateNode queues the DaemonSet (shouldRun and
    // shouldContinueRunning turn false), which deletes the pod in tick 5.
    let mut n: Node = c.api().get_typed("", "node-2").expect("node");
    n.metadata.labels.insert("role".into(), "infra".into());
    c.api().update_typed(n).expect("relabel");
    run_to(&mut c, 5);
    assert_eq!(placement(&mut c, "agent"), [pair("node-1", "img:v1")]);
    assert_eq!(events(&mut c, "agent", "SuccessfulDelete").len(), 1);
    run_to(&mut c, 8);
    let s = get(&mut c, "agent").status;
    assert_eq!(
        (
            s.desired_number_scheduled,
            s.current_number_scheduled,
            s.number_misscheduled,
            s.number_available
        ),
        (1, 1, 0, 1)
    );
}

#[test]
fn surge_creates_the_new_pod_before_deleting_the_old() {
    let mut c = cluster(&[("node-1", "worker"), ("node-2", "worker")]);
    c.apply(daemon_set(
        "agent",
        serde_json::json!({"updateStrategy": {"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "terminationGracePeriodSeconds": 0}),
    ))
    .expect("apply");
    run_to(&mut c, 4);
    set_image(&mut c, "agent", "img:v2");
    // Tick 5: maxSurge ceil(1 of 2) = 1; node-1 (first by name) gets a new pod beside its old.
    run_to(&mut c, 5);
    assert_eq!(
        placement(&mut c, "agent"),
        [
            pair("node-1", "img:v1"),
            pair("node-1", "img:v2"),
            pair("node-2", "img:v1")
        ]
    );
    // Ready at 6, seen available at 7: manage deletes node-1's old pod.
    run_to(&mut c, 6);
    assert_eq!(placement(&mut c, "agent").len(), 3);
    run_to(&mut c, 7);
    assert_eq!(
        placement(&mut c, "agent"),
        [pair("node-1", "img:v2"), pair("node-2", "img:v1")]
    );
    // Tick 8: the deletion observed, the next surge pod goes to node-2; its old pod goes at 10.
    run_to(&mut c, 8);
    assert_eq!(placement(&mut c, "agent").len(), 3);
    for t in 8..=10 {
        run_to(&mut c, t);
        assert_eq!(get(&mut c, "agent").status.number_available, 2, "tick {t}");
    }
    assert_eq!(
        placement(&mut c, "agent"),
        [pair("node-1", "img:v2"), pair("node-2", "img:v2")]
    );
    run_to(&mut c, 12);
    let s = get(&mut c, "agent").status;
    assert_eq!((s.updated_number_scheduled, s.number_available), (2, 2));
}

#[test]
fn on_delete_replaces_only_deleted_pods() {
    let mut c = cluster(&[("node-1", "worker"), ("node-2", "worker")]);
    c.apply(daemon_set(
        "agent",
        serde_json::json!({"updateStrategy": {"type": "OnDelete"},
            "terminationGracePeriodSeconds": 0}),
    ))
    .expect("apply");
    run_to(&mut c, 4);
    set_image(&mut c, "agent", "img:v2");
    run_to(&mut c, 15);
    assert_eq!(
        placement(&mut c, "agent"),
        [pair("node-1", "img:v1"), pair("node-2", "img:v1")]
    );
    let s = get(&mut c, "agent").status;
    assert_eq!(
        (s.updated_number_scheduled, s.observed_generation),
        (0, Some(2))
    );
    // The user deletes node-2's pod: its replacement is the new revision.
    let sel = LabelSelector::parse("app=agent").expect("sel");
    let victim = c
        .api()
        .list_typed::<Pod>(Some("default"), Some(&sel))
        .into_iter()
        .find(|p| p.node_name() == Some("node-2"))
        .expect("pod");
    c.api()
        .delete(
            &k8s_types::Kind::Pod,
            "default",
            &victim.metadata.name,
            Default::default(),
        )
        .expect("delete");
    run_to(&mut c, 20);
    assert_eq!(
        placement(&mut c, "agent"),
        [pair("node-1", "img:v1"), pair("node-2", "img:v2")]
    );
    assert_eq!(get(&mut c, "agent").status.updated_number_scheduled, 1);
}

#[test]
fn failed_daemon_pod_is_deleted_and_replaced() {
    let mut c = cluster(&[("node-1", "worker")]);
    c.apply(daemon_set(
        "agent",
        serde_json::json!({"terminationGracePeriodSeconds": 0}),
    ))
    .expect("apply");
    run_to(&mut c, 3);
    // The pod fails (as a kubelet rejecting it would write), at the start of tick 4.
    let sel = LabelSelector::parse("app=agent").expect("sel");
    let mut p = c.api().list_typed::<Pod>(Some("default"), Some(&sel))[0].clone();
    let name = p.metadata.name.clone();
    p.status.phase = Some("Failed".into());
    p.status.reason = Some("OutOfcpu".into());
    c.api().update_status_typed(p).expect("fail");
    run_to(&mut c, 4);
    assert_eq!(
        events(&mut c, "agent", "FailedDaemonPod"),
        [format!(
            "Found failed daemon pod default/{name} on node node-1, will try to kill it"
        )]
    );
    assert_eq!(
        events(&mut c, "agent", "SuccessfulDelete"),
        [format!("Deleted pod: {name}")]
    );
    run_to(&mut c, 8);
    let pods = c.api().list_typed::<Pod>(Some("default"), Some(&sel));
    assert_eq!(pods.len(), 1);
    assert_ne!(pods[0].metadata.name, name);
    assert_eq!(pods[0].phase(), "Running");
}

#[test]
fn pods_that_arrive_with_their_daemon_set_keep_their_revision() {
    // A dump: the DaemonSet and its pod on node-1, labelled with the real cluster's hash.
    let mut c = cluster(&[("node-1", "worker")]);
    c.apply(daemon_set("agent", serde_json::json!({})))
        .expect("apply");
    let uid = get(&mut c, "agent").metadata.uid.expect("uid");
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "agent-abcde", "namespace": "default",
            "labels": {"app": "agent", "controller-revision-hash": "6b9f8d7c5"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                "uid": uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "img:v1"}]}
    }))
    .expect("pod");
    c.apply(Object::Pod(Box::new(pod))).expect("pod");
    run_to(&mut c, 5);
    // No rollout: the pod is the current revision; a new node's pod gets the same label.
    let s = get(&mut c, "agent").status;
    assert_eq!(
        (s.current_number_scheduled, s.updated_number_scheduled),
        (1, 1)
    );
    assert!(events(&mut c, "agent", "SuccessfulDelete").is_empty());
    c.add_node(node("node-2", "worker")).expect("node-2");
    run_to(&mut c, 8);
    let sel = LabelSelector::parse("app=agent").expect("sel");
    let pods = c.api().list_typed::<Pod>(Some("default"), Some(&sel));
    let labels: Vec<(&str, &str)> = pods
        .iter()
        .map(|p| {
            (
                p.node_name().unwrap_or(""),
                p.metadata.labels["controller-revision-hash"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        {
            let mut l = labels.clone();
            l.sort();
            l
        },
        [("node-1", "6b9f8d7c5"), ("node-2", "6b9f8d7c5")]
    );
    assert_eq!(get(&mut c, "agent").status.updated_number_scheduled, 2);
    // A template change is a new revision: both pods are replaced, one at a time, each old pod
    // taking its 30 s grace period (set at 9, node-1's gone at 39, its new pod available at 42,
    // node-2's deleted then and gone at 72).
    set_image(&mut c, "agent", "img:v2");
    run_to(&mut c, 60);
    assert_eq!(placement(&mut c, "agent"), [pair("node-1", "img:v2")]);
    run_to(&mut c, 80);
    assert_eq!(
        placement(&mut c, "agent"),
        [pair("node-1", "img:v2"), pair("node-2", "img:v2")]
    );
}

#[test]
fn invalid_daemon_set_is_rejected_like_kube_apiserver() {
    let mut c = cluster(&[]);
    let err = c
        .apply(daemon_set(
            "bad",
            serde_json::json!({"selector": {"matchLabels": {"app": "other"}},
                "updateStrategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}}),
        ))
        .expect_err("invalid");
    assert_eq!(
        err.message,
        "DaemonSet.apps \"bad\" is invalid: [spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"bad\"}: `selector` does not match template `labels`, spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero]"
    );
}

/// A `kubectl get all -o yaml`-style dump lists pods before their DaemonSet; the loader creates
/// DaemonSets with the workload controllers, before the rest, so the pod's owner reference is
/// remapped and the controller adopts it instead of creating a second pod on node-1. node-2,
/// which the dumped cluster did not run the DaemonSet on yet (a what-if), gets its pod.
const DUMP: &str = "\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: agent-abcde
    namespace: kube-system
    uid: 1111-pod
    labels: {app: agent, controller-revision-hash: 7f9c6d5b8}
    ownerReferences:
    - {apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: 2222-ds, controller: true, blockOwnerDeletion: true}
  spec:
    nodeName: node-1
    containers: [{name: agent, image: 'agent:v1'}]
  status: {phase: Running}
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: agent, namespace: kube-system, uid: 2222-ds, generation: 3}
  spec:
    selector: {matchLabels: {app: agent}}
    template:
      metadata: {labels: {app: agent}}
      spec: {containers: [{name: agent, image: 'agent:v1'}]}
- apiVersion: v1
  kind: Node
  metadata: {name: node-1}
  status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}
- apiVersion: v1
  kind: Node
  metadata: {name: node-2}
  status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: sim.k8s-mini.io/v1alpha1
kind: Scenario
spec:
  ticks: 10
  expect:
  - podsPerNode: {selector: app=agent, counts: {node-1: 1, node-2: 1}}
  - pod: {name: agent-abcde, namespace: kube-system, nodeName: node-1, phase: Running}
  - pods: {selector: 'app=agent,controller-revision-hash=7f9c6d5b8', count: 2}
  - events: {reason: SuccessfulCreate, involvedObject: agent, count: 1}
  - events: {reason: SuccessfulDelete, involvedObject: agent, count: 0}
";

#[test]
fn what_if_on_a_dump_gives_new_nodes_their_daemon_pods() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("k8s-mini-daemonset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("dump.yaml");
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(DUMP.as_bytes()))
        .expect("write");
    let out = k8s_cluster::run_file(&path, &k8s_cluster::RunOptions::default()).expect("run");
    assert_eq!(out.failures, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.checks, 5);
}

#[test]
fn deleting_the_daemon_set_deletes_its_pods_through_the_garbage_collector() {
    let mut c = cluster(&[("node-1", "worker"), ("node-2", "worker")]);
    c.apply(daemon_set(
        "agent",
        serde_json::json!({"terminationGracePeriodSeconds": 0}),
    ))
    .expect("apply");
    run_to(&mut c, 3);
    assert_eq!(placement(&mut c, "agent").len(), 2);
    c.api()
        .delete(
            &k8s_types::Kind::DaemonSet,
            "default",
            "agent",
            Default::default(),
        )
        .expect("delete");
    // The garbage collector (after the DaemonSet controller in the tick) deletes the dependents
    // whose owner is gone; grace period 0, so they are gone within the tick or the next.
    run_to(&mut c, 6);
    let sel = LabelSelector::parse("app=agent").expect("sel");
    assert!(c
        .api()
        .list_typed::<Pod>(Some("default"), Some(&sel))
        .is_empty());
    assert!(events(&mut c, "agent", "SuccessfulCreate").len() == 2);
}
