//! The scheduler's informers: keep the [`Cache`] in step with the apiserver by watching Nodes,
//! Pods and PodGroups from the last revision seen, applying each change to the one object it
//! touches (upstream `pkg/scheduler/eventhandlers.go` `addNodeToCache`, `updatePodInCache`, ...
//! fed by client-go informers). The first sync, and any watch answered `410 Gone` because the
//! history was compacted, lists everything instead (upstream's relist).
//!
//! Change detection for the queue: a sync reports whether anything that can make a pending pod
//! schedulable changed between the state at the previous sync and now: a node's identity, labels,
//! taints, cordon or allocatable; a bound non-terminal pod's identity, node or deletion; a gang
//! member's group; a PodGroup's minMember or timeout. An object changed and changed back between
//! two syncs counts as unchanged.
//!
//! Cluster events for the queue's queueing hints: the same tracker keeps each touched object as it
//! was before the first change, and [`ChangeTracker::events`] turns (before, now) into upstream's
//! cluster events (`crate::queueing_hints`), in object order (Nodes, Pods, PodGroups, each by
//! name). A relist gives one wildcard event instead.

use k8s_types::object::Shared;
use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Node, Pod};
use k8s_types::object::{Kind, Object, Resource};
use k8s_types::policy::PodDisruptionBudget;
use k8s_types::scheduling::PodGroup;
use k8s_types::store::{WatchEvent, WatchEventType};

use crate::cache::Cache;
use crate::queueing_hints::{node_events, pod_events, pod_group_events, ObservedEvent};

/// A fingerprint of the scheduling-relevant fields of a Node. Used only for change detection.
pub fn node_fingerprint(n: &Node) -> u64 {
    let mut h = DefaultHasher::new();
    n.metadata.name.hash(&mut h);
    n.metadata.labels.hash(&mut h);
    n.spec.unschedulable.hash(&mut h);
    for t in &n.spec.taints {
        (&t.key, &t.value, &t.effect).hash(&mut h);
    }
    n.status.allocatable.hash(&mut h);
    h.finish()
}

/// A fingerprint of what of a pod matters to other pending pods: a bound non-terminal pod's
/// identity, node and deletion; an unbound gang member's group; `None` otherwise.
pub fn pod_fingerprint(p: &Pod) -> Option<u64> {
    let mut h = DefaultHasher::new();
    if let Some(node) = p.node_name() {
        if p.is_terminal() {
            return None;
        }
        (&p.metadata.uid, node, p.is_terminating()).hash(&mut h);
    } else if let Some(pg) = p.pod_group() {
        pg.hash(&mut h);
    } else {
        return None;
    }
    Some(h.finish())
}

/// A fingerprint of a PodGroup's spec fields the scheduler reads.
pub fn pod_group_fingerprint(g: &PodGroup) -> u64 {
    let mut h = DefaultHasher::new();
    (g.spec.min_member, g.spec.schedule_timeout_seconds).hash(&mut h);
    h.finish()
}

/// Which object a change touched, for change detection.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum ObjectKey {
    Node(String),
    Pod(String),
    PodGroup(String),
}

/// A touched object as it was before the first change of a batch.
#[derive(Clone, Debug)]
enum OldObject {
    Node(Option<Arc<Node>>),
    Pod(Option<Shared<Pod>>),
    PodGroup(Option<Arc<PodGroup>>),
}

/// Applies changes to a [`Cache`] and remembers, per touched object, its fingerprint (and the
/// object) before the first change, so [`ChangeTracker::changed`] can tell whether the batch
/// changed anything that matters and [`ChangeTracker::events`] which cluster events it made.
#[derive(Debug, Default)]
pub(crate) struct ChangeTracker {
    before: BTreeMap<ObjectKey, Option<u64>>,
    old: BTreeMap<ObjectKey, OldObject>,
}

impl ChangeTracker {
    fn note(&mut self, key: ObjectKey, fingerprint: Option<u64>) {
        self.before.entry(key).or_insert(fingerprint);
    }

    fn note_old(&mut self, key: ObjectKey, old: OldObject) {
        self.old.entry(key).or_insert(old);
    }

    /// The cluster events of the batch: each touched object's state before the first change
    /// against its state in `cache` now, in object order.
    pub(crate) fn events(&self, cache: &Cache) -> Vec<ObservedEvent> {
        let mut out = Vec::new();
        for (k, old) in &self.old {
            match (k, old) {
                (ObjectKey::Node(n), OldObject::Node(o)) => {
                    let now = cache.node_info(n).map(|ni| ni.node_arc());
                    out.extend(node_events(o.as_ref(), now));
                }
                (ObjectKey::Pod(p), OldObject::Pod(o)) => {
                    out.extend(pod_events(o.as_ref(), cache.pod(p)));
                }
                (ObjectKey::PodGroup(g), OldObject::PodGroup(o)) => {
                    out.extend(pod_group_events(o.as_ref(), cache.pod_group(g)));
                }
                _ => {}
            }
        }
        out
    }

