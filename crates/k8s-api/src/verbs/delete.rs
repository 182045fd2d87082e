//! `delete` (upstream `store.go` `Delete`, `rest.BeforeDelete`, and the pod strategy's
//! `CheckGracefulDelete` in `pkg/registry/core/pod/strategy.go`).
//!
//! Pods are deleted gracefully: the grace period is `DeleteOptions.grace_period_seconds`, else the
//! pod's `terminationGracePeriodSeconds` (defaulted to 30), forced to 0 for a pod that is not bound
//! to a node or is already terminal (Succeeded/Failed), and a negative value counts as 1. The pod is
//! updated with `deletionTimestamp = now + grace` and `deletionGracePeriodSeconds = grace`
//! (generation +1); with grace 0 it is then removed at once (upstream writes that update too, so
//! watchers see MODIFIED then DELETED). A pod already being deleted can only have its grace period
//! shortened; a delete that does not shorten it changes nothing. A Namespace is not removed by its
//! first delete (upstream `pkg/registry/core/namespace/storage/storage.go` `REST.Delete`): it gets
//! a `deletionTimestamp` and phase `Terminating`, and the namespace controller empties it and
//! removes its `kubernetes` finalizer through `namespaces/finalize`, which removes it; a delete of a
//! terminating namespace that still has spec finalizers answers it unchanged. Every other kind is
//! removed at once, unless a garbage-collector finalizer is pending.
//!
//! `propagationPolicy` (upstream `deletionFinalizersForGarbageCollection`, `shouldOrphanDependents`,
//! `shouldDeleteDependents`, `markAsDeleting` in `staging/src/k8s.io/apiserver/pkg/registry/generic/
//! registry/store.go`): `Orphan` puts the finalizer `orphan` on the object, `Foreground`
//! `foregroundDeletion`, `Background` removes both; without a policy the object's own finalizer
//! decides. An object with one of these finalizers is not removed: it gets a `deletionTimestamp`
//! (now, `deletionGracePeriodSeconds: 0`, generation + 1) and stays until the garbage collector
//! has orphaned or deleted its dependents and removed the finalizer (the update that removes it
//! removes the object). Other finalizers are not waited for (docs/fidelity.md), and deleting an
//! owner in the background does not delete its dependents (that is the garbage collector's job).

use std::sync::Arc;

use k8s_types::admission::Operation;
use k8s_types::apiserver::{
    DeleteOptions, PropagationPolicy, FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS,
};
use k8s_types::meta::{tick_timestamp, tick_timestamp_compact, timestamp_tick, ObjectMeta};
use k8s_types::object::Kind;
use k8s_types::status::Status;
use k8s_types::Object;

use crate::server::ApiServer;
use crate::{errors, registry};

/// What a delete request does to a pod (upstream `BeforeDelete`'s `graceful`/`pendingGraceful`).
enum Graceful {
    /// Remove now, without an intermediate update.
    Immediately,
    /// Deletion already pending and not shortened: answer with the object unchanged.
    Pending,
    /// Write `deletionTimestamp`/`deletionGracePeriodSeconds` (and remove right after when the
    /// period is 0).
    Update { deletion_tick: u64, grace: i64 },
}

impl ApiServer {
    /// Upstream `BeforeDelete` + pod `CheckGracefulDelete`.
    fn pod_graceful(&self, old: &Object, options: DeleteOptions) -> Graceful {
        let Object::Pod(pod) = old else {
            return Graceful::Immediately;
        };
        let now = self.now;
        let requested = options.grace_period_seconds;
        if let Some(ts) = &pod.metadata.deletion_timestamp {
            let current = match pod.metadata.deletion_grace_period_seconds {
                None | Some(0) => return Graceful::Immediately,
                Some(c) => c,
            };
            return match requested {
                Some(p) if p < current => {
                    let p = p.max(0);
                    let start = timestamp_tick(ts)
                        .map(|t| t.saturating_sub(current.unsigned_abs()))
                        .unwrap_or(now);
                    Graceful::Update {
                        deletion_tick: start.saturating_add(p.unsigned_abs()),
                        grace: p,
                    }
                }
                _ => Graceful::Pending,
            };
        }
        let mut period = requested
            .or(pod.spec.termination_grace_period_seconds)
            .unwrap_or(0);
        if pod.node_name().is_none() || pod.is_terminal() {
            period = 0;
        }
        if period < 0 {
            period = 1;
        }
        Graceful::Update {
            deletion_tick: now.saturating_add(period.unsigned_abs()),
            grace: period,
        }
    }

