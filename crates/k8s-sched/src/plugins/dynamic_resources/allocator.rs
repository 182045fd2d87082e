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
//! - `firstAvailable` (KEP-4816, `DRAPrioritizedList`, beta and on since v1.34): the
//!   sub-requests are alternatives tried in the order given, inside the same backtracking search
//!   (upstream `allocator_incubating.go` `allocateOne` moves on to the next sub-request when the
//!   rest of the claims cannot be satisfied with this one); a result names the request
//!   `<request>/<subrequest>`.
//! - `constraints[].matchAttribute` (upstream `matchAttributeConstraint`): every device allocated
//!   for the requests the constraint names (all requests of the claim when it names none; a
//!   sub-request matches by `<request>` or `<request>/<subrequest>`) must have the attribute, with
//!   equal values; the attribute is looked up by its full name, then, when its domain is the
//!   device's driver, by its short name (`lookupAttribute`).
//!
//! Not done (docs/fidelity.md): `distinctAttribute` (alpha `DRAConsumableCapacity`), device
//! taints, partitionable devices and counters (alpha `DRAPartitionableDevices` until v1.36),
//! consumable capacity, binding conditions, the scoring of nodes by the sub-request they
//! satisfy, and the copy of class/claim config into the allocation result.

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::core::{Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};
use k8s_types::resource::cel::CelSelector;
use k8s_types::resource::{
    AllocationResult, Device, DeviceAllocationResult, DeviceAttribute, DeviceClass,
    DeviceRequestAllocationResult, ResourceClaim, ResourceSlice, ALLOCATION_MODE_ALL,
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
    /// Per claim (in the order given to [`Allocator::new`]), per request, per alternative (one
    /// for `exactly`, one per `firstAvailable` entry): compiled selectors.
    claim_selectors: Vec<Vec<Vec<Selectors>>>,
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

/// One alternative of a request: `exactly`, or one `firstAvailable` entry.
struct Alt<'a> {
    /// The sub-request's name (`None` for `exactly`).
    sub: Option<String>,
    admin: bool,
    candidates: Vec<Candidate<'a>>,
    /// `All`: every candidate, fixed.
    all: bool,
    count: usize,
}

/// One request of a claim to satisfy with one of its alternatives.
struct Slot<'a> {
    claim: usize,
    request: String,
    alts: Vec<Alt<'a>>,
}

/// A `matchAttribute` constraint of a claim while the search runs (upstream
/// `matchAttributeConstraint`): the value the devices taken so far share, and how many there are.
struct MatchAttribute {
    requests: Vec<String>,
    attribute: String,
    value: Option<DeviceAttribute>,
    devices: usize,
}

impl MatchAttribute {
    /// Whether the constraint covers `request` (and its sub-request `sub`).
    fn applies(&self, request: &str, sub: Option<&str>) -> bool {
        self.requests.is_empty()
            || self.requests.iter().any(|r| {
                r == request || sub.is_some_and(|s| r.split_once('/') == Some((request, s)))
            })
    }
}

/// Upstream `lookupAttribute`: by the fully qualified name, else by the name without the domain
/// when the domain is the device's driver.
fn lookup_attribute<'d>(
    device: &'d Device,
    driver: &str,
    name: &str,
) -> Option<&'d DeviceAttribute> {
    if let Some(a) = device.attributes.get(name) {
        return Some(a);
    }
    let (domain, id) = name.split_once('/')?;
    if domain != driver {
        return None;
    }
    device.attributes.get(id)
}

