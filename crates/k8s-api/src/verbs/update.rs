//! `update` and `update_status` (upstream `store.go` `Update` and `rest.BeforeUpdate`): the stored
//! object must exist; a set `metadata.resourceVersion` must equal the stored one (else 409
//! Conflict); the kind's strategy keeps the stored status (update) or takes only the new status
//! (update_status); the result is validated and admitted, then written with compare-and-swap. An
//! update that changes nothing is not written (upstream `GuaranteedUpdate` skips identical
//! objects), so the resourceVersion stays. An update that removes the last garbage-collector
//! finalizer (`orphan`, `foregroundDeletion`) of an object being deleted with no grace period left
//! removes it (upstream `shouldDeleteDuringUpdate`).

use std::sync::Arc;

use k8s_types::admission::Operation;
use k8s_types::status::Status;
use k8s_types::Object;

use crate::server::ApiServer;
use crate::{apiextensions, defaults, errors, registry, validation};

impl ApiServer {
    /// Reads the stored object `obj` addresses and checks the resourceVersion precondition.
    fn stored_for_update(&self, obj: &Object) -> Result<Arc<Object>, Status> {
        let kind = obj.kind();
        let name = obj.meta().name.clone();
        if name.is_empty() {
            return Err(super::name_required());
        }
        let old = self
            .store
            .get_shared(&obj.key())
            .ok_or_else(|| Status::not_found(&kind, &name))?;
        if let Some(rv) = obj
            .meta()
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty())
        {
            if Some(rv) != old.meta().resource_version.as_deref() {
                return Err(Status::conflict(&kind, &name));
            }
        }
        Ok(old)
    }

    /// Validating admission, the no-op check and the compare-and-swap write shared by both verbs.
    fn finish_update(&mut self, mut new: Object, old: &Arc<Object>) -> Result<Arc<Object>, Status> {
        self.admission
            .validate(Operation::Update, &new, Some(old), self.store.as_ref())?;
        if registry::same_ignoring_resource_version(&mut new, old) {
            return Ok(Arc::clone(old));
        }
        let kind = new.kind();
        let name = new.meta().name.clone();
        let key = new.key();
        let expected = old.meta().resource_version_number();
        let emptied = super::delete::emptied_gc_finalizers(&new, old);
        let written = self
            .storage_update(&key, new, Some(expected))
            .map_err(|e| errors::from_store(e, &kind, &name))?;
        if !emptied {
            return Ok(written);
        }
        // Upstream `shouldDeleteDuringUpdate`: the update removed the last finalizer of an object
        // being deleted with no grace period left, so it is removed (watchers see MODIFIED then
        // DELETED).
        self.storage_delete(&key, None)
            .map_err(|e| errors::from_store(e, &kind, &name))
    }

    /// The update verb.
    pub(crate) fn update_object(&mut self, mut obj: Object) -> Result<Arc<Object>, Status> {
        obj.set_type_meta();
        let cr_schema = apiextensions::decode_custom_resource(self.store.as_ref(), &mut obj)?;
        registry::normalize_namespace(&mut obj);
        let old = self.stored_for_update(&obj)?;
        defaults::apply(&mut obj);
        self.admission
            .admit(Operation::Update, &mut obj, Some(&old), self.store.as_ref())?;
        registry::prepare_for_update(&mut obj, &old);
        let mut errs = validation::validate_update(&obj, &old);
        if let (Object::Other(u, namespaced), Object::Other(o, _)) = (&mut obj, &*old) {
            if let Some(schema) = &cr_schema {
                if apiextensions::has_status_subresource(self.store.as_ref(), u) {
                    // Upstream `customResourceStrategy.PrepareForUpdate`: with the status
                    // subresource on, only `/status` changes the status.
                    match o.rest.get("status") {
                        Some(st) => u.rest.insert("status".to_string(), st.clone()),
                        None => u.rest.remove("status"),
                    };
                }
                u.metadata.generation = apiextensions::next_generation(u, o);
                errs.extend(apiextensions::validate_custom_resource(
                    u,
                    *namespaced,
                    schema,
                ));
            } else if k8s_types::apiextensions::CustomResourceDefinition::from_unstructured(u)
                .is_some()
            {
                errs.extend(apiextensions::crd::validate_crd(u));
            }
        }
        let errs = validation::dedup(errs);
        if !errs.is_empty() {
            return Err(Status::invalid(&obj.kind(), &obj.meta().name, errs));
        }
        let key = obj.key();
        if let Object::Service(svc) = &mut obj {
            // A type change may need node ports (or an IP) the stored Service did not have.
            let errs = self.allocate_service(svc, Some(&key));
            if !errs.is_empty() {
                return Err(Status::invalid(
                    &k8s_types::Kind::Service,
                    &svc.metadata.name,
                    errs,
                ));
            }
        }
        self.finish_update(obj, &old)
    }

    /// The update_status verb (the `/status` subresource).
    pub(crate) fn update_object_status(&mut self, mut obj: Object) -> Result<Arc<Object>, Status> {
        obj.set_type_meta();
        let cr_schema = apiextensions::decode_custom_resource(self.store.as_ref(), &mut obj)?;
        registry::normalize_namespace(&mut obj);
        let old = self.stored_for_update(&obj)?;
        self.admission
            .admit(Operation::Update, &mut obj, Some(&old), self.store.as_ref())?;
        let new = registry::with_status_from(obj, &old);
        let mut errs = validation::validate_status_update(&new, &old);
        if let (Object::Other(u, namespaced), Some(schema)) = (&new, &cr_schema) {
            errs.extend(apiextensions::validate_custom_resource(
                u,
                *namespaced,
                schema,
            ));
        }
        let errs = validation::dedup(errs);
        if !errs.is_empty() {
            return Err(Status::invalid(&new.kind(), &new.meta().name, errs));
        }
        self.finish_update(new, &old)
    }
}
