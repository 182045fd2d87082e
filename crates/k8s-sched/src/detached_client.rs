//! [`DetachedClient`]: what plugins see as the apiserver when the scheduler runs without one
//! ([`crate::Scheduler::schedule_one`] and the other detached calls). It holds the pods and
//! PodGroups the caller gave the scheduler, applies the writes plugins make (binding, victim
//! deletion, status updates) in place, and queues each change so the scheduler applies it to its
//! cache as if a watch had delivered it. It is not an apiserver: no validation, admission,
//! resourceVersions or graceful deletion (a deleted pod is gone at once, there is no kubelet to
//! finish it), events are dropped, and nodes are not stored (they live in the cache only). Other
//! objects the caller gives (ReplicaSets, Services, ...) are kept for plugins to read (get and
//! list only; PodTopologySpread's default selector reads the pod's owners and Services).

use k8s_types::object::Shared;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::core::{Binding, Pod};
use k8s_types::labels::LabelSelector;
use k8s_types::object::{Kind, Object};
use k8s_types::scheduling::PodGroup;
use k8s_types::status::Status;
use k8s_types::store::WatchEvent;
use k8s_types::Tick;

/// A change the scheduler still has to apply to its cache.
#[derive(Clone, Debug)]
pub(crate) enum Change {
    /// A pod was created or changed.
    Pod(Shared<Pod>),
    /// A pod was deleted (`namespace/name`).
    PodDeleted(String),
    /// A PodGroup was created or changed.
    PodGroup(Arc<PodGroup>),
    /// A PodGroup was deleted (`namespace/name`).
    PodGroupDeleted(String),
}

/// The in-process stand-in for the apiserver of detached mode.
#[derive(Clone, Debug, Default)]
pub(crate) struct DetachedClient {
    /// The clock, in ticks (set by [`crate::Scheduler::set_now`]).
    pub now: Tick,
    revision: i64,
    pods: BTreeMap<String, Shared<Pod>>,
    pod_groups: BTreeMap<String, Arc<PodGroup>>,
    /// Objects of the other kinds, by kind and `namespace/name`.
    objects: BTreeMap<(Kind, String), Object>,
    changes: Vec<Change>,
    /// A reused buffer for `namespace/name` lookups (no allocation per binding).
    key_buf: String,
}

fn key(namespace: &str, name: &str) -> String {
    let ns = if namespace.is_empty() {
        "default"
    } else {
        namespace
    };
    format!("{ns}/{name}")
}

impl DetachedClient {
    /// The stored pod by `namespace/name`.
    pub(crate) fn pod(&self, key: &str) -> Option<&Shared<Pod>> {
        self.pods.get(key)
    }

    /// Stores (or replaces) a pod and queues the change.
    pub(crate) fn put_pod(&mut self, pod: Shared<Pod>) {
        self.revision += 1;
        self.pods
            .insert(crate::cache::pod_key(&pod), Shared::clone(&pod));
        self.changes.push(Change::Pod(pod));
    }

    /// Removes a pod and queues the change; false when it was not stored.
    pub(crate) fn remove_pod(&mut self, key: &str) -> bool {
        if self.pods.remove(key).is_none() {
            return false;
        }
        self.revision += 1;
        self.changes.push(Change::PodDeleted(key.to_string()));
        true
    }

    /// Stores (or replaces) a PodGroup and queues the change.
    pub(crate) fn put_pod_group(&mut self, pg: Arc<PodGroup>) {
        self.revision += 1;
        let k = key(pg.metadata.namespace(), &pg.metadata.name);
        self.pod_groups.insert(k, Arc::clone(&pg));
        self.changes.push(Change::PodGroup(pg));
    }

    /// Removes a PodGroup and queues the change; false when it was not stored.
    pub(crate) fn remove_pod_group(&mut self, key: &str) -> bool {
        if self.pod_groups.remove(key).is_none() {
            return false;
        }
        self.revision += 1;
        self.changes.push(Change::PodGroupDeleted(key.to_string()));
        true
    }

