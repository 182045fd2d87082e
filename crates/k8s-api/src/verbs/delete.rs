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
//! removed at once. Finalizers are not waited for, and deleting an owner does not delete its
//! dependents (that is the garbage collector's job).

use std::sync::Arc;

use k8s_types::admission::Operation;
use k8s_types::apiserver::DeleteOptions;
use k8s_types::meta::{tick_timestamp, timestamp_tick};
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
                    .store
                    .update(&key, Object::Namespace(updated), Some(expected))
                    .map_err(|e| errors::from_store(e, kind, name));
            }
            if !registry::namespace::spec_finalizers(ns).is_empty() {
                return Ok(old);
            }
        }
        match self.pod_graceful(&old, options) {
            Graceful::Pending => Ok(old),
            Graceful::Immediately => self
                .store
                .delete(&key, None)
                .map_err(|e| errors::from_store(e, kind, name)),
            Graceful::Update {
                deletion_tick,
                grace,
            } => {
                let mut updated = (*old).clone();
                let meta = updated.meta_mut();
                if meta.deletion_timestamp.is_none() {
                    if let Some(g) = meta.generation.filter(|g| *g > 0) {
                        meta.generation = Some(g.saturating_add(1));
                    }
                }
                meta.deletion_timestamp = Some(tick_timestamp(deletion_tick));
                meta.deletion_grace_period_seconds = Some(grace);
                let expected = old.meta().resource_version_number();
                let written = self
                    .store
                    .update(&key, updated, Some(expected))
                    .map_err(|e| errors::from_store(e, kind, name))?;
                if grace > 0 {
                    return Ok(written);
                }
                self.store
                    .delete(&key, None)
                    .map_err(|e| errors::from_store(e, kind, name))
            }
        }
    }
}