    /// The delete verb.
    pub(crate) fn delete_object(
        &mut self,
        kind: &Kind,
        namespace: &str,
        name: &str,
        options: DeleteOptions,
    ) -> Result<Arc<Object>, Status> {
        if name.is_empty() {
            return Err(super::name_required());
        }
        let ns = registry::request_namespace(kind, namespace);
        let key = kind.key(&ns, name);
        let old = self
            .store
            .get_shared(&key)
            .ok_or_else(|| Status::not_found(kind, name))?;
        self.admission
            .validate(Operation::Delete, &old, Some(&old), self.store.as_ref())?;
        if let Object::Namespace(ns) = &*old {
            if ns.metadata.deletion_timestamp.is_none() {
                let mut updated = ns.clone();
                registry::namespace::begin_termination(&mut updated, tick_timestamp(self.now));
                let expected = old.meta().resource_version_number();
                return self
                    .storage_update(&key, Object::Namespace(updated), Some(expected))
                    .map_err(|e| errors::from_store(e, kind, name));
            }
            if !registry::namespace::spec_finalizers(ns).is_empty() {
                return Ok(old);
            }
        }
        // The garbage collector watches every typed kind but Event; a propagation finalizer on
        // an object it does not see (an Event, a custom resource) would never be removed, so
        // those are deleted as with Background (docs/fidelity.md).
        let collected = !matches!(kind, Kind::Other { .. } | Kind::Event);
        let finalizers =
            gc_finalizers(&old.meta().finalizers, options.propagation_policy).filter(|_| collected);
        let pending_gc = collected
            && finalizers
                .as_ref()
                .map_or(&old.meta().finalizers[..], |f| &f[..])
                .iter()
                .any(|f| is_gc_finalizer(f));
        let with_finalizers = |o: &Object| {
            let mut o = o.clone();
            if let Some(f) = &finalizers {
                o.meta_mut().finalizers = f.clone();
            }
            o
        };
        let expected = old.meta().resource_version_number();
        match self.pod_graceful(&old, options) {
            Graceful::Pending if finalizers.is_some() => self
                .storage_update(&key, with_finalizers(&old), Some(expected))
                .map_err(|e| errors::from_store(e, kind, name)),
            Graceful::Pending => Ok(old),
            Graceful::Immediately if pending_gc => {
                let mut updated = with_finalizers(&old);
                mark_as_deleting(updated.meta_mut(), self.now);
                self.storage_update(&key, updated, Some(expected))
                    .map_err(|e| errors::from_store(e, kind, name))
            }
            Graceful::Immediately => self
                .storage_delete(&key, None)
                .map_err(|e| errors::from_store(e, kind, name)),
            Graceful::Update {
                deletion_tick,
                grace,
            } => {
                let mut updated = with_finalizers(&old);
                let meta = updated.meta_mut();
                if meta.deletion_timestamp.is_none() {
                    if let Some(g) = meta.generation.filter(|g| *g > 0) {
                        meta.generation = Some(g.saturating_add(1));
                    }
                }
                meta.deletion_timestamp = Some(tick_timestamp_compact(deletion_tick));
                meta.deletion_grace_period_seconds = Some(grace);
                let written = self
                    .storage_update(&key, updated, Some(expected))
                    .map_err(|e| errors::from_store(e, kind, name))?;
                if grace > 0 || pending_gc {
                    return Ok(written);
                }
                self.storage_delete(&key, None)
                    .map_err(|e| errors::from_store(e, kind, name))
            }
        }
    }
}

/// The garbage collector's finalizers: `orphan` and `foregroundDeletion`.
pub(crate) fn is_gc_finalizer(f: &str) -> bool {
    f == FINALIZER_ORPHAN_DEPENDENTS || f == FINALIZER_DELETE_DEPENDENTS
}

/// Upstream `deletionFinalizersForGarbageCollection`: the object's finalizers with `orphan` /
/// `foregroundDeletion` set as the policy says (without a policy, as the object's own finalizers
/// say: `shouldOrphanDependents` takes the first of the two it finds, `shouldDeleteDependents`
/// `foregroundDeletion` when `orphan` is absent), or `None` when that changes nothing (compared as
/// sets).
fn gc_finalizers(
    finalizers: &[String],
    policy: Option<PropagationPolicy>,
) -> Option<k8s_types::ThinVec<String>> {
    let has = |f: &str| finalizers.iter().any(|x| x == f);
    let (orphan, foreground) = match policy {
        Some(PropagationPolicy::Orphan) => (true, false),
        Some(PropagationPolicy::Foreground) => (false, true),
        Some(PropagationPolicy::Background) => (false, false),
        None => {
            let first = finalizers.iter().find(|f| is_gc_finalizer(f));
            (
                first.is_some_and(|f| f == FINALIZER_ORPHAN_DEPENDENTS),
                !has(FINALIZER_ORPHAN_DEPENDENTS) && has(FINALIZER_DELETE_DEPENDENTS),
            )
        }
    };
    let mut new: k8s_types::ThinVec<String> = finalizers
        .iter()
        .filter(|f| !is_gc_finalizer(f))
        .cloned()
        .collect();
    if orphan {
        new.push(FINALIZER_ORPHAN_DEPENDENTS.to_string());
    }
    if foreground {
        new.push(FINALIZER_DELETE_DEPENDENTS.to_string());
    }
    let set = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
    (set(finalizers) != set(&new)).then_some(new)
}

/// Upstream `markAsDeleting`: generation + 1 (when set and not yet deleting), `deletionTimestamp`
/// now (kept when already set, so a repeated delete changes nothing), grace period 0.
fn mark_as_deleting(meta: &mut ObjectMeta, now: k8s_types::Tick) {
    if meta.deletion_timestamp.is_none() {
        if let Some(g) = meta.generation.filter(|g| *g > 0) {
            meta.generation = Some(g.saturating_add(1));
        }
        meta.deletion_timestamp = Some(tick_timestamp_compact(now));
    }
    meta.deletion_grace_period_seconds = Some(0);
}

/// Upstream `shouldDeleteDuringUpdate`, for the finalizers k8s-mini waits for: `new` (an update
/// of `old`) no longer has a garbage-collector finalizer that `old` had, and `old` was being
/// deleted with no grace period left.
pub(crate) fn emptied_gc_finalizers(new: &Object, old: &Object) -> bool {
    let (n, o) = (new.meta(), old.meta());
    o.deletion_timestamp.is_some()
        && o.deletion_grace_period_seconds == Some(0)
        && o.finalizers.iter().any(|f| is_gc_finalizer(f))
        && !n.finalizers.iter().any(|f| is_gc_finalizer(f))
}
