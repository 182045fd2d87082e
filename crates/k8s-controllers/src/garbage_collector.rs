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
//! Not modelled: foreground deletion (`foregroundDeletion` finalizer, `blockOwnerDeletion`), the
//! orphan policy, and the `OwnerRefInvalidNamespace` event.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::informer::{object_key, Delta, SharedInformerFactory};
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
}

/// Every kind the collector knows, [`Kind::TYPED`] then [`Kind::ALPHA`] then
/// [`Kind::UNSERVED`] then DRA's [`Kind::RESOURCE`] (so the queue keys of the older kinds keep
/// their indexes).
fn gc_kinds() -> impl Iterator<Item = &'static Kind> {
    Kind::TYPED
        .iter()
        .chain(Kind::ALPHA.iter())
        .chain(Kind::UNSERVED.iter())
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
                    Ok(o) if o.meta().uid.as_deref() == Some(r.uid.as_str()) => OwnerState::Solid,
                    Ok(_) => OwnerState::Dangling,
                    Err(e) if e.is_not_found() => OwnerState::Dangling,
                    Err(_) => OwnerState::Solid,
                };
            }
        };
        let key = if kind.namespaced() {
            format!("{dependent_ns}/{}", r.name)
        } else {
            r.name.clone()
        };
        let uid_matches = |o: &Object| o.meta().uid.as_deref() == Some(r.uid.as_str());
        let present = match informers.informer(&kind) {
            Some(i) => i.get(&key).is_some_and(|o| uid_matches(o)),
            // Events are not watched (nothing owns through them); ask the apiserver.
            None => api
                .get_shared(&kind, dependent_ns, &r.name)
                .is_ok_and(|o| uid_matches(&o)),
        };
        if present {
            OwnerState::Solid
        } else {
            OwnerState::Dangling
        }
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
        if !dangling {
            return Ok(());
        }
        if !solid {
            tracing::debug!(object = %obj.display_name(), kind = %kind.name(), "deleting object whose owners are gone");
            return match api.delete(kind, meta.namespace(), &meta.name, DeleteOptions::default()) {
                Ok(_) => Ok(()),
                Err(e) if e.is_not_found() => Ok(()),
                Err(e) => Err(e.into()),
            };
        }
        let mut patched = Arc::unwrap_or_clone(obj);
        let refs = std::mem::take(&mut patched.meta_mut().owner_references);
        patched.meta_mut().owner_references = refs
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
        self.attempt_to_delete(api, informers, &kind, key)?;
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
