use super::*;
use k8s_types::core::{
    node_labels, Affinity, Container, NodeAffinity, NodeSelector, NodeSelectorRequirement,
    NodeSelectorTerm, ResourceList,
};
use k8s_types::gpushare::GPU_INDEX_ANNOTATION;
use k8s_types::object::Shared;
use k8s_types::rng::SplitMix64;
use k8s_types::Quantity;

/// The paper-mode replay's profile shape: GpuShare at PreFilter, Filter (first) and Reserve,
/// then NodeResourcesFit (GPU resources left to GpuShare) and NodeAffinity; one GPU score.
const CONFIG: &str = r#"
percentageOfNodesToScore: 100
profiles:
- schedulerName: sim
  plugins:
    preFilter: {enabled: [{name: GpuShare}]}
    filter:
      disabled: [{name: "*"}]
      enabled: [{name: GpuShare}, {name: NodeResourcesFit}, {name: NodeAffinity}]
    reserve: {enabled: [{name: GpuShare}]}
    score:
      disabled: [{name: "*"}]
      enabled: [{name: GpuPackingScore, weight: 1000}]
    preScore:
      disabled: [{name: "*"}]
      enabled: [{name: GpuPackingScore}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {ignoredResources: [nvidia.com/gpu, alibabacloud.com/gpu-milli]}
"#;

const MODELS: [&str; 3] = ["A10", "T4", "V100"];

fn q(s: &str) -> Quantity {
    Quantity::parse(s).expect("quantity")
}

fn node(name: &str, cpu: i64, mem_gi: i64, gpus: i64, model: Option<&str>) -> Arc<Node> {
    let mut n = Node::default();
    n.metadata.name = name.into();
    let mut a = ResourceList::new();
    a.insert("cpu".into(), q(&format!("{cpu}m")));
    a.insert("memory".into(), q(&format!("{mem_gi}Gi")));
    a.insert("pods".into(), q("110"));
    if gpus > 0 {
        a.insert("nvidia.com/gpu".into(), q(&gpus.to_string()));
        a.insert(
            "alibabacloud.com/gpu-milli".into(),
            q(&(gpus * 1000).to_string()),
        );
    }
    if let Some(m) = model {
        n.metadata
            .labels
            .insert(node_labels::NVIDIA_GPU_PRODUCT.into(), m.into());
    }
    n.status.capacity = a.clone();
    n.status.allocatable = a;
    Arc::new(n)
}

/// `gpu`: `(count, milli per GPU)`; `models`: the required `nvidia.com/gpu.product` values.
fn pod(name: &str, cpu: i64, mem_gi: i64, gpu: (u32, i64), models: &[&str]) -> Shared<Pod> {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = Some("default".into());
    p.metadata.uid = Some(format!("uid-{name}"));
    let mut c = Container {
        name: "main".into(),
        ..Default::default()
    };
    let r = &mut c.resources.requests;
    r.insert("cpu".into(), q(&format!("{cpu}m")));
    r.insert("memory".into(), q(&format!("{mem_gi}Gi")));
    let (count, milli) = gpu;
    if count > 0 {
        let (res, v) = if milli < 1000 {
            ("alibabacloud.com/gpu-milli", milli)
        } else {
            ("nvidia.com/gpu", i64::from(count))
        };
        r.insert(res.into(), q(&v.to_string()));
        c.resources.limits.insert(res.into(), q(&v.to_string()));
    }
    p.spec.containers.push(c);
    if !models.is_empty() {
        p.spec.affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_expressions: vec![NodeSelectorRequirement {
                            key: node_labels::NVIDIA_GPU_PRODUCT.into(),
                            operator: "In".into(),
                            values: models.iter().map(|m| m.to_string()).collect(),
                        }],
                        match_fields: Vec::new(),
                    }],
                }),
                preferred_during_scheduling_ignored_during_execution: Vec::new(),
            }),
            pod_affinity: None,
            pod_anti_affinity: None,
        });
    }
    Shared::from_typed(p)
}

