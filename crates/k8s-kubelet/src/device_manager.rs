//! The kubelet's device manager (upstream `pkg/kubelet/cm/devicemanager/manager.go`): registered
//! device plugins, node capacity from their devices, and per-container device allocation that never
//! gives one device to two pods.
//!
//! Allocation mirrors `ManagerImpl.Allocate` / `allocateContainerResources` / `devicesToAllocate`:
//! containers are served init containers first, then app containers; each asks for
//! `resources.limits[<resource>]` devices of every resource a plugin serves. Devices of a finished
//! (non-restartable) init container are reused by later containers of the same pod; a sidecar
//! (restartable init container) keeps its own. New devices come from the healthy devices no pod
//! holds: the plugin's `GetPreferredAllocation` answer first (when the plugin offers it), then the
//! remaining free devices in ID order (upstream iterates a Go set, i.e. in no fixed order). There is
//! no NUMA topology, so upstream's TopologyManager alignment step never applies.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet;

use k8s_types::core::{Container, Pod};
use k8s_types::deviceplugin::{
    compare_device_ids, ContainerAllocateResponse, DeviceIds, DevicePlugin, DevicePluginError,
    HEALTHY,
};

/// Why a container's devices could not be allocated; the texts are upstream's `devicesToAllocate`
/// errors. The kubelet rejects the pod with `UnexpectedAdmissionError`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeviceAllocationError {
    /// No plugin serves the resource.
    #[error("cannot allocate unregistered device {0}")]
    Unregistered(String),
    /// The plugin has no healthy device at all.
    #[error("no healthy devices present; cannot allocate unhealthy devices {0}")]
    NoHealthyDevices(String),
    /// Fewer free healthy devices than requested.
    #[error("requested number of devices unavailable for {resource}. Requested: {requested}, Available: {available}")]
    Unavailable {
        /// The extended resource, e.g. `nvidia.com/gpu`.
        resource: String,
        /// Devices still needed by the container.
        requested: usize,
        /// Free healthy devices.
        available: usize,
    },
    /// The plugin's `Allocate` failed.
    #[error("{0}")]
    Plugin(#[from] DevicePluginError),
    /// A device is already held by another pod (the manager's own invariant; never expected).
    #[error("device {device} of {resource} is already allocated to pod {owner}")]
    AlreadyAllocated {
        /// Resource name.
        resource: String,
        /// Device ID.
        device: String,
        /// The pod (`namespace/name`) holding it.
        owner: String,
    },
}

/// The devices and `Allocate` answers of one container, by resource name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerDevices {
    /// Device IDs per resource, in ID order.
    pub devices: BTreeMap<String, Vec<String>>,
    /// The plugin's `ContainerAllocateResponse` per resource (upstream
    /// `DeviceRunContainerOptions`: envs, device nodes, annotations for the runtime).
    pub responses: BTreeMap<String, ContainerAllocateResponse>,
}

/// The allocation of one pod, by container name.
pub type PodDevices = BTreeMap<String, ContainerDevices>;

/// The last `ListAndWatch` answer of one plugin, kept as upstream's manager keeps
/// `allDevices`/`healthyDevices` per resource: refreshed when a device's health changes (the only
/// way a plugin's list changes here), so that a node with 8000 GPU-share units does not rebuild
/// the list at every sync. The healthy IDs are runs ([`DevicePlugin::healthy_ids`]): a GPU-share
/// node's 8,000 units are 8 runs, not 8,000 strings.
#[derive(Clone, Debug, Default)]
struct DeviceList {
    /// Number of devices.
    total: i64,
    /// Healthy device IDs, in ID order ([`compare_device_ids`]).
    healthy: DeviceIds,
}

impl DeviceList {
    fn of(plugin: &dyn DevicePlugin) -> DeviceList {
        let (total, healthy) = plugin.healthy_ids();
        DeviceList {
            total: i64::try_from(total).unwrap_or(i64::MAX),
            healthy,
        }
    }
}

/// The device manager: plugins by resource name and which pod holds which device.
pub struct DeviceManager {
    plugins: BTreeMap<String, Box<dyn DevicePlugin>>,
    /// resource -> the plugin's devices as last listed.
    lists: BTreeMap<String, DeviceList>,
    /// resource -> pod key (`namespace/name`) -> the devices it holds (upstream
    /// `allocatedDevices`, kept per pod; no device is held by two pods).
    in_use: BTreeMap<String, BTreeMap<String, DeviceIds>>,
    /// pod key -> per-container allocation.
    pods: BTreeMap<String, PodDevices>,
}

