//! Shared informers, after client-go `tools/cache` (`SharedInformerFactory`,
//! `SharedIndexInformer`, `Indexer`, `Reflector.ListAndWatch`): one watch cache per kind that every
//! controller of kube-controller-manager reads, kept current by watching the apiserver from the last
//! revision it saw (a full list the first time and after `410 Gone`), with indexes by namespace,
//! by owner and by node, and a log of the changes ([`Delta`]) that the manager hands to each
//! controller's event handlers.
//!
//! Objects are shared with the apiserver's store (`Arc`): an informer copies no object.
//!
//! Keys are client-go's `MetaNamespaceKeyFunc`: `namespace/name`, or `name` for cluster-scoped
//! kinds. Every iteration is in key order (deterministic).

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use arcstr::ArcStr;

use crate::apiserver::ApiClient;
use crate::labels::LabelSelector;
use crate::meta::OwnerReference;
use crate::object::{Kind, Object, Resource};
use crate::store::WatchEventType;

/// client-go `MetaNamespaceKeyFunc`: `namespace/name`, or `name` when there is no namespace.
pub fn object_key(obj: &Object) -> String {
    let m = obj.meta();
    match m.namespace() {
        "" => m.name.clone(),
        ns => namespaced_key(ns, &m.name),
    }
}

/// `namespace/name`, the key of a namespaced object (client-go `MetaNamespaceKeyFunc`), written
/// with `push_str`: controllers and informers build one per event they handle.
pub fn namespaced_key(namespace: &str, name: &str) -> String {
    let mut key = String::with_capacity(namespace.len() + 1 + name.len());
    key.push_str(namespace);
    key.push('/');
    key.push_str(name);
    key
}

/// Orders two (namespace, name) pairs as their [`namespaced_key`]s order as strings, without
/// building the keys: by name within one namespace (the common case), else byte by byte (a
/// namespace that is a prefix of the other is not simply smaller: `/` sorts after `-`).
pub fn cmp_namespaced(a: (&str, &str), b: (&str, &str)) -> std::cmp::Ordering {
    if a.0 == b.0 {
        return a.1.cmp(b.1);
    }
    let a = a.0.bytes().chain([b'/']).chain(a.1.bytes());
    a.cmp(b.0.bytes().chain([b'/']).chain(b.1.bytes()))
}