/// The mutable state of one search.
struct Search<'s, 'a> {
    slots: &'s [Slot<'a>],
    used: BTreeSet<DeviceId>,
    /// Per slot: the alternative taken and the candidates picked.
    chosen: Vec<(usize, Vec<usize>)>,
    /// Per claim: its `matchAttribute` constraints.
    constraints: Vec<Vec<MatchAttribute>>,
    steps: usize,
    busy: &'s dyn Fn(&DeviceId, &BTreeSet<DeviceId>) -> bool,
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
                    .map(|r| match &r.exactly {
                        Some(e) => vec![Selectors::compile(&e.selectors)],
                        None => r
                            .first_available
                            .iter()
                            .map(|sub| Selectors::compile(&sub.selectors))
                            .collect(),
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
        alt_index: usize,
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
        let sels = &self.claim_selectors[claim_index][request_index][alt_index];
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
                // (sub-request name, class, mode, count, admin access) per alternative.
                let specs: Vec<(Option<&str>, &str, &str, i64, bool)> = match &request.exactly {
                    Some(e) => vec![(
                        None,
                        e.device_class_name.as_str(),
                        e.mode(),
                        e.count(),
                        e.admin_access == Some(true),
                    )],
                    None => request
                        .first_available
                        .iter()
                        .map(|sub| {
                            (
                                Some(sub.name.as_str()),
                                sub.device_class_name.as_str(),
                                sub.mode(),
                                sub.count(),
                                false,
                            )
                        })
                        .collect(),
                };
                let mut alts = Vec::new();
                for (ai, (sub, class, mode, count, admin)) in specs.into_iter().enumerate() {
                    let mut candidates = Vec::new();
                    for cand in &devices {
                        if self.matches(claim, ci, ri, ai, class, cand)? {
                            candidates.push(cand.clone());
                        }
                    }
                    let all = mode == ALLOCATION_MODE_ALL;
                    let count = if all {
                        candidates.len()
                    } else {
                        usize::try_from(count).unwrap_or(usize::MAX)
                    };
                    alts.push(Alt {
                        sub: sub.map(str::to_string),
                        admin,
                        candidates,
                        all,
                        count,
                    });
                }
                slots.push(Slot {
                    claim: ci,
                    request: request.name.clone(),
                    alts,
                });
            }
        }
        let busy = |id: &DeviceId, used: &BTreeSet<DeviceId>| {
            self.allocated.contains(id) || extra_allocated.contains(id) || used.contains(id)
        };
        let mut search = Search {
            slots: &slots,
            used: BTreeSet::new(),
            chosen: slots.iter().map(|_| (0, Vec::new())).collect(),
            constraints: claims
                .iter()
                .map(|c| {
                    c.spec
                        .devices
                        .constraints
                        .iter()
                        .filter_map(|k| {
                            Some(MatchAttribute {
                                requests: k.requests.clone(),
                                attribute: k.match_attribute.clone()?,
                                value: None,
                                devices: 0,
                            })
                        })
                        .collect()
                })
                .collect(),
            steps: 0,
            busy: &busy,
        };
        if !search.fill(0) {
            return Ok(None);
        }
        let chosen = search.chosen;
        let mut results: Vec<AllocationResult> =
            claims.iter().map(|_| AllocationResult::default()).collect();
        let mut all_local: Vec<bool> = claims.iter().map(|_| true).collect();
        for (slot, (ai, picks)) in slots.iter().zip(&chosen) {
            let alt = &slot.alts[*ai];
            let request = match &alt.sub {
                Some(sub) => format!("{}/{sub}", slot.request),
                None => slot.request.clone(),
            };
            for &i in picks {
                let c = &alt.candidates[i];
                all_local[slot.claim] &= local.contains(&c.id);
                results[slot.claim]
                    .devices
                    .results
                    .push(DeviceRequestAllocationResult {
                        request: request.clone(),
                        driver: c.id.0.clone(),
                        pool: c.id.1.clone(),
                        device: c.id.2.clone(),
                        admin_access: alt.admin.then_some(true),
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

impl Search<'_, '_> {
    /// Adds a device of slot `s` to the claim's constraints; false (nothing changed) when one
    /// rejects it (upstream `matchAttributeConstraint.add`).
    fn constrain(&mut self, s: usize, cand: &Candidate<'_>) -> bool {
        let slot = &self.slots[s];
        let sub = slot.alts[self.chosen[s].0].sub.as_deref();
        let constraints = &mut self.constraints[slot.claim];
        let mut values = Vec::new();
        for (k, c) in constraints.iter().enumerate() {
            if !c.applies(&slot.request, sub) {
                continue;
            }
            let Some(v) = lookup_attribute(cand.device, &cand.id.0, &c.attribute) else {
                return false;
            };
            if c.value.as_ref().is_some_and(|have| have != v) {
                return false;
            }
            values.push((k, v.clone()));
        }
        for (k, v) in values {
            let c = &mut constraints[k];
            c.value = Some(v);
            c.devices += 1;
        }
        true
    }

    /// Undoes [`Search::constrain`] for a device of slot `s`.
    fn unconstrain(&mut self, s: usize) {
        let slot = &self.slots[s];
        let sub = slot.alts[self.chosen[s].0].sub.as_deref();
        for c in &mut self.constraints[slot.claim] {
            if c.applies(&slot.request, sub) {
                c.devices -= 1;
                if c.devices == 0 {
                    c.value = None;
                }
            }
        }
    }

    /// Fills `slots[s..]` (upstream `allocateOne`): each alternative of the slot in order; an
    /// `All` alternative takes every candidate (all must be free unless admin access), an
    /// `ExactCount` one tries candidates in order, backtracking.
    fn fill(&mut self, s: usize) -> bool {
        let Some(slot) = self.slots.get(s) else {
            return true;
        };
        for ai in 0..slot.alts.len() {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return false;
            }
            self.chosen[s] = (ai, Vec::new());
            let alt = &slot.alts[ai];
            if !alt.all {
                if self.pick(s, 0) {
                    return true;
                }
                continue;
            }
            if !alt.admin
                && alt
                    .candidates
                    .iter()
                    .any(|c| (self.busy)(&c.id, &self.used))
            {
                continue;
            }
            let mut taken = 0;
            for c in &alt.candidates {
                if !self.constrain(s, c) {
                    break;
                }
                taken += 1;
            }
            if taken == alt.candidates.len() {
                if !alt.admin {
                    self.used
                        .extend(alt.candidates.iter().map(|c| c.id.clone()));
                }
                self.chosen[s].1 = (0..alt.candidates.len()).collect();
                if self.fill(s + 1) {
                    return true;
                }
                if !alt.admin {
                    for c in &alt.candidates {
                        self.used.remove(&c.id);
                    }
                }
            }
            for _ in 0..taken {
                self.unconstrain(s);
            }
            self.chosen[s].1.clear();
        }
        false
    }

    /// Picks the next device of slot `s`'s `ExactCount` alternative from candidate `from` on.
    fn pick(&mut self, s: usize, from: usize) -> bool {
        let slot = &self.slots[s];
        let alt = &slot.alts[self.chosen[s].0];
        if self.chosen[s].1.len() == alt.count {
            return self.fill(s + 1);
        }
        for i in from..alt.candidates.len() {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return false;
            }
            let cand = &alt.candidates[i];
            if alt.admin {
                if self.chosen[s].1.contains(&i) {
                    continue;
                }
            } else if (self.busy)(&cand.id, &self.used) {
                continue;
            }
            if !self.constrain(s, cand) {
                continue;
            }
            self.chosen[s].1.push(i);
            if !alt.admin {
                self.used.insert(cand.id.clone());
            }
            if self.pick(s, i + 1) {
                return true;
            }
            self.chosen[s].1.pop();
            if !alt.admin {
                self.used.remove(&cand.id);
            }
            self.unconstrain(s);
        }
        false
    }
}