impl std::fmt::Debug for DeviceManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceManager")
            .field("resources", &self.plugins.keys().collect::<Vec<_>>())
            .field("in_use", &self.in_use)
            .finish()
    }
}

/// Devices a container asks for, per resource: `resources.limits` (upstream reads limits only, as
/// extended resources must have requests equal to limits), falling back to `requests` when a resource
/// has no limit.
fn container_device_requests(c: &Container) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for (name, q) in c.resources.requests.iter().chain(&c.resources.limits) {
        // Limits come second and win.
        out.insert(name.clone(), q.value());
    }
    out
}

fn sorted_ids<'a>(ids: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    into_sorted(ids.into_iter().cloned().collect())
}

/// The IDs in ID order without duplicates; a list already in that order is kept as it is.
fn into_sorted(mut v: Vec<String>) -> Vec<String> {
    let increasing = v
        .windows(2)
        .all(|w| compare_device_ids(&w[0], &w[1]) == std::cmp::Ordering::Less);
    if !increasing {
        v.sort_by(|a, b| compare_device_ids(a, b));
        v.dedup();
    }
    v
}

/// Joins device IDs with `,`, writing three or more consecutive GPU-share units
/// `<gpu>-<k>`, `<gpu>-<k+1>`, ... as `<gpu>-<k>..<gpu>-<last>` (a pod holding 460 milli-GPU holds 460
/// devices). Plain IDs (GPU indices, UUIDs) are listed as they are.
pub fn compress_ids(ids: &[String]) -> String {
    // The group as a slice of the ID: nothing is allocated per ID (a pod holds up to 1,000).
    fn unit(id: &str) -> Option<(&str, u64)> {
        let (g, k) = id.rsplit_once('-')?;
        g.parse::<u64>().ok()?;
        Some((g, k.parse().ok()?))
    }
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        if let Some((g, k)) = unit(&ids[i]) {
            while j + 1 < ids.len() && unit(&ids[j + 1]) == Some((g, k + (j + 1 - i) as u64)) {
                j += 1;
            }
        }
        if j >= i + 2 {
            parts.push(format!("{}..{}", ids[i], ids[j]));
        } else {
            parts.extend(ids[i..=j].iter().cloned());
        }
        i = j + 1;
    }
    parts.join(",")
}

/// The inverse of [`compress_ids`] for one comma-separated item: `3-0..3-2` is `3-0, 3-1, 3-2`.
pub fn expand_ids(item: &str) -> Vec<String> {
    if let Some((a, b)) = item.split_once("..") {
        if let (Some((ga, ka)), Some((gb, kb))) = (a.rsplit_once('-'), b.rsplit_once('-')) {
            if let (true, Ok(ka), Ok(kb)) = (ga == gb, ka.parse::<u64>(), kb.parse::<u64>()) {
                if ka <= kb {
                    return (ka..=kb).map(|k| format!("{ga}-{k}")).collect();
                }
            }
        }
    }
    vec![item.to_string()]
}

impl DeviceManager {
    /// Registers the plugins. When two plugins register the same resource name, the later one
    /// replaces the earlier (upstream: a new registration replaces the endpoint).
    pub fn new(plugins: Vec<Box<dyn DevicePlugin>>) -> DeviceManager {
        let mut map = BTreeMap::new();
        for p in plugins {
            map.insert(p.resource_name().to_string(), p);
        }
        let lists = map
            .iter()
            .map(|(name, p)| (name.clone(), DeviceList::of(p.as_ref())))
            .collect();
        DeviceManager {
            plugins: map,
            lists,
            in_use: BTreeMap::new(),
            pods: BTreeMap::new(),
        }
    }

    /// True when a plugin serves `resource`.
    pub fn is_device_plugin_resource(&self, resource: &str) -> bool {
        self.plugins.contains_key(resource)
    }

    /// The served resource names, sorted.
    pub fn resource_names(&self) -> Vec<String> {
        self.plugins.keys().cloned().collect()
    }

    /// Upstream `GetCapacity`: per resource, (all devices, healthy devices).
    pub fn capacity(&self) -> BTreeMap<String, (i64, i64)> {
        self.lists
            .iter()
            .map(|(name, l)| {
                (
                    name.clone(),
                    (l.total, i64::try_from(l.healthy.len()).unwrap_or(i64::MAX)),
                )
            })
            .collect()
    }

