//! `create` (upstream `k8s.io/apiserver/pkg/registry/generic/registry/store.go` `Create` and
//! `rest.BeforeCreate`): type meta, a custom resource's decoding (scope, pruning and defaulting
//! by its CRD, [`crate::apiextensions`]), namespace, defaulting, mutating admission, the kind's
//! `PrepareForCreate`, system fields (uid, creationTimestamp), name generation, validation,
//! validating admission, the ResourceQuota charge (see [`crate::admission::resource_quota`]),
//! then the store.

use k8s_types::admission::Operation;
use k8s_types::status::Status;
use k8s_types::{Kind, Object};

use std::sync::Arc;

use crate::names::{generate_name, uid_for_revision, GENERATE_NAME_ATTEMPTS};
use crate::server::ApiServer;
use crate::{admission, apiextensions, defaults, errors, registry, validation};

impl ApiServer {
    /// Picks a name for an object that only has `generateName`: deterministic suffixes derived from
    /// the prefix and the store revision, skipping names already taken.
    fn generated_name(&self, obj: &Object, prefix: &str) -> String {
        let kind = obj.kind();
        let ns = obj.meta().namespace().to_string();
        let revision = self.store.revision();
        let mut name = generate_name(prefix, revision, 0);
        for attempt in 0..GENERATE_NAME_ATTEMPTS {
            name = generate_name(prefix, revision, attempt);
            if self.store.get(&kind.key(&ns, &name)).is_none() {
                break;
            }
        }
        name
    }

    /// ClusterIP and node port allocation (upstream `alloc.go`, run by the service storage's
    /// `BeginCreate`/`BeginUpdate`; here after validation, so a Service the validation refuses
    /// allocates nothing): what every other stored Service holds is taken.
    pub(crate) fn allocate_service(
        &self,
        svc: &mut k8s_types::core::Service,
        itself: Option<&str>,
    ) -> Vec<k8s_types::status::FieldError> {
        let prefix = k8s_types::Kind::Service.key_prefix();
        let others: Vec<_> = self
            .store
            .list(&prefix)
            .into_iter()
            .filter(|o| Some(o.key().as_str()) != itself)
            .filter_map(|o| match o {
                Object::Service(s) => Some((**s).clone()),
                _ => None,
            })
            .collect();
        registry::service::allocate(svc, &registry::service::Allocated::of(&others))
    }

    /// The create verb.
    pub(crate) fn create_object(&mut self, mut obj: Object) -> Result<Arc<Object>, Status> {
        obj.set_type_meta();
        let cr_schema = apiextensions::decode_custom_resource(self.store.as_ref(), &mut obj)?;
        registry::normalize_namespace(&mut obj);
        defaults::apply(&mut obj);
        self.admission
            .admit(Operation::Create, &mut obj, None, self.store.as_ref())?;
        registry::normalize_namespace(&mut obj);
        let uid = uid_for_revision(self.store.revision() + 1);
        registry::prepare_for_create(&mut obj, self.now, uid);
        let status_subresource = match &obj {
            Object::Other(u, _) if cr_schema.is_some() => {
                apiextensions::has_status_subresource(self.store.as_ref(), u)
            }
            _ => false,
        };
        if let Object::Other(u, _) = &mut obj {
            if cr_schema.is_some() {
                u.metadata.generation = Some(1);
                if status_subresource {
                    // Upstream `customResourceStrategy.PrepareForCreate`: a create cannot set
                    // the status when the status subresource is on.
                    u.rest.remove("status");
                }
            } else if k8s_types::apiextensions::CustomResourceDefinition::from_unstructured(u)
                .is_some()
            {
                u.metadata.generation = Some(1);
                apiextensions::crd::initial_status(u, self.now);
            }
        }
        if obj.meta().name.is_empty() {
            if let Some(prefix) = obj.meta().generate_name.clone().filter(|g| !g.is_empty()) {
                let name = self.generated_name(&obj, &prefix);
                obj.meta_mut().name = name;
            }
        }
        let kind = obj.kind();
        let errs = match (&obj, &cr_schema) {
            (Object::Other(u, namespaced), Some(schema)) => {
                apiextensions::validate_custom_resource(u, *namespaced, schema)
            }
            (Object::Other(u, _), None)
                if k8s_types::apiextensions::CustomResourceDefinition::from_unstructured(u)
                    .is_some() =>
            {
                apiextensions::crd::validate_crd(u)
            }
            _ => validation::validate_create(&obj),
        };
        if !errs.is_empty() {
            return Err(Status::invalid(&kind, &obj.meta().name, errs));
        }
        if let Object::Service(svc) = &mut obj {
            let errs = self.allocate_service(svc, None);
            if !errs.is_empty() {
                return Err(Status::invalid(&kind, &svc.metadata.name, errs));
            }
        }
        self.admission
            .validate(Operation::Create, &obj, None, self.store.as_ref())?;
        if self.admission.quota_enabled() {
            let charged = admission::resource_quota::evaluate(&obj, self.store.as_ref(), self.now)?;
            for q in charged {
                let (qkey, qname) = (
                    Kind::ResourceQuota.key(q.metadata.namespace(), &q.metadata.name),
                    q.metadata.name.clone(),
                );
                let expected = q.metadata.resource_version_number();
                self.storage_update(&qkey, Object::ResourceQuota(Box::new(q)), Some(expected))
                    .map_err(|e| errors::from_store(e, &Kind::ResourceQuota, &qname))?;
            }
        }
        let key = obj.key();
        // The key ends with the name (kept for an error without copying it).
        let name_at = key.len() - obj.meta().name.len();
        self.storage_create(&key, obj)
            .map_err(|e| errors::from_store(e, &kind, &key[name_at..]))
    }
}
