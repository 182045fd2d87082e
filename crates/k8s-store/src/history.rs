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
//!
//! The events are kept per resource part of their keys (as the store's objects, `objects.rs`): a
//! watch under `/registry/pods/` reads the pod events only, not the Events and leases written in
//! between. A watch under a shorter prefix merges the resources it covers in revision order.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use arcstr::ArcStr;

use k8s_types::store::{StoreError, WatchEvent, WatchEventType};
use k8s_types::Object;

use crate::objects::split;

/// One recorded change: the key it happened at (its rest after the resource part the entry is
/// listed under) and the event. The event's object is shared with the store (and with every
/// watcher it is served to), and so is the key's rest (the store's map holds the same `ArcStr`), so
/// keeping history copies neither.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    rest: ArcStr,
    event: WatchEvent,
}

/// The changes since the last compaction, per resource part of their keys, each list in
/// revision order. Revisions are strictly increasing because the store appends in write order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    by_resource: BTreeMap<Box<str>, Vec<Entry>>,
    /// Events held in all.
    len: usize,
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
        let rest = ArcStr::from(split(key).1);
        self.record_shared(key, rest, type_, revision, object);
    }

    /// [`History::record`] with the key's rest after its resource part (`objects::split`) given
    /// as the `ArcStr` the store's map already holds, so the entry shares it.
    pub(crate) fn record_shared(
        &mut self,
        key: &str,
        rest: ArcStr,
        type_: WatchEventType,
        revision: i64,
        object: Arc<Object>,
    ) {
        let (resource, _, _) = split(key);
        debug_assert_eq!(&*rest, split(key).1);
        let entry = Entry {
            rest,
            event: WatchEvent {
                type_,
                revision,
                object,
            },
        };
        match self.by_resource.get_mut(resource) {
            Some(list) => list.push(entry),
            None => {
                self.by_resource.insert(resource.into(), vec![entry]);
            }
        }
        self.len += 1;
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
    /// As [`History::since`].
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
        let after = |list: &'_ [Entry]| -> usize {
            list.partition_point(|e| e.event.revision <= after_revision)
        };
        let (resource, prefix_rest, complete) = split(prefix);
        if complete {
            // A prefix through a resource part: that resource's events only, those whose rest
            // starts with the prefix's rest.
            if let Some(list) = self.by_resource.get(resource) {
                for e in &list[after(list)..] {
                    if e.rest.starts_with(prefix_rest) {
                        visit(&e.event);
                    }
                }
            }
            return Ok(());
        }
        // A shorter prefix: every resource part that starts with it (the resource part of a key
        // under it does, and every key of such a resource part starts with it), merged in
        // revision order.
        let mut lists: Vec<&[Entry]> = self
            .by_resource
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(|(r, _)| r.starts_with(prefix))
            .map(|(_, list)| &list[after(list)..])
            .filter(|rest| !rest.is_empty())
            .collect();
        while let Some((i, _)) = lists
            .iter()
            .enumerate()
            .filter_map(|(i, l)| Some((i, l.first()?.event.revision)))
            .min_by_key(|&(_, revision)| revision)
        {
            let (first, rest) = lists[i].split_at(1);
            visit(&first[0].event);
            lists[i] = rest;
        }
        Ok(())
    }

    /// Drops every event at or before `revision`. Compacting to a revision at or below the current
    /// compaction point does nothing.
    pub fn compact(&mut self, revision: i64) {
        if revision <= self.compacted {
            return;
        }
        let mut dropped = 0;
        self.by_resource.retain(|_, list| {
            let cut = list.partition_point(|e| e.event.revision <= revision);
            list.drain(..cut);
            dropped += cut;
            !list.is_empty()
        });
        self.len -= dropped;
        self.compacted = revision;
    }

    /// The compaction point (0 when never compacted).
    pub fn compacted(&self) -> i64 {
        self.compacted
    }

    /// Number of events held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no event is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
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

    /// Kept per resource, the history serves every prefix (through a resource part, shorter,
    /// longer, outside `/registry/`) the events one list in write order serves, in revision order,
    /// before and after compactions.
    #[test]
    fn per_resource_lists_serve_what_one_list_serves() {
        let keys = [
            "/registry/pods/default/a",
            "/registry/pods/default/b",
            "/registry/pods/kube-system/a",
            "/registry/pods-x/default/a",
            "/registry/pod/default/a",
            "/registry/podsa",
            "/registry/pods",
            "/registry/events/default/a.1",
            "/registry/nodes/n-1",
            "/registry/resource.k8s.io/resourceclaims/default/c",
            "/registry/resource.k8s.io/deviceclasses/gpu",
            "/k",
            "/k/x",
            "plain",
        ];
        let prefixes = [
            "",
            "/",
            "/registry/",
            "/registry/pod",
            "/registry/pods",
            "/registry/pods/",
            "/registry/pods/default/",
            "/registry/pods/default/a",
            "/registry/pods-x/",
            "/registry/resource.k8s.io/",
            "/registry/resource.k8s.io/resourceclaims/",
            "/registry/events/default/",
            "/k",
            "/k/",
            "p",
            "/registry/none/",
        ];
        let mut h = History::new();
        let mut all: Vec<(&str, i64)> = Vec::new();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut revision = 0;
        for step in 0..600 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            revision += 1 + (state % 3) as i64;
            let key = keys[(state >> 8) as usize % keys.len()];
            h.record(key, WatchEventType::Added, revision, node());
            all.push((key, revision));
            if step % 150 == 149 {
                let to = revision - 40;
                h.compact(to);
                all.retain(|&(_, r)| r > to);
            }
            if step % 50 != 0 {
                continue;
            }
            assert_eq!(h.len(), all.len());
            for prefix in prefixes {
                for after in [h.compacted(), (revision - 30).max(h.compacted()), revision] {
                    let want: Vec<i64> = all
                        .iter()
                        .filter(|&&(k, r)| r > after && k.starts_with(prefix))
                        .map(|&(_, r)| r)
                        .collect();
                    let got: Vec<i64> = h
                        .since(prefix, after)
                        .expect("not compacted")
                        .iter()
                        .map(|e| e.revision)
                        .collect();
                    assert_eq!(got, want, "{prefix:?} after {after}");
                }
            }
        }
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