    /// Stores (or replaces) an object of a kind other than Pod and PodGroup (nothing reaches the
    /// cache: plugins read it through the client).
    pub(crate) fn put_object(&mut self, obj: Object) {
        self.revision += 1;
        let m = obj.meta();
        let k = key(m.namespace(), &m.name);
        self.objects.insert((obj.kind(), k), obj);
    }

    /// The queued changes, oldest first; the queue is emptied (its buffer is kept for the next
    /// changes).
    pub(crate) fn drain_changes(&mut self) -> std::vec::Drain<'_, Change> {
        self.changes.drain(..)
    }

    /// True when changes are queued.
    pub(crate) fn has_changes(&self) -> bool {
        !self.changes.is_empty()
    }
}

impl ApiClient for DetachedClient {
    fn now(&self) -> Tick {
        self.now
    }

    fn revision(&self) -> i64 {
        self.revision
    }

    fn create(&mut self, obj: Object) -> Result<Object, Status> {
        match obj {
            Object::Pod(p) => {
                let k = p.key();
                if self.pods.contains_key(&k) {
                    return Err(Status::already_exists(&Kind::Pod, &p.metadata.name));
                }
                let p = Shared::from_typed(*p);
                self.put_pod(Shared::clone(&p));
                Ok(Object::Pod(Box::new((*p).clone())))
            }
            Object::PodGroup(g) => {
                let k = key(g.metadata.namespace(), &g.metadata.name);
                if self.pod_groups.contains_key(&k) {
                    return Err(Status::already_exists(&Kind::PodGroup, &g.metadata.name));
                }
                let g = Arc::new(*g);
                self.put_pod_group(Arc::clone(&g));
                Ok(Object::PodGroup(Box::new((*g).clone())))
            }
            // Events and other kinds are accepted and dropped.
            other => Ok(other),
        }
    }

