//! The kube-apiserver contract ([`ApiClient`]): the only write path components use. Answers are
//! upstream `Status` errors. [`ApiExt`] adds typed helpers over any client.

use std::sync::Arc;

use crate::core::{Binding, Namespace, Pod};
use crate::labels::LabelSelector;
use crate::object::{Kind, Object, Resource, Shared};
use crate::policy::Eviction;
use crate::status::Status;
use crate::store::WatchEvent;
use crate::Tick;

/// Options of a delete (upstream `metav1.DeleteOptions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// Grace period in seconds (ticks). `None` uses the object's default (a bound pod's
    /// `terminationGracePeriodSeconds`); `Some(0)` deletes at once.
    pub grace_period_seconds: Option<i64>,
    /// Upstream `propagationPolicy`: whether and how the garbage collector deletes the object's
    /// dependents. `None` keeps what the object's finalizers say, else background.
    pub propagation_policy: Option<PropagationPolicy>,
}

/// Upstream `metav1.DeletionPropagation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropagationPolicy {
    /// `Orphan`: the dependents are kept and lose their owner reference (finalizer `orphan`).
    Orphan,
    /// `Background`: the object goes at once, the garbage collector deletes the dependents after.
    Background,
    /// `Foreground`: the object stays (finalizer `foregroundDeletion`) until the garbage collector
    /// has deleted every dependent that blocks its owner's deletion.
    Foreground,
}

impl PropagationPolicy {
    /// Parses upstream's value names.
    pub fn parse(s: &str) -> Option<PropagationPolicy> {
        match s {
            "Orphan" => Some(PropagationPolicy::Orphan),
            "Background" => Some(PropagationPolicy::Background),
            "Foreground" => Some(PropagationPolicy::Foreground),
            _ => None,
        }
    }
}

/// Upstream `metav1.FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN_DEPENDENTS: &str = "orphan";
/// Upstream `metav1.FinalizerDeleteDependents`.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// kube-apiserver: CRUD, subresources and watch over the store, with validation and admission.
pub trait ApiClient {
    /// The current tick (the apiserver's clock; timestamps are written from it).
    fn now(&self) -> Tick;

    /// The store's current revision.
    fn revision(&self) -> i64;

    /// Creates an object (defaulting, mutating admission, validation, validating admission, store).
    ///
    /// # Errors
    /// `AlreadyExists`, `Invalid` (with field causes), `Forbidden` (admission), `NotFound` (namespace).
    fn create(&mut self, obj: Object) -> Result<Object, Status>;

