//! Read-side helpers over the apiserver shared by expectations and output: pods per node, allocated
//! and free resources per node, allocated device IDs, and kubectl-style pod status.

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Node, Pod, ALLOCATED_DEVICES_ANNOTATION};
use k8s_types::resources::{pod_requests, Resources};

/// Pods that hold node resources: bound and not terminal (pods being deleted still hold them until
/// gone, as in the scheduler's cache).
pub fn holds_resources(pod: &Pod) -> bool {
    pod.node_name().is_some() && !pod.is_terminal()
}

/// Sum of the effective requests of the pods holding resources on each node, plus pod counts.
pub fn allocated_by_node(api: &dyn ApiClient) -> BTreeMap<String, Resources> {
    let mut out: BTreeMap<String, Resources> = BTreeMap::new();
    for node in api.list_typed::<Node>(None, None) {
        out.insert(node.metadata.name.clone(), Resources::default());
    }
    for pod in api.list_typed::<Pod>(None, None) {
        if !holds_resources(&pod) {
            continue;
        }
        let Some(node) = pod.node_name() else {
            continue;
        };
        let entry = out.entry(node.to_string()).or_default();
        let mut r = pod_requests(&pod);
        r.pods = 1;
        entry.add(&r);
    }
    out
}

/// Device IDs per resource recorded on the pod by the kubelet's device manager
/// (annotation `k8s-mini.io/allocated-devices: nvidia.com/gpu=0,1`).
pub fn pod_devices(pod: &Pod) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    if let Some(v) = pod.metadata.annotations.get(ALLOCATED_DEVICES_ANNOTATION) {
        for part in v.split(';').filter(|p| !p.is_empty()) {
            if let Some((res, ids)) = part.split_once('=') {
                out.insert(
                    res.to_string(),
                    ids.split(',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect(),
                );
            }
        }
    }
    out
}

/// The STATUS column of `kubectl get pods` (upstream kubectl printers: Terminating, the pod's reason
/// such as OutOfcpu, SchedulingGated, a waiting reason such as ContainerCreating, else the phase).
pub fn kubectl_status(pod: &Pod) -> String {
    if pod.is_terminating() {
        return "Terminating".into();
    }
    if let Some(reason) = &pod.status.reason {
        return reason.clone();
    }
    if !pod.spec.scheduling_gates.is_empty() && pod.node_name().is_none() {
        return "SchedulingGated".into();
    }
    for cs in &pod.status.container_statuses {
        if let Some(reason) = cs.state.waiting.as_ref().and_then(|w| w.reason.clone()) {
            return reason;
        }
    }
    pod.phase().to_string()
}

/// The READY column: `ready/total` containers.
pub fn kubectl_ready(pod: &Pod) -> String {
    let ready = pod
        .status
        .container_statuses
        .iter()
        .filter(|c| c.ready)
        .count();
    format!("{ready}/{}", pod.spec.containers.len())
}

/// A resource amount in kubectl's units: cpu in milli-CPU (`1500m`, or whole cores), memory in Mi/Gi
/// when exact, anything else as an integer.
pub fn format_amount(resource: &str, amount: i64) -> String {
    match resource {
        "cpu" => {
            if amount % 1000 == 0 {
                format!("{}", amount / 1000)
            } else {
                format!("{amount}m")
            }
        }
        "memory" | "ephemeral-storage" => {
            const GI: i64 = 1 << 30;
            const MI: i64 = 1 << 20;
            const KI: i64 = 1 << 10;
            if amount != 0 && amount % GI == 0 {
                format!("{}Gi", amount / GI)
            } else if amount != 0 && amount % MI == 0 {
                format!("{}Mi", amount / MI)
            } else if amount != 0 && amount % KI == 0 {
                format!("{}Ki", amount / KI)
            } else {
                amount.to_string()
            }
        }
        _ => amount.to_string(),
    }
}
