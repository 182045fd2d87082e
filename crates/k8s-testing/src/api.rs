//! [`FakeApi`]: keyed objects, a global revision, uid/creationTimestamp/generateName on create,
//! `metadata.generation` for Deployments and ReplicaSets, resourceVersion conflicts, the status
//! subresource, graceful deletion of bound pods, the binding subresource, and watch from a
//! revision with compaction (`410 Gone` before it).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::apps::{Deployment, ReplicaSet};
use k8s_types::core::{Binding, Event, Pod};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::tick_timestamp;
use k8s_types::object::{Kind, Object, Resource};
use k8s_types::scheduling::PodGroup;
use k8s_types::status::Status;
use k8s_types::store::{WatchEvent, WatchEventType};
use k8s_types::Tick;

/// The fake apiserver.
#[derive(Default)]
pub struct FakeApi {
    /// The tick `ApiClient::now` reports (creation and deletion timestamps).
    pub now: Tick,
    rev: i64,
    /// Objects created so far (the generateName suffix).
    created: u64,
    objects: BTreeMap<String, Object>,
    /// Every change, for watch: (key, event).
    history: Vec<(String, WatchEvent)>,
    /// Watches from before this revision answer `410 Gone`.
    compacted: i64,
}

impl FakeApi {
    /// An empty apiserver at tick 1000.
    pub fn new() -> FakeApi {
        FakeApi::at(1000)
    }

    /// An empty apiserver at tick `now`.
    pub fn at(now: Tick) -> FakeApi {
        FakeApi {
            now,
            ..Default::default()
        }
    }

    /// Creates `obj` (panics when it exists).
    pub fn add<R: Resource>(&mut self, obj: R) {
        self.create(obj.into_object()).unwrap();
    }

    /// The pod `default/name` (panics when absent).
    pub fn pod(&self, name: &str) -> Pod {
        match self.get(&Kind::Pod, "default", name) {
            Ok(Object::Pod(p)) => *p,
            other => panic!("pod {name}: {other:?}"),
        }
    }

    /// True when the pod `default/name` exists.
    pub fn has_pod(&self, name: &str) -> bool {
        self.get(&Kind::Pod, "default", name).is_ok()
    }

    /// Every pod.
    pub fn pods(&self) -> Vec<Pod> {
        self.list_typed::<Pod>(None, None)
    }

    /// Every ReplicaSet.
    pub fn replica_sets(&self) -> Vec<ReplicaSet> {
        self.list_typed::<ReplicaSet>(None, None)
    }

    /// The Deployment `default/name` (panics when absent).
    pub fn deployment(&self, name: &str) -> Deployment {
        self.get_typed::<Deployment>("default", name)
            .unwrap_or_else(|e| panic!("deployment {name}: {e}"))
    }

    /// The PodGroup `default/name` (panics when absent).
    pub fn pod_group(&self, name: &str) -> PodGroup {
        match self.get(&Kind::PodGroup, "default", name) {
            Ok(Object::PodGroup(p)) => *p,
            other => panic!("podgroup {name}: {other:?}"),
        }
    }

    /// Every Event.
    pub fn events(&self) -> Vec<Event> {
        self.list(&Kind::Event, None, None)
            .into_iter()
            .filter_map(Event::from_object)
            .collect()
    }

    /// Messages of the Events with `reason`, in creation order.
    pub fn event_messages(&self, reason: &str) -> Vec<String> {
        self.messages(|e| e.reason == reason)
    }

    /// Messages of the Events about `pod` with `reason`, in creation order.
    pub fn pod_event_messages(&self, pod: &str, reason: &str) -> Vec<String> {
        self.messages(|e| e.involved_object.name == pod && e.reason == reason)
    }

    fn messages(&self, keep: impl Fn(&Event) -> bool) -> Vec<String> {
        let mut evs: Vec<Event> = self.events().into_iter().filter(|e| keep(e)).collect();
        evs.sort_by_key(|e| e.metadata.resource_version_number());
        evs.into_iter().map(|e| e.message.into()).collect()
    }

    /// Node name -> number of pods bound to it.
    pub fn placement(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for o in self.list(&Kind::Node, None, None) {
            m.insert(o.meta().name.clone(), 0);
        }
        for p in self.pods() {
            if let Some(n) = p.node_name() {
                *m.entry(n.to_string()).or_insert(0) += 1;
            }
        }
        m
    }