/// client-go `SplitMetaNamespaceKey`: (namespace, name); the namespace is empty for a key without
/// a `/`.
pub fn split_key(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

/// One change an informer observed (client-go's `OnAdd` / `OnUpdate` / `OnDelete`, with the
/// object before and after). A resync delivers every object with `old` and `new` the same.
#[derive(Clone, Debug)]
pub struct Delta {
    /// The kind of the object.
    pub kind: Kind,
    /// The object's key (`namespace/name`).
    pub key: String,
    /// The object before the change (`None` for an add).
    pub old: Option<Arc<Object>>,
    /// The object after the change (`None` for a delete).
    pub new: Option<Arc<Object>>,
}

impl Delta {
    /// A change of `kind`'s object at `key` from `old` to `new`.
    fn new(kind: &Kind, key: String, old: Option<Arc<Object>>, new: Option<Arc<Object>>) -> Delta {
        Delta {
            kind: kind.clone(),
            key,
            old,
            new,
        }
    }

    /// The object after the change, else the one deleted.
    pub fn object(&self) -> &Object {
        match (&self.new, &self.old) {
            (Some(o), _) | (None, Some(o)) => o,
            (None, None) => unreachable!("a delta has an old or a new object"),
        }
    }

    /// True for a delete.
    pub fn is_delete(&self) -> bool {
        self.new.is_none()
    }
}

/// One kind's cache with its indexes (client-go `Indexer` with the namespace index, the
/// controller-uid index of `pkg/controller/controller_utils.go` `AddPodControllerUIDIndexer`, an
/// owner-uid index for the garbage collector's dependents, and `spec.nodeName` for pods).
#[derive(Clone, Debug)]
pub struct Informer {
    kind: Kind,
    /// The store revision the cache reflects; `None` before the first list.
    revision: Option<i64>,
    /// Key -> the object's slot in `slots`.
    objects: BTreeMap<ArcStr, usize>,
    /// The objects. A slot keeps its object's place while the object is cached, so an update
    /// replaces the object in its slot and the indexes, which name slots, read the new version
    /// without looking its key up again (the ReplicaSet sync reads thousands of pods by
    /// controller). `None`: a free slot, listed in `free`.
    slots: Vec<Option<Arc<Object>>>,
    /// Free slots, reused last-freed first (slot numbers never reach a caller: every listing is in
    /// key order).
    free: Vec<usize>,
    /// Controller uid -> the objects it controls (key -> slot).
    by_controller: BTreeMap<String, Index>,
    /// Namespace -> the objects without a controller (upstream's `_ORPHAN_POD` index key).
    orphans: BTreeMap<String, Index>,
    /// Owner uid (any ownerReference) -> its dependents.
    by_owner: BTreeMap<String, Index>,
    /// Node name -> the pods bound to it.
    by_node: BTreeMap<String, Index>,
}

/// One index value: the objects under one index key, by object key (so in key order), each with
/// its slot. The object key is the `ArcStr` (one pointer wide) the informer's `objects` map holds:
/// a pod under its controller, its owner and its node is one key string, not four.
type Index = BTreeMap<ArcStr, usize>;

fn index_add(map: &mut BTreeMap<String, Index>, k: &str, key: &ArcStr, slot: usize) {
    match map.get_mut(k) {
        Some(set) => {
            if !set.contains_key(key) {
                set.insert(key.clone(), slot);
            }
        }
        None => {
            map.insert(k.to_string(), Index::from([(key.clone(), slot)]));
        }
    }
}

/// True when `a` and `b` (two versions of one object) sit under the same keys of every index:
/// the same controller (or both none), the same owners in the same order, and for pods the same
/// node. Most updates (status writes) change none of these.
fn same_index_keys(a: &Object, b: &Object) -> bool {
    let (ma, mb) = (a.meta(), b.meta());
    fn node(o: &Object) -> Option<&str> {
        match o {
            Object::Pod(p) => p.node_name(),
            _ => None,
        }
    }
    ma.namespace() == mb.namespace()
        && ma.controller_ref().map(|c| &c.uid) == mb.controller_ref().map(|c| &c.uid)
        && ma.owner_references.len() == mb.owner_references.len()
        && ma
            .owner_references
            .iter()
            .zip(&mb.owner_references)
            .all(|(x, y)| x.uid == y.uid)
        && node(a) == node(b)
}

fn index_remove(map: &mut BTreeMap<String, Index>, k: &str, key: &str) {
    if let Some(set) = map.get_mut(k) {
        set.remove(key);
        if set.is_empty() {
            map.remove(k);
        }
    }
}

impl Informer {
    /// An empty informer of `kind` (the first [`Informer::sync`] lists).
    pub fn new(kind: Kind) -> Informer {
        Informer {
            kind,
            revision: None,
            objects: BTreeMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            by_controller: BTreeMap::new(),
            orphans: BTreeMap::new(),
            by_owner: BTreeMap::new(),
            by_node: BTreeMap::new(),
        }
    }

    /// The kind.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// Number of cached objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Enters `key` under every index key of `obj`, pointing at `slot`; with `slot` `None`,
    /// removes it from them.
    fn index(&mut self, key: &ArcStr, obj: &Object, slot: Option<usize>) {
        let meta = obj.meta();
        let f = |map: &mut BTreeMap<String, Index>, k: &str| match slot {
            Some(slot) => index_add(map, k, key, slot),
            None => index_remove(map, k, key),
        };
        match meta.controller_ref() {
            Some(c) => f(&mut self.by_controller, &c.uid),
            None => f(&mut self.orphans, meta.namespace()),
        }
        for r in &meta.owner_references {
            f(&mut self.by_owner, &r.uid);
        }
        if let Object::Pod(p) = obj {
            if let Some(node) = p.node_name() {
                f(&mut self.by_node, node);
            }
        }
    }

    /// The object in `slot` (every slot `objects` or an index names is filled).
    fn at(&self, slot: usize) -> Option<&Arc<Object>> {
        self.slots.get(slot).and_then(Option::as_ref)
    }

    fn put(&mut self, key: &str, obj: Arc<Object>) -> Option<Arc<Object>> {
        if let Some((key, &slot)) = self.objects.get_key_value(key) {
            let new = Arc::clone(&obj);
            let old = self.slots[slot].replace(obj);
            // Most updates (status writes) keep every index key: no reindexing, no key share.
            if old.as_ref().is_some_and(|o| same_index_keys(o, &new)) {
                return old;
            }
            let key = key.clone();
            if let Some(o) = &old {
                self.index(&key, o, None);
            }
            self.index(&key, &new, Some(slot));
            return old;
        }
        let slot = match self.free.pop() {
            Some(free) => {
                self.slots[free] = Some(Arc::clone(&obj));
                free
            }
            None => {
                self.slots.push(Some(Arc::clone(&obj)));
                self.slots.len() - 1
            }
        };
        let key = ArcStr::from(key);
        self.index(&key, &obj, Some(slot));
        self.objects.insert(key, slot);
        None
    }

    fn remove(&mut self, key: &str) -> Option<Arc<Object>> {
        let (key, slot) = self.objects.remove_entry(key)?;
        let old = self.slots[slot].take()?;
        self.free.push(slot);
        self.index(&key, &old, None);
        Some(old)
    }

    /// Brings the cache to the apiserver's current revision (client-go `Reflector`: watch from the
    /// last revision, or list when there is none or the watch answers `410 Gone`) and appends
    /// what changed to `out`, in revision order (a relist: in key order).
    pub fn sync(&mut self, api: &dyn ApiClient, out: &mut Vec<(i64, Delta)>) {
        self.sync_upto(api, None, out);
    }

    /// [`Informer::sync`] with the watch delivering only the changes up to revision `upto` (when
    /// set): an informer whose watch events arrive late (the cluster's `spec.informerLag`), so
    /// its cache shows older resourceVersions than the store. A list (the first sync, or after
    /// `410 Gone`) is always of the current state, as a list is served from the store.
    pub fn sync_upto(
        &mut self,
        api: &dyn ApiClient,
        upto: Option<i64>,
        out: &mut Vec<(i64, Delta)>,
    ) {
        let current = api.revision();
        let target = upto.map_or(current, |u| u.min(current));
        if self.revision.is_some_and(|r| r >= target) {
            return;
        }
        let followed = self.revision.is_some_and(|r| {
            let kind = self.kind.clone();
            api.watch_each(&kind, r, &mut |ev| {
                // Changes after `target` have not arrived yet (they come last).
                if ev.revision > target {
                    return;
                }
                let key = object_key(&ev.object);
                let (old, new) = match ev.type_ {
                    WatchEventType::Deleted => (self.remove(&key), None),
                    _ => (
                        self.put(&key, Arc::clone(&ev.object)),
                        Some(Arc::clone(&ev.object)),
                    ),
                };
                out.push((ev.revision, Delta::new(&kind, key, old, new)));
            })
            .is_ok()
        });
        if followed {
            self.revision = Some(target);
            return;
        }
        let fresh: BTreeMap<String, Arc<Object>> = api
            .list_shared(&self.kind, None, None)
            .into_iter()
            .map(|o| (object_key(&o), o))
            .collect();
        let gone: Vec<String> = self
            .objects
            .keys()
            .filter(|k| !fresh.contains_key(&***k))
            .map(|k| k.to_string())
            .collect();
        for key in gone {
            let old = self.remove(&key);
            out.push((current, Delta::new(&self.kind, key, old, None)));
        }
        self.revision = Some(current);
        for (key, obj) in fresh {
            let same = self
                .get(&key)
                .is_some_and(|o| o.meta().resource_version == obj.meta().resource_version);
            if same {
                continue;
            }
            let old = self.put(&key, Arc::clone(&obj));
            out.push((current, Delta::new(&self.kind, key, old, Some(obj))));
        }
    }

    /// One object by key.
    pub fn get(&self, key: &str) -> Option<&Arc<Object>> {
        self.objects.get(key).and_then(|&slot| self.at(slot))
    }

    /// One typed object by key.
    pub fn get_typed<R: Resource>(&self, key: &str) -> Option<&R> {
        self.get(key).and_then(|o| R::from_object_ref(o))
    }

    /// Every object, in key order.
    pub fn list(&self) -> impl Iterator<Item = &Arc<Object>> {
        self.objects.values().filter_map(|&slot| self.at(slot))
    }

    /// Every typed object, in key order.
    pub fn list_typed<'a, R: Resource + 'a>(&'a self) -> impl Iterator<Item = &'a R> + 'a {
        self.list().filter_map(|o| R::from_object_ref(o))
    }

    /// The objects of one namespace, in key order (client-go's namespace index / lister).
    pub fn list_namespace<'a, R: Resource + 'a>(
        &'a self,
        namespace: &str,
    ) -> impl Iterator<Item = &'a R> + 'a {
        // Nothing to build for an empty cache (a controller looks up, e.g., the Services or
        // PodDisruptionBudgets of every changed pod's namespace, most often finding none).
        let prefix = match self.objects.is_empty() {
            true => String::new(),
            false => namespaced_key(namespace, ""),
        };
        // The range borrows the map only, so the prefix moves into the filter uncopied.
        self.objects
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(&prefix))
            .filter_map(|(_, &slot)| self.at(slot).and_then(|o| R::from_object_ref(o)))
    }

    fn by(&self, map: &BTreeMap<String, Index>, k: &str) -> Vec<&Arc<Object>> {
        map.get(k)
            .into_iter()
            .flat_map(|set| set.values())
            .filter_map(|&slot| self.at(slot))
            .collect()
    }

    /// The objects whose controller has `uid`, in key order.
    pub fn controlled_by(&self, uid: &str) -> Vec<&Arc<Object>> {
        self.by(&self.by_controller, uid)
    }

    /// The objects of `namespace` without a controller, in key order.
    pub fn orphans(&self, namespace: &str) -> Vec<&Arc<Object>> {
        self.by(&self.orphans, namespace)
    }

    /// The objects with an ownerReference to `uid`, in key order.
    pub fn dependents_of(&self, uid: &str) -> Vec<&Arc<Object>> {
        self.by(&self.by_owner, uid)
    }

    /// The keys of the pods bound to `node`, in key order.
    pub fn keys_on_node(&self, node: &str) -> impl Iterator<Item = &str> {
        self.by_node
            .get(node)
            .into_iter()
            .flat_map(|set| set.keys().map(|k| &**k))
    }

    /// The pods bound to `node`, in key order.
    pub fn pods_on_node(&self, node: &str) -> Vec<&Arc<Object>> {
        self.by(&self.by_node, node)
    }
}

