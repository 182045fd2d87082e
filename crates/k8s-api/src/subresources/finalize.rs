//! The `namespaces/finalize` subresource (upstream `pkg/registry/core/namespace/storage/storage.go`
//! `FinalizeREST.Update` with `namespaceFinalizeStrategy`, and `ShouldDeleteNamespaceDuringUpdate`):
//! an update that takes only `spec.finalizers` from the request (metadata and status stay as
//! stored); a set `resourceVersion` must match the stored one (409 Conflict otherwise). When the
//! result is a namespace being deleted with no spec and no metadata finalizers left, it is removed
//! from storage instead of written (the answer is the last state, as the generic store returns the
//! deleted object).

use std::sync::Arc;

use k8s_types::core::Namespace;
use k8s_types::object::Kind;
use k8s_types::status::Status;
use k8s_types::Object;

use crate::registry::namespace::{prepare_for_finalize, should_delete_during_update};
use crate::server::ApiServer;
use crate::{errors, validation};

impl ApiServer {
    /// The `namespaces/finalize` update.
    pub(crate) fn finalize_namespace_object(
        &mut self,
        request: &Namespace,
    ) -> Result<Arc<Object>, Status> {
        let name = request.metadata.name.as_str();
        if name.is_empty() {
            return Err(crate::verbs::name_required());
        }
        let key = Kind::Namespace.key("", name);
        let old = self
            .store
            .get_shared(&key)
            .ok_or_else(|| Status::not_found(&Kind::Namespace, name))?;
        let Object::Namespace(stored) = &*old else {
            return Err(Status::internal("stored object has the wrong kind"));
        };
        if let Some(rv) = request
            .metadata
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty())
        {
            if Some(rv) != stored.metadata.resource_version.as_deref() {
                return Err(Status::conflict(&Kind::Namespace, name));
            }
        }
        let new = prepare_for_finalize(request, stored);
        let errs = validation::namespace::validate_namespace(&new);
        if !errs.is_empty() {
            return Err(Status::invalid(&Kind::Namespace, name, errs));
        }
        let expected = old.meta().resource_version_number();
        if should_delete_during_update(&new) {
            return self
                .storage_delete(&key, Some(expected))
                .map_err(|e| errors::from_store(e, &Kind::Namespace, name));
        }
        if new == **stored {
            return Ok(old);
        }
        self.storage_update(&key, Object::Namespace(Box::new(new)), Some(expected))
            .map_err(|e| errors::from_store(e, &Kind::Namespace, name))
    }
}
