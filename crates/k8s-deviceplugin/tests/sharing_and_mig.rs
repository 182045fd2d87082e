//! The NVIDIA device plugin built from a node's configuration: MIG strategies, time-slicing and
//! MPS replicas, renaming, the Allocate answers and GFD labels (values worked out by hand from
//! upstream's rules, see each comment).

use std::collections::BTreeMap;

use k8s_deviceplugin::config::{
    ANNOTATION_FAIL_REQUESTS_GREATER_THAN_ONE, ANNOTATION_RENAME_BY_DEFAULT, LABEL_MIG_CONFIG,
    LABEL_MIG_STRATEGY, LABEL_REPLICAS, LABEL_SHARING_STRATEGY,
};
use k8s_deviceplugin::nvidia::CUDA_MPS_PIPE_DIRECTORY;
use k8s_deviceplugin::topology::ANNOTATION_GPU_TOPOLOGY;
use k8s_deviceplugin::{plugins_for_node, DevicePluginConfig, NvidiaDevicePlugin};
use k8s_deviceplugin::{NVIDIA_VISIBLE_DEVICES, RESOURCE_NAME};
use k8s_types::deviceplugin::{DevicePlugin, DevicePluginError};

fn map(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn build(
    n: usize,
    product: &str,
    labels: &[(&str, &str)],
    annotations: &[(&str, &str)],
) -> BTreeMap<String, NvidiaDevicePlugin> {
    let cfg = DevicePluginConfig::from_node(&map(labels), &map(annotations), n).expect("config");
    plugins_for_node(n, product, Some(81559), &cfg)
        .expect("plugins")
        .into_iter()
        .map(|p| (p.resource_name().to_string(), p))
        .collect()
}

fn counts(plugins: &BTreeMap<String, NvidiaDevicePlugin>) -> Vec<(String, usize)> {
    plugins
        .iter()
        .map(|(k, p)| (k.clone(), p.list_and_watch().len()))
        .collect()
}

#[test]
fn mig_single_splits_every_gpu_the_same_way() {
    // 2 H100 x all-1g.10gb (7 per GPU, mig-parted) = 14 nvidia.com/gpu devices <gpu>:<mig>.
    let mut ps = build(
        2,
        "NVIDIA-H100-80GB-HBM3",
        &[(LABEL_MIG_CONFIG, "all-1g.10gb")],
        &[],
    );
    assert_eq!(counts(&ps), vec![("nvidia.com/gpu".to_string(), 14)]);
    let gpu = ps.get_mut(RESOURCE_NAME).expect("gpu");
    let list = gpu.device_ids();
    assert_eq!(list[0], "0:0");
    assert_eq!(list[13], "1:6");
    let r = gpu.allocate(&ids(&["1:3", "0:0"])).expect("valid");
    assert_eq!(r.envs[NVIDIA_VISIBLE_DEVICES], "0:0,1:3");
    assert_eq!(&r.devices[4..], &["/dev/nvidia0", "/dev/nvidia1"]);
    let l = gpu.feature_labels();
    assert_eq!(l["nvidia.com/mig.strategy"], "single");
    assert_eq!(
        l["nvidia.com/gpu.product"],
        "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
    );
    assert_eq!(l["nvidia.com/gpu.slices.gi"], "1");
    assert_eq!(l["nvidia.com/gpu.count"], "2");
}

#[test]
fn mig_mixed_registers_one_resource_per_profile() {
    // A100-40GB all-balanced (mig-parted): 1g.5gb x2, 2g.10gb x1, 3g.20gb x1 per GPU; 3 GPUs.
    let ps = build(
        3,
        "A100-SXM4-40GB",
        &[
            (LABEL_MIG_CONFIG, "all-balanced"),
            (LABEL_MIG_STRATEGY, "mixed"),
        ],
        &[],
    );
    assert_eq!(
        counts(&ps),
        vec![
            ("nvidia.com/gpu".to_string(), 0),
            ("nvidia.com/mig-1g.5gb".to_string(), 6),
            ("nvidia.com/mig-2g.10gb".to_string(), 3),
            ("nvidia.com/mig-3g.20gb".to_string(), 3),
        ]
    );
    assert_eq!(
        ps["nvidia.com/mig-2g.10gb"].device_ids(),
        ids(&["0:2", "1:2", "2:2"])
    );
    let l = ps[RESOURCE_NAME].feature_labels();
    assert_eq!(l["nvidia.com/mig-1g.5gb.count"], "6");
    assert_eq!(
        l["nvidia.com/mig-3g.20gb.product"],
        "A100-SXM4-40GB-MIG-3g.20gb"
    );
    assert_eq!(l["nvidia.com/gpu.replicas"], "0");
    // A MIG device's preferred allocation: the lowest free ID (each is its own device).
    let p = &ps["nvidia.com/mig-1g.5gb"];
    assert_eq!(
        p.get_preferred_allocation(&ids(&["2:1", "1:0", "2:0"]), &[], 2),
        ids(&["1:0", "2:0"])
    );
}

#[test]
fn invalid_mig_layouts_are_errors() {
    let err = |n: usize, product: &str, labels: &[(&str, &str)]| -> String {
        let cfg = DevicePluginConfig::from_node(&map(labels), &map(&[]), n).expect("config");
        plugins_for_node(n, product, None, &cfg).expect_err("invalid")[0].to_string()
    };
    let e = err(
        1,
        "NVIDIA-H100-80GB-HBM3",
        &[(LABEL_MIG_CONFIG, "all-balanced")],
    );
    assert!(
        e.contains("more than one MIG device type present on node"),
        "{e}"
    );
    let e = err(1, "Tesla-T4", &[(LABEL_MIG_CONFIG, "all-1g.10gb")]);
    assert!(e.contains("does not support MIG"), "{e}");
    let e = err(
        1,
        "NVIDIA-H100-80GB-HBM3",
        &[(LABEL_MIG_CONFIG, "all-1g.5gb")],
    );
    assert!(
        e.starts_with("metadata.labels[nvidia.com/mig.config]: Invalid value: \"all-1g.5gb\": MIG profile 1g.5gb is not supported by H100-80GB"),
        "{e}"
    );
    let e = err(
        1,
        "NVIDIA-H100-80GB-HBM3",
        &[(LABEL_MIG_CONFIG, "all-enabled")],
    );
    assert!(e.contains("device 0 has no MIG devices configured"), "{e}");
    // Mixed accepts MIG-enabled GPUs without MIG devices (upstream only warns).
    let ps = build(
        1,
        "NVIDIA-H100-80GB-HBM3",
        &[
            (LABEL_MIG_CONFIG, "all-enabled"),
            (LABEL_MIG_STRATEGY, "mixed"),
        ],
        &[],
    );
    assert_eq!(counts(&ps), vec![("nvidia.com/gpu".to_string(), 0)]);
    // --mig-strategy=none: MIG-enabled GPUs are advertised whole.
    let ps = build(
        2,
        "NVIDIA-H100-80GB-HBM3",
        &[
            (LABEL_MIG_CONFIG, "all-1g.10gb"),
            (LABEL_MIG_STRATEGY, "none"),
        ],
        &[],
    );
    assert_eq!(counts(&ps), vec![("nvidia.com/gpu".to_string(), 2)]);
}

#[test]
fn time_slicing_replicas_expose_the_physical_gpu() {
    // 2 GPUs x 4 replicas = 8 devices <gpu>::<n>.
    let mut ps = build(2, "NVIDIA-A10G", &[(LABEL_REPLICAS, "4")], &[]);
    let p = ps.get_mut(RESOURCE_NAME).expect("gpu");
    assert_eq!(p.list_and_watch().len(), 8);
    assert_eq!(p.device_ids()[5], "1::1");
    // Two replicas of GPU 0: the container sees GPU 0 once (failRequestsGreaterThanOne is off).
    let r = p.allocate(&ids(&["0::3", "0::1"])).expect("valid");
    assert_eq!(r.envs[NVIDIA_VISIBLE_DEVICES], "0");
    assert_eq!(r.devices.len(), 5);
    assert_eq!(r.devices[4], "/dev/nvidia0");
    // A fault on GPU 0 marks its 4 replicas.
    p.set_health("0::2", false);
    let unhealthy: Vec<String> = p
        .list_and_watch()
        .into_iter()
        .filter(|d| d.health != "Healthy")
        .map(|d| d.id)
        .collect();
    assert_eq!(unhealthy, ids(&["0::0", "0::1", "0::2", "0::3"]));
    let l = p.feature_labels();
    assert_eq!(l["nvidia.com/gpu.product"], "NVIDIA-A10G-SHARED");
    assert_eq!(l["nvidia.com/gpu.replicas"], "4");
    assert_eq!(l["nvidia.com/gpu.sharing-strategy"], "time-slicing");
}

#[test]
fn rename_and_fail_requests_greater_than_one() {
    let mut ps = build(
        1,
        "Tesla-T4",
        &[(LABEL_REPLICAS, "4")],
        &[
            (ANNOTATION_RENAME_BY_DEFAULT, "true"),
            (ANNOTATION_FAIL_REQUESTS_GREATER_THAN_ONE, "true"),
        ],
    );
    assert_eq!(
        counts(&ps),
        vec![
            ("nvidia.com/gpu".to_string(), 0),
            ("nvidia.com/gpu.shared".to_string(), 4),
        ]
    );
    // Renamed: no -SHARED suffix (upstream getProductName).
    assert_eq!(
        ps[RESOURCE_NAME].feature_labels()["nvidia.com/gpu.product"],
        "Tesla-T4"
    );
    let p = ps.get_mut("nvidia.com/gpu.shared").expect("shared");
    assert_eq!(
        p.allocate(&ids(&["0::0", "0::1"])),
        Err(DevicePluginError::InvalidRequest(
            "invalid allocation request for \"nvidia.com/gpu.shared\": invalid request: maximum request size for shared resources is 1; found 2".into()
        ))
    );
    assert!(p.allocate(&ids(&["0::1"])).is_ok());
}

#[test]
fn mig_partitions_can_be_time_sliced_like_the_real_128_device_node() {
    // The real p5-class node of ../shared/data: nvidia.com/gpu: 0 and nvidia.com/gpu.shared: 128
    // = 8 GPUs x 4 MIG devices (all-1g.20gb on H100 80GB, 4 per GPU) x 4 replicas.
    let ps = build(
        8,
        "NVIDIA-H100-80GB-HBM3",
        &[(LABEL_MIG_CONFIG, "all-1g.20gb"), (LABEL_REPLICAS, "4")],
        &[(ANNOTATION_RENAME_BY_DEFAULT, "true")],
    );
    assert_eq!(
        counts(&ps),
        vec![
            ("nvidia.com/gpu".to_string(), 0),
            ("nvidia.com/gpu.shared".to_string(), 128),
        ]
    );
    let p = &ps["nvidia.com/gpu.shared"];
    assert_eq!(p.device_ids()[5], "0:1::1");
    // Distributed: two replicas go to two different MIG devices.
    let all = p.device_ids();
    assert_eq!(
        p.get_preferred_allocation(&all, &[], 2),
        ids(&["0:0::0", "0:1::0"])
    );
}

#[test]
fn mps_sets_the_pipe_directory_and_the_daemon_limits() {
    let mut ps = build(
        1,
        "NVIDIA-H100-80GB-HBM3",
        &[(LABEL_SHARING_STRATEGY, "mps"), (LABEL_REPLICAS, "2")],
        &[],
    );
    let p = ps.get_mut(RESOURCE_NAME).expect("gpu");
    let r = p.allocate(&ids(&["0::1"])).expect("valid");
    assert_eq!(r.envs[CUDA_MPS_PIPE_DIRECTORY], "/mps/nvidia.com/gpu/pipe");
    assert_eq!(r.envs[NVIDIA_VISIBLE_DEVICES], "0");
    // MPS defaults failRequestsGreaterThanOne to true.
    assert!(p.allocate(&ids(&["0::0", "0::1"])).is_err());
    // 81559 MiB / 2 replicas = 40779 MiB (integer division as upstream); 100 / 2 = 50 %.
    assert_eq!(
        p.mps_daemon_commands(),
        ids(&[
            "set_default_device_pinned_mem_limit 0 40779M",
            "set_default_active_thread_percentage 50"
        ])
    );
}

#[test]
fn topology_drives_whole_gpu_preferences_and_numa_hints() {
    let ps = build(
        8,
        "Tesla-V100-SXM2-16GB",
        &[],
        &[(ANNOTATION_GPU_TOPOLOGY, "dgx-1v")],
    );
    let p = &ps[RESOURCE_NAME];
    let all = p.device_ids();
    // See scenarios/gpu-topology.yaml: the best pairing of the DGX-1 starts with {0,3}.
    assert_eq!(p.get_preferred_allocation(&all, &[], 2), ids(&["0", "3"]));
    assert_eq!(p.list_and_watch()[5].numa_node, Some(1));
    // Without topology: lowest indices.
    let plain = NvidiaDevicePlugin::new(8);
    assert_eq!(
        plain.get_preferred_allocation(&all, &[], 2),
        ids(&["0", "1"])
    );
}
