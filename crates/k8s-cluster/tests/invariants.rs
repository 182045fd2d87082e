//! Invariants under random clusters (proptest): generated nodes (CPU, GPUs) and pods (CPU and GPU
//! requests, priorities that preempt, restart policies, declared run times, exit codes, memory over
//! the limit, SIGTERM handling, grace periods, deletes) run through the whole control plane, and
//! after every tick:
//! - no node is overcommitted: the requests of the pods that hold resources there (bound, not
//!   terminal; terminating pods included) fit its allocatable cpu, memory, GPUs and pod count;
//! - no GPU device is held by two pods, and a pod's devices match its request;
//! - a terminal pod stays terminal, and restart counts never go down;
//! - no pod vanishes unless it was deleted (by a step, or by preemption), was already terminating,
//!   or was not bound (the apiserver removes an unscheduled pod at once, e.g. when a ReplicaSet
//!   scales down);
//! - a coscheduling gang is bound all or nothing (0 or at least `minMember` members on nodes);
//! - a Deployment rolling from v1 to v2 never has more than `replicas + maxSurge` pods that are not
//!   terminating, nor, once it was fully available, fewer than `replicas - maxUnavailable` ready ones;
//!
//! and the same input run twice gives the same final state. CI runs the default number of cases
//! (`PROPTEST_CASES` raises it; docs/reliability.md records the long run).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::core::{Container, Node, Pod, ALLOCATED_DEVICES_ANNOTATION};
use k8s_types::meta::ObjectMeta;
use k8s_types::resources::{pod_requests, Resources};
use k8s_types::scheduling::PriorityClass;
use k8s_types::{Kind, Object, Quantity};

const TICKS: u64 = 45;

#[derive(Clone, Debug)]
struct NodeGen {
    cpu: u32,
    gpus: u32,
}

#[derive(Clone, Debug)]
struct PodGen {
    cpu_m: u32,
    gpus: u32,
    priority: u8,
    restart: u8,
    run: Option<(u8, u8)>,
    oom_after: Option<u8>,
    grace: u8,
    stop: Option<u8>,
    arrive: u64,
    delete_at: Option<u64>,
}

/// A gang (PodGroup, highest priority, never deleted) and a Deployment rolled to v2 at tick 20.
#[derive(Clone, Debug)]
struct WorkloadGen {
    gang: Option<(u32, u32, u32)>,
    deployment: Option<(i32, i32, i32)>,
}

fn workload_gen() -> impl Strategy<Value = WorkloadGen> {
    (
        proptest::option::of((2u32..=4, 0u32..=1, 1u32..=15)),
        proptest::option::of((1i32..=4, 0i32..=2, 0i32..=1)),
    )
        .prop_map(|(gang, deployment)| WorkloadGen {
            gang: gang.map(|(min, extra, cpu)| (min, min + extra, cpu * 100)),
            // maxSurge and maxUnavailable may not both be 0.
            deployment: deployment.map(|(r, s, u)| (r, s, if s == 0 { 1 } else { u })),
        })
}

fn yaml_object(yaml: &str) -> Object {
    let v: serde_yaml::Value = serde_yaml::from_str(yaml).unwrap();
    match v["kind"].as_str() {
        Some("Deployment") => Object::Deployment(serde_yaml::from_value(v).unwrap()),
        Some("PodGroup") => Object::PodGroup(serde_yaml::from_value(v).unwrap()),
        _ => Object::Pod(serde_yaml::from_value(v).unwrap()),
    }
}

fn node_gen() -> impl Strategy<Value = NodeGen> {
    (1u32..=6, 0u32..=3).prop_map(|(cpu, gpus)| NodeGen { cpu, gpus })
}

fn pod_gen() -> impl Strategy<Value = PodGen> {
    (
        (1u32..=30, 0u32..=2, 0u8..=2, 0u8..=2),
        proptest::option::of((1u8..=15, 0u8..=2)),
        proptest::option::of(0u8..=20),
        (0u8..=8, proptest::option::of(0u8..=4)),
        (0u64..=15, proptest::option::of(0u64..=40)),
    )
        .prop_map(
            |(
                (cpu, gpus, priority, restart),
                run,
                oom_after,
                (grace, stop),
                (arrive, delete_at),
            )| {
                PodGen {
                    cpu_m: cpu * 100,
                    gpus,
                    priority,
                    restart,
                    run,
                    oom_after,
                    grace,
                    stop,
                    arrive,
                    delete_at,
                }
            },
        )
}

