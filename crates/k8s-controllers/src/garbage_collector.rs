//! The garbage collector, after upstream `pkg/controller/garbagecollector/garbagecollector.go`
//! (`attemptToDeleteItem`, `classifyReferences`) with background cascading deletion.
//!
//! It reads every typed kind from the shared informers (upstream's graph builder consumes informer
//! events for every resource). Event handlers: an object that gains owners (or is added with
//! some) is queued; an object deleted, or replaced by one with another uid, queues its dependents
//! (the informers' owner-uid index). The sync of one dependent (not being deleted) classifies each
//! owner reference as
//! *solid* (an object of that kind and name exists, in the dependent's namespace or cluster-wide
//! for cluster-scoped kinds, with the same uid) or *dangling* (missing, or a different uid). With no
//! solid owner and at least one dangling one the object is deleted (default grace period); with
//! both, the dangling references are removed. A custom resource owner resolves through the CRD
//! serving its kind; owner kinds nothing resolves count as solid: upstream cannot map them either
//! and never deletes for them. The collector's informers are the typed kinds, so the deletion of a
//! custom resource queues nothing: its dependents go when they are next synced (a change of
//! theirs, or the 12 h resync), where upstream's graph builder watches custom resources too.
//!
//! The informers reflect the apiserver at the start of the collector's turn, so a cascade advances
//! one level per tick: deleting a Deployment removes its ReplicaSets in that tick's turn and their
//! pods in the next one.
//!
//! Owners *outside the input* (`GarbageCollector::with_external_owners`: the uids a loaded dump's
//! objects name as owners without the owners being in it) count as solid: k8s-mini treats them as
//! living outside the part of the cluster it was given, where upstream's collector, seeing the
//! whole cluster, would find them.
//!
//! Deletion with a propagation policy (the apiserver puts the finalizer on the owner and keeps it):
//! - `orphan` (upstream `attemptToOrphanWorker`, `orphanDependents`): the owner's reference is
//!   removed from every dependent, then the finalizer from the owner, which the apiserver then
//!   removes;
//! - `foregroundDeletion` (upstream `processDeletingDependentsItem`): while the owner has
//!   dependents whose reference to it sets `blockOwnerDeletion`, those not themselves deleting
//!   their dependents are deleted; an owner in that state is neither solid nor dangling for its
//!   dependents but *waiting for dependents deletion* (`classifyReferences`), so a dependent with
//!   no other solid owner is deleted, in the foreground when it has dependents itself, and one
//!   with a solid owner only loses the reference. Once no blocking dependent is left the
//!   finalizer is removed and the apiserver removes the owner. A cascade so advances one level
//!   per tick, and waits for each pod's graceful termination.
//!
//! Not modelled: the `OwnerRefInvalidNamespace` event and the cycle detection of foreground
//! deletion (`unblockOwnerReferences`).

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_types::apiserver::{
    ApiClient, DeleteOptions, PropagationPolicy, FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::informer::{namespaced_key, object_key, Delta, SharedInformerFactory};
use k8s_types::meta::OwnerReference;
use k8s_types::object::UNSIMULATED_BUILTIN_KINDS;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object};

/// The controller name upstream registers (`garbagecollector`).
pub const GARBAGE_COLLECTOR_NAME: &str = "garbagecollector";

/// kube-controller-manager's garbage collector (background cascading deletion).
#[derive(Clone, Debug, Default)]
pub struct GarbageCollector {
    /// Owner uids that live outside the input (see the module documentation).
    external_owners: BTreeSet<String>,
}

/// What one owner reference points to, as classified this pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OwnerState {
    /// The owner exists with the referenced uid.
    Solid,
    /// The owner is missing or has another uid.
    Dangling,
    /// The owner exists but is being deleted in the foreground (`foregroundDeletion`): upstream's
    /// `waitingForDependentsDeletion`.
    Waiting,
}

fn has_finalizer(o: &Object, f: &str) -> bool {
    o.meta().finalizers.iter().any(|x| x == f)
}

/// Upstream `isDeletingDependents`: being deleted with the `foregroundDeletion` finalizer.
fn deleting_dependents(o: &Object) -> bool {
    o.meta().deletion_timestamp.is_some() && has_finalizer(o, FINALIZER_DELETE_DEPENDENTS)
}

/// The state of an owner that exists with the referenced uid.
fn present(owner: &Object) -> OwnerState {
    if deleting_dependents(owner) {
        OwnerState::Waiting
    } else {
        OwnerState::Solid
    }
}

