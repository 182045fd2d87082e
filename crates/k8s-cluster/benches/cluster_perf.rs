//! Criterion benches of the whole control plane (issue "The whole control plane at scheduler
//! speed"): generated clusters, manifests to every pod Running, through the apiserver, the
//! controller-manager (informers and work queues), the scheduler and the kubelets, as
//! `cargo xtask scenario FILE` runs them (without the output).
//!
//! Shapes (Nodes 4 cpu / 32Gi / 110 pods, three zones; Deployments of pods requesting 100m / 500Mi,
//! so the scheduler's system default spreading applies to every pod):
//! - `end_to_end/<nodes>Nodes_<pods>Pods`: apply the manifests, tick until every Deployment reports
//!   all replicas available;
//! - `end_to_end/500Nodes_5000Pods_ResourceQuota`: the first shape with a ResourceQuota in the
//!   namespace (hard cpu, memory and pods above what the pods use), so every pod create is charged
//!   by the ResourceQuota admission plugin and the quota controller recounts usage;
//! - `rolling_update/1000Nodes_10000Replicas`: from a converged 10,000-replica Deployment
//!   (maxSurge 25%, maxUnavailable 25%), set a new image and tick until the rollout is complete
//!   (setup excluded from the timing).
//!
//! Throughput is in pods (criterion `Elements`). The 150,000-pod shape takes too long for criterion
//! samples; `docs/benchmarks.md` gives whole-process runs of it. `K8S_CLUSTER_BENCH_QUICK=<filter>`
//! runs the matching shapes once and prints ticks and seconds, without criterion (for `perf`).
//! `K8S_CLUSTER_BENCH_MANIFESTS=5000,150000,1000` prints the manifests of that generated cluster
//! (nodes, pods, replicas per Deployment) instead, for whole-process runs.

use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput};

use k8s_cluster::manifest::{parse_stream, Document};
use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::apiserver::ApiExt;
use k8s_types::apps::Deployment;
use k8s_types::Object;

/// The bench process allocates through mimalloc, as `xtask` does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The manifests of a generated cluster, as YAML text: `nodes` Nodes and Deployments of
/// `per_deployment` replicas (the last one smaller) for `pods` pods.
fn manifests_text(
    nodes: usize,
    pods: usize,
    per_deployment: usize,
    surge: &str,
    quota: bool,
) -> String {
    let mut text = String::new();
    if quota {
        text.push_str(
            "---\napiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: compute\n  namespace: \
             default\nspec:\n  hard: {cpu: \"100000\", memory: 100Ti, pods: \"1000000\"}\n",
        );
    }
    for i in 0..nodes {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i:05}\n  labels:\n    \
             kubernetes.io/hostname: node-{i:05}\n    topology.kubernetes.io/zone: zone-{}\n\
             status:\n  capacity: {{cpu: \"4\", memory: 32Gi, pods: \"110\"}}\n",
            i % 3
        ));
    }
    let mut d = 0;
    let mut left = pods;
    while left > 0 {
        let r = left.min(per_deployment);
        text.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{d}\nspec:\n  \
             replicas: {r}\n  strategy:\n    type: RollingUpdate\n    rollingUpdate: \
             {{maxSurge: {surge}, maxUnavailable: {surge}}}\n  selector: {{matchLabels: {{app: \
             app-{d}}}}}\n  template:\n    metadata: {{labels: {{app: app-{d}}}}}\n    spec:\n      \
             containers:\n      - name: c\n        image: app:v1\n        resources: {{requests: \
             {{cpu: 100m, memory: 500Mi}}}}\n"
        ));
        left -= r;
        d += 1;
    }
    text
}

/// [`manifests_text`], parsed.
fn manifests(
    nodes: usize,
    pods: usize,
    per_deployment: usize,
    surge: &str,
    quota: bool,
) -> Vec<Object> {
    let text = manifests_text(nodes, pods, per_deployment, surge, quota);
    parse_stream("generated", &text)
        .expect("generated manifests parse")
        .docs
        .into_iter()
        .filter_map(|d| match d.doc {
            Document::Object(o) => Some(*o),
            _ => None,
        })
        .collect()
}

/// A cluster with `objects` applied (Nodes first, as the runner orders them).
fn build(objects: &[Object]) -> Cluster {
    let mut cluster = Cluster::new(ClusterConfig::default()).expect("cluster");
    cluster.begin_tick();
    for o in objects {
        cluster.apply(o.clone()).expect("apply");
    }
    cluster
}

/// True when every Deployment is complete: all replicas updated and available, none old.
fn converged(cluster: &Cluster) -> bool {
    cluster
        .api_ref()
        .list_typed::<Deployment>(None, None)
        .iter()
        .all(|d| {
            let want = d.spec.replicas.unwrap_or(1);
            d.status.observed_generation == d.metadata.generation
                && d.status.updated_replicas == want
                && d.status.available_replicas == want
                && d.status.replicas == want
        })
}