    fn get(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Object, Status> {
        let k = key(namespace, name);
        match kind {
            Kind::Pod => self
                .pods
                .get(&k)
                .map(|p| Object::Pod(Box::new((**p).clone())))
                .ok_or_else(|| Status::not_found(kind, name)),
            Kind::PodGroup => self
                .pod_groups
                .get(&k)
                .map(|g| Object::PodGroup(Box::new((**g).clone())))
                .ok_or_else(|| Status::not_found(kind, name)),
            _ => self
                .objects
                .get(&(kind.clone(), k))
                .cloned()
                .ok_or_else(|| Status::not_found(kind, name)),
        }
    }

    fn list(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Object> {
        let ns_ok = |ns: &str| namespace.is_none_or(|n| n.is_empty() || n == ns);
        let sel_ok = |labels| selector.is_none_or(|s| s.matches(labels));
        match kind {
            Kind::Pod => self
                .pods
                .values()
                .filter(|p| ns_ok(p.metadata.namespace()) && sel_ok(&p.metadata.labels))
                .map(|p| Object::Pod(Box::new((**p).clone())))
                .collect(),
            Kind::PodGroup => self
                .pod_groups
                .values()
                .filter(|g| ns_ok(g.metadata.namespace()) && sel_ok(&g.metadata.labels))
                .map(|g| Object::PodGroup(Box::new((**g).clone())))
                .collect(),
            _ if self.objects.is_empty() => Vec::new(),
            _ => self
                .objects
                .range((kind.clone(), String::new())..)
                .take_while(|((k, _), _)| k == kind)
                .map(|(_, o)| o)
                .filter(|o| ns_ok(o.meta().namespace()) && sel_ok(&o.meta().labels))
                .cloned()
                .collect(),
        }
    }

    fn update(&mut self, obj: Object) -> Result<Object, Status> {
        match obj {
            Object::Pod(mut p) => {
                let k = p.key();
                let Some(old) = self.pods.get(&k) else {
                    return Err(Status::not_found(&Kind::Pod, &p.metadata.name));
                };
                p.status = old.status.clone();
                self.put_pod(Shared::from_typed((*p).clone()));
                Ok(Object::Pod(p))
            }
            Object::PodGroup(mut g) => {
                let k = key(g.metadata.namespace(), &g.metadata.name);
                let Some(old) = self.pod_groups.get(&k) else {
                    return Err(Status::not_found(&Kind::PodGroup, &g.metadata.name));
                };
                g.status = old.status.clone();
                self.put_pod_group(Arc::new(*g.clone()));
                Ok(Object::PodGroup(g))
            }
            other => Ok(other),
        }
    }

    fn update_status(&mut self, obj: Object) -> Result<Object, Status> {
        match obj {
            Object::Pod(p) => {
                let k = p.key();
                let Some(old) = self.pods.get(&k) else {
                    return Err(Status::not_found(&Kind::Pod, &p.metadata.name));
                };
                let mut new = (**old).clone();
                new.status = p.status;
                self.put_pod(Shared::from_typed(new.clone()));
                Ok(Object::Pod(Box::new(new)))
            }
            Object::PodGroup(g) => {
                let k = key(g.metadata.namespace(), &g.metadata.name);
                let Some(old) = self.pod_groups.get(&k) else {
                    return Err(Status::not_found(&Kind::PodGroup, &g.metadata.name));
                };
                let mut new = (**old).clone();
                new.status = g.status;
                self.put_pod_group(Arc::new(new.clone()));
                Ok(Object::PodGroup(Box::new(new)))
            }
            other => Ok(other),
        }
    }

    fn delete(
        &mut self,
        kind: &Kind,
        namespace: &str,
        name: &str,
        _options: DeleteOptions,
    ) -> Result<Object, Status> {
        let k = key(namespace, name);
        match kind {
            Kind::Pod => {
                let old = self
                    .pods
                    .get(&k)
                    .map(|p| (**p).clone())
                    .ok_or_else(|| Status::not_found(kind, name))?;
                self.remove_pod(&k);
                Ok(Object::Pod(Box::new(old)))
            }
            Kind::PodGroup => {
                let old = self
                    .pod_groups
                    .get(&k)
                    .map(|g| (**g).clone())
                    .ok_or_else(|| Status::not_found(kind, name))?;
                self.remove_pod_group(&k);
                Ok(Object::PodGroup(Box::new(old)))
            }
            _ => Err(Status::not_found(kind, name)),
        }
    }

    fn bind(&mut self, binding: &Binding) -> Result<Pod, Status> {
        self.bind_stored(binding).map(|p| (*p).clone())
    }

    fn bind_only(&mut self, binding: &Binding) -> Result<(), Status> {
        self.bind_stored(binding).map(|_| ())
    }

    fn watch(&self, _kind: &Kind, _after_revision: i64) -> Result<Vec<WatchEvent>, Status> {
        Ok(Vec::new())
    }
}

impl DetachedClient {
    /// The `pods/binding` write shared by [`ApiClient::bind`] and [`ApiClient::bind_only`]: the
    /// stored pod is replaced by a copy with `spec.nodeName` set (and the Binding's
    /// annotations), the change is queued, and the new object is returned (shared, not copied).
    fn bind_stored(&mut self, binding: &Binding) -> Result<Shared<Pod>, Status> {
        let name = &binding.metadata.name;
        let ns = binding.metadata.namespace();
        self.key_buf.clear();
        self.key_buf
            .push_str(if ns.is_empty() { "default" } else { ns });
        self.key_buf.push('/');
        self.key_buf.push_str(name);
        // Replaced in place: no key string is built for the map.
        let Some(slot) = self.pods.get_mut(self.key_buf.as_str()) else {
            return Err(Status::not_found(&Kind::Pod, name));
        };
        if slot.node_name().is_some() {
            return Err(Status::conflict(&Kind::Pod, name));
        }
        let mut p = (**slot).clone();
        p.spec.node_name = Some(binding.target.name.to_string());
        // As the apiserver's pods/binding: the Binding's annotations are copied onto the pod.
        for (k, v) in &binding.metadata.annotations {
            p.metadata.annotations.insert(k.clone(), v.clone());
        }
        let p = Shared::from_typed(p);
        *slot = Shared::clone(&p);
        self.revision += 1;
        self.changes.push(Change::Pod(Shared::clone(&p)));
        Ok(p)
    }
}
