//! DynamicResources (PreEnqueue, PreFilter, Filter, Reserve, Unreserve, PreBind): Dynamic Resource
//! Allocation with structured parameters, GA and on by default since v1.34 (upstream
//! `pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`, KEP-4381). Pods
//! without `spec.resourceClaims` are skipped at PreFilter.
//!
//! - PreEnqueue: every claim of the pod must exist (upstream `foreachPodResourceClaim`); else
//!   the pod is held back with upstream's error text: `pod "<ns>/<pod>": ResourceClaim not
//!   created yet` (a template's claim not generated yet), `resourceclaim.resource.k8s.io "<name>"
//!   not found`, `resourceclaim "<name>" is being deleted`, or `ResourceClaim <ns>/<name> was not
//!   created for Pod <ns>/<pod> (Pod is not owner)`. k8s-mini runs PreEnqueue for every pending
//!   pod every tick, so the pod is attempted the tick its claims appear.
//! - PreFilter: an allocated claim whose `reservedFor` is full (256) and not for this pod:
//!   `resourceclaim in use`; an unallocated claim whose allocation is in flight (reserved by
//!   another pod's attempt, not yet written): `resource claim <ns>/<name> is in the process of
//!   being allocated`; a request naming a missing class: `request <r>: device class <c> does not
//!   exist`. All UnschedulableAndUnresolvable. Then the allocator is set up
//!   ([`allocator::Allocator`]) with every DeviceClass, every ResourceSlice and the devices of
//!   every allocated claim (admin-access results excepted) plus those in flight.
//! - Filter: an allocated claim's `nodeSelector` must match the node (`resourceclaim not
//!   available on the node`); the unallocated claims must all be allocatable on the node
//!   (`cannot allocate all claims`, UnschedulableAndUnresolvable, so preemption does not try);
//!   a CEL evaluation error is an error status (upstream `statusError`).
//! - Reserve: the node's allocation results are kept in flight (upstream
//!   `SignalClaimPendingAllocation`), so other pods' attempts see those devices as taken.
//! - PreBind (upstream `bindClaim`): each claim not yet reserved for the pod gets, in one
//!   `/status` write, the finalizer `resource.kubernetes.io/delete-protection`, its
//!   `status.allocation` (when the scheduler allocated it) and the pod in `status.reservedFor`
//!   (`resource: pods`, name, uid). A claim allocated by someone else meanwhile fails the bind:
//!   `claim <ns>/<name> got allocated elsewhere in the meantime`.
//! - Unreserve: the in-flight allocations are dropped and the pod is removed from the
//!   `reservedFor` of its claims.
//!
//! Not done (docs/fidelity.md): PostFilter's deallocation of an unavailable claim, the
//! extended-resource mapping of DeviceClasses (`extendedResourceName`, KEP-5004), binding
//! conditions, and the queueing hints (the plugin registers no events, so a pod it rejected is
//! retried on every cluster event, after its backoff: k8s-mini's scheduler does not watch
//! ResourceClaims; claim updates that matter come with a pod update).

pub mod allocator;
#[cfg(test)]
mod allocator_tests;
mod score;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use k8s_sched_framework::{
    ConfigError, CycleState, FilterPlugin, Handle, NodeInfo, Plugin, PluginArgs, PreEnqueuePlugin,
    PreFilterPlugin, PreFilterResult, ReservePlugin, Status,
};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{NodeSelector, Pod};
use k8s_types::resource::{
    AllocationResult, DeviceClass, ResourceClaim, ResourceClaimConsumerReference, ResourceSlice,
    FINALIZER, RESERVED_FOR_MAX_SIZE,
};
use k8s_types::{Kind, Object};

use super::names;
use allocator::{Allocator, DeviceId};

/// The cycle-state key.
const STATE_KEY: &str = "PreFilterDynamicResources";

