//! [`WatchCache`]: one kind's objects kept up to date by watching the apiserver from the last seen
//! resourceVersion, as upstream controllers read from shared informers (`client-go`
//! `tools/cache/reflector.go` `ListAndWatch`: list once, then apply watch events; relist when the
//! watch answers `410 Gone`). A controller pass then reads the cache instead of copying every object
//! out of the apiserver at every tick, and knows which keys changed since its previous pass.

use std::collections::BTreeMap;

use k8s_types::apiserver::ApiClient;
use k8s_types::store::WatchEventType;
use k8s_types::{Kind, Object};

/// The objects of one kind by store key (`/registry/<plural>/<namespace>/<name>`), in the order the
/// apiserver lists them.
#[derive(Clone, Debug)]
pub struct WatchCache {
    kind: Kind,
    /// The store revision the cache reflects; `None` before the first list.
    revision: Option<i64>,
    objects: BTreeMap<String, Object>,
}

/// One key that changed in a [`WatchCache::sync`]: its previous object (None when it is new); the
/// current one (if any) is in the cache.
pub type Changed = (String, Option<Object>);

impl WatchCache {
    /// An empty cache of `kind` (the first [`WatchCache::sync`] lists).
    pub fn new(kind: Kind) -> WatchCache {
        WatchCache {
            kind,
            revision: None,
            objects: BTreeMap::new(),
        }
    }

    /// The kind.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// The objects, in store key order (the order of `list`).
    pub fn objects(&self) -> impl Iterator<Item = (&String, &Object)> {
        self.objects.iter()
    }

    /// One object by store key.
    pub fn get(&self, key: &str) -> Option<&Object> {
        self.objects.get(key)
    }

    /// Brings the cache to the apiserver's current revision: watch events after the last seen
    /// revision, or a full list the first time and when the watch fails (compacted history).
    /// Returns every key that changed with its previous object.
    pub fn sync(&mut self, api: &dyn ApiClient) -> Vec<Changed> {
        let current = api.revision();
        let mut changed = Vec::new();
        let events = match self.revision {
            Some(r) if r == current => Some(Vec::new()),
            Some(r) => api.watch(&self.kind, r).ok(),
            None => None,
        };
        match events {
            Some(events) => {
                for ev in events {
                    let key = ev.object.key();
                    let old = match ev.type_ {
                        WatchEventType::Deleted => self.objects.remove(&key),
                        _ => self.objects.insert(key.clone(), ev.object),
                    };
                    changed.push((key, old));
                }
            }
            None => {
                let fresh: BTreeMap<String, Object> = api
                    .list(&self.kind, None, None)
                    .into_iter()
                    .map(|o| (o.key(), o))
                    .collect();
                let mut old = std::mem::replace(&mut self.objects, fresh);
                for key in self.objects.keys() {
                    changed.push((key.clone(), old.remove(key)));
                }
                for (key, o) in old {
                    changed.push((key, Some(o)));
                }
            }
        }
        self.revision = Some(current);
        changed
    }
}
