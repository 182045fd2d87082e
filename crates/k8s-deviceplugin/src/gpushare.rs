//! [`GpuShareDevicePlugin`]: fractional GPUs as a device plugin, the node half of Alibaba's GPU
//! sharing (AliyunContainerService `gpushare-device-plugin`, which advertises one fake device per
//! memory unit of every GPU; the FGD paper's trace uses milli-GPU instead, resource
//! `alibabacloud.com/gpu-milli`).
//!
//! - Every physical GPU offers 1000 devices `"<gpu>-<k>"` (`k` = 0..999), so the node reports
//!   `alibabacloud.com/gpu-milli: <gpus * 1000>` and a pod asking for `m` milli-GPU is given `m`
//!   devices.
//! - Which GPU: the scheduler's choice, recorded in the pod annotation `alibabacloud.com/gpu-index`
//!   (as upstream, whose Allocate looks the pod up and reads the index annotation). The kubelet asks
//!   [`DevicePlugin::get_preferred_allocation_for_pod`], which returns free devices of that GPU,
//!   lowest `k` first; without the annotation, the GPU with the fewest free devices that still has
//!   room (best fit).
//! - `Allocate` exposes the one physical GPU: `NVIDIA_VISIBLE_DEVICES=<gpu>` and
//!   `ALIBABACLOUD_COM_GPU_MILLI=<devices>` (upstream's analogue is `ALIYUN_COM_GPU_MEM_CONTAINER`).
//!
//! Health is per physical GPU: marking `"3"` (or any `"3-<k>"`) unhealthy marks its 1000 devices.

use std::collections::BTreeMap;

use k8s_types::core::Pod;
use k8s_types::deviceplugin::{
    preferred_allocation_of_strings, ContainerAllocateResponse, Device, DeviceIds, DevicePlugin,
    DevicePluginError, DevicePluginOptions, HEALTHY, UNHEALTHY,
};
use k8s_types::gpushare::{pod_gpu_indices, GPU_MILLI, MILLI_PER_GPU};

use crate::allocate::{gpu_device_node, CONTROL_DEVICE_NODES, NVIDIA_VISIBLE_DEVICES};

/// The extended resource the plugin registers.
pub const RESOURCE_NAME: &str = GPU_MILLI;
/// Environment variable with the container's milli-GPU.
pub const GPU_MILLI_ENV: &str = "ALIBABACLOUD_COM_GPU_MILLI";

/// The GPU-share device plugin of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuShareDevicePlugin {
    healthy: Vec<bool>,
}

/// The device ID of unit `k` of GPU `gpu`.
pub fn device_id(gpu: usize, k: i64) -> String {
    format!("{gpu}-{k}")
}

/// The GPU of a device ID `"<gpu>-<k>"` (or a bare GPU index).
pub fn gpu_of(id: &str) -> Option<usize> {
    id.split('-').next().and_then(|g| g.parse().ok())
}

impl GpuShareDevicePlugin {
    /// A plugin sharing `n_gpus` healthy GPUs.
    pub fn new(n_gpus: usize) -> GpuShareDevicePlugin {
        GpuShareDevicePlugin {
            healthy: vec![true; n_gpus],
        }
    }

    /// Number of physical GPUs.
    pub fn gpus(&self) -> usize {
        self.healthy.len()
    }
}

impl DevicePlugin for GpuShareDevicePlugin {
    fn resource_name(&self) -> &str {
        RESOURCE_NAME
    }

    fn options(&self) -> DevicePluginOptions {
        DevicePluginOptions {
            pre_start_required: false,
            get_preferred_allocation_available: true,
        }
    }

    /// 1000 devices per GPU, GPU by GPU.
    fn list_and_watch(&self) -> Vec<Device> {
        let mut out = Vec::with_capacity(self.healthy.len() * MILLI_PER_GPU as usize);
        for (g, ok) in self.healthy.iter().enumerate() {
            let health = if *ok { HEALTHY } else { UNHEALTHY };
            for k in 0..MILLI_PER_GPU {
                out.push(Device {
                    id: device_id(g, k),
                    health: health.to_string(),
                    numa_node: None,
                });
            }
        }
        out
    }

