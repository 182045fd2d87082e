//! The namespace controller, after upstream `pkg/controller/namespace/namespace_controller.go`
//! (`enqueueNamespace`, `worker`, `syncNamespaceFromKey`) and its deleter ([`deletion`]).
//!
//! A namespace's add or update queues it when it has a `deletionTimestamp`, 5 s later (upstream
//! `namespaceDeletionGracePeriod`: "to allow HA api servers to observe namespace deletion"). A sync
//! of a namespace being deleted makes sure its phase is `Terminating`, deletes its content
//! ([`deletion::delete_all_content`]), sets the `NamespaceDeletion*` / `Namespace*Remaining`
//! conditions, and, with nothing left, removes the `kubernetes` finalizer (`namespaces/finalize`),
//! which removes the namespace. While content remains the namespace is synced again after
//! `estimate / 2 + 1` seconds (upstream `ResourcesRemainingError`); an error requeues it with the
//! rate limiter. Pods get their graceful termination through their kubelets, as upstream.

pub mod deletion;
pub mod status_conditions;

use std::collections::BTreeSet;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::Namespace;
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::status::Status;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Resource, Tick};
use serde_json::Value;

use deletion::{delete_all_content, deletion_tick, finalized_copy, phase, spec_finalizers};

/// The controller name upstream registers (`namespace-controller`).
pub const NAMESPACE_CONTROLLER_NAME: &str = "namespace-controller";
/// Upstream `namespaceDeletionGracePeriod`: how long after a namespace event it is synced.
pub const NAMESPACE_DELETION_GRACE_PERIOD: Tick = 5;
/// Upstream `v1.NamespaceTerminating`.
pub const PHASE_TERMINATING: &str = "Terminating";

/// kube-controller-manager's namespace controller.
#[derive(Clone, Debug, Default)]
pub struct NamespaceController {
    /// Namespaces queued by an event since their last sync: their next sync only waits
    /// [`NAMESPACE_DELETION_GRACE_PERIOD`] (upstream's `AddAfter` in `enqueueNamespace`).
    just_queued: BTreeSet<String>,
}

impl NamespaceController {
    /// A new controller.
    pub fn new() -> Self {
        NamespaceController::default()
    }
}

/// Upstream `ResourcesRemainingError`'s requeue: `estimate / 2 + 1` seconds.
pub fn remaining_requeue(estimate: i64) -> Tick {
    (estimate / 2 + 1).unsigned_abs()
}

impl Controller for NamespaceController {
    fn name(&self) -> &str {
        NAMESPACE_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::Namespace]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        _informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        // enqueueNamespace: only namespaces being deleted.
        let deleting = change
            .new
            .as_deref()
            .and_then(Namespace::from_object_ref)
            .is_some_and(|ns| ns.metadata.deletion_timestamp.is_some());
        if deleting {
            self.just_queued.insert(change.key.clone());
            queue.add(change.key.clone());
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        if self.just_queued.remove(key) {
            return Ok(Action::requeue(NAMESPACE_DELETION_GRACE_PERIOD));
        }
        if informers.of(&Kind::Namespace).get(key).is_none() {
            return Ok(Action::AwaitChange);
        }
        // namespacedResourcesDeleter.Delete: the latest state from the apiserver.
        let ns: Namespace = match api.get_typed("", key) {
            Ok(ns) => ns,
            Err(e) if e.is_not_found() => return Ok(Action::AwaitChange),
            Err(e) => return Err(e.into()),
        };
        let Some(deleted_at) = deletion_tick(&ns) else {
            return Ok(Action::AwaitChange);
        };
        let ns = ensure_terminating(api, ns)?;
        if spec_finalizers(&ns).is_empty() {
            return Ok(Action::AwaitChange);
        }
        let outcome = delete_all_content(api, &ns, deleted_at);
        if let Some(first) = outcome.errors.first() {
            return Err(SyncError::Invalid(first.clone()));
        }
        if outcome.estimate > 0 {
            return Ok(Action::requeue(remaining_requeue(outcome.estimate)));
        }
        // The conditions may have been written: finalize the latest version.
        let latest: Namespace = match api.get_typed("", key) {
            Ok(ns) => ns,
            Err(e) if e.is_not_found() => return Ok(Action::AwaitChange),
            Err(e) => return Err(e.into()),
        };
        match api.finalize_namespace(&finalized_copy(&latest)) {
            Ok(_) => Ok(Action::AwaitChange),
            Err(e) if e.is_not_found() => Ok(Action::AwaitChange),
            Err(e) => Err(e.into()),
        }
    }
}

/// Upstream `updateNamespaceStatusFunc`: phase `Terminating` through `/status` when it is not yet.
fn ensure_terminating(api: &mut dyn ApiClient, ns: Namespace) -> Result<Namespace, Status> {
    if phase(&ns) == Some(PHASE_TERMINATING) {
        return Ok(ns);
    }
    let mut updated = ns;
    let mut status = match updated.status.take() {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    status.insert("phase".into(), Value::String(PHASE_TERMINATING.into()));
    updated.status = Some(Value::Object(status));
    match api.update_status(Object::Namespace(Box::new(updated)))? {
        Object::Namespace(ns) => Ok(*ns),
        _ => Err(Status::internal("stored object has the wrong kind")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_content_is_looked_at_again_after_half_the_estimate() {
        // A pod with the default 30 s grace period: 16 s.
        assert_eq!(remaining_requeue(30), 16);
        assert_eq!(remaining_requeue(15), 8);
    }
}