    /// Adds or replaces a node.
    pub(crate) fn upsert_node(&mut self, cache: &mut Cache, node: Arc<Node>) {
        let name = node.metadata.name.clone();
        let old = cache.upsert_node(node);
        self.note_old(ObjectKey::Node(name.clone()), OldObject::Node(old.clone()));
        self.note(ObjectKey::Node(name), old.map(|n| node_fingerprint(&n)));
    }

    /// Removes a node.
    pub(crate) fn remove_node(&mut self, cache: &mut Cache, name: &str) {
        let old = cache.remove_node(name);
        self.note_old(
            ObjectKey::Node(name.to_string()),
            OldObject::Node(old.clone()),
        );
        self.note(
            ObjectKey::Node(name.to_string()),
            old.map(|n| node_fingerprint(&n)),
        );
    }

    /// Adds or replaces a pod.
    pub(crate) fn upsert_pod(&mut self, cache: &mut Cache, pod: Shared<Pod>) {
        let key = pod.key();
        let old = cache.upsert_pod(pod);
        self.note_old(ObjectKey::Pod(key.clone()), OldObject::Pod(old.clone()));
        self.note(ObjectKey::Pod(key), old.and_then(|p| pod_fingerprint(&p)));
    }

    /// Removes a pod by `namespace/name`.
    pub(crate) fn remove_pod(&mut self, cache: &mut Cache, key: &str) {
        let old = cache.remove_pod(key);
        self.note_old(ObjectKey::Pod(key.to_string()), OldObject::Pod(old.clone()));
        self.note(
            ObjectKey::Pod(key.to_string()),
            old.and_then(|p| pod_fingerprint(&p)),
        );
    }

    /// Adds or replaces a PodGroup.
    pub(crate) fn upsert_pod_group(&mut self, cache: &mut Cache, pg: Arc<PodGroup>) {
        let key = format!("{}/{}", pg.metadata.namespace(), pg.metadata.name);
        let old = cache.upsert_pod_group(pg);
        self.note_old(
            ObjectKey::PodGroup(key.clone()),
            OldObject::PodGroup(old.clone()),
        );
        self.note(
            ObjectKey::PodGroup(key),
            old.map(|g| pod_group_fingerprint(&g)),
        );
    }

    /// Removes a PodGroup by `namespace/name`.
    pub(crate) fn remove_pod_group(&mut self, cache: &mut Cache, key: &str) {
        let old = cache.remove_pod_group(key);
        self.note_old(
            ObjectKey::PodGroup(key.to_string()),
            OldObject::PodGroup(old.clone()),
        );
        self.note(
            ObjectKey::PodGroup(key.to_string()),
            old.map(|g| pod_group_fingerprint(&g)),
        );
    }

    /// Applies one watch event of a Node, Pod or PodGroup (other kinds are ignored).
    pub(crate) fn apply(&mut self, cache: &mut Cache, ev: WatchEvent) {
        let deleted = ev.type_ == WatchEventType::Deleted;
        // The watch shares the stored object; the cache keeps typed objects of its own (a deleted
        // object is only read, so it is not copied).
        match &*ev.object {
            Object::Node(n) if deleted => self.remove_node(cache, &n.metadata.name),
            Object::Pod(p) if deleted => self.remove_pod(cache, &p.key()),
            Object::PodDisruptionBudget(b) if deleted => {
                cache.remove_pdb(&format!("{}/{}", b.metadata.namespace(), b.metadata.name));
                return;
            }
            // A budget is read by preemption only; its changes are no cluster event.
            Object::PodDisruptionBudget(_) => {
                if let Some(b) = PodDisruptionBudget::from_object_ref(&ev.object) {
                    cache.upsert_pdb(Arc::new(b.clone()));
                }
                return;
            }
            Object::PodGroup(g) if deleted => {
                let key = format!("{}/{}", g.metadata.namespace(), g.metadata.name);
                self.remove_pod_group(cache, &key);
            }
            _ => {}
        }
        if deleted {
            return;
        }
        // A pod is held as the stored object itself (`Shared<Pod>`, no copy: the cache, the store
        // and the other informers share one version); Nodes and PodGroups are few and copied.
        if matches!(&*ev.object, Object::Pod(_)) {
            if let Some(p) = Shared::<Pod>::new(ev.object) {
                self.upsert_pod(cache, p);
            }
            return;
        }
        match Arc::unwrap_or_clone(ev.object) {
            Object::Node(n) => self.upsert_node(cache, Arc::new(*n)),
            Object::PodGroup(g) => self.upsert_pod_group(cache, Arc::new(*g)),
            _ => {}
        }
    }

    /// True when some touched object's fingerprint now differs from before the first change.
    pub(crate) fn changed(&self, cache: &Cache) -> bool {
        self.before.iter().any(|(k, before)| {
            let now = match k {
                ObjectKey::Node(n) => cache.node_info(n).map(|ni| node_fingerprint(ni.node())),
                ObjectKey::Pod(p) => cache.pod(p).and_then(|p| pod_fingerprint(p)),
                ObjectKey::PodGroup(g) => cache.pod_group(g).map(|g| pod_group_fingerprint(g)),
            };
            now != *before
        })
    }
}

