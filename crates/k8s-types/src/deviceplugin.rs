//! The device plugin contract (upstream `k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1` `api.proto`:
//! `GetDevicePluginOptions`, `ListAndWatch`, `GetPreferredAllocation`, `Allocate`), as an in-process
//! trait. The kubelet's device manager registers plugins, reports their healthy devices as node
//! capacity, and calls `Allocate` with the exact device IDs it picked for a container.

use std::collections::BTreeMap;

use crate::core::Pod;

mod ids;

pub use ids::DeviceIds;

/// Upstream `Healthy` device health.
pub const HEALTHY: &str = "Healthy";
/// Upstream `Unhealthy` device health.
pub const UNHEALTHY: &str = "Unhealthy";

/// Upstream `DevicePluginOptions`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DevicePluginOptions {
    /// The kubelet must call PreStartContainer before starting a container.
    pub pre_start_required: bool,
    /// The plugin implements GetPreferredAllocation.
    pub get_preferred_allocation_available: bool,
}

/// Upstream `Device`: one schedulable unit of the resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Unique within the plugin (for NVIDIA: the GPU index here, a UUID in reality).
    pub id: String,
    /// [`HEALTHY`] or [`UNHEALTHY`].
    pub health: String,
    /// NUMA node, if known.
    pub numa_node: Option<i64>,
}

/// Upstream `ContainerAllocateResponse`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerAllocateResponse {
    /// Environment for the container, e.g. `NVIDIA_VISIBLE_DEVICES=0,1`.
    pub envs: BTreeMap<String, String>,
    /// Device nodes to expose, e.g. `/dev/nvidia0`.
    pub devices: Vec<String>,
    /// Annotations for the runtime.
    pub annotations: BTreeMap<String, String>,
}

/// Device plugin failures.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DevicePluginError {
    /// Allocate named a device the plugin does not have.
    #[error("unknown device {0:?}")]
    UnknownDevice(String),
    /// Allocate named an unhealthy device.
    #[error("device {0:?} is unhealthy")]
    UnhealthyDevice(String),
    /// Allocate refused the request (NVIDIA `ValidateRequest`, e.g. more than one shared replica
    /// with `failRequestsGreaterThanOne`); the text is the plugin's whole error.
    #[error("{0}")]
    InvalidRequest(String),
}

/// A device plugin, registered with the kubelet under [`DevicePlugin::resource_name`].
pub trait DevicePlugin {
    /// The extended resource it serves, e.g. `nvidia.com/gpu` (upstream `RegisterRequest.ResourceName`).
    fn resource_name(&self) -> &str;

    /// Upstream `GetDevicePluginOptions`.
    fn options(&self) -> DevicePluginOptions;

    /// Upstream `ListAndWatch`: the current device list with health (the in-process form returns the
    /// latest snapshot each time it is called).
    fn list_and_watch(&self) -> Vec<Device>;

    /// Upstream `GetPreferredAllocation`: which `size` devices of `available` the plugin prefers,
    /// always including `must_include`.
    fn get_preferred_allocation(
        &self,
        available: &[String],
        must_include: &[String],
        size: usize,
    ) -> Vec<String>;

    /// `GetPreferredAllocation` for a known pod: plugins whose choice depends on the scheduler's
    /// decision recorded on the pod (Alibaba's GPU-share plugin reads the `alibabacloud.com/gpu-index`
    /// annotation, as its upstream reads it from the pod at Allocate) override this. Not part of the
    /// upstream gRPC API (which does not pass the pod). Default: [`DevicePlugin::get_preferred_allocation`].
    fn get_preferred_allocation_for_pod(
        &self,
        _pod: &Pod,
        available: &[String],
        must_include: &[String],
        size: usize,
    ) -> Vec<String> {
        self.get_preferred_allocation(available, must_include, size)
    }

    /// `ListAndWatch`'s answer as the kubelet's device manager keeps it (upstream `allDevices`
    /// and `healthyDevices` per resource): the number of devices and the healthy ones' IDs.
    /// Default: from [`DevicePlugin::list_and_watch`]; a plugin with thousands of devices (GPU
    /// sharing's 1,000 units per GPU) answers in runs without listing them one by one.
    fn healthy_ids(&self) -> (usize, DeviceIds) {
        let devices = self.list_and_watch();
        let healthy = DeviceIds::from_ids(
            devices
                .iter()
                .filter(|d| d.health == HEALTHY)
                .map(|d| d.id.as_str()),
        );
        (devices.len(), healthy)
    }

    /// [`DevicePlugin::get_preferred_allocation_for_pod`] as the device manager calls it: `free`
    /// the free healthy devices other than `must_include` (upstream offers `available ∪
    /// mustInclude`, the free devices in ID order followed by `must_include` here). Default: that
    /// string list, offered to [`DevicePlugin::get_preferred_allocation_for_pod`]; a plugin with
    /// thousands of devices reads the runs instead.
    fn preferred_allocation_from(
        &self,
        pod: &Pod,
        free: &DeviceIds,
        must_include: &[String],
        size: usize,
    ) -> Vec<String> {
        preferred_allocation_of_strings(self, pod, free, must_include, size)
    }

    /// Upstream `Allocate` for one container: prepares the given devices and says how to expose them.
    ///
    /// # Errors
    /// An unknown or unhealthy device.
    fn allocate(
        &mut self,
        device_ids: &[String],
    ) -> Result<ContainerAllocateResponse, DevicePluginError>;

