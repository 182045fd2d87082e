//! End-to-end replays of GPU traces through the public API: a hand-computed micro trace, and a
//! slice of Alibaba's openb trace (Weng et al., USENIX ATC '23; `data/alibaba-gpu-v2023/`) with
//! exact placements for a fixed seed and the invariants every placement must keep.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_cluster::trace::metrics::discretize;
use k8s_cluster::trace::{replay_paper, PaperOptions, Policy, Prepared, Trace};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/alibaba-gpu-v2023")
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).expect("write temp file");
    p
}

/// Two T4 nodes (1 and 2 GPUs), two 0.5-GPU pods and one 2-GPU pod. By hand, in every arrival
/// order: the 2-GPU pod fits only on `n-b`; a 0.5-GPU pod scores (BestFit) 94 on idle `n-a`
/// (1 - (0.5 * 7000/128000 + 0.5 * 500/8000)) and 84 on idle `n-b`, and the second one 97 on `n-a`
/// with 500 milli left, so both share GPU 0 of `n-a`.
#[test]
fn micro_trace_placements_by_hand() {
    let dir = std::env::temp_dir().join(format!("k8s-mini-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let nodes = write(
        &dir,
        "nodes.csv",
        "sn,cpu_milli,memory_mib,gpu,model\nn-a,8000,32768,1,T4\nn-b,16000,65536,2,T4\n",
    );
    let pods = write(
        &dir,
        "pods.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np-1,1000,1024,1,500\np-2,1000,1024,1,500\np-3,1000,1024,2,1000\n",
    );
    let trace = Trace::load(&nodes, &pods).expect("valid CSVs");
    let opts = PaperOptions {
        inflation: 0.0,
        record_placements: true,
        ..PaperOptions::default()
    };
    let prep = Prepared::new(&trace, &opts).expect("GPU nodes");
    for seed in [1, 2, 3, 42] {
        let run = replay_paper(&prep, Policy::BestFit, seed, &opts).expect("replay");
        let got: BTreeMap<&str, (Option<&str>, &str)> = run
            .placements
            .iter()
            .map(|p| (p.pod.as_str(), (p.node.as_deref(), p.gpus.as_str())))
            .collect();
        assert_eq!(got["p-1"], (Some("n-a"), "0"), "seed {seed}");
        assert_eq!(got["p-2"], (Some("n-a"), "0"), "seed {seed}");
        assert_eq!(got["p-3"], (Some("n-b"), "0-1"), "seed {seed}");
        // 3000 of 3000 milli-GPU allocated once everything arrived.
        let last = run.samples.last().expect("samples");
        assert_eq!((last.arrived_milli, last.used_milli), (3000, 3000));
        assert_eq!(run.capacity_milli, 3000);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn slice() -> Trace {
    let mut t = Trace::load(
        &data().join("openb_node_list_gpu_node.csv"),
        &data().join("openb_pod_list_default.csv"),
    )
    .expect("the bundled trace");
    // 40 nodes from the large models (node files are grouped by model), 300 pods.
    t.nodes.retain(|n| n.model == "G2" || n.model == "T4");
    t.nodes.truncate(40);
    t.pods.truncate(300);
    t
}

/// The timeline's target workload (the typical pods of the pods alone, in any order) is the one
/// paper mode prepares, on a slice of the real trace: the same shapes and popularity.
#[test]
fn typical_pods_of_the_pods_alone_are_the_prepared_ones() {
    let trace = slice();
    let prep = Prepared::new(&trace, &PaperOptions::default()).expect("GPU nodes");
    let alone = Prepared::typical_of(trace.pods.iter().rev(), 95);
    assert!(!alone.is_empty());
    assert_eq!(alone, prep.typical());
}

/// Replays a slice of the real trace with FGD (seed 42) and checks the exact placements of the
/// first arrivals (from this implementation; any change to the protocol or the policy shows here),
/// reproducibility, and that no GPU, CPU or memory is ever overcommitted.
#[test]
fn openb_slice_exact_placements_and_invariants() {
    let trace = slice();
    let opts = PaperOptions {
        record_placements: true,
        ..PaperOptions::default()
    };
    let prep = Prepared::new(&trace, &opts).expect("GPU nodes");
    let run = replay_paper(&prep, Policy::Fgd, 42, &opts).expect("replay");
    let again = replay_paper(&prep, Policy::Fgd, 42, &opts).expect("replay");
    assert_eq!(run, again, "same seed, same run");
    let first: Vec<String> = run
        .placements
        .iter()
        .take(6)
        .map(|p| format!("{} {} {}", p.pod, p.node.as_deref().unwrap_or("-"), p.gpus))
        .collect();
    assert_eq!(first, EXPECTED_FIRST, "placements of seed 42");
    assert_eq!((run.pods_tried, run.pods_placed), EXPECTED_COUNTS);

    // Invariants, from the placements alone.
    let pods: BTreeMap<&str, _> = trace.pods.iter().map(|p| (p.name.as_str(), p)).collect();
    let mut free: BTreeMap<&str, (i64, i64, Vec<i64>)> = trace
        .nodes
        .iter()
        .map(|n| {
            (
                n.name.as_str(),
                (n.milli_cpu, n.memory_mib, vec![1000; n.gpus as usize]),
            )
        })
        .collect();
    for pl in &run.placements {
        let base = pl.pod.split("-tuned-").next().unwrap_or(&pl.pod);
        let p = pods[base];
        let Some(node) = &pl.node else { continue };
        let f = free.get_mut(node.as_str()).expect("known node");
        f.0 -= p.milli_cpu;
        f.1 -= p.memory_mib;
        assert!(f.0 >= 0 && f.1 >= 0, "{} overcommits {node}", pl.pod);
        if p.gpu.count > 0 {
            let idx: Vec<usize> = pl
                .gpus
                .split('-')
                .map(|i| i.parse().expect("index"))
                .collect();
            assert_eq!(idx.len(), p.gpu.count as usize, "{}", pl.pod);
            for i in idx {
                f.2[i] -= p.gpu.milli;
                assert!(f.2[i] >= 0, "{} overcommits GPU {i} of {node}", pl.pod);
            }
        }
    }
    // The curve reaches the inflated 130 %.
    let d = discretize(&run.samples, run.capacity_milli, 130);
    assert!(d[130].is_some());
}

const EXPECTED_FIRST: [&str; 6] = [
    "openb-pod-0286 openb-node-0043 0",
    "openb-pod-0280 openb-node-0043 1",
    "openb-pod-0148 openb-node-0070 0",
    "openb-pod-0145 openb-node-0070 1",
    "openb-pod-0202 openb-node-0069 0",
    "openb-pod-0285 openb-node-0043 ",
];
const EXPECTED_COUNTS: (usize, usize) = (452, 342);

/// A workload with no GPU request cannot be inflated to a GPU target: the replay runs the pods as
/// given instead of sampling forever.
#[test]
fn cpu_only_workload_is_not_inflated() {
    let dir = std::env::temp_dir().join(format!("k8s-mini-trace-cpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let nodes = write(
        &dir,
        "nodes.csv",
        "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\n",
    );
    let pods = write(
        &dir,
        "pods.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,0,0\np1,2000,1024,0,0\n",
    );
    let trace = Trace::load(&nodes, &pods).expect("valid CSVs");
    let opts = PaperOptions::default();
    let prep = Prepared::new(&trace, &opts).expect("GPU nodes");
    let run = replay_paper(&prep, Policy::Random, 42, &opts).expect("replay");
    assert_eq!(run.pods_tried, 2);
    let _ = std::fs::remove_dir_all(&dir);
}
