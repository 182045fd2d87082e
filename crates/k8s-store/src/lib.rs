//! k8s-store: the etcd of k8s-mini. [`MemStore`] implements [`k8s_types::store::ObjectStore`]: objects
//! in a sorted map keyed by their registry key (`/registry/pods/<namespace>/<name>`), one global
//! revision bumped by every successful write and stamped on the object as `metadata.resourceVersion`,
//! compare-and-swap updates, and a change history served to watchers.
//!
//! Upstream counterparts: etcd's MVCC store (`go.etcd.io/etcd/server/mvcc`: revisions, compaction,
//! `ErrCompacted`) as kube-apiserver's `k8s.io/apiserver/pkg/storage/etcd3/store.go` uses it
//! (`resourceVersion` = etcd `mod_revision`, `GuaranteedUpdate` preconditions, watch from a revision).
//!
//! Modules:
//! - [`mem_store`]: the map, the revision counter and the verbs;
//! - `objects`: the map of objects by key, in two levels (resource, then the rest of the key);
//! - [`history`]: the watch history and its compaction.

pub mod history;
pub mod mem_store;
mod objects;

pub use history::History;
pub use mem_store::MemStore;
