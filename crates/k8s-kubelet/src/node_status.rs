//! Node registration and status (upstream `pkg/kubelet/kubelet_node_status.go`
//! `registerWithAPIServer`, `initialNode`, `reconcileExtendedResource`, `updateDefaultLabels`, and
//! `pkg/kubelet/nodestatus/setters.go`: `NodeAddress`, `MachineInfo`, `MemoryPressureCondition`,
//! `DiskPressureCondition`, `PIDPressureCondition`, `ReadyCondition`).
//!
//! The user's Node manifest is the machine: its `status.capacity` (else `status.allocatable`) is
//! what cAdvisor would measure, and its `status.allocatable` what is left after reservations.
//! Resources served by a device plugin are never taken from the manifest: capacity is the number of
//! devices the plugin lists, allocatable the number of healthy ones.
//!
//! Simplifications: the node never reports pressure (the eviction manager is not modelled), so the
//! pressure conditions are always False and Ready is always True; the Lease heartbeat is not
//! modelled, the status is written when it changes and every
//! [`NODE_STATUS_REPORT_FREQUENCY_TICKS`] ticks otherwise.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::event::EventSource;
use k8s_types::core::{
    condition_status, node_labels, resource_names as rn, Node, NodeAddress, NodeCondition,
    NodeStatus, ResourceList,
};
use k8s_types::meta::{tick_timestamp, ObjectMeta};
use k8s_types::object::{Kind, Object, Resource};
use k8s_types::{Format, Quantity, Tick};

use crate::kubelet::{Kubelet, NODE_NOT_SCHEDULABLE, NODE_SCHEDULABLE};

/// Upstream `nodeStatusReportFrequency` default (5m = 300 ticks): with no change, the kubelet still
/// posts its status this often.
pub const NODE_STATUS_REPORT_FREQUENCY_TICKS: Tick = 300;

/// Upstream `events.StartingKubelet`.
pub const EVENT_STARTING: &str = "Starting";
/// Message of [`EVENT_STARTING`].
pub const STARTING_MESSAGE: &str = "Starting kubelet.";
/// Upstream `events.SuccessfulNodeAllocatableEnforcement`.
pub const EVENT_NODE_ALLOCATABLE_ENFORCED: &str = "NodeAllocatableEnforced";
/// Message of [`EVENT_NODE_ALLOCATABLE_ENFORCED`] (upstream `cm/node_container_manager_linux.go`).
pub const NODE_ALLOCATABLE_ENFORCED_MESSAGE: &str = "Updated Node Allocatable limit across pods";
/// Node status event when MemoryPressure turns False.
pub const EVENT_NODE_HAS_SUFFICIENT_MEMORY: &str = "NodeHasSufficientMemory";
/// Node status event when DiskPressure turns False.
pub const EVENT_NODE_HAS_NO_DISK_PRESSURE: &str = "NodeHasNoDiskPressure";
/// Node status event when PIDPressure turns False.
pub const EVENT_NODE_HAS_SUFFICIENT_PID: &str = "NodeHasSufficientPID";
/// Node status event when Ready turns True from another status (upstream `events.NodeReady`).
pub const EVENT_NODE_READY: &str = "NodeReady";

/// `Ready` condition reason and message (upstream `ReadyCondition` setter).
pub const KUBELET_READY: (&str, &str) = ("KubeletReady", "kubelet is posting ready status");
/// `MemoryPressure` False reason and message.
pub const KUBELET_HAS_SUFFICIENT_MEMORY: (&str, &str) = (
    "KubeletHasSufficientMemory",
    "kubelet has sufficient memory available",
);
/// `DiskPressure` False reason and message.
pub const KUBELET_HAS_NO_DISK_PRESSURE: (&str, &str) =
    ("KubeletHasNoDiskPressure", "kubelet has no disk pressure");
