//! Optimistic concurrency as a component sees it: the `409 Conflict` kube-apiserver answers a write
//! whose `metadata.resourceVersion` is not the stored one (upstream
//! `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go` `Update`, the message of
//! `staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go` `NewConflict` with
//! `registry.OptimisticLockErrorMsg`), counted per component and kind ([`ConflictLog`],
//! [`CountingClient`]), and client-go's answer to it, `retry.RetryOnConflict`
//! (`staging/src/k8s.io/client-go/util/retry/util.go`, [`retry_on_conflict`]).
//!
//! A component meets a conflict when it writes an object built from a cache that is behind the
//! store (an informer that has not yet delivered the latest watch event, see the cluster's
//! `spec.informerLag`): the copy it changed carries the old resourceVersion.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::apiserver::{ApiClient, DeleteOptions};
use crate::core::{Binding, Namespace, Pod};
use crate::labels::LabelSelector;
use crate::object::{Kind, Object, Shared};
use crate::policy::Eviction;
use crate::status::Status;
use crate::store::WatchEvent;
use crate::Tick;

/// client-go `retry.DefaultRetry.Steps`: `{Steps: 5, Duration: 10ms, Factor: 1.0, Jitter: 0.1}`,
/// "the recommended retry for a conflict where multiple clients are making changes to the same
/// resource". Its waits (10 ms) are shorter than a tick: every attempt runs in the same tick.
pub const DEFAULT_RETRY_STEPS: u32 = 5;

/// client-go `retry.DefaultBackoff.Steps`: `{Steps: 4, Duration: 10ms, Factor: 5.0, Jitter: 0.1}`
/// (waits of 10, 50, 250 ms: all within one tick).
pub const DEFAULT_BACKOFF_STEPS: u32 = 4;

/// client-go `retry.RetryOnConflict(backoff, fn)`: runs `f` up to `steps` times while it fails with
/// `409 Conflict` (reason `Conflict`; an `AlreadyExists` is not retried), and returns its last
/// answer. `f` must read the object afresh (a GET from the apiserver, not the stale cache) before
/// each write, as every upstream caller does. The backoff's waits are below one tick, so every
/// attempt happens in the current tick.
///
/// # Errors
/// `f`'s last error: a non-conflict error at once, or the conflict of the last step.
pub fn retry_on_conflict<T>(
    steps: u32,
    mut f: impl FnMut() -> Result<T, Status>,
) -> Result<T, Status> {
    let mut attempt = 1;
    loop {
        match f() {
            Err(e) if e.is_conflict() && attempt < steps.max(1) => attempt += 1,
            other => return other,
        }
    }
}

/// One `409 Conflict` a component got from the apiserver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConflictRecord {
    /// The tick (the apiserver's clock when it answered).
    pub tick: Tick,
    /// The component that wrote, e.g. `replicaset-controller`, `default-scheduler`, `kubelet`.
    pub component: String,
    /// The verb: `update`, `update_status`, `bind`, `finalize`.
    pub verb: &'static str,
    /// The kind of the object written.
    pub kind: String,
    /// The apiserver's message (names the object: `Operation cannot be fulfilled on ...`).
    pub message: String,
}

/// Every conflict of a run, in the order they happened.
#[derive(Clone, Debug, Default)]
pub struct ConflictLog {
    records: Vec<ConflictRecord>,
}

impl ConflictLog {
    /// An empty log.
    pub fn new() -> ConflictLog {
        ConflictLog::default()
    }

    /// The conflicts, in order.
    pub fn records(&self) -> &[ConflictRecord] {
        &self.records
    }

    /// Number of conflicts.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when there was none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Appends `other`'s records (emptying it).
    pub fn append(&mut self, other: &mut ConflictLog) {
        self.records.append(&mut other.records);
    }

    /// Count per (component, kind), in that order.
    pub fn counts(&self) -> BTreeMap<(String, String), u64> {
        let mut out = BTreeMap::new();
        for r in &self.records {
            *out.entry((r.component.clone(), r.kind.clone()))
                .or_insert(0) += 1;
        }
        out
    }

    fn note<T>(
        &mut self,
        now: Tick,
        component: &str,
        verb: &'static str,
        kind: &Kind,
        answer: Result<T, Status>,
    ) -> Result<T, Status> {
        if let Err(e) = &answer {
            if e.is_conflict() {
                self.records.push(ConflictRecord {
                    tick: now,
                    component: component.to_string(),
                    verb,
                    kind: kind.name().to_string(),
                    message: e.message.clone(),
                });
            }
        }
        answer
    }
}

/// A component's connection to the apiserver that logs every `409 Conflict` it is answered (the
/// apiserver's `apiserver_request_total{code="409"}`, split by the client that got it). Everything
/// else passes through unchanged.
pub struct CountingClient<'a> {
    inner: &'a mut dyn ApiClient,
    component: &'a str,
    log: &'a mut ConflictLog,
}

