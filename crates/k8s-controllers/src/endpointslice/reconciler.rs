//! The EndpointSlice reconciler, after upstream `staging/src/k8s.io/endpointslice/reconciler.go`
//! (`Reconcile`, `reconcileByAddressType`, `reconcileByPortMapping`, `finalize`,
//! `getSliceToFill`): given a Service's desired endpoints grouped by their ports and the slices it
//! has, the slices to create, update and delete.
//!
//! - Slices of another address type than the Service's families (IPv4 here) are deleted.
//! - Per port set: in each existing slice an endpoint still desired is kept in place (replaced
//!   when its conditions, node or zone changed), one no longer desired is dropped; a slice left
//!   empty is deleted, a changed one updated; a slice whose labels no longer match the Service's
//!   is updated.
//! - Endpoints left to place fill the slices already being updated (up to
//!   `maxEndpointsPerSlice`, 100), then the unchanged slice that will be closest to full, then
//!   new slices.
//! - A slice of a port set no longer desired is deleted; when a Service would have no slice at
//!   all, a placeholder (no endpoints, no ports) is created, or kept when it is the one to delete.
//! - A slice to create and one to delete are merged into an update of the latter (same name).
//!
//! Deterministic where upstream is not: endpoints to place are taken in pod key order (upstream
//! `EndpointSet.PopAny` takes any), port sets are visited in their sorted order, and
//! `getSliceToFill`'s ties go to the first slice in name order.

use std::collections::BTreeMap;

use k8s_types::core::Service;
use k8s_types::discovery::{Endpoint, EndpointPort, EndpointSlice, ADDRESS_TYPE_IPV4};

use super::utils::{endpoint_identity, new_endpoint_slice, port_map_key, slice_labels};

/// Upstream `--max-endpoints-per-slice` default.
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;

/// What one Service's sync writes.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// New slices (with `generateName`).
    pub create: Vec<EndpointSlice>,
    /// Changed slices.
    pub update: Vec<EndpointSlice>,
    /// Slices to delete.
    pub delete: Vec<EndpointSlice>,
}

/// Desired endpoints of one port set, keyed by their identity (pod key order).
pub type DesiredByPorts =
    BTreeMap<Vec<EndpointPort>, (Vec<EndpointPort>, BTreeMap<String, Endpoint>)>;

/// Upstream `Reconcile` for a single-stack IPv4 Service. `existing` are the Service's managed
/// slices in name order.
pub fn reconcile(svc: &Service, desired: &DesiredByPorts, existing: &[EndpointSlice]) -> Plan {
    let mut plan = Plan::default();
    let (mine, other_type): (Vec<&EndpointSlice>, Vec<&EndpointSlice>) = existing
        .iter()
        .partition(|s| s.address_type == ADDRESS_TYPE_IPV4);
    plan.delete.extend(other_type.into_iter().cloned());
    let mut by_ports: BTreeMap<Vec<EndpointPort>, Vec<&EndpointSlice>> = BTreeMap::new();
    for s in &mine {
        by_ports.entry(port_map_key(&s.ports)).or_default().push(s);
    }
    for (key, (ports, endpoints)) in desired {
        let slices = by_ports.remove(key).unwrap_or_default();
        reconcile_by_port_mapping(svc, &slices, ports, endpoints, &mut plan);
    }
    // Port sets no longer desired.
    for slices in by_ports.into_values() {
        plan.delete.extend(slices.into_iter().cloned());
    }
    // When no slice would usually exist, a placeholder.
    if existing.len() == plan.delete.len() && plan.create.is_empty() {
        let placeholder = new_endpoint_slice(svc, &[], ADDRESS_TYPE_IPV4);
        let same = plan.delete.len() == 1 && {
            let d = &plan.delete[0];
            d.endpoints.is_empty()
                && d.ports.is_empty()
                && d.address_type == placeholder.address_type
                && d.metadata.labels == placeholder.metadata.labels
        };
        if same {
            plan.delete.clear();
        } else {
            plan.create.push(placeholder);
        }
    }
    finalize(svc, &mut plan);
    plan
}

