//! The `pods/binding` subresource (upstream `pkg/registry/core/pod/storage/storage.go`
//! `BindingREST.Create`, `assignPod`, `setPodNodeAndMetadata`, and
//! `pkg/apis/core/validation` `ValidatePodBinding`): binds an unbound pod to a node by setting
//! `spec.nodeName`, merging the binding's annotations, and setting the `PodScheduled=True`
//! condition. Rejections:
//! - the pod does not exist: `pods "<name>" not found`;
//! - a UID precondition does not match, the pod is being deleted, already has a node, or still
//!   has scheduling gates: 409 Conflict on `pods/binding` with upstream's cause text.
//!
//! Binding does not check that the node exists (neither does upstream).

use std::sync::Arc;

use k8s_types::core::{condition_status, pod_conditions, Binding, Pod, PodCondition};
use k8s_types::meta::tick_timestamp_compact;
use k8s_types::object::Kind;
use k8s_types::status::{FieldError, Status};
use k8s_types::{Object, Resource};

use crate::registry::request_namespace;
use crate::server::ApiServer;
use crate::{errors, validation};

/// The resource named in binding conflicts.
pub const BINDING_RESOURCE: &str = "pods/binding";

/// Upstream cause for a pod that already has a node.
pub fn already_assigned(pod: &str, node: &str) -> String {
    format!("pod {pod} is already assigned to node \"{node}\"")
}

/// Upstream cause for a pod being deleted.
pub fn being_deleted(pod: &str) -> String {
    format!("pod {pod} is being deleted, cannot be assigned to a host")
}

/// Upstream cause for a pod with scheduling gates.
pub fn has_scheduling_gates(pod: &str) -> String {
    format!("pod {pod} has non-empty .spec.schedulingGates")
}

/// Upstream `ValidatePodBinding`: the target is a Node and has a name.
fn validate_binding(binding: &Binding) -> validation::ErrorList {
    let mut errs = Vec::new();
    let kind = binding.target.kind.as_str();
    if !kind.is_empty() && kind != "Node" {
        errs.push(FieldError::not_supported(
            "target.kind",
            kind,
            &["Node", "<empty>"],
        ));
    }
    if binding.target.name.is_empty() {
        errs.push(FieldError::required("target.name", ""));
    }
    errs
}

impl ApiServer {
    /// The bind verb.
    pub(crate) fn bind_pod(&mut self, binding: &Binding) -> Result<Arc<Object>, Status> {
        let name = binding.metadata.name.as_str();
        if name.is_empty() {
            return Err(crate::verbs::name_required());
        }
        let errs = validation::dedup(validate_binding(binding));
        if !errs.is_empty() {
            let joined = errs.iter().map(ToString::to_string).collect::<Vec<_>>();
            let cause = if joined.len() == 1 {
                joined[0].clone()
            } else {
                format!("[{}]", joined.join(", "))
            };
            return Err(errors::internal(&cause));
        }
        let ns = request_namespace(&Kind::Pod, binding.metadata.namespace());
        let key = Kind::Pod.key(&ns, name);
        let mut pod = self
            .store
            .get(&key)
            .and_then(Pod::from_object_ref)
            .cloned()
            .ok_or_else(|| Status::not_found(&Kind::Pod, name))?;
        if let Some(uid) = binding.metadata.uid.as_deref().filter(|u| !u.is_empty()) {
            let actual = pod.metadata.uid.clone().unwrap_or_default();
            if uid != actual {
                return Err(errors::conflict_with(
                    &Kind::Pod.plural(),
                    name,
                    &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"),
                ));
            }
        }
        if pod.metadata.deletion_timestamp.is_some() {
            return Err(errors::conflict_with(
                BINDING_RESOURCE,
                name,
                &being_deleted(name),
            ));
        }
        if let Some(node) = pod.node_name() {
            return Err(errors::conflict_with(
                BINDING_RESOURCE,
                name,
                &already_assigned(name, node),
            ));
        }
        if !pod.spec.scheduling_gates.is_empty() {
            return Err(errors::conflict_with(
                BINDING_RESOURCE,
                name,
                &has_scheduling_gates(name),
            ));
        }
        let expected = pod.metadata.resource_version_number();
        pod.spec.node_name = Some(binding.target.name.to_string());
        for (k, v) in &binding.metadata.annotations {
            pod.metadata.annotations.insert(k.clone(), v.clone());
        }
        pod.set_condition(PodCondition {
            type_: pod_conditions::POD_SCHEDULED.into(),
            status: condition_status::TRUE.into(),
            reason: None,
            message: None,
            last_transition_time: Some(tick_timestamp_compact(self.now)),
        });
        self.storage_update(&key, Object::Pod(Box::new(pod)), Some(expected))
            .map_err(|e| errors::from_store(e, &Kind::Pod, name))
    }
}