/// The watch position of the scheduler's informers.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Informer {
    /// The store revision the cache reflects; `None` before the first list.
    synced: Option<i64>,
}

/// What a sync did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Synced {
    /// Everything was listed again; the cache was rebuilt (assumed pods are gone).
    Relisted,
    /// Watch events were applied; `true` when something relevant changed.
    Watched(bool),
}

impl Informer {
    /// The store revision the cache reflects (`None` before the first list): the next sync
    /// watches the history after it.
    pub(crate) fn position(&self) -> Option<i64> {
        self.synced
    }

    /// Brings `cache` up to the apiserver's current revision and appends the cluster events of
    /// the watched changes to `events` (nothing after a relist: the caller treats it as a
    /// wildcard event).
    ///
    /// With `upto`, the watch delivers the changes up to that revision only (an informer that
    /// lags, `Scheduler::schedule_upto`); a list is of the current state.
    pub(crate) fn sync(
        &mut self,
        api: &dyn ApiClient,
        upto: Option<i64>,
        cache: &mut Cache,
        events: &mut Vec<ObservedEvent>,
    ) -> Synced {
        let current = api.revision();
        let revision = upto.map_or(current, |u| u.min(current));
        if let Some(after) = self.synced {
            if upto.is_some() && after >= revision {
                cache.finish_batch();
                return Synced::Watched(false);
            }
            let watched = [
                Kind::Node,
                Kind::PodGroup,
                Kind::Pod,
                Kind::PodDisruptionBudget,
            ]
            .iter()
            .map(|k| api.watch(k, after))
            .collect::<Result<Vec<_>, _>>();
            if let Ok(batches) = watched {
                let mut tracker = ChangeTracker::default();
                for ev in batches.into_iter().flatten() {
                    if ev.revision <= revision {
                        tracker.apply(cache, ev);
                    }
                }
                cache.finish_batch();
                events.extend(tracker.events(cache));
                self.synced = Some(revision);
                return Synced::Watched(tracker.changed(cache));
            }
            tracing::info!(
                revision = after,
                "watch history compacted; relisting nodes, pods and PodGroups"
            );
        }
        let nodes: Vec<Node> = api.list_typed(None, None);
        let pods: Vec<Shared<Pod>> = api
            .list_shared(&Kind::Pod, None, None)
            .into_iter()
            .filter_map(Shared::new)
            .collect();
        let groups: Vec<PodGroup> = api.list_typed(None, None);
        cache.rebuild(nodes, pods, groups);
        for b in api.list_typed::<PodDisruptionBudget>(None, None) {
            cache.upsert_pdb(Arc::new(b));
        }
        self.synced = Some(current);
        Synced::Relisted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf_workloads::{make_node, make_pod, PodTemplate};

    /// The cache holds a watched pod as the watch event's object itself (the store's version,
    /// shared), not a copy: the pod in the cache and in the node's PodInfo is the same allocation
    /// as the event's, and a later version replaces it.
    #[test]
    fn watched_pod_is_held_as_the_shared_stored_object() {
        let mut cache = Cache::default();
        let mut tracker = ChangeTracker::default();
        let node = make_node("node-0", None);
        let node_name = node.metadata.name.clone();
        tracker.apply(
            &mut cache,
            WatchEvent {
                type_: WatchEventType::Added,
                revision: 1,
                object: Arc::new(Object::Node(Box::new(node))),
            },
        );
        let mut pod = make_pod(PodTemplate::Default, "default", "", 0);
        pod.metadata.uid = Some("uid-0".into());
        pod.spec.node_name = Some(node_name.clone());
        let key = pod.key();
        let stored = Arc::new(Object::Pod(Box::new(pod.clone())));
        tracker.apply(
            &mut cache,
            WatchEvent {
                type_: WatchEventType::Added,
                revision: 2,
                object: Arc::clone(&stored),
            },
        );
        cache.finish_batch();
        let held = cache.pod(&key).expect("pod in the cache");
        assert!(Arc::ptr_eq(held.object(), &stored));
        let on_node = cache.node_info(&node_name).expect("node").pods();
        assert_eq!(on_node.len(), 1);
        assert!(Arc::ptr_eq(on_node[0].pod.object(), &stored));
        // A new version (a label added) is held in place of the first.
        pod.metadata.labels.insert("v".into(), "2".into());
        let second = Arc::new(Object::Pod(Box::new(pod)));
        tracker.apply(
            &mut cache,
            WatchEvent {
                type_: WatchEventType::Modified,
                revision: 3,
                object: Arc::clone(&second),
            },
        );
        cache.finish_batch();
        let held = cache.pod(&key).expect("pod in the cache");
        assert!(Arc::ptr_eq(held.object(), &second));
        assert_eq!(held.metadata.labels.get("v").map(String::as_str), Some("2"));
        assert_eq!(
            Arc::strong_count(&stored),
            1,
            "the first version is released"
        );
    }
}