fn config() -> KubeSchedulerConfiguration {
    KubeSchedulerConfiguration::from_yaml(CONFIG).expect("config")
}

fn random_nodes(rng: &mut SplitMix64, n: usize) -> Vec<Arc<Node>> {
    (0..n)
        .map(|i| {
            let gpus = [0, 1, 2, 4, 8][rng.below(5)];
            let model = (gpus > 0 && rng.below(4) > 0).then(|| MODELS[rng.below(3)]);
            let cpu = 4000 * (1 + rng.below(16) as i64);
            node(
                &format!("node-{i:03}"),
                cpu,
                16 + rng.below(240) as i64,
                gpus,
                model,
            )
        })
        .collect()
}

fn random_pod(rng: &mut SplitMix64, i: usize) -> Shared<Pod> {
    let gpu = match rng.below(4) {
        0 => (0, 0),
        1 => (1, 100 * (1 + rng.below(9) as i64)),
        _ => ([1, 1, 2, 4, 8][rng.below(5)], 1000),
    };
    let models: Vec<&str> = match rng.below(4) {
        0 => vec![MODELS[rng.below(3)]],
        1 => vec![MODELS[0], MODELS[2]],
        _ => Vec::new(),
    };
    let cpu = 500 * (1 + rng.below(24) as i64);
    pod(
        &format!("pod-{i:04}"),
        cpu,
        1 + rng.below(48) as i64,
        gpu,
        &models,
    )
}

#[test]
fn select_host_picks_the_maximum_then_the_smallest_rank() {
    let rank = [2, 0, 1];
    assert_eq!(select_host(&[0, 1, 2], &[5, 9, 7], &rank), Some(1));
    assert_eq!(select_host(&[0, 1, 2], &[9, 5, 9], &rank), Some(2));
    assert_eq!(select_host(&[0, 2], &[9, 9], &rank), Some(2));
    assert_eq!(select_host(&[], &[], &rank), None);
}

#[test]
fn ties_go_to_the_smallest_rank_and_placed_pods_stay() {
    let nodes = vec![
        node("a", 8000, 32, 2, None),
        node("b", 8000, 32, 2, None),
        node("c", 8000, 32, 2, None),
    ];
    // By position: three equal nodes, the first wins.
    let mut sim = Simulator::new(config(), &nodes, None).expect("simulator");
    let p = sim
        .schedule_pod(&pod("p0", 1000, 1, (1, 500), &[]))
        .expect("placed");
    assert_eq!((p.node, sim.node_name(p.node)), (0, Some("a")));
    // GPU index chosen at Reserve is on the placed pod (best fit: GPU 0 of a fresh node).
    assert_eq!(
        p.pod.metadata.annotations.get(GPU_INDEX_ANNOTATION),
        Some(&"0".to_string())
    );
    // GpuPacking now prefers node a's partly used GPU: 500 + 400 milli on GPU 0.
    let p = sim
        .schedule_pod(&pod("p1", 1000, 1, (1, 400), &[]))
        .expect("placed");
    assert_eq!(p.node, 0);
    // With ranks [2, 0, 1], node b (rank 0) wins the tie among fresh nodes.
    let mut sim = Simulator::new(config(), &nodes, Some(vec![2, 0, 1])).expect("simulator");
    let p = sim
        .schedule_pod(&pod("p0", 1000, 1, (1, 500), &[]))
        .expect("placed");
    assert_eq!(sim.node_name(p.node), Some("b"));
    // A pod that fits nowhere: 3 GPUs on 2-GPU nodes.
    assert_eq!(sim.schedule_pod(&pod("big", 1000, 1, (3, 1000), &[])), None);
    // One rank per node.
    let err = Simulator::new(config(), &nodes, Some(vec![0, 1])).expect_err("ranks");
    assert_eq!(err.to_string(), "2 tie-break ranks for 3 nodes");
}

