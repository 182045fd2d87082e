//! `k8s-mini compare` on hand-built inputs, the expected numbers worked out by hand in each test's
//! comments.

use std::path::{Path, PathBuf};

use k8s_cluster::compare::{self, Column, Comparison, ConfigRun, Request};
use k8s_cluster::manifest::{load_file, Manifests};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn load_all(files: &[&str]) -> Manifests {
    let mut m = Manifests::default();
    for f in files {
        let one = load_file(&repo(f)).expect("input loads");
        m.docs.extend(one.docs);
        m.warnings.extend(one.warnings);
    }
    m
}

fn column(name: &str, file: Option<&str>) -> Column {
    Column {
        name: name.to_string(),
        scheduler_config: file.map(repo),
        policy: None,
    }
}

fn example() -> Comparison {
    compare::compare(&Request {
        manifests: load_all(&[
            "examples/compare/cluster.yaml",
            "examples/compare/workload.yaml",
        ]),
        path: repo("examples/compare/workload.yaml"),
        columns: vec![
            column("least", Some("examples/compare/least-allocated.yaml")),
            column("most", Some("examples/compare/most-allocated.yaml")),
        ],
        ticks: None,
    })
    .expect("compares")
}

fn node_of<'a>(r: &'a ConfigRun, pod: &str) -> Option<&'a str> {
    r.pods
        .iter()
        .find(|p| p.name == pod)
        .and_then(|p| p.node.as_deref())
}

