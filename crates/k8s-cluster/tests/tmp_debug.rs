use k8s_cluster::trace::{replay_paper, PaperOptions, Policy, Prepared, Trace};
use std::collections::BTreeMap;
use std::path::Path;

#[test]
fn debug_fgd() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/alibaba-gpu-v2023");
    let trace = Trace::load(
        &root.join("openb_node_list_gpu_node.csv"),
        &root.join("openb_pod_list_default.csv"),
    )
    .unwrap();
    let opts = PaperOptions {
        record_placements: true,
        max_arrivals: Some(7500),
        ..Default::default()
    };
    let prep = Prepared::new(&trace, &opts).unwrap();
    for t in prep.typical() {
        println!("{:?} {:.4}", t.shape, t.freq);
    }
    let pol = std::env::var("POL").unwrap_or("fgd".into());
    let run = replay_paper(&prep, Policy::parse(&pol).unwrap(), 42, &opts).unwrap();
    // own model
    let pods: BTreeMap<String, &k8s_cluster::trace::TracePod> =
        trace.pods.iter().map(|p| (p.name.clone(), p)).collect();
    let mut cpu: BTreeMap<String, (i64, i64, Vec<i64>)> = trace
        .gpu_nodes()
        .iter()
        .map(|n| {
            (
                n.name.clone(),
                (n.milli_cpu, n.memory_mib, vec![1000; n.gpus as usize]),
            )
        })
        .collect();
    let mut fails = 0;
    let mut bogus = 0;
    for pl in &run.placements {
        let base = pl.pod.split("-tuned-").next().unwrap();
        let p = pods[base];
        match &pl.node {
            Some(n) => {
                let e = cpu.get_mut(n).unwrap();
                e.0 -= p.milli_cpu;
                e.1 -= p.memory_mib;
                if p.gpu.count > 0 {
                    for i in pl.gpus.split('-') {
                        let i: usize = i.parse().unwrap();
                        e.2[i] -= p.gpu.milli;
                        assert!(e.2[i] >= 0, "overcommit {n}");
                    }
                }
                assert!(e.0 >= 0 && e.1 >= 0, "overcommit cpu/mem {n}");
            }
            None => {
                fails += 1;
                let fit = cpu.iter().any(|(_, (c, m, g))| {
                    *c >= p.milli_cpu
                        && *m >= p.memory_mib
                        && (p.gpu.count == 0
                            || g.iter().filter(|l| **l >= p.gpu.milli).count()
                                >= p.gpu.count as usize)
                });
                if fit {
                    bogus += 1;
                    if bogus < 5 {
                        println!("bogus fail {:?}", p);
                    }
                }
            }
        }
    }
    println!(
        "placed {} failed {} bogus {}",
        run.pods_placed, fails, bogus
    );
}
