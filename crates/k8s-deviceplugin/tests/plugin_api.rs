//! Uses the NVIDIA device plugin only through its public API and the `DevicePlugin` trait, the way a
//! kubelet's device manager does: list, ask for a preferred allocation among free devices, allocate.

use k8s_deviceplugin::{NvidiaDevicePlugin, CONTROL_DEVICE_NODES, NVIDIA_VISIBLE_DEVICES};
use k8s_types::deviceplugin::DevicePlugin;

#[test]
fn a_kubelet_style_allocation_round_trip() {
    let mut plugin: Box<dyn DevicePlugin> =
        Box::new(NvidiaDevicePlugin::with_product(4, "NVIDIA-A100-SXM4-80GB"));
    // GPU 0 is held by another pod and GPU 2 is unhealthy: the kubelet offers 1 and 3.
    plugin.set_health("2", false);
    let healthy: Vec<String> = plugin
        .list_and_watch()
        .into_iter()
        .filter(|d| d.health == "Healthy")
        .map(|d| d.id)
        .collect();
    assert_eq!(healthy, vec!["0", "1", "3"]);
    let available: Vec<String> = healthy.into_iter().filter(|id| id != "0").collect();
    let chosen = plugin.get_preferred_allocation(&available, &[], 2);
    assert_eq!(chosen, vec!["1", "3"]);
    let resp = plugin.allocate(&chosen).expect("healthy devices");
    assert_eq!(resp.envs[NVIDIA_VISIBLE_DEVICES], "1,3");
    let mut expected: Vec<String> = CONTROL_DEVICE_NODES.iter().map(|s| s.to_string()).collect();
    expected.push("/dev/nvidia1".into());
    expected.push("/dev/nvidia3".into());
    assert_eq!(resp.devices, expected);
    assert!(plugin.allocate(&["2".to_string()]).is_err());
}