    /// The healthy device IDs of a resource, in ID order.
    pub fn healthy_devices(&self, resource: &str) -> Vec<String> {
        self.lists
            .get(resource)
            .map_or_else(Vec::new, |l| l.healthy.to_strings())
    }

    /// Number of devices of `resource` held by pods.
    pub fn allocated_count(&self, resource: &str) -> usize {
        self.in_use
            .get(resource)
            .map_or(0, |held| held.values().map(DeviceIds::len).sum())
    }

    /// Which pod (`namespace/name`) holds each device of `resource`.
    pub fn holders(&self, resource: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for (pod, ids) in self.in_use.get(resource).into_iter().flatten() {
            for id in ids.iter() {
                out.insert(id.into_owned(), pod.clone());
            }
        }
        out
    }

    /// Marks a device healthy or unhealthy in every plugin that has it. Returns true when some
    /// plugin lists the device.
    pub fn set_health(&mut self, device_id: &str, healthy: bool) -> bool {
        let mut found = false;
        for (name, p) in &mut self.plugins {
            if p.list_and_watch().iter().any(|d| d.id == device_id) {
                p.set_health(device_id, healthy);
                self.lists.insert(name.clone(), DeviceList::of(p.as_ref()));
                found = true;
            }
        }
        found
    }

    /// Every plugin starts again (after the machine booted): each lists all its devices Healthy,
    /// as a freshly started device plugin does until its health check sees a new error.
    pub fn restart_plugins(&mut self) {
        for (name, p) in &mut self.plugins {
            for d in p.list_and_watch() {
                if d.health != HEALTHY {
                    p.set_health(&d.id, true);
                }
            }
            self.lists.insert(name.clone(), DeviceList::of(p.as_ref()));
        }
    }

    /// Whether a device is healthy, in the first plugin (resource-name order) that lists it;
    /// `None` when none does.
    pub fn is_healthy(&self, device_id: &str) -> Option<bool> {
        self.plugins.values().find_map(|p| {
            p.list_and_watch()
                .into_iter()
                .find(|d| d.id == device_id)
                .map(|d| d.health == HEALTHY)
        })
    }

    /// The plugins' feature-discovery node labels, merged in resource-name order.
    pub fn feature_labels(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for p in self.plugins.values() {
            out.extend(p.feature_labels());
        }
        out
    }

    /// The allocation of a pod, if it holds devices.
    pub fn pod_devices(&self, pod_key: &str) -> Option<&PodDevices> {
        self.pods.get(pod_key)
    }

    /// Device IDs per resource over all containers of a pod, each list in ID order.
    pub fn pod_resource_devices(&self, pod_key: &str) -> BTreeMap<String, Vec<String>> {
        let mut per_resource: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        if let Some(pd) = self.pods.get(pod_key) {
            for cd in pd.values() {
                for (res, ids) in &cd.devices {
                    per_resource
                        .entry(res.clone())
                        .or_default()
                        .extend(ids.iter().cloned());
                }
            }
        }
        per_resource
            .into_iter()
            .map(|(r, ids)| (r, sorted_ids(&ids)))
            .collect()
    }