/// Every informer of one process (client-go `SharedInformerFactory`), and the log of the changes
/// they observed that some consumer has not read yet.
#[derive(Clone, Debug, Default)]
pub struct SharedInformerFactory {
    informers: BTreeMap<Kind, Informer>,
    /// Changes not yet read by every consumer; `log[0]` has sequence number `log_start`.
    log: VecDeque<Delta>,
    log_start: u64,
}

impl SharedInformerFactory {
    /// A factory with no informers.
    pub fn new() -> SharedInformerFactory {
        SharedInformerFactory::default()
    }

    /// The oldest store revision a started informer reflects, `None` when none has listed yet:
    /// their next watches need the history after it and nothing before (an informer that has
    /// not listed lists, it does not watch). A cluster compacts no further than this.
    pub fn watch_position(&self) -> Option<i64> {
        self.informers.values().filter_map(|i| i.revision).min()
    }

    /// Starts an informer for `kind` (no-op when it exists); it lists at the next sync.
    pub fn start(&mut self, kind: Kind) {
        self.informers
            .entry(kind.clone())
            .or_insert_with(|| Informer::new(kind));
    }

    /// Upstream `resolveControllerRef`: the key of the object of `kind` that `cref` names in
    /// `namespace`, when `cref` is of that kind and the informer holds it with the same uid.
    pub fn resolve_controller_ref(
        &self,
        kind: &Kind,
        namespace: &str,
        cref: &OwnerReference,
    ) -> Option<String> {
        if cref.kind != kind.name() {
            return None;
        }
        let key = namespaced_key(namespace, &cref.name);
        let owner = self.informer(kind)?.get(&key)?;
        (owner.meta().uid.as_deref() == Some(cref.uid.as_str())).then_some(key)
    }

