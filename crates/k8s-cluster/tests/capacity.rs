//! The capacity view (`k8s-mini capacity`, and the end of a scenario run on more than 50 nodes),
//! its numbers recomputed by hand from `fixtures/whatif/capacity.yaml`: node `gpu-a` (pool
//! `g5.12xlarge`, 48 CPU, 192Gi, 4 GPUs) runs `one-gpu` (4 CPU, 16Gi, 1 GPU); node `plain` (no
//! pool label, 8 CPU, 32Gi) runs `cpu-app` (2 CPU, 4Gi); `four-gpu` (4 GPUs) fits nowhere.

use std::path::Path;

use k8s_cluster::capacity::{self, capacity_view, node_reasons};
use k8s_cluster::manifest::{load_file, parse_stream};
use k8s_cluster::{run_manifests_to, run_to_state, RunOptions};

#[test]
fn pools_gpus_fragmentation_and_pending_reasons() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/whatif/capacity.yaml");
    let state = run_to_state(
        load_file(&path).expect("loads"),
        &path,
        &RunOptions::default(),
        None,
    )
    .expect("runs");
    let v = capacity_view(state.cluster.api_ref(), &[]);
    let names: Vec<&str> = v.pools.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["<none>", "node.kubernetes.io/instance-type=g5.12xlarge"]
    );
    let g = &v.pools[1];
    assert_eq!((g.nodes, g.ready_nodes), (1, 1));
    assert_eq!(
        (g.gpu_milli_total, g.gpu_milli_allocated, g.gpu_milli_free),
        (4000, 1000, 3000)
    );
    // FGD fragmentation: the target workload is the three pods' shapes, one each (1-GPU, 4-GPU,
    // CPU-only), all kept by the 95 % threshold, frequency 1/3 each. gpu-a has 3 whole GPUs free:
    // the 1-GPU pod fits there, nothing is fragment (0); the 4-GPU pod does not, all 3000 milli
    // are; for a CPU-only pod every free GPU is fragment (3000). (0 + 3000 + 3000) / 3 = 2000.
    assert!((g.gpu_milli_fragmented - 2000.0).abs() < 1e-9, "{g:?}");
    assert_eq!((g.cpu.requested, g.cpu.allocatable), (4000, 48000));
    assert_eq!(
        (g.memory.requested, g.memory.allocatable),
        (16 << 30, 192 << 30)
    );
    let p = &v.pools[0];
    assert_eq!((p.gpu_milli_total, p.gpu_milli_fragmented), (0, 0.0));
    assert_eq!((p.cpu.requested, p.cpu.allocatable), (2000, 8000));
    assert_eq!(v.total.nodes, 2);
    assert_eq!(
        (v.total.cpu.requested, v.total.cpu.allocatable),
        (6000, 56000)
    );
    assert_eq!(v.pending_pods, 1);
    assert_eq!(v.pending.len(), 1);
    assert_eq!(
        (v.pending[0].reason.as_str(), v.pending[0].pods),
        ("Insufficient nvidia.com/gpu", 1)
    );
    let text = capacity::render(&v);
    assert!(text.contains("node.kubernetes.io/instance-type=g5.12xlarge  1/1          4     1              3         2               4/48 (8%)"), "{text}");
    // Pools by another label: the product label puts gpu-a in `nvidia.com/gpu.product=A10G`.
    let v = capacity_view(
        state.cluster.api_ref(),
        &["nvidia.com/gpu.product".to_string()],
    );
    assert_eq!(v.pools[1].name, "nvidia.com/gpu.product=A10G");
}

#[test]
fn node_level_reasons_are_split_without_their_counts() {
    assert_eq!(
        node_reasons("0/8 nodes are available: 3 Insufficient cpu, 5 node(s) had untolerated taint {gpu: true, zone: a}. preemption: 0/8 nodes are available: 8 No preemption victims found for incoming pod."),
        ["Insufficient cpu", "node(s) had untolerated taint {gpu: true, zone: a}"]
    );
    assert_eq!(
        node_reasons("0/4 nodes are available: podGroup default/big cannot reach its quorum: minMember 6, 0 placed"),
        ["podGroup default/big cannot reach its quorum"]
    );
}

