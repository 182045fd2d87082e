//! The workload of a what-if run, read back from the cluster: the pods descending from the added
//! objects, each pod's row (bind tick, node, devices), and the pods preempted or evicted after `T0`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Event, Pod};
use k8s_types::meta::timestamp_tick;
use k8s_types::object::{Kind, Object};
use k8s_types::Tick;

use super::{Base, Disrupted, Request, WorkloadPod};
use crate::capacity::is_pending;
use crate::manifest::Source;
use crate::state::pod_devices;

/// The namespace of an object as written in a manifest (none: `default`, as kubectl).
pub(super) fn ns_or_default(meta: &k8s_types::meta::ObjectMeta) -> String {
    match meta.namespace() {
        "" => "default".to_string(),
        ns => ns.to_string(),
    }
}

/// The controller of `meta`, `Kind/name`.
fn owner_of(meta: &k8s_types::meta::ObjectMeta) -> Option<String> {
    meta.controller_ref()
        .or_else(|| meta.owner_references.first())
        .map(|o| format!("{}/{}", o.kind, o.name))
}

/// The workload's roots (added objects and scaled controllers) and the pods descending from them,
/// with each pod's root.
pub(super) fn workload_pods(
    api: &dyn ApiClient,
    req: &Request,
    workload: &[(Object, Source)],
    base: &Base,
) -> (Vec<Pod>, BTreeMap<String, (String, i32)>) {
    let mut root_of: BTreeMap<String, String> = BTreeMap::new();
    let mut desired: BTreeMap<String, (String, i32)> = BTreeMap::new();
    let mut roots: Vec<(Kind, String, String)> = workload
        .iter()
        .map(|(o, _)| {
            let m = o.meta();
            let ns = if o.kind().namespaced() {
                ns_or_default(m)
            } else {
                String::new()
            };
            (o.kind(), ns, m.name.clone())
        })
        .collect();
    for s in &req.scale {
        let kind = match s.kind.as_str() {
            "ReplicaSet" => Kind::ReplicaSet,
            "StatefulSet" => Kind::StatefulSet,
            _ => Kind::Deployment,
        };
        roots.push((kind, s.namespace.clone(), s.name.clone()));
    }
    let kinds = [
        Kind::Deployment,
        Kind::ReplicaSet,
        Kind::StatefulSet,
        Kind::DaemonSet,
        Kind::CronJob,
        Kind::Job,
        Kind::Pod,
    ];
    let mut all: Vec<std::sync::Arc<Object>> = Vec::new();
    for k in &kinds {
        all.extend(api.list_shared(k, None, None));
    }
    for (kind, ns, name) in &roots {
        let Some(o) = all.iter().find(|o| {
            o.kind() == *kind && o.meta().name == *name && o.meta().namespace() == ns.as_str()
        }) else {
            continue;
        };
        let Some(uid) = o.meta().uid.clone() else {
            continue;
        };
        root_of.insert(uid.clone(), uid.clone());
        let replicas = match &**o {
            Object::Deployment(d) => Some(d.spec.replicas.unwrap_or(1)),
            Object::ReplicaSet(r) => Some(r.spec.replicas.unwrap_or(1)),
            Object::StatefulSet(s) => Some(s.spec.replicas.unwrap_or(1)),
            _ => None,
        };
        if let Some(r) = replicas {
            desired.insert(uid, (format!("{kind:?}/{name}"), r));
        }
    }
    loop {
        let mut grew = false;
        for o in &all {
            let Some(uid) = o.meta().uid.as_deref() else {
                continue;
            };
            if root_of.contains_key(uid) {
                continue;
            }
            let root = o
                .meta()
                .owner_references
                .iter()
                .find_map(|r| root_of.get(&r.uid).cloned());
            if let Some(root) = root {
                root_of.insert(uid.to_string(), root);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let mut pods: Vec<Pod> = Vec::new();
    let mut bound_per_root: BTreeMap<String, i32> = BTreeMap::new();
    let pending_at_t0: BTreeSet<&(String, String)> = if roots.is_empty() {
        base.pods
            .iter()
            .filter(|(_, p)| is_pending(p))
            .map(|(k, _)| k)
            .collect()
    } else {
        BTreeSet::new()
    };
    for o in &all {
        let Object::Pod(p) = &**o else { continue };
        let key = (p.metadata.namespace().to_string(), p.metadata.name.clone());
        let root = p.metadata.uid.as_deref().and_then(|u| root_of.get(u));
        if root.is_none() && !pending_at_t0.contains(&key) {
            continue;
        }
        if let Some(r) = root.filter(|r| desired.contains_key(*r)) {
            if p.node_name().is_some() && !p.is_terminal() {
                *bound_per_root.entry(r.clone()).or_insert(0) += 1;
            }
        }
        pods.push((**p).clone());
    }
    // Controllers of the workload with fewer bound pods than `spec.replicas`.
    let mut short: BTreeMap<String, (String, i32)> = BTreeMap::new();
    for (uid, (what, want)) in &desired {
        let bound = bound_per_root.get(uid).copied().unwrap_or(0);
        if bound < *want {
            short.insert(uid.clone(), (what.clone(), want - bound));
        }
    }
    pods.sort_by(|a, b| {
        (a.metadata.namespace(), &a.metadata.name).cmp(&(b.metadata.namespace(), &b.metadata.name))
    });
    (pods, short)
}

fn bound_at(p: &Pod) -> Option<Tick> {
    p.status
        .conditions
        .iter()
        .find(|c| c.type_ == "PodScheduled" && c.status == "True")
        .and_then(|c| c.last_transition_time.as_deref())
        .and_then(timestamp_tick)
}

pub(super) fn pod_row(p: &Pod) -> WorkloadPod {
    let message = if is_pending(p) {
        p.status
            .conditions
            .iter()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False")
            .and_then(|c| c.message.as_deref().map(str::to_string))
    } else {
        None
    };
    WorkloadPod {
        namespace: p.metadata.namespace().to_string(),
        name: p.metadata.name.clone(),
        owner: owner_of(&p.metadata),
        priority: p.priority(),
        pod_group: p.pod_group().map(str::to_string),
        bound_at: p.node_name().and(bound_at(p)),
        node: p.node_name().map(str::to_string),
        devices: pod_devices(p),
        status: crate::state::print_pod(p).status,
        message,
    }
}

/// Preemptions and evictions after `t0`, in event order (tick, then name).
pub(super) fn disruptions(api: &dyn ApiClient, base: &Base) -> (Vec<Disrupted>, Vec<Disrupted>) {
    let pods: Vec<Pod> = api.list_typed(None, None);
    let by_uid: BTreeMap<&str, String> = pods
        .iter()
        .filter_map(|p| {
            p.metadata
                .uid
                .as_deref()
                .map(|u| (u, format!("{}/{}", p.metadata.namespace(), p.metadata.name)))
        })
        .collect();
    let mut preempted = Vec::new();
    let mut evicted = Vec::new();
    let mut events: Vec<Event> = api.list_typed(None, None);
    events.retain(|e| e.involved_object.kind == "Pod");
    let tick_of = |e: &Event| {
        e.first_timestamp
            .as_deref()
            .and_then(timestamp_tick)
            .unwrap_or(0)
    };
    events.sort_by(|a, b| {
        (
            tick_of(a),
            &a.involved_object.namespace,
            &a.involved_object.name,
        )
            .cmp(&(
                tick_of(b),
                &b.involved_object.namespace,
                &b.involved_object.name,
            ))
    });
    for e in events.iter().filter(|e| tick_of(e) >= base.t0) {
        let target = match e.reason.as_str() {
            "Preempted" => &mut preempted,
            "Evicted" | "TaintManagerEviction" => &mut evicted,
            _ => continue,
        };
        let key = (
            e.involved_object.namespace.to_string(),
            e.involved_object.name.to_string(),
        );
        let was = base.pods.get(&key).or_else(|| {
            pods.iter()
                .find(|p| p.metadata.namespace() == key.0 && p.metadata.name == key.1)
        });
        let by = e
            .message
            .strip_prefix("Preempted by pod ")
            .and_then(|r| r.split(' ').next())
            .and_then(|uid| by_uid.get(uid).cloned());
        target.push(Disrupted {
            namespace: key.0.clone(),
            name: key.1.clone(),
            owner: was.and_then(|p| owner_of(&p.metadata)),
            priority: was.map_or(0, Pod::priority),
            node: was.and_then(|p| p.node_name().map(str::to_string)),
            at: tick_of(e),
            reason: e.reason.to_string(),
            message: e.message.to_string(),
            by,
        });
    }
    (preempted, evicted)
}
