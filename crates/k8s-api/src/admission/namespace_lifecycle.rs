//! The `NamespaceLifecycle` admission plugin (upstream
//! `plugin/pkg/admission/namespace/lifecycle/admission.go`):
//! - objects may only be created or updated in a namespace that exists
//!   (`namespaces "x" not found`);
//! - nothing new may be created in a namespace that is being deleted;
//! - the namespaces `default`, `kube-system` and `kube-public` may not be deleted.
//!
//! Cluster-scoped objects and deletions of other objects are always allowed. Upstream runs this as
//! a validating plugin, i.e. after validation.

use k8s_types::admission::{Operation, ValidatingAdmission};
use k8s_types::core::Namespace;
use k8s_types::object::Kind;
use k8s_types::status::Status;
use k8s_types::store::ObjectStore;
use k8s_types::{Object, Resource};

use crate::registry::namespace::is_terminating;

/// Upstream `PluginName`.
pub const PLUGIN_NAME: &str = "NamespaceLifecycle";
/// Upstream `immortalNamespaces`.
pub const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];
/// Upstream message for deleting an immortal namespace.
pub const MAY_NOT_BE_DELETED_MSG: &str = "this namespace may not be deleted";

/// Upstream message for creating in a terminating namespace.
pub fn terminating_message(namespace: &str) -> String {
    format!("unable to create new content in namespace {namespace} because it is being terminated")
}

/// The plugin (stateless; namespaces are read from the store).
#[derive(Clone, Copy, Debug, Default)]
pub struct NamespaceLifecycle;

impl ValidatingAdmission for NamespaceLifecycle {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn validate(
        &self,
        operation: Operation,
        obj: &Object,
        _old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        let kind = obj.kind();
        if kind == Kind::Namespace {
            if operation == Operation::Delete
                && IMMORTAL_NAMESPACES.contains(&obj.meta().name.as_str())
            {
                return Err(super::forbidden(obj, MAY_NOT_BE_DELETED_MSG));
            }
            return Ok(());
        }
        if !kind.namespaced() || operation == Operation::Delete {
            return Ok(());
        }
        let ns = obj.meta().namespace();
        let stored = store
            .get(&Kind::Namespace.key("", ns))
            .and_then(Namespace::from_object_ref);
        match stored {
            None => Err(Status::not_found(&Kind::Namespace, ns)),
            Some(n) if operation == Operation::Create && is_terminating(n) => {
                Err(super::forbidden(obj, &terminating_message(ns)))
            }
            Some(_) => Ok(()),
        }
    }
}
