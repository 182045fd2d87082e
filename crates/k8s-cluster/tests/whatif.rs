//! `k8s-mini whatif` on a small hand-built cluster (`fixtures/whatif/cluster.yaml`): three 8-GPU
//! nodes `gpu-0..2`, one 16-CPU node `cpu-0`; a Deployment `batch` of two low-priority (10) 8-GPU
//! pods on two of the GPU nodes; a 1-CPU pod `web` (the scheduler puts it on `gpu-2`). The numbers are worked out by hand
//! in each test's comments, and the what-if run is checked against `k8s-mini scenario` of the same
//! input with the workload as a Scenario step.

use std::path::{Path, PathBuf};

use k8s_cluster::manifest::{load_file, Manifests};
use k8s_cluster::whatif::{self, Request, Scale};
use k8s_cluster::{run_to_state, RunOptions};
use k8s_types::apiserver::ApiExt;
use k8s_types::core::{Event, Pod};
use k8s_types::object::Object;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/whatif/{name}"))
}

fn load(name: &str) -> Manifests {
    load_file(&fixture(name)).expect("fixture loads")
}

fn request(add: &str) -> Request {
    Request {
        cluster: load("cluster.yaml"),
        cluster_path: fixture("cluster.yaml"),
        add: if add.is_empty() {
            Manifests::default()
        } else {
            load(add)
        },
        ticks: whatif::DEFAULT_TICKS,
        max_nodes: whatif::DEFAULT_MAX_NODES,
        ..Request::default()
    }
}

/// Where the cluster's own run ends: the tick the workload is added.
fn settled_at() -> u64 {
    run_to_state(
        load("cluster.yaml"),
        &fixture("cluster.yaml"),
        &RunOptions::default(),
        None,
    )
    .expect("runs")
    .now
}

#[test]
fn a_gang_that_fits_binds_once_its_victim_is_gone() {
    let a = whatif::what_if(&request("gang-2.yaml")).expect("answers");
    let t0 = settled_at();
    assert_eq!(a.added_at, t0);
    assert_eq!(a.ended_at, t0 + 300);
    // Two 8-GPU workers, one free GPU node (gpu-0): one worker takes it, the other preempts one
    // batch pod (priority 10 < 1000) at t0; the victim takes its 30 s grace period and is gone at
    // t0 + 30, the worker binds on its nominated node the tick after, and Coscheduling's Permit
    // lets both members bind together: t0 + 31.
    assert!(a.fits);
    assert_eq!((a.bound, a.pending), (2, 0));
    let where_when: Vec<(&str, Option<&str>, Option<u64>)> = a
        .pods
        .iter()
        .map(|p| (p.name.as_str(), p.node.as_deref(), p.bound_at))
        .collect();
    assert_eq!(
        where_when,
        [
            ("train-0", Some("gpu-0"), Some(t0 + 31)),
            ("train-1", Some("gpu-2"), Some(t0 + 31)),
        ]
    );
    assert_eq!(a.pods[0].devices["nvidia.com/gpu"].len(), 8);
    assert_eq!(a.preempted.len(), 1);
    let v = &a.preempted[0];
    assert!(v.name.starts_with("batch-"), "{v:?}");
    assert!(v
        .owner
        .as_deref()
        .is_some_and(|o| o.starts_with("ReplicaSet/batch-")));
    assert_eq!(
        (v.priority, v.node.as_deref(), v.at),
        (10, Some("gpu-2"), t0)
    );
    assert_eq!(v.by.as_deref(), Some("default/train-1"));
    assert!(a.evicted.is_empty());
    assert!(a.why.is_none() && a.nodes_needed.is_none());

    // The same input as a scenario run: the workload applied at t0, 300 more ticks.
    let mut m = load("cluster.yaml");
    m.docs.extend(load("gang-2-at-16.yaml").docs);
    assert_eq!(
        t0, 16,
        "gang-2-at-16.yaml adds the workload where cluster.yaml settles"
    );
    let state = run_to_state(
        m,
        &fixture("gang-2-at-16.yaml"),
        &RunOptions::default(),
        None,
    )
    .expect("runs");
    let api = state.cluster.api_ref();
    let preempted: Vec<(String, u64)> = api
        .list_typed::<Event>(None, None)
        .into_iter()
        .filter(|e| e.reason == "Preempted")
        .map(|e| {
            let t = e
                .first_timestamp
                .as_deref()
                .and_then(k8s_types::meta::timestamp_tick);
            (e.involved_object.name.to_string(), t.unwrap_or(0))
        })
        .collect();
    assert_eq!(preempted, [(v.name.clone(), v.at)]);
    for p in &a.pods {
        let s: Pod = api.get_typed("default", &p.name).expect("exists");
        assert_eq!(s.node_name(), p.node.as_deref(), "{}", p.name);
    }
}

