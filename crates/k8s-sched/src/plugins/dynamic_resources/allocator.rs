//! The structured-parameters allocator (upstream `k8s.io/dynamic-resource-allocation/structured`,
//! `internal/stable/allocator_stable.go`, KEP-4381): given the published ResourceSlices, the
//! DeviceClasses, the devices already allocated and a node, find devices for every request of
//! every claim, all or nothing.
//!
//! - Pools: slices are grouped by (driver, pool); only the slices of a pool's newest generation
//!   count; a slice is for the node when its `nodeName` is the node, `allNodes` is true or its
//!   `nodeSelector` matches the node. Devices are tried in (driver, pool, slice name, device
//!   order) order, the deterministic order k8s-mini documents (upstream walks pools in its
//!   pool list's order and devices in slice order, the same for one node-local pool).
//! - A device matches a request when every selector of the request's DeviceClass and every
//!   selector of the request evaluate to true (CEL, [`CelSelector`]); an evaluation error aborts
//!   the allocation with upstream's `class <c>: selector #<i> on device <d>: CEL runtime error:`
//!   or `claim <ns>/<name>: selector #<i> on device <d>: CEL runtime error: ...`.
//! - `ExactCount` asks for `count` distinct free devices; `All` for every matching device of the
//!   node's pools, all of which must be free (none matching: nothing allocated, as upstream);
//!   with `adminAccess` devices are taken whether allocated or not and stay free for others.
//! - The search backtracks over the requests in claim order (upstream's `allocateOne`), so an
//!   earlier request never takes the only device a later one could use while another would do.
//!
//! Not done (docs/fidelity.md): `firstAvailable` sub-requests, constraints (`matchAttribute`,
//! `distinctAttribute`), device taints, partitionable devices and counters, consumable capacity,
//! binding conditions, and the copy of class/claim config into the allocation result.

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::core::{Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};
use k8s_types::resource::cel::CelSelector;
use k8s_types::resource::{
    AllocationResult, Device, DeviceAllocationResult, DeviceClass, DeviceRequestAllocationResult,
    ResourceClaim, ResourceSlice, ALLOCATION_MODE_ALL,
};

/// A device's identity: (driver, pool, device).
pub type DeviceId = (String, String, String);

/// The most search steps one allocation may take before giving up on the node (upstream has no
/// step limit but a filter timeout; a limit keeps k8s-mini deterministic).
pub const MAX_STEPS: usize = 100_000;

/// A compiled selector list (upstream's CEL cache), by the text it came from.
struct Selectors(Vec<Result<CelSelector, String>>);

impl Selectors {
    fn compile(list: &[k8s_types::resource::DeviceSelector]) -> Selectors {
        Selectors(
            list.iter()
                .map(|s| match &s.cel {
                    Some(c) => CelSelector::compile(&c.expression),
                    None => Err("CEL expression empty (unsupported selector type?)".into()),
                })
                .collect(),
        )
    }
}

/// One device a request may take.
#[derive(Clone)]
struct Candidate<'a> {
    id: DeviceId,
    device: &'a Device,
}

/// The allocator of one scheduling attempt (upstream `structured.NewAllocator`).
pub struct Allocator {
    classes: BTreeMap<String, (DeviceClass, Selectors)>,
    /// The slices of each pool's newest generation, sorted by (driver, pool, name).
    slices: Vec<ResourceSlice>,
    allocated: BTreeSet<DeviceId>,
    /// Per claim (in the order given to [`Allocator::new`]), per request: compiled selectors.
    claim_selectors: Vec<Vec<Selectors>>,
}

impl std::fmt::Debug for Allocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Allocator")
            .field("slices", &self.slices.len())
            .field("allocated", &self.allocated.len())
            .finish_non_exhaustive()
    }
}

/// Whether a slice's devices are reachable from `node`.
fn slice_targets(slice: &ResourceSlice, node: &Node) -> bool {
    let s = &slice.spec;
    if let Some(n) = &s.node_name {
        return *n == node.metadata.name;
    }
    if s.all_nodes == Some(true) {
        return true;
    }
    if let Some(sel) = &s.node_selector {
        return sel.matches(&node.metadata.name, &node.metadata.labels);
    }
    false
}

/// Upstream `createNodeSelector` for node-local devices: the node by `metadata.name`; none when
/// every device is reachable from all nodes.
fn node_selector_for(node: &str, local: bool) -> Option<NodeSelector> {
    local.then(|| NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_expressions: Vec::new(),
            match_fields: vec![NodeSelectorRequirement {
                key: "metadata.name".into(),
                operator: "In".into(),
                values: vec![node.to_string()],
            }],
        }],
    })
}