/// Every kind the collector knows, [`Kind::TYPED`] then [`Kind::ALPHA`] then
/// [`Kind::HISTORY`] then DRA's [`Kind::RESOURCE`] (so the queue keys of the older kinds keep
/// their indexes).
fn gc_kinds() -> impl Iterator<Item = &'static Kind> {
    Kind::TYPED
        .iter()
        .chain(Kind::ALPHA.iter())
        .chain(Kind::HISTORY.iter())
        .chain(Kind::RESOURCE.iter())
}

/// The queue key of a dependent: `<index in gc_kinds()>:<namespace/name>`, so keys sort by kind
/// index then by object key.
fn queue_key(kind: &Kind, key: &str) -> Option<String> {
    let i = gc_kinds().position(|k| k == kind)?;
    // Two digits: as strings, "10:..." would sort before "2:...".
    Some(format!("{i:02}:{key}"))
}

fn parse_queue_key(qk: &str) -> Option<(Kind, &str)> {
    let (i, key) = qk.split_once(':')?;
    let kind = gc_kinds().nth(i.parse::<usize>().ok()?)?.clone();
    Some((kind, key))
}

/// The owners' uids of an object (empty when it has none).
fn owner_uids(o: Option<&Arc<Object>>) -> Vec<&str> {
    o.map(|o| {
        o.meta()
            .owner_references
            .iter()
            .map(|r| r.uid.as_str())
            .collect()
    })
    .unwrap_or_default()
}

impl GarbageCollector {
    /// The collector.
    pub fn new() -> Self {
        GarbageCollector::default()
    }

    /// A collector for which the owners with these uids exist (outside the input).
    pub fn with_external_owners(uids: BTreeSet<String>) -> Self {
        GarbageCollector {
            external_owners: uids,
        }
    }

    fn classify(
        api: &dyn ApiClient,
        informers: &SharedInformerFactory,
        dependent_ns: &str,
        r: &OwnerReference,
    ) -> OwnerState {
        let kind = match Kind::typed(&r.api_version, &r.kind) {
            Some(k) => k,
            None => {
                let builtin = UNSIMULATED_BUILTIN_KINDS
                    .iter()
                    .find(|(name, _)| *name == r.kind)
                    .map(|(_, namespaced)| *namespaced);
                // A custom kind resolves through the CRD serving it (upstream's RESTMapper
                // learns CRDs from discovery).
                let namespaced = builtin.or_else(|| custom_kind_scope(api, r));
                let Some(namespaced) = namespaced else {
                    // Unknown kind: cannot be resolved, never deleted for.
                    return OwnerState::Solid;
                };
                let kind = Kind::Other {
                    api_version: r.api_version.clone(),
                    kind: r.kind.clone(),
                    namespaced,
                };
                let ns = if namespaced { dependent_ns } else { "" };
                return match api.get_shared(&kind, ns, &r.name) {
                    Ok(o) if o.meta().uid.as_deref() == Some(r.uid.as_str()) => present(&o),
                    Ok(_) => OwnerState::Dangling,
                    Err(e) if e.is_not_found() => OwnerState::Dangling,
                    Err(_) => OwnerState::Solid,
                };
            }
        };
        let key = if kind.namespaced() {
            namespaced_key(dependent_ns, &r.name)
        } else {
            r.name.clone()
        };
        let uid_matches = |o: &Object| o.meta().uid.as_deref() == Some(r.uid.as_str());
        let owner = match informers.informer(&kind) {
            Some(i) => i.get(&key).filter(|o| uid_matches(o)).cloned(),
            // Events are not watched (nothing owns through them); ask the apiserver.
            None => api
                .get_shared(&kind, dependent_ns, &r.name)
                .ok()
                .filter(|o| uid_matches(o)),
        };
        owner.map_or(OwnerState::Dangling, |o| present(&o))
    }

