//! Criterion benches of kube-scheduler's scheduler_perf shapes (upstream
//! `test/integration/scheduler_perf/config/performance-config.yaml`; the shapes are data in
//! `k8s_sched::perf_workloads`), run through the detached API (`Scheduler::schedule_one`, no
//! apiserver) with the default profile, plus the floor they are compared with: a bare scan, one
//! pass over plain arrays of node resources computing NodeResourcesFit's fit check and the
//! LeastAllocated score per pod, nothing else.
//!
//! Groups (throughput in pods/s, criterion `Elements` = pods):
//! - `scheduler_perf/<workload>`: every workload at the default `percentageOfNodesToScore`
//!   (upstream's adaptive rule);
//! - `full_scan/<nodes>`: SchedulingBasic at `percentageOfNodesToScore: 100` and the bare scan on
//!   the same nodes and pods, for the ratio (`docs/benchmarks.md`).
//!
//! `K8S_SCHED_BENCH_MEMORY=1 cargo bench -p k8s-sched --bench scheduler_perf -- --list` prints
//! resident memory per node and per pod (from `/proc/self/status`) before the benches;
//! `K8S_SCHED_BENCH_QUICK=SchedulingBasic/5000` runs the matching workloads once, without
//! criterion (for `perf record`).
//!
//! Setup (building nodes and existing pods) is excluded from the timings (`iter_batched`).
//!
//! The bench process allocates through mimalloc, as `xtask` does; the library itself leaves the
//! allocator to the program that embeds it. `--features bench-system-allocator` runs the same
//! benches on the system allocator (`docs/benchmarks.md` gives both).

use std::time::Duration;

/// The process allocator of the benches (see the module doc).
#[cfg(not(feature = "bench-system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};

use k8s_sched::perf_workloads::{self as w, Workload};

/// The bare-scan floor: per node, allocatable and requested CPU (milli) and memory (bytes), pod
/// count and pod limit, as plain arrays.
struct BareCluster {
    alloc_cpu: Vec<i64>,
    alloc_mem: Vec<i64>,
    req_cpu: Vec<i64>,
    req_mem: Vec<i64>,
    pods: Vec<i64>,
    max_pods: Vec<i64>,
}

impl BareCluster {
    /// `nodes` nodes of upstream's node-default shape with `existing` default pods spread
    /// round-robin (as `perf_workloads` places them).
    fn new(nodes: usize, existing: usize) -> BareCluster {
        let mut c = BareCluster {
            alloc_cpu: vec![4000; nodes],
            alloc_mem: vec![32 << 30; nodes],
            req_cpu: vec![0; nodes],
            req_mem: vec![0; nodes],
            pods: vec![0; nodes],
            max_pods: vec![110; nodes],
        };
        for i in 0..existing {
            let n = i % nodes;
            c.req_cpu[n] += 100;
            c.req_mem[n] += 500 << 20;
            c.pods[n] += 1;
        }
        c
    }

    /// One pod: the fit check and the LeastAllocated score (cpu and memory, weight 1 each,
    /// integer arithmetic as upstream `leastRequestedScore`) on every node, the highest score
    /// wins (ties: the later node), then the winner's requests grow. Returns the node index.
    fn schedule(&mut self, cpu: i64, mem: i64) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut best_score = -1i64;
        for i in 0..self.alloc_cpu.len() {
            let (ac, am) = (self.alloc_cpu[i], self.alloc_mem[i]);
            let (rc, rm) = (self.req_cpu[i] + cpu, self.req_mem[i] + mem);
            if self.pods[i] >= self.max_pods[i] || rc > ac || rm > am {
                continue;
            }
            let score = ((ac - rc) * 100 / ac + (am - rm) * 100 / am) / 2;
            if score >= best_score {
                best_score = score;
                best = Some(i);
            }
        }
        if let Some(i) = best {
            self.req_cpu[i] += cpu;
            self.req_mem[i] += mem;
            self.pods[i] += 1;
        }
        best
    }
}

/// Times scheduling all measured pods of `wl` (setup excluded).
fn bench_workload(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: BenchmarkId,
    wl: &Workload,
    percentage: Option<i32>,
) {
    g.throughput(Throughput::Elements(wl.measure_pods as u64));
    g.bench_function(id, |b| {
        b.iter_batched(
            || w::load(wl, percentage).expect("the default profile builds"),
            |(mut s, pods)| {
                let stats = w::run(&mut s, &pods);
                assert_eq!(stats.bound, wl.expected_scheduled(), "{}", wl.name);
                s
            },
            BatchSize::PerIteration,
        )
    });
}

fn scheduler_perf(c: &mut Criterion) {
    let mut g = c.benchmark_group("scheduler_perf");
    g.sampling_mode(SamplingMode::Flat);
    for wl in w::ALL {
        bench_workload(&mut g, BenchmarkId::from_parameter(wl.name), wl, None);
    }
    g.finish();
}

