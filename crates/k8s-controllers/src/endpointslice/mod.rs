//! The EndpointSlice controller, after upstream `pkg/controller/endpointslice/endpointslice_controller.go`
//! (`syncService`, the Service/Pod/Node/EndpointSlice event handlers) with the reconciler of
//! `staging/src/k8s.io/endpointslice` ([`reconciler`], [`utils`]): for every Service with a
//! selector, EndpointSlices listing the IPs and ports of the pods it selects.
//!
//! - A Service of type ExternalName, or without a selector, gets nothing from this controller
//!   (an empty selector `{}` selects every pod of the namespace).
//! - A pod is listed when it has a pod IP and is not Succeeded/Failed; terminating pods stay,
//!   with `terminating: true`, `serving` = their Ready condition and `ready: false` (always
//!   `ready: true` with `publishNotReadyAddresses`).
//! - A pod whose node is not in the informer is left out, the Service requeued with an error
//!   (unless `publishNotReadyAddresses`); the endpoint's zone is its node's
//!   `topology.kubernetes.io/zone` label.
//! - Named target ports are resolved per pod from its containers' ports: pods resolving to
//!   different ports go to different slices (one port set per slice).
//! - Slices are `generateName: <service>-`, owned by the Service (the garbage collector deletes
//!   them with it), labelled `kubernetes.io/service-name` and
//!   `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`; at most 100
//!   endpoints each.
//! - A write error is a `FailedToUpdateEndpointSlices` warning on the Service and a rate-limited
//!   retry.
//!
//! Not modelled: the `endpoints.kubernetes.io/last-change-trigger-time` annotation (its
//! tracker), the endpointSliceTracker's stale-cache check (k8s-mini's informers are never
//! behind a write of the controller's own turn), topology hints, dual-stack (IPv6 slices), pod
//! hostnames, and the 1 s update batching (`--endpoint-updates-batch-period` defaults to 0).

pub mod reconciler;
pub mod utils;

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::event::event_types;
use k8s_types::core::{service_types, Node, Pod, Service};
use k8s_types::discovery::{EndpointSlice, LABEL_SERVICE_NAME};
use k8s_types::events::EventRecorder;
use k8s_types::informer::{split_key, Delta, SharedInformerFactory};
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object};

use reconciler::{reconcile, DesiredByPorts};
use utils::{
    endpoint_ports, pod_to_endpoint, port_map_key, should_pod_be_in_endpoints, LABEL_TOPOLOGY_ZONE,
};

/// The controller name as kube-controller-manager registers it.
pub const ENDPOINTSLICE_CONTROLLER_NAME: &str = "endpointslice-controller";
/// The event source component upstream's EndpointSlice controller records as.
pub const ENDPOINTSLICE_EVENT_COMPONENT: &str = "endpoint-slice-controller";

/// kube-controller-manager's EndpointSlice controller.
#[derive(Debug)]
pub struct EndpointSliceController {
    events: EventRecorder,
}

impl Default for EndpointSliceController {
    fn default() -> Self {
        Self::new()
    }
}

impl EndpointSliceController {
    /// A new controller.
    pub fn new() -> Self {
        EndpointSliceController {
            events: EventRecorder::for_component(ENDPOINTSLICE_EVENT_COMPONENT),
        }
    }
}