/// Upstream's Filter reason when the unallocated claims do not fit the node.
pub const MSG_CANNOT_ALLOCATE: &str = "cannot allocate all claims";
/// Upstream's Filter reason when an allocated claim's devices are not reachable from the node.
pub const MSG_NOT_AVAILABLE: &str = "resourceclaim not available on the node";
/// Upstream's PreFilter reason when an allocated claim cannot take another consumer.
pub const MSG_IN_USE: &str = "resourceclaim in use";

/// The DynamicResources plugin; it remembers the allocations reserved but not yet written
/// (upstream's in-flight claims of the assume cache), by claim uid.
#[derive(Debug, Default)]
pub struct DynamicResources {
    in_flight: Mutex<BTreeMap<String, (String, AllocationResult)>>,
}

impl DynamicResources {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(DynamicResources::default()))
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (String, AllocationResult)>> {
        self.in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What PreFilter found, for Filter, Reserve and PreBind (cloned for preemption's per-node
/// copies: the allocator and Filter's results are shared).
#[derive(Clone, Debug)]
struct StateData {
    /// The pod's claims, in `spec.resourceClaims` order (those that need none are left out).
    claims: Vec<ResourceClaim>,
    /// Indexes in `claims` of the claims the scheduler allocates.
    to_allocate: Vec<usize>,
    /// Per claim: where an allocated claim's devices are reachable.
    available_on: Vec<Option<NodeSelector>>,
    allocator: Option<Arc<Allocator>>,
    in_flight_devices: BTreeSet<DeviceId>,
    /// Filter's results per node name (upstream `nodeAllocations`).
    node_allocations: Arc<Mutex<BTreeMap<String, Vec<AllocationResult>>>>,
    /// Reserve's choice, one per `to_allocate` entry.
    reserved: Vec<AllocationResult>,
}

fn claim_key(c: &ResourceClaim) -> String {
    format!("{}/{}", c.metadata.namespace(), c.metadata.name)
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.metadata.namespace(), pod.metadata.name)
}

/// Upstream `foreachPodResourceClaim`: the pod's claims, or the reason the pod must wait.
fn pod_claims(api: &dyn ApiClient, pod: &Pod) -> Result<Vec<ResourceClaim>, String> {
    let mut out = Vec::new();
    let ns = pod.metadata.namespace();
    for pc in &pod.spec.resource_claims {
        let Some(name) = pod.resource_claim_name(pc)? else {
            continue;
        };
        let claim: ResourceClaim = match api.get_typed(ns, &name) {
            Ok(c) => c,
            Err(s) if s.is_not_found() => {
                // The scheduler's lister error (singular resource).
                return Err(format!("resourceclaim.resource.k8s.io {name:?} not found"));
            }
            Err(s) => return Err(s.message),
        };
        if claim.metadata.deletion_timestamp.is_some() {
            return Err(format!("resourceclaim {name:?} is being deleted"));
        }
        if pc.resource_claim_template_name.is_some() {
            let owned =
                claim.metadata.owner_references.iter().any(|r| {
                    r.controller == Some(true) && Some(&r.uid) == pod.metadata.uid.as_ref()
                });
            if !owned {
                return Err(format!(
                    "ResourceClaim {} was not created for Pod {} (Pod is not owner)",
                    claim_key(&claim),
                    pod_key(pod)
                ));
            }
        }
        out.push(claim);
    }
    Ok(out)
}

fn typed<T: k8s_types::Resource>(api: &dyn ApiClient, kind: &Kind) -> Vec<T> {
    api.list_shared(kind, None, None)
        .iter()
        .filter_map(|o| T::from_object_ref(o.as_ref()).cloned())
        .collect()
}

impl Plugin for DynamicResources {
    fn name(&self) -> &str {
        names::DYNAMIC_RESOURCES
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        Some(self)
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_pre_score(&self) -> Option<&dyn k8s_sched_framework::PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn k8s_sched_framework::ScorePlugin> {
        Some(self)
    }
    fn as_reserve(&self) -> Option<&dyn k8s_sched_framework::ReservePlugin> {
        Some(self)
    }
    fn as_pre_bind(&self) -> Option<&dyn k8s_sched_framework::PreBindPlugin> {
        Some(self)
    }
}

impl PreEnqueuePlugin for DynamicResources {
    fn pre_enqueue(&self, _pod: &Pod) -> Status {
        Status::success()
    }

    fn pre_enqueue_with(&self, pod: &Pod, handle: &dyn Handle) -> Status {
        if pod.spec.resource_claims.is_empty() {
            return Status::success();
        }
        match pod_claims(handle.client(), pod) {
            Ok(_) => Status::success(),
            Err(e) => Status::unresolvable(e),
        }
    }
}

impl PreFilterPlugin for DynamicResources {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
        if pod.spec.resource_claims.is_empty() {
            return (None, Status::skip());
        }
        let api = handle.client();
        let claims = match pod_claims(api, pod) {
            Ok(c) => c,
            Err(e) => return (None, Status::unresolvable(e)),
        };
        if claims.is_empty() {
            return (None, Status::skip());
        }
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let in_flight = self.in_flight();
        let mut to_allocate = Vec::new();
        let mut available_on = Vec::new();
        let mut class_names = BTreeSet::new();
        for (i, c) in claims.iter().enumerate() {
            match &c.status.allocation {
                Some(a) => {
                    if c.status.reserved_for.len() >= RESERVED_FOR_MAX_SIZE
                        && !c.is_reserved_for(&uid)
                    {
                        return (None, Status::unresolvable(MSG_IN_USE));
                    }
                    available_on.push(a.node_selector.clone());
                }
                None => {
                    available_on.push(None);
                    if c.metadata
                        .uid
                        .as_ref()
                        .is_some_and(|u| in_flight.contains_key(u))
                    {
                        return (
                            None,
                            Status::unresolvable(format!(
                                "resource claim {} is in the process of being allocated",
                                claim_key(c)
                            )),
                        );
                    }
                    to_allocate.push(i);
                    for r in &c.spec.devices.requests {
                        if let Some(e) = &r.exactly {
                            class_names.insert((r.name.clone(), e.device_class_name.clone()));
                        }
                        // Upstream PreFilter checks each sub-request's class, named
                        // `<request>/<subrequest>` in the message.
                        for sub in &r.first_available {
                            class_names.insert((
                                format!("{}/{}", r.name, sub.name),
                                sub.device_class_name.clone(),
                            ));
                        }
                    }
                }
            }
        }
        let mut allocator = None;
        let mut in_flight_devices = BTreeSet::new();
        if !to_allocate.is_empty() {
            let classes: Vec<DeviceClass> = typed(api, &Kind::DeviceClass);
            for (request, class) in &class_names {
                if !classes.iter().any(|c| c.metadata.name == *class) {
                    return (
                        None,
                        Status::unresolvable(format!(
                            "request {request}: device class {class} does not exist"
                        )),
                    );
                }
            }
            let slices: Vec<ResourceSlice> = typed(api, &Kind::ResourceSlice);
            let mut allocated = BTreeSet::new();
            for c in typed::<ResourceClaim>(api, &Kind::ResourceClaim) {
                if let Some(a) = &c.status.allocation {
                    for r in a
                        .devices
                        .results
                        .iter()
                        .filter(|r| r.admin_access != Some(true))
                    {
                        allocated.insert((r.driver.clone(), r.pool.clone(), r.device.clone()));
                    }
                }
            }
            for (_, a) in in_flight.values() {
                for r in a
                    .devices
                    .results
                    .iter()
                    .filter(|r| r.admin_access != Some(true))
                {
                    in_flight_devices.insert((r.driver.clone(), r.pool.clone(), r.device.clone()));
                }
            }
            let pending: Vec<ResourceClaim> =
                to_allocate.iter().map(|&i| claims[i].clone()).collect();
            allocator = Some(Arc::new(Allocator::new(
                classes, slices, allocated, &pending,
            )));
        }
        drop(in_flight);
        state.write(
            STATE_KEY,
            StateData {
                claims,
                to_allocate,
                available_on,
                allocator,
                in_flight_devices,
                node_allocations: Arc::new(Mutex::new(BTreeMap::new())),
                reserved: Vec::new(),
            },
        );
        (None, Status::success())
    }
}

impl FilterPlugin for DynamicResources {
    fn filter(&self, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Status {
        let Some(s) = state.read::<StateData>(STATE_KEY) else {
            return Status::success();
        };
        let n = node.node();
        for sel in s.available_on.iter().flatten() {
            if !sel.matches(&n.metadata.name, &n.metadata.labels) {
                return Status::unresolvable(MSG_NOT_AVAILABLE);
            }
        }
        let Some(alloc) = &s.allocator else {
            return Status::success();
        };
        let pending: Vec<ResourceClaim> =
            s.to_allocate.iter().map(|&i| s.claims[i].clone()).collect();
        match alloc.allocate(n, &pending, &s.in_flight_devices) {
            Err(e) => Status::error(e),
            Ok(None) => Status::unresolvable(MSG_CANNOT_ALLOCATE),
            Ok(Some(results)) => {
                s.node_allocations
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(n.metadata.name.clone(), results);
                Status::success()
            }
        }
    }
}

impl ReservePlugin for DynamicResources {
    fn reserve(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node_name: &str,
        _handle: &mut dyn Handle,
    ) -> Status {
        let Some(s) = state.read_mut::<StateData>(STATE_KEY) else {
            return Status::success();
        };
        if s.to_allocate.is_empty() {
            return Status::success();
        }
        let results = s
            .node_allocations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(node_name)
            .cloned();
        let Some(results) = results.filter(|r| r.len() == s.to_allocate.len()) else {
            return Status::error("claim allocation not found for node");
        };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let mut in_flight = self.in_flight();
        for (&i, a) in s.to_allocate.iter().zip(&results) {
            if let Some(cuid) = &s.claims[i].metadata.uid {
                in_flight.insert(cuid.clone(), (uid.clone(), a.clone()));
            }
        }
        s.reserved = results;
        Status::success()
    }

    fn unreserve(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _node_name: &str,
        handle: &mut dyn Handle,
    ) {
        let Some(s) = state.read::<StateData>(STATE_KEY) else {
            return;
        };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        {
            let mut in_flight = self.in_flight();
            for c in &s.claims {
                if let Some(cuid) = &c.metadata.uid {
                    if in_flight.get(cuid).is_some_and(|(p, _)| *p == uid) {
                        in_flight.remove(cuid);
                    }
                }
            }
        }
        let api = handle.client_mut();
        for c in &s.claims {
            let Ok(mut latest) =
                api.get_typed::<ResourceClaim>(c.metadata.namespace(), &c.metadata.name)
            else {
                continue;
            };
            if latest.status.allocation.is_some() && latest.is_reserved_for(&uid) {
                latest.status.reserved_for.retain(|r| r.uid != uid);
                // A conflict is retried by the next attempt, as upstream's logged patch error.
                let _ = api.update_status(Object::ResourceClaim(Box::new(latest)));
            }
        }
    }
}

impl k8s_sched_framework::PreBindPlugin for DynamicResources {
    fn pre_bind(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _node_name: &str,
        handle: &mut dyn Handle,
    ) -> Status {
        let Some(s) = state.read::<StateData>(STATE_KEY) else {
            return Status::success();
        };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let api = handle.client_mut();
        for (i, c) in s.claims.iter().enumerate() {
            let allocation = s
                .to_allocate
                .iter()
                .position(|&t| t == i)
                .and_then(|k| s.reserved.get(k).cloned());
            let mut latest: ResourceClaim =
                match api.get_typed(c.metadata.namespace(), &c.metadata.name) {
                    Ok(l) => l,
                    Err(e) => return Status::error(e.message),
                };
            if latest.is_reserved_for(&uid) {
                continue;
            }
            if let Some(a) = allocation {
                if latest.status.allocation.is_some() {
                    return Status::error(format!(
                        "claim {} got allocated elsewhere in the meantime",
                        claim_key(c)
                    ));
                }
                let mut a = a;
                a.allocation_timestamp = Some(k8s_types::meta::tick_timestamp(handle_now(api)));
                latest.status.allocation = Some(a);
            } else if latest.status.allocation.is_none() {
                return Status::error(format!(
                    "claim {} got deallocated in the meantime",
                    claim_key(c)
                ));
            }
            if latest.status.reserved_for.len() >= RESERVED_FOR_MAX_SIZE {
                return Status::error(format!(
                    "claim {} cannot be reserved for another pod",
                    claim_key(c)
                ));
            }
            if !latest.metadata.finalizers.iter().any(|f| f == FINALIZER) {
                latest.metadata.finalizers.push(FINALIZER.to_string());
            }
            latest
                .status
                .reserved_for
                .push(ResourceClaimConsumerReference {
                    api_group: String::new(),
                    resource: "pods".into(),
                    name: pod.metadata.name.clone(),
                    uid: uid.clone(),
                });
            if let Err(e) = api.update_status(Object::ResourceClaim(Box::new(latest))) {
                return Status::error(e.message);
            }
            if let Some(cuid) = &c.metadata.uid {
                self.in_flight().remove(cuid);
            }
        }
        Status::success()
    }
}

fn handle_now(api: &dyn ApiClient) -> k8s_types::Tick {
    api.now()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_testing::FakeApi;
    use k8s_types::core::PodResourceClaim;

    fn pod(claims: Vec<PodResourceClaim>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = "p".into();
        p.metadata.namespace = Some("default".into());
        p.metadata.uid = Some("uid-p".into());
        p.spec.resource_claims = claims;
        p
    }

    fn entry(name: &str, claim: Option<&str>, template: Option<&str>) -> PodResourceClaim {
        PodResourceClaim {
            name: name.into(),
            resource_claim_name: claim.map(str::to_string),
            resource_claim_template_name: template.map(str::to_string),
        }
    }

    /// PreEnqueue's reasons, in upstream's words (`foreachPodResourceClaim`, the lister's
    /// NotFound, `resourceclaim.IsForPod`).
    #[test]
    fn pods_wait_for_their_claims_with_upstreams_messages() {
        let mut api = FakeApi::new();
        let p = pod(vec![entry("gpu", None, Some("t"))]);
        assert_eq!(
            pod_claims(&api, &p).unwrap_err(),
            "pod \"default/p\": ResourceClaim not created yet"
        );
        let p = pod(vec![entry("gpu", Some("later"), None)]);
        assert_eq!(
            pod_claims(&api, &p).unwrap_err(),
            "resourceclaim.resource.k8s.io \"later\" not found"
        );
        let mut claim = ResourceClaim::default();
        claim.metadata.name = "p-gpu-abcde".into();
        claim.metadata.namespace = Some("default".into());
        api.create(Object::ResourceClaim(Box::new(claim))).unwrap();
        let mut p = pod(vec![entry("gpu", None, Some("t"))]);
        p.status
            .resource_claim_statuses
            .push(k8s_types::core::PodResourceClaimStatus {
                name: "gpu".into(),
                resource_claim_name: Some("p-gpu-abcde".into()),
            });
        assert_eq!(
            pod_claims(&api, &p).unwrap_err(),
            "ResourceClaim default/p-gpu-abcde was not created for Pod default/p (Pod is not owner)"
        );
        // Recorded as not needed: nothing to wait for.
        p.status.resource_claim_statuses[0].resource_claim_name = None;
        assert_eq!(pod_claims(&api, &p).map(|c| c.len()), Ok(0));
    }
}