/// Ticks until [`converged`] (at most `limit` ticks); returns the ticks run.
fn run_until_converged(cluster: &mut Cluster, limit: u64) -> u64 {
    for n in 1..=limit {
        cluster.begin_tick();
        cluster.tick();
        if converged(cluster) {
            return n;
        }
    }
    panic!("not converged after {limit} ticks");
}

/// Sets the image of every Deployment. Never inlined, so that a profiler can split the run at it
/// (`valgrind --tool=callgrind --dump-before='cluster_perf::set_image'`: setup, then the rollout).
#[inline(never)]
fn set_image(cluster: &mut Cluster, image: &str) {
    cluster.begin_tick();
    let api = cluster.api();
    for mut d in api.list_typed::<Deployment>(None, None) {
        d.spec.template.spec.containers[0].image = image.to_string();
        api.update_typed(d).expect("set image");
    }
}

struct Shape {
    name: &'static str,
    nodes: usize,
    pods: usize,
    per_deployment: usize,
    quota: bool,
}

const END_TO_END: [Shape; 3] = [
    Shape {
        name: "500Nodes_5000Pods",
        nodes: 500,
        pods: 5_000,
        per_deployment: 1_000,
        quota: false,
    },
    Shape {
        name: "500Nodes_5000Pods_ResourceQuota",
        nodes: 500,
        pods: 5_000,
        per_deployment: 1_000,
        quota: true,
    },
    Shape {
        name: "5000Nodes_15000Pods",
        nodes: 5_000,
        pods: 15_000,
        per_deployment: 1_000,
        quota: false,
    },
];

fn quick(filter: &str) {
    for s in &END_TO_END {
        let name = format!("end_to_end/{}", s.name);
        if !name.contains(filter) {
            continue;
        }
        let objects = manifests(s.nodes, s.pods, s.per_deployment, "25%", s.quota);
        let start = Instant::now();
        let mut c = build(&objects);
        let ticks = run_until_converged(&mut c, 200);
        println!(
            "{name}: {ticks} ticks, {:.2} s",
            start.elapsed().as_secs_f64()
        );
    }
    let name = "rolling_update/1000Nodes_10000Replicas";
    if name.contains(filter) {
        let objects = manifests(1_000, 10_000, 10_000, "25%", false);
        let mut c = build(&objects);
        run_until_converged(&mut c, 200);
        let start = Instant::now();
        set_image(&mut c, "app:v2");
        let ticks = run_until_converged(&mut c, 400);
        println!(
            "{name}: {ticks} ticks, {:.2} s",
            start.elapsed().as_secs_f64()
        );
    }
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("end_to_end");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    for s in &END_TO_END {
        let objects = manifests(s.nodes, s.pods, s.per_deployment, "25%", s.quota);
        g.throughput(Throughput::Elements(s.pods as u64));
        g.bench_function(s.name, |b| {
            b.iter(|| {
                let mut c = build(&objects);
                run_until_converged(&mut c, 200)
            });
        });
    }
    g.finish();

    let mut g = c.benchmark_group("rolling_update");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(10_000));
    let objects = manifests(1_000, 10_000, 10_000, "25%", false);
    g.bench_function("1000Nodes_10000Replicas", |b| {
        b.iter_batched(
            || {
                let mut c = build(&objects);
                run_until_converged(&mut c, 200);
                c
            },
            |mut c| {
                set_image(&mut c, "app:v2");
                run_until_converged(&mut c, 400)
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

/// `K8S_CLUSTER_BENCH_MANIFESTS=<nodes>,<pods>,<per deployment>`: the generated cluster's
/// manifests on standard output (for whole-process runs of `k8s-mini scenario`).
fn print_manifests(spec: &str) {
    let n: Vec<usize> = spec
        .split(',')
        .map(|x| {
            x.trim()
                .parse()
                .expect("K8S_CLUSTER_BENCH_MANIFESTS: three numbers")
        })
        .collect();
    let [nodes, pods, per_deployment] = n[..] else {
        panic!("K8S_CLUSTER_BENCH_MANIFESTS=<nodes>,<pods>,<per deployment>");
    };
    print!(
        "{}",
        manifests_text(nodes, pods, per_deployment, "25%", false)
    );
}

fn main() {
    if let Ok(spec) = std::env::var("K8S_CLUSTER_BENCH_MANIFESTS") {
        print_manifests(&spec);
        return;
    }
    if let Ok(filter) = std::env::var("K8S_CLUSTER_BENCH_QUICK") {
        quick(&filter);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c);
    c.final_summary();
}