fn node(i: usize, g: &NodeGen) -> Object {
    let mut n = Node {
        metadata: ObjectMeta {
            name: format!("n{i}"),
            ..Default::default()
        },
        ..Default::default()
    };
    let cap = &mut n.status.capacity;
    cap.insert("cpu".into(), Quantity::parse(&g.cpu.to_string()).unwrap());
    cap.insert("memory".into(), Quantity::parse("16Gi").unwrap());
    cap.insert("pods".into(), Quantity::parse("110").unwrap());
    if g.gpus > 0 {
        cap.insert(
            "nvidia.com/gpu".into(),
            Quantity::parse(&g.gpus.to_string()).unwrap(),
        );
    }
    Object::Node(Box::new(n))
}

fn pod(i: usize, g: &PodGen) -> Object {
    let mut c = Container {
        name: "app".into(),
        image: "app:1".into(),
        ..Default::default()
    };
    let q = |s: String| Quantity::parse(&s).unwrap();
    c.resources
        .requests
        .insert("cpu".into(), q(format!("{}m", g.cpu_m)));
    c.resources
        .requests
        .insert("memory".into(), q("256Mi".into()));
    c.resources
        .limits
        .insert("memory".into(), q("512Mi".into()));
    if g.gpus > 0 {
        c.resources
            .limits
            .insert("nvidia.com/gpu".into(), q(g.gpus.to_string()));
    }
    let mut behavior = serde_json::Map::new();
    if let Some((secs, code)) = g.run {
        behavior.insert(
            "runs".into(),
            serde_json::json!([{"seconds": secs, "exitCode": code}]),
        );
    }
    if let Some(after) = g.oom_after {
        behavior.insert(
            "memory".into(),
            serde_json::json!([{"afterSeconds": after, "bytes": "1Gi"}]),
        );
    }
    if let Some(s) = g.stop {
        behavior.insert("stop".into(), serde_json::json!({"seconds": s}));
    }
    let mut p = Pod {
        metadata: ObjectMeta {
            name: format!("p{i}"),
            namespace: Some("default".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    p.metadata.annotations.insert(
        k8s_kubelet::behavior::BEHAVIOR_ANNOTATION.into(),
        serde_json::json!({"containers": {"app": behavior}}).to_string(),
    );
    p.spec.containers.push(c);
    p.spec.restart_policy = Some(["Always", "OnFailure", "Never"][usize::from(g.restart)].into());
    p.spec.termination_grace_period_seconds = Some(i64::from(g.grace));
    p.spec.priority_class_name = Some(format!("prio-{}", g.priority));
    Object::Pod(Box::new(p))
}

/// What a tick left: per pod uid, (name, terminal, terminating or unbound, restarts).
type Seen = BTreeMap<String, (String, bool, bool, i32)>;

fn restarts(p: &Pod) -> i32 {
    p.status
        .container_statuses
        .iter()
        .chain(&p.status.init_container_statuses)
        .map(|c| c.restart_count)
        .sum()
}

fn check(
    api: &dyn ApiClient,
    before: &Seen,
    deleted_now: &BTreeSet<String>,
    t: u64,
) -> Result<Seen, String> {
    let pods: Vec<Pod> = api.list_typed(None, None);
    let mut used: BTreeMap<String, Resources> = BTreeMap::new();
    let mut devices: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in &pods {
        let Some(n) = p.node_name() else { continue };
        if p.is_terminal() {
            continue;
        }
        let mut r = pod_requests(p);
        r.pods = 1;
        used.entry(n.to_string()).or_default().add(&r);
        if let Some(v) = p.metadata.annotations.get(ALLOCATED_DEVICES_ANNOTATION) {
            let ids: Vec<&str> = v
                .split(';')
                .filter_map(|part| part.split_once('='))
                .flat_map(|(_, ids)| ids.split(',').filter(|s| !s.is_empty()))
                .collect();
            let want = r.get("nvidia.com/gpu");
            if i64::try_from(ids.len()).unwrap_or(-1) != want {
                return Err(format!(
                    "t={t}: {} holds devices {ids:?} for a request of {want}",
                    p.metadata.name
                ));
            }
            for id in ids {
                if !devices
                    .entry(n.to_string())
                    .or_default()
                    .insert(id.to_string())
                {
                    return Err(format!("t={t}: device {id} on {n} held twice"));
                }
            }
        }
    }
    for n in api.list_typed::<Node>(None, None) {
        let alloc = Resources::from_list(&n.status.allocatable);
        if let Some(u) = used.get(&n.metadata.name) {
            for res in ["cpu", "memory", "pods", "nvidia.com/gpu"] {
                if u.get(res) > alloc.get(res) {
                    return Err(format!(
                        "t={t}: {} overcommitted on {res}: {} > {}",
                        n.metadata.name,
                        u.get(res),
                        alloc.get(res)
                    ));
                }
            }
        }
    }
    let mut now = Seen::new();
    for p in &pods {
        let uid = p.metadata.uid.clone().unwrap_or_default();
        let entry = (
            p.metadata.name.clone(),
            p.is_terminal(),
            p.is_terminating() || p.node_name().is_none(),
            restarts(p),
        );
        if let Some((_, was_terminal, _, was_restarts)) = before.get(&uid) {
            if *was_terminal && !entry.1 {
                return Err(format!("t={t}: {} left a terminal phase", entry.0));
            }
            if entry.3 < *was_restarts {
                return Err(format!("t={t}: {} restart count went down", entry.0));
            }
        }
        now.insert(uid, entry);
    }
    let events: Vec<k8s_types::core::Event> = api.list_typed(None, None);
    for (uid, (name, _, terminating, _)) in before {
        if now.contains_key(uid) || *terminating || deleted_now.contains(name) {
            continue;
        }
        let preempted = events
            .iter()
            .any(|e| e.reason == "Preempted" && e.involved_object.uid == *uid);
        if !preempted {
            return Err(format!("t={t}: {name} vanished without a delete"));
        }
    }
    Ok(now)
}

/// The gang and rollout invariants after tick `t`; `full` says the Deployment was fully available.
fn check_workloads(
    api: &dyn ApiClient,
    w: &WorkloadGen,
    full: &mut bool,
    t: u64,
) -> Result<(), String> {
    let pods: Vec<Pod> = api.list_typed(None, None);
    if let Some((min, _, _)) = w.gang {
        let bound = pods
            .iter()
            .filter(|p| p.pod_group() == Some("gang") && p.node_name().is_some())
            .count();
        if bound != 0 && bound < min as usize {
            return Err(format!("t={t}: gang has {bound} of {min} members bound"));
        }
    }
    if let Some((replicas, surge, unavailable)) = w.deployment {
        let live: Vec<&Pod> = pods
            .iter()
            .filter(|p| p.metadata.labels.get("app").map(String::as_str) == Some("web"))
            .filter(|p| !p.is_terminating() && !p.is_terminal())
            .collect();
        let n = i32::try_from(live.len()).unwrap_or(i32::MAX);
        if n > replicas + surge {
            return Err(format!(
                "t={t}: {n} web pods, more than {replicas} + {surge}"
            ));
        }
        let ready = i32::try_from(live.iter().filter(|p| p.is_ready()).count()).unwrap_or(0);
        if *full && ready < replicas - unavailable {
            return Err(format!(
                "t={t}: {ready} ready web pods, fewer than {replicas} - {unavailable}"
            ));
        }
        *full |= ready >= replicas;
    }
    Ok(())
}

fn run(nodes: &[NodeGen], pods: &[PodGen], w: &WorkloadGen) -> Result<String, String> {
    let mut cluster = Cluster::new(ClusterConfig::default()).map_err(|e| e.to_string())?;
    for (i, v) in [0, 100, 1000].into_iter().enumerate() {
        let pc = PriorityClass {
            metadata: ObjectMeta {
                name: format!("prio-{i}"),
                ..Default::default()
            },
            value: v,
            ..Default::default()
        };
        cluster
            .apply(Object::PriorityClass(Box::new(pc)))
            .map_err(|e| e.message)?;
    }
    for (i, n) in nodes.iter().enumerate() {
        cluster.apply(node(i, n)).map_err(|e| e.message)?;
    }
    if let Some((min, members, cpu)) = w.gang {
        let pg = format!("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {{name: gang, namespace: default}}\nspec: {{minMember: {min}}}\n");
        cluster.apply(yaml_object(&pg)).map_err(|e| e.message)?;
        for m in 0..members {
            let p = format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: gang-{m}, namespace: default, labels: {{scheduling.x-k8s.io/pod-group: gang}}}}\nspec: {{priorityClassName: prio-2, containers: [{{name: w, image: 'train:1', resources: {{requests: {{cpu: {cpu}m}}}}}}]}}\n");
            cluster.apply(yaml_object(&p)).map_err(|e| e.message)?;
        }
    }
    if let Some((replicas, surge, unavailable)) = w.deployment {
        let d = format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: default}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: {surge}, maxUnavailable: {unavailable}}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{priorityClassName: prio-2, containers: [{{name: app, image: 'web:v1', resources: {{requests: {{cpu: 100m}}}}}}]}}\n");
        cluster.apply(yaml_object(&d)).map_err(|e| e.message)?;
    }
    let mut full = false;
    let mut seen = Seen::new();
    for t in 0..TICKS {
        cluster.begin_tick();
        if t == 20 && w.deployment.is_some() {
            let mut d: k8s_types::apps::Deployment = cluster
                .api_ref()
                .get_typed("default", "web")
                .map_err(|e| e.message)?;
            d.spec.template.spec.containers[0].image = "web:v2".into();
            cluster
                .api()
                .update(Object::Deployment(Box::new(d)))
                .map_err(|e| e.message)?;
        }
        let mut deleted = BTreeSet::new();
        for (i, g) in pods.iter().enumerate() {
            if g.arrive == t {
                cluster.apply(pod(i, g)).map_err(|e| e.message)?;
            }
            if g.delete_at == Some(t) && g.arrive <= t {
                let name = format!("p{i}");
                if cluster
                    .api()
                    .delete(&Kind::Pod, "default", &name, DeleteOptions::default())
                    .is_ok()
                {
                    deleted.insert(name);
                }
            }
        }
        cluster.tick();
        seen = check(cluster.api_ref(), &seen, &deleted, t)?;
        check_workloads(cluster.api_ref(), w, &mut full, t)?;
    }
    let pods: Vec<Pod> = cluster.api_ref().list_typed(None, None);
    serde_json::to_string(&pods).map_err(|e| e.to_string())
}