    /// The keys of the objects of `kind` in `namespace` whose label selector (`selector_of`) is
    /// set, non-empty and matches `labels` (upstream `getPodReplicaSets`,
    /// `getDeploymentsForReplicaSet`), in key order.
    pub fn selecting<R: Resource>(
        &self,
        kind: &Kind,
        namespace: &str,
        labels: &BTreeMap<String, String>,
        selector_of: impl Fn(&R) -> Option<&LabelSelector>,
    ) -> Vec<String> {
        if labels.is_empty() {
            return Vec::new();
        }
        let Some(inf) = self.informer(kind) else {
            return Vec::new();
        };
        inf.list_namespace::<R>(namespace)
            .filter(|r| selector_of(r).is_some_and(|s| !s.is_empty() && s.matches(labels)))
            .map(|r| namespaced_key(namespace, &r.meta().name))
            .collect()
    }

    /// The informer of `kind`, if started.
    pub fn informer(&self, kind: &Kind) -> Option<&Informer> {
        self.informers.get(kind)
    }

    /// The informer of `kind`.
    ///
    /// # Panics
    /// When no informer of `kind` was started (a controller must declare the kinds it reads).
    pub fn of(&self, kind: &Kind) -> &Informer {
        match self.informers.get(kind) {
            Some(i) => i,
            None => panic!("no informer started for {}", kind.name()),
        }
    }