/// `PIDPressure` False reason and message.
pub const KUBELET_HAS_SUFFICIENT_PID: (&str, &str) = (
    "KubeletHasSufficientPID",
    "kubelet has sufficient PID available",
);

/// Default label `kubernetes.io/os`.
pub const LABEL_OS: &str = "kubernetes.io/os";
/// Default label `kubernetes.io/arch`.
pub const LABEL_ARCH: &str = "kubernetes.io/arch";
/// Deprecated default label `beta.kubernetes.io/os` (upstream still sets it).
pub const LABEL_BETA_OS: &str = "beta.kubernetes.io/os";
/// Deprecated default label `beta.kubernetes.io/arch`.
pub const LABEL_BETA_ARCH: &str = "beta.kubernetes.io/arch";
/// Annotation the kubelet sets when the attach/detach controller manages the node's volumes
/// (upstream `volutil.ControllerManagedAttachAnnotation`, default on).
pub const ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH: &str =
    "volumes.kubernetes.io/controller-managed-attach-detach";
/// The simulated machine's OS and architecture when the manifest's labels do not say.
pub const DEFAULT_OS: &str = "linux";
/// See [`DEFAULT_OS`].
pub const DEFAULT_ARCH: &str = "amd64";

/// `Node <name> status is now: <event>` (upstream `Kubelet.recordNodeStatusEvent`).
pub fn node_status_event_message(node: &str, event: &str) -> String {
    format!("Node {node} status is now: {event}")
}

/// The event source of everything the kubelet records.
pub fn kubelet_source(node: &str) -> EventSource {
    EventSource {
        component: "kubelet".into(),
        host: node.into(),
    }
}

/// The object node events are recorded against: upstream's `nodeRef`, whose UID is the node name.
pub fn node_ref(node: &str) -> Object {
    Object::Node(Box::new(Node {
        metadata: ObjectMeta {
            name: node.into(),
            uid: Some(node.into()),
            ..Default::default()
        },
        ..Default::default()
    }))
}

