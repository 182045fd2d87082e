//! [`MemStore`]: an in-memory etcd. Objects live in sorted maps keyed by registry key, one per
//! resource (`crate::objects`), so listing a prefix is a range scan in key order (namespace, then
//! name). One global revision counts writes:
//! it starts at 0 and each successful create, update or delete takes the next value, which is
//! written into the object's `metadata.resourceVersion` (as a decimal string, like upstream).
//!
//! Upstream: `k8s.io/apiserver/pkg/storage/etcd3/store.go` (`Create` fails with `KeyExists`,
//! `GuaranteedUpdate` with a resourceVersion precondition fails with a conflict, `Delete` of a
//! missing key is `KeyNotFound`) over etcd's MVCC revisions.

use std::sync::Arc;

use arcstr::ArcStr;
use k8s_types::store::{ObjectStore, StoreError, WatchEvent, WatchEventType};
use k8s_types::Object;

use crate::history::History;
use crate::objects::Objects;

/// A stored object and the revision of its last write (etcd `mod_revision`). The object is shared
/// with the history entry of that write and with every watcher that received it; `rest` is the
/// map's own key (after the resource part), which the history entries of every write share.
#[derive(Clone, Debug, PartialEq)]
struct Stored {
    object: Arc<Object>,
    mod_revision: i64,
    rest: ArcStr,
}

/// The in-memory object store. Deterministic: iteration is in key order, revisions are a counter.
///
/// History is kept in full until [`ObjectStore::compact`] is called (see [`crate::history`]).
#[derive(Clone, Debug, Default)]
pub struct MemStore {
    objects: Objects<Stored>,
    revision: i64,
    history: History,
}

impl MemStore {
    /// An empty store at revision 0.
    pub fn new() -> MemStore {
        MemStore::default()
    }

    /// A store holding exactly `objects` at `revision`, as `etcdctl snapshot restore` brings a
    /// snapshot back: each object keeps its `resourceVersion` as its mod revision, the revision
    /// counter continues from `revision`, and the history before it is gone (a watch from an older
    /// revision fails with `Compacted`, so every watcher lists again, as after an etcd restore).
    ///
    /// # Errors
    /// A message naming the object whose resourceVersion is missing, not a number, not positive or
    /// above `revision`, or whose key repeats.
    pub fn restored(objects: Vec<Object>, revision: i64) -> Result<MemStore, String> {
        let mut store = MemStore::default();
        for obj in objects {
            let key = obj.key();
            let rv = obj.meta().resource_version.as_deref().unwrap_or("");
            let rev = match rv.parse::<i64>() {
                Ok(r) if r > 0 && r <= revision => r,
                _ => {
                    return Err(format!(
                        "{key}: resourceVersion {rv:?} is not a revision in 1..={revision}"
                    ))
                }
            };
            let object = Arc::new(obj);
            let inserted = store.objects.insert_new(&key, |rest| Stored {
                object,
                mod_revision: rev,
                rest: rest.clone(),
            });
            if !inserted {
                return Err(format!("{key}: listed twice"));
            }
        }
        store.revision = revision;
        store.history.compact(revision);
        Ok(store)
    }

    /// Number of objects stored.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// True when no object is stored.
    pub fn is_empty(&self) -> bool {
        self.objects.len() == 0
    }

    /// The compaction point: watches from a revision below it fail (0 when never compacted).
    pub fn compacted_revision(&self) -> i64 {
        self.history.compacted()
    }

    /// Number of watch events retained.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }
}

/// Takes the next revision after `revision` and stamps it on `obj`.
fn stamp(revision: &mut i64, obj: &mut Object) -> i64 {
    *revision += 1;
    obj.meta_mut().resource_version =
        Some(k8s_types::ToCompactString::to_compact_string(&revision));
    *revision
}

/// The store's compare-and-swap: `expected_revision`, when given, is the stored object's.
fn check_precondition(
    key: &str,
    stored: &Stored,
    expected_revision: Option<i64>,
) -> Result<(), StoreError> {
    match expected_revision {
        Some(expected) if expected != stored.mod_revision => Err(StoreError::Conflict {
            key: key.to_string(),
            expected,
            actual: stored.mod_revision,
        }),
        _ => Ok(()),
    }
}

impl ObjectStore for MemStore {
    fn revision(&self) -> i64 {
        self.revision
    }

    fn get(&self, key: &str) -> Option<&Object> {
        self.objects.get(key).map(|s| &*s.object)
    }

    fn list(&self, prefix: &str) -> Vec<&Object> {
        self.objects
            .with_prefix(prefix)
            .map(|s| &*s.object)
            .collect()
    }

    fn get_shared(&self, key: &str) -> Option<Arc<Object>> {
        self.objects.get(key).map(|s| Arc::clone(&s.object))
    }