/// One device slot to fill: a request of a claim.
struct Slot<'a> {
    claim: usize,
    request: String,
    admin: bool,
    candidates: Vec<Candidate<'a>>,
    /// `All`: every candidate, fixed.
    all: bool,
    count: usize,
}

impl Allocator {
    /// Groups the slices into pools (newest generation only) and compiles the selectors of the
    /// classes and of `claims`' requests.
    pub fn new(
        classes: Vec<DeviceClass>,
        slices: Vec<ResourceSlice>,
        allocated: BTreeSet<DeviceId>,
        claims: &[ResourceClaim],
    ) -> Allocator {
        let mut newest: BTreeMap<(String, String), i64> = BTreeMap::new();
        for s in &slices {
            let key = (s.spec.driver.clone(), s.spec.pool.name.clone());
            let g = newest.entry(key).or_insert(s.spec.pool.generation);
            *g = (*g).max(s.spec.pool.generation);
        }
        let mut slices: Vec<ResourceSlice> = slices
            .into_iter()
            .filter(|s| {
                newest.get(&(s.spec.driver.clone(), s.spec.pool.name.clone()))
                    == Some(&s.spec.pool.generation)
            })
            .collect();
        slices.sort_by(|a, b| {
            (&a.spec.driver, &a.spec.pool.name, &a.metadata.name).cmp(&(
                &b.spec.driver,
                &b.spec.pool.name,
                &b.metadata.name,
            ))
        });
        let classes = classes
            .into_iter()
            .map(|c| {
                let sel = Selectors::compile(&c.spec.selectors);
                (c.metadata.name.clone(), (c, sel))
            })
            .collect();
        let claim_selectors = claims
            .iter()
            .map(|c| {
                c.spec
                    .devices
                    .requests
                    .iter()
                    .map(|r| {
                        Selectors::compile(r.exactly.as_ref().map_or(&[][..], |e| &e.selectors))
                    })
                    .collect()
            })
            .collect();
        Allocator {
            classes,
            slices,
            allocated,
            claim_selectors,
        }
    }

    /// Whether the class exists.
    pub fn has_class(&self, name: &str) -> bool {
        self.classes.contains_key(name)
    }