/// Machine capacity and allocatable from the manifest, without resources a device plugin serves:
/// capacity is `status.capacity` (else `status.allocatable`), allocatable is `status.allocatable`
/// (else capacity) with every capacity resource it lacks copied from capacity; `pods` defaults to
/// `max_pods` in both.
pub fn machine_resources(
    manifest: &Node,
    plugin_resources: &[String],
    max_pods: i64,
) -> (ResourceList, ResourceList) {
    let served = |name: &String| plugin_resources.iter().any(|r| r == name);
    let base = if manifest.status.capacity.is_empty() {
        &manifest.status.allocatable
    } else {
        &manifest.status.capacity
    };
    let mut capacity: ResourceList = base
        .iter()
        .filter(|(k, _)| !served(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    capacity
        .entry(rn::PODS.to_string())
        .or_insert_with(|| Quantity::from_value(max_pods, Format::DecimalSI));
    let mut allocatable: ResourceList = manifest
        .status
        .allocatable
        .iter()
        .filter(|(k, _)| !served(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in &capacity {
        allocatable.entry(k.clone()).or_insert_with(|| v.clone());
    }
    (capacity, allocatable)
}

/// Adds device plugin resources (upstream `MachineInfo` setter with
/// `devicePluginResourceCapacityFunc`): capacity = devices, allocatable = healthy devices.
pub fn with_device_plugins(
    mut capacity: ResourceList,
    mut allocatable: ResourceList,
    devices: &BTreeMap<String, (i64, i64)>,
) -> (ResourceList, ResourceList) {
    for (name, (total, healthy)) in devices {
        capacity.insert(
            name.clone(),
            Quantity::from_value(*total, Format::DecimalSI),
        );
        allocatable.insert(
            name.clone(),
            Quantity::from_value(*healthy, Format::DecimalSI),
        );
    }
    (capacity, allocatable)
}

/// A stable InternalIP for a node whose manifest gives none: `10.<a>.<b>.<c>` from the FNV-1a hash
/// of the name, `<c>` in 2..=254 (upstream takes it from the host's interfaces).
pub fn derive_internal_ip(name: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    let a = (h >> 16) & 0xff;
    let b = (h >> 8) & 0xff;
    let c = 2 + (h & 0xff) % 253;
    format!("10.{a}.{b}.{c}")
}

/// The node's addresses: the manifest's when it lists any, else `InternalIP` (derived) and
/// `Hostname` (the node name), in upstream order.
pub fn node_addresses(manifest: &Node) -> Vec<NodeAddress> {
    if !manifest.status.addresses.is_empty() {
        return manifest.status.addresses.clone();
    }
    let name = &manifest.metadata.name;
    vec![
        NodeAddress {
            type_: "InternalIP".into(),
            address: derive_internal_ip(name),
        },
        NodeAddress {
            type_: "Hostname".into(),
            address: name.clone(),
        },
    ]
}

/// The Node the kubelet registers (upstream `initialNode`): the manifest's metadata and spec plus
/// the default labels (`kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch` and their
/// `beta.` forms) and the device plugins' feature labels, each only when the manifest does not set
/// it, and the attach/detach annotation. Status starts from the manifest's (conditions, images and
/// nodeInfo are kept); the setters fill the rest.
pub fn initial_node(manifest: &Node, feature_labels: &BTreeMap<String, String>) -> Node {
    let mut node = manifest.clone();
    node.api_version = "v1".into();
    node.kind = "Node".into();
    let m = &mut node.metadata;
    m.namespace = None;
    m.uid = None;
    m.resource_version = None;
    m.creation_timestamp = None;
    m.deletion_timestamp = None;
    m.deletion_grace_period_seconds = None;
    m.generation = None;
    let name = m.name.clone();
    let labels = &mut m.labels;
    labels
        .entry(node_labels::HOSTNAME.to_string())
        .or_insert(name);
    let os = labels
        .get(LABEL_OS)
        .or_else(|| labels.get(LABEL_BETA_OS))
        .cloned()
        .unwrap_or_else(|| DEFAULT_OS.to_string());
    let arch = labels
        .get(LABEL_ARCH)
        .or_else(|| labels.get(LABEL_BETA_ARCH))
        .cloned()
        .unwrap_or_else(|| DEFAULT_ARCH.to_string());
    labels.entry(LABEL_OS.to_string()).or_insert(os.clone());
    labels.entry(LABEL_BETA_OS.to_string()).or_insert(os);
    labels.entry(LABEL_ARCH.to_string()).or_insert(arch.clone());
    labels.entry(LABEL_BETA_ARCH.to_string()).or_insert(arch);
    for (k, v) in feature_labels {
        labels.entry(k.clone()).or_insert_with(|| v.clone());
    }
    m.annotations
        .entry(ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH.to_string())
        .or_insert_with(|| "true".to_string());
    if node.spec.pod_cidr.is_none() {
        node.spec.pod_cidr = node.spec.pod_cidrs.first().cloned();
    }
    if node.spec.pod_cidrs.is_empty() {
        if let Some(c) = &node.spec.pod_cidr {
            node.spec.pod_cidrs = vec![c.clone()];
        }
    }
    node
}

/// Registration of a Node that already exists (upstream `tryRegisterWithAPIServer` reconciling an
/// existing node): labels and annotations of the registration win over the stored ones (others are
/// kept), the spec is the registration's, keeping the stored podCIDR when the registration has none.
pub fn merge_registration(existing: &Node, initial: &Node) -> Node {
    let mut node = existing.clone();
    for (k, v) in &initial.metadata.labels {
        node.metadata.labels.insert(k.clone(), v.clone());
    }
    for (k, v) in &initial.metadata.annotations {
        node.metadata.annotations.insert(k.clone(), v.clone());
    }
    let mut spec = initial.spec.clone();
    if spec.pod_cidr.is_none() {
        spec.pod_cidr = existing.spec.pod_cidr.clone();
        spec.pod_cidrs = existing.spec.pod_cidrs.clone();
    }
    node.spec = spec;
    node
}

/// A pressure condition setter: absent is treated as Unknown; a status other than False turns
/// False (with the reason, message, transition time and an event); the heartbeat is always `now`.
fn set_pressure_condition(
    conditions: &mut Vec<NodeCondition>,
    type_: &str,
    (reason, message): (&str, &str),
    event: &'static str,
    now: &str,
    events: &mut Vec<&'static str>,
) {
    let idx = match conditions.iter().position(|c| c.type_ == type_) {
        Some(i) => i,
        None => {
            conditions.push(NodeCondition {
                type_: type_.into(),
                status: condition_status::UNKNOWN.into(),
                ..Default::default()
            });
            conditions.len() - 1
        }
    };
    let c = &mut conditions[idx];
    if c.status != condition_status::FALSE {
        c.status = condition_status::FALSE.into();
        c.reason = Some(reason.into());
        c.message = Some(message.into());
        c.last_transition_time = Some(now.into());
        events.push(event);
    }
    c.last_heartbeat_time = Some(now.into());
}

/// The `Ready` setter: always True with `KubeletReady`; the transition time moves (and `NodeReady`
/// is recorded) only when an existing condition had another status.
fn set_ready_condition(
    conditions: &mut Vec<NodeCondition>,
    now: &str,
    events: &mut Vec<&'static str>,
) {
    let mut ready = NodeCondition {
        type_: "Ready".into(),
        status: condition_status::TRUE.into(),
        reason: Some(KUBELET_READY.0.into()),
        message: Some(KUBELET_READY.1.into()),
        last_heartbeat_time: Some(now.into()),
        last_transition_time: Some(now.into()),
    };
    match conditions.iter_mut().find(|c| c.type_ == "Ready") {
        Some(existing) => {
            if existing.status == ready.status {
                ready.last_transition_time = existing.last_transition_time.clone();
            } else {
                events.push(EVENT_NODE_READY);
            }
            *existing = ready;
        }
        None => conditions.push(ready),
    }
}

/// Runs the setters over `status`: addresses, capacity/allocatable (replacing these keys; other keys
/// of the stored lists are kept, as upstream updates rather than rebuilds the maps), then the pressure
/// conditions and Ready. Returns the node status events to record, in order.
/// Upstream `--node-status-max-images` default: the node reports at most 50 images.
pub const NODE_STATUS_MAX_IMAGES: usize = 50;

/// Upstream `setters.Images`: the images the kubelet pulled join `status.images` (`names`,
/// `sizeBytes`), largest first, at most [`NODE_STATUS_MAX_IMAGES`]. Images the manifest listed are
/// kept as given.
pub fn set_images(status: &mut NodeStatus, pulled: &std::collections::BTreeMap<String, u64>) {
    if pulled.is_empty() {
        return;
    }
    let listed = |images: &[serde_json::Value], name: &str| {
        images.iter().any(|i| {
            i.get("names")
                .and_then(|n| n.as_array())
                .is_some_and(|n| n.iter().any(|x| x.as_str() == Some(name)))
        })
    };
    for (name, size) in pulled {
        if !listed(&status.images, name) {
            status
                .images
                .push(serde_json::json!({"names": [name], "sizeBytes": size}));
        }
    }
    let size = |i: &serde_json::Value| {
        i.get("sizeBytes")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    status.images.sort_by_key(|i| std::cmp::Reverse(size(i)));
    status.images.truncate(NODE_STATUS_MAX_IMAGES);
}

pub fn set_node_status(
    status: &mut NodeStatus,
    capacity: &ResourceList,
    allocatable: &ResourceList,
    addresses: &[NodeAddress],
    now: Tick,
) -> Vec<&'static str> {
    let ts = tick_timestamp(now);
    status.addresses = addresses.to_vec();
    for (k, v) in capacity {
        status.capacity.insert(k.clone(), v.clone());
    }
    for (k, v) in allocatable {
        status.allocatable.insert(k.clone(), v.clone());
    }
    let mut events = Vec::new();
    set_pressure_condition(
        &mut status.conditions,
        "MemoryPressure",
        KUBELET_HAS_SUFFICIENT_MEMORY,
        EVENT_NODE_HAS_SUFFICIENT_MEMORY,
        &ts,
        &mut events,
    );
    set_pressure_condition(
        &mut status.conditions,
        "DiskPressure",
        KUBELET_HAS_NO_DISK_PRESSURE,
        EVENT_NODE_HAS_NO_DISK_PRESSURE,
        &ts,
        &mut events,
    );
    set_pressure_condition(
        &mut status.conditions,
        "PIDPressure",
        KUBELET_HAS_SUFFICIENT_PID,
        EVENT_NODE_HAS_SUFFICIENT_PID,
        &ts,
        &mut events,
    );
    set_ready_condition(&mut status.conditions, &ts, &mut events);
    events
}

/// True when two statuses differ at most in condition heartbeat times (upstream compares before
/// patching, so an unchanged status is not written every sync).
///
/// Compared field by field, without copies (every kubelet sync asks); destructured without `..`
/// so a field added to `NodeStatus` or `NodeCondition` is compared too.
pub fn same_ignoring_heartbeats(a: &NodeStatus, b: &NodeStatus) -> bool {
    let NodeStatus {
        capacity,
        allocatable,
        conditions,
        addresses,
        images,
        node_info,
    } = a;
    let same_condition = |x: &NodeCondition, y: &NodeCondition| {
        let NodeCondition {
            type_,
            status,
            reason,
            message,
            last_heartbeat_time: _,
            last_transition_time,
        } = x;
        *type_ == y.type_
            && *status == y.status
            && *reason == y.reason
            && *message == y.message
            && *last_transition_time == y.last_transition_time
    };
    *capacity == b.capacity
        && *allocatable == b.allocatable
        && conditions.len() == b.conditions.len()
        && conditions
            .iter()
            .zip(&b.conditions)
            .all(|(x, y)| same_condition(x, y))
        && *addresses == b.addresses
        && *images == b.images
        && *node_info == b.node_info
}

/// What a status computation that found nothing to write read: the stored Node version (shared),
/// the machine's resources and how many images the kubelet had pulled. The status setters
/// ([`set_node_status`], [`set_images`]) are functions of these (and of the time, which only
/// moves heartbeats), so while all are the same and no report is due, the next sync would find
/// nothing to write again and skips the computation (a copy of the Node's status each time).
#[derive(Debug)]
pub(crate) struct StatusMemo {
    node: Arc<Object>,
    capacity: ResourceList,
    allocatable: ResourceList,
    pulled: usize,
}

impl StatusMemo {
    fn unchanged(
        &self,
        node: &Arc<Object>,
        capacity: &ResourceList,
        allocatable: &ResourceList,
        pulled: usize,
    ) -> bool {
        Arc::ptr_eq(&self.node, node)
            && self.capacity == *capacity
            && self.allocatable == *allocatable
            && self.pulled == pulled
    }
}

impl Kubelet {
    /// Node status setters + write when changed or due. The stored Node is shared, not copied:
    /// only its status is, to compute the new one, and the Node when it is written. Returns
    /// whether it wrote the Node.
    pub(crate) fn sync_node_status(
        &mut self,
        api: &mut dyn ApiClient,
        stored: Option<Arc<Object>>,
        now: Tick,
    ) -> bool {
        if let Some(node) = stored.as_deref().and_then(Node::from_object_ref) {
            // Upstream `recordNodeSchedulableEvent`: an event when cordon state changes.
            let unschedulable = node.spec.unschedulable;
            if self
                .last_unschedulable
                .is_some_and(|prev| prev != unschedulable)
            {
                let reason = if unschedulable {
                    NODE_NOT_SCHEDULABLE
                } else {
                    NODE_SCHEDULABLE
                };
                let message = node_status_event_message(&self.name, reason);
                self.record_node_event(api, reason, message);
            }
            self.last_unschedulable = Some(unschedulable);
        }
        let (cap, alloc) = self.resources();
        let due = self
            .last_status_report
            .is_none_or(|t| now >= t.saturating_add(NODE_STATUS_REPORT_FREQUENCY_TICKS));
        if !due {
            if let (Some(memo), Some(node)) = (&self.status_memo, &stored) {
                if memo.unchanged(node, &cap, &alloc, self.pulled.len()) {
                    return false;
                }
            }
        }
        let mut current = stored;
        for attempt in 0..2 {
            let Some(node) = current.as_deref().and_then(Node::from_object_ref) else {
                return false;
            };
            let mut status = node.status.clone();
            let events = set_node_status(&mut status, &cap, &alloc, &self.addresses, now);
            set_images(&mut status, &self.pulled);
            if same_ignoring_heartbeats(&node.status, &status) && !due {
                self.status_memo = current.map(|node| StatusMemo {
                    node,
                    capacity: cap,
                    allocatable: alloc,
                    pulled: self.pulled.len(),
                });
                return false;
            }
            self.status_memo = None;
            let (metadata, spec) = (node.metadata.clone(), node.spec.clone());
            let (api_version, kind) = (node.api_version.clone(), node.kind.clone());
            let node = Node {
                api_version,
                kind,
                metadata,
                spec,
                status,
            };
            match api.update_status_typed(node) {
                Ok(_) => {
                    self.last_status_report = Some(now);
                    for ev in events {
                        self.record_node_event(api, ev, node_status_event_message(&self.name, ev));
                    }
                    return true;
                }
                Err(e) if e.is_conflict() && attempt == 0 => {
                    current = api.get_shared(&Kind::Node, "", &self.name).ok();
                }
                Err(e) => {
                    tracing::debug!(node = %self.name, error = %e, "node status update failed");
                    return false;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).expect("valid quantity")
    }

    #[test]
    fn plugin_resources_come_from_the_plugin_not_the_manifest() {
        let mut n = Node::default();
        n.status.capacity.extend([
            ("cpu".to_string(), q("32")),
            ("nvidia.com/gpu".to_string(), q("8")),
        ]);
        n.status.allocatable.insert("cpu".into(), q("31500m"));
        let (cap, alloc) = machine_resources(&n, &["nvidia.com/gpu".to_string()], 110);
        assert_eq!(cap.get("nvidia.com/gpu"), None);
        assert_eq!(cap["pods"].to_string(), "110");
        assert_eq!(alloc["cpu"].to_string(), "31500m");
        assert_eq!(alloc["pods"].to_string(), "110");
        let devices: BTreeMap<String, (i64, i64)> = [("nvidia.com/gpu".to_string(), (2, 1))].into();
        let (cap, alloc) = with_device_plugins(cap, alloc, &devices);
        assert_eq!(cap["nvidia.com/gpu"].to_string(), "2");
        assert_eq!(alloc["nvidia.com/gpu"].to_string(), "1");
    }

    #[test]
    fn first_status_emits_pressure_events_but_not_node_ready() {
        let mut status = NodeStatus::default();
        let events = set_node_status(
            &mut status,
            &ResourceList::new(),
            &ResourceList::new(),
            &[],
            5,
        );
        assert_eq!(
            events,
            vec![
                "NodeHasSufficientMemory",
                "NodeHasNoDiskPressure",
                "NodeHasSufficientPID"
            ]
        );
        let types: Vec<&str> = status.conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(
            types,
            vec!["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        );
        let ready = &status.conditions[3];
        assert_eq!(ready.reason.as_deref(), Some("KubeletReady"));
        assert_eq!(
            ready.message.as_deref(),
            Some("kubelet is posting ready status")
        );
        assert_eq!(
            ready.last_transition_time.as_deref(),
            Some("1970-01-01T00:00:05Z")
        );

        // A later sync only moves heartbeats.
        let before = status.clone();
        let events = set_node_status(
            &mut status,
            &ResourceList::new(),
            &ResourceList::new(),
            &[],
            9,
        );
        assert!(events.is_empty());
        assert!(same_ignoring_heartbeats(&before, &status));
        assert_eq!(
            status.conditions[3].last_heartbeat_time.as_deref(),
            Some("1970-01-01T00:00:09Z")
        );
        // Anything else that moves is a change: a transition time, a message, an image, a
        // condition more.
        let mut moved = status.clone();
        moved.conditions[3].last_transition_time = Some("1970-01-01T00:00:09Z".into());
        assert!(!same_ignoring_heartbeats(&status, &moved));
        let mut moved = status.clone();
        moved.conditions[0].message = Some("pressure".into());
        assert!(!same_ignoring_heartbeats(&status, &moved));
        let mut moved = status.clone();
        moved.images.push(serde_json::json!({"names": ["app:v1"]}));
        assert!(!same_ignoring_heartbeats(&status, &moved));
        let mut moved = status.clone();
        moved.conditions.pop();
        assert!(!same_ignoring_heartbeats(&status, &moved));

        // Someone marked it NotReady: the kubelet turns it back and records NodeReady.
        status.conditions[3].status = "Unknown".into();
        let events = set_node_status(
            &mut status,
            &ResourceList::new(),
            &ResourceList::new(),
            &[],
            12,
        );
        assert_eq!(events, vec!["NodeReady"]);
        assert_eq!(
            status.conditions[3].last_transition_time.as_deref(),
            Some("1970-01-01T00:00:12Z")
        );
    }

    #[test]
    fn initial_node_adds_default_labels_without_overriding() {
        let mut n = Node::default();
        n.metadata.name = "gpu-1".into();
        n.metadata
            .labels
            .insert("kubernetes.io/arch".into(), "arm64".into());
        n.spec.pod_cidr = Some("10.244.1.0/24".into());
        let features: BTreeMap<String, String> = [
            ("nvidia.com/gpu.present".to_string(), "true".to_string()),
            ("kubernetes.io/arch".to_string(), "amd64".to_string()),
        ]
        .into();
        let node = initial_node(&n, &features);
        let l = &node.metadata.labels;
        assert_eq!(l["kubernetes.io/hostname"], "gpu-1");
        assert_eq!(l["kubernetes.io/os"], "linux");
        assert_eq!(l["kubernetes.io/arch"], "arm64");
        assert_eq!(l["beta.kubernetes.io/arch"], "arm64");
        assert_eq!(l["nvidia.com/gpu.present"], "true");
        assert_eq!(
            node.metadata.annotations["volumes.kubernetes.io/controller-managed-attach-detach"],
            "true"
        );
        assert_eq!(node.spec.pod_cidrs, vec!["10.244.1.0/24"]);
    }

    #[test]
    fn derived_addresses_are_stable() {
        let n = Node {
            metadata: ObjectMeta {
                name: "node-a".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let a = node_addresses(&n);
        assert_eq!(a[0].type_, "InternalIP");
        // FNV-1a of "node-a", computed independently (Python), gives 10.195.181.149.
        assert_eq!(a[0].address, "10.195.181.149");
        assert_eq!(a[1].type_, "Hostname");
        assert_eq!(a[1].address, "node-a");
        assert_eq!(derive_internal_ip("node-b"), "10.195.183.40");
    }
}