    fn list_shared(&self, prefix: &str) -> Vec<Arc<Object>> {
        self.objects
            .with_prefix(prefix)
            .map(|s| Arc::clone(&s.object))
            .collect()
    }

    fn create(&mut self, key: &str, mut obj: Object) -> Result<Arc<Object>, StoreError> {
        let MemStore {
            objects,
            revision,
            history,
        } = self;
        let mut created = None;
        // One search of the map: the revision, the history and the value only for a new key.
        let inserted = objects.insert_new(key, |rest| {
            let rev = stamp(revision, &mut obj);
            let shared = Arc::new(obj);
            let rest = rest.clone();
            history.record_shared(
                key,
                rest.clone(),
                WatchEventType::Added,
                rev,
                Arc::clone(&shared),
            );
            created = Some(Arc::clone(&shared));
            Stored {
                object: shared,
                mod_revision: rev,
                rest,
            }
        });
        match created {
            Some(shared) if inserted => Ok(shared),
            _ => Err(StoreError::AlreadyExists {
                key: key.to_string(),
            }),
        }
    }

    fn update(
        &mut self,
        key: &str,
        mut obj: Object,
        expected_revision: Option<i64>,
    ) -> Result<Arc<Object>, StoreError> {
        let MemStore {
            objects,
            revision,
            history,
        } = self;
        let stored = objects.get_mut(key).ok_or_else(|| StoreError::NotFound {
            key: key.to_string(),
        })?;
        check_precondition(key, stored, expected_revision)?;
        let rev = stamp(revision, &mut obj);
        let shared = Arc::new(obj);
        history.record_shared(
            key,
            stored.rest.clone(),
            WatchEventType::Modified,
            rev,
            Arc::clone(&shared),
        );
        stored.object = Arc::clone(&shared);
        stored.mod_revision = rev;
        Ok(shared)
    }

    fn delete(
        &mut self,
        key: &str,
        expected_revision: Option<i64>,
    ) -> Result<Arc<Object>, StoreError> {
        let stored = self.objects.get(key).ok_or_else(|| StoreError::NotFound {
            key: key.to_string(),
        })?;
        check_precondition(key, stored, expected_revision)?;
        let (mut obj, rest) = match self.objects.remove(key) {
            Some(s) => (Arc::unwrap_or_clone(s.object), s.rest),
            None => {
                return Err(StoreError::NotFound {
                    key: key.to_string(),
                })
            }
        };
        let rev = stamp(&mut self.revision, &mut obj);
        let shared = Arc::new(obj);
        self.history
            .record_shared(key, rest, WatchEventType::Deleted, rev, Arc::clone(&shared));
        Ok(shared)
    }

    fn watch(&self, prefix: &str, after_revision: i64) -> Result<Vec<WatchEvent>, StoreError> {
        self.history.since(prefix, after_revision)
    }

    fn watch_each(
        &self,
        prefix: &str,
        after_revision: i64,
        visit: &mut dyn FnMut(&WatchEvent),
    ) -> Result<(), StoreError> {
        self.history.for_each_since(prefix, after_revision, visit)
    }

    fn compact(&mut self, revision: i64) {
        // etcd refuses to compact past the current revision; clamp instead of failing.
        self.history.compact(revision.min(self.revision));
    }

