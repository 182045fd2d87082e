//! The garbage collector, after upstream `pkg/controller/garbagecollector/garbagecollector.go`
//! (`attemptToDeleteItem`, `classifyReferences`) with background cascading deletion.
//!
//! Each tick it brings its snapshot of every object k8s-mini types up to date (a [`WatchCache`] per
//! kind: watch events since the last pass, as upstream's graph builder consumes informer events),
//! then for every object with
//! `ownerReferences` that is not already being deleted, classifies each owner reference as
//! *solid* (an object of that kind and name exists, in the dependent's namespace or cluster-wide
//! for cluster-scoped kinds, with the same uid) or *dangling* (missing, or a different uid). With no
//! solid owner and at least one dangling one the object is deleted (default grace period); with
//! both, the dangling references are removed. Owner kinds k8s-mini cannot resolve (unknown
//! custom resources) count as solid: upstream cannot map them either and never deletes for them.
//!
//! Because the snapshot is taken once per pass, a cascade advances one level per tick: deleting a
//! Deployment removes its ReplicaSets on the next pass and their pods on the one after.
//!
//! Not modelled: foreground deletion (`foregroundDeletion` finalizer, `blockOwnerDeletion`), the
//! orphan policy, and the `OwnerRefInvalidNamespace` event.

use std::collections::BTreeSet;

use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::controller::{Controller, ReconcileReason};
use k8s_types::meta::OwnerReference;
use k8s_types::object::UNSIMULATED_BUILTIN_KINDS;
use k8s_types::{Kind, Object};

use crate::watch_cache::WatchCache;

/// The controller name upstream registers (`garbagecollector`).
pub const GARBAGE_COLLECTOR_NAME: &str = "garbagecollector";

/// kube-controller-manager's garbage collector (background cascading deletion).
#[derive(Clone, Debug)]
pub struct GarbageCollector {
    /// One cache per kind of [`Kind::TYPED`], in that order.
    caches: Vec<WatchCache>,
    /// Identities of every cached object.
    present: BTreeSet<Identity>,
    /// (kind index, store key) of the cached objects with owners that are not being deleted, in
    /// pass order.
    dependents: BTreeSet<(usize, String)>,
}

impl Default for GarbageCollector {
    fn default() -> Self {
        Self::new()
    }
}

fn identity(o: &Object) -> Identity {
    let m = o.meta();
    (
        o.kind().name().to_string(),
        m.namespace().to_string(),
        m.name.clone(),
        m.uid.clone().unwrap_or_default(),
    )
}

/// What one owner reference points to, as classified this pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OwnerState {
    /// The owner exists with the referenced uid.
    Solid,
    /// The owner is missing or has another uid.
    Dangling,
}

/// (kind name, namespace, name, uid) of an object present at the start of the pass.
type Identity = (String, String, String, String);

impl GarbageCollector {
    /// The collector; its caches fill at the first pass.
    pub fn new() -> Self {
        GarbageCollector {
            caches: Kind::TYPED.iter().cloned().map(WatchCache::new).collect(),
            present: BTreeSet::new(),
            dependents: BTreeSet::new(),
        }
    }

    /// Applies the changes since the previous pass to `present` and `dependents`.
    fn refresh(&mut self, api: &dyn ApiClient) {
        for (i, cache) in self.caches.iter_mut().enumerate() {
            for (key, old) in cache.sync(api) {
                if let Some(o) = old {
                    self.present.remove(&identity(&o));
                }
                let entry = (i, key);
                self.dependents.remove(&entry);
                if let Some(o) = cache.get(&entry.1) {
                    self.present.insert(identity(o));
                    let m = o.meta();
                    if !m.owner_references.is_empty() && m.deletion_timestamp.is_none() {
                        self.dependents.insert(entry);
                    }
                }
            }
        }
    }

    fn classify(
        api: &dyn ApiClient,
        present: &BTreeSet<Identity>,
        dependent_ns: &str,
        r: &OwnerReference,
    ) -> OwnerState {
        let kind = match Kind::typed(&r.api_version, &r.kind) {
            Some(k) => k,
            None => {
                let Some((_, namespaced)) = UNSIMULATED_BUILTIN_KINDS
                    .iter()
                    .find(|(name, _)| *name == r.kind)
                else {
                    // Unknown kind: cannot be resolved, never deleted for.
                    return OwnerState::Solid;
                };
                let kind = Kind::Other {
                    api_version: r.api_version.clone(),
                    kind: r.kind.clone(),
                    namespaced: *namespaced,
                };
                let ns = if *namespaced { dependent_ns } else { "" };
                return match api.get(&kind, ns, &r.name) {
                    Ok(o) if o.meta().uid.as_deref() == Some(r.uid.as_str()) => OwnerState::Solid,
                    Ok(_) => OwnerState::Dangling,
                    Err(e) if e.is_not_found() => OwnerState::Dangling,
                    Err(_) => OwnerState::Solid,
                };
            }
        };
        let ns = if kind.namespaced() { dependent_ns } else { "" };
        let id = (
            kind.name().to_string(),
            ns.to_string(),
            r.name.clone(),
            r.uid.clone(),
        );
        if present.contains(&id) {
            OwnerState::Solid
        } else {
            OwnerState::Dangling
        }
    }

    /// One pass (upstream: `attemptToDeleteItem` for every object with owners).
    fn collect(&mut self, api: &mut dyn ApiClient) {
        self.refresh(&*api);
        let present = &self.present;
        for (i, key) in &self.dependents {
            let Some(obj) = self.caches.get(*i).and_then(|c| c.get(key)) else {
                continue;
            };
            let meta = obj.meta();
            let states: Vec<OwnerState> = meta
                .owner_references
                .iter()
                .map(|r| Self::classify(api, present, meta.namespace(), r))
                .collect();
            let solid = states.contains(&OwnerState::Solid);
            let dangling = states.contains(&OwnerState::Dangling);
            if !dangling {
                continue;
            }
            let kind = obj.kind();
            if !solid {
                tracing::debug!(object = %obj.display_name(), kind = %kind.name(), "deleting object whose owners are gone");
                match api.delete(
                    &kind,
                    meta.namespace(),
                    &meta.name,
                    DeleteOptions::default(),
                ) {
                    Ok(_) => {}
                    Err(e) if e.is_not_found() => {}
                    Err(e) => tracing::debug!(error = %e, "garbage collector delete failed"),
                }
            } else {
                let mut patched = obj.clone();
                let refs = meta.owner_references.clone();
                patched.meta_mut().owner_references = refs
                    .into_iter()
                    .zip(states)
                    .filter(|(_, s)| *s == OwnerState::Solid)
                    .map(|(r, _)| r)
                    .collect();
                if let Err(e) = api.update(patched) {
                    tracing::debug!(error = %e, "garbage collector could not remove dangling owner references");
                }
            }
        }
    }
}

impl Controller for GarbageCollector {
    fn name(&self) -> &str {
        GARBAGE_COLLECTOR_NAME
    }

    fn reconcile(&mut self, api: &mut dyn ApiClient) {
        tracing::trace!(reason = %ReconcileReason::BulkReconcile, "garbage collector pass");
        self.collect(api);
    }
}
