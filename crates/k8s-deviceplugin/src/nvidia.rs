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

use crate::allocate::{
    container_allocate_response, gpu_device_node, CONTROL_DEVICE_NODES, NVIDIA_VISIBLE_DEVICES,
};
use crate::config::{Sharing, SharingStrategy};
use crate::preferred_allocation::{distributed, lowest_index_first, physical_id};
use crate::topology::GpuTopology;

/// The extended resource the plugin registers (upstream default resource `nvidia.com/gpu`).
pub const RESOURCE_NAME: &str = resource_names::NVIDIA_GPU;

/// GPU Feature Discovery / GPU Operator label saying the node has NVIDIA GPUs.
pub const LABEL_GPU_PRESENT: &str = "nvidia.com/gpu.present";
/// GPU Feature Discovery label with the number of GPUs.
pub const LABEL_GPU_COUNT: &str = k8s_types::core::node_labels::NVIDIA_GPU_COUNT;
/// GPU Feature Discovery label with the GPU product name, e.g. `NVIDIA-A100-SXM4-80GB`.
pub const LABEL_GPU_PRODUCT: &str = k8s_types::core::node_labels::NVIDIA_GPU_PRODUCT;
/// The MPS pipe directory variable (upstream `internal/plugin/mps.go`).
pub const CUDA_MPS_PIPE_DIRECTORY: &str = "CUDA_MPS_PIPE_DIRECTORY";

/// The NVIDIA device plugin of one resource of one node. [`NvidiaDevicePlugin::new`] is `n` whole
/// GPUs with IDs `"0"`..`"n-1"` (GPU indices; the real plugin defaults to `GPU-<uuid>` IDs, and
/// `NVIDIA_VISIBLE_DEVICES` accepts both), all healthy at start, without NUMA topology;
/// [`crate::device_map::plugins_for_node`] builds MIG devices (`<gpu>:<mig>`), replicas
/// (`<id>::<n>`) and topology-aware plugins from a node's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvidiaDevicePlugin {
    resource: String,
    devices: Vec<Device>,
    /// Per device (same order): the physical GPU index it lives on.
    gpus: Vec<usize>,
    product: Option<String>,
    labels: BTreeMap<String, String>,
    sharing: Sharing,
    topology: Option<GpuTopology>,
    /// Each GPU's memory in MiB (MPS pinned memory limits).
    memory_mib: Option<u64>,
}

impl NvidiaDevicePlugin {
    /// A plugin with `n_gpus` healthy GPUs and no product name.
    pub fn new(n_gpus: usize) -> Self {
        let mut p = NvidiaDevicePlugin::with_devices(
            RESOURCE_NAME,
            (0..n_gpus).map(|i| (i.to_string(), i)).collect(),
        );
        p.labels = whole_gpu_labels(n_gpus, None);
        p
    }

    /// A plugin with `n_gpus` healthy GPUs of the given product (GPU Feature Discovery's
    /// `nvidia.com/gpu.product` value, e.g. `NVIDIA-A100-SXM4-80GB`; empty means unknown).
    pub fn with_product(n_gpus: usize, product: &str) -> Self {
        let mut p = NvidiaDevicePlugin::new(n_gpus);
        if !product.is_empty() {
            p.product = Some(product.to_string());
            p.labels = whole_gpu_labels(n_gpus, Some(product));
        }
        p
    }

    /// A plugin for `resource` with the given `(device ID, physical GPU)` devices, healthy, not
    /// shared, without topology and without feature labels.
    pub fn with_devices(resource: &str, devices: Vec<(String, usize)>) -> Self {
        let gpus = devices.iter().map(|(_, g)| *g).collect();
        let devices = devices
            .into_iter()
            .map(|(id, _)| Device {
                id,
                health: HEALTHY.to_string(),
                numa_node: None,
            })
            .collect();
        NvidiaDevicePlugin {
            resource: resource.to_string(),
            devices,
            gpus,
            product: None,
            labels: BTreeMap::new(),
            sharing: Sharing {
                replicas: 1,
                ..Sharing::default()
            },
            topology: None,
            memory_mib: None,
        }
    }

    /// Sets the sharing configuration (the device IDs must already be replicas `<id>::<n>`).
    pub fn set_sharing(&mut self, sharing: Sharing) {
        self.sharing = sharing;
    }

