//! The selector of the system/listed default spread constraints, deduced from what owns or
//! selects the pod: the selectors of the Services in the pod's namespace that select it, plus the
//! selector of its controller if that is a ReplicationController, ReplicaSet or StatefulSet.
//! Mirrors upstream `pkg/scheduler/framework/plugins/helper/spread.go` (`DefaultSelector`,
//! `GetPodServices`).
//!
//! ReplicaSets and Services are typed in k8s-mini; ReplicationControllers and StatefulSets are
//! read as unstructured objects (`spec.selector`) when a manifest contains them.

use std::collections::BTreeMap;

use k8s_types::apiserver::ApiClient;
use k8s_types::apps::ReplicaSet;
use k8s_types::core::{Pod, Service};
use k8s_types::labels::LabelSelector;
use k8s_types::object::{Kind, Object, Resource};

use crate::plugins::selector::Selector;

fn unstructured_kind(api_version: &str, kind: &str) -> Kind {
    Kind::Other {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        namespaced: true,
    }
}

/// `spec.selector` of an unstructured object as a `key: value` map; `None` when absent or null
/// (a Service without selector selects nothing, upstream `GetPodServices`).
fn spec_selector_map(obj: &Object) -> Option<BTreeMap<String, String>> {
    let Object::Other(u, _) = obj else {
        return None;
    };
    let sel = u.rest.get("spec")?.get("selector")?.as_object()?;
    Some(
        sel.iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
            .collect(),
    )
}

/// `spec.selector` of an unstructured object as a `metav1.LabelSelector` (StatefulSet).
fn spec_label_selector(obj: &Object) -> Option<LabelSelector> {
    let Object::Other(u, _) = obj else {
        return None;
    };
    let v = u.rest.get("spec")?.get("selector")?;
    if v.is_null() {
        return None;
    }
    serde_json::from_value(v.clone()).ok()
}

/// Upstream `DefaultSelector`.
pub fn default_selector(pod: &Pod, api: &dyn ApiClient) -> Selector {
    let ns = pod.metadata.namespace();
    let labels = &pod.metadata.labels;
    let mut set: BTreeMap<String, String> = BTreeMap::new();
    // Services that select the pod (upstream GetPodServices); merging is safe because they all
    // match the pod.
    // Read shared (one per pod scheduled): nothing is copied but the selectors that match.
    for obj in api.list_shared(&Kind::Service, Some(ns), None) {
        let Some(sel) = Service::from_object_ref(&obj).and_then(|s| s.spec.selector.as_ref())
        else {
            continue;
        };
        if sel.iter().all(|(k, v)| labels.get(k) == Some(v)) {
            set.extend(sel.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    let mut selector = Selector::from_set(&set);
    let Some(owner) = pod.metadata.controller_ref() else {
        return selector;
    };
    match (owner.api_version.as_str(), owner.kind.as_str()) {
        ("v1", "ReplicationController") => {
            let rc = api.get(
                &unstructured_kind("v1", "ReplicationController"),
                ns,
                &owner.name,
            );
            if let Ok(rc) = rc {
                if let Some(sel) = spec_selector_map(&rc) {
                    set.extend(sel);
                }
                selector = Selector::from_set(&set);
            }
        }
        ("apps/v1", "ReplicaSet") => {
            let rs = api.get_shared(&Kind::ReplicaSet, ns, &owner.name);
            if let Some(rs) = rs.as_deref().ok().and_then(ReplicaSet::from_object_ref) {
                let other = Selector::from_label_selector(rs.spec.selector.as_ref());
                if let Some(reqs) = other.requirements() {
                    selector = selector.with_requirements(reqs);
                }
            }
        }
        ("apps/v1", "StatefulSet") => {
            if let Ok(ss) = api.get(
                &unstructured_kind("apps/v1", "StatefulSet"),
                ns,
                &owner.name,
            ) {
                let other = Selector::from_label_selector(spec_label_selector(&ss).as_ref());
                if let Some(reqs) = other.requirements() {
                    selector = selector.with_requirements(reqs);
                }
            }
        }
        _ => {}
    }
    selector
}
