//! Test doubles for the kubelet's integration tests: a tiny in-memory apiserver (no validation, no
//! admission) and a device plugin with `n` devices. Tests only.

#![allow(dead_code)]

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::core::{Binding, Pod};
use k8s_types::deviceplugin::{
    compare_device_ids, ContainerAllocateResponse, Device, DevicePlugin, DevicePluginError,
    DevicePluginOptions, HEALTHY, UNHEALTHY,
};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::tick_timestamp;
use k8s_types::object::{Kind, Object};
use k8s_types::status::Status;
use k8s_types::store::WatchEvent;
use k8s_types::Tick;

/// In-memory apiserver: objects by store key, a revision counter, uids `uid-<revision>`.
#[derive(Default)]
pub struct FakeApi {
    pub tick: Tick,
    pub rev: i64,
    pub objects: BTreeMap<String, Object>,
    /// Every successful write, as `verb kind/ns/name`.
    pub writes: Vec<String>,
}

impl FakeApi {
    fn key(kind: &Kind, ns: &str, name: &str) -> String {
        let ns = if kind.namespaced() && ns.is_empty() {
            "default"
        } else {
            ns
        };
        kind.key(ns, name)
    }

    fn bump(&mut self, obj: &mut Object) {
        self.rev += 1;
        obj.meta_mut().resource_version =
            Some(k8s_types::ToCompactString::to_compact_string(&self.rev));
    }

    pub fn pod(&self, ns: &str, name: &str) -> Option<Pod> {
        match self.objects.get(&Kind::Pod.key(ns, name)) {
            Some(Object::Pod(p)) => Some(*p.clone()),
            _ => None,
        }
    }

    /// Events as (reason, message, involved name), in creation order.
    pub fn events(&self) -> Vec<(String, String, String)> {
        let mut evs: Vec<(i64, String, String, String)> = self
            .objects
            .values()
            .filter_map(|o| match o {
                Object::Event(e) => Some((
                    e.metadata.resource_version_number(),
                    e.reason.to_string(),
                    e.message.to_string(),
                    e.involved_object.name.to_string(),
                )),
                _ => None,
            })
            .collect();
        evs.sort();
        evs.into_iter().map(|(_, r, m, n)| (r, m, n)).collect()
    }

    /// Creates a pod bound to `node`.
    pub fn add_pod(&mut self, pod: Pod) -> Pod {
        match self.create(Object::Pod(Box::new(pod))) {
            Ok(Object::Pod(p)) => *p,
            other => panic!("create pod: {other:?}"),
        }
    }
}

impl ApiClient for FakeApi {
    fn now(&self) -> Tick {
        self.tick
    }

    fn revision(&self) -> i64 {
        self.rev
    }

    fn create(&mut self, mut obj: Object) -> Result<Object, Status> {
        let kind = obj.kind();
        if kind.namespaced() && obj.meta().namespace.is_none() {
            obj.meta_mut().namespace = Some("default".into());
        }
        let key = obj.key();
        if self.objects.contains_key(&key) {
            return Err(Status::already_exists(&kind, &obj.meta().name));
        }
        obj.set_type_meta();
        self.bump(&mut obj);
        let rev = self.rev;
        let m = obj.meta_mut();
        m.uid = Some(format!("uid-{rev}"));
        m.creation_timestamp = Some(tick_timestamp(self.tick).into());
        self.writes.push(format!("create {key}"));
        self.objects.insert(key, obj.clone());
        Ok(obj)
    }