/// Upstream `reconcileByPortMapping`.
fn reconcile_by_port_mapping(
    svc: &Service,
    slices: &[&EndpointSlice],
    ports: &[EndpointPort],
    desired: &BTreeMap<String, Endpoint>,
    plan: &mut Plan,
) {
    let labels = slice_labels(svc);
    let mut remaining: BTreeMap<(String, String, String), (&String, &Endpoint)> = desired
        .iter()
        .map(|(k, e)| (endpoint_identity(e), (k, e)))
        .collect();
    let mut to_update: Vec<EndpointSlice> = Vec::new();
    let mut unchanged: Vec<EndpointSlice> = Vec::new();
    for slice in slices {
        let mut changed = false;
        let mut kept = Vec::new();
        for ep in &slice.endpoints {
            match remaining.remove(&endpoint_identity(ep)) {
                Some((_, want)) => {
                    if want != ep {
                        changed = true;
                    }
                    kept.push(want.clone());
                }
                None => changed = true,
            }
        }
        let labels_changed = slice.metadata.labels != labels;
        if changed {
            if kept.is_empty() {
                plan.delete.push((*slice).clone());
            } else {
                let mut s = (*slice).clone();
                s.endpoints = kept;
                s.metadata.labels = labels.clone().into();
                to_update.push(s);
            }
        } else if labels_changed {
            let mut s = (*slice).clone();
            s.metadata.labels = labels.clone().into();
            to_update.push(s);
        } else {
            unchanged.push((*slice).clone());
        }
    }
    // Placing order: pod key order.
    let mut queue: Vec<(&String, &Endpoint)> = remaining.into_values().collect();
    queue.sort_by(|a, b| a.0.cmp(b.0));
    let mut queue = queue.into_iter().map(|(_, e)| e.clone()).peekable();
    // 1. Fill the slices already being updated.
    for s in &mut to_update {
        while s.endpoints.len() < MAX_ENDPOINTS_PER_SLICE {
            match queue.next() {
                Some(e) => s.endpoints.push(e),
                None => break,
            }
        }
    }
    // 2. The unchanged slice closest to full, then new slices.
    let mut left: Vec<Endpoint> = queue.collect();
    while !left.is_empty() {
        let mut target: Option<EndpointSlice> = None;
        if left.len() < MAX_ENDPOINTS_PER_SLICE && !unchanged.is_empty() {
            // Upstream getSliceToFill: the slice that ends up fullest without overflowing.
            let best = unchanged
                .iter()
                .enumerate()
                .filter(|(_, s)| s.endpoints.len() + left.len() <= MAX_ENDPOINTS_PER_SLICE)
                .max_by(|(ia, a), (ib, b)| {
                    a.endpoints.len().cmp(&b.endpoints.len()).then(ib.cmp(ia))
                })
                .map(|(i, _)| i);
            if let Some(i) = best {
                target = Some(unchanged.remove(i));
            }
        }
        let is_new = target.is_none();
        let mut s = target.unwrap_or_else(|| new_endpoint_slice(svc, ports, ADDRESS_TYPE_IPV4));
        let room = MAX_ENDPOINTS_PER_SLICE
            .saturating_sub(s.endpoints.len())
            .min(left.len());
        s.endpoints.extend(left.drain(..room));
        if is_new {
            plan.create.push(s);
        } else {
            to_update.push(s);
        }
    }
    plan.update.extend(to_update);
}

/// Upstream `finalize`'s merge: a slice to create takes the name of a slice to delete (owned by
/// the Service, same address type), becoming an update of it.
fn finalize(svc: &Service, plan: &mut Plan) {
    let uid = svc.metadata.uid.clone().unwrap_or_default();
    let mut i = 0;
    while i < plan.delete.len() && !plan.create.is_empty() {
        let del = &plan.delete[i];
        let owned = del
            .metadata
            .owner_references
            .iter()
            .any(|r| r.kind == "Service" && r.uid == uid);
        if owned && del.address_type == plan.create[plan.create.len() - 1].address_type {
            let mut s = plan.create.pop().unwrap_or_default();
            let del = plan.delete.remove(i);
            s.metadata = del.metadata;
            s.metadata.labels = slice_labels(svc).into();
            s.metadata.generate_name = None;
            plan.update.push(s);
        } else {
            i += 1;
        }
    }
}