#[test]
fn a_gang_that_cannot_fit_says_why_and_how_many_nodes_it_needs() {
    let a = whatif::what_if(&request("gang-6.yaml")).expect("answers");
    // Six 8-GPU workers need 48 GPUs; the three GPU nodes have 24 even with both batch pods
    // evicted: at most 3 members fit, 3 nodes short. Coscheduling rejects the gang at PreFilter,
    // so nothing is preempted.
    assert!(!a.fits);
    assert_eq!((a.bound, a.pending), (0, 6));
    assert!(a.preempted.is_empty());
    let why = a.why.as_ref().expect("why");
    for line in [
        "node shortfall: 3",
        "resource shortfall: nvidia.com/gpu need 48, available 24 (24 missing)",
    ] {
        assert!(
            why.gang_lines.iter().any(|l| l == line),
            "{line}: {:?}",
            why.gang_lines
        );
    }
    assert_eq!(why.gang.as_ref().and_then(|g| g["need"].as_u64()), Some(6));
    assert_eq!(why.reasons.len(), 1);
    assert_eq!(
        why.reasons[0].reason,
        "podGroup default/big cannot reach its quorum even if every lower-priority pod were preempted"
    );
    assert_eq!(why.reasons[0].pods, 6);
    // k more nodes like gpu-0 hold 3 + k members: k = 3. The search doubles (1 no, 2 no, 4 yes)
    // then bisects between 2 and 4 (3 yes).
    let s = a.nodes_needed.as_ref().expect("searched");
    assert_eq!(s.like.as_deref(), Some("gpu-0"));
    assert_eq!(s.nodes, Some(3));
    let probes: Vec<(usize, bool)> = s.probes.iter().map(|p| (p.nodes, p.fits)).collect();
    assert_eq!(probes, [(1, false), (2, false), (4, true), (3, true)]);
    // The answer it gives: with 3 nodes more the gang fits, as a real run shows.
    let mut r = request("gang-6.yaml");
    r.add_nodes = 3;
    r.like = Some("gpu-0".into());
    let with = whatif::what_if(&r).expect("answers");
    assert!(with.fits);
    assert_eq!(
        with.added_nodes,
        ["gpu-0-whatif-1", "gpu-0-whatif-2", "gpu-0-whatif-3"]
    );
}