    /// Reads one object.
    ///
    /// # Errors
    /// `NotFound`.
    fn get(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Object, Status>;

    /// Lists objects of a kind, optionally in one namespace and matching a label selector, in key
    /// order (namespace, then name).
    fn list(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Object>;

    /// Replaces an object's spec and metadata (status is kept). When `metadata.resourceVersion` is
    /// set it must match the stored one.
    ///
    /// # Errors
    /// `NotFound`, `Conflict`, `Invalid`.
    fn update(&mut self, obj: Object) -> Result<Object, Status>;

    /// Replaces an object's status only (the `/status` subresource).
    ///
    /// # Errors
    /// `NotFound`, `Conflict`.
    fn update_status(&mut self, obj: Object) -> Result<Object, Status>;

    /// Deletes an object. A pod bound to a node is deleted gracefully: it gets a
    /// `deletionTimestamp` and stays until its kubelet finishes it (or the grace period is 0).
    ///
    /// # Errors
    /// `NotFound`.
    fn delete(
        &mut self,
        kind: &Kind,
        namespace: &str,
        name: &str,
        options: DeleteOptions,
    ) -> Result<Object, Status>;

    /// The `pods/binding` subresource: sets `spec.nodeName` of an unbound pod.
    ///
    /// # Errors
    /// `NotFound` (pod), `Conflict` (already bound).
    fn bind(&mut self, binding: &Binding) -> Result<Pod, Status>;

    /// [`ApiClient::bind`] for callers that do not read the bound pod (the scheduler's
    /// DefaultBinder, as upstream's `Bind` only checks the error): same effect and errors, without
    /// the returned copy. The default calls `bind`; a client that would copy the pod only to
    /// return it overrides this.
    ///
    /// # Errors
    /// As `bind`.
    fn bind_only(&mut self, binding: &Binding) -> Result<(), Status> {
        self.bind(binding).map(|_| ())
    }

    /// The `pods/eviction` subresource (a `create` of a `policy/v1` Eviction): deletes the pod
    /// when its PodDisruptionBudget allows it, after setting its `DisruptionTarget` condition.
    /// The default answers 405: a client that does not serve the subresource.
    ///
    /// # Errors
    /// `NotFound` (pod), `TooManyRequests` (429: the budget allows no disruption now),
    /// `InternalError` (more than one budget covers the pod), `Forbidden`.
    fn evict(&mut self, eviction: &Eviction) -> Result<(), Status> {
        let _ = eviction;
        Err(Status::method_not_supported("pods/eviction", "create"))
    }

    /// The `namespaces/finalize` subresource (upstream `FinalizeREST`): replaces a namespace's
    /// `spec.finalizers` only; a namespace being deleted that is left with no finalizers is removed.
    /// The default answers 405: a client that does not serve the subresource.
    ///
    /// # Errors
    /// `NotFound`, `Conflict` (stale resourceVersion), `Invalid` (a malformed finalizer name).
    fn finalize_namespace(&mut self, namespace: &Namespace) -> Result<Object, Status> {
        let _ = namespace;
        Err(Status::method_not_supported(
            "namespaces/finalize",
            "update",
        ))
    }

    /// Changes of a kind after `after_revision`, in revision order.
    ///
    /// # Errors
    /// `Gone` when the revision was compacted.
    fn watch(&self, kind: &Kind, after_revision: i64) -> Result<Vec<WatchEvent>, Status>;

    /// [`ApiClient::watch`] without collecting: `visit` sees each change in turn (an informer
    /// folds them into its cache and needs no list). The default collects through `watch`.
    ///
    /// # Errors
    /// `Gone` when the revision was compacted (then `visit` is not called).
    fn watch_each(
        &self,
        kind: &Kind,
        after_revision: i64,
        visit: &mut dyn FnMut(&WatchEvent),
    ) -> Result<(), Status> {
        for ev in self.watch(kind, after_revision)? {
            visit(&ev);
        }
        Ok(())
    }

    /// [`ApiClient::get`] answering with the stored object itself, shared (kube-apiserver's watch
    /// cache serves the same decoded object to every reader). The default copies `get`'s answer.
    ///
    /// # Errors
    /// As `get`.
    fn get_shared(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Arc<Object>, Status> {
        self.get(kind, namespace, name).map(Arc::new)
    }

    /// [`ApiClient::list`], shared (no copies); the default copies `list`'s answer.
    fn list_shared(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Arc<Object>> {
        self.list(kind, namespace, selector)
            .into_iter()
            .map(Arc::new)
            .collect()
    }

    /// [`ApiClient::create`] answering with the stored object shared, for callers that keep or drop
    /// it without changing it (an informer, the event recorder). The default wraps `create`.
    ///
    /// # Errors
    /// As `create`.
    fn create_shared(&mut self, obj: Object) -> Result<Arc<Object>, Status> {
        self.create(obj).map(Arc::new)
    }

    /// [`ApiClient::update`] answering with the stored object shared. The default wraps `update`.
    ///
    /// # Errors
    /// As `update`.
    fn update_shared(&mut self, obj: Object) -> Result<Arc<Object>, Status> {
        self.update(obj).map(Arc::new)
    }

    /// [`ApiClient::update_status`] answering with the stored object shared. The default wraps
    /// `update_status`.
    ///
    /// # Errors
    /// As `update_status`.
    fn update_status_shared(&mut self, obj: Object) -> Result<Arc<Object>, Status> {
        self.update_status(obj).map(Arc::new)
    }

    /// Pods bound to `node_name`, in key order: the kubelet's list with the field selector
    /// `spec.nodeName=<node>`. The default lists every pod and filters; an apiserver overrides it to
    /// avoid copying the pods of other nodes.
    fn list_pods_on_node(&self, node_name: &str) -> Vec<Pod> {
        self.list(&Kind::Pod, None, None)
            .into_iter()
            .filter_map(Pod::from_object)
            .filter(|p| p.node_name() == Some(node_name))
            .collect()
    }

    /// [`ApiClient::list_pods_on_node`], shared with the store (no copies). The default wraps the
    /// copied list.
    fn list_pods_on_node_shared(&self, node_name: &str) -> Vec<Shared<Pod>> {
        self.list_pods_on_node(node_name)
            .into_iter()
            .map(Shared::from_typed)
            .collect()
    }
}

/// Typed helpers over any [`ApiClient`] (including `dyn ApiClient`).
pub trait ApiExt: ApiClient {
    /// Typed [`ApiClient::get`].
    ///
    /// # Errors
    /// As `get`.
    fn get_typed<R: Resource>(&self, namespace: &str, name: &str) -> Result<R, Status> {
        let obj = self.get(&R::KIND, namespace, name)?;
        R::from_object(obj).ok_or_else(|| Status::internal("stored object has the wrong kind"))
    }

    /// Typed [`ApiClient::list`].
    fn list_typed<R: Resource>(
        &self,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<R> {
        self.list(&R::KIND, namespace, selector)
            .into_iter()
            .filter_map(R::from_object)
            .collect()
    }

    /// Typed [`ApiClient::create`].
    ///
    /// # Errors
    /// As `create`.
    fn create_typed<R: Resource>(&mut self, obj: R) -> Result<R, Status> {
        let created = self.create(obj.into_object())?;
        R::from_object(created).ok_or_else(|| Status::internal("stored object has the wrong kind"))
    }

    /// Typed [`ApiClient::update`].
    ///
    /// # Errors
    /// As `update`.
    fn update_typed<R: Resource>(&mut self, obj: R) -> Result<R, Status> {
        let updated = self.update(obj.into_object())?;
        R::from_object(updated).ok_or_else(|| Status::internal("stored object has the wrong kind"))
    }

    /// Typed [`ApiClient::update_status`].
    ///
    /// # Errors
    /// As `update_status`.
    fn update_status_typed<R: Resource>(&mut self, obj: R) -> Result<R, Status> {
        let updated = self.update_status(obj.into_object())?;
        R::from_object(updated).ok_or_else(|| Status::internal("stored object has the wrong kind"))
    }
}

impl<T: ApiClient + ?Sized> ApiExt for T {}