    /// Removes pods whose graceful deletion started (what the kubelet would do).
    pub fn finish_deletions(&mut self) {
        let keys: Vec<String> = self
            .objects
            .iter()
            .filter(|(_, o)| matches!(o, Object::Pod(p) if p.is_terminating()))
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            self.remove(&k);
        }
    }

    /// Removes the object stored under `key` at once, without grace (the kubelet finishing a
    /// pod).
    pub fn remove(&mut self, key: &str) {
        self.rev += 1;
        self.drop_key(key);
    }

    /// Drops the watch history up to now (etcd compaction): older watches get `410 Gone`.
    pub fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rev;
    }

    fn bump(&mut self, obj: &mut Object) {
        self.rev += 1;
        obj.meta_mut().resource_version =
            Some(k8s_types::ToCompactString::to_compact_string(&self.rev));
    }

    /// Stores an object at the current revision and records the watch event.
    fn store(&mut self, key: String, obj: Object) {
        let type_ = if self.objects.contains_key(&key) {
            WatchEventType::Modified
        } else {
            WatchEventType::Added
        };
        self.history.push((
            key.clone(),
            WatchEvent {
                type_,
                revision: self.rev,
                object: Arc::new(obj.clone()),
            },
        ));
        self.objects.insert(key, obj);
    }

    /// Removes an object at the current revision and records the watch event.
    fn drop_key(&mut self, key: &str) {
        if let Some(obj) = self.objects.remove(key) {
            self.history.push((
                key.to_string(),
                WatchEvent {
                    type_: WatchEventType::Deleted,
                    revision: self.rev,
                    object: Arc::new(obj),
                },
            ));
        }
    }

    /// The stored object under `obj`'s key, after the resourceVersion check of an update (a
    /// given version must be the stored one).
    fn stored_for_update(&self, obj: &Object) -> Result<Object, Status> {
        let kind = obj.kind();
        let stored = self
            .objects
            .get(&obj.key())
            .cloned()
            .ok_or_else(|| Status::not_found(&kind, &obj.meta().name))?;
        let rv = &obj.meta().resource_version;
        if rv.is_some() && *rv != stored.meta().resource_version {
            return Err(Status::conflict(&kind, &obj.meta().name));
        }
        Ok(stored)
    }
}

/// Copies the status of `from` into `to` (same kind, a kind with a status subresource): true
/// when it did.
fn copy_status(to: &mut Object, from: &Object) -> bool {
    match (to, from) {
        (Object::Pod(t), Object::Pod(f)) => t.status = f.status.clone(),
        (Object::PodGroup(t), Object::PodGroup(f)) => t.status = f.status.clone(),
        (Object::Node(t), Object::Node(f)) => t.status = f.status.clone(),
        (Object::ReplicaSet(t), Object::ReplicaSet(f)) => t.status = f.status.clone(),
        (Object::Deployment(t), Object::Deployment(f)) => t.status = f.status.clone(),
        (Object::PodDisruptionBudget(t), Object::PodDisruptionBudget(f)) => {
            t.status = f.status.clone();
        }
        _ => return false,
    }
    true
}

/// The object without metadata, status and type (what a spec change bumps the generation for).
fn spec_of(obj: &Object) -> serde_json::Value {
    let mut v = obj.to_json();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
        m.remove("apiVersion");
        m.remove("kind");
    }
    v
}

/// A deterministic 5-character generateName suffix in upstream's alphabet.
fn name_suffix(mut n: u64) -> String {
    let alphabet = b"bcdfghjklmnpqrstvwxz2456789";
    let mut suffix = String::new();
    for _ in 0..5 {
        suffix.push(char::from(alphabet[(n % 27) as usize]));
        n /= 27;
    }
    suffix
}

impl ApiClient for FakeApi {
    fn now(&self) -> Tick {
        self.now
    }

    fn revision(&self) -> i64 {
        self.rev
    }

    fn create(&mut self, mut obj: Object) -> Result<Object, Status> {
        obj.set_type_meta();
        let kind = obj.kind();
        self.created += 1;
        let m = obj.meta_mut();
        if kind.namespaced() && m.namespace.is_none() {
            m.namespace = Some("default".into());
        }
        if m.name.is_empty() {
            let prefix = m.generate_name.clone().unwrap_or_default();
            m.name = format!("{prefix}{}", name_suffix(self.created));
        }
        let key = obj.key();
        if self.objects.contains_key(&key) {
            return Err(Status::already_exists(&kind, &obj.meta().name));
        }
        // Zero-padded: uids sort in creation order.
        let uid = format!("uid-{:06}", self.rev + 1);
        let now = tick_timestamp(self.now);
        let m = obj.meta_mut();
        m.uid = Some(uid);
        m.creation_timestamp = Some(now.into());
        if matches!(
            kind,
            Kind::Deployment | Kind::ReplicaSet | Kind::PodDisruptionBudget
        ) {
            m.generation = Some(1);
        }
        self.bump(&mut obj);
        self.store(key, obj.clone());
        Ok(obj)
    }