impl<'a> CountingClient<'a> {
    /// `inner` as used by `component`, logging into `log`.
    pub fn new(
        inner: &'a mut dyn ApiClient,
        component: &'a str,
        log: &'a mut ConflictLog,
    ) -> CountingClient<'a> {
        CountingClient {
            inner,
            component,
            log,
        }
    }
}

impl ApiClient for CountingClient<'_> {
    fn now(&self) -> Tick {
        self.inner.now()
    }

    fn revision(&self) -> i64 {
        self.inner.revision()
    }

    fn create(&mut self, obj: Object) -> Result<Object, Status> {
        self.inner.create(obj)
    }

    fn get(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Object, Status> {
        self.inner.get(kind, namespace, name)
    }

    fn list(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Object> {
        self.inner.list(kind, namespace, selector)
    }

    fn update(&mut self, obj: Object) -> Result<Object, Status> {
        let kind = obj.kind();
        let answer = self.inner.update(obj);
        let now = self.inner.now();
        self.log.note(now, self.component, "update", &kind, answer)
    }

    fn update_status(&mut self, obj: Object) -> Result<Object, Status> {
        let kind = obj.kind();
        let answer = self.inner.update_status(obj);
        let now = self.inner.now();
        self.log
            .note(now, self.component, "update_status", &kind, answer)
    }

    fn delete(
        &mut self,
        kind: &Kind,
        namespace: &str,
        name: &str,
        options: DeleteOptions,
    ) -> Result<Object, Status> {
        self.inner.delete(kind, namespace, name, options)
    }

    fn bind(&mut self, binding: &Binding) -> Result<Pod, Status> {
        let answer = self.inner.bind(binding);
        let now = self.inner.now();
        self.log
            .note(now, self.component, "bind", &Kind::Pod, answer)
    }

    fn bind_only(&mut self, binding: &Binding) -> Result<(), Status> {
        let answer = self.inner.bind_only(binding);
        let now = self.inner.now();
        self.log
            .note(now, self.component, "bind", &Kind::Pod, answer)
    }

    fn evict(&mut self, eviction: &Eviction) -> Result<(), Status> {
        self.inner.evict(eviction)
    }

    fn finalize_namespace(&mut self, namespace: &Namespace) -> Result<Object, Status> {
        let answer = self.inner.finalize_namespace(namespace);
        let now = self.inner.now();
        self.log
            .note(now, self.component, "finalize", &Kind::Namespace, answer)
    }

    fn watch(&self, kind: &Kind, after_revision: i64) -> Result<Vec<WatchEvent>, Status> {
        self.inner.watch(kind, after_revision)
    }

    fn get_shared(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Arc<Object>, Status> {
        self.inner.get_shared(kind, namespace, name)
    }

    fn list_shared(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Arc<Object>> {
        self.inner.list_shared(kind, namespace, selector)
    }

    fn create_shared(&mut self, obj: Object) -> Result<Arc<Object>, Status> {
        self.inner.create_shared(obj)
    }

    fn update_shared(&mut self, obj: Object) -> Result<Arc<Object>, Status> {
        let kind = obj.kind();
        let answer = self.inner.update_shared(obj);
        let now = self.inner.now();
        self.log.note(now, self.component, "update", &kind, answer)
    }

    fn update_status_shared(&mut self, obj: Object) -> Result<Arc<Object>, Status> {
        let kind = obj.kind();
        let answer = self.inner.update_status_shared(obj);
        let now = self.inner.now();
        self.log
            .note(now, self.component, "update_status", &kind, answer)
    }

    fn list_pods_on_node(&self, node_name: &str) -> Vec<Pod> {
        self.inner.list_pods_on_node(node_name)
    }

    fn list_pods_on_node_shared(&self, node_name: &str) -> Vec<Shared<Pod>> {
        self.inner.list_pods_on_node_shared(node_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_on_conflict_stops_at_the_step_limit_and_on_other_errors() {
        // Always conflicting: exactly `steps` attempts, the last conflict returned.
        let mut calls = 0;
        let r: Result<(), Status> = retry_on_conflict(DEFAULT_RETRY_STEPS, || {
            calls += 1;
            Err(Status::conflict(&Kind::Pod, "a"))
        });
        assert_eq!(calls, 5);
        assert!(r.unwrap_err().is_conflict());
        // A conflict, then success: two attempts.
        let mut calls = 0;
        let r = retry_on_conflict(DEFAULT_BACKOFF_STEPS, || {
            calls += 1;
            if calls == 1 {
                Err(Status::conflict(&Kind::Pod, "a"))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(r.unwrap(), 2);
        // NotFound is not retried.
        let mut calls = 0;
        let r: Result<(), Status> = retry_on_conflict(DEFAULT_RETRY_STEPS, || {
            calls += 1;
            Err(Status::not_found(&Kind::Pod, "a"))
        });
        assert_eq!(calls, 1);
        assert!(r.is_err());
    }
}
