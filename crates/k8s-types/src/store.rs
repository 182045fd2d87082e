//! The etcd contract ([`ObjectStore`]): keyed objects, a global revision, compare-and-swap updates on
//! `resourceVersion`, and watch from a revision. The store knows no kinds: keys are opaque strings laid
//! out like etcd's registry (`/registry/pods/<namespace>/<name>`, see [`crate::Kind::key`]).

use std::sync::Arc;

use crate::object::Object;

/// The type of a watch event (upstream `watch.EventType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WatchEventType {
    /// The object was created.
    Added,
    /// The object was updated.
    Modified,
    /// The object was deleted; the event carries its last state.
    Deleted,
}

impl WatchEventType {
    /// `ADDED`, `MODIFIED`, `DELETED`, as upstream prints them.
    pub fn as_str(self) -> &'static str {
        match self {
            WatchEventType::Added => "ADDED",
            WatchEventType::Modified => "MODIFIED",
            WatchEventType::Deleted => "DELETED",
        }
    }
}

/// One change, in revision order.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchEvent {
    /// What happened.
    pub type_: WatchEventType,
    /// The store revision of the change (for Deleted: the revision of the delete).
    pub revision: i64,
    /// The object after the change (for Deleted: as it was when deleted, with the delete's
    /// resourceVersion). Shared with the store and every other watcher, as kube-apiserver's watch
    /// cache hands the same decoded object to every watcher: reading it copies nothing.
    pub object: Arc<Object>,
}

/// Store failures; the apiserver maps them to `Status` (NotFound 404, AlreadyExists 409,
/// Conflict 409, Gone 410).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// No object at the key.
    #[error("key not found: {key}")]
    NotFound {
        /// The key.
        key: String,
    },
    /// Create of a key that exists.
    #[error("key exists: {key}")]
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// The precondition resourceVersion does not match the stored one.
    #[error("conflict on {key}: expected resourceVersion {expected}, have {actual}")]
    Conflict {
        /// The key.
        key: String,
        /// The resourceVersion the caller had.
        expected: i64,
        /// The stored resourceVersion.
        actual: i64,
    },
    /// Watch from a revision older than the compaction point.
    #[error("required revision {requested} has been compacted (oldest available {oldest})")]
    Compacted {
        /// The revision asked for.
        requested: i64,
        /// The oldest revision still watchable.
        oldest: i64,
    },
}

/// The one source of truth (etcd). Every successful write increments the global revision by one and
/// stamps the object's `metadata.resourceVersion` with it. Writes answer with the stored object,
/// shared with the store (an `Arc`): the caller copies it only if it needs its own.
pub trait ObjectStore {
    /// The current global revision (0 before the first write).
    fn revision(&self) -> i64;

    /// The object at `key`.
    fn get(&self, key: &str) -> Option<&Object>;

    /// Every object whose key starts with `prefix`, in key order.
    fn list(&self, prefix: &str) -> Vec<&Object>;

    /// The object at `key`, shared (no copy). The default copies [`ObjectStore::get`]'s answer; a
    /// store that keeps objects behind an `Arc` hands out its own.
    fn get_shared(&self, key: &str) -> Option<Arc<Object>> {
        self.get(key).map(|o| Arc::new(o.clone()))
    }

    /// [`ObjectStore::list`], shared (no copies); the default copies.
    fn list_shared(&self, prefix: &str) -> Vec<Arc<Object>> {
        self.list(prefix)
            .into_iter()
            .map(|o| Arc::new(o.clone()))
            .collect()
    }

    /// Stores a new object.
    ///
    /// # Errors
    /// [`StoreError::AlreadyExists`] when the key exists.
    fn create(&mut self, key: &str, obj: Object) -> Result<Arc<Object>, StoreError>;

    /// Replaces the object at `key`. With `expected_revision` set, succeeds only when the stored
    /// object's resourceVersion equals it (compare-and-swap).
    ///
    /// # Errors
    /// [`StoreError::NotFound`], or [`StoreError::Conflict`] on a stale resourceVersion.
    fn update(
        &mut self,
        key: &str,
        obj: Object,
        expected_revision: Option<i64>,
    ) -> Result<Arc<Object>, StoreError>;

    /// Removes the object at `key`, optionally only if its resourceVersion equals
    /// `expected_revision`. Returns the removed object.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] or [`StoreError::Conflict`].
    fn delete(
        &mut self,
        key: &str,
        expected_revision: Option<i64>,
    ) -> Result<Arc<Object>, StoreError>;

    /// Changes under `prefix` with a revision greater than `after_revision`, in revision order.
    ///
    /// # Errors
    /// [`StoreError::Compacted`] when `after_revision` is older than the compaction point.
    fn watch(&self, prefix: &str, after_revision: i64) -> Result<Vec<WatchEvent>, StoreError>;

    /// [`ObjectStore::watch`] without collecting: calls `visit` with each change in turn. A
    /// reader that only folds the changes into its own index (the apiserver's watch cache)
    /// needs no list of them; the default collects through [`ObjectStore::watch`].
    ///
    /// # Errors
    /// [`StoreError::Compacted`] when `after_revision` is older than the compaction point (then
    /// `visit` is not called).
    fn watch_each(
        &self,
        prefix: &str,
        after_revision: i64,
        visit: &mut dyn FnMut(&WatchEvent),
    ) -> Result<(), StoreError> {
        for ev in self.watch(prefix, after_revision)? {
            visit(&ev);
        }
        Ok(())
    }

    /// Forgets history at or before `revision`; later watches from before it fail with Compacted.
    fn compact(&mut self, revision: i64);

    /// Advances the revision by `n` without a write, as `n` writes whose results are all
    /// overwritten later would (a driver that skips idle ticks accounts this way for the periodic
    /// node status reports it did not simulate, so later resourceVersions are the same as when every
    /// tick runs). Returns false, doing nothing, when the store cannot.
    fn skip_revisions(&mut self, n: i64) -> bool {
        let _ = n;
        false
    }
}
