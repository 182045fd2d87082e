//! A tiny in-memory apiserver for the integration tests (tests only): keyed objects, a global
//! revision, uid/creationTimestamp on create, graceful deletion of bound pods, the binding
//! subresource, watch from a revision, and builders for nodes, pods and PodGroups.

#![allow(dead_code)]

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::core::{Binding, Container, Event, Node, Pod, ResourceList};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::tick_timestamp;
use k8s_types::object::{Kind, Object, Resource};
use k8s_types::scheduling::PodGroup;
use k8s_types::status::Status;
use k8s_types::store::{WatchEvent, WatchEventType};
use k8s_types::{Quantity, Tick};

/// The fake apiserver.
#[derive(Default)]
pub struct FakeApi {
    pub now: Tick,
    rev: i64,
    objects: BTreeMap<String, Object>,
    /// Every change, for watch: (key, event).
    history: Vec<(String, WatchEvent)>,
    /// Watches from before this revision answer `410 Gone`.
    compacted: i64,
}

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap()
}

impl FakeApi {
    pub fn new() -> FakeApi {
        FakeApi {
            now: 1000,
            ..Default::default()
        }
    }

    pub fn add<R: Resource>(&mut self, obj: R) {
        self.create(obj.into_object()).unwrap();
    }

    pub fn pod(&self, name: &str) -> Pod {
        match self.get(&Kind::Pod, "default", name) {
            Ok(Object::Pod(p)) => p,
            other => panic!("pod {name}: {other:?}"),
        }
    }

    pub fn pod_group(&self, name: &str) -> PodGroup {
        match self.get(&Kind::PodGroup, "default", name) {
            Ok(Object::PodGroup(p)) => p,
            other => panic!("podgroup {name}: {other:?}"),
        }
    }

    pub fn has_pod(&self, name: &str) -> bool {
        self.get(&Kind::Pod, "default", name).is_ok()
    }

    pub fn events(&self) -> Vec<Event> {
        self.list(&Kind::Event, None, None)
            .into_iter()
            .filter_map(Event::from_object)
            .collect()
    }

    /// Events about `pod` with `reason`, messages in creation order.
    pub fn event_messages(&self, pod: &str, reason: &str) -> Vec<String> {
        let mut evs: Vec<Event> = self
            .events()
            .into_iter()
            .filter(|e| e.involved_object.name == pod && e.reason == reason)
            .collect();
        evs.sort_by_key(|e| e.metadata.resource_version_number());
        evs.into_iter().map(|e| e.message).collect()
    }

    /// Node name -> number of pods bound to it.
    pub fn placement(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for o in self.list(&Kind::Node, None, None) {
            m.insert(o.meta().name.clone(), 0);
        }
        for o in self.list(&Kind::Pod, None, None) {
            if let Object::Pod(p) = o {
                if let Some(n) = p.node_name() {
                    *m.entry(n.to_string()).or_insert(0) += 1;
                }
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
            self.rev += 1;
            self.drop_key(&k);
        }
    }

    fn bump(&mut self, obj: &mut Object) {
        self.rev += 1;
        obj.meta_mut().resource_version = Some(self.rev.to_string());
    }

    /// Drops the watch history up to now (etcd compaction): older watches get `410 Gone`.
    pub fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rev;
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
                object: std::sync::Arc::new(obj.clone()),
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
                    object: std::sync::Arc::new(obj),
                },
            ));
        }
    }
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
        if kind.namespaced() && obj.meta().namespace.is_none() {
            obj.meta_mut().namespace = Some("default".into());
        }
        let key = obj.key();
        if self.objects.contains_key(&key) {
            return Err(Status::already_exists(&kind, &obj.meta().name));
        }
        let uid = format!("uid-{}", self.rev + 1);
        let now = tick_timestamp(self.now);
        {
            let m = obj.meta_mut();
            m.uid = Some(uid);
            m.creation_timestamp = Some(now);
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

    fn update(&mut self, mut obj: Object) -> Result<Object, Status> {
        let key = obj.key();
        let Some(old) = self.objects.get(&key).cloned() else {
            return Err(Status::not_found(&obj.kind(), &obj.meta().name));
        };
        if let (Object::Pod(new), Object::Pod(old)) = (&mut obj, &old) {
            new.status = old.status.clone();
        }
        self.bump(&mut obj);
        self.store(key, obj.clone());
        Ok(obj)
    }

    fn update_status(&mut self, obj: Object) -> Result<Object, Status> {
        let key = obj.key();
        let Some(mut stored) = self.objects.get(&key).cloned() else {
            return Err(Status::not_found(&obj.kind(), &obj.meta().name));
        };
        match (&mut stored, obj) {
            (Object::Pod(s), Object::Pod(n)) => s.status = n.status,
            (Object::PodGroup(s), Object::PodGroup(n)) => s.status = n.status,
            (Object::Node(s), Object::Node(n)) => s.status = n.status,
            (s, n) => *s = n,
        }
        self.bump(&mut stored);
        self.store(key, stored.clone());
        Ok(stored)
    }

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
                    p.metadata.deletion_timestamp = Some(tick_timestamp(self.now + grace as u64));
                    p.metadata.deletion_grace_period_seconds = Some(grace);
                }
                self.bump(&mut obj);
                self.store(key, obj.clone());
                return Ok(obj);
            }
        }
        self.rev += 1;
        self.drop_key(&key);
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
        p.spec.node_name = Some(binding.target.name.clone());
        let mut obj = Object::Pod(p);
        self.bump(&mut obj);
        self.store(key, obj.clone());
        match obj {
            Object::Pod(p) => Ok(p),
            _ => unreachable!(),
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

/// A node with allocatable cpu, memory, pods=110 and extra resources.
pub fn node(name: &str, cpu: &str, memory: &str, extra: &[(&str, &str)]) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    n.metadata
        .labels
        .insert("kubernetes.io/hostname".into(), name.into());
    let mut a = ResourceList::new();
    a.insert("cpu".into(), q(cpu));
    a.insert("memory".into(), q(memory));
    a.insert("pods".into(), q("110"));
    for (k, v) in extra {
        a.insert((*k).into(), q(v));
    }
    n.status.capacity = a.clone();
    n.status.allocatable = a;
    n
}

/// A pending pod with one container requesting cpu and memory (and extra resources).
pub fn pod(name: &str, cpu: &str, memory: &str, extra: &[(&str, &str)]) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = Some("default".into());
    let mut r = ResourceList::new();
    r.insert("cpu".into(), q(cpu));
    r.insert("memory".into(), q(memory));
    for (k, v) in extra {
        r.insert((*k).into(), q(v));
    }
    p.spec.containers.push(Container {
        name: "main".into(),
        image: "busybox".into(),
        ..Default::default()
    });
    p.spec.containers[0].resources.requests = r.clone();
    p.spec.containers[0].resources.limits = r;
    p
}

/// A pod of a PodGroup.
pub fn gang_pod(name: &str, group: &str, cpu: &str) -> Pod {
    let mut p = pod(name, cpu, "128Mi", &[]);
    p.metadata
        .labels
        .insert(k8s_types::core::POD_GROUP_LABEL.into(), group.into());
    p
}

/// A PodGroup.
pub fn pod_group(name: &str, min_member: i32) -> PodGroup {
    let mut pg = PodGroup::default();
    pg.metadata.name = name.into();
    pg.metadata.namespace = Some("default".into());
    pg.spec.min_member = min_member;
    pg
}