    fn get(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Object, Status> {
        self.objects
            .get(&kind.key(namespace, name))
            .cloned()
            .ok_or_else(|| Status::not_found(kind, name))
    }

    fn list(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Object> {
        let prefix = kind.key_prefix();
        self.objects
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(_, o)| o)
            .filter(|o| namespace.is_none_or(|ns| o.meta().namespace() == ns))
            .filter(|o| selector.is_none_or(|s| s.matches(&o.meta().labels)))
            .cloned()
            .collect()
    }

    /// Keeps the stored status of a Pod, ReplicaSet or Deployment (a Node or PodGroup takes the
    /// whole object, so that a test changes a node's allocatable in one call), the uid, creation
    /// and deletion timestamps; bumps the generation of a Deployment or ReplicaSet whose spec
    /// changed.
    fn update(&mut self, mut obj: Object) -> Result<Object, Status> {
        obj.set_type_meta();
        let stored = self.stored_for_update(&obj)?;
        if matches!(
            obj,
            Object::Pod(_) | Object::ReplicaSet(_) | Object::Deployment(_)
        ) {
            copy_status(&mut obj, &stored);
        }
        let spec_changed = spec_of(&obj) != spec_of(&stored);
        let sm = stored.meta().clone();
        let m = obj.meta_mut();
        m.uid = sm.uid;
        m.creation_timestamp = sm.creation_timestamp;
        m.deletion_timestamp = sm.deletion_timestamp;
        m.generation = match sm.generation {
            Some(g) if spec_changed => Some(g + 1),
            g => g,
        };
        self.bump(&mut obj);
        self.store(obj.key(), obj.clone());
        Ok(obj)
    }

    /// Takes only the status of a kind with a status subresource (the whole object otherwise).
    fn update_status(&mut self, obj: Object) -> Result<Object, Status> {
        let mut stored = self.stored_for_update(&obj)?;
        if !copy_status(&mut stored, &obj) {
            stored = obj;
        }
        self.bump(&mut stored);
        self.store(stored.key(), stored.clone());
        Ok(stored)
    }

    /// A bound pod with a grace period (the options', else its spec's, else 30 s) is marked
    /// terminating (`deletionTimestamp` = now + grace) and stays until [`FakeApi::remove`] or
    /// [`FakeApi::finish_deletions`]; anything else goes at once.
    fn delete(
        &mut self,
        kind: &Kind,
        namespace: &str,
        name: &str,
        options: DeleteOptions,
    ) -> Result<Object, Status> {
        let key = kind.key(namespace, name);
        let Some(mut obj) = self.objects.get(&key).cloned() else {
            return Err(Status::not_found(kind, name));
        };
        if let Object::Pod(p) = &mut obj {
            let grace = options
                .grace_period_seconds
                .or(p.spec.termination_grace_period_seconds)
                .unwrap_or(30);
            if p.node_name().is_some() && grace > 0 {
                if p.metadata.deletion_timestamp.is_none() {
                    p.metadata.deletion_timestamp =
                        Some(tick_timestamp(self.now + grace as u64).into());
                    p.metadata.deletion_grace_period_seconds = Some(grace);
                }
                self.bump(&mut obj);
                self.store(key, obj.clone());
                return Ok(obj);
            }
        }
        self.remove(&key);
        Ok(obj)
    }

    fn bind(&mut self, binding: &Binding) -> Result<Pod, Status> {
        let ns = binding.metadata.namespace();
        let key = Kind::Pod.key(ns, &binding.metadata.name);
        let Some(Object::Pod(mut p)) = self.objects.get(&key).cloned() else {
            return Err(Status::not_found(&Kind::Pod, &binding.metadata.name));
        };
        if p.node_name().is_some() {
            return Err(Status::conflict(&Kind::Pod, &binding.metadata.name));
        }
        p.spec.node_name = Some(binding.target.name.to_string());
        let mut obj = Object::Pod(p);
        self.bump(&mut obj);
        self.store(key, obj.clone());
        match obj {
            Object::Pod(p) => Ok(*p),
            _ => unreachable!("stored a pod"),
        }
    }

    fn watch(&self, kind: &Kind, after: i64) -> Result<Vec<WatchEvent>, Status> {
        if after < self.compacted {
            return Err(Status::gone(after, self.compacted));
        }
        let prefix = kind.key_prefix();
        Ok(self
            .history
            .iter()
            .filter(|(k, e)| e.revision > after && k.starts_with(&prefix))
            .map(|(_, e)| e.clone())
            .collect())
    }
}