    fn get(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Object, Status> {
        self.objects
            .get(&Self::key(kind, namespace, name))
            .cloned()
            .ok_or_else(|| Status::not_found(kind, name))
    }

    fn list(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Object> {
        self.objects
            .values()
            .filter(|o| &o.kind() == kind)
            .filter(|o| namespace.is_none_or(|ns| o.meta().namespace() == ns))
            .filter(|o| selector.is_none_or(|s| s.matches(&o.meta().labels)))
            .cloned()
            .collect()
    }

    fn update(&mut self, mut obj: Object) -> Result<Object, Status> {
        let key = obj.key();
        let kind = obj.kind();
        let Some(old) = self.objects.get(&key).cloned() else {
            return Err(Status::not_found(&kind, &obj.meta().name));
        };
        if let Some(rv) = &obj.meta().resource_version {
            if old.meta().resource_version.as_ref() != Some(rv) {
                return Err(Status::conflict(&kind, &obj.meta().name));
            }
        }
        match (&mut obj, &old) {
            (Object::Pod(n), Object::Pod(o)) => n.status = o.status.clone(),
            (Object::Node(n), Object::Node(o)) => n.status = o.status.clone(),
            _ => {}
        }
        obj.meta_mut().uid = old.meta().uid.clone();
        obj.meta_mut().creation_timestamp = old.meta().creation_timestamp.clone();
        self.bump(&mut obj);
        self.writes.push(format!("update {key}"));
        self.objects.insert(key, obj.clone());
        Ok(obj)
    }

    fn update_status(&mut self, obj: Object) -> Result<Object, Status> {
        let key = obj.key();
        let kind = obj.kind();
        let Some(mut stored) = self.objects.get(&key).cloned() else {
            return Err(Status::not_found(&kind, &obj.meta().name));
        };
        if let Some(rv) = &obj.meta().resource_version {
            if stored.meta().resource_version.as_ref() != Some(rv) {
                return Err(Status::conflict(&kind, &obj.meta().name));
            }
        }
        match (&mut stored, obj) {
            (Object::Pod(s), Object::Pod(n)) => s.status = n.status,
            (Object::Node(s), Object::Node(n)) => s.status = n.status,
            _ => {}
        }
        self.bump(&mut stored);
        self.writes.push(format!("status {key}"));
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
        let key = Self::key(kind, namespace, name);
        let Some(mut obj) = self.objects.get(&key).cloned() else {
            return Err(Status::not_found(kind, name));
        };
        let bound_pod = matches!(&obj, Object::Pod(p) if p.node_name().is_some());
        if bound_pod && options.grace_period_seconds != Some(0) {
            let ts = tick_timestamp(self.tick);
            let m = obj.meta_mut();
            if m.deletion_timestamp.is_none() {
                m.deletion_timestamp = Some(ts.into());
                m.deletion_grace_period_seconds = Some(30);
                self.bump(&mut obj);
                self.writes.push(format!("terminate {key}"));
                self.objects.insert(key, obj.clone());
            }
            return Ok(obj);
        }
        self.rev += 1;
        self.writes.push(format!("delete {key}"));
        self.objects.remove(&key);
        Ok(obj)
    }

    fn bind(&mut self, binding: &Binding) -> Result<Pod, Status> {
        let ns = binding.metadata.namespace();
        let key = Kind::Pod.key(ns, &binding.metadata.name);
        let Some(Object::Pod(mut pod)) = self.objects.get(&key).cloned() else {
            return Err(Status::not_found(&Kind::Pod, &binding.metadata.name));
        };
        if pod.node_name().is_some() {
            return Err(Status::conflict(&Kind::Pod, &binding.metadata.name));
        }
        pod.spec.node_name = Some(binding.target.name.to_string());
        let mut obj = Object::Pod(pod);
        self.bump(&mut obj);
        self.objects.insert(key, obj.clone());
        match obj {
            Object::Pod(p) => Ok(*p),
            _ => Err(Status::internal("not a pod")),
        }
    }

    fn watch(&self, _kind: &Kind, _after_revision: i64) -> Result<Vec<WatchEvent>, Status> {
        Ok(Vec::new())
    }
}

/// A device plugin serving `resource` with devices `"0"`..`"n-1"`; its preferred allocation is the
/// lowest IDs, like the NVIDIA plugin's rule.
pub struct FakePlugin {
    pub resource: String,
    pub devices: Vec<Device>,
}

impl FakePlugin {
    pub fn boxed(resource: &str, n: usize) -> Box<dyn DevicePlugin> {
        Box::new(FakePlugin {
            resource: resource.into(),
            devices: (0..n)
                .map(|i| Device {
                    id: i.to_string(),
                    health: HEALTHY.into(),
                    numa_node: None,
                })
                .collect(),
        })
    }
}

impl DevicePlugin for FakePlugin {
    fn resource_name(&self) -> &str {
        &self.resource
    }

    fn options(&self) -> DevicePluginOptions {
        DevicePluginOptions {
            pre_start_required: false,
            get_preferred_allocation_available: true,
        }
    }

    fn list_and_watch(&self) -> Vec<Device> {
        self.devices.clone()
    }

    fn get_preferred_allocation(
        &self,
        available: &[String],
        must_include: &[String],
        size: usize,
    ) -> Vec<String> {
        let mut out = must_include.to_vec();
        let mut rest: Vec<String> = available
            .iter()
            .filter(|a| !out.contains(a))
            .cloned()
            .collect();
        rest.sort_by(|a, b| compare_device_ids(a, b));
        out.extend(rest);
        out.truncate(size.max(must_include.len()));
        out
    }

    fn allocate(
        &mut self,
        device_ids: &[String],
    ) -> Result<ContainerAllocateResponse, DevicePluginError> {
        for id in device_ids {
            match self.devices.iter().find(|d| &d.id == id) {
                None => return Err(DevicePluginError::UnknownDevice(id.clone())),
                Some(d) if d.health != HEALTHY => {
                    return Err(DevicePluginError::UnhealthyDevice(id.clone()))
                }
                Some(_) => {}
            }
        }
        let mut r = ContainerAllocateResponse::default();
        r.envs
            .insert("VISIBLE_DEVICES".into(), device_ids.join(","));
        Ok(r)
    }

    fn set_health(&mut self, device_id: &str, healthy: bool) {
        if let Some(d) = self.devices.iter_mut().find(|d| d.id == device_id) {
            d.health = if healthy { HEALTHY } else { UNHEALTHY }.into();
        }
    }

    fn feature_labels(&self) -> BTreeMap<String, String> {
        [(format!("{}.present", self.resource), "true".to_string())].into()
    }
}
