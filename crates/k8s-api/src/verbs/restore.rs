//! `restore`: an object put back as existing cluster state, the way an etcd restore holds it (upstream
//! has no REST verb for this: `etcdctl snapshot restore` brings objects back exactly as they were
//! stored, and the apiserver serves them without re-admitting them). What a dump of a running cluster
//! (`kubectl get -A -o yaml`) needs: a bound, Running pod must stay bound and Running with its
//! admitted fields (priority, tolerations, `status.qosClass`) as written.
//!
//! Differences from [`ApiServer::create_object`]:
//! - no admission (the object was admitted when it was first created: Priority, DefaultTolerationSeconds,
//!   LimitRanger, ResourceQuota are not run again; a PriorityClass missing from the input does not
//!   reject a pod, which keeps its written `spec.priority`);
//! - no `PrepareForCreate`: `status`, `uid`, `creationTimestamp`, `generation` and `deletionTimestamp`
//!   are kept as written; only what is missing is filled (a uid from the revision, `creationTimestamp`
//!   from the clock, a pod's `qosClass` computed as upstream's strategy would, generation 1);
//! - defaulting still runs: upstream applies defaults when it decodes an object read from etcd too
//!   (`runtime.Decode` with the defaulting codec), and defaulting only fills absent fields;
//! - validation still runs, so a malformed object is `Invalid` with its field errors rather than
//!   stored (no component may be handed an object it cannot read).
//!
//! The store assigns a fresh resourceVersion (a foreign cluster's revisions mean nothing to this
//! store); restoring this store's own snapshot with its exact revisions is `MemStore::restored`.

use std::sync::Arc;

use k8s_types::meta::tick_timestamp_compact;
use k8s_types::status::Status;
use k8s_types::Object;

use crate::names::uid_for_revision;
use crate::qos::compute_pod_qos;
use crate::server::ApiServer;
use crate::{defaults, errors, registry, validation};

impl ApiServer {
    /// Restores `obj` as existing state (see the module documentation).
    ///
    /// # Errors
    /// `Invalid` with the field errors, `AlreadyExists` when the key is taken, a bad request for an
    /// object without a name.
    pub fn restore(&mut self, mut obj: Object) -> Result<Arc<Object>, Status> {
        obj.set_type_meta();
        registry::normalize_namespace(&mut obj);
        defaults::apply(&mut obj);
        if obj.meta().name.is_empty() {
            return Err(super::name_required());
        }
        let uid = uid_for_revision(self.store.revision() + 1);
        let now = self.now;
        {
            let meta = obj.meta_mut();
            meta.resource_version = None;
            if meta.uid.as_deref().is_none_or(str::is_empty) {
                meta.uid = Some(uid);
            }
            if meta.creation_timestamp.as_deref().is_none_or(str::is_empty) {
                meta.creation_timestamp = Some(tick_timestamp_compact(now));
            }
        }
        if let Object::Pod(p) = &mut obj {
            if p.status.qos_class.as_deref().is_none_or(str::is_empty) {
                p.status.qos_class = Some(compute_pod_qos(p).into());
            }
            if p.status.phase.as_deref().is_none_or(str::is_empty) {
                p.status.phase = Some(k8s_types::core::phases::PENDING.into());
            }
            if p.metadata.generation.is_none() {
                p.metadata.generation = Some(1);
            }
        }
        let kind = obj.kind();
        let name = obj.meta().name.clone();
        let errs = validation::validate_create(&obj);
        if !errs.is_empty() {
            return Err(Status::invalid(&kind, &name, errs));
        }
        let key = obj.key();
        self.store
            .create(&key, obj)
            .map_err(|e| errors::from_store(e, &kind, &name))
    }
}