    /// Sets the GPU topology: `GetPreferredAllocation` of whole GPUs uses the best-effort policy
    /// and each device reports its GPU's NUMA node.
    pub fn set_topology(&mut self, topology: GpuTopology) {
        for (d, g) in self.devices.iter_mut().zip(&self.gpus) {
            d.numa_node = topology.numa.get(*g).copied();
        }
        self.topology = Some(topology);
    }

    /// Sets the feature labels this plugin publishes.
    pub fn set_labels(&mut self, labels: BTreeMap<String, String>) {
        self.labels = labels;
    }

    /// Sets the product name and each GPU's memory (MiB, GFD's `nvidia.com/gpu.memory`).
    pub fn set_product(&mut self, product: Option<String>, memory_mib: Option<u64>) {
        self.product = product;
        self.memory_mib = memory_mib;
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

    fn gpu_of(&self, id: &str) -> Option<usize> {
        let i = self.devices.iter().position(|d| d.id == id)?;
        self.gpus.get(i).copied()
    }

    /// Whether the devices are whole GPUs, one per GPU (not MIG devices, not replicas): upstream
    /// `AlignedAllocationSupported` and no annotated ID.
    fn whole_gpus(&self) -> bool {
        !self.sharing.is_replicated() && self.devices.iter().all(|d| !d.id.contains(':'))
    }

    /// The commands upstream's MPS control daemon sends at start (`cmd/mps-control-daemon/mps/
    /// daemon.go`): `set_default_device_pinned_mem_limit <gpu> <MiB/replicas>M` per GPU (when the
    /// memory is known) and `set_default_active_thread_percentage <100/replicas>`. Empty unless
    /// the plugin shares with MPS.
    pub fn mps_daemon_commands(&self) -> Vec<String> {
        if self.sharing.strategy != SharingStrategy::Mps || !self.sharing.is_replicated() {
            return Vec::new();
        }
        let r = u64::from(self.sharing.replicas);
        let mut gpus: Vec<usize> = self.gpus.clone();
        gpus.sort_unstable();
        gpus.dedup();
        let mut out = Vec::new();
        if let Some(mem) = self.memory_mib.filter(|m| *m > 0) {
            for g in &gpus {
                out.push(format!(
                    "set_default_device_pinned_mem_limit {g} {}M",
                    mem / r
                ));
            }
        }
        out.push(format!("set_default_active_thread_percentage {}", 100 / r));
        out
    }
}

/// GFD's base labels for whole GPUs: `present`, `count` and, when known, `product`.
fn whole_gpu_labels(n: usize, product: Option<&str>) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    if n == 0 {
        return labels;
    }
    labels.insert(LABEL_GPU_PRESENT.to_string(), "true".to_string());
    labels.insert(LABEL_GPU_COUNT.to_string(), n.to_string());
    if let Some(p) = product {
        labels.insert(LABEL_GPU_PRODUCT.to_string(), p.to_string());
    }
    labels
}

impl DevicePlugin for NvidiaDevicePlugin {
    fn resource_name(&self) -> &str {
        &self.resource
    }

    /// Upstream `GetDevicePluginOptions`: only `GetPreferredAllocationAvailable` (no
    /// PreStartContainer hook).
    fn options(&self) -> DevicePluginOptions {
        DevicePluginOptions {
            pre_start_required: false,
            get_preferred_allocation_available: true,
        }
    }

    /// Every device with its current health, in index order.
    fn list_and_watch(&self) -> Vec<Device> {
        self.devices.clone()
    }

    /// Upstream `getPreferredAllocation`: whole GPUs on a node with a topology get the best-effort
    /// set ([`GpuTopology::best_effort`]; when it has no answer, the rule below); MIG devices and
    /// replicas get [`distributed`]; whole GPUs without topology [`lowest_index_first`].
    fn get_preferred_allocation(
        &self,
        available: &[String],
        must_include: &[String],
        size: usize,
    ) -> Vec<String> {
        if !self.whole_gpus() {
            return distributed(&self.device_ids(), available, must_include, size);
        }
        if let Some(t) = &self.topology {
            let idx = |ids: &[String]| -> Option<Vec<usize>> {
                ids.iter().map(|id| id.parse().ok()).collect()
            };
            if let (Some(a), Some(r)) = (idx(available), idx(must_include)) {
                let set = t.best_effort(&a, &r, size);
                if !set.is_empty() {
                    return set.iter().map(ToString::to_string).collect();
                }
            }
        }
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
        if let (true, Some(idx)) = (self.whole_gpus(), k8s_types::gpushare::pod_gpu_indices(pod)) {
            for i in idx {
                let id = i.to_string();
                if must.len() < size && available.contains(&id) && !must.contains(&id) {
                    must.push(id);
                }
            }
        }
        self.get_preferred_allocation(available, &must, size)
    }