proptest! {
    // A fixed seed: CI runs the same cases every time (a long run raises PROPTEST_CASES).
    #![proptest_config(ProptestConfig {
        cases: 48,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20261202),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_clusters_keep_the_invariants(
        nodes in proptest::collection::vec(node_gen(), 1..=3),
        pods in proptest::collection::vec(pod_gen(), 1..=10),
        workloads in workload_gen(),
    ) {
        let first = run(&nodes, &pods, &workloads);
        prop_assert!(first.is_ok(), "{}", first.as_ref().unwrap_err());
        let second = run(&nodes, &pods, &workloads);
        prop_assert_eq!(first, second, "not deterministic");
    }
}

/// The checker itself: each invariant, broken on purpose in a hand-built state, is reported.
#[test]
fn the_checker_reports_each_broken_invariant() {
    let mut cluster = Cluster::new(ClusterConfig::default()).unwrap();
    cluster
        .apply(node(0, &NodeGen { cpu: 1, gpus: 1 }))
        .unwrap();
    let bound = |name: &str, cpu: &str, devices: Option<&str>| {
        let mut p = Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: Some("default".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut c = Container {
            name: "app".into(),
            image: "app:1".into(),
            ..Default::default()
        };
        c.resources
            .requests
            .insert("cpu".into(), Quantity::parse(cpu).unwrap());
        if devices.is_some() {
            c.resources
                .limits
                .insert("nvidia.com/gpu".into(), Quantity::parse("1").unwrap());
        }
        p.spec.containers.push(c);
        p.spec.node_name = Some("n0".into());
        if let Some(d) = devices {
            p.metadata
                .annotations
                .insert(ALLOCATED_DEVICES_ANNOTATION.into(), d.into());
        }
        Object::Pod(Box::new(p))
    };
    // Two pods holding device 0.
    cluster
        .api()
        .create(bound("a", "100m", Some("nvidia.com/gpu=0")))
        .unwrap();
    cluster
        .api()
        .create(bound("b", "100m", Some("nvidia.com/gpu=0")))
        .unwrap();
    let e = check(cluster.api_ref(), &Seen::new(), &BTreeSet::new(), 0).unwrap_err();
    assert_eq!(e, "t=0: device 0 on n0 held twice");
    cluster
        .api()
        .delete(
            &Kind::Pod,
            "default",
            "b",
            DeleteOptions {
                grace_period_seconds: Some(0),
                ..Default::default()
            },
        )
        .unwrap();
    // 1100m on a 1-CPU node.
    cluster.api().create(bound("c", "1", None)).unwrap();
    let e = check(cluster.api_ref(), &Seen::new(), &BTreeSet::new(), 1).unwrap_err();
    assert_eq!(e, "t=1: n0 overcommitted on cpu: 1100 > 1000");
    cluster
        .api()
        .delete(
            &Kind::Pod,
            "default",
            "c",
            DeleteOptions {
                grace_period_seconds: Some(0),
                ..Default::default()
            },
        )
        .unwrap();
    // A pod seen before that is gone without being deleted by a step, terminating or preempted.
    let before = check(cluster.api_ref(), &Seen::new(), &BTreeSet::new(), 2).unwrap();
    cluster
        .api()
        .delete(
            &Kind::Pod,
            "default",
            "a",
            DeleteOptions {
                grace_period_seconds: Some(0),
                ..Default::default()
            },
        )
        .unwrap();
    let e = check(cluster.api_ref(), &before, &BTreeSet::new(), 3).unwrap_err();
    assert_eq!(e, "t=3: a vanished without a delete");
    let deleted: BTreeSet<String> = ["a".to_string()].into();
    assert!(check(cluster.api_ref(), &before, &deleted, 3).is_ok());

    // One gang member of two bound; three live web pods for 1 replica + 1 surge.
    let member = "apiVersion: v1\nkind: Pod\nmetadata: {name: g0, namespace: default, labels: {scheduling.x-k8s.io/pod-group: gang}}\nspec: {nodeName: n0, containers: [{name: w, image: 'x:1'}]}\n";
    cluster.api().create(yaml_object(member)).unwrap();
    let w = WorkloadGen {
        gang: Some((2, 2, 100)),
        deployment: None,
    };
    let e = check_workloads(cluster.api_ref(), &w, &mut false, 4).unwrap_err();
    assert_eq!(e, "t=4: gang has 1 of 2 members bound");
    for i in 0..3 {
        let web = format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: web-{i}, namespace: default, labels: {{app: web}}}}\nspec: {{containers: [{{name: app, image: 'web:1'}}]}}\n");
        cluster.api().create(yaml_object(&web)).unwrap();
    }
    let w = WorkloadGen {
        gang: None,
        deployment: Some((1, 1, 0)),
    };
    let e = check_workloads(cluster.api_ref(), &w, &mut false, 5).unwrap_err();
    assert_eq!(e, "t=5: 3 web pods, more than 1 + 1");
    let w = WorkloadGen {
        gang: None,
        deployment: Some((3, 1, 1)),
    };
    let e = check_workloads(cluster.api_ref(), &w, &mut true, 6).unwrap_err();
    assert_eq!(e, "t=6: 0 ready web pods, fewer than 3 - 1");
}

/// Found by the random run: a Deployment scaled down during its rollout deletes a pod the scheduler
/// had not bound (its node was full of a gang); the apiserver removes it at once, which is no loss.
#[test]
fn regression_unbound_pod_deleted_by_a_scale_down() {
    let nodes = [NodeGen { cpu: 1, gpus: 0 }];
    let pods = [PodGen {
        cpu_m: 100,
        gpus: 0,
        priority: 0,
        restart: 0,
        run: None,
        oom_after: None,
        grace: 0,
        stop: None,
        arrive: 0,
        delete_at: None,
    }];
    let w = WorkloadGen {
        gang: Some((2, 3, 300)),
        deployment: Some((2, 0, 1)),
    };
    let first = run(&nodes, &pods, &w).unwrap();
    assert_eq!(first, run(&nodes, &pods, &w).unwrap());
}