    /// Without a pod: the GPU with the fewest free devices that has `size` (best fit), lowest units
    /// first; `must_include` always first.
    fn get_preferred_allocation(
        &self,
        available: &[String],
        must_include: &[String],
        size: usize,
    ) -> Vec<String> {
        let mut per_gpu: BTreeMap<usize, Vec<&String>> = BTreeMap::new();
        for id in available {
            if let Some(g) = gpu_of(id) {
                per_gpu.entry(g).or_default().push(id);
            }
        }
        let need = size.saturating_sub(must_include.len());
        let best = per_gpu
            .iter()
            .filter(|(_, ids)| ids.len() >= need)
            .min_by_key(|(g, ids)| (ids.len(), **g))
            .map(|(g, _)| *g);
        pick(available, must_include, size, best)
    }

    /// The free devices of the GPU named in `alibabacloud.com/gpu-index`, lowest units first.
    fn get_preferred_allocation_for_pod(
        &self,
        pod: &Pod,
        available: &[String],
        must_include: &[String],
        size: usize,
    ) -> Vec<String> {
        match pod_gpu_indices(pod).and_then(|v| v.first().copied()) {
            Some(g) => pick(available, must_include, size, Some(g)),
            None => self.get_preferred_allocation(available, must_include, size),
        }
    }

    /// The healthy GPUs' 1000 units each, one run per GPU (what [`Self::list_and_watch`] lists).
    fn healthy_ids(&self) -> (usize, DeviceIds) {
        let per_gpu = MILLI_PER_GPU.unsigned_abs();
        let healthy = (0u64..)
            .zip(&self.healthy)
            .filter(|(_, ok)| **ok)
            .map(|(g, _)| g);
        (
            self.healthy.len() * usize::try_from(per_gpu).unwrap_or(usize::MAX),
            DeviceIds::units(healthy, 0, per_gpu),
        )
    }

    /// [`Self::get_preferred_allocation_for_pod`] over the free units as runs: when the annotated
    /// GPU's free units fill the request (the usual case), its lowest ones, read from its runs
    /// without listing the node's other units; otherwise the string form.
    fn preferred_allocation_from(
        &self,
        pod: &Pod,
        free: &DeviceIds,
        must_include: &[String],
        size: usize,
    ) -> Vec<String> {
        let gpu = pod_gpu_indices(pod).and_then(|v| v.first().copied());
        if let Some(g) = gpu.filter(|_| must_include.is_empty() && free.all_units()) {
            let own: Vec<String> = free
                .units_of(g as u64)
                .take(size)
                .map(|k| format!("{g}-{k}"))
                .collect();
            if own.len() == size {
                return own;
            }
        }
        preferred_allocation_of_strings(self, pod, free, must_include, size)
    }

