//! Watch (`?watch=true`): kube-apiserver's watch cache in small. Every change the store makes is
//! read once after each request and each tick and kept, up to [`CAPACITY`] events; a watch starts
//! from a resourceVersion within that window (older: an `ERROR` event with a 410 `Expired` Status,
//! as upstream's `cacheWatcher`), or with the current objects as synthetic `ADDED` events when no
//! resourceVersion (or `0`) is given. Events go out as JSON lines of `WatchEvent`s; a Table watch
//! (`kubectl get -w`) gets one-row Tables, column definitions in the first only. Selectors are
//! checked on the object before and after each change, as upstream's `cacheWatcher`
//! (`convertToWatchEvent`): an object that comes into the selection is `ADDED`, one that leaves it
//! is `DELETED` (its state before the change). With
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

use crate::serve::custom::PrinterColumn;
use crate::serve::fields::FieldSelector;
use crate::serve::rest::typed_json;
use crate::serve::table::{self, Include};

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
    /// The object before the change (`None` for a create).
    prev: Option<Arc<Object>>,
}

/// What a watcher asked for.
pub(crate) struct Watcher {
    pub(crate) kind: Kind,
    pub(crate) group_version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) labels: Option<LabelSelector>,
    pub(crate) fields: FieldSelector,
    pub(crate) table: Option<Include>,
    /// The Table columns of a custom resource (empty: the kind's built-in printer).
    pub(crate) columns: Vec<PrinterColumn>,
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
                    &self.columns,
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

    /// Sends a change as upstream's `convertToWatchEvent`: what the selection sees of it. A
    /// deletion passes when the object did before it; an object leaving the selection goes out as
    /// `DELETED` with its state before the change and the change's resourceVersion.
    fn send_change(&mut self, c: &Cached, now: Tick) -> bool {
        let before = c.prev.as_deref().unwrap_or(&c.object);
        let cur = c.type_ != WatchEventType::Deleted && self.wants(&c.object);
        let old = (c.prev.is_some() || c.type_ == WatchEventType::Deleted) && self.wants(before);
        let left;
        let (type_, obj): (&str, &Object) = match (cur, old) {
            (true, true) => ("MODIFIED", &c.object),
            (true, false) => ("ADDED", &c.object),
            (false, true) => {
                let mut o = before.clone();
                o.meta_mut().resource_version = c.object.meta().resource_version.clone();
                left = o;
                ("DELETED", &left)
            }
            (false, false) => return !self.tx.is_closed(),
        };
        let line = self.line(type_, obj, now);
        self.tx.send(line).is_ok()
    }

    /// Sends a bookmark at `rev` (annotated as the end of the initial events when asked).
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
    /// The latest state of every object seen changing, by store key (for `Cached::prev`).
    latest: std::collections::BTreeMap<String, Arc<Object>>,
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
            latest: std::collections::BTreeMap::new(),
            synced: rev,
            complete_after: rev,
        }
    }

    /// Reads the changes since the last call and hands each to the watchers (dropping those
    /// whose client went away).
    /// `kinds` are the kinds served now (built-in, alpha, CRDs and custom resources).
    pub(crate) fn sync(
        &mut self,
        api: &dyn ApiClient,
        kinds: &[Kind],
        watchers: &mut Vec<Watcher>,
        now: Tick,
    ) {
        let rev = api.revision();
        if rev == self.synced {
            return;
        }
        let mut fresh = Vec::new();
        for kind in kinds {
            if let Ok(evs) = api.watch(kind, self.synced) {
                fresh.extend(evs.into_iter().map(|e| Cached {
                    rev: e.revision,
                    type_: e.type_,
                    object: e.object,
                    prev: None,
                }));
            }
        }
        fresh.sort_by_key(|c| c.rev);
        for mut c in fresh {
            let key = c.object.key();
            c.prev = match c.type_ {
                WatchEventType::Added => self.latest.insert(key, c.object.clone()),
                WatchEventType::Modified => {
                    self.latest.insert(key, c.object.clone()).or_else(|| {
                        // Changed for the first time since the server started: its state before is
                        // not known; treat it as unchanged for the selection.
                        Some(c.object.clone())
                    })
                }
                WatchEventType::Deleted => self.latest.remove(&key),
            };
            watchers.retain_mut(|w| w.send_change(&c, now));
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
                    if !w.send_change(c, now) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(app: &str, rv: &str) -> Arc<Object> {
        let v = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": app}, "resourceVersion": rv},
            "spec": {"containers": [{"name": "c", "image": "i"}]}});
        Arc::new(k8s_cluster::manifest::decode_object_json(&Kind::Pod, v).unwrap())
    }

    #[test]
    fn an_object_leaving_the_selection_is_deleted_with_its_state_before() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut w = Watcher {
            kind: Kind::Pod,
            group_version: "v1".into(),
            namespace: None,
            labels: Some(LabelSelector::parse("app=web").unwrap()),
            fields: FieldSelector::default(),
            table: None,
            columns: Vec::new(),
            bookmarks: false,
            sent_headers: false,
            tx,
        };
        let mut next = |w: &mut Watcher, type_, object, prev| {
            assert!(w.send_change(
                &Cached {
                    rev: 0,
                    type_,
                    object,
                    prev
                },
                0
            ));
            rx.try_recv()
                .ok()
                .map(|l| serde_json::from_slice::<Value>(&l).unwrap())
        };
        let added = next(&mut w, WatchEventType::Added, pod("web", "5"), None).unwrap();
        assert_eq!(added["type"], "ADDED");
        let left = next(
            &mut w,
            WatchEventType::Modified,
            pod("db", "6"),
            Some(pod("web", "5")),
        )
        .unwrap();
        assert_eq!(left["type"], "DELETED");
        assert_eq!(left["object"]["metadata"]["labels"]["app"], "web");
        assert_eq!(left["object"]["metadata"]["resourceVersion"], "6");
        assert!(next(
            &mut w,
            WatchEventType::Modified,
            pod("db", "7"),
            Some(pod("db", "6"))
        )
        .is_none());
        let back = next(
            &mut w,
            WatchEventType::Modified,
            pod("web", "8"),
            Some(pod("db", "7")),
        )
        .unwrap();
        assert_eq!(back["type"], "ADDED");
        let gone = next(
            &mut w,
            WatchEventType::Deleted,
            pod("web", "9"),
            Some(pod("web", "8")),
        )
        .unwrap();
        assert_eq!(gone["type"], "DELETED");
    }
}