    /// Checks every ID (upstream `ValidateRequest` rejects unknown IDs with `invalid allocation
    /// request ... unknown device`, and more than one replica when `failRequestsGreaterThanOne`;
    /// k8s-mini also rejects unhealthy IDs, which the kubelet never hands out). Whole GPUs get
    /// [`container_allocate_response`]; MIG devices and replicas expose their physical devices
    /// (upstream `uniqueDeviceIDsFromAnnotatedDeviceIDs`: `NVIDIA_VISIBLE_DEVICES=0` for replicas
    /// `0::1,0::3`, `0:1` for a MIG device) and the parent GPU's device node (the MIG capability
    /// nodes under `/dev/nvidia-caps` are not modelled); MPS adds `CUDA_MPS_PIPE_DIRECTORY`
    /// (`/mps/<resource>/pipe`).
    ///
    /// # Errors
    /// [`DevicePluginError::UnknownDevice`], [`DevicePluginError::UnhealthyDevice`],
    /// [`DevicePluginError::InvalidRequest`].
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
        if self.whole_gpus() {
            return Ok(container_allocate_response(device_ids));
        }
        let replicas = device_ids.iter().any(|id| id.contains("::"));
        if self.sharing.is_replicated()
            && self.sharing.fail_requests_greater_than_one
            && replicas
            && device_ids.len() > 1
        {
            return Err(DevicePluginError::InvalidRequest(format!(
                "invalid allocation request for {:?}: invalid request: maximum request size for shared resources is 1; found {}",
                self.resource,
                device_ids.len()
            )));
        }
        let mut sorted: Vec<&String> = device_ids.iter().collect();
        sorted.sort_by(|a, b| k8s_types::deviceplugin::compare_device_ids(a, b));
        let mut visible: Vec<&str> = sorted.iter().map(|id| physical_id(id)).collect();
        visible.dedup();
        let mut gpus: Vec<usize> = sorted.iter().filter_map(|id| self.gpu_of(id)).collect();
        gpus.sort_unstable();
        gpus.dedup();
        let mut envs = BTreeMap::new();
        envs.insert(NVIDIA_VISIBLE_DEVICES.to_string(), visible.join(","));
        if self.sharing.strategy == SharingStrategy::Mps && self.sharing.is_replicated() {
            envs.insert(
                CUDA_MPS_PIPE_DIRECTORY.to_string(),
                format!("/mps/{}/pipe", self.resource),
            );
        }
        let devices = CONTROL_DEVICE_NODES
            .iter()
            .map(|p| p.to_string())
            .chain(gpus.iter().map(|g| gpu_device_node(&g.to_string())))
            .collect();
        Ok(ContainerAllocateResponse {
            envs,
            devices,
            annotations: BTreeMap::new(),
        })
    }

    /// Marks the device and every device on the same physical device (all replicas of a GPU or
    /// MIG device, as upstream's health check marks every device with the failing UUID).
    fn set_health(&mut self, device_id: &str, healthy: bool) {
        let target = physical_id(device_id).to_string();
        for d in &mut self.devices {
            if d.id == device_id || physical_id(&d.id) == target {
                d.health = if healthy { HEALTHY } else { UNHEALTHY }.to_string();
            }
        }
    }

    /// GPU Feature Discovery's labels for the node: for a plain node `nvidia.com/gpu.present=true`,
    /// `nvidia.com/gpu.count=<n>` and, when known, `nvidia.com/gpu.product=<product>`; none without
    /// GPUs; a configured node's MIG and sharing labels ([`crate::device_map::gfd_labels`]).
    fn feature_labels(&self) -> BTreeMap<String, String> {
        self.labels.clone()
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