    /// The dependents of the object with `uid`, every kind, as (kind, object).
    fn dependents<'a>(
        &self,
        informers: &'a SharedInformerFactory,
        uid: &str,
    ) -> Vec<(Kind, &'a Arc<Object>)> {
        let mut out = Vec::new();
        for kind in self.informers() {
            if let Some(inf) = informers.informer(&kind) {
                for d in inf.dependents_of(uid) {
                    out.push((kind.clone(), d));
                }
            }
        }
        out
    }

    /// Removes `finalizer` from `owner` (the apiserver then removes the object when no
    /// garbage-collector finalizer is left and its grace period is over).
    fn remove_finalizer(
        api: &mut dyn ApiClient,
        owner: &Arc<Object>,
        finalizer: &str,
    ) -> Result<(), SyncError> {
        let mut patched = Object::clone(owner);
        patched.meta_mut().finalizers.retain(|f| f != finalizer);
        match api.update_shared(patched) {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Upstream `attemptToOrphanWorker`: every dependent loses its reference to `owner`, then the
    /// owner its `orphan` finalizer.
    fn orphan_dependents(
        &self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        owner: &Arc<Object>,
    ) -> Result<(), SyncError> {
        let uid = owner.meta().uid.clone().unwrap_or_default();
        for (_, dep) in self.dependents(informers, &uid) {
            let mut patched = Object::clone(dep);
            patched.meta_mut().owner_references.retain(|r| r.uid != uid);
            match api.update_shared(patched) {
                Ok(_) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        Self::remove_finalizer(api, owner, FINALIZER_ORPHAN_DEPENDENTS)
    }

    /// Upstream `processDeletingDependentsItem`: without blocking dependents the owner loses its
    /// `foregroundDeletion` finalizer; else each blocking dependent not deleting its own
    /// dependents is attempted (`attemptToDeleteItem`).
    fn process_deleting_dependents(
        &self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        owner: &Arc<Object>,
    ) -> Result<(), SyncError> {
        let uid = owner.meta().uid.clone().unwrap_or_default();
        let blocking: Vec<(Kind, &Arc<Object>)> = self
            .dependents(informers, &uid)
            .into_iter()
            .filter(|(_, d)| {
                d.meta()
                    .owner_references
                    .iter()
                    .any(|r| r.uid == uid && r.block_owner_deletion == Some(true))
            })
            .collect();
        if blocking.is_empty() {
            return Self::remove_finalizer(api, owner, FINALIZER_DELETE_DEPENDENTS);
        }
        for (kind, dep) in blocking {
            if !deleting_dependents(dep) {
                self.attempt_to_delete(api, informers, &kind, &object_key(dep))?;
            }
        }
        Ok(())
    }

    /// Upstream `attemptToDeleteItem` for one dependent.
    fn attempt_to_delete(
        &self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        kind: &Kind,
        key: &str,
    ) -> Result<(), SyncError> {
        let Some(obj) = informers.informer(kind).and_then(|i| i.get(key)).cloned() else {
            return Ok(());
        };
        let meta = obj.meta();
        if meta.owner_references.is_empty() || meta.deletion_timestamp.is_some() {
            return Ok(());
        }
        let states: Vec<OwnerState> = meta
            .owner_references
            .iter()
            .map(|r| {
                if self.external_owners.contains(&r.uid) {
                    OwnerState::Solid
                } else {
                    Self::classify(&*api, informers, meta.namespace(), r)
                }
            })
            .collect();
        let solid = states.contains(&OwnerState::Solid);
        let dangling = states.contains(&OwnerState::Dangling);
        let waiting = states.contains(&OwnerState::Waiting);
        if !dangling && !waiting {
            return Ok(());
        }
        if !solid {
            tracing::debug!(object = %obj.display_name(), kind = %kind.name(), "deleting object whose owners are gone");
            // Upstream: in the foreground when an owner waits for its dependents and this
            // object has dependents of its own; else as the object's finalizers say
            // (background without one).
            let uid = meta.uid.clone().unwrap_or_default();
            let propagation_policy = (waiting && !self.dependents(informers, &uid).is_empty())
                .then_some(PropagationPolicy::Foreground);
            let opts = DeleteOptions {
                propagation_policy,
                ..Default::default()
            };
            return match api.delete(kind, meta.namespace(), &meta.name, opts) {
                Ok(_) => Ok(()),
                Err(e) if e.is_not_found() => Ok(()),
                Err(e) => Err(e.into()),
            };
        }
        let mut patched = Arc::unwrap_or_clone(obj);
        let refs = std::mem::take(&mut patched.meta_mut().owner_references);
        patched.meta_mut().owner_references = refs
            .into_inner()
            .into_iter()
            .zip(states)
            .filter(|(_, s)| *s == OwnerState::Solid)
            .map(|(r, _)| r)
            .collect();
        api.update_shared(patched).map(|_| ()).map_err(Into::into)
    }
}

impl Controller for GarbageCollector {
    fn name(&self) -> &str {
        GARBAGE_COLLECTOR_NAME
    }

    /// Every typed kind but Event: events are written by recorders, never with owners, and are
    /// the most numerous objects, so the collector does not cache them.
    fn informers(&self) -> Vec<Kind> {
        gc_kinds().filter(|k| **k != Kind::Event).cloned().collect()
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        // The object itself, when it has owners it did not have before (or it came back from
        // being deleted): its owners must be checked.
        if let Some(new) = &change.new {
            let before = owner_uids(change.old.as_ref());
            let gained = new
                .meta()
                .owner_references
                .iter()
                .any(|r| !before.contains(&r.uid.as_str()));
            let undeleted = change
                .old
                .as_ref()
                .is_some_and(|o| o.meta().deletion_timestamp.is_some())
                && new.meta().deletion_timestamp.is_none();
            if gained || undeleted {
                if let Some(qk) = queue_key(&change.kind, &change.key) {
                    queue.add(qk);
                }
            }
        }
        // An owner being deleted with a garbage-collector finalizer is processed itself; one that
        // starts deleting in the foreground also queues its dependents (upstream
        // `startsWaitingForDependentsDeleted`), which then see it waiting.
        if let Some(new) = change.new.as_deref() {
            let gc_pending = new.meta().deletion_timestamp.is_some()
                && (has_finalizer(new, FINALIZER_ORPHAN_DEPENDENTS)
                    || has_finalizer(new, FINALIZER_DELETE_DEPENDENTS));
            if gc_pending {
                if let Some(qk) = queue_key(&change.kind, &change.key) {
                    queue.add(qk);
                }
            }
            let started =
                deleting_dependents(new) && !change.old.as_deref().is_some_and(deleting_dependents);
            if let (true, Some(uid)) = (started, new.meta().uid.as_deref()) {
                for (kind, dep) in self.dependents(informers, uid) {
                    if let Some(qk) = queue_key(&kind, &object_key(dep)) {
                        queue.add(qk);
                    }
                }
            }
        }
        // A dependent gone: an owner waiting for it may now lose its finalizer.
        if let (Some(old), None) = (change.old.as_deref(), change.new.as_ref()) {
            for r in &old.meta().owner_references {
                let Some(kind) = Kind::typed(&r.api_version, &r.kind) else {
                    continue;
                };
                let key = if kind.namespaced() {
                    namespaced_key(old.meta().namespace(), &r.name)
                } else {
                    r.name.clone()
                };
                let waiting = informers
                    .informer(&kind)
                    .and_then(|i| i.get(&key))
                    .is_some_and(|o| deleting_dependents(o));
                if waiting {
                    if let Some(qk) = queue_key(&kind, &key) {
                        queue.add(qk);
                    }
                }
            }
        }
        // Its dependents, when the object with the old uid is gone.
        let old_uid = change.old.as_ref().and_then(|o| o.meta().uid.clone());
        let new_uid = change.new.as_ref().and_then(|o| o.meta().uid.clone());
        if let Some(uid) = old_uid.filter(|u| Some(u) != new_uid.as_ref()) {
            for kind in &self.informers() {
                let Some(inf) = informers.informer(kind) else {
                    continue;
                };
                for dep in inf.dependents_of(&uid) {
                    if let Some(qk) = queue_key(kind, &object_key(dep)) {
                        queue.add(qk);
                    }
                }
            }
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some((kind, key)) = parse_queue_key(key) else {
            return Ok(Action::AwaitChange);
        };
        let obj = informers.informer(&kind).and_then(|i| i.get(key)).cloned();
        match obj {
            Some(o) if o.meta().deletion_timestamp.is_some() => {
                if has_finalizer(&o, FINALIZER_ORPHAN_DEPENDENTS) {
                    self.orphan_dependents(api, informers, &o)?;
                } else if has_finalizer(&o, FINALIZER_DELETE_DEPENDENTS) {
                    self.process_deleting_dependents(api, informers, &o)?;
                }
            }
            _ => self.attempt_to_delete(api, informers, &kind, key)?,
        }
        Ok(Action::AwaitChange)
    }
}

/// Whether the owner's kind is a namespaced custom resource (`Some(true)`), a cluster-scoped one
/// (`Some(false)`), or served by no CRD (`None`).
fn custom_kind_scope(api: &dyn ApiClient, r: &OwnerReference) -> Option<bool> {
    use k8s_types::apiextensions::{crd_kind, CustomResourceDefinition};
    api.list_shared(&crd_kind(), None, None)
        .iter()
        .filter_map(|o| CustomResourceDefinition::from_object(o)?.ok())
        .find(|c| c.served(&r.api_version, &r.kind).is_some())
        .map(|c| c.namespaced())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Queue keys sort by kind in `Kind::TYPED` order: a ReplicaSet (index 7) before a Pod (index
    /// 18), though "18" < "7" as strings, and round-trip through `parse_queue_key`.
    #[test]
    fn queue_keys_sort_in_typed_order_and_round_trip() {
        let rs = queue_key(&Kind::ReplicaSet, "default/web-1").unwrap();
        let pod = queue_key(&Kind::Pod, "default/a").unwrap();
        let ns = queue_key(&Kind::Namespace, "z").unwrap();
        assert_eq!(
            (rs.as_str(), pod.as_str()),
            ("07:default/web-1", "18:default/a")
        );
        let mut keys = vec![pod.clone(), rs.clone(), ns.clone()];
        keys.sort();
        assert_eq!(keys, [ns, rs.clone(), pod]);
        assert_eq!(
            parse_queue_key(&rs),
            Some((Kind::ReplicaSet, "default/web-1"))
        );
    }
}