/// examples/compare: three empty 4-GPU nodes gpu-a, gpu-b, gpu-c (32 CPU each); four 1-GPU, 4-CPU
/// pods at tick 0, one 4-GPU, 8-CPU pod `train` at tick 20, all of one priority.
///
/// LeastAllocated (CPU and memory): infer-0 sees three equal nodes and takes the tie-break's node,
/// gpu-c (the name that sorts last, docs/fidelity.md); infer-1 the emptier of the rest, gpu-b (the
/// tie again); infer-2 gpu-a; infer-3 three nodes with one pod each: gpu-c. GPUs left: a 3, b 3,
/// c 2, so `train` (4 GPUs) stays pending, and with one priority there is nothing to preempt.
/// MostAllocated: infer-0 gpu-c (tie), then the fullest node, gpu-c, for infer-1..3 (4 GPUs
/// used); `train` takes one of the two empty nodes, gpu-b (tie).
#[test]
fn packing_against_spreading_places_each_pod_as_worked_out() {
    let c = example();
    let (least, most) = (&c.runs[0], &c.runs[1]);
    let expect_least = [
        ("infer-0", Some("gpu-c")),
        ("infer-1", Some("gpu-b")),
        ("infer-2", Some("gpu-a")),
        ("infer-3", Some("gpu-c")),
        ("train", None),
    ];
    let expect_most = [
        ("infer-0", Some("gpu-c")),
        ("infer-1", Some("gpu-c")),
        ("infer-2", Some("gpu-c")),
        ("infer-3", Some("gpu-c")),
        ("train", Some("gpu-b")),
    ];
    for (pod, node) in expect_least {
        assert_eq!(node_of(least, pod), node, "least: {pod}");
    }
    for (pod, node) in expect_most {
        assert_eq!(node_of(most, pod), node, "most: {pod}");
    }
    assert_eq!((least.pods_bound, least.pods_pending), (4, 1));
    assert_eq!((most.pods_bound, most.pods_pending), (5, 0));
    assert_eq!((least.preemptions, most.preemptions), (0, 0));
    // The pods whose node differs, by name; `train` is pending under LeastAllocated.
    let diff: Vec<(&str, Vec<&str>)> = c
        .placed_differently
        .iter()
        .map(|d| (d.pod.as_str(), d.nodes.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        diff,
        [
            ("default/infer-1", vec!["gpu-b", "gpu-c"]),
            ("default/infer-2", vec!["gpu-a", "gpu-c"]),
            ("default/train", vec!["<pending>", "gpu-b"]),
        ]
    );
}

/// The measures of the example, by hand.
///
/// GPU allocated: 4 of 12 (least), 4 + 4 = 8 of 12 (most).
/// FGD fragmentation: the target workload is the five pods, four of shape (1 GPU, 4 CPU) at 80 %
/// and one of (4 GPUs, 8 CPU) at 20 % (both within the 95 % popularity threshold). A 1-GPU pod fits
/// every node with a free GPU, so it fragments nothing; the 4-GPU pod fits no node with fewer than
/// 4 free GPUs, whose free GPUs are then all fragmented for it. Least: 0.2 × (3 + 3 + 2) = 1.6 GPU.
/// Most: gpu-a has 4 free and fits both shapes, gpu-b and gpu-c have none: 0.
/// CPU spread (population std-dev of requested / allocatable): least 4/32, 4/32, 8/32 = 0.125,
/// 0.125, 0.25, mean 1/6, variance ((1/24)² + (1/24)² + (1/12)²) / 3 = 1/288, std-dev 0.058926;
/// most 0, 8/32, 16/32 = 0, 0.25, 0.5, variance (0.0625 + 0 + 0.0625) / 3 = 1/24, std-dev 0.204124.
/// GPU spread: least 1/4, 1/4, 2/4 (twice the CPU ratios): 0.117851; most 0, 4/4, 4/4, mean 2/3,
/// variance (4/9 + 1/9 + 1/9) / 3 = 2/9, std-dev 0.471405.
#[test]
fn the_example_measures_match_the_hand_computation() {
    let c = example();
    let (least, most) = (&c.runs[0], &c.runs[1]);
    assert_eq!(
        (least.gpu_milli_allocated, least.gpu_milli_total),
        (4000, 12000)
    );
    assert_eq!(
        (most.gpu_milli_allocated, most.gpu_milli_total),
        (8000, 12000)
    );
    assert_eq!(least.gpu_milli_fragmented, 1600.0);
    assert_eq!(most.gpu_milli_fragmented, 0.0);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(
        close(least.cpu_spread, (1.0f64 / 288.0).sqrt()),
        "{}",
        least.cpu_spread
    );
    assert!(
        close(most.cpu_spread, (1.0f64 / 24.0).sqrt()),
        "{}",
        most.cpu_spread
    );
    assert!(
        close(least.gpu_spread, (4.0f64 / 288.0).sqrt()),
        "{}",
        least.gpu_spread
    );
    assert!(
        close(most.gpu_spread, (2.0f64 / 9.0).sqrt()),
        "{}",
        most.gpu_spread
    );
    // Every bound pod binds in the tick it is created (an idle scheduler): 0 ticks; 4 pods counted
    // under LeastAllocated (train never binds), 5 under MostAllocated.
    assert_eq!(least.time_to_bind.pods, 4);
    assert_eq!(most.time_to_bind.pods, 5);
    assert_eq!(most.time_to_bind.median, Some(0));
    assert_eq!(most.time_to_bind.p99, Some(0));
    // The allocation over time: nothing before tick 0; after tick 0 the four inference pods (4
    // GPUs, 16 CPU); under MostAllocated `train` adds 4 GPUs and 8 CPU in tick 20.
    let points: Vec<(u64, i64, i64)> = most
        .samples
        .iter()
        .map(|s| (s.tick, s.gpu_milli_allocated, s.cpu_milli_requested))
        .collect();
    assert_eq!(points, [(0, 0, 0), (0, 4000, 16000), (20, 8000, 24000)]);
    assert_eq!(least.samples.len(), 2);
    assert_eq!(most.samples[0].cpu_milli_allocatable, 96_000);
}

/// The what-if fixture's gang (tests/fixtures/whatif: `gang-2-at-16.yaml`, the worked example of
/// docs/whatif.md): added at t=16, train-1 preempts one batch pod at once, and both members bind
/// together at t=47 (the victim's 30 s grace period, then the Permit wait): 31 ticks to bind each.
/// The input's own configuration against MostAllocated, each run its own: the same input gives the
/// same preemption count and bind ticks for the gang (the gang's members need a whole 8-GPU node
/// each under either scoring).
#[test]
fn time_to_bind_and_preemptions_of_the_whatif_gang() {
    let c = compare::compare(&Request {
        manifests: load_all(&[
            "crates/k8s-cluster/tests/fixtures/whatif/cluster.yaml",
            "crates/k8s-cluster/tests/fixtures/whatif/gang-2-at-16.yaml",
        ]),
        path: repo("crates/k8s-cluster/tests/fixtures/whatif/gang-2-at-16.yaml"),
        columns: vec![
            column("scenario", None),
            column("most", Some("examples/compare/most-allocated.yaml")),
        ],
        ticks: None,
    })
    .expect("compares");
    let own = &c.runs[0];
    assert_eq!(own.ended_at, 316);
    assert_eq!(own.preemptions, 1);
    for name in ["train-0", "train-1"] {
        let p = own.pods.iter().find(|p| p.name == name).expect("gang pod");
        assert_eq!((p.created_at, p.bound_at), (Some(16), Some(47)), "{name}");
    }
    // The p99 of the run is the largest time to bind (nearest rank of n < 100 pods is n): 31.
    assert_eq!(own.time_to_bind.p99, Some(31));
    // The batch ReplicaSet's pods are matched by generateName and order of creation: the survivor
    // (created at tick 0) is #0, the victim's replacement #1, in both runs: created at 17 (the
    // scheduler preempts in tick 16, after the controllers ran; the ReplicaSet controller sees the
    // terminating victim in tick 17) and pending (every GPU is taken); neither is listed as placed
    // differently.
    for run in &c.runs {
        let mut batch: Vec<(&str, Option<&str>)> = run
            .pods
            .iter()
            .filter(|p| p.name.starts_with("batch-"))
            .map(|p| (p.key.as_str(), p.node.as_deref()))
            .collect();
        batch.sort();
        assert_eq!(batch.len(), 2, "{}", run.name);
        assert_eq!(batch[0].0, "default/batch-75756c8696-#0");
        assert_eq!(batch[1], ("default/batch-75756c8696-#1", None));
        let replacement = run.pods.iter().find(|p| p.key.ends_with("#1")).expect("#1");
        assert_eq!(replacement.created_at, Some(17));
    }
    assert!(c
        .placed_differently
        .iter()
        .all(|d| !d.pod.starts_with("default/batch-")));
}

#[test]
fn one_configuration_is_bad_input() {
    let e = compare::compare(&Request {
        manifests: load_all(&["examples/compare/cluster.yaml"]),
        path: repo("examples/compare/cluster.yaml"),
        columns: vec![column("scenario", None)],
        ticks: None,
    })
    .expect_err("one column");
    assert!(
        e.to_string()
            .contains("at least two configurations to compare (1 given)"),
        "{e}"
    );
}

/// A configuration file that does not load is bad input naming the file.
#[test]
fn a_bad_configuration_file_is_bad_input() {
    let dir = std::env::temp_dir().join(format!("k8s-mini-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: Nonsense\n",
    )
    .expect("write");
    let e = compare::compare(&Request {
        manifests: load_all(&["examples/compare/cluster.yaml"]),
        path: repo("examples/compare/cluster.yaml"),
        columns: vec![
            column("scenario", None),
            Column {
                name: "bad".into(),
                scheduler_config: Some(bad.clone()),
                policy: None,
            },
        ],
        ticks: None,
    })
    .expect_err("bad config");
    assert!(e.to_string().contains("bad.yaml"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Trace-replay policies as columns, on the example. FGD (its target workload derived from the
/// listed pods, as the plugin does when given none): at tick 0 the listed pods are the four 1-GPU
/// pods only, and a 1-GPU pod fragments no GPU of a node where it fits, so every node scores the
/// same and the tie-break (the name that sorts last) puts all four on gpu-c; `train` then takes
/// gpu-b, the tie between the two empty nodes: MostAllocated's placements. `spread` (the preset
/// scoring LeastAllocated) places as the LeastAllocated file does.
#[test]
fn trace_policies_run_as_columns() {
    let policy = |name: &str| Column {
        name: name.to_string(),
        scheduler_config: None,
        policy: Some(k8s_cluster::trace::Policy::parse(name).expect("known policy")),
    };
    let c = compare::compare(&Request {
        manifests: load_all(&[
            "examples/compare/cluster.yaml",
            "examples/compare/workload.yaml",
        ]),
        path: repo("examples/compare/workload.yaml"),
        columns: vec![
            policy("fgd"),
            policy("spread"),
            column("least", Some("examples/compare/least-allocated.yaml")),
        ],
        ticks: None,
    })
    .expect("compares");
    let (fgd, spread, least) = (&c.runs[0], &c.runs[1], &c.runs[2]);
    assert_eq!(fgd.scheduler_config.as_deref(), Some("--policy fgd"));
    for pod in ["infer-0", "infer-1", "infer-2", "infer-3"] {
        assert_eq!(node_of(fgd, pod), Some("gpu-c"), "{pod}");
    }
    assert_eq!(node_of(fgd, "train"), Some("gpu-b"));
    assert_eq!(fgd.gpu_milli_fragmented, 0.0);
    for pod in ["infer-0", "infer-1", "infer-2", "infer-3", "train"] {
        assert_eq!(node_of(spread, pod), node_of(least, pod), "{pod}");
    }
}