    fn matches(
        &self,
        claim: &ResourceClaim,
        claim_index: usize,
        request_index: usize,
        class: &str,
        cand: &Candidate<'_>,
    ) -> Result<bool, String> {
        let device_name = format!("{}/{}/{}", cand.id.0, cand.id.1, cand.id.2);
        let (_, class_sel) = self
            .classes
            .get(class)
            .ok_or_else(|| format!("could not retrieve device class {class}"))?;
        for (i, sel) in class_sel.0.iter().enumerate() {
            let sel = sel
                .as_ref()
                .map_err(|e| format!("class {class}: selector #{i}: CEL compile error: {e}"))?;
            match sel.device_matches(&cand.id.0, cand.device) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => {
                    return Err(format!(
                    "class {class}: selector #{i} on device {device_name}: CEL runtime error: {e}"
                ))
                }
            }
        }
        let claim_key = format!("{}/{}", claim.metadata.namespace(), claim.metadata.name);
        let sels = &self.claim_selectors[claim_index][request_index];
        for (i, sel) in sels.0.iter().enumerate() {
            let sel = sel
                .as_ref()
                .map_err(|e| format!("claim {claim_key}: selector #{i}: CEL compile error: {e}"))?;
            match sel.device_matches(&cand.id.0, cand.device) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => {
                    return Err(format!(
                        "claim {claim_key}: selector #{i} on device {device_name}: CEL runtime error: {e}"
                    ))
                }
            }
        }
        Ok(true)
    }

    /// Allocates every claim for `node` (upstream `Allocator.Allocate`): one result per claim, in
    /// order, or `Ok(None)` when the node cannot satisfy them all; `extra_allocated` are devices
    /// in flight (reserved by other pods, not yet written). `now` is the allocation timestamp.
    pub fn allocate(
        &self,
        node: &Node,
        claims: &[ResourceClaim],
        extra_allocated: &BTreeSet<DeviceId>,
    ) -> Result<Option<Vec<AllocationResult>>, String> {
        let devices: Vec<Candidate<'_>> = self
            .slices
            .iter()
            .filter(|s| slice_targets(s, node))
            .flat_map(|s| {
                s.spec.devices.iter().map(move |d| Candidate {
                    id: (
                        s.spec.driver.clone(),
                        s.spec.pool.name.clone(),
                        d.name.clone(),
                    ),
                    device: d,
                })
            })
            .collect();
        let local: BTreeSet<DeviceId> = self
            .slices
            .iter()
            .filter(|s| s.spec.node_name.is_some() && slice_targets(s, node))
            .flat_map(|s| {
                s.spec.devices.iter().map(move |d| {
                    (
                        s.spec.driver.clone(),
                        s.spec.pool.name.clone(),
                        d.name.clone(),
                    )
                })
            })
            .collect();
        let mut slots = Vec::new();
        for (ci, claim) in claims.iter().enumerate() {
            for (ri, request) in claim.spec.devices.requests.iter().enumerate() {
                let Some(exact) = &request.exactly else {
                    return Err(format!(
                        "claim {}/{}, request {}: firstAvailable is not supported by k8s-mini's allocator",
                        claim.metadata.namespace(),
                        claim.metadata.name,
                        request.name
                    ));
                };
                let mut candidates = Vec::new();
                for cand in &devices {
                    if self.matches(claim, ci, ri, &exact.device_class_name, cand)? {
                        candidates.push(cand.clone());
                    }
                }
                let all = exact.mode() == ALLOCATION_MODE_ALL;
                let count = if all {
                    candidates.len()
                } else {
                    usize::try_from(exact.count()).unwrap_or(usize::MAX)
                };
                slots.push(Slot {
                    claim: ci,
                    request: request.name.clone(),
                    admin: exact.admin_access == Some(true),
                    candidates,
                    all,
                    count,
                });
            }
        }
        let mut used: BTreeSet<DeviceId> = BTreeSet::new();
        let mut chosen: Vec<Vec<usize>> = slots.iter().map(|_| Vec::new()).collect();
        let mut steps = 0usize;
        let busy = |id: &DeviceId, used: &BTreeSet<DeviceId>| {
            self.allocated.contains(id) || extra_allocated.contains(id) || used.contains(id)
        };
        if !search(&slots, 0, &mut used, &mut chosen, &mut steps, &busy) {
            return Ok(None);
        }
        let mut results: Vec<AllocationResult> =
            claims.iter().map(|_| AllocationResult::default()).collect();
        let mut all_local: Vec<bool> = claims.iter().map(|_| true).collect();
        for (slot, picks) in slots.iter().zip(&chosen) {
            for &i in picks {
                let c = &slot.candidates[i];
                all_local[slot.claim] &= local.contains(&c.id);
                results[slot.claim]
                    .devices
                    .results
                    .push(DeviceRequestAllocationResult {
                        request: slot.request.clone(),
                        driver: c.id.0.clone(),
                        pool: c.id.1.clone(),
                        device: c.id.2.clone(),
                        admin_access: slot.admin.then_some(true),
                        other: BTreeMap::new(),
                    });
            }
        }
        for (r, local) in results.iter_mut().zip(all_local) {
            let any = !r.devices.results.is_empty();
            r.node_selector = node_selector_for(&node.metadata.name, local && any);
            r.devices = DeviceAllocationResult {
                results: std::mem::take(&mut r.devices.results),
                config: Vec::new(),
            };
        }
        Ok(Some(results))
    }
}

