//! GPU sharing through the scheduler's public API (detached mode): GpuShare places whole and
//! fractional GPUs GPU by GPU, records the chosen GPU at binding (`alibabacloud.com/gpu-index`),
//! and later pods of the same run see the decision. Values computed by hand from the rules in
//! `plugins::gpu` (best-fit GPU selection, the simulator's `allocateGpuIdBasedOnBestFit`).

use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_types::core::{Container, Node, Pod, ResourceList};
use k8s_types::gpushare::GPU_INDEX_ANNOTATION;
use k8s_types::Quantity;

fn q(s: &str) -> Quantity {
    Quantity::parse(s).expect("quantity")
}

fn node(name: &str, gpus: &str) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    let mut a = ResourceList::new();
    a.insert("cpu".into(), q("32"));
    a.insert("memory".into(), q("128Gi"));
    a.insert("pods".into(), q("110"));
    a.insert("nvidia.com/gpu".into(), q(gpus));
    let milli = (gpus.parse::<i64>().expect("count") * 1000).to_string();
    a.insert("alibabacloud.com/gpu-milli".into(), q(&milli));
    n.status.capacity = a.clone();
    n.status.allocatable = a;
    n
}

fn pod(name: &str, resource: &str, amount: &str) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = Some("default".into());
    p.metadata.uid = Some(format!("uid-{name}"));
    let mut c = Container {
        name: "main".into(),
        ..Default::default()
    };
    c.resources.requests.insert("cpu".into(), q("1"));
    c.resources.requests.insert(resource.into(), q(amount));
    c.resources.limits.insert(resource.into(), q(amount));
    p.spec.containers.push(c);
    p
}

const CONFIG: &str = r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preFilter: {enabled: [{name: GpuShare}]}
    filter: {enabled: [{name: GpuShare}]}
    reserve: {enabled: [{name: GpuShare}]}
    score:
      disabled: [{name: "*"}]
      enabled: [{name: GpuPackingScore}]
    preScore:
      disabled: [{name: "*"}]
      enabled: [{name: GpuPackingScore}]
"#;

#[test]
fn fractions_share_one_gpu_and_whole_gpus_avoid_it() {
    let cfg = KubeSchedulerConfiguration::from_yaml(CONFIG).expect("config");
    let mut s = Scheduler::new(cfg).expect("scheduler");
    s.add_node(node("gpu-a", "2"));
    // 0.6 GPU: a fresh 2-GPU node; best fit takes GPU 0 (first index among equal free).
    let r = s.schedule_one(k8s_types::object::Shared::from_typed(pod(
        "share-1",
        "alibabacloud.com/gpu-milli",
        "600",
    )));
    assert_eq!(r.decision.bound_node(), Some("gpu-a"));
    // 0.3 GPU: GpuPacking prefers the partly used GPU; best fit picks GPU 0 (400 free).
    let r = s.schedule_one(k8s_types::object::Shared::from_typed(pod(
        "share-2",
        "alibabacloud.com/gpu-milli",
        "300",
    )));
    assert_eq!(r.decision.bound_node(), Some("gpu-a"));
    // A whole GPU: only GPU 1 is fully free.
    let r = s.schedule_one(k8s_types::object::Shared::from_typed(pod(
        "whole-1",
        "nvidia.com/gpu",
        "1",
    )));
    assert_eq!(r.decision.bound_node(), Some("gpu-a"));
    // Another whole GPU does not fit: GPU 0 holds 900 milli of shared pods.
    let r = s.schedule_one(k8s_types::object::Shared::from_typed(pod(
        "whole-2",
        "nvidia.com/gpu",
        "1",
    )));
    assert!(
        matches!(&r.decision, k8s_sched::scheduler::detached::Decision::Unschedulable { message }
            if message.contains("not enough fully free GPUs")),
        "{r:?}"
    );
    // 0.2 GPU: 100 milli left on GPU 0, nothing on GPU 1.
    let r = s.schedule_one(k8s_types::object::Shared::from_typed(pod(
        "share-3",
        "alibabacloud.com/gpu-milli",
        "200",
    )));
    assert!(r.decision.bound_node().is_none(), "{r:?}");

    let node = s.cache().node_info("gpu-a").expect("node");
    assert_eq!(node.gpus().milli_left(), &[100, 0]);
    let index = |name: &str| {
        node.pods()
            .iter()
            .find(|p| p.pod.metadata.name == name)
            .and_then(|p| {
                p.pod
                    .metadata
                    .annotations
                    .get(GPU_INDEX_ANNOTATION)
                    .cloned()
            })
    };
    assert_eq!(index("share-1").as_deref(), Some("0"));
    assert_eq!(index("share-2").as_deref(), Some("0"));
    assert_eq!(index("whole-1").as_deref(), Some("1"));
}
