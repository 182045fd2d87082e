//! The change history behind watch: every write appends one [`WatchEvent`] (ADDED, MODIFIED or
//! DELETED) with its revision; [`History::since`] serves the events after a revision under a key
//! prefix; [`History::compact`] forgets old events, after which watching from before the compaction
//! point fails with [`StoreError::Compacted`].
//!
//! Upstream: etcd's MVCC key index and `Compact` (`go.etcd.io/etcd/server/mvcc/kvstore.go`), whose
//! `ErrCompacted` kube-apiserver turns into `410 Gone: too old resource version`.
//!
//! Retention: nothing is dropped unless [`History::compact`] is called (etcd keeps every revision
//! until compaction too). The cluster decides when to compact; memory grows with the number of
//! writes until then.

use std::sync::Arc;

use k8s_types::store::{StoreError, WatchEvent, WatchEventType};
use k8s_types::Object;

/// One recorded change: the key it happened at and the event. The event's object is shared with
/// the store (and with every watcher it is served to), so keeping history copies no object.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    key: Arc<str>,
    event: WatchEvent,
}

/// The ordered list of changes since the last compaction. Revisions are strictly increasing because
/// the store appends in write order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    entries: Vec<Entry>,
    /// Events at or before this revision have been dropped (0 = never compacted).
    compacted: i64,
}

impl History {
    /// An empty history.
    pub fn new() -> History {
        History::default()
    }

    /// Records a change at `key`. The caller guarantees `revision` is greater than every revision
    /// already recorded.
    pub fn record(&mut self, key: &str, type_: WatchEventType, revision: i64, object: Arc<Object>) {
        self.entries.push(Entry {
            key: Arc::from(key),
            event: WatchEvent {
                type_,
                revision,
                object,
            },
        });
    }

    /// The events under `prefix` with a revision greater than `after_revision`, in revision order.
    ///
    /// # Errors
    /// [`StoreError::Compacted`] when `after_revision` is older than the compaction point (some
    /// event the caller has not seen may have been dropped). `oldest` is the compaction revision: the
    /// smallest `after_revision` still accepted.
    pub fn since(&self, prefix: &str, after_revision: i64) -> Result<Vec<WatchEvent>, StoreError> {
        let mut out = Vec::new();
        self.for_each_since(prefix, after_revision, &mut |e| out.push(e.clone()))?;
        Ok(out)
    }

    /// [`History::since`] without collecting: `visit` sees each matching event in turn.
    ///
    /// # Errors
    /// As [`History::since`] (then `visit` is not called).
    pub fn for_each_since(
        &self,
        prefix: &str,
        after_revision: i64,
        visit: &mut dyn FnMut(&WatchEvent),
    ) -> Result<(), StoreError> {
        if after_revision < self.compacted {
            return Err(StoreError::Compacted {
                requested: after_revision,
                oldest: self.compacted,
            });
        }
        let start = self
            .entries
            .partition_point(|e| e.event.revision <= after_revision);
        for e in &self.entries[start..] {
            if e.key.starts_with(prefix) {
                visit(&e.event);
            }
        }
        Ok(())
    }

    /// Drops every event at or before `revision`. Compacting to a revision at or below the current
    /// compaction point does nothing.
    pub fn compact(&mut self, revision: i64) {
        if revision <= self.compacted {
            return;
        }
        let cut = self
            .entries
            .partition_point(|e| e.event.revision <= revision);
        self.entries.drain(..cut);
        self.compacted = revision;
    }

    /// The compaction point (0 when never compacted).
    pub fn compacted(&self) -> i64 {
        self.compacted
    }

    /// Number of events held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no event is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> Arc<Object> {
        Arc::new(Object::Node(Box::default()))
    }

    #[test]
    fn since_filters_by_prefix_and_revision() {
        let mut h = History::new();
        h.record("/registry/nodes/a", WatchEventType::Added, 1, node());
        h.record("/registry/pods/default/p", WatchEventType::Added, 2, node());
        h.record("/registry/nodes/b", WatchEventType::Added, 3, node());
        let revs: Vec<i64> = h
            .since("/registry/nodes/", 1)
            .unwrap()
            .iter()
            .map(|e| e.revision)
            .collect();
        assert_eq!(revs, vec![3]);
        assert_eq!(h.since("/registry/", 0).unwrap().len(), 3);
    }

    #[test]
    fn compaction_drops_events_and_rejects_old_watches() {
        let mut h = History::new();
        for r in 1..=5 {
            h.record("/k", WatchEventType::Added, r, node());
        }
        h.compact(3);
        assert_eq!(h.len(), 2);
        assert_eq!(
            h.since("/k", 2),
            Err(StoreError::Compacted {
                requested: 2,
                oldest: 3
            })
        );
        assert_eq!(h.since("/k", 3).unwrap().len(), 2);
        // Compacting backwards is a no-op.
        h.compact(1);
        assert_eq!(h.compacted(), 3);
    }
}