/// Whether a Service's selector (a plain map; `None` selects nothing) matches `labels`.
fn selects(svc: &Service, labels: &BTreeMap<String, String>) -> bool {
    svc.spec
        .selector
        .as_ref()
        .is_some_and(|sel| sel.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

/// The Service's managed slices, in name order.
pub fn managed_slices(svc: &Service, informers: &SharedInformerFactory) -> Vec<EndpointSlice> {
    informers
        .of(&Kind::EndpointSlice)
        .list_namespace::<EndpointSlice>(svc.metadata.namespace())
        .filter(|s| {
            s.service_name() == Some(svc.metadata.name.as_str()) && s.managed_by_controller()
        })
        .cloned()
        .collect()
}

/// The desired endpoints of a Service grouped by port set, and the pods skipped because their
/// node is missing.
pub fn desired_endpoints(
    svc: &Service,
    informers: &SharedInformerFactory,
) -> (DesiredByPorts, Vec<String>) {
    let mut desired = DesiredByPorts::new();
    let mut missing = Vec::new();
    let nodes = informers.of(&Kind::Node);
    for pod in informers
        .of(&Kind::Pod)
        .list_namespace::<Pod>(svc.metadata.namespace())
        .filter(|p| selects(svc, &p.metadata.labels))
        .filter(|p| should_pod_be_in_endpoints(p))
    {
        let node_name = pod.spec.node_name.clone().unwrap_or_default();
        let node = nodes.get_typed::<Node>(&node_name);
        if node.is_none() && !svc.spec.publish_not_ready_addresses {
            missing.push(format!(
                "skipping Pod {} for Service {}/{}: Node {node_name} Not Found",
                pod.metadata.name,
                svc.metadata.namespace(),
                svc.metadata.name
            ));
            continue;
        }
        let ports = endpoint_ports(svc, pod);
        let entry = desired
            .entry(port_map_key(&ports))
            .or_insert_with(|| (ports.clone(), BTreeMap::new()));
        entry.1.insert(
            format!("{}/{}", pod.metadata.namespace(), pod.metadata.name),
            pod_to_endpoint(pod, node, svc),
        );
    }
    (desired, missing)
}

impl EndpointSliceController {
    /// Upstream `syncService`.
    fn sync_service(
        &mut self,
        svc: &Service,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        if svc.type_() == service_types::EXTERNAL_NAME
            || svc.spec.selector.is_none()
            || svc.metadata.deletion_timestamp.is_some()
        {
            return Ok(Action::AwaitChange);
        }
        let (desired, missing) = desired_endpoints(svc, informers);
        let existing = managed_slices(svc, informers);
        let plan = reconcile(svc, &desired, &existing);
        let mut result: Result<(), k8s_types::status::Status> = Ok(());
        for s in plan.create {
            if let Err(e) = api.create_typed(s) {
                result = result.and(Err(e));
            }
        }
        for s in plan.update {
            if let Err(e) = api.update_typed(s) {
                result = result.and(Err(e));
            }
        }
        for s in plan.delete {
            let (ns, name) = (s.metadata.namespace().to_string(), s.metadata.name.clone());
            match api.delete(&Kind::EndpointSlice, &ns, &name, Default::default()) {
                Err(e) if !e.is_not_found() => result = result.and(Err(e)),
                _ => {}
            }
        }
        if let Err(e) = result {
            self.events.record(
                api,
                &Object::Service(Box::new(svc.clone())),
                event_types::WARNING,
                "FailedToUpdateEndpointSlices",
                format!(
                    "Error updating Endpoint Slices for Service {}/{}: {}",
                    svc.metadata.namespace(),
                    svc.metadata.name,
                    e.message
                ),
            );
            return Err(SyncError::Api(e));
        }
        if let Some(first) = missing.into_iter().next() {
            return Err(SyncError::Invalid(first));
        }
        Ok(Action::AwaitChange)
    }
}

impl Controller for EndpointSliceController {
    fn name(&self) -> &str {
        ENDPOINTSLICE_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::Service, Kind::Pod, Kind::Node, Kind::EndpointSlice]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        match change.kind {
            // onServiceUpdate / onServiceDelete.
            Kind::Service => queue.add(change.key.clone()),
            // addPod / updatePod / deletePod: the Services selecting the pod before or after.
            Kind::Pod => {
                for obj in [&change.old, &change.new].into_iter().flatten() {
                    let meta = obj.meta();
                    for svc in informers
                        .of(&Kind::Service)
                        .list_namespace::<Service>(meta.namespace())
                        .filter(|s| selects(s, &meta.labels))
                    {
                        queue.add(format!("{}/{}", meta.namespace(), svc.metadata.name));
                    }
                }
            }
            // onEndpointSliceAdd/Update/Delete: the Service a managed slice belongs to.
            Kind::EndpointSlice => {
                for obj in [&change.old, &change.new].into_iter().flatten() {
                    if let Object::EndpointSlice(es) = obj.as_ref() {
                        if es.managed_by_controller() {
                            if let Some(name) = es.metadata.labels.get(LABEL_SERVICE_NAME) {
                                queue.add(format!("{}/{name}", es.metadata.namespace()));
                            }
                        }
                    }
                }
            }
            // A node appearing, going or changing zone: the Services of its pods.
            Kind::Node => {
                let zone = |o: &Option<std::sync::Arc<Object>>| {
                    o.as_ref()
                        .map(|n| n.meta().labels.get(LABEL_TOPOLOGY_ZONE).cloned())
                };
                if change.old.is_some()
                    && change.new.is_some()
                    && zone(&change.old) == zone(&change.new)
                {
                    return;
                }
                let node = split_key(&change.key).1.to_string();
                let pods = informers.of(&Kind::Pod);
                for p in pods.pods_on_node(&node) {
                    let meta = p.meta();
                    for svc in informers
                        .of(&Kind::Service)
                        .list_namespace::<Service>(meta.namespace())
                        .filter(|s| selects(s, &meta.labels))
                    {
                        queue.add(format!("{}/{}", meta.namespace(), svc.metadata.name));
                    }
                }
            }
            _ => {}
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(svc) = informers
            .of(&Kind::Service)
            .get_typed::<Service>(key)
            .cloned()
        else {
            // The garbage collector deletes the slices of a deleted Service.
            return Ok(Action::AwaitChange);
        };
        self.sync_service(&svc, informers, api)
    }
}