#[test]
fn precheck_applies_only_when_the_two_plugins_filter_first() {
    let nodes = vec![node("a", 8000, 32, 2, None)];
    let sim = Simulator::new(config(), &nodes, None).expect("simulator");
    assert_eq!((sim.precheck_gpu, sim.precheck_fit), (Some(0), Some(1)));
    // NodeAffinity first: the pre-check would hide its statuses, so it is off.
    let yaml = CONFIG.replace(
        "enabled: [{name: GpuShare}, {name: NodeResourcesFit}, {name: NodeAffinity}]",
        "enabled: [{name: NodeAffinity}, {name: GpuShare}, {name: NodeResourcesFit}]",
    );
    let cfg = KubeSchedulerConfiguration::from_yaml(&yaml).expect("config");
    let sim = Simulator::new(cfg, &nodes, None).expect("simulator");
    assert_eq!((sim.precheck_gpu, sim.precheck_fit), (None, None));
}

/// The pre-check leaves out only nodes GpuShare or NodeResourcesFit rejects (checked against the
/// framework's own Filter on every node, before every attempt), and the placements with and
/// without it are the same.
#[test]
fn precheck_rejects_only_what_the_plugins_reject_and_changes_no_placement() {
    let mut rng = SplitMix64::new(7);
    let nodes = random_nodes(&mut rng, 40);
    let pods: Vec<Shared<Pod>> = (0..400).map(|i| random_pod(&mut rng, i)).collect();
    let mut with = Simulator::new(config(), &nodes, None).expect("simulator");
    let mut without = Simulator::new(config(), &nodes, None).expect("simulator");
    without.precheck_gpu = None;
    without.precheck_fit = None;
    let (mut left_out, mut placed) = (0, 0);
    for p in &pods {
        let fwk = with.scheduler.profiles().first().expect("profile");
        let mut state = CycleState::new();
        let h = SimHandle {
            fwk,
            nodes: &with.nodes,
            index: &with.index,
            client: &mut DetachedClient::default(),
        };
        let (_, status, _) = fwk.run_pre_filter(&mut state, p, &h);
        assert!(status.is_success(), "{status:?}");
        let skips = fwk.filter_skips(&state);
        let check = Precheck {
            shape: PodShape::of(p),
            requests: k8s_types::resources::pod_requests(p),
            gpu: !skips[0],
            fit: !skips[1],
        };
        for (n, room) in with.nodes.iter().zip(&with.rooms) {
            if check.admits(room, n) {
                continue;
            }
            left_out += 1;
            let s = fwk.run_filter(&state, p, n, &skips);
            assert!(
                s.is_rejected(),
                "{} on {}: {s:?}",
                p.metadata.name,
                n.name()
            );
            assert!(
                s.plugin() == GPU_SHARE || s.plugin() == NODE_RESOURCES_FIT,
                "{s:?}"
            );
        }
        let a = with.schedule_pod(p);
        let b = without.schedule_pod(p);
        assert_eq!(a, b, "{}", p.metadata.name);
        placed += usize::from(a.is_some());
    }
    // The random cluster exercises both outcomes and the pre-check.
    assert!(left_out > 1000, "{left_out}");
    assert!(placed > 50 && placed < 400, "{placed}");
}

#[test]
fn node_gpu_frag_and_typical_pods() {
    // One 2-GPU node with 600 milli used on GPU 0; target workload: whole-GPU pods only.
    let nodes = vec![node("a", 8000, 32, 2, None)];
    let mut sim = Simulator::new(config(), &nodes, None).expect("simulator");
    sim.schedule_pod(&pod("s", 1000, 1, (1, 600), &[]))
        .expect("placed");
    let whole = pod("w", 1000, 1, (1, 1000), &[]);
    let typical = typical_pods([&*whole], 95);
    assert_eq!(typical.len(), 1);
    assert_eq!(typical[0].freq, 1.0);
    // The node can host a whole-GPU pod (GPU 1), so only GPU 0's 400 free milli are fragment.
    assert_eq!(sim.node_gpu_frag(0, &typical), 400.0);
    assert_eq!(sim.node_gpu_frag(9, &typical), 0.0);
}