    fn skip_revisions(&mut self, n: i64) -> bool {
        self.revision = self.revision.saturating_add(n.max(0));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::Pod;
    use k8s_types::meta::ObjectMeta;

    fn pod(name: &str) -> Object {
        Object::Pod(Box::new(Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: Some("default".into()),
                ..Default::default()
            },
            ..Default::default()
        }))
    }

    #[test]
    fn writes_stamp_consecutive_resource_versions() {
        let mut s = MemStore::new();
        assert_eq!(s.revision(), 0);
        let a = s.create("/registry/pods/default/a", pod("a")).unwrap();
        let b = s.create("/registry/pods/default/b", pod("b")).unwrap();
        assert_eq!(a.meta().resource_version.as_deref(), Some("1"));
        assert_eq!(b.meta().resource_version.as_deref(), Some("2"));
        let a2 = s
            .update("/registry/pods/default/a", (*a).clone(), Some(1))
            .unwrap();
        assert_eq!(a2.meta().resource_version.as_deref(), Some("3"));
        let gone = s.delete("/registry/pods/default/b", None).unwrap();
        assert_eq!(gone.meta().resource_version.as_deref(), Some("4"));
        assert_eq!(s.revision(), 4);
        assert_eq!(s.len(), 1);
    }

    /// Every write's history entry shares the key the store's map holds (no copy per write):
    /// the map's key, the stored value's and two history entries are one allocation, until the
    /// compaction drops the entries; a namespace watch still sees only that namespace's keys.
    #[test]
    fn history_entries_share_the_stored_key() {
        let mut s = MemStore::new();
        let key = "/registry/pods/default/a";
        let a = s.create(key, pod("a")).unwrap();
        s.create("/registry/pods/other/a", pod("a")).unwrap();
        s.update(key, (*a).clone(), None).unwrap();
        let rest = s.objects.get(key).unwrap().rest.clone();
        assert_eq!(&*rest, "default/a");
        // The map, the stored value, two history entries and `rest` here.
        assert_eq!(ArcStr::strong_count(&rest), Some(5));
        let revisions = |s: &MemStore, prefix: &str| -> Vec<i64> {
            s.watch(prefix, 0)
                .unwrap()
                .iter()
                .map(|e| e.revision)
                .collect()
        };
        assert_eq!(revisions(&s, "/registry/pods/default/"), vec![1, 3]);
        assert_eq!(revisions(&s, "/registry/pods/"), vec![1, 2, 3]);
        s.compact(3);
        assert_eq!(ArcStr::strong_count(&rest), Some(3));
        // A delete's entry takes over the removed value's key.
        s.delete(key, None).unwrap();
        assert_eq!(ArcStr::strong_count(&rest), Some(2));
        let deleted = s.watch("/registry/pods/default/", 3).unwrap();
        assert_eq!(deleted.len(), 1);
        assert_eq!(deleted[0].type_, WatchEventType::Deleted);
    }

    #[test]
    fn compaction_is_clamped_to_the_current_revision() {
        let mut s = MemStore::new();
        s.create("/k/a", pod("a")).unwrap();
        s.compact(100);
        assert_eq!(s.compacted_revision(), 1);
        assert_eq!(s.watch("/k/", 1).unwrap().len(), 0);
    }

    /// `watch_each` hands over the same changes as `watch`, in the same order, without a list;
    /// from before the compaction point it fails as `watch` does and visits nothing.
    #[test]
    fn watch_each_visits_what_watch_returns() {
        let mut s = MemStore::new();
        s.create("/registry/pods/default/a", pod("a")).unwrap();
        s.create("/registry/events/default/e", pod("e")).unwrap();
        s.create("/registry/pods/default/b", pod("b")).unwrap();
        s.delete("/registry/pods/default/a", None).unwrap();
        let seen = |s: &MemStore, prefix: &str, after: i64| {
            let mut out = Vec::new();
            let r = s.watch_each(prefix, after, &mut |e| {
                out.push((e.revision, e.type_, e.object.key()))
            });
            r.map(|()| out)
        };
        let listed = |s: &MemStore, prefix: &str, after: i64| {
            s.watch(prefix, after).map(|evs| {
                evs.into_iter()
                    .map(|e| (e.revision, e.type_, e.object.key()))
                    .collect::<Vec<_>>()
            })
        };
        let pods = seen(&s, "/registry/pods/", 1).unwrap();
        assert_eq!(
            pods,
            vec![
                (
                    3,
                    WatchEventType::Added,
                    "/registry/pods/default/b".to_string()
                ),
                (
                    4,
                    WatchEventType::Deleted,
                    "/registry/pods/default/a".to_string()
                ),
            ]
        );
        assert_eq!(Ok(pods), listed(&s, "/registry/pods/", 1));
        assert_eq!(seen(&s, "", 0).unwrap().len(), 4);
        s.compact(2);
        assert!(matches!(
            seen(&s, "", 1),
            Err(StoreError::Compacted {
                requested: 1,
                oldest: 2
            })
        ));
        assert_eq!(seen(&s, "", 2), listed(&s, "", 2));
    }

    /// A restored store serves each object at its own revision, continues from the snapshot's
    /// revision, and answers a watch from before it with Compacted (watchers list again).
    #[test]
    fn restored_keeps_revisions_and_refuses_bad_ones() {
        let mut a = pod("a");
        a.meta_mut().resource_version = Some("7".into());
        let mut b = pod("b");
        b.meta_mut().resource_version = Some("12".into());
        let mut store = MemStore::restored(vec![a.clone(), b], 20).expect("restored");
        assert_eq!(store.revision(), 20);
        let key = a.key();
        let conflict = store.update(&key, a.clone(), Some(6)).unwrap_err();
        assert!(
            matches!(conflict, StoreError::Conflict { actual: 7, .. }),
            "{conflict:?}"
        );
        store
            .update(&key, a.clone(), Some(7))
            .expect("update at its revision");
        assert_eq!(store.revision(), 21);
        assert!(store.watch("", 0).is_err());
        assert_eq!(store.watch("", 20).expect("after the restore").len(), 1);
        let mut c = pod("c");
        c.meta_mut().resource_version = Some("21".into());
        assert!(MemStore::restored(vec![c.clone()], 20).is_err());
        c.meta_mut().resource_version = None;
        assert!(MemStore::restored(vec![c], 20).is_err());
    }
}
