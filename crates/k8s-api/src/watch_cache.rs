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
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_types::core::Pod;
use k8s_types::object::Kind;
use k8s_types::store::{ObjectStore, WatchEventType};
use k8s_types::Object;

/// Pod store keys by node name, and the node of each indexed key.
#[derive(Debug, Default)]
struct Index {
    /// The store revision the index reflects; `None` before the first read.
    revision: Option<i64>,
    by_node: BTreeMap<String, BTreeSet<String>>,
    node_of: BTreeMap<String, String>,
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

    fn insert(&mut self, key: String, obj: &Object) {
        self.remove(&key);
        if let Object::Pod(p) = obj {
            if let Some(node) = p.node_name().filter(|n| !n.is_empty()) {
                self.by_node
                    .entry(node.to_string())
                    .or_default()
                    .insert(key.clone());
                self.node_of.insert(key, node.to_string());
            }
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
        let events = idx.revision.and_then(|r| store.watch(&prefix, r).ok());
        match events {
            Some(events) => {
                for ev in events {
                    let key = ev.object.key();
                    match ev.type_ {
                        WatchEventType::Deleted => idx.remove(&key),
                        _ => idx.insert(key, &ev.object),
                    }
                }
            }
            None => {
                *idx = Index::default();
                for obj in store.list_shared(&prefix) {
                    idx.insert(obj.key(), &obj);
                }
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
            .flatten()
            .filter_map(|key| store.get_shared(key))
            .filter(|o| matches!(&**o, Object::Pod(p) if p.node_name() == Some(node)))
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
