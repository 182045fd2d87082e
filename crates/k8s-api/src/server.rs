//! [`ApiServer`]: kube-apiserver over an [`ObjectStore`], implementing
//! [`k8s_types::apiserver::ApiClient`]. The verbs live in [`crate::verbs`] (create, update,
//! update_status, delete, get/list/watch) and [`crate::subresources`] (`pods/binding`, `pods/eviction`,
//! `namespaces/finalize`); this file
//! holds the server's state and wiring.
//!
//! Upstream: `k8s.io/apiserver/pkg/registry/generic/registry/store.go` (the generic REST store every
//! built-in resource uses) with the per-kind strategies of `pkg/registry`.

use std::sync::Arc;

use k8s_types::admission::{MutatingAdmission, ValidatingAdmission};
use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::core::{Binding, Namespace, Pod};
use k8s_types::labels::LabelSelector;
use k8s_types::object::Kind;
use k8s_types::policy::Eviction;
use k8s_types::status::Status;
use k8s_types::store::{ObjectStore, WatchEvent};
use k8s_types::{Object, Resource, Shared, Tick};

use crate::admission::AdmissionChain;
use crate::pod_shares::PodShares;
use crate::watch_cache::NodeNameIndex;

/// The apiserver: the store, the clock (ticks) and the admission chain.
pub struct ApiServer {
    pub(crate) store: Box<dyn ObjectStore>,
    pub(crate) now: Tick,
    pub(crate) admission: AdmissionChain,
    /// Pods by `spec.nodeName` (the watch cache's field index), for kubelets' lists.
    node_index: NodeNameIndex,
    /// Inside [`ApiServer::dry_run`]: writes are checked, not stored ([`crate::dry_run`]).
    pub(crate) dry_run: bool,
    /// Recently stored pod specs, status lists and owner references, shared by equal ones
    /// ([`crate::pod_shares`]).
    pub(crate) pod_shares: PodShares,
}

impl ApiServer {
    /// An apiserver over `store` with the default admission chain (see [`crate::admission`]), at
    /// tick 0. It creates no objects: the namespaces `default` and `kube-system` are the cluster's
    /// to create.
    pub fn new(store: Box<dyn ObjectStore>) -> ApiServer {
        ApiServer::with_admission(store, AdmissionChain::with_default_plugins())
    }

    /// An apiserver over `store` with the given admission chain.
    pub fn with_admission(store: Box<dyn ObjectStore>, admission: AdmissionChain) -> ApiServer {
        ApiServer {
            store,
            now: 0,
            admission,
            node_index: NodeNameIndex::default(),
            dry_run: false,
            pod_shares: PodShares::default(),
        }
    }

    /// Sets the clock: timestamps written from now on (creationTimestamp, deletionTimestamp,
    /// condition times) render this tick.
    pub fn set_tick(&mut self, tick: Tick) {
        self.now = tick;
    }

    /// Read access to the store (etcd).
    pub fn store(&self) -> &dyn ObjectStore {
        self.store.as_ref()
    }

    /// Write access to the store, for operations outside the API such as compaction. Writing
    /// objects here bypasses defaulting, admission and validation (like writing to etcd directly).
    pub fn store_mut(&mut self) -> &mut dyn ObjectStore {
        self.store.as_mut()
    }

    /// etcd's compaction: forgets the history at or before `revision` (watches from before it answer
    /// `410 Gone`). The apiserver's own watcher, the `spec.nodeName` index, first reads up to the
    /// current revision, as kube-apiserver's watch cache is always ahead of a compaction.
    pub fn compact(&mut self, revision: i64) {
        self.node_index.catch_up(self.store.as_ref());
        self.store.compact(revision);
    }

    /// Appends a mutating admission plugin after the registered ones.
    pub fn add_mutating(&mut self, p: Box<dyn MutatingAdmission>) {
        self.admission.add_mutating(p);
    }

    /// Appends a validating admission plugin after the registered ones.
    pub fn add_validating(&mut self, p: Box<dyn ValidatingAdmission>) {
        self.admission.add_validating(p);
    }

