//! The controller contract (kube-controller-manager side): a [`Controller`] makes one level-triggered
//! pass over every object of its kind per tick, plus the vocabulary controllers use to say why they
//! ran ([`ReconcileReason`]) and when they next need to run ([`Action`]).
//!
//! Shaped after kube-runtime's `Controller`/`Action`/`ReconcileReason` and controller-runtime's
//! `reconcile.Result`; the upstream controllers themselves live in kubernetes/kubernetes
//! `pkg/controller/`. k8s-mini runs every controller once per tick, so a `Requeue` is a promise that
//! the next passes will look again, not a timer the manager must keep.

use std::fmt;

use crate::apiserver::ApiClient;
use crate::Tick;

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
/// Contract: [`Controller::reconcile`] is called once per tick, after the apiserver clock is set and
/// before the scheduler and kubelets run. It makes one pass over all objects of its kind, reading
/// current state through `api` and writing through it; it must be level-triggered (every pass
/// recomputes from what the apiserver holds now) and keep no intermediate state between passes
/// except upstream-style expectations if it needs them. Errors on one object are logged and must not
/// stop the pass over the others. The trait is object-safe: the manager holds `Box<dyn Controller>`.
pub trait Controller {
    /// The controller's name as upstream registers it, e.g. `replicaset-controller`
    /// (also the `source.component` of the Events it writes).
    fn name(&self) -> &str;

    /// One pass over all objects of this controller's kind.
    fn reconcile(&mut self, api: &mut dyn ApiClient);
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