fn cluster_of(nodes: usize) -> String {
    let mut s = String::new();
    for i in 0..nodes {
        s.push_str(&format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n-{i:03}}}\nstatus: {{capacity: {{cpu: \"4\", memory: 8Gi, pods: \"110\"}}}}\n---\n"
        ));
    }
    s.push_str("apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers: [{name: a, image: b, resources: {requests: {cpu: \"8\"}}}]\n");
    s
}

#[test]
fn a_run_on_more_than_50_nodes_ends_with_the_capacity_view() {
    for (nodes, capacity_section) in [(50, false), (51, true)] {
        let m = parse_stream("gen.yaml", &cluster_of(nodes)).expect("parses");
        let mut out = Vec::new();
        run_manifests_to(m, Path::new("gen.yaml"), &RunOptions::default(), &mut out).expect("runs");
        let text = String::from_utf8(out).expect("utf-8");
        assert_eq!(
            text.contains("\n## capacity\n"),
            capacity_section,
            "{nodes}"
        );
        assert_eq!(
            text.contains("\n## nodes: allocated resources\n"),
            !capacity_section,
            "{nodes}"
        );
        if capacity_section {
            // 51 nodes of 4 CPU: 204 CPUs, none requested; `big` (8 CPU) fits none.
            assert!(text.contains("<none>  51/51        0     0              0         0               0/204 (0%)"), "{text}");
            assert!(
                text.contains("pending pods: 1\nPODS  REASON\n1     Insufficient cpu\n"),
                "{text}"
            );
        }
    }
}

/// Pending pods per pool: pool `gpu` (two 4-GPU nodes, one labelled zone=a) and pool `cpu` (one
/// 8-CPU node). Pending: `wide` (8 GPUs, no node selection: every pool admits it, Insufficient
/// nvidia.com/gpu), `zone-a` (8 GPUs, nodeSelector zone=a: only gpu-1, so only pool `gpu`),
/// `cpu-big` (32 CPU, required affinity to the instance type `cpu`: pool `cpu` only, Insufficient
/// cpu) and `nowhere` (nodeSelector disk=ssd, which no node carries: no pool admits it).
/// So: cpu holds wide and cpu-big, gpu holds wide and zone-a, `<no node admits>` holds nowhere.
/// A pod counts under the reasons of its whole FailedScheduling message, which spans every node:
/// cpu-big's names Insufficient cpu (cpu-0) and the affinity mismatch (gpu-0, gpu-1); zone-a's
/// Insufficient nvidia.com/gpu (gpu-1; cpu-0 has no GPU either) and the mismatch (gpu-0, cpu-0);
/// wide's Insufficient nvidia.com/gpu only (all three).
#[test]
fn pending_pods_are_grouped_per_pool_their_node_selection_admits() {
    let node = |name: &str, pool: &str, extra: &str, cap: &str| {
        format!("apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{node.kubernetes.io/instance-type: {pool}{extra}}}}}\nstatus: {{capacity: {{{cap}, memory: 64Gi, pods: \"110\"}}}}\n---\n")
    };
    let pod = |name: &str, spec: &str, res: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n{spec}  containers: [{{name: a, image: b, resources: {res}}}]\n---\n")
    };
    let mut y = String::new();
    y += &node("gpu-0", "gpu", "", "cpu: \"32\", nvidia.com/gpu: \"4\"");
    y += &node(
        "gpu-1",
        "gpu",
        ", zone: a",
        "cpu: \"32\", nvidia.com/gpu: \"4\"",
    );
    y += &node("cpu-0", "cpu", "", "cpu: \"8\"");
    let gpu8 = "{limits: {nvidia.com/gpu: 8}}";
    y += &pod("wide", "", gpu8);
    y += &pod("zone-a", "  nodeSelector: {zone: a}\n", gpu8);
    y += &pod(
        "cpu-big",
        "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, values: [cpu]}]}]}}}\n",
        "{requests: {cpu: \"32\"}}",
    );
    y += &pod(
        "nowhere",
        "  nodeSelector: {disk: ssd}\n",
        "{requests: {cpu: \"1\"}}",
    );
    let m = parse_stream("pools.yaml", &y).expect("parses");
    let state =
        run_to_state(m, Path::new("pools.yaml"), &RunOptions::default(), None).expect("runs");
    let v = capacity_view(state.cluster.api_ref(), &[]);
    assert_eq!(v.pending_pods, 4);
    type Group<'a> = (&'a str, usize, Vec<(&'a str, usize)>);
    let got: Vec<Group> = v
        .pending_per_pool
        .iter()
        .map(|g| {
            (
                g.pool.as_str(),
                g.pods,
                g.reasons
                    .iter()
                    .map(|r| (r.reason.as_str(), r.pods))
                    .collect(),
            )
        })
        .collect();
    let nowhere_reason = v.pending_per_pool[2].reasons[0].reason.clone();
    assert_eq!(
        got,
        [
            (
                "node.kubernetes.io/instance-type=cpu",
                2,
                vec![
                    ("Insufficient cpu", 1),
                    ("Insufficient nvidia.com/gpu", 1),
                    ("node(s) didn't match Pod's node affinity/selector", 1)
                ]
            ),
            (
                "node.kubernetes.io/instance-type=gpu",
                2,
                vec![
                    ("Insufficient nvidia.com/gpu", 2),
                    ("node(s) didn't match Pod's node affinity/selector", 1)
                ]
            ),
            (
                capacity::NO_POOL_ADMITS,
                1,
                vec![(nowhere_reason.as_str(), 1)]
            ),
        ]
    );
    assert!(
        nowhere_reason.contains("node affinity/selector"),
        "{nowhere_reason}"
    );
    let text = capacity::render(&v);
    assert!(
        text.contains(
            "node.kubernetes.io/instance-type=gpu  2        2     Insufficient nvidia.com/gpu\n"
        ),
        "{text}"
    );
}
