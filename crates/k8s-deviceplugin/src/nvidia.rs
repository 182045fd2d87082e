//! [`NvidiaDevicePlugin`]: one node's NVIDIA GPUs behind the device plugin API (upstream
//! `NVIDIA/k8s-device-plugin` `internal/plugin/server.go` `NvidiaDevicePlugin`: `Register`,
//! `GetDevicePluginOptions`, `ListAndWatch`, `GetPreferredAllocation`, `Allocate`).
//!
//! Health: upstream marks a GPU unhealthy on an XID error reported by NVML and never marks it healthy
//! again ("there is no way to recover from the Unhealthy state"); k8s-mini lets a scenario flip health
//! both ways with [`DevicePlugin::set_health`] to simulate faults and repairs.

use std::collections::BTreeMap;

use k8s_types::core::resource_names;
use k8s_types::deviceplugin::{
    ContainerAllocateResponse, Device, DevicePlugin, DevicePluginError, DevicePluginOptions,
    HEALTHY, UNHEALTHY,
};

use crate::allocate::container_allocate_response;
use crate::preferred_allocation::lowest_index_first;

/// The extended resource the plugin registers (upstream default resource `nvidia.com/gpu`).
pub const RESOURCE_NAME: &str = resource_names::NVIDIA_GPU;

/// GPU Feature Discovery / GPU Operator label saying the node has NVIDIA GPUs.
pub const LABEL_GPU_PRESENT: &str = "nvidia.com/gpu.present";
/// GPU Feature Discovery label with the number of GPUs.
pub const LABEL_GPU_COUNT: &str = k8s_types::core::node_labels::NVIDIA_GPU_COUNT;
/// GPU Feature Discovery label with the GPU product name, e.g. `NVIDIA-A100-SXM4-80GB`.
pub const LABEL_GPU_PRODUCT: &str = k8s_types::core::node_labels::NVIDIA_GPU_PRODUCT;

/// The NVIDIA device plugin of one node: `n` whole GPUs with IDs `"0"`..`"n-1"` (GPU indices; the
/// real plugin defaults to `GPU-<uuid>` IDs, and `NVIDIA_VISIBLE_DEVICES` accepts both), all healthy
/// at start, without NUMA topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvidiaDevicePlugin {
    devices: Vec<Device>,
    product: Option<String>,
}

impl NvidiaDevicePlugin {
    /// A plugin with `n_gpus` healthy GPUs and no product name.
    pub fn new(n_gpus: usize) -> Self {
        let devices = (0..n_gpus)
            .map(|i| Device {
                id: i.to_string(),
                health: HEALTHY.to_string(),
                numa_node: None,
            })
            .collect();
        NvidiaDevicePlugin {
            devices,
            product: None,
        }
    }

    /// A plugin with `n_gpus` healthy GPUs of the given product (GPU Feature Discovery's
    /// `nvidia.com/gpu.product` value, e.g. `NVIDIA-A100-SXM4-80GB`; empty means unknown).
    pub fn with_product(n_gpus: usize, product: &str) -> Self {
        let mut p = NvidiaDevicePlugin::new(n_gpus);
        if !product.is_empty() {
            p.product = Some(product.to_string());
        }
        p
    }

    /// The product name, if known.
    pub fn product(&self) -> Option<&str> {
        self.product.as_deref()
    }

    /// Every device ID, in index order.
    pub fn device_ids(&self) -> Vec<String> {
        self.devices.iter().map(|d| d.id.clone()).collect()
    }

    fn device(&self, id: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.id == id)
    }
}

impl DevicePlugin for NvidiaDevicePlugin {
    fn resource_name(&self) -> &str {
        RESOURCE_NAME
    }

    /// Upstream `GetDevicePluginOptions`: only `GetPreferredAllocationAvailable` (no
    /// PreStartContainer hook).
    fn options(&self) -> DevicePluginOptions {
        DevicePluginOptions {
            pre_start_required: false,
            get_preferred_allocation_available: true,
        }
    }

    /// Every GPU with its current health, in index order.
    fn list_and_watch(&self) -> Vec<Device> {
        self.devices.clone()
    }

    /// See [`lowest_index_first`]: `must_include` first, then the lowest free indices.
    fn get_preferred_allocation(
        &self,
        available: &[String],
        must_include: &[String],
        size: usize,
    ) -> Vec<String> {
        lowest_index_first(available, must_include, size)
    }

