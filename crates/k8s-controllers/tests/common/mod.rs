//! Test support: a tiny in-memory `ApiClient` (create/get/list/update/update_status/delete/bind
//! with uids, resourceVersions, generations, generateName and graceful pod deletion) and a fake
//! scheduler + kubelet that bind pending pods in the tick they appear and make them Running/Ready
//! the next tick, and finish terminating pods one tick after their deletion started.

#![allow(dead_code)]

use std::collections::BTreeMap;

use k8s_controllers::ControllerManager;
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::apps::{
    Deployment, DeploymentSpec, DeploymentStrategy, IntOrString, PodTemplateSpec, ReplicaSet,
    RollingUpdateDeployment,
};
use k8s_types::core::{Binding, Container, Event, Pod, PodCondition};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::{tick_timestamp, timestamp_tick, ObjectMeta};
use k8s_types::status::Status;
use k8s_types::store::WatchEvent;
use k8s_types::{Kind, Object, Resource, Tick};

/// In-memory apiserver for tests.
#[derive(Default)]
pub struct FakeApi {
    pub now: Tick,
    revision: i64,
    counter: u64,
    objects: BTreeMap<String, Object>,
}

fn status_of(obj: &Object) -> serde_json::Value {
    obj.to_json()
        .get("status")
        .cloned()
        .unwrap_or(serde_json::Value::Null)
}

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

/// Copies `status` of `from` into `to` (same kind).
fn copy_status(to: &mut Object, from: &Object) {
    match (to, from) {
        (Object::Pod(t), Object::Pod(f)) => t.status = f.status.clone(),
        (Object::ReplicaSet(t), Object::ReplicaSet(f)) => t.status = f.status.clone(),
        (Object::Deployment(t), Object::Deployment(f)) => t.status = f.status.clone(),
        _ => {}
    }
}

impl FakeApi {
    pub fn new() -> Self {
        Self::default()
    }

    fn next_revision(&mut self) -> i64 {
        self.revision += 1;
        self.revision
    }

    pub fn pods(&self) -> Vec<Pod> {
        self.list_typed::<Pod>(None, None)
    }

    pub fn events(&self) -> Vec<Event> {
        self.list_typed::<Event>(None, None)
    }

    /// Messages of the events with `reason`, oldest first.
    pub fn event_messages(&self, reason: &str) -> Vec<String> {
        let mut events: Vec<Event> = self
            .events()
            .into_iter()
            .filter(|e| e.reason == reason)
            .collect();
        events.sort_by_key(|e| e.metadata.resource_version_number());
        events.into_iter().map(|e| e.message).collect()
    }

    pub fn replica_sets(&self) -> Vec<ReplicaSet> {
        self.list_typed::<ReplicaSet>(None, None)
    }

    pub fn deployment(&self, name: &str) -> Deployment {
        self.get_typed::<Deployment>("default", name)
            .unwrap_or_else(|e| panic!("deployment {name}: {e}"))
    }

    /// Removes an object without any grace (the kubelet finishing a pod).
    pub fn remove(&mut self, key: &str) {
        self.objects.remove(key);
        self.next_revision();
    }
}

impl ApiClient for FakeApi {
    fn now(&self) -> Tick {
        self.now
    }

    fn revision(&self) -> i64 {
        self.revision
    }