    /// Brings every informer to the apiserver's revision; the changes are appended to the log in
    /// revision order.
    pub fn sync(&mut self, api: &dyn ApiClient) {
        self.sync_upto(api, None);
    }

    /// [`SharedInformerFactory::sync`] with every watch delivering only the changes up to
    /// revision `upto` (when set; see [`Informer::sync_upto`]).
    pub fn sync_upto(&mut self, api: &dyn ApiClient, upto: Option<i64>) {
        let mut batch = Vec::new();
        for inf in self.informers.values_mut() {
            inf.sync_upto(api, upto, &mut batch);
        }
        batch.sort_by_key(|(rev, _)| *rev);
        self.log.extend(batch.into_iter().map(|(_, d)| d));
    }

    /// The sequence number the next logged change will get.
    pub fn log_end(&self) -> u64 {
        self.log_start + self.log.len() as u64
    }

    /// The logged changes from sequence number `from` on.
    pub fn changes_since(&self, from: u64) -> impl Iterator<Item = &Delta> {
        let skip = from.saturating_sub(self.log_start);
        self.log
            .iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
    }

    /// Forgets the logged changes before sequence number `upto` (every consumer has read them).
    pub fn trim_log(&mut self, upto: u64) {
        while self.log_start < upto && !self.log.is_empty() {
            self.log.pop_front();
            self.log_start += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_pairs_order_as_their_keys() {
        use std::cmp::Ordering::{Equal, Greater, Less};
        // `-` (0x2D) < `/` (0x2F) < `0` (0x30): "a-b/x" < "a/y" < "a0/a".
        assert_eq!(cmp_namespaced(("a-b", "x"), ("a", "y")), Less);
        assert_eq!(cmp_namespaced(("a", "y"), ("a0", "a")), Less);
        assert_eq!(cmp_namespaced(("a", "y"), ("a", "x")), Greater);
        assert_eq!(cmp_namespaced(("a", "web"), ("a", "web")), Equal);
        // A pair against a pair in the same key order, for the namespaces above and empty ones.
        let pairs = [("a", "y"), ("a-b", "x"), ("a0", "a"), ("", "n"), ("a", "")];
        for a in pairs {
            for b in pairs {
                let by_keys = namespaced_key(a.0, a.1).cmp(&namespaced_key(b.0, b.1));
                assert_eq!(cmp_namespaced(a, b), by_keys, "{a:?} {b:?}");
            }
        }
    }

    fn pod(name: &str, owners: &[(&str, bool)], node: Option<&str>, phase: &str) -> Arc<Object> {
        let mut p = crate::core::Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = Some("default".into());
        p.metadata.owner_references = owners
            .iter()
            .map(|&(uid, controller)| crate::meta::OwnerReference {
                api_version: "apps/v1".into(),
                kind: "ReplicaSet".into(),
                name: format!("rs-{uid}"),
                uid: uid.into(),
                controller: Some(controller),
                block_owner_deletion: None,
            })
            .collect();
        p.spec.node_name = node.map(str::to_string);
        p.status.phase = Some(phase.into());
        Arc::new(Object::Pod(Box::new(p)))
    }

    fn names(objs: Vec<&Arc<Object>>) -> Vec<String> {
        objs.iter().map(|o| o.meta().name.clone()).collect()
    }

    /// The indexes follow every version put: a status-only update keeps each pod where it was
    /// (and serves the new version), a new controller, owner or node moves it, a removal drops it.
    #[test]
    fn indexes_follow_updates_that_move_and_that_keep_an_object() {
        let mut inf = Informer::new(Kind::Pod);
        inf.put("default/a", pod("a", &[("u1", true)], None, "Pending"));
        inf.put(
            "default/b",
            pod("b", &[("u1", true)], Some("n1"), "Pending"),
        );
        inf.put("default/c", pod("c", &[], Some("n1"), "Pending"));
        assert_eq!(names(inf.controlled_by("u1")), ["a", "b"]);
        assert_eq!(names(inf.orphans("default")), ["c"]);
        assert_eq!(names(inf.pods_on_node("n1")), ["b", "c"]);
        // Status only: same places, the new version served.
        let old = inf.put(
            "default/b",
            pod("b", &[("u1", true)], Some("n1"), "Running"),
        );
        assert!(old.is_some());
        let b = inf.pods_on_node("n1")[0];
        assert!(matches!(&**b, Object::Pod(p) if p.status.phase.as_deref() == Some("Running")));
        assert_eq!(names(inf.controlled_by("u1")), ["a", "b"]);
        // Bound: `a` joins n2.
        inf.put(
            "default/a",
            pod("a", &[("u1", true)], Some("n2"), "Pending"),
        );
        assert_eq!(names(inf.pods_on_node("n2")), ["a"]);
        // Orphaned (controller false) and adopted by another owner: indexes move.
        inf.put(
            "default/b",
            pod("b", &[("u1", false), ("u2", true)], Some("n1"), "Running"),
        );
        assert_eq!(names(inf.controlled_by("u1")), ["a"]);
        assert_eq!(names(inf.controlled_by("u2")), ["b"]);
        assert_eq!(names(inf.dependents_of("u1")), ["a", "b"]);
        inf.put(
            "default/c",
            pod("c", &[("u2", true)], Some("n1"), "Pending"),
        );
        assert!(inf.orphans("default").is_empty());
        assert_eq!(names(inf.controlled_by("u2")), ["b", "c"]);
        inf.remove("default/b");
        assert_eq!(names(inf.controlled_by("u2")), ["c"]);
        assert_eq!(names(inf.dependents_of("u1")), ["a"]);
        assert_eq!(names(inf.pods_on_node("n1")), ["c"]);
        assert_eq!(inf.keys_on_node("n2").collect::<Vec<_>>(), ["default/a"]);
    }

    /// A pod under its controller, its owner and its node is one key string shared by the
    /// informer's map and the three indexes; removing the pod releases every share.
    #[test]
    fn indexes_share_the_object_key() {
        let mut inf = Informer::new(Kind::Pod);
        inf.put(
            "default/a",
            pod("a", &[("u1", true)], Some("n1"), "Pending"),
        );
        let key = inf.objects.get_key_value("default/a").unwrap().0.clone();
        // `objects`, `by_controller`, `by_owner`, `by_node` and `key` here.
        assert_eq!(ArcStr::strong_count(&key), Some(5));
        // An update that moves the pod to another node keeps one string.
        inf.put(
            "default/a",
            pod("a", &[("u1", true)], Some("n2"), "Running"),
        );
        assert_eq!(ArcStr::strong_count(&key), Some(5));
        assert_eq!(inf.keys_on_node("n2").collect::<Vec<_>>(), ["default/a"]);
        inf.remove("default/a");
        assert_eq!(ArcStr::strong_count(&key), Some(1));
    }

    /// A removed object's slot is reused by the next new one: every listing and index serves each
    /// key's own latest object, never the one that held its slot before, and a re-added key is
    /// indexed afresh.
    #[test]
    fn reused_slots_serve_their_new_objects() {
        let mut inf = Informer::new(Kind::Pod);
        for (k, node) in [("a", "n1"), ("b", "n1"), ("c", "n2")] {
            inf.put(
                &format!("default/{k}"),
                pod(k, &[("u1", true)], Some(node), "Pending"),
            );
        }
        inf.remove("default/a");
        inf.remove("default/c");
        // `d` takes `c`'s slot (the last freed), `e` takes `a`'s.
        inf.put("default/d", pod("d", &[], Some("n2"), "Pending"));
        inf.put(
            "default/e",
            pod("e", &[("u2", true)], Some("n1"), "Running"),
        );
        assert_eq!(inf.len(), 3);
        assert_eq!(names(inf.list().collect()), ["b", "d", "e"]);
        assert_eq!(names(inf.controlled_by("u1")), ["b"]);
        assert_eq!(names(inf.controlled_by("u2")), ["e"]);
        assert_eq!(names(inf.orphans("default")), ["d"]);
        assert_eq!(names(inf.pods_on_node("n1")), ["b", "e"]);
        assert_eq!(names(inf.pods_on_node("n2")), ["d"]);
        assert!(inf.get("default/a").is_none() && inf.get("default/c").is_none());
        // `a` comes back: a fresh slot's worth of indexing, not its old entries.
        inf.put("default/a", pod("a", &[], None, "Pending"));
        assert_eq!(names(inf.orphans("default")), ["a", "d"]);
        assert_eq!(names(inf.controlled_by("u1")), ["b"]);
        let typed: Vec<&str> = inf
            .list_namespace::<crate::core::Pod>("default")
            .map(|p| p.metadata.name.as_str())
            .collect();
        assert_eq!(typed, ["a", "b", "d", "e"]);
        assert_eq!(
            inf.get_typed::<crate::core::Pod>("default/e")
                .and_then(|p| p.status.phase.as_deref()),
            Some("Running")
        );
    }

    #[test]
    fn keys_are_namespace_slash_name() {
        assert_eq!(split_key("default/web-0"), ("default", "web-0"));
        assert_eq!(split_key("node-a"), ("", "node-a"));
    }
}