    /// Exposes the physical GPU(s) the devices belong to.
    ///
    /// # Errors
    /// An ID that is not `<gpu>-<k>` of this node, or on an unhealthy GPU.
    fn allocate(
        &mut self,
        device_ids: &[String],
    ) -> Result<ContainerAllocateResponse, DevicePluginError> {
        let mut gpus: Vec<usize> = Vec::new();
        for id in device_ids {
            let unit_ok = id
                .split_once('-')
                .and_then(|(_, k)| k.parse::<i64>().ok())
                .is_some_and(|k| (0..MILLI_PER_GPU).contains(&k));
            let g = gpu_of(id).filter(|g| *g < self.healthy.len() && unit_ok);
            let Some(g) = g else {
                return Err(DevicePluginError::UnknownDevice(id.clone()));
            };
            if !self.healthy[g] {
                return Err(DevicePluginError::UnhealthyDevice(id.clone()));
            }
            if !gpus.contains(&g) {
                gpus.push(g);
            }
        }
        gpus.sort_unstable();
        let mut envs = BTreeMap::new();
        envs.insert(
            NVIDIA_VISIBLE_DEVICES.to_string(),
            gpus.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(","),
        );
        envs.insert(GPU_MILLI_ENV.to_string(), device_ids.len().to_string());
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

    fn set_health(&mut self, device_id: &str, healthy: bool) {
        if let Some(g) = gpu_of(device_id) {
            if let Some(h) = self.healthy.get_mut(g) {
                *h = healthy;
            }
        }
    }
}

/// `must_include`, then free units of `gpu` (lowest first), then anything else free.
///
/// When the units of `gpu` alone fill the request (the usual case: the scheduler's GpuShare
/// plugin only names a GPU with room), only they are sorted, not every free unit of the node
/// (8,000 on an 8-GPU node); the answer is the same.
fn pick(
    available: &[String],
    must_include: &[String],
    size: usize,
    gpu: Option<usize>,
) -> Vec<String> {
    let mut chosen: Vec<String> = must_include.to_vec();
    if let Some(want) = gpu {
        let mut own: Vec<(i64, &String)> = available
            .iter()
            .filter(|id| !chosen.contains(id))
            .filter_map(|id| {
                // The GPU first: only its units' numbers are parsed (1,000 of a node's 8,000).
                let (g, k) = id.split_once('-')?;
                if g.parse::<usize>().ok()? != want {
                    return None;
                }
                Some((k.parse::<i64>().ok()?, id))
            })
            .collect();
        if chosen.len() + own.len() >= size {
            own.sort();
            let room = size.saturating_sub(chosen.len());
            chosen.extend(own.into_iter().take(room).map(|(_, id)| id.clone()));
            return chosen;
        }
    }
    let mut units: Vec<(usize, i64, &String)> = available
        .iter()
        .filter(|id| !chosen.contains(id))
        .filter_map(|id| {
            let (g, k) = id.split_once('-')?;
            Some((g.parse().ok()?, k.parse().ok()?, id))
        })
        .collect();
    units.sort();
    let first = units.iter().filter(|(g, _, _)| Some(*g) == gpu);
    let rest = units.iter().filter(|(g, _, _)| Some(*g) != gpu);
    for (_, _, id) in first.chain(rest) {
        if chosen.len() >= size {
            break;
        }
        chosen.push((*id).clone());
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::gpushare::GPU_INDEX_ANNOTATION;

    #[test]
    fn advertises_1000_devices_per_gpu_and_allocates_on_the_annotated_gpu() {
        let mut p = GpuShareDevicePlugin::new(2);
        assert_eq!(p.resource_name(), "alibabacloud.com/gpu-milli");
        let devices = p.list_and_watch();
        assert_eq!(devices.len(), 2000);
        assert_eq!(devices[1000].id, "1-0");
        let available: Vec<String> = devices.iter().map(|d| d.id.clone()).collect();
        let mut pod = Pod::default();
        pod.metadata
            .annotations
            .insert(GPU_INDEX_ANNOTATION.into(), "1".into());
        let ids = p.get_preferred_allocation_for_pod(&pod, &available, &[], 460);
        assert_eq!(ids.len(), 460);
        assert!(ids.iter().all(|id| id.starts_with("1-")));
        let r = p.allocate(&ids).expect("valid");
        assert_eq!(r.envs[NVIDIA_VISIBLE_DEVICES], "1");
        assert_eq!(r.envs[GPU_MILLI_ENV], "460");
        assert_eq!(r.devices.last().map(String::as_str), Some("/dev/nvidia1"));
        p.set_health("1", false);
        assert!(p.allocate(&ids).is_err());
        assert!(p.allocate(&["7-0".to_string()]).is_err());
    }

    /// `pick` as it was before the fast path: every free unit parsed and sorted.
    fn pick_by_sorting_all(
        available: &[String],
        must_include: &[String],
        size: usize,
        gpu: Option<usize>,
    ) -> Vec<String> {
        let mut chosen: Vec<String> = must_include.to_vec();
        let mut units: Vec<(usize, i64, &String)> = available
            .iter()
            .filter(|id| !chosen.contains(id))
            .filter_map(|id| {
                let (g, k) = id.split_once('-')?;
                Some((g.parse().ok()?, k.parse().ok()?, id))
            })
            .collect();
        units.sort();
        let first = units.iter().filter(|(g, _, _)| Some(*g) == gpu);
        let rest = units.iter().filter(|(g, _, _)| Some(*g) != gpu);
        for (_, _, id) in first.chain(rest) {
            if chosen.len() >= size {
                break;
            }
            chosen.push((*id).clone());
        }
        chosen
    }

    #[test]
    fn the_annotated_gpu_fast_path_picks_what_sorting_every_unit_picks() {
        // Free units, out of order: GPU 2 has units 999 down to 500 (500 free), GPU 0 has 0..99,
        // GPU 1 has 10..1000 step 3; plus a malformed ID.
        let mut available: Vec<String> = (500..1000).rev().map(|k| device_id(2, k)).collect();
        available.extend((0..100).map(|k| device_id(0, k)));
        available.extend((10..1000).step_by(3).map(|k| device_id(1, k)));
        available.push("x-1".to_string());
        let must = [device_id(2, 700)];
        for gpu in [Some(0), Some(1), Some(2), Some(7), None] {
            for size in [0, 1, 100, 101, 330, 499, 500, 501, 2000] {
                for must_include in [&[][..], &must[..]] {
                    assert_eq!(
                        pick(&available, must_include, size, gpu),
                        pick_by_sorting_all(&available, must_include, size, gpu),
                        "gpu {gpu:?} size {size} must {must_include:?}"
                    );
                }
            }
        }
        // Worked by hand: GPU 2's lowest free units are 500.. (the list holds them high to low).
        let ids = pick(&available, &[], 3, Some(2));
        assert_eq!(ids, vec!["2-500", "2-501", "2-502"]);
    }

    #[test]
    fn healthy_runs_list_what_list_and_watch_lists() {
        let mut p = GpuShareDevicePlugin::new(3);
        p.set_health("1", false);
        let devices = p.list_and_watch();
        let healthy = devices.iter().filter(|d| d.health == HEALTHY);
        let (total, ids) = p.healthy_ids();
        assert_eq!(total, 3000);
        assert_eq!(ids, DeviceIds::from_ids(healthy.map(|d| d.id.as_str())));
        assert_eq!(ids.len(), 2000);
        assert!(ids.contains("2-999") && !ids.contains("1-0"));
    }

    #[test]
    fn preference_from_runs_is_the_preference_from_strings() {
        let p = GpuShareDevicePlugin::new(3);
        // Free: GPU 0 units 0..300 and 600..1000, GPU 1 units 990..1000, GPU 2 all.
        let free = DeviceIds::units([0], 0, 300)
            .union(&DeviceIds::units([0], 600, 1000))
            .union(&DeviceIds::units([1], 990, 1000))
            .union(&DeviceIds::units([2], 0, 1000));
        let odd = free.union(&DeviceIds::from_ids(["1-0999", "GPU-x"]));
        let annotated = |g: &str| {
            let mut pod = Pod::default();
            if !g.is_empty() {
                pod.metadata
                    .annotations
                    .insert(GPU_INDEX_ANNOTATION.into(), g.into());
            }
            pod
        };
        let must = [device_id(2, 5)];
        for free in [&free, &odd] {
            for g in ["0", "1", "2", "5", ""] {
                for size in [0, 1, 10, 11, 300, 301, 700, 701, 3000] {
                    for must_include in [&[][..], &must[..]] {
                        let pod = annotated(g);
                        let mut offered = free.to_strings();
                        offered.extend(must_include.iter().cloned());
                        assert_eq!(
                            p.preferred_allocation_from(&pod, free, must_include, size),
                            p.get_preferred_allocation_for_pod(&pod, &offered, must_include, size),
                            "gpu {g:?} size {size} must {must_include:?}"
                        );
                    }
                }
            }
        }
        // By hand: GPU 0's lowest free units are 0, 1, ...; at 301 they run into 600.
        let ids = p.preferred_allocation_from(&annotated("0"), &free, &[], 302);
        assert_eq!(ids[299..], ["0-299", "0-600", "0-601"]);
    }

    #[test]
    fn without_annotation_the_fullest_gpu_with_room_is_preferred() {
        let p = GpuShareDevicePlugin::new(2);
        // GPU 0 has 300 free units, GPU 1 has 1000.
        let mut available: Vec<String> = (700..1000).map(|k| device_id(0, k)).collect();
        available.extend((0..1000).map(|k| device_id(1, k)));
        let ids = p.get_preferred_allocation(&available, &[], 200);
        assert!(ids.iter().all(|id| id.starts_with("0-")));
        let ids = p.get_preferred_allocation(&available, &[], 400);
        assert!(ids.iter().all(|id| id.starts_with("1-")));
    }
}