    /// The admission chain.
    pub fn admission(&self) -> &AdmissionChain {
        &self.admission
    }

    /// kube-apiserver restarts over the same etcd: what it keeps in memory, the watch cache (here
    /// the `spec.nodeName` pod index), is dropped and rebuilt by a list at the next read, as the
    /// Cacher lists and watches etcd at startup (`k8s.io/apiserver/pkg/storage/cacher`). The store,
    /// the clock and the admission chain (configuration, no state) stay.
    pub fn restart(&mut self) {
        self.node_index = NodeNameIndex::default();
    }
}

impl ApiClient for ApiServer {
    fn now(&self) -> Tick {
        self.now
    }

    fn revision(&self) -> i64 {
        self.store.revision()
    }

    fn create(&mut self, obj: Object) -> Result<Object, Status> {
        self.create_object(obj).map(Arc::unwrap_or_clone)
    }

    fn create_shared(&mut self, obj: Object) -> Result<Arc<Object>, Status> {
        self.create_object(obj)
    }

    fn get(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Object, Status> {
        self.get_object(kind, namespace, name)
            .map(Arc::unwrap_or_clone)
    }

    fn get_shared(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Arc<Object>, Status> {
        self.get_object(kind, namespace, name)
    }

    fn list(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Object> {
        self.list_objects(kind, namespace, selector)
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .collect()
    }

    fn list_shared(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Arc<Object>> {
        self.list_objects(kind, namespace, selector)
    }

    fn update(&mut self, obj: Object) -> Result<Object, Status> {
        self.update_object(obj).map(Arc::unwrap_or_clone)
    }

    fn update_shared(&mut self, obj: Object) -> Result<Arc<Object>, Status> {
        self.update_object(obj)
    }

    fn list_pods_on_node(&self, node_name: &str) -> Vec<Pod> {
        // The `spec.nodeName` field selector, served from the watch cache's index.
        self.node_index
            .pods_on_node_typed(self.store.as_ref(), node_name)
    }

    fn list_pods_on_node_shared(&self, node_name: &str) -> Vec<Shared<Pod>> {
        self.node_index
            .pods_on_node(self.store.as_ref(), node_name)
            .into_iter()
            .filter_map(Shared::new)
            .collect()
    }

    fn update_status(&mut self, obj: Object) -> Result<Object, Status> {
        self.update_object_status(obj).map(Arc::unwrap_or_clone)
    }

    fn update_status_shared(&mut self, obj: Object) -> Result<Arc<Object>, Status> {
        self.update_object_status(obj)
    }

    fn delete(
        &mut self,
        kind: &Kind,
        namespace: &str,
        name: &str,
        options: DeleteOptions,
    ) -> Result<Object, Status> {
        self.delete_object(kind, namespace, name, options)
            .map(Arc::unwrap_or_clone)
    }

    fn bind(&mut self, binding: &Binding) -> Result<Pod, Status> {
        self.bind_pod(binding).and_then(|o| {
            Pod::from_object(Arc::unwrap_or_clone(o))
                .ok_or_else(|| Status::internal("stored object has the wrong kind"))
        })
    }

    fn bind_only(&mut self, binding: &Binding) -> Result<(), Status> {
        self.bind_pod(binding).map(|_| ())
    }

    fn evict(&mut self, eviction: &Eviction) -> Result<(), Status> {
        self.evict_pod(eviction)
    }

    fn finalize_namespace(&mut self, namespace: &Namespace) -> Result<Object, Status> {
        self.finalize_namespace_object(namespace)
            .map(Arc::unwrap_or_clone)
    }

    fn watch(&self, kind: &Kind, after_revision: i64) -> Result<Vec<WatchEvent>, Status> {
        self.watch_kind(kind, after_revision)
    }

    fn watch_each(
        &self,
        kind: &Kind,
        after_revision: i64,
        visit: &mut dyn FnMut(&WatchEvent),
    ) -> Result<(), Status> {
        self.watch_kind_each(kind, after_revision, visit)
    }
}
