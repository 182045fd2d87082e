//! The `Allocate` response for one container (upstream `NVIDIA/k8s-device-plugin`
//! `internal/plugin/server.go` `getAllocateResponse`, `apiEnvs`, `apiDeviceSpecs`, and
//! `internal/rm/nvml_manager.go` `GetDevicePaths`).
//!
//! Modelled configuration: `DEVICE_LIST_STRATEGY=envvar` (the default: the GPU list goes into
//! `NVIDIA_VISIBLE_DEVICES`) and `PASS_DEVICE_SPECS=true` (the device nodes are returned too; the
//! upstream default is `false`, the GPU Operator turns it on). CDI annotations, GDS and MOFED are not
//! modelled.

use std::collections::BTreeMap;

use k8s_types::deviceplugin::{compare_device_ids, ContainerAllocateResponse};

/// The environment variable the NVIDIA container runtime reads to pick the GPUs a container sees
/// (upstream `deviceListEnvvar`). It accepts GPU indices and `GPU-<uuid>` IDs alike.
pub const NVIDIA_VISIBLE_DEVICES: &str = "NVIDIA_VISIBLE_DEVICES";

/// Control device nodes every GPU container needs, in upstream order (`GetDevicePaths`). Upstream
/// skips the optional ones missing on the host; a simulated host has all of them.
pub const CONTROL_DEVICE_NODES: [&str; 4] = [
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/nvidia-uvm-tools",
    "/dev/nvidia-modeset",
];

/// The device node of GPU `index`, e.g. `/dev/nvidia0`.
pub fn gpu_device_node(index: &str) -> String {
    format!("/dev/nvidia{index}")
}

/// The response for a container given GPU indices (already validated by the caller): the indices
/// sorted numerically and joined by `,` in [`NVIDIA_VISIBLE_DEVICES`]; the device nodes are the
/// [`CONTROL_DEVICE_NODES`] followed by `/dev/nvidia<i>` for each GPU in index order (upstream order;
/// the real plugin keeps the kubelet's request order, k8s-mini sorts so output is deterministic).
/// Duplicate IDs are listed once.
pub fn container_allocate_response(device_ids: &[String]) -> ContainerAllocateResponse {
    let mut ids: Vec<&str> = device_ids.iter().map(String::as_str).collect();
    ids.sort_by(|a, b| compare_device_ids(a, b));
    ids.dedup();
    let mut envs = BTreeMap::new();
    envs.insert(NVIDIA_VISIBLE_DEVICES.to_string(), ids.join(","));
    let devices = CONTROL_DEVICE_NODES
        .iter()
        .map(|p| p.to_string())
        .chain(ids.iter().map(|id| gpu_device_node(id)))
        .collect();
    ContainerAllocateResponse {
        envs,
        devices,
        annotations: BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_lists_sorted_gpus_and_control_nodes_first() {
        let r = container_allocate_response(&["10".into(), "2".into(), "2".into()]);
        assert_eq!(
            r.envs.get(NVIDIA_VISIBLE_DEVICES).map(String::as_str),
            Some("2,10")
        );
        assert_eq!(
            r.devices,
            vec![
                "/dev/nvidiactl",
                "/dev/nvidia-uvm",
                "/dev/nvidia-uvm-tools",
                "/dev/nvidia-modeset",
                "/dev/nvidia2",
                "/dev/nvidia10",
            ]
        );
        assert!(r.annotations.is_empty());
    }
}