    /// The value of `ALLOCATED_DEVICES_ANNOTATION` for a pod: `nvidia.com/gpu=0,1`, several resources
    /// joined by `;` in name order; `None` when the pod holds no device.
    pub fn annotation_value(&self, pod_key: &str) -> Option<String> {
        // The usual pod has one container holding each resource: its IDs are already in ID order
        // and distinct (`ContainerDevices::devices`), so they are used as they are; several
        // containers' IDs are merged as `pod_resource_devices` does.
        let pd = self.pods.get(pod_key)?;
        let mut per: BTreeMap<&str, Vec<&[String]>> = BTreeMap::new();
        for cd in pd.values() {
            for (res, ids) in &cd.devices {
                per.entry(res).or_default().push(ids);
            }
        }
        let parts: Vec<String> = per
            .into_iter()
            .map(|(r, lists)| match lists.as_slice() {
                [one] => format!("{r}={}", compress_ids(one)),
                _ => format!("{r}={}", compress_ids(&sorted_ids(lists.concat().iter()))),
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(";"))
    }

    /// Allocates devices for every container of `pod` (upstream resource allocator admit handler:
    /// `Allocate` for each init container, then each app container). All or nothing: on an error
    /// every device this call took is released. A pod that already holds an allocation keeps it.
    /// `prefer` lists device IDs per resource the pod should get back when free (a pod adopted
    /// from the apiserver with its devices recorded), like upstream's checkpoint restore.
    ///
    /// # Errors
    /// A [`DeviceAllocationError`] from the first container that cannot be served.
    pub fn allocate_pod(
        &mut self,
        pod_key: &str,
        pod: &Pod,
        prefer: &BTreeMap<String, Vec<String>>,
    ) -> Result<(), DeviceAllocationError> {
        if self.pods.contains_key(pod_key) {
            return Ok(());
        }
        let mut reusable: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut prefer = prefer.clone();
        let mut result: PodDevices = BTreeMap::new();
        let containers = pod
            .spec
            .init_containers
            .iter()
            .map(|c| (c, true))
            .chain(pod.spec.containers.iter().map(|c| (c, false)));
        for (c, is_init) in containers {
            match self.allocate_container(pod_key, pod, c, &mut reusable, &mut prefer) {
                Ok(cd) => {
                    let restartable = c.restart_policy.as_deref() == Some("Always");
                    for (res, ids) in &cd.devices {
                        let pool = reusable.entry(res.clone()).or_default();
                        if is_init && !restartable {
                            pool.extend(ids.iter().cloned());
                        } else {
                            for id in ids {
                                pool.remove(id);
                            }
                        }
                    }
                    if !cd.devices.is_empty() {
                        result.insert(c.name.clone(), cd);
                    }
                }
                Err(e) => {
                    self.release_holder(pod_key);
                    return Err(e);
                }
            }
        }
        if !result.is_empty() {
            self.pods.insert(pod_key.to_string(), result);
        }
        Ok(())
    }

    /// Upstream `allocateContainerResources` for one container.
    fn allocate_container(
        &mut self,
        pod_key: &str,
        pod: &Pod,
        c: &Container,
        reusable: &mut BTreeMap<String, BTreeSet<String>>,
        prefer: &mut BTreeMap<String, Vec<String>>,
    ) -> Result<ContainerDevices, DeviceAllocationError> {
        let mut cd = ContainerDevices::default();
        for (resource, needed) in container_device_requests(c) {
            if needed <= 0 || !self.is_device_plugin_resource(&resource) {
                continue;
            }
            let needed = usize::try_from(needed).unwrap_or(usize::MAX);
            let empty = BTreeSet::new();
            let reuse = reusable.get(&resource).unwrap_or(&empty).clone();
            let preferred = prefer.remove(&resource).unwrap_or_default();
            let ids =
                self.devices_to_allocate(pod_key, pod, &resource, needed, &reuse, &preferred)?;
            let plugin = self
                .plugins
                .get_mut(&resource)
                .ok_or_else(|| DeviceAllocationError::Unregistered(resource.clone()))?;
            let response = plugin.allocate(&ids)?;
            cd.devices.insert(resource.clone(), ids);
            cd.responses.insert(resource, response);
        }
        Ok(cd)
    }

    /// Upstream `devicesToAllocate`: reuse first, then the plugin's preferred devices among the
    /// free healthy ones, then the remaining free ones in ID order. Marks the result as held by
    /// `pod_key`.
    fn devices_to_allocate(
        &mut self,
        pod_key: &str,
        pod: &Pod,
        resource: &str,
        required: usize,
        reusable: &BTreeSet<String>,
        adopted: &[String],
    ) -> Result<Vec<String>, DeviceAllocationError> {
        let plugin = self
            .plugins
            .get(resource)
            .ok_or_else(|| DeviceAllocationError::Unregistered(resource.to_string()))?;
        let empty = DeviceIds::default();
        let healthy = self.lists.get(resource).map_or(&empty, |l| &l.healthy);
        if healthy.is_empty() {
            return Err(DeviceAllocationError::NoHealthyDevices(
                resource.to_string(),
            ));
        }
        let mut chosen: Vec<String> = Vec::new();
        for id in sorted_ids(reusable) {
            if chosen.len() == required {
                break;
            }
            chosen.push(id);
        }
        // The free devices: healthy, held by no pod, not reused (runs: a GPU-share node's
        // 8,000 units are a few runs, and every order comes from `healthy`'s).
        let mut available = healthy.clone();
        for ids in self
            .in_use
            .get(resource)
            .into_iter()
            .flat_map(BTreeMap::values)
        {
            available = available.difference(ids);
        }
        if !chosen.is_empty() {
            available = available.difference(&DeviceIds::from_ids(&chosen));
        }
        let free = available.len();
        let needed = required - chosen.len();
        if needed > 0 && free < needed {
            return Err(DeviceAllocationError::Unavailable {
                resource: resource.to_string(),
                requested: needed,
                available: free,
            });
        }
        let mut ids = None;
        if needed > 0 {
            // Devices an adopted pod had before, when still free, then the plugin's preference.
            let mut candidates: Vec<String> = adopted
                .iter()
                .filter(|id| available.contains(id))
                .cloned()
                .collect();
            // The pod-aware form lets a plugin follow the scheduler's recorded device choice
            // (GPU sharing's `alibabacloud.com/gpu-index`); by default it is the upstream call.
            let preferred = if plugin.options().get_preferred_allocation_available {
                plugin.preferred_allocation_from(pod, &available, &chosen, required)
            } else {
                Vec::new()
            };
            // The usual answer: exactly the devices needed, in ID order (so distinct), free,
            // nothing reused or adopted. The loop below would take them all, in this order.
            let whole = (candidates.is_empty() && chosen.is_empty() && preferred.len() == required)
                .then(|| DeviceIds::from_increasing(&preferred))
                .flatten()
                .filter(|set| set.difference(&available).is_empty());
            if let Some(set) = whole {
                chosen = preferred;
                ids = Some(set);
            } else {
                candidates.extend(preferred);
                let mut taken: FxHashSet<String> = chosen.iter().cloned().collect();
                let fallback = available.iter();
                for id in candidates.into_iter().map(Cow::Owned).chain(fallback) {
                    if chosen.len() == required {
                        break;
                    }
                    if available.contains(&id) && !taken.contains(id.as_ref()) {
                        taken.insert(id.to_string());
                        chosen.push(id.into_owned());
                    }
                }
            }
        }
        let (chosen, ids) = match ids {
            // Already in ID order.
            Some(ids) => (chosen, ids),
            None => {
                let chosen = into_sorted(chosen);
                let ids = DeviceIds::from_ids(&chosen);
                (chosen, ids)
            }
        };
        let held = self.in_use.entry(resource.to_string()).or_default();
        for (owner, theirs) in held.iter() {
            if owner == pod_key {
                continue;
            }
            if let Some(device) = ids.first_common(theirs) {
                return Err(DeviceAllocationError::AlreadyAllocated {
                    resource: resource.to_string(),
                    device,
                    owner: owner.clone(),
                });
            }
        }
        let mine = held.entry(pod_key.to_string()).or_default();
        *mine = mine.union(&ids);
        Ok(chosen)
    }

    /// Frees every device a pod holds (upstream `UpdateAllocatedDevices` dropping an inactive pod).
    /// Returns true when it held any.
    pub fn free_pod(&mut self, pod_key: &str) -> bool {
        let had = self.pods.remove(pod_key).is_some();
        self.release_holder(pod_key) || had
    }

    fn release_holder(&mut self, pod_key: &str) -> bool {
        let mut released = false;
        for held in self.in_use.values_mut() {
            released |= held.remove(pod_key).is_some_and(|ids| !ids.is_empty());
        }
        self.in_use.retain(|_, held| !held.is_empty());
        released
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::{ResourceList, ResourceRequirements};
    use k8s_types::deviceplugin::{Device, DevicePluginOptions, UNHEALTHY};
    use k8s_types::Quantity;

    /// A minimal plugin: `n` devices `"0"`.., preferred allocation = highest IDs first (so the test
    /// sees the preference is honoured).
    struct Fake {
        devices: Vec<Device>,
        allocate_calls: Vec<Vec<String>>,
    }

    impl Fake {
        fn boxed(n: usize) -> Box<dyn DevicePlugin> {
            Box::new(Fake {
                devices: (0..n)
                    .map(|i| Device {
                        id: i.to_string(),
                        health: HEALTHY.into(),
                        numa_node: None,
                    })
                    .collect(),
                allocate_calls: Vec::new(),
            })
        }
    }

    /// The fake over these device IDs, all healthy.
    fn fake_with_ids(ids: &[String]) -> Box<dyn DevicePlugin> {
        Box::new(Fake {
            devices: ids
                .iter()
                .map(|id| Device {
                    id: id.clone(),
                    health: HEALTHY.into(),
                    numa_node: None,
                })
                .collect(),
            allocate_calls: Vec::new(),
        })
    }

    impl DevicePlugin for Fake {
        fn resource_name(&self) -> &str {
            "example.com/dev"
        }
        fn options(&self) -> DevicePluginOptions {
            DevicePluginOptions {
                pre_start_required: false,
                get_preferred_allocation_available: true,
            }
        }
        fn list_and_watch(&self) -> Vec<Device> {
            self.devices.clone()
        }
        fn get_preferred_allocation(
            &self,
            available: &[String],
            must_include: &[String],
            size: usize,
        ) -> Vec<String> {
            let mut out = must_include.to_vec();
            let mut rest: Vec<String> = available
                .iter()
                .filter(|a| !out.contains(a))
                .cloned()
                .collect();
            rest.sort_by(|a, b| compare_device_ids(b, a));
            out.extend(rest);
            out.truncate(size.max(must_include.len()));
            out
        }
        fn allocate(
            &mut self,
            ids: &[String],
        ) -> Result<ContainerAllocateResponse, DevicePluginError> {
            self.allocate_calls.push(ids.to_vec());
            let mut r = ContainerAllocateResponse::default();
            r.envs.insert("DEVS".into(), ids.join(","));
            Ok(r)
        }
        fn set_health(&mut self, id: &str, healthy: bool) {
            if let Some(d) = self.devices.iter_mut().find(|d| d.id == id) {
                d.health = if healthy { HEALTHY } else { UNHEALTHY }.into();
            }
        }
    }

    fn container(name: &str, n: i64, restart: Option<&str>) -> Container {
        let mut limits = ResourceList::new();
        limits.insert(
            "example.com/dev".into(),
            Quantity::from_value(n, k8s_types::Format::DecimalSI),
        );
        Container {
            name: name.into(),
            resources: ResourceRequirements {
                requests: Default::default(),
                limits: limits.into(),
                claims: Vec::new(),
            },
            restart_policy: restart.map(str::to_string),
            ..Default::default()
        }
    }

    fn pod(containers: Vec<Container>, init: Vec<Container>) -> Pod {
        let mut p = Pod::default();
        p.spec.containers = containers.into();
        p.spec.init_containers = init;
        p
    }

    #[test]
    fn preferred_devices_are_used_and_never_shared() {
        let mut m = DeviceManager::new(vec![Fake::boxed(4)]);
        let none = BTreeMap::new();
        m.allocate_pod("ns/a", &pod(vec![container("c", 2, None)], vec![]), &none)
            .expect("4 free");
        // The fake prefers the highest IDs.
        assert_eq!(
            m.annotation_value("ns/a").as_deref(),
            Some("example.com/dev=2,3")
        );
        m.allocate_pod("ns/b", &pod(vec![container("c", 2, None)], vec![]), &none)
            .expect("2 free");
        assert_eq!(
            m.annotation_value("ns/b").as_deref(),
            Some("example.com/dev=0,1")
        );
        let err = m
            .allocate_pod("ns/c", &pod(vec![container("c", 1, None)], vec![]), &none)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "requested number of devices unavailable for example.com/dev. Requested: 1, Available: 0"
        );
        assert!(m.pod_devices("ns/c").is_none());
        let holders = m.holders("example.com/dev");
        assert_eq!(holders.len(), 4);
        assert_eq!(holders["0"], "ns/b");
        assert_eq!(holders["3"], "ns/a");
        assert!(m.free_pod("ns/a"));
        assert_eq!(m.allocated_count("example.com/dev"), 2);
    }

    #[test]
    fn init_container_devices_are_reused_and_sidecar_devices_kept() {
        let mut m = DeviceManager::new(vec![Fake::boxed(4)]);
        let none = BTreeMap::new();
        // init (2 devices, finishes) -> app (1 device) reuses one of them; sidecar (1) keeps its own.
        let p = pod(
            vec![container("app", 1, None)],
            vec![
                container("sidecar", 1, Some("Always")),
                container("init", 2, None),
            ],
        );
        m.allocate_pod("ns/p", &p, &none).expect("enough devices");
        let pd = m.pod_devices("ns/p").expect("allocated");
        assert_eq!(pd["sidecar"].devices["example.com/dev"], vec!["3"]);
        assert_eq!(pd["init"].devices["example.com/dev"], vec!["1", "2"]);
        // The app container takes the lowest reusable init device.
        assert_eq!(pd["app"].devices["example.com/dev"], vec!["1"]);
        assert_eq!(m.allocated_count("example.com/dev"), 3);
        assert_eq!(
            m.annotation_value("ns/p").as_deref(),
            Some("example.com/dev=1,2,3")
        );
    }

    #[test]
    fn unhealthy_devices_are_skipped_and_none_healthy_is_an_error() {
        let mut m = DeviceManager::new(vec![Fake::boxed(2)]);
        let none = BTreeMap::new();
        assert!(m.set_health("1", false));
        assert!(!m.set_health("7", false));
        assert_eq!(m.capacity()["example.com/dev"], (2, 1));
        m.allocate_pod("ns/a", &pod(vec![container("c", 1, None)], vec![]), &none)
            .expect("device 0 healthy");
        assert_eq!(
            m.annotation_value("ns/a").as_deref(),
            Some("example.com/dev=0")
        );
        m.set_health("0", false);
        let err = m
            .allocate_pod("ns/b", &pod(vec![container("c", 1, None)], vec![]), &none)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no healthy devices present; cannot allocate unhealthy devices example.com/dev"
        );
    }