/// Fills `slots[s..]` (upstream `allocateOne`): an `All` slot takes every candidate (all must be
/// free unless admin access); an `ExactCount` slot tries candidates in order, backtracking.
fn search(
    slots: &[Slot<'_>],
    s: usize,
    used: &mut BTreeSet<DeviceId>,
    chosen: &mut Vec<Vec<usize>>,
    steps: &mut usize,
    busy: &dyn Fn(&DeviceId, &BTreeSet<DeviceId>) -> bool,
) -> bool {
    let Some(slot) = slots.get(s) else {
        return true;
    };
    *steps += 1;
    if *steps > MAX_STEPS {
        return false;
    }
    if slot.all {
        if !slot.admin && slot.candidates.iter().any(|c| busy(&c.id, used)) {
            return false;
        }
        let idx: Vec<usize> = (0..slot.candidates.len()).collect();
        if !slot.admin {
            used.extend(slot.candidates.iter().map(|c| c.id.clone()));
        }
        chosen[s] = idx;
        if search(slots, s + 1, used, chosen, steps, busy) {
            return true;
        }
        if !slot.admin {
            for c in &slot.candidates {
                used.remove(&c.id);
            }
        }
        chosen[s].clear();
        return false;
    }
    pick(slots, s, 0, used, chosen, steps, busy)
}

/// Picks the next device of an `ExactCount` slot from candidate `from` on.
fn pick(
    slots: &[Slot<'_>],
    s: usize,
    from: usize,
    used: &mut BTreeSet<DeviceId>,
    chosen: &mut Vec<Vec<usize>>,
    steps: &mut usize,
    busy: &dyn Fn(&DeviceId, &BTreeSet<DeviceId>) -> bool,
) -> bool {
    let slot = &slots[s];
    if chosen[s].len() == slot.count {
        return search(slots, s + 1, used, chosen, steps, busy);
    }
    for i in from..slot.candidates.len() {
        *steps += 1;
        if *steps > MAX_STEPS {
            return false;
        }
        let id = &slot.candidates[i].id;
        if slot.admin {
            if chosen[s].contains(&i) {
                continue;
            }
        } else if busy(id, used) {
            continue;
        }
        chosen[s].push(i);
        if !slot.admin {
            used.insert(id.clone());
        }
        if pick(slots, s, i + 1, used, chosen, steps, busy) {
            return true;
        }
        chosen[s].pop();
        if !slot.admin {
            used.remove(id);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::resource::{
        CelDeviceSelector, DeviceAttribute, DeviceRequest, DeviceSelector, ExactDeviceRequest,
        ResourcePool, ResourceSliceSpec,
    };

    fn device(name: &str, product: &str) -> Device {
        let mut d = Device {
            name: name.into(),
            ..Device::default()
        };
        d.attributes
            .insert("productName".into(), DeviceAttribute::string(product));
        d
    }

    fn slice(node: &str, generation: i64, devices: Vec<Device>) -> ResourceSlice {
        ResourceSlice {
            metadata: k8s_types::meta::ObjectMeta {
                name: format!("{node}-gpu.nvidia.com-{generation}"),
                ..Default::default()
            },
            spec: ResourceSliceSpec {
                driver: "gpu.nvidia.com".into(),
                pool: ResourcePool {
                    name: node.into(),
                    generation,
                    resource_slice_count: 1,
                },
                node_name: Some(node.into()),
                devices,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn class() -> DeviceClass {
        let mut c = DeviceClass::default();
        c.metadata.name = "gpu.nvidia.com".into();
        c.spec.selectors = vec![sel("device.driver == 'gpu.nvidia.com'")];
        c
    }

    fn sel(e: &str) -> DeviceSelector {
        DeviceSelector {
            cel: Some(CelDeviceSelector {
                expression: e.into(),
            }),
        }
    }

    fn request(name: &str, mode: &str, count: i64, selectors: &[&str]) -> DeviceRequest {
        DeviceRequest {
            name: name.into(),
            exactly: Some(ExactDeviceRequest {
                device_class_name: "gpu.nvidia.com".into(),
                selectors: selectors.iter().map(|s| sel(s)).collect(),
                allocation_mode: Some(mode.into()),
                count: (mode == "ExactCount").then_some(count),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn claim(name: &str, requests: Vec<DeviceRequest>) -> ResourceClaim {
        let mut c = ResourceClaim::default();
        c.metadata.name = name.into();
        c.metadata.namespace = Some("default".into());
        c.spec.devices.requests = requests;
        c
    }

    fn node(name: &str) -> Node {
        let mut n = Node::default();
        n.metadata.name = name.into();
        n
    }

    fn devices(r: &AllocationResult) -> Vec<String> {
        r.devices
            .results
            .iter()
            .map(|d| format!("{}:{}", d.request, d.device))
            .collect()
    }

    const H100: &str = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100'";

    /// gpu-0 is the node's only H100, gpu-1 an A100. Request `any` (no selector) comes first:
    /// taking gpu-0 would leave `h100` nothing, so the search backtracks: any -> gpu-1,
    /// h100 -> gpu-0 (worked out by hand, as upstream's allocateOne would).
    #[test]
    fn the_search_backtracks_so_a_later_request_gets_the_only_device_it_can_use() {
        let slices = vec![slice(
            "n1",
            1,
            vec![
                device("gpu-0", "NVIDIA H100"),
                device("gpu-1", "NVIDIA A100"),
            ],
        )];
        let c = claim(
            "c",
            vec![
                request("any", "ExactCount", 1, &[]),
                request("h100", "ExactCount", 1, &[H100]),
            ],
        );
        let a = Allocator::new(
            vec![class()],
            slices,
            BTreeSet::new(),
            std::slice::from_ref(&c),
        );
        let r = a
            .allocate(&node("n1"), &[c], &BTreeSet::new())
            .unwrap()
            .unwrap();
        assert_eq!(devices(&r[0]), ["any:gpu-1", "h100:gpu-0"]);
        // The node selector pins the node-local devices to n1.
        let sel = r[0].node_selector.as_ref().unwrap();
        assert_eq!(sel.node_selector_terms[0].match_fields[0].values, ["n1"]);
        // Another node has no slice: nothing fits.
        let c2 = claim("c", vec![request("any", "ExactCount", 1, &[])]);
        let a = Allocator::new(
            vec![class()],
            vec![],
            BTreeSet::new(),
            std::slice::from_ref(&c2),
        );
        assert_eq!(a.allocate(&node("n2"), &[c2], &BTreeSet::new()), Ok(None));
    }

    /// `All` takes every matching device (3 H100s of 4 GPUs), and none when one of them is
    /// allocated; admin access takes an allocated device anyway.
    #[test]
    fn all_mode_needs_every_matching_device_free_and_admin_access_ignores_allocations() {
        let slices = vec![slice(
            "n1",
            1,
            vec![
                device("gpu-0", "NVIDIA H100"),
                device("gpu-1", "NVIDIA A100"),
                device("gpu-2", "NVIDIA H100"),
                device("gpu-3", "NVIDIA H100"),
            ],
        )];
        let c = claim("all", vec![request("h100s", "All", 0, &[H100])]);
        let free = Allocator::new(
            vec![class()],
            slices.clone(),
            BTreeSet::new(),
            std::slice::from_ref(&c),
        );
        let r = free
            .allocate(&node("n1"), std::slice::from_ref(&c), &BTreeSet::new())
            .unwrap()
            .unwrap();
        assert_eq!(
            devices(&r[0]),
            ["h100s:gpu-0", "h100s:gpu-2", "h100s:gpu-3"]
        );
        let taken: BTreeSet<DeviceId> =
            [("gpu.nvidia.com".into(), "n1".into(), "gpu-2".into())].into();
        let busy = Allocator::new(
            vec![class()],
            slices.clone(),
            taken.clone(),
            std::slice::from_ref(&c),
        );
        assert_eq!(busy.allocate(&node("n1"), &[c], &BTreeSet::new()), Ok(None));
        // In flight counts as taken too.
        let c = claim("one", vec![request("gpu", "ExactCount", 1, &[H100])]);
        let a = Allocator::new(
            vec![class()],
            slices.clone(),
            BTreeSet::new(),
            std::slice::from_ref(&c),
        );
        let r = a.allocate(&node("n1"), &[c], &taken).unwrap().unwrap();
        assert_eq!(devices(&r[0]), ["gpu:gpu-0"]);
        let mut admin = request(
            "debug",
            "ExactCount",
            1,
            &["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100'"],
        );
        admin.exactly.as_mut().unwrap().admin_access = Some(true);
        let c = claim("admin", vec![admin]);
        let all_taken: BTreeSet<DeviceId> =
            [("gpu.nvidia.com".into(), "n1".into(), "gpu-1".into())].into();
        let a = Allocator::new(vec![class()], slices, all_taken, std::slice::from_ref(&c));
        let r = a
            .allocate(&node("n1"), &[c], &BTreeSet::new())
            .unwrap()
            .unwrap();
        assert_eq!(devices(&r[0]), ["debug:gpu-1"]);
        assert_eq!(r[0].devices.results[0].admin_access, Some(true));
    }

    /// Only the newest generation of a pool counts; a selector that fails to evaluate is an
    /// error naming the claim, the selector and the device, as upstream words it.
    #[test]
    fn old_pool_generations_are_ignored_and_cel_errors_are_reported() {
        let slices = vec![
            slice(
                "n1",
                1,
                vec![
                    device("gpu-0", "NVIDIA H100"),
                    device("gpu-1", "NVIDIA H100"),
                ],
            ),
            slice("n1", 2, vec![device("gpu-1", "NVIDIA H100")]),
        ];
        let c = claim("two", vec![request("gpus", "ExactCount", 2, &[])]);
        let a = Allocator::new(
            vec![class()],
            slices.clone(),
            BTreeSet::new(),
            std::slice::from_ref(&c),
        );
        assert_eq!(a.allocate(&node("n1"), &[c], &BTreeSet::new()), Ok(None));
        let c = claim(
            "bad",
            vec![request(
                "gpu",
                "ExactCount",
                1,
                &["device.attributes['gpu.nvidia.com'].memory > 1"],
            )],
        );
        let a = Allocator::new(
            vec![class()],
            slices,
            BTreeSet::new(),
            std::slice::from_ref(&c),
        );
        let e = a.allocate(&node("n1"), &[c], &BTreeSet::new()).unwrap_err();
        assert!(
            e.starts_with("claim default/bad: selector #0 on device gpu.nvidia.com/n1/gpu-1: CEL runtime error: "),
            "{e}"
        );
    }
}