    fn create(&mut self, mut obj: Object) -> Result<Object, Status> {
        obj.set_type_meta();
        let kind = obj.kind();
        let now = self.now;
        self.counter += 1;
        let counter = self.counter;
        let m = obj.meta_mut();
        if kind.namespaced() && m.namespace.is_none() {
            m.namespace = Some("default".into());
        }
        if m.name.is_empty() {
            let prefix = m.generate_name.clone().unwrap_or_default();
            // Deterministic 5-character suffix from the counter, in upstream's alphabet.
            let alphabet = b"bcdfghjklmnpqrstvwxz2456789";
            let mut n = counter;
            let mut suffix = String::new();
            for _ in 0..5 {
                suffix.push(char::from(alphabet[(n % 27) as usize]));
                n /= 27;
            }
            m.name = format!("{prefix}{suffix}");
        }
        m.uid = Some(format!("uid-{counter:06}"));
        m.creation_timestamp = Some(tick_timestamp(now));
        if matches!(kind, Kind::Deployment | Kind::ReplicaSet) {
            m.generation = Some(1);
        }
        let key = obj.key();
        if self.objects.contains_key(&key) {
            return Err(Status::already_exists(&kind, &obj.meta().name));
        }
        let rv = self.next_revision();
        obj.meta_mut().resource_version = Some(rv.to_string());
        self.objects.insert(key, obj.clone());
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
        let prefix = match namespace {
            Some(ns) if kind.namespaced() => format!("{}{}/", kind.key_prefix(), ns),
            _ => kind.key_prefix(),
        };
        self.objects
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(_, o)| o)
            .filter(|o| selector.is_none_or(|s| s.matches(&o.meta().labels)))
            .cloned()
            .collect()
    }

    fn update(&mut self, mut obj: Object) -> Result<Object, Status> {
        obj.set_type_meta();
        let kind = obj.kind();
        let key = obj.key();
        let stored = self
            .objects
            .get(&key)
            .cloned()
            .ok_or_else(|| Status::not_found(&kind, &obj.meta().name))?;
        let rv = obj.meta().resource_version.clone();
        if rv.is_some() && rv != stored.meta().resource_version {
            return Err(Status::conflict(&kind, &obj.meta().name));
        }
        copy_status(&mut obj, &stored);
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
        let rv = self.next_revision();
        obj.meta_mut().resource_version = Some(rv.to_string());
        self.objects.insert(key, obj.clone());
        Ok(obj)
    }

    fn update_status(&mut self, obj: Object) -> Result<Object, Status> {
        let kind = obj.kind();
        let key = obj.key();
        let mut stored = self
            .objects
            .get(&key)
            .cloned()
            .ok_or_else(|| Status::not_found(&kind, &obj.meta().name))?;
        let rv = obj.meta().resource_version.clone();
        if rv.is_some() && rv != stored.meta().resource_version {
            return Err(Status::conflict(&kind, &obj.meta().name));
        }
        copy_status(&mut stored, &obj);
        let rv = self.next_revision();
        stored.meta_mut().resource_version = Some(rv.to_string());
        self.objects.insert(key, stored.clone());
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
        let mut obj = self
            .objects
            .get(&key)
            .cloned()
            .ok_or_else(|| Status::not_found(kind, name))?;
        let graceful = match &obj {
            Object::Pod(p) => p.node_name().is_some() && options.grace_period_seconds != Some(0),
            _ => false,
        };
        if graceful {
            if obj.meta().deletion_timestamp.is_none() {
                let now = self.now;
                let m = obj.meta_mut();
                m.deletion_timestamp = Some(tick_timestamp(now));
                m.deletion_grace_period_seconds = Some(30);
                let rv = self.next_revision();
                obj.meta_mut().resource_version = Some(rv.to_string());
                self.objects.insert(key, obj.clone());
            }
            return Ok(obj);
        }
        self.objects.remove(&key);
        self.next_revision();
        Ok(obj)
    }

    fn bind(&mut self, binding: &Binding) -> Result<Pod, Status> {
        let ns = binding.metadata.namespace();
        let mut pod: Pod = self.get_typed(ns, &binding.metadata.name)?;
        if pod.node_name().is_some() {
            return Err(Status::conflict(&Kind::Pod, &pod.metadata.name));
        }
        pod.spec.node_name = Some(binding.target.name.clone());
        let rv = self.next_revision();
        pod.metadata.resource_version = Some(rv.to_string());
        self.objects
            .insert(pod.clone().into_object().key(), Object::Pod(pod.clone()));
        Ok(pod)
    }

    /// The fake keeps no history: every watch is answered `410 Gone`, so the shared informers
    /// (`k8s_types::informer`) list again at every sync, as after a compaction.
    fn watch(&self, _kind: &Kind, after_revision: i64) -> Result<Vec<WatchEvent>, Status> {
        Err(Status::gone(after_revision, self.revision))
    }
}

