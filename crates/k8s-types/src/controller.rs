//! The controller contract (kube-controller-manager side), as every upstream controller of
//! `pkg/controller/` is built: shared informers ([`crate::informer`]) whose event handlers put
//! object keys on the controller's work queue ([`crate::workqueue`]), and a sync handler that
//! reconciles one key from the informers' caches, writing through the apiserver, and says when it
//! next needs to run ([`Action`]). Plus the vocabulary of why a reconcile ran
//! ([`ReconcileReason`]).
//!
//! Shaped after client-go's `ResourceEventHandler` + work queue + `syncHandler` pattern (e.g.
//! `pkg/controller/replicaset/replica_set.go`), and kube-runtime's `Action`/`ReconcileReason`.

use std::fmt;

use crate::apiserver::ApiClient;
use crate::informer::{Delta, SharedInformerFactory};
use crate::object::Kind;
use crate::status::Status;
use crate::workqueue::WorkQueue;
use crate::Tick;

/// Why one key's sync stopped early. The manager logs it and requeues the key rate-limited
/// (upstream `handleErr` with `AddRateLimited`).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The apiserver refused a read or write.
    #[error(transparent)]
    Api(#[from] Status),
    /// The object's spec cannot be acted on (e.g. `unexpected deployment strategy type: Foo`,
    /// an unparseable maxSurge).
    #[error("{0}")]
    Invalid(String),
}

/// What a reconcile of one object wants next (kube-runtime `Action`, controller-runtime
/// `reconcile.Result`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Look at the object again after this many ticks even if nothing changes (e.g. a ReplicaSet
    /// waiting `minReadySeconds` for a pod to become available, a Deployment's progress deadline).
    Requeue {
        /// Ticks (seconds) from now.
        after: Tick,
    },
    /// Nothing to do until the object or something it relates to changes.
    AwaitChange,
}

impl Action {
    /// `Requeue { after }` (kube-runtime `Action::requeue`).
    pub fn requeue(after: Tick) -> Action {
        Action::Requeue { after }
    }

    /// `AwaitChange` (kube-runtime `Action::await_change`).
    pub fn await_change() -> Action {
        Action::AwaitChange
    }

    /// Combines two wishes for the same object: the sooner requeue wins; `AwaitChange` only when both
    /// await a change.
    pub fn sooner(self, other: Action) -> Action {
        match (self, other) {
            (Action::Requeue { after: a }, Action::Requeue { after: b }) => {
                Action::Requeue { after: a.min(b) }
            }
            (r @ Action::Requeue { .. }, Action::AwaitChange)
            | (Action::AwaitChange, r @ Action::Requeue { .. }) => r,
            (Action::AwaitChange, Action::AwaitChange) => Action::AwaitChange,
        }
    }
}

/// Why a reconcile ran (kube-runtime `ReconcileReason`). Used in logs and traces.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReconcileReason {
    /// No better reason is known.
    Unknown,
    /// The object itself changed.
    ObjectUpdated {
        /// Kind name, e.g. `ReplicaSet`.
        kind: String,
        /// `namespace/name` (or `name`).
        key: String,
    },
    /// An object it owns or selects changed (e.g. a pod of a ReplicaSet).
    RelatedObjectUpdated {
        /// Kind name of the related object, e.g. `Pod`.
        kind: String,
        /// `namespace/name` of the related object.
        key: String,
    },
    /// The previous reconcile returned [`Action::Requeue`].
    ReconcilerRequestedRetry,
    /// Every object is reconciled: k8s-mini's per-tick pass (upstream: an informer resync).
    BulkReconcile,
    /// Anything else.
    Custom {
        /// Free text.
        reason: String,
    },
}

impl fmt::Display for ReconcileReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReconcileReason::Unknown => f.write_str("unknown"),
            ReconcileReason::ObjectUpdated { kind, key } => {
                write!(f, "object updated: {kind} {key}")
            }
            ReconcileReason::RelatedObjectUpdated { kind, key } => {
                write!(f, "related object updated: {kind} {key}")
            }
            ReconcileReason::ReconcilerRequestedRetry => f.write_str("reconciler requested retry"),
            ReconcileReason::BulkReconcile => f.write_str("bulk reconcile requested"),
            ReconcileReason::Custom { reason } => f.write_str(reason),
        }
    }
}

/// One controller of kube-controller-manager (Deployment, ReplicaSet, garbage collector, ...).
///
/// Contract (the manager, `k8s_controllers::ControllerManager`, drives it once per tick, after the
/// apiserver clock is set and before the scheduler and kubelets run):
/// 1. [`Controller::informers`]: the kinds whose shared informers it reads; the manager starts
///    them and brings them up to date before the controller's turn.
/// 2. [`Controller::on_change`]: the event handler, called for every change of those kinds since
///    the controller's previous turn (and for every object at a periodic resync); it only maps the
///    change to the keys it concerns and queues them (e.g. a pod's change queues its ReplicaSet).
/// 3. [`Controller::sync`]: the sync handler, called once per queued key due now, in key order. It
///    reads the informers' caches (never lists through the apiserver), writes through `api`, and
///    must be level-triggered (recompute from what the caches hold). Its [`Action`] is honoured:
///    `Requeue { after }` runs the key again `after` ticks later, `AwaitChange` waits for a change;
///    an error requeues the key with the rate limiter's backoff.
///
/// The caches reflect the apiserver at the start of the controller's turn: writes it makes during
/// its turn are seen at its next turn (a controller that must not act twice on the same state keeps
/// upstream's expectations). The trait is object-safe: the manager holds `Box<dyn Controller>`.
pub trait Controller {
    /// The controller's name as upstream registers it, e.g. `replicaset-controller`
    /// (also the `source.component` of the Events it writes).
    fn name(&self) -> &str;

    /// The kinds it reads from shared informers (its event handlers see changes of these).
    fn informers(&self) -> Vec<Kind>;

    /// The event handler: queue the keys `change` concerns.
    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    );

    /// The sync handler for one key.
    ///
    /// # Errors
    /// A [`SyncError`]; the manager requeues the key rate-limited.
    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError>;

    /// The controller as [`std::any::Any`], for a driver that must reach one built-in controller's
    /// own methods (the cluster fast-forwarding the node lifecycle controller over skipped
    /// ticks). `None` by default: a controller of the user's need not implement it.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sooner_requeue_wins() {
        assert_eq!(
            Action::requeue(5).sooner(Action::requeue(3)),
            Action::Requeue { after: 3 }
        );
        assert_eq!(
            Action::await_change().sooner(Action::requeue(7)),
            Action::Requeue { after: 7 }
        );
        assert_eq!(
            Action::await_change().sooner(Action::await_change()),
            Action::AwaitChange
        );
    }

    #[test]
    fn reasons_display_like_kube_runtime() {
        assert_eq!(
            ReconcileReason::BulkReconcile.to_string(),
            "bulk reconcile requested"
        );
        assert_eq!(
            ReconcileReason::RelatedObjectUpdated {
                kind: "Pod".into(),
                key: "default/web-abcde".into()
            }
            .to_string(),
            "related object updated: Pod default/web-abcde"
        );
        assert_eq!(
            ReconcileReason::ReconcilerRequestedRetry.to_string(),
            "reconciler requested retry"
        );
    }
}
