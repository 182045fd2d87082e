//! The kubelet's side of Dynamic Resource Allocation (upstream `pkg/kubelet/cm/dra/manager.go`
//! `PrepareResources`, and the NVIDIA DRA driver's `NodePrepareResources` with its CDI spec):
//! before a pod's containers are created, every claim of the pod must be allocated and reserved
//! for it; the devices of its claims are then what the driver prepares, and a container that
//! names a claim (`resources.claims`) sees them. The NVIDIA driver's CDI edits make the GPUs
//! visible by UUID: [`container_visible_devices`] is that `NVIDIA_VISIBLE_DEVICES` list, and the
//! pod's devices are recorded, as the device plugin's are, in the annotation
//! `k8s-mini.io/allocated-devices` (`gpu.nvidia.com=gpu-0,gpu-1`; the DEVICES column). Simplified
//! (docs/fidelity.md): no gRPC NodePrepareResources/NodeUnprepareResources calls, no CDI files;
//! a claim not reserved for the pod fails with upstream's wording and the pod waits.

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Pod;
use k8s_types::resource::{ResourceClaim, ResourceSlice};
use k8s_types::Kind;

/// What was prepared for a pod: devices per driver (for the annotation), and the claims by the
/// pod's name for them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prepared {
    /// Driver -> device names, in allocation order.
    pub devices: BTreeMap<String, Vec<String>>,
    /// `spec.resourceClaims[].name` -> the allocated (driver, pool, device) of that claim.
    pub by_claim: BTreeMap<String, Vec<(String, String, String)>>,
}

impl Prepared {
    /// The `k8s-mini.io/allocated-devices` part: `gpu.nvidia.com=gpu-0,gpu-1`.
    pub fn annotation(&self) -> String {
        self.devices
            .iter()
            .map(|(d, ids)| format!("{d}={}", ids.join(",")))
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// Upstream `PrepareResources`: each claim of the pod, resolved as the scheduler does, must be
/// allocated and reserved for the pod (`pod <ns>/<name> (<uid>) is not allowed to use resource
/// claim <ns>/<claim>` otherwise).
///
/// # Errors
/// The reason the pod cannot start yet.
pub fn prepare_resources(api: &dyn ApiClient, pod: &Pod) -> Result<Prepared, String> {
    let mut out = Prepared::default();
    let ns = pod.metadata.namespace();
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    for pc in &pod.spec.resource_claims {
        let Some(name) = pod.resource_claim_name(pc)? else {
            continue;
        };
        let claim: ResourceClaim = api
            .get_typed(ns, &name)
            .map_err(|e| format!("fetch ResourceClaim {ns}/{name}: {}", e.message))?;
        if !claim.is_reserved_for(uid) {
            return Err(format!(
                "pod {ns}/{} ({uid}), is not allowed to use resource claim {ns}/{name}",
                pod.metadata.name
            ));
        }
        let Some(a) = &claim.status.allocation else {
            return Err(format!("claim {ns}/{name}: not allocated"));
        };
        for r in &a.devices.results {
            out.devices
                .entry(r.driver.clone())
                .or_default()
                .push(r.device.clone());
            out.by_claim.entry(pc.name.clone()).or_default().push((
                r.driver.clone(),
                r.pool.clone(),
                r.device.clone(),
            ));
        }
    }
    Ok(out)
}

/// The UUIDs of the NVIDIA GPUs container `container` of `pod` sees (`NVIDIA_VISIBLE_DEVICES` as
/// the driver's CDI spec sets it), from the `uuid` attribute its ResourceSlice publishes; only the
/// claims the container names in `resources.claims` count.
pub fn container_visible_devices(
    api: &dyn ApiClient,
    pod: &Pod,
    prepared: &Prepared,
    container: &str,
) -> Vec<String> {
    let Some(c) = pod
        .spec
        .init_containers
        .iter()
        .chain(&pod.spec.containers)
        .find(|c| c.name == container)
    else {
        return Vec::new();
    };
    let slices: Vec<ResourceSlice> = api
        .list(&Kind::ResourceSlice, None, None)
        .into_iter()
        .filter_map(|o| match o {
            k8s_types::Object::ResourceSlice(s) => Some(*s),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for used in &c.resources.claims {
        for (driver, pool, device) in prepared.by_claim.get(&used.name).into_iter().flatten() {
            let uuid = slices
                .iter()
                .filter(|s| s.spec.driver == *driver && s.spec.pool.name == *pool)
                .flat_map(|s| &s.spec.devices)
                .find(|d| d.name == *device)
                .and_then(|d| d.attributes.get("uuid"))
                .and_then(|a| a.string.clone());
            if let Some(u) = uuid {
                if !out.contains(&u) {
                    out.push(u);
                }
            }
        }
    }
    out
}