#[test]
fn max_replicas_counts_as_cluster_capacity_does() {
    let mut r = request("gang-2.yaml");
    let Some(Object::Pod(p)) = load("cpu-pod.yaml")
        .docs
        .into_iter()
        .find_map(|d| match d.doc {
            k8s_cluster::manifest::Document::Object(o) => Some(*o),
            _ => None,
        })
    else {
        panic!("cpu-pod.yaml holds a Pod");
    };
    r.max_replicas = Some(*p);
    let a = whatif::what_if(&r).expect("answers");
    // Copies of 4 CPU / 8Gi (memory never binds first: 8Gi x 8 = 64Gi): the workers and the batch
    // pods ask for GPUs only, `web` (1 CPU) runs on gpu-2 (`k8s-mini get pods -f cluster.yaml -o
    // wide`). gpu-0, gpu-1: 32 / 4 = 8 each; gpu-2: 31 / 4 = 7; cpu-0: 16 / 4 = 4. In all 27; the
    // 28th fails on CPU everywhere, and no pod has a lower priority than the copy (0) to preempt.
    let m = a.max_replicas.as_ref().expect("counted");
    assert_eq!(m.replicas, 27);
    let per_node: Vec<(&str, usize)> = m
        .replicas_on_nodes
        .iter()
        .map(|(n, c)| (n.as_str(), *c))
        .collect();
    assert_eq!(
        per_node,
        [("cpu-0", 4), ("gpu-0", 8), ("gpu-1", 8), ("gpu-2", 7)]
    );
    assert_eq!(m.fail_type, "Unschedulable");
    assert!(
        m.fail_message
            .starts_with("0/4 nodes are available: 4 Insufficient cpu."),
        "{}",
        m.fail_message
    );
    assert!(m
        .report()
        .starts_with("The cluster can schedule 27 instance(s) of the pod cpu4.\n\nTermination reason: Unschedulable: 0/4"));
    r.max_limit = 5;
    let m = whatif::what_if(&r)
        .expect("answers")
        .max_replicas
        .expect("counted");
    assert_eq!(m.replicas, 5);
    assert_eq!(
        (m.fail_type.as_str(), m.fail_message.as_str()),
        ("LimitReached", "Maximum number of pods simulated: 5")
    );
}

#[test]
fn scaling_a_deployment_past_the_gpus_finds_the_default_node_shape() {
    let mut r = request("");
    r.scale = vec![Scale::parse("deployment/batch=4", "default").expect("parses")];
    let a = whatif::what_if(&r).expect("answers");
    // Four 8-GPU batch pods on three GPU nodes: 3 bound, 1 pending, the Deployment one short.
    assert!(!a.fits);
    assert_eq!((a.bound, a.pending), (3, 1));
    let why = a.why.as_ref().expect("why");
    assert!(
        why.reasons
            .iter()
            .any(|r| r.reason == "Insufficient nvidia.com/gpu"),
        "{why:?}"
    );
    // The nodes that could hold a batch pod empty are the three GPU nodes (cpu-0 has no GPU), all
    // of one shape: gpu-0 is copied, and one more node is enough.
    let s = a.nodes_needed.as_ref().expect("searched");
    assert_eq!(s.like.as_deref(), Some("gpu-0"));
    assert_eq!(s.shape, "cpu=32, memory=256Gi, nvidia.com/gpu=8, pods=110");
    assert_eq!(s.nodes, Some(1));
}

#[test]
fn bad_input_is_named() {
    let mut r = request("gang-2.yaml");
    r.like = Some("nope".into());
    let e = whatif::what_if(&r).expect_err("no such node");
    assert_eq!(e.source_loc.file, "--like");
    assert!(e.message.contains("\"nope\""), "{}", e.message);
    let e = whatif::what_if(&request("")).expect_err("nothing to add");
    assert!(e.message.starts_with("nothing to add"), "{}", e.message);
    assert!(Scale::parse("pod/x=1", "default").is_err());
    assert!(Scale::parse("deployment/x=-1", "default").is_err());
    // A workload object the apiserver refuses (the second document: `web` exists): its file, its
    // line and the apiserver's message.
    let mut r = request("");
    r.add = k8s_cluster::manifest::parse_stream(
        "bad.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: new}\nspec:\n  containers: [{name: a, image: b}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: a, image: b}]\n",
    )
    .expect("parses");
    let e = whatif::what_if(&r).expect_err("web exists");
    assert_eq!(
        (e.source_loc.file.as_str(), e.source_loc.line),
        ("bad.yaml", 7)
    );
    assert!(e.message.contains("already exists"), "{}", e.message);
}