/// SchedulingBasic at 100% of nodes scored against the bare scan, at 500, 5000 and 15000 nodes.
/// Fewer measured pods than the default-percentage runs at 5000 (2000) and 15000 (1000) nodes,
/// to keep a run short: at 100% every pod costs a full pass.
fn full_scan(c: &mut Criterion) {
    let mut g = c.benchmark_group("full_scan");
    g.sampling_mode(SamplingMode::Flat);
    let shapes = [
        w::SCHEDULING_BASIC_500.scaled(500, 500, 1000),
        w::SCHEDULING_BASIC_5000.scaled(5000, 1000, 2000),
        w::SCHEDULING_BASIC_15000.scaled(15000, 1000, 1000),
    ];
    for wl in &shapes {
        let label = format!("{}Nodes_{}Pods", wl.nodes, wl.measure_pods);
        bench_workload(
            &mut g,
            BenchmarkId::new("scheduler_pct100", &label),
            wl,
            Some(100),
        );
        g.throughput(Throughput::Elements(wl.measure_pods as u64));
        g.bench_function(BenchmarkId::new("bare_scan", &label), |b| {
            b.iter_batched(
                || BareCluster::new(wl.nodes, wl.existing_pods),
                |mut bare| {
                    let mut placed = 0;
                    for _ in 0..wl.measure_pods {
                        if bare.schedule(100, 500 << 20).is_some() {
                            placed += 1;
                        }
                    }
                    assert_eq!(placed, wl.measure_pods);
                    bare
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

/// User + system CPU seconds of this thread (from `/proc/thread-self/stat`, 100 ticks/s), so a
/// busy machine does not count against the scheduler.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the parenthesized command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    ticks as f64 / 100.0
}

/// Resident set size and its peak, in KiB, from `/proc/self/status` (0 where unavailable).
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Memory per node and per pod: resident-set growth while loading SchedulingBasic 5000/1000 and
/// scheduling its 10000 pods, divided by the nodes and by the pods.
fn memory_report() {
    let wl = &w::SCHEDULING_BASIC_5000;
    let (base, _) = rss_kib();
    let mut s = k8s_sched::Scheduler::new(Default::default()).expect("default profile");
    for i in 0..wl.nodes {
        s.add_node(wl.node(i));
    }
    s.schedule_one(w::make_pod(w::PodTemplate::Default, "default", "warm-", 0));
    let (after_nodes, _) = rss_kib();
    let pods: Vec<k8s_types::object::Shared<k8s_types::core::Pod>> = (0..wl.existing_pods
        + wl.measure_pods)
        .map(|i| {
            k8s_types::object::Shared::from_typed(w::make_pod(
                w::PodTemplate::Default,
                "default",
                "",
                i,
            ))
        })
        .collect();
    let stats = w::run(&mut s, &pods);
    drop(pods);
    let (after_pods, peak) = rss_kib();
    let per_node = (after_nodes.saturating_sub(base)) as f64 * 1024.0 / wl.nodes as f64;
    let per_pod = (after_pods.saturating_sub(after_nodes)) as f64 * 1024.0 / stats.bound as f64;
    eprintln!(
        "memory: {} nodes, {} pods bound: {:.0} bytes/node, {:.0} bytes/pod, peak RSS {} KiB",
        wl.nodes, stats.bound, per_node, per_pod, peak
    );
}

/// `K8S_SCHED_BENCH_QUICK=<substring>[:<percentage>]`: schedules each matching workload once and
/// prints pods/s, without criterion (for profiling with `perf record`).
fn quick(filter: &str) {
    let (name, pct) = match filter.split_once(':') {
        Some((n, p)) => (n, p.parse::<i32>().ok()),
        None => (filter, None),
    };
    for wl in w::ALL.iter().filter(|wl| wl.name.contains(name)) {
        let (mut s, pods) = w::load(wl, pct).expect("the default profile builds");
        let cpu0 = cpu_seconds();
        let t = std::time::Instant::now();
        let stats = w::run(&mut s, &pods);
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        eprintln!(
            "{}: {} pods in {:.3} s wall ({:.0} pods/s), {:.2} s CPU ({:.0} pods/s per CPU second) {:?}",
            wl.name,
            wl.measure_pods,
            secs,
            wl.measure_pods as f64 / secs,
            cpu,
            wl.measure_pods as f64 / cpu.max(0.01),
            stats
        );
    }
}

fn main() {
    if let Some(f) = std::env::var_os("K8S_SCHED_BENCH_QUICK") {
        quick(&f.to_string_lossy());
        return;
    }
    if std::env::var_os("K8S_SCHED_BENCH_MEMORY").is_some() {
        memory_report();
    }
    // Short runs on 2 cores; command-line options (e.g. `--sample-size`) still override.
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    scheduler_perf(&mut c);
    full_scan(&mut c);
    c.final_summary();
}