    /// The GPUs the scheduler recorded in `alibabacloud.com/gpu-index` (GPU sharing: the scheduler
    /// decides which whole GPUs are free of shared pods), when available, then the default rule.
    fn get_preferred_allocation_for_pod(
        &self,
        pod: &k8s_types::core::Pod,
        available: &[String],
        must_include: &[String],
        size: usize,
    ) -> Vec<String> {
        let mut must: Vec<String> = must_include.to_vec();
        if let Some(idx) = k8s_types::gpushare::pod_gpu_indices(pod) {
            for i in idx {
                let id = i.to_string();
                if must.len() < size && available.contains(&id) && !must.contains(&id) {
                    must.push(id);
                }
            }
        }
        lowest_index_first(available, &must, size)
    }

    /// Checks every ID (upstream rejects unknown IDs with `invalid allocation request ... unknown
    /// device`; k8s-mini also rejects unhealthy ones, which the kubelet never hands out) and returns
    /// [`container_allocate_response`].
    ///
    /// # Errors
    /// [`DevicePluginError::UnknownDevice`], [`DevicePluginError::UnhealthyDevice`].
    fn allocate(
        &mut self,
        device_ids: &[String],
    ) -> Result<ContainerAllocateResponse, DevicePluginError> {
        for id in device_ids {
            match self.device(id) {
                None => return Err(DevicePluginError::UnknownDevice(id.clone())),
                Some(d) if d.health != HEALTHY => {
                    return Err(DevicePluginError::UnhealthyDevice(id.clone()))
                }
                Some(_) => {}
            }
        }
        Ok(container_allocate_response(device_ids))
    }

    fn set_health(&mut self, device_id: &str, healthy: bool) {
        if let Some(d) = self.devices.iter_mut().find(|d| d.id == device_id) {
            d.health = if healthy { HEALTHY } else { UNHEALTHY }.to_string();
        }
    }

    /// `nvidia.com/gpu.present=true`, `nvidia.com/gpu.count=<n>` and, when known,
    /// `nvidia.com/gpu.product=<product>` (GPU Feature Discovery); none without GPUs.
    fn feature_labels(&self) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::new();
        if self.devices.is_empty() {
            return labels;
        }
        labels.insert(LABEL_GPU_PRESENT.to_string(), "true".to_string());
        labels.insert(LABEL_GPU_COUNT.to_string(), self.devices.len().to_string());
        if let Some(p) = &self.product {
            labels.insert(LABEL_GPU_PRODUCT.to_string(), p.clone());
        }
        labels
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocate::NVIDIA_VISIBLE_DEVICES;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn registers_as_nvidia_gpu_with_preferred_allocation() {
        let p = NvidiaDevicePlugin::new(2);
        assert_eq!(p.resource_name(), "nvidia.com/gpu");
        assert!(p.options().get_preferred_allocation_available);
        assert!(!p.options().pre_start_required);
        let devices = p.list_and_watch();
        assert_eq!(devices.len(), 2);
        assert_eq!(devices[0].id, "0");
        assert_eq!(devices[1].id, "1");
        assert!(devices.iter().all(|d| d.health == "Healthy"));
    }

    #[test]
    fn allocate_rejects_unknown_and_unhealthy_devices() {
        let mut p = NvidiaDevicePlugin::new(2);
        assert_eq!(
            p.allocate(&ids(&["2"])),
            Err(DevicePluginError::UnknownDevice("2".into()))
        );
        p.set_health("1", false);
        assert_eq!(p.list_and_watch()[1].health, "Unhealthy");
        assert_eq!(
            p.allocate(&ids(&["0", "1"])),
            Err(DevicePluginError::UnhealthyDevice("1".into()))
        );
        p.set_health("1", true);
        let r = p.allocate(&ids(&["1", "0"])).expect("both healthy");
        assert_eq!(r.envs[NVIDIA_VISIBLE_DEVICES], "0,1");
        assert_eq!(r.devices.len(), 6);
        // Unknown IDs are ignored by set_health.
        p.set_health("9", false);
        assert_eq!(p.list_and_watch().len(), 2);
    }

    #[test]
    fn feature_labels_follow_gpu_feature_discovery() {
        let p = NvidiaDevicePlugin::with_product(8, "NVIDIA-H100-80GB-HBM3");
        let l = p.feature_labels();
        assert_eq!(l["nvidia.com/gpu.present"], "true");
        assert_eq!(l["nvidia.com/gpu.count"], "8");
        assert_eq!(l["nvidia.com/gpu.product"], "NVIDIA-H100-80GB-HBM3");
        assert!(!NvidiaDevicePlugin::new(1)
            .feature_labels()
            .contains_key("nvidia.com/gpu.product"));
        assert!(NvidiaDevicePlugin::new(0).feature_labels().is_empty());
    }
}
