//! The kubelet through its public API only, against an in-memory apiserver and a fake device
//! plugin (tests/common). Expected values are upstream texts or computed by hand in the comments.

mod common;

use std::collections::BTreeSet;

use common::{FakeApi, FakePlugin};
use k8s_kubelet::{Kubelet, KubeletConfig};
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::core::{
    Container, Node, NodeCondition, Pod, ResourceList, ResourceRequirements,
    ALLOCATED_DEVICES_ANNOTATION,
};
use k8s_types::meta::ObjectMeta;
use k8s_types::object::{Kind, Object};
use k8s_types::Quantity;

fn q(s: &str) -> Quantity {
    Quantity::parse(s).expect("valid quantity")
}

fn list(items: &[(&str, &str)]) -> ResourceList {
    items.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
}

/// A node manifest with the given capacity and podCIDR.
fn node(name: &str, capacity: &[(&str, &str)], pod_cidr: Option<&str>) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    n.status.capacity = list(capacity);
    n.spec.pod_cidr = pod_cidr.map(str::to_string);
    n
}

/// A pod bound to `node` with one container `app` asking for `cpu` (request) and `gpus` (limit).
fn pod(name: &str, node: &str, cpu: Option<&str>, gpus: i64) -> Pod {
    let mut requests = ResourceList::new();
    if let Some(c) = cpu {
        requests.insert("cpu".into(), q(c));
    }
    let mut limits = ResourceList::new();
    if gpus > 0 {
        limits.insert("nvidia.com/gpu".into(), q(&gpus.to_string()));
    }
    Pod {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: k8s_types::core::PodSpec {
            node_name: Some(node.into()),
            containers: vec![Container {
                name: "app".into(),
                image: "vllm/vllm-openai:latest".into(),
                resources: ResourceRequirements {
                    requests: requests.into(),
                    limits: limits.into(),
                    claims: Vec::new(),
                },
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }
        .into(),
        ..Default::default()
    }
}

fn gpu_node_kubelet(api: &mut FakeApi, n_gpus: usize, config: KubeletConfig) -> Kubelet {
    let manifest = node(
        "gpu-1",
        &[("cpu", "32"), ("memory", "256Gi"), ("nvidia.com/gpu", "8")],
        Some("10.244.1.0/24"),
    );
    let mut k = Kubelet::new(
        manifest,
        vec![FakePlugin::boxed("nvidia.com/gpu", n_gpus)],
        config,
    );
    k.register(api).expect("registration");
    k
}

fn devices(api: &FakeApi, name: &str) -> Option<String> {
    api.pod("default", name).and_then(|p| {
        p.metadata
            .annotations
            .get(ALLOCATED_DEVICES_ANNOTATION)
            .cloned()
    })
}

fn stored_node(api: &FakeApi, name: &str) -> Node {
    api.get_typed::<Node>("", name).expect("node registered")
}

#[test]
fn registration_reports_plugin_devices_not_the_manifest_count() {
    let mut api = FakeApi::default();
    let k = gpu_node_kubelet(&mut api, 2, KubeletConfig::default());
    assert_eq!(k.node_name(), "gpu-1");
    let n = stored_node(&api, "gpu-1");
    // The manifest says 8 GPUs; the plugin lists 2 devices.
    assert_eq!(n.status.capacity["nvidia.com/gpu"].to_string(), "2");
    assert_eq!(n.status.allocatable["nvidia.com/gpu"].to_string(), "2");
    assert_eq!(n.status.capacity["cpu"].to_string(), "32");
    assert_eq!(n.status.allocatable["memory"].to_string(), "256Gi");
    assert_eq!(n.status.capacity["pods"].to_string(), "110");
    assert_eq!(n.metadata.labels["kubernetes.io/hostname"], "gpu-1");
    assert_eq!(n.metadata.labels["kubernetes.io/os"], "linux");
    assert_eq!(n.metadata.labels["nvidia.com/gpu.present"], "true");
    assert_eq!(n.spec.pod_cidr.as_deref(), Some("10.244.1.0/24"));
    assert!(n.is_ready());
    let ready = n
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .expect("Ready");
    assert_eq!(ready.reason.as_deref(), Some("KubeletReady"));
    assert_eq!(
        ready.message.as_deref(),
        Some("kubelet is posting ready status")
    );
    assert_eq!(n.status.addresses[0].type_, "InternalIP");
    assert_eq!(n.status.addresses[1].address, "gpu-1");
    let evs = api.events();
    let got: Vec<(&str, &str)> = evs
        .iter()
        .map(|(r, m, _)| (r.as_str(), m.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("Starting", "Starting kubelet."),
            (
                "NodeHasSufficientMemory",
                "Node gpu-1 status is now: NodeHasSufficientMemory"
            ),
            (
                "NodeHasNoDiskPressure",
                "Node gpu-1 status is now: NodeHasNoDiskPressure"
            ),
            (
                "NodeHasSufficientPID",
                "Node gpu-1 status is now: NodeHasSufficientPID"
            ),
            (
                "NodeAllocatableEnforced",
                "Updated Node Allocatable limit across pods"
            ),
        ]
    );
}

#[test]
fn registering_an_existing_not_ready_node_updates_it_and_records_node_ready() {
    let mut api = FakeApi::default();
    let mut existing = node("n1", &[("cpu", "4")], None);
    existing.metadata.labels.insert("team".into(), "ml".into());
    existing.spec.pod_cidr = Some("10.244.7.0/24".into());
    existing.status.conditions = vec![NodeCondition {
        type_: "Ready".into(),
        status: "Unknown".into(),
        ..Default::default()
    }];
    api.create(Object::Node(Box::new(existing)))
        .expect("create");
    let mut k = Kubelet::new(
        node("n1", &[("cpu", "4"), ("memory", "8Gi")], None),
        vec![],
        KubeletConfig::default(),
    );
    k.register(&mut api).expect("registration");
    let n = stored_node(&api, "n1");
    assert_eq!(n.metadata.labels["team"], "ml");
    assert_eq!(n.metadata.labels["kubernetes.io/hostname"], "n1");
    assert_eq!(n.status.capacity["memory"].to_string(), "8Gi");
    assert!(n.is_ready());
    let reasons: Vec<String> = api.events().into_iter().map(|e| e.0).collect();
    assert!(reasons.contains(&"NodeReady".to_string()));
    // The stored podCIDR is used for pods.
    api.add_pod(pod("web", "n1", Some("100m"), 0));
    k.sync(&mut api);
    assert_eq!(
        api.pod("default", "web")
            .and_then(|p| p.status.pod_ip)
            .as_deref(),
        Some("10.244.7.2")
    );
}

#[test]
fn two_gpu_pods_get_devices_0_and_1_and_a_third_is_rejected() {
    let mut api = FakeApi::default();
    let mut k = gpu_node_kubelet(&mut api, 2, KubeletConfig::default());
    for name in ["vllm-0", "vllm-1", "vllm-2"] {
        api.add_pod(pod(name, "gpu-1", None, 1));
    }
    api.tick = 1;
    k.sync(&mut api);
    assert_eq!(devices(&api, "vllm-0").as_deref(), Some("nvidia.com/gpu=0"));
    assert_eq!(devices(&api, "vllm-1").as_deref(), Some("nvidia.com/gpu=1"));
    assert_eq!(devices(&api, "vllm-2"), None);
    let rejected = api.pod("default", "vllm-2").expect("pod kept");
    // Upstream runs the device manager's admit handler before the resource predicate, so the
    // device manager's error is what the pod shows (kubelet.go NewMainKubelet handler order).
    assert_eq!(rejected.status.phase.as_deref(), Some("Failed"));
    assert_eq!(
        rejected.status.reason.as_deref(),
        Some("UnexpectedAdmissionError")
    );
    assert_eq!(
        rejected.status.message.as_deref(),
        Some("Pod was rejected: Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected")
    );
    let warning = api
        .events()
        .into_iter()
        .find(|e| e.0 == "UnexpectedAdmissionError")
        .expect("warning event");
    assert_eq!(warning.2, "vllm-2");
    assert_eq!(
        k.pod_devices("default", "vllm-1")["nvidia.com/gpu"],
        vec!["1"]
    );
    let opts = k
        .device_run_container_options("default", "vllm-0", "app")
        .expect("allocated");
    assert_eq!(opts["nvidia.com/gpu"].envs["VISIBLE_DEVICES"], "0");
    // A rejected pod stays Failed: later syncs do not admit it again.
    api.tick = 2;
    k.sync(&mut api);
    assert_eq!(devices(&api, "vllm-2"), None);
    assert_eq!(
        api.pod("default", "vllm-2")
            .and_then(|p| p.status.phase)
            .as_deref(),
        Some("Failed")
    );
}

#[test]
fn deleting_a_gpu_pod_frees_its_device_for_the_next_pod() {
    let mut api = FakeApi::default();
    let mut k = gpu_node_kubelet(&mut api, 2, KubeletConfig::default());
    api.add_pod(pod("a", "gpu-1", None, 1));
    api.add_pod(pod("b", "gpu-1", None, 1));
    k.sync(&mut api);
    assert_eq!(devices(&api, "a").as_deref(), Some("nvidia.com/gpu=0"));
    assert_eq!(
        api.pod("default", "a")
            .and_then(|p| p.status.pod_ip)
            .as_deref(),
        Some("10.244.1.2")
    );
    // Graceful delete: the apiserver sets deletionTimestamp, the kubelet finishes it.
    api.tick = 1;
    api.delete(&Kind::Pod, "default", "a", DeleteOptions::default())
        .expect("delete");
    k.sync(&mut api);
    assert!(api.pod("default", "a").is_none());
    let killing: Vec<(String, String, String)> = api
        .events()
        .into_iter()
        .filter(|e| e.0 == "Killing")
        .collect();
    assert_eq!(
        killing,
        vec![(
            "Killing".into(),
            "Stopping container app".into(),
            "a".into()
        )]
    );
    assert!(api
        .writes
        .contains(&"delete /registry/pods/default/a".to_string()));
    api.tick = 2;
    api.add_pod(pod("c", "gpu-1", None, 1));
    k.sync(&mut api);
    assert_eq!(devices(&api, "c").as_deref(), Some("nvidia.com/gpu=0"));
    // The freed IP .2 is the lowest free one again.
    assert_eq!(
        api.pod("default", "c")
            .and_then(|p| p.status.pod_ip)
            .as_deref(),
        Some("10.244.1.2")
    );
}

#[test]
fn a_pod_deleted_at_once_releases_its_device_and_ip() {
    let mut api = FakeApi::default();
    let mut k = gpu_node_kubelet(&mut api, 1, KubeletConfig::default());
    api.add_pod(pod("a", "gpu-1", None, 1));
    k.sync(&mut api);
    assert_eq!(k.pod_ip("default", "a"), Some("10.244.1.2"));
    api.delete(
        &Kind::Pod,
        "default",
        "a",
        DeleteOptions {
            grace_period_seconds: Some(0),
            ..Default::default()
        },
    )
    .expect("delete");
    k.sync(&mut api);
    assert!(k.pod_devices("default", "a").is_empty());
    assert_eq!(k.pod_ip("default", "a"), None);
    api.add_pod(pod("b", "gpu-1", None, 1));
    k.sync(&mut api);
    assert_eq!(devices(&api, "b").as_deref(), Some("nvidia.com/gpu=0"));
    assert_eq!(k.pod_ip("default", "b"), Some("10.244.1.2"));
}

#[test]
fn no_device_is_ever_given_to_two_pods() {
    // 4 GPUs, pods asking for 1 or 2, created and deleted in a fixed pattern over 12 ticks.
    let mut api = FakeApi::default();
    let mut k = gpu_node_kubelet(&mut api, 4, KubeletConfig::default());
    let mut next = 0;
    for tick in 0..12u64 {
        api.tick = tick;
        for _ in 0..2 {
            let gpus = if next % 3 == 0 { 2 } else { 1 };
            api.add_pod(pod(&format!("p{next}"), "gpu-1", None, gpus));
            next += 1;
        }
        if tick % 2 == 1 {
            // Delete the oldest live pod.
            let oldest = api
                .list_typed::<Pod>(None, None)
                .into_iter()
                .filter(|p| p.status.phase.as_deref() != Some("Failed"))
                .min_by_key(|p| p.metadata.resource_version_number());
            if let Some(p) = oldest {
                api.delete(
                    &Kind::Pod,
                    "default",
                    &p.metadata.name,
                    DeleteOptions::default(),
                )
                .expect("delete");
            }
        }
        k.sync(&mut api);
        let mut seen = BTreeSet::new();
        let mut held = 0;
        for p in api.list_typed::<Pod>(None, None) {
            if let Some(v) = p.metadata.annotations.get(ALLOCATED_DEVICES_ANNOTATION) {
                let ids = v.trim_start_matches("nvidia.com/gpu=");
                for id in ids.split(',') {
                    held += 1;
                    assert!(
                        seen.insert(id.to_string()),
                        "device {id} given twice at tick {tick}"
                    );
                }
            }
        }
        assert!(held <= 4);
    }
}

#[test]
fn extended_resources_from_the_manifest_are_checked_at_admission() {
    let mut api = FakeApi::default();
    let mut k = Kubelet::new(
        node(
            "n1",
            &[("cpu", "2"), ("memory", "4Gi"), ("example.com/fpga", "1")],
            None,
        ),
        vec![],
        KubeletConfig::default(),
    );
    k.register(&mut api).expect("registration");
    let mut a = pod("a", "n1", Some("1"), 0);
    a.spec.containers[0]
        .resources
        .requests
        .insert("example.com/fpga".into(), q("1"));
    let mut b = a.clone();
    b.metadata.name = "b".into();
    b.spec.containers[0]
        .resources
        .requests
        .insert("cpu".into(), q("500m"));
    let c = pod("c", "n1", Some("1500m"), 0);
    api.add_pod(a);
    api.add_pod(b);
    api.add_pod(c);
    k.sync(&mut api);
    let b = api.pod("default", "b").expect("b");
    assert_eq!(b.status.reason.as_deref(), Some("OutOfexample.com/fpga"));
    assert_eq!(
        b.status.message.as_deref(),
        Some("Pod was rejected: Node didn't have enough resource: example.com/fpga, requested: 1, used: 1, capacity: 1")
    );
    // a holds 1 CPU of 2: c's 1.5 CPUs do not fit.
    let c = api.pod("default", "c").expect("c");
    assert_eq!(c.status.reason.as_deref(), Some("OutOfcpu"));
    assert_eq!(
        c.status.message.as_deref(),
        Some("Pod was rejected: Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000")
    );
    // No podCIDR: the admitted pod has no IP.
    let a = api.pod("default", "a").expect("a");
    assert_eq!(a.status.pod_ip, None);
    assert_eq!(a.status.phase.as_deref(), Some("Pending"));
}

#[test]
fn containers_go_from_creating_to_running_after_startup_ticks() {
    let mut api = FakeApi::default();
    let mut k = gpu_node_kubelet(
        &mut api,
        1,
        KubeletConfig {
            startup_ticks: 2,
            max_pods: 110,
            ..Default::default()
        },
    );
    api.tick = 10;
    api.add_pod(pod("web", "gpu-1", Some("100m"), 0));
    k.sync(&mut api);
    let p = api.pod("default", "web").expect("pod");
    assert_eq!(p.status.phase.as_deref(), Some("Pending"));
    let cs = &p.status.container_statuses[0];
    assert_eq!(
        cs.state.waiting.as_ref().and_then(|w| w.reason.as_deref()),
        Some("ContainerCreating")
    );
    assert_eq!(p.status.start_time.as_deref(), Some("1970-01-01T00:00:10Z"));
    assert_eq!(p.status.host_ip.as_deref(), k.host_ip());
    let ready = p.condition("Ready").expect("Ready");
    assert_eq!(
        ready.message.as_deref(),
        Some("containers with unready status: [app]")
    );

    api.tick = 11;
    k.sync(&mut api);
    assert_eq!(
        api.pod("default", "web")
            .and_then(|p| p.status.phase)
            .as_deref(),
        Some("Pending")
    );
    api.tick = 12;
    k.sync(&mut api);
    let p = api.pod("default", "web").expect("pod");
    assert_eq!(p.status.phase.as_deref(), Some("Running"));
    assert!(p.is_ready());
    assert_eq!(
        p.status.container_statuses[0]
            .state
            .running
            .as_ref()
            .and_then(|r| r.started_at.as_deref()),
        Some("1970-01-01T00:00:12Z")
    );
    let pod_events: Vec<(String, String)> = api
        .events()
        .into_iter()
        .filter(|e| e.2 == "web")
        .map(|e| (e.0, e.1))
        .collect();
    assert_eq!(
        pod_events,
        vec![
            (
                "Pulled".to_string(),
                "Container image \"vllm/vllm-openai:latest\" already present on machine"
                    .to_string()
            ),
            ("Created".to_string(), "Created container: app".to_string()),
            ("Started".to_string(), "Started container app".to_string()),
        ]
    );
}

#[test]
fn zero_startup_ticks_runs_the_pod_in_the_admitting_sync() {
    let mut api = FakeApi::default();
    let mut k = gpu_node_kubelet(
        &mut api,
        1,
        KubeletConfig {
            startup_ticks: 0,
            max_pods: 110,
            ..Default::default()
        },
    );
    api.add_pod(pod("web", "gpu-1", None, 1));
    k.sync(&mut api);
    let p = api.pod("default", "web").expect("pod");
    assert_eq!(p.status.phase.as_deref(), Some("Running"));
    assert_eq!(devices(&api, "web").as_deref(), Some("nvidia.com/gpu=0"));
    let reasons: Vec<String> = api
        .events()
        .into_iter()
        .filter(|e| e.2 == "web")
        .map(|e| e.0)
        .collect();
    assert_eq!(reasons, vec!["Pulled", "Created", "Started"]);
}

#[test]
fn an_unhealthy_gpu_lowers_allocatable_with_one_status_write() {
    let mut api = FakeApi::default();
    let mut k = gpu_node_kubelet(&mut api, 2, KubeletConfig::default());
    api.tick = 1;
    k.sync(&mut api);
    let writes_before = api.writes.len();
    api.tick = 2;
    k.sync(&mut api);
    // Nothing changed: no write.
    assert_eq!(api.writes.len(), writes_before);
    assert!(k.set_device_health("1", false));
    assert!(!k.set_device_health("9", false));
    api.tick = 3;
    k.sync(&mut api);
    let n = stored_node(&api, "gpu-1");
    assert_eq!(n.status.capacity["nvidia.com/gpu"].to_string(), "2");
    assert_eq!(n.status.allocatable["nvidia.com/gpu"].to_string(), "1");
    assert_eq!(api.writes.len(), writes_before + 1);
    api.tick = 4;
    k.sync(&mut api);
    assert_eq!(api.writes.len(), writes_before + 1);
    // A new GPU pod gets the healthy device 0.
    api.add_pod(pod("a", "gpu-1", None, 1));
    k.sync(&mut api);
    assert_eq!(devices(&api, "a").as_deref(), Some("nvidia.com/gpu=0"));
    // The status is reported again after 300 ticks without change.
    let writes = api.writes.len();
    api.tick = 303;
    k.sync(&mut api);
    assert!(api
        .writes
        .iter()
        .skip(writes)
        .any(|w| w == "status /registry/nodes/gpu-1"));
}

#[test]
fn pods_of_other_nodes_are_ignored_and_too_many_pods_are_rejected() {
    let mut api = FakeApi::default();
    let mut k = Kubelet::new(
        node(
            "small",
            &[("cpu", "4"), ("pods", "1")],
            Some("10.244.2.0/24"),
        ),
        vec![],
        KubeletConfig::default(),
    );
    k.register(&mut api).expect("registration");
    api.add_pod(pod("elsewhere", "other-node", None, 0));
    api.add_pod(pod("one", "small", None, 0));
    api.add_pod(pod("two", "small", None, 0));
    k.sync(&mut api);
    assert_eq!(
        api.pod("default", "elsewhere").and_then(|p| p.status.phase),
        None
    );
    assert_eq!(
        api.pod("default", "one")
            .and_then(|p| p.status.pod_ip)
            .as_deref(),
        Some("10.244.2.2")
    );
    let two = api.pod("default", "two").expect("two");
    assert_eq!(two.status.reason.as_deref(), Some("OutOfpods"));
    assert_eq!(
        two.status.message.as_deref(),
        Some("Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1")
    );
}

#[test]
fn a_running_pod_from_a_dump_is_adopted_with_its_ip_and_devices() {
    let mut api = FakeApi::default();
    let mut dumped = pod("old", "gpu-1", None, 1);
    dumped.status.phase = Some("Running".into());
    dumped.status.pod_ip = Some("10.244.1.7".into());
    dumped.metadata.annotations.insert(
        ALLOCATED_DEVICES_ANNOTATION.into(),
        "nvidia.com/gpu=1".into(),
    );
    api.add_pod(dumped);
    let mut k = gpu_node_kubelet(&mut api, 2, KubeletConfig::default());
    let writes = api.writes.len();
    k.sync(&mut api);
    // Same IP and device, nothing written about the pod, no events for it.
    assert_eq!(k.pod_ip("default", "old"), Some("10.244.1.7"));
    assert_eq!(k.pod_devices("default", "old")["nvidia.com/gpu"], vec!["1"]);
    assert!(!api
        .writes
        .iter()
        .skip(writes)
        .any(|w| w.contains("pods/default/old")));
    assert!(api.events().iter().all(|e| e.2 != "old"));
    // The next pod gets the other device and the lowest free IP.
    api.add_pod(pod("new", "gpu-1", None, 1));
    k.sync(&mut api);
    assert_eq!(devices(&api, "new").as_deref(), Some("nvidia.com/gpu=0"));
    assert_eq!(k.pod_ip("default", "new"), Some("10.244.1.2"));
}

#[test]
fn a_rejected_pod_is_deleted_without_killing_containers() {
    let mut api = FakeApi::default();
    let mut k = gpu_node_kubelet(&mut api, 1, KubeletConfig::default());
    api.add_pod(pod("a", "gpu-1", None, 1));
    api.add_pod(pod("b", "gpu-1", None, 1));
    k.sync(&mut api);
    assert_eq!(
        api.pod("default", "b")
            .and_then(|p| p.status.phase)
            .as_deref(),
        Some("Failed")
    );
    api.delete(&Kind::Pod, "default", "b", DeleteOptions::default())
        .expect("delete");
    k.sync(&mut api);
    assert!(api.pod("default", "b").is_none());
    assert!(api.events().iter().all(|e| e.0 != "Killing"));
    // a still holds its device.
    assert_eq!(devices(&api, "a").as_deref(), Some("nvidia.com/gpu=0"));
    assert_eq!(k.pod_devices("default", "a")["nvidia.com/gpu"], vec!["0"]);
}

/// The Lease renewal updates the Lease its previous write returned, without reading it first (as
/// upstream's lease controller with `latestLease`); when another writer changed the Lease (the
/// update conflicts) or deleted it (NotFound), it reads (or creates) the Lease and renews that.
#[test]
fn lease_renewal_updates_its_last_write_and_recovers_from_other_writers() {
    use k8s_kubelet::node_lease::NodeLease;
    use k8s_types::coordination::{micro_time, Lease, NODE_LEASE_NAMESPACE};
    let mut api = FakeApi::default();
    let mut lease = NodeLease::default();
    let stored = |api: &FakeApi| -> Lease {
        api.get_typed(NODE_LEASE_NAMESPACE, "n1")
            .expect("the Lease exists")
    };
    assert_eq!(lease.renew_if_due(&mut api, "n1", 0), Ok(true));
    assert_eq!(stored(&api).spec.renew_time, Some(micro_time(0)));
    // Not due before 10 ticks.
    assert_eq!(lease.renew_if_due(&mut api, "n1", 9), Ok(false));
    assert_eq!(lease.renew_if_due(&mut api, "n1", 10), Ok(true));
    assert_eq!(stored(&api).spec.renew_time, Some(micro_time(10)));
    // Another writer changes the Lease: the kubelet's copy is stale, its update conflicts, it
    // reads the Lease and renews it (taking the holder back).
    let mut other = stored(&api);
    other.spec.holder_identity = Some("someone-else".into());
    api.update_typed(other).expect("foreign update");
    assert_eq!(lease.renew_if_due(&mut api, "n1", 20), Ok(true));
    let l = stored(&api);
    assert_eq!(l.spec.renew_time, Some(micro_time(20)));
    assert_eq!(l.spec.holder_identity.as_deref(), Some("n1"));
    // Deleted: created again at the next renewal.
    api.delete(
        &Kind::Lease,
        NODE_LEASE_NAMESPACE,
        "n1",
        DeleteOptions::default(),
    )
    .expect("delete");
    assert_eq!(lease.renew_if_due(&mut api, "n1", 30), Ok(true));
    assert_eq!(stored(&api).spec.renew_time, Some(micro_time(30)));
    // Writes: create, renew, the foreign update, renew (after the conflict), delete, create.
    let verbs: Vec<&str> = api
        .writes
        .iter()
        .filter_map(|w| w.split_whitespace().next())
        .collect();
    assert_eq!(
        verbs,
        vec!["create", "update", "update", "update", "delete", "create"]
    );
}

/// Pods of namespaces `a`, `a-b` and `a0`: their keys order as strings `a-b/…` < `a/…` < `a0/…`
/// (`-` < `/` < `0`), not as (namespace, name) pairs. Every sync finds each pod it knows (none is
/// forgotten and admitted again), and a pod being deleted whose container takes 5 s to stop after
/// SIGTERM (`stop: {seconds: 5}`) stays until it stops: SIGTERM at tick 2, exit at 7, removed by
/// the sync at 7; the syncs in between write nothing.
#[test]
fn known_pods_are_followed_across_syncs_and_a_stopping_pod_waits_for_its_container() {
    let mut api = FakeApi::default();
    let mut k = gpu_node_kubelet(&mut api, 1, KubeletConfig::default());
    for ns in ["a0", "a", "a-b"] {
        let mut p = pod("web", "gpu-1", Some("100m"), 0);
        p.metadata.namespace = Some(ns.into());
        p.spec.termination_grace_period_seconds = Some(30);
        p.metadata.annotations.insert(
            k8s_kubelet::behavior::BEHAVIOR_ANNOTATION.into(),
            "containers: {app: {stop: {seconds: 5}}}".into(),
        );
        api.add_pod(p);
    }
    for t in 0..=1 {
        api.tick = t;
        k.sync(&mut api);
    }
    let started: Vec<String> = api
        .events()
        .into_iter()
        .filter(|e| e.0 == "Started")
        .map(|e| e.2)
        .collect();
    assert_eq!(started, vec!["web", "web", "web"]);
    assert!(["a", "a-b", "a0"]
        .iter()
        .all(|ns| api.pod(ns, "web").is_some_and(|p| p.is_ready())));

    // Deletion of a/web with the 30 s grace period: deletionTimestamp = 2 + 30.
    api.tick = 2;
    let key = Kind::Pod.key("a", "web");
    let Some(Object::Pod(mut p)) = api.objects.get(&key).cloned() else {
        panic!("pod a/web");
    };
    p.metadata.deletion_timestamp = Some(k8s_types::meta::tick_timestamp(32).into());
    p.metadata.deletion_grace_period_seconds = Some(30);
    api.objects.insert(key, Object::Pod(p));
    k.sync(&mut api);
    let writes_after_sigterm = api.writes.len();
    let events_after_sigterm = api.events().len();
    for t in 3..=6 {
        api.tick = t;
        k.sync(&mut api);
        assert!(api.pod("a", "web").is_some(), "a/web removed at {t}");
    }
    assert_eq!(api.writes.len(), writes_after_sigterm);
    assert_eq!(api.events().len(), events_after_sigterm);
    api.tick = 7;
    k.sync(&mut api);
    assert!(api.pod("a", "web").is_none());
    assert!(api.pod("a-b", "web").is_some() && api.pod("a0", "web").is_some());
    let per_reason = |reason: &str| api.events().iter().filter(|e| e.0 == reason).count();
    // One admission per pod (no pod forgotten and admitted again), one SIGTERM.
    assert_eq!(per_reason("Started"), 3);
    assert_eq!(per_reason("Killing"), 1);
}
