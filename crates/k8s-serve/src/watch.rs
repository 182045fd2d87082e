//! Watch (`?watch=true`): kube-apiserver's watch cache in small. Every change the store makes is
//! read once after each request and each tick and kept, up to [`CAPACITY`] events; a watch starts
//! from a resourceVersion within that window (older: an `ERROR` event with a 410 `Expired` Status,
//! as upstream's `cacheWatcher`), or with the current objects as synthetic `ADDED` events when no
//! resourceVersion (or `0`) is given. Events go out as JSON lines of `WatchEvent`s; a Table watch
//! (`kubectl get -w`) gets one-row Tables, column definitions in the first only. With
//! `allowWatchBookmarks`, a `BOOKMARK` carrying the current resourceVersion is sent at every tick
//! whose number is a multiple of [`BOOKMARK_EVERY`] (upstream sends one about every minute).

use std::collections::VecDeque;
use std::sync::Arc;

use k8s_types::apiserver::ApiClient;
use k8s_types::labels::LabelSelector;
use k8s_types::object::{Kind, Object};
use k8s_types::store::WatchEventType;
use k8s_types::Tick;
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedSender;

use crate::fields::FieldSelector;
use crate::rest::typed_json;
use crate::table::{self, Include};

/// Events the cache keeps.
pub(crate) const CAPACITY: usize = 100_000;

/// Ticks between two bookmarks (a tick is a simulated second).
pub(crate) const BOOKMARK_EVERY: Tick = 60;

/// One change.
#[derive(Clone, Debug)]
pub(crate) struct Cached {
    rev: i64,
    type_: WatchEventType,
    object: Arc<Object>,
}

/// What a watcher asked for.
pub(crate) struct Watcher {
    pub(crate) kind: Kind,
    pub(crate) group_version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) labels: Option<LabelSelector>,
    pub(crate) fields: FieldSelector,
    pub(crate) table: Option<Include>,
    pub(crate) bookmarks: bool,
    pub(crate) sent_headers: bool,
    pub(crate) tx: UnboundedSender<Vec<u8>>,
}

impl Watcher {
    fn wants(&self, obj: &Object) -> bool {
        obj.kind() == self.kind
            && self
                .namespace
                .as_deref()
                .is_none_or(|ns| obj.meta().namespace() == ns)
            && self
                .labels
                .as_ref()
                .is_none_or(|l| l.matches(&obj.meta().labels))
            && self.fields.matches(obj)
    }

    fn line(&mut self, type_: &str, obj: &Object, now: Tick) -> Vec<u8> {
        let object = match self.table {
            Some(include) => {
                let rv = obj.meta().resource_version.clone().unwrap_or_default();
                let t = table::table(
                    &self.kind,
                    &[obj],
                    now,
                    include,
                    !self.sent_headers,
                    json!({"resourceVersion": rv}),
                );
                self.sent_headers = true;
                t
            }
            None => typed_json(obj),
        };
        encode(type_, &object)
    }

    /// Sends an event; false when the client is gone.
    pub(crate) fn send(&mut self, type_: &str, obj: &Object, now: Tick) -> bool {
        if !self.wants(obj) {
            return !self.tx.is_closed();
        }
        let line = self.line(type_, obj, now);
        self.tx.send(line).is_ok()
    }

    /// Sends a bookmark at `rev` (extra annotations for the end of the initial events).
    pub(crate) fn bookmark(&self, rev: i64, initial_end: bool) -> bool {
        let mut meta = json!({"resourceVersion": rev.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj =
            json!({"kind": self.kind.name(), "apiVersion": self.group_version, "metadata": meta});
        self.tx.send(encode("BOOKMARK", &obj)).is_ok()
    }
}

/// One JSON line of a `WatchEvent`.
pub(crate) fn encode(type_: &str, object: &Value) -> Vec<u8> {
    let mut v = serde_json::to_vec(&json!({"type": type_, "object": object})).unwrap_or_default();
    v.push(b'\n');
    v
}

/// The cache of recent changes.
pub(crate) struct WatchCache {
    events: VecDeque<Cached>,
    /// The store revision read up to.
    synced: i64,
    /// Changes after this revision are all in `events`.
    complete_after: i64,
}

impl WatchCache {
    /// A cache that starts at the store's current revision.
    pub(crate) fn new(rev: i64) -> WatchCache {
        WatchCache {
            events: VecDeque::new(),
            synced: rev,
            complete_after: rev,
        }
    }

    /// Reads the changes since the last call and hands each to the watchers (dropping those
    /// whose client went away).
    pub(crate) fn sync(&mut self, api: &dyn ApiClient, watchers: &mut Vec<Watcher>, now: Tick) {
        let rev = api.revision();
        if rev == self.synced {
            return;
        }
        let mut fresh = Vec::new();
        for kind in Kind::TYPED {
            if let Ok(evs) = api.watch(&kind, self.synced) {
                fresh.extend(evs.into_iter().map(|e| Cached {
                    rev: e.revision,
                    type_: e.type_,
                    object: e.object,
                }));
            }
        }
        fresh.sort_by_key(|c| c.rev);
        for c in fresh {
            watchers.retain_mut(|w| w.send(c.type_.as_str(), &c.object, now));
            self.events.push_back(c);
        }
        while self.events.len() > CAPACITY {
            if let Some(old) = self.events.pop_front() {
                self.complete_after = old.rev;
            }
        }
        self.synced = rev;
    }

    /// Starts a watcher from `rv`: `None` sends the current objects first. `Err` with the Status
    /// line to send when `rv` is older than the cache.
    pub(crate) fn start(
        &self,
        api: &dyn ApiClient,
        mut w: Watcher,
        rv: Option<i64>,
        initial_end_bookmark: bool,
        now: Tick,
    ) -> Result<Option<Watcher>, Vec<u8>> {
        match rv {
            None => {
                for obj in api.list_shared(&w.kind, w.namespace.as_deref(), w.labels.as_ref()) {
                    if !w.send("ADDED", &obj, now) {
                        return Ok(None);
                    }
                }
                if initial_end_bookmark && !w.bookmark(self.synced, true) {
                    return Ok(None);
                }
            }
            Some(from) if from < self.complete_after => {
                let status = json!({
                    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": format!("too old resource version: {from} ({})", self.complete_after + 1),
                    "reason": "Expired", "code": 410,
                });
                return Err(encode("ERROR", &status));
            }
            Some(from) => {
                for c in self.events.iter().filter(|c| c.rev > from) {
                    if !w.send(c.type_.as_str(), &c.object, now) {
                        return Ok(None);
                    }
                }
            }
        }
        Ok(Some(w))
    }

    /// The revision read up to.
    pub(crate) fn synced(&self) -> i64 {
        self.synced
    }
}