    #[test]
    fn shared_units_compress_to_ranges_and_back() {
        let ids: Vec<String> = ["3-0", "3-1", "3-2", "3-7", "4-0", "4-1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(compress_ids(&ids), "3-0..3-2,3-7,4-0,4-1");
        assert_eq!(expand_ids("3-0..3-2"), vec!["3-0", "3-1", "3-2"]);
        assert_eq!(expand_ids("0"), vec!["0"]);
        let gpus: Vec<String> = ["0", "1", "2"].iter().map(|s| s.to_string()).collect();
        assert_eq!(compress_ids(&gpus), "0,1,2");
    }

    #[test]
    fn shared_units_are_allocated_from_what_no_pod_holds() {
        // Two devices shared out in 5 units each (GPU-share's `<gpu>-<k>` form): the manager
        // keeps them as runs, and the fake prefers the highest free units.
        let ids: Vec<String> = (0..2)
            .flat_map(|g| (0..5).map(move |k| format!("{g}-{k}")))
            .collect();
        let mut m = DeviceManager::new(vec![fake_with_ids(&ids)]);
        let none = BTreeMap::new();
        let need = |n| pod(vec![container("c", n, None)], vec![]);
        m.allocate_pod("ns/a", &need(3), &none).expect("10 free");
        assert_eq!(
            m.annotation_value("ns/a").as_deref(),
            Some("example.com/dev=1-2..1-4")
        );
        m.allocate_pod("ns/b", &need(4), &none).expect("7 free");
        assert_eq!(
            m.annotation_value("ns/b").as_deref(),
            Some("example.com/dev=0-3,0-4,1-0,1-1")
        );
        assert_eq!(m.allocated_count("example.com/dev"), 7);
        assert_eq!(m.holders("example.com/dev")["1-0"], "ns/b");
        assert!(m.free_pod("ns/a"));
        assert_eq!(m.allocated_count("example.com/dev"), 4);
        // Free now: 0-0..0-2 and a's 1-2..1-4; the five highest.
        m.allocate_pod("ns/c", &need(5), &none).expect("6 free");
        assert_eq!(
            m.annotation_value("ns/c").as_deref(),
            Some("example.com/dev=0-1,0-2,1-2..1-4")
        );
        let err = m.allocate_pod("ns/d", &need(2), &none).unwrap_err();
        assert_eq!(
            err.to_string(),
            "requested number of devices unavailable for example.com/dev. Requested: 2, Available: 1"
        );
        assert!(!m.free_pod("ns/d"));
        assert_eq!(m.healthy_devices("example.com/dev").len(), 10);
    }

    #[test]
    fn adopted_pods_get_their_recorded_devices_back() {
        let mut m = DeviceManager::new(vec![Fake::boxed(4)]);
        let prefer: BTreeMap<String, Vec<String>> =
            [("example.com/dev".to_string(), vec!["0".to_string()])].into();
        m.allocate_pod("ns/a", &pod(vec![container("c", 2, None)], vec![]), &prefer)
            .expect("free");
        // Device 0 from the record, then the plugin's preference (highest free).
        assert_eq!(
            m.annotation_value("ns/a").as_deref(),
            Some("example.com/dev=0,3")
        );
    }
}
