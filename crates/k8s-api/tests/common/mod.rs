//! Test helpers: a minimal in-memory `ObjectStore` (tests only; k8s-api depends on no sibling
//! crate) and object builders.

#![allow(dead_code)]

use std::collections::BTreeMap;

use k8s_api::ApiServer;
use k8s_types::apiserver::ApiClient;
use k8s_types::core::{Container, Namespace, Node, Pod};
use k8s_types::meta::ObjectMeta;
use k8s_types::store::{ObjectStore, StoreError, WatchEvent, WatchEventType};
use k8s_types::{Object, Quantity};

/// Revision counter, objects by key, full history; compaction point.
#[derive(Default)]
pub struct FakeStore {
    rev: i64,
    objects: BTreeMap<String, Object>,
    history: Vec<(String, WatchEvent)>,
    compacted: i64,
}

impl FakeStore {
    fn write(&mut self, key: &str, mut obj: Object, t: WatchEventType) -> Object {
        self.rev += 1;
        obj.meta_mut().resource_version =
            Some(k8s_types::ToCompactString::to_compact_string(&self.rev));
        self.history.push((
            key.to_string(),
            WatchEvent {
                type_: t,
                revision: self.rev,
                object: std::sync::Arc::new(obj.clone()),
            },
        ));
        obj
    }

    fn check(&self, key: &str, expected: Option<i64>) -> Result<(), StoreError> {
        let cur = self
            .objects
            .get(key)
            .ok_or(StoreError::NotFound { key: key.into() })?
            .meta()
            .resource_version_number();
        match expected {
            Some(e) if e != cur => Err(StoreError::Conflict {
                key: key.into(),
                expected: e,
                actual: cur,
            }),
            _ => Ok(()),
        }
    }
}

impl ObjectStore for FakeStore {
    fn revision(&self) -> i64 {
        self.rev
    }
    fn get(&self, key: &str) -> Option<&Object> {
        self.objects.get(key)
    }
    fn list(&self, prefix: &str) -> Vec<&Object> {
        self.objects
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, o)| o)
            .collect()
    }
    fn create(&mut self, key: &str, obj: Object) -> Result<std::sync::Arc<Object>, StoreError> {
        if self.objects.contains_key(key) {
            return Err(StoreError::AlreadyExists { key: key.into() });
        }
        let o = self.write(key, obj, WatchEventType::Added);
        self.objects.insert(key.into(), o.clone());
        Ok(std::sync::Arc::new(o))
    }
    fn update(
        &mut self,
        key: &str,
        obj: Object,
        expected: Option<i64>,
    ) -> Result<std::sync::Arc<Object>, StoreError> {
        self.check(key, expected)?;
        let o = self.write(key, obj, WatchEventType::Modified);
        self.objects.insert(key.into(), o.clone());
        Ok(std::sync::Arc::new(o))
    }
    fn delete(
        &mut self,
        key: &str,
        expected: Option<i64>,
    ) -> Result<std::sync::Arc<Object>, StoreError> {
        self.check(key, expected)?;
        let old = self
            .objects
            .remove(key)
            .ok_or(StoreError::NotFound { key: key.into() })?;
        Ok(std::sync::Arc::new(self.write(
            key,
            old,
            WatchEventType::Deleted,
        )))
    }
    fn watch(&self, prefix: &str, after: i64) -> Result<Vec<WatchEvent>, StoreError> {
        if after < self.compacted {
            return Err(StoreError::Compacted {
                requested: after,
                oldest: self.compacted,
            });
        }
        Ok(self
            .history
            .iter()
            .filter(|(k, e)| k.starts_with(prefix) && e.revision > after)
            .map(|(_, e)| e.clone())
            .collect())
    }
    fn compact(&mut self, revision: i64) {
        self.history.retain(|(_, e)| e.revision > revision);
        self.compacted = self.compacted.max(revision);
    }
}

/// An apiserver over a fresh fake store, with namespaces `default` and `kube-system` created.
pub fn server() -> ApiServer {
    let mut api = ApiServer::new(Box::<FakeStore>::default());
    for ns in ["default", "kube-system"] {
        api.create(Object::Namespace(Box::new(Namespace {
            metadata: meta(ns, None),
            ..Default::default()
        })))
        .unwrap();
    }
    api
}

pub fn meta(name: &str, ns: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: name.into(),
        namespace: ns.map(Into::into),
        ..Default::default()
    }
}

pub fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap()
}

/// A valid pod with one container `app` (image `nginx`) in `default`.
pub fn pod(name: &str) -> Pod {
    Pod {
        metadata: meta(name, None),
        spec: k8s_types::core::PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: "nginx".into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }
        .into(),
        ..Default::default()
    }
}

pub fn node(name: &str) -> Node {
    Node {
        metadata: meta(name, None),
        ..Default::default()
    }
}
