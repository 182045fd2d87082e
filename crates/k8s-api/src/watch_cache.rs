//! The apiserver's pod index by `spec.nodeName`, after kube-apiserver's watch cache (`Cacher`,
//! `k8s.io/apiserver/pkg/storage/cacher`) and the pod registry's index function
//! (`pkg/registry/core/pod/strategy.go` `NodeNameIndexFunc`, registered as the `spec.nodeName`
//! indexer in `pkg/registry/core/pod/storage/storage.go`). A kubelet lists its pods with the field
//! selector `spec.nodeName=<node>`; upstream serves that from the index, not by scanning every pod.
//!
//! As the Cacher, the index is fed by the store's watch: before each read it applies the pod
//! changes after the revision it reflects; when that history has been compacted it lists every pod
//! again (the Cacher's relist). So writes made by any path, including straight to the store, are
//! seen.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_types::core::Pod;
use k8s_types::object::Kind;
use k8s_types::store::{ObjectStore, WatchEventType};
use k8s_types::Object;
use rustc_hash::FxHashMap;

/// The pods by node name (store key to the object, shared with the store: the watch event's
/// `Arc`, which the store also holds), and the node of each indexed key. As the Cacher's
/// `threadSafeMap` with its indices, the index holds the objects themselves, so a read looks
/// nothing up again in the store.
#[derive(Debug, Default)]
struct Index {
    /// The store revision the index reflects; `None` before the first read.
    revision: Option<i64>,
    by_node: BTreeMap<String, BTreeMap<String, Arc<Object>>>,
    /// Pod key -> its node. Looked up by key only, never iterated, so a hash map (a B-tree
    /// search compared the long pod keys at every level).
    node_of: FxHashMap<String, String>,
}

impl Index {
    fn remove(&mut self, key: &str) {
        if let Some(node) = self.node_of.remove(key) {
            if let Some(keys) = self.by_node.get_mut(&node) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_node.remove(&node);
                }
            }
        }
    }

    fn insert(&mut self, key: String, obj: &Arc<Object>) {
        let node = match &**obj {
            Object::Pod(p) => p.node_name().filter(|n| !n.is_empty()),
            _ => None,
        };
        // The common update (a bound pod's status) keeps its node: replace the object in place.
        if let Some(node) = node {
            if self.node_of.get(&key).is_some_and(|n| n == node) {
                if let Some(slot) = self.by_node.get_mut(node).and_then(|m| m.get_mut(&key)) {
                    *slot = Arc::clone(obj);
                    return;
                }
            }
        }
        self.remove(&key);
        if let Some(node) = node {
            self.by_node
                .entry(node.to_string())
                .or_default()
                .insert(key.clone(), Arc::clone(obj));
            self.node_of.insert(key, node.to_string());
        }
    }
}

/// The `spec.nodeName` index over the store's pods (interior mutability: reads catch up).
#[derive(Debug, Default)]
pub struct NodeNameIndex {
    index: RefCell<Index>,
}

impl NodeNameIndex {
    /// Brings the index to the store's current revision (before a compaction, so that the index
    /// never has to relist).
    pub(crate) fn catch_up(&self, store: &dyn ObjectStore) {
        let mut idx = self.index.borrow_mut();
        let current = store.revision();
        if idx.revision == Some(current) {
            return;
        }
        let prefix = Kind::Pod.key_prefix();
        let followed = idx.revision.is_some_and(|r| {
            let idx = &mut *idx;
            store
                .watch_each(&prefix, r, &mut |ev| {
                    let key = ev.object.key();
                    match ev.type_ {
                        WatchEventType::Deleted => idx.remove(&key),
                        _ => idx.insert(key, &ev.object),
                    }
                })
                .is_ok()
        });
        if !followed {
            *idx = Index::default();
            for obj in store.list_shared(&prefix) {
                idx.insert(obj.key(), &obj);
            }
        }
        idx.revision = Some(current);
    }

    /// The pods bound to `node`, in key order (namespace, then name), shared with the store.
    pub fn pods_on_node(&self, store: &dyn ObjectStore, node: &str) -> Vec<Arc<Object>> {
        self.catch_up(store);
        let idx = self.index.borrow();
        idx.by_node
            .get(node)
            .into_iter()
            .flat_map(|pods| pods.values())
            .map(Arc::clone)
            .collect()
    }

    /// Typed [`NodeNameIndex::pods_on_node`], copied.
    pub fn pods_on_node_typed(&self, store: &dyn ObjectStore, node: &str) -> Vec<Pod> {
        self.pods_on_node(store, node)
            .into_iter()
            .filter_map(|o| match Arc::unwrap_or_clone(o) {
                Object::Pod(p) => Some(*p),
                _ => None,
            })
            .collect()
    }
}