    /// Marks a device healthy or unhealthy (simulates a hardware fault or recovery); unknown IDs are
    /// ignored.
    fn set_health(&mut self, device_id: &str, healthy: bool);

    /// Node labels that the feature-discovery daemon shipped alongside the plugin would publish for
    /// these devices (for NVIDIA: GPU Feature Discovery's `nvidia.com/gpu.present`,
    /// `nvidia.com/gpu.count`, `nvidia.com/gpu.product`). Not part of the upstream device plugin
    /// API; the kubelet adds them to its Node at registration unless the manifest sets them.
    /// Default: none.
    fn feature_labels(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
}

/// [`DevicePlugin::preferred_allocation_from`] through the string form: the free devices in ID
/// order followed by `must_include`, offered to
/// [`DevicePlugin::get_preferred_allocation_for_pod`] (the trait's default, and a plugin's
/// fallback when its run form does not apply).
pub fn preferred_allocation_of_strings<P: DevicePlugin + ?Sized>(
    plugin: &P,
    pod: &Pod,
    free: &DeviceIds,
    must_include: &[String],
    size: usize,
) -> Vec<String> {
    let mut offered = free.to_strings();
    offered.extend(must_include.iter().cloned());
    plugin.get_preferred_allocation_for_pod(pod, &offered, must_include, size)
}

/// Orders device IDs the way a person reads them: two IDs that are both decimal numbers (GPU
/// indices) compare numerically (`"2"` < `"10"`), and so do two IDs made of dash-separated decimal
/// numbers (GPU-share devices `<gpu>-<k>`: `"0-9"` < `"0-10"` < `"1-0"`), or of numbers separated
/// by `:` (MIG devices `<gpu>:<mig>` and replicas `<id>::<n>`: `"0::9"` < `"0::10"` < `"1:0"`, IDs
/// with equal numbers then as text); anything else (e.g.
/// `GPU-<uuid>`) compares as text. Used wherever a list of device IDs reaches output, so the order is
/// deterministic.
///
/// The comparison allocates nothing (it runs for every pair a sort of a node's 8,000 GPU-share
/// IDs compares): the parts are parsed as they are compared.
pub fn compare_device_ids(a: &str, b: &str) -> std::cmp::Ordering {
    // Two canonical units `<gpu>-<k>` (the 8,000 IDs of a GPU-share node): their numbers decide,
    // and equal numbers are equal texts.
    if let (Some(x), Some(y)) = (ids::unit(a), ids::unit(b)) {
        return x.cmp(&y);
    }
    if all_numeric(a) && all_numeric(b) {
        numeric_parts(a)
            .cmp(numeric_parts(b))
            .then_with(|| a.cmp(b))
    } else {
        a.cmp(b)
    }
}

/// Whether every non-empty `-`/`:`-separated part of `id` is a decimal `u64`.
fn all_numeric(id: &str) -> bool {
    id.split(['-', ':'])
        .filter(|p| !p.is_empty())
        .all(|p| p.parse::<u64>().is_ok())
}

/// The numbers of an [`all_numeric`] ID, in order.
fn numeric_parts(id: &str) -> impl Iterator<Item = u64> + '_ {
    id.split(['-', ':'])
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u64>().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_ids_order_numerically_then_as_text() {
        let mut ids = vec!["10", "2", "GPU-b", "0", "GPU-a"];
        ids.sort_by(|a, b| compare_device_ids(a, b));
        assert_eq!(ids, vec!["0", "2", "10", "GPU-a", "GPU-b"]);
        let mut shared = vec!["1-0", "0-10", "0-9"];
        shared.sort_by(|a, b| compare_device_ids(a, b));
        assert_eq!(shared, vec!["0-9", "0-10", "1-0"]);
        let mut replicas = vec!["1:0", "0::10", "0::9", "10::0", "2::0"];
        replicas.sort_by(|a, b| compare_device_ids(a, b));
        assert_eq!(replicas, vec!["0::9", "0::10", "1:0", "2::0", "10::0"]);
    }

    /// The definition the allocation-free comparison replaced: all parts numeric compare as
    /// vectors of numbers (then as text), anything else as text.
    fn reference(a: &str, b: &str) -> std::cmp::Ordering {
        let parts = |id: &str| -> Option<Vec<u64>> {
            id.split(['-', ':'])
                .filter(|p| !p.is_empty())
                .map(|p| p.parse::<u64>().ok())
                .collect()
        };
        match (parts(a), parts(b)) {
            (Some(x), Some(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
            _ => a.cmp(b),
        }
    }

    #[test]
    fn comparison_agrees_with_the_vector_definition_on_every_pair() {
        let ids = [
            "",
            "0",
            "1",
            "2",
            "10",
            "0-0",
            "0-9",
            "0-10",
            "1-0",
            "10-999",
            "0:1",
            "0::1",
            "0::10",
            "1:0",
            "1:0::2",
            "GPU-a",
            "GPU-0",
            "a",
            "-",
            "0-",
            "-0",
            "0--1",
            "x:1",
            "007",
            "7",
            "18446744073709551616",
            "1-18446744073709551616",
        ];
        for a in ids {
            for b in ids {
                assert_eq!(compare_device_ids(a, b), reference(a, b), "{a:?} vs {b:?}");
            }
        }
    }
}