/// The fake scheduler and kubelet of one node: binds pending pods (PodScheduled at this tick),
/// makes pods bound in an earlier tick Running and Ready, and finishes pods whose deletion started
/// in an earlier tick.
pub fn fake_scheduler_and_kubelet(api: &mut FakeApi) {
    let now = api.now;
    for pod in api.pods() {
        let key = pod.clone().into_object().key();
        if let Some(ts) = pod.metadata.deletion_timestamp.as_deref() {
            if timestamp_tick(ts).is_some_and(|t| t < now) {
                api.remove(&key);
            }
            continue;
        }
        if pod.node_name().is_none() {
            let binding = Binding::new(pod.metadata.namespace(), &pod.metadata.name, "node-a");
            let mut bound = api.bind(&binding).expect("bind");
            bound.set_condition(PodCondition {
                type_: "PodScheduled".into(),
                status: "True".into(),
                last_transition_time: Some(tick_timestamp(now)),
                ..Default::default()
            });
            api.update_status(Object::Pod(bound)).expect("scheduled");
            continue;
        }
        let scheduled_at = pod
            .condition("PodScheduled")
            .and_then(|c| c.last_transition_time.as_deref())
            .and_then(timestamp_tick);
        if !pod.is_ready() && scheduled_at.is_some_and(|t| t < now) {
            let mut p = pod.clone();
            p.status.phase = Some("Running".into());
            p.set_condition(PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(tick_timestamp(now)),
                ..Default::default()
            });
            api.update_status(Object::Pod(p)).expect("ready");
        }
    }
}

/// The tick loop of k8s-cluster in miniature: clock, controllers, scheduler + kubelet.
pub struct FakeCluster {
    pub api: FakeApi,
    pub manager: ControllerManager,
}

impl FakeCluster {
    pub fn new() -> Self {
        FakeCluster {
            api: FakeApi::new(),
            manager: ControllerManager::new(),
        }
    }

    pub fn step(&mut self) {
        self.api.now += 1;
        self.manager.reconcile(&mut self.api);
        fake_scheduler_and_kubelet(&mut self.api);
    }

    /// Pods not being deleted (and not terminal).
    pub fn active_pods(&self) -> Vec<Pod> {
        self.api
            .pods()
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none() && !p.is_terminal())
            .collect()
    }

    /// Active pods that are Ready (minReadySeconds 0: ready = available).
    pub fn available_pods(&self) -> Vec<Pod> {
        self.active_pods()
            .into_iter()
            .filter(|p| p.is_ready())
            .collect()
    }
}

/// A Deployment `name` with `app=<name>` labels, one container `app` running `image`.
pub fn deployment(
    name: &str,
    replicas: i32,
    image: &str,
    strategy: Option<DeploymentStrategy>,
) -> Deployment {
    let labels: BTreeMap<String, String> = [("app".to_string(), name.to_string())].into();
    Deployment {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: Some(LabelSelector::from_labels(labels.clone())),
            template: PodTemplateSpec {
                metadata: ObjectMeta {
                    labels,
                    ..Default::default()
                },
                spec: k8s_types::core::PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: image.into(),
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            },
            strategy,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// `RollingUpdate` with the given maxSurge / maxUnavailable.
pub fn rolling(max_surge: IntOrString, max_unavailable: IntOrString) -> Option<DeploymentStrategy> {
    Some(DeploymentStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDeployment {
            max_surge: Some(max_surge),
            max_unavailable: Some(max_unavailable),
        }),
    })
}

/// The image of a pod's first container.
pub fn image(p: &Pod) -> &str {
    p.spec
        .containers
        .first()
        .map(|c| c.image.as_str())
        .unwrap_or("")
}

/// The name of a pod's controller owner.
pub fn owner(p: &Pod) -> String {
    p.metadata
        .controller_ref()
        .map(|r| r.name.clone())
        .unwrap_or_default()
}

/// Changes the Deployment's container image (a template change, as `kubectl set image`).
pub fn set_image(api: &mut FakeApi, name: &str, image: &str) {
    let mut d = api.deployment(name);
    d.spec.template.spec.containers[0].image = image.into();
    api.update_typed(d).expect("update deployment");
}
