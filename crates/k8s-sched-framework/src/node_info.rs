//! [`NodeInfo`]: the scheduler's aggregate view of one node (the Node, the pods assigned to it,
//! their summed requests, the node's allocatable and the host ports in use) and [`PodInfo`], a pod
//! with its requests computed once. Mirrors upstream `pkg/scheduler/framework/types.go`
//! (`NodeInfo`, `PodInfo`, `PodResource`, `HostPortInfo`).

use k8s_types::object::Shared;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use k8s_types::core::{Node, Pod};
use k8s_types::gpushare::{NodeGpus, PodGpu};
use k8s_types::resources::{pod_non_zero_requests, pod_requests, Resources};

/// Upstream `DefaultBindAllHostIP`: an empty hostIP binds every address.
pub const DEFAULT_BIND_ALL_HOST_IP: &str = "0.0.0.0";
/// Upstream default port protocol.
pub const DEFAULT_PROTOCOL: &str = "TCP";

/// A pod plus what the scheduler derives from it once (upstream `PodInfo` + `PodResource`).
#[derive(Clone, Debug)]
pub struct PodInfo {
    /// The pod.
    pub pod: Shared<Pod>,
    /// The effective request (upstream `resource.PodRequests`): milli-CPU, bytes, extended
    /// resources in units. `pods` is 0.
    pub requests: Resources,
    /// Milli-CPU counted for scoring: each container without a CPU request counts 100m
    /// (upstream `Non0CPU`).
    pub non_zero_milli_cpu: i64,
    /// Bytes of memory counted for scoring: each container without a memory request counts
    /// 200 MiB (upstream `Non0Mem`).
    pub non_zero_memory: i64,
    /// Host ports the pod's containers bind: (hostIP, protocol, hostPort), sanitized
    /// (`0.0.0.0`, `TCP` defaults), only ports > 0.
    pub host_ports: Vec<(String, String, i32)>,
    /// The pod's GPUs (whole `nvidia.com/gpu` or shared `alibabacloud.com/gpu-milli`) and, when
    /// known, the GPU indices it holds; `None` without GPU requests.
    pub gpu: Option<PodGpu>,
}

impl PodInfo {
    /// Computes requests, non-zero requests and host ports of `pod`.
    pub fn new(pod: Shared<Pod>) -> PodInfo {
        let requests = pod_requests(&pod);
        let non_zero = pod_non_zero_requests(&pod);
        let host_ports = pod_host_ports(&pod);
        let gpu = PodGpu::of(&pod, &requests);
        PodInfo {
            pod,
            requests,
            non_zero_milli_cpu: non_zero.milli_cpu,
            non_zero_memory: non_zero.memory,
            host_ports,
            gpu,
        }
    }

    /// True when `other` is the same pod: same UID when both have one, else same namespace/name.
    pub fn is_same_pod(&self, other: &Pod) -> bool {
        same_pod(&self.pod, other)
    }
}

/// True when `a` and `b` are the same pod: same UID when both have one, else same namespace/name.
pub fn same_pod(a: &Pod, b: &Pod) -> bool {
    match (a.metadata.uid.as_deref(), b.metadata.uid.as_deref()) {
        (Some(x), Some(y)) if !x.is_empty() && !y.is_empty() => x == y,
        _ => a.metadata.name == b.metadata.name && a.metadata.namespace() == b.metadata.namespace(),
    }
}

/// The host ports a pod's containers ask for (upstream `getContainerPorts`: regular containers).
pub fn pod_host_ports(pod: &Pod) -> Vec<(String, String, i32)> {
    let mut out = Vec::new();
    for c in &pod.spec.containers {
        for p in &c.ports {
            let port = p.host_port.unwrap_or(0);
            if port <= 0 {
                continue;
            }
            let (ip, proto) = sanitize(p.host_ip.as_deref(), p.protocol.as_deref());
            out.push((ip.to_string(), proto.to_string(), port));
        }
    }
    out
}

fn sanitize<'a>(ip: Option<&'a str>, protocol: Option<&'a str>) -> (&'a str, &'a str) {
    let ip = match ip {
        Some(s) if !s.is_empty() => s,
        _ => DEFAULT_BIND_ALL_HOST_IP,
    };
    let proto = match protocol {
        Some(s) if !s.is_empty() => s,
        _ => DEFAULT_PROTOCOL,
    };
    (ip, proto)
}

/// Host ports in use on a node: (hostIP, protocol, port) -> number of pods using it (upstream
/// `HostPortInfo`, with a count so add/remove are exact inverses).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostPortInfo {
    used: BTreeMap<(String, String, i32), u32>,
}

impl HostPortInfo {
    /// Records one use.
    pub fn add(&mut self, ip: &str, protocol: &str, port: i32) {
        let (ip, protocol) = sanitize(Some(ip), Some(protocol));
        *self
            .used
            .entry((ip.to_string(), protocol.to_string(), port))
            .or_insert(0) += 1;
    }

    /// Forgets one use.
    pub fn remove(&mut self, ip: &str, protocol: &str, port: i32) {
        let (ip, protocol) = sanitize(Some(ip), Some(protocol));
        let key = (ip.to_string(), protocol.to_string(), port);
        if let Some(n) = self.used.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.used.remove(&key);
            }
        }
    }

    /// Upstream `CheckConflict`: `0.0.0.0` conflicts with the same protocol/port on any IP; a
    /// specific IP conflicts with itself and with `0.0.0.0`.
    pub fn check_conflict(&self, ip: &str, protocol: &str, port: i32) -> bool {
        if port <= 0 {
            return false;
        }
        let (ip, protocol) = sanitize(Some(ip), Some(protocol));
        if ip == DEFAULT_BIND_ALL_HOST_IP {
            return self
                .used
                .keys()
                .any(|(_, p, n)| p == protocol && *n == port);
        }
        self.used.keys().any(|(i, p, n)| {
            (i == ip || i == DEFAULT_BIND_ALL_HOST_IP) && p == protocol && *n == port
        })
    }

    /// Number of distinct (ip, protocol, port) entries.
    pub fn len(&self) -> usize {
        self.used.len()
    }

    /// True when no port is used.
    pub fn is_empty(&self) -> bool {
        self.used.is_empty()
    }
}

/// True when the pod has pod affinity or pod anti-affinity (upstream `podWithAffinity`).
pub fn pod_has_affinity(pod: &Pod) -> bool {
    pod.spec
        .affinity
        .as_ref()
        .is_some_and(|a| a.pod_affinity.is_some() || a.pod_anti_affinity.is_some())
}

/// True when the pod has required pod anti-affinity terms (upstream
/// `podWithRequiredAntiAffinity`).
pub fn pod_has_required_anti_affinity(pod: &Pod) -> bool {
    pod.spec
        .affinity
        .as_ref()
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .is_some_and(|pa| {
            !pa.required_during_scheduling_ignored_during_execution
                .is_empty()
        })
}

/// Image name -> size in bytes for every name of every entry of `node.status.images` (upstream
/// `NodeInfo.ImageStates` keys, `ContainerImage.Names`/`SizeBytes`). Entries that are not objects
/// or have no `names` are skipped; a missing or non-integer `sizeBytes` counts 0; a name listed
/// twice keeps its first size.
pub fn node_image_sizes(node: &Node) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for image in &node.status.images {
        let size = image
            .get("sizeBytes")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        let Some(names) = image.get("names").and_then(serde_json::Value::as_array) else {
            continue;
        };
        for name in names.iter().filter_map(serde_json::Value::as_str) {
            out.entry(name.to_string()).or_insert(size);
        }
    }
    out
}

/// A 64-bit hash of a label key or value (rustc's FxHash, the same in every process), for
/// [`LabelIndex`] lookups with a key hashed once per scheduling attempt.
pub fn label_hash(s: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(s.as_bytes());
    h.write_usize(s.len());
    h.finish()
}

/// A node's labels in two contiguous blocks (hashed keys, then the text), so that the per-node
/// Filter loops of NodeAffinity, PodTopologySpread and InterPodAffinity find a label in one or
/// two cache lines instead of walking the Node's `BTreeMap<String, String>` and its separately
/// allocated strings. Built once per [`NodeInfo::new`] (the Node's labels never change within a
/// NodeInfo). No upstream counterpart; lookups give exactly `labels.get(key)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelIndex {
    /// Per label, in key order: key hash, key start, key end (= value start), value end.
    entries: Box<[(u64, u32, u32, u32)]>,
    /// Keys and values, concatenated.
    text: Box<str>,
}

impl LabelIndex {
    /// The index of `labels`.
    pub fn new(labels: &BTreeMap<String, String>) -> LabelIndex {
        let mut text = String::new();
        let mut entries = Vec::with_capacity(labels.len());
        for (k, v) in labels {
            let start = text.len() as u32;
            text.push_str(k);
            let key_end = text.len() as u32;
            text.push_str(v);
            entries.push((label_hash(k), start, key_end, text.len() as u32));
        }
        LabelIndex {
            entries: entries.into_boxed_slice(),
            text: text.into_boxed_str(),
        }
    }

    /// The value of label `key`, whose [`label_hash`] is `key_hash`.
    pub fn get_hashed(&self, key: &str, key_hash: u64) -> Option<&str> {
        for &(h, start, key_end, end) in self.entries.iter() {
            if h == key_hash && self.text.get(start as usize..key_end as usize) == Some(key) {
                return self.text.get(key_end as usize..end as usize);
            }
        }
        None
    }

    /// The value of label `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.get_hashed(key, label_hash(key))
    }
}

/// Source of [`NodeInfo::generation`] values (upstream `generation` / `nextGeneration` in
/// `pkg/scheduler/framework/types.go`): process-wide, so no two NodeInfo states share one.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

fn next_generation() -> u64 {
    NEXT_GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// The scheduler's view of one node (upstream `NodeInfo`).
#[derive(Clone, Debug)]
pub struct NodeInfo {
    generation: u64,
    node_generation: u64,
    count_generation: u64,
    count_base: u64,
    label_index: LabelIndex,
    /// `metadata.name`, `spec.unschedulable` and whether `spec.taints` is non-empty, copied out
    /// of the Node (read for every node of every attempt).
    name: String,
    unschedulable: bool,
    has_taints: bool,
    node: Arc<Node>,
    pods: Vec<PodInfo>,
    requested: Resources,
    non_zero_requested: Resources,
    allocatable: Resources,
    used_ports: HostPortInfo,
    pods_with_affinity: usize,
    pods_with_required_anti_affinity: usize,
    image_sizes: OnceLock<BTreeMap<String, i64>>,
    gpus: NodeGpus,
}

impl NodeInfo {
    /// A NodeInfo for `node` with no pods; `allocatable` comes from `status.allocatable`.
    pub fn new(node: Arc<Node>) -> NodeInfo {
        let allocatable = Resources::from_list(&node.status.allocatable);
        let gpus = NodeGpus::new(&node);
        let generation = next_generation();
        NodeInfo {
            generation,
            node_generation: generation,
            count_generation: generation,
            count_base: 0,
            label_index: LabelIndex::new(&node.metadata.labels),
            name: node.metadata.name.clone(),
            unschedulable: node.spec.unschedulable,
            has_taints: !node.spec.taints.is_empty(),
            node,
            pods: Vec::new(),
            requested: Resources::default(),
            non_zero_requested: Resources::default(),
            allocatable,
            used_ports: HostPortInfo::default(),
            pods_with_affinity: 0,
            pods_with_required_anti_affinity: 0,
            image_sizes: OnceLock::new(),
            gpus,
        }
    }

    /// Upstream `NodeInfo.Generation`: a process-wide unique number, renewed by [`NodeInfo::new`],
    /// [`NodeInfo::add_pod`] and [`NodeInfo::remove_pod`]. Equal generations mean equal contents
    /// (a clone keeps it), so a derived index can tell which nodes changed since it last looked.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The generation of this NodeInfo's Node object: set by [`NodeInfo::new`] (the only way a
    /// NodeInfo gets a Node), kept by a clone and by [`NodeInfo::add_pod`] and
    /// [`NodeInfo::remove_pod`]. Process-wide unique like [`NodeInfo::generation`], so equal
    /// values mean the same Node (labels, name, taints), whatever the pods: a plugin whose
    /// verdict depends only on the Node can keep it across pods. No upstream counterpart.
    pub fn node_generation(&self) -> u64 {
        self.node_generation
    }

    /// The generation at which what pod counting by topology reads last changed: the Node
    /// (labels, taints), which pods are on it, and each pod's namespace, labels, whether it has a
    /// `deletionTimestamp`, and its affinity (PodTopologySpread's `countPodsMatchSelector` and
    /// InterPodAffinity's existing terms read nothing else). Renewed with
    /// [`NodeInfo::generation`] by [`NodeInfo::new`], [`NodeInfo::add_pod`] and
    /// [`NodeInfo::remove_pod`]; kept by [`NodeInfo::replace_pod_at`] when the new version of the
    /// pod agrees on those (a status update). Process-wide unique like the generation, so equal
    /// values mean equal counts: a counting index need not recount the node. No upstream
    /// counterpart.
    pub fn count_generation(&self) -> u64 {
        self.count_generation
    }

    /// When the last change counting reads was [`NodeInfo::add_pod`], the pod now last in
    /// [`NodeInfo::pods`]: the [`NodeInfo::count_generation`] before it; else 0. An index that
    /// counted the node at that generation need only add the last pod. No upstream counterpart.
    pub fn count_base(&self) -> u64 {
        self.count_base
    }

    /// The Node's labels, indexed for fast lookups (see [`LabelIndex`]).
    pub fn label_index(&self) -> &LabelIndex {
        &self.label_index
    }

    /// The Node object.
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// The shared Node object.
    pub fn node_arc(&self) -> &Arc<Node> {
        &self.node
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The node's `spec.unschedulable` (cordoned).
    pub fn is_unschedulable(&self) -> bool {
        self.unschedulable
    }

    /// True when the node has at least one taint (`spec.taints` is not empty).
    pub fn has_taints(&self) -> bool {
        self.has_taints
    }

    /// Pods assigned (bound or assumed) to the node, in the order they were added.
    pub fn pods(&self) -> &[PodInfo] {
        &self.pods
    }

    /// Number of pods assigned to the node.
    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }

    /// Sum of the assigned pods' requests (upstream `Requested`).
    pub fn requested(&self) -> &Resources {
        &self.requested
    }

    /// Sum of the assigned pods' non-zero CPU (milli) and memory (bytes) requests (upstream
    /// `NonZeroRequested`); only `milli_cpu` and `memory` are set.
    pub fn non_zero_requested(&self) -> &Resources {
        &self.non_zero_requested
    }

    /// The node's allocatable resources (`pods` = allowed pod number).
    pub fn allocatable(&self) -> &Resources {
        &self.allocatable
    }

    /// Host ports in use.
    pub fn used_ports(&self) -> &HostPortInfo {
        &self.used_ports
    }

    /// Number of assigned pods with pod affinity or anti-affinity (upstream
    /// `len(PodsWithAffinity)`); InterPodAffinity skips nodes where this is 0.
    pub fn num_pods_with_affinity(&self) -> usize {
        self.pods_with_affinity
    }

    /// Number of assigned pods with required pod anti-affinity (upstream
    /// `len(PodsWithRequiredAntiAffinity)`).
    pub fn num_pods_with_required_anti_affinity(&self) -> usize {
        self.pods_with_required_anti_affinity
    }

    /// The node's images: name -> size in bytes (see [`node_image_sizes`]), parsed from the Node
    /// on first use.
    pub fn image_sizes(&self) -> &BTreeMap<String, i64> {
        self.image_sizes
            .get_or_init(|| node_image_sizes(&self.node))
    }

    /// Per-GPU free milli-GPU and GPU tags of the pods on the node (see [`k8s_types::gpushare`]).
    pub fn gpus(&self) -> &NodeGpus {
        &self.gpus
    }

    /// Adds a pod and its requests and ports (upstream `AddPodInfo`).
    pub fn add_pod(&mut self, pi: PodInfo) {
        if let Some(g) = &pi.gpu {
            self.gpus.add(g);
        }
        self.requested.add(&pi.requests);
        self.non_zero_requested.milli_cpu += pi.non_zero_milli_cpu;
        self.non_zero_requested.memory += pi.non_zero_memory;
        for (ip, proto, port) in &pi.host_ports {
            self.used_ports.add(ip, proto, *port);
        }
        if pod_has_affinity(&pi.pod) {
            self.pods_with_affinity += 1;
        }
        if pod_has_required_anti_affinity(&pi.pod) {
            self.pods_with_required_anti_affinity += 1;
        }
        self.pods.push(pi);
        self.generation = next_generation();
        self.count_base = self.count_generation;
        self.count_generation = self.generation;
    }

    /// Removes a pod (matched by UID, else namespace/name) and subtracts its requests and ports;
    /// returns it, or `None` when the pod is not on this node (upstream `RemovePod`).
    pub fn remove_pod(&mut self, pod: &Pod) -> Option<PodInfo> {
        let idx = self.pods.iter().position(|p| p.is_same_pod(pod))?;
        self.remove_pod_at(idx)
    }

    /// [`NodeInfo::remove_pod`] of the pod at `idx` in [`NodeInfo::pods`], for a caller that has
    /// already found it; `None` when `idx` is out of range.
    pub fn remove_pod_at(&mut self, idx: usize) -> Option<PodInfo> {
        if idx >= self.pods.len() {
            return None;
        }
        let pi = self.pods.remove(idx);
        if let Some(g) = &pi.gpu {
            self.gpus.remove(g);
        }
        self.requested.sub(&pi.requests);
        self.non_zero_requested.milli_cpu -= pi.non_zero_milli_cpu;
        self.non_zero_requested.memory -= pi.non_zero_memory;
        for (ip, proto, port) in &pi.host_ports {
            self.used_ports.remove(ip, proto, *port);
        }
        if pod_has_affinity(&pi.pod) {
            self.pods_with_affinity -= 1;
        }
        if pod_has_required_anti_affinity(&pi.pod) {
            self.pods_with_required_anti_affinity -= 1;
        }
        self.generation = next_generation();
        self.count_base = 0;
        self.count_generation = self.generation;
        Some(pi)
    }

    /// Replaces the pod at `idx` in [`NodeInfo::pods`] by a new version of it that derives the
    /// same [`PodInfo`] (same containers, init containers, overhead, affinity and annotations:
    /// the caller checks; the derived requests, ports and GPUs are kept), as
    /// [`NodeInfo::remove_pod_at`] then [`NodeInfo::add_pod`] (upstream `updatePod`: the pod
    /// moves to the end, the generation is renewed). [`NodeInfo::count_generation`] is kept when
    /// the two versions agree on what counting reads. Returns the replaced version, or `None`
    /// when `idx` is out of range.
    pub fn replace_pod_at(&mut self, idx: usize, pod: Shared<Pod>) -> Option<Shared<Pod>> {
        let count_generation = self.count_generation;
        let mut pi = self.remove_pod_at(idx)?;
        let same_counts = same_counted_inputs(&pi.pod, &pod);
        let old = std::mem::replace(&mut pi.pod, pod);
        self.add_pod(pi);
        // The pod moved last: no longer the one an `add_pod` added.
        self.count_base = 0;
        if same_counts {
            self.count_generation = count_generation;
        }
        Some(old)
    }
}

/// True when `a` and `b` agree on what pod counting by topology reads (see
/// [`NodeInfo::count_generation`]).
fn same_counted_inputs(a: &Shared<Pod>, b: &Shared<Pod>) -> bool {
    Shared::ptr_eq(a, b)
        || (a.metadata.namespace == b.metadata.namespace
            && a.metadata.labels == b.metadata.labels
            && a.metadata.deletion_timestamp.is_some() == b.metadata.deletion_timestamp.is_some()
            && a.spec.affinity == b.spec.affinity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::{Container, ContainerPort, ResourceList};
    use k8s_types::Quantity;

    fn pod(name: &str, cpu: &str, host_port: Option<i32>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = Some("default".into());
        let mut requests = ResourceList::new();
        requests.insert("cpu".into(), Quantity::parse(cpu).unwrap());
        let mut c = Container::default();
        c.resources.requests = requests.into();
        if let Some(hp) = host_port {
            c.ports.push(ContainerPort {
                container_port: 80,
                host_port: Some(hp),
                ..Default::default()
            });
        }
        p.spec.containers.push(c);
        p
    }

    #[test]
    fn add_and_remove_are_exact_inverses() {
        let mut node = Node::default();
        node.metadata.name = "n1".into();
        node.status
            .allocatable
            .insert("cpu".into(), Quantity::parse("4").unwrap());
        let mut ni = NodeInfo::new(Arc::new(node));
        let a = pod("a", "500m", Some(8080));
        ni.add_pod(PodInfo::new(Shared::from_typed(a.clone())));
        ni.add_pod(PodInfo::new(Shared::from_typed(pod("b", "1", None))));
        assert_eq!(ni.requested().milli_cpu, 1500);
        // Missing memory requests count 200 MiB each for scoring.
        assert_eq!(ni.non_zero_requested().memory, 2 * 200 * 1024 * 1024);
        assert!(ni.used_ports().check_conflict("", "TCP", 8080));
        assert!(ni.used_ports().check_conflict("10.0.0.1", "", 8080));
        assert!(!ni.used_ports().check_conflict("", "UDP", 8080));
        assert!(ni.remove_pod(&a).is_some());
        assert!(ni.remove_pod(&a).is_none());
        assert_eq!(ni.requested().milli_cpu, 1000);
        assert!(ni.used_ports().is_empty());
        assert_eq!(ni.pod_count(), 1);
        assert_eq!(ni.allocatable().milli_cpu, 4000);
    }

    #[test]
    fn remove_pod_at_removes_that_position() {
        let mut node = Node::default();
        node.metadata.name = "n1".into();
        let mut ni = NodeInfo::new(Arc::new(node));
        for (name, cpu, port) in [
            ("a", "500m", Some(8080)),
            ("b", "1", None),
            ("c", "250m", None),
        ] {
            ni.add_pod(PodInfo::new(Shared::from_typed(pod(name, cpu, port))));
        }
        assert!(ni.remove_pod_at(3).is_none());
        assert_eq!(ni.pod_count(), 3);
        let removed = ni.remove_pod_at(0).expect("position 0 is a");
        assert_eq!(removed.pod.metadata.name, "a");
        // 500m + 1 + 250m minus a's 500m; a's host port is released with it.
        assert_eq!(ni.requested().milli_cpu, 1250);
        assert!(ni.used_ports().is_empty());
        let names: Vec<&str> = ni.pods().iter().map(|p| &*p.pod.metadata.name).collect();
        assert_eq!(names, ["b", "c"]);
    }

    #[test]
    fn replace_pod_at_keeps_the_count_generation_only_for_what_counting_does_not_read() {
        let mut node = Node::default();
        node.metadata.name = "n1".into();
        let mut ni = NodeInfo::new(Arc::new(node));
        assert_eq!(ni.count_base(), 0);
        let a = Shared::from_typed(pod("a", "500m", Some(8080)));
        ni.add_pod(PodInfo::new(Shared::clone(&a)));
        let after_a = ni.count_generation();
        ni.add_pod(PodInfo::new(Shared::from_typed(pod("b", "1", None))));
        // The last change was adding b, after the counts at a's addition.
        assert_eq!(ni.count_base(), after_a);
        let counted = ni.count_generation();
        assert_eq!(counted, ni.generation());
        assert!(ni.replace_pod_at(2, Shared::clone(&a)).is_none());

        // A status update: a new generation, the same count generation, the pod moved last.
        let mut running = (*a).clone();
        running.status.phase = Some("Running".into());
        let before = ni.generation();
        let old = ni.replace_pod_at(0, Shared::from_typed(running)).unwrap();
        assert!(Shared::ptr_eq(&old, &a));
        assert_ne!(ni.generation(), before);
        assert_eq!(ni.count_generation(), counted);
        // a moved last: the last pod is no longer the one added.
        assert_eq!(ni.count_base(), 0);
        let names: Vec<&str> = ni.pods().iter().map(|p| &*p.pod.metadata.name).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(ni.requested().milli_cpu, 1500);
        assert!(ni.used_ports().check_conflict("", "TCP", 8080));

        // A new label, or a deletionTimestamp: counting reads them, the count generation renews.
        let mut relabelled = (*ni.pods()[1].pod).clone();
        relabelled
            .metadata
            .labels
            .insert("app".into(), "web".into());
        ni.replace_pod_at(1, Shared::from_typed(relabelled.clone()));
        assert_ne!(ni.count_generation(), counted);
        assert_eq!(ni.count_generation(), ni.generation());
        let counted = ni.count_generation();
        relabelled.metadata.deletion_timestamp = Some("1970-01-01T00:00:30Z".into());
        ni.replace_pod_at(1, Shared::from_typed(relabelled));
        assert_ne!(ni.count_generation(), counted);
        let counted = ni.count_generation();
        ni.add_pod(PodInfo::new(Shared::from_typed(pod("c", "1", None))));
        assert_eq!(ni.count_base(), counted);
        ni.remove_pod_at(0);
        assert_eq!(ni.count_base(), 0);
    }

    #[test]
    fn affinity_counters_and_image_sizes() {
        use k8s_types::core::{Affinity, PodAffinity, PodAffinityTerm};
        let mut node = Node::default();
        node.metadata.name = "n1".into();
        node.status.images.push(serde_json::json!({
            "names": ["gcr.io/40:latest", "gcr.io/40:v1"],
            "sizeBytes": 41943040
        }));
        node.status.images.push(serde_json::json!({"sizeBytes": 1}));
        let mut ni = NodeInfo::new(Arc::new(node));
        assert_eq!(ni.image_sizes().get("gcr.io/40:v1"), Some(&41943040));
        assert_eq!(ni.image_sizes().len(), 2);

        let mut anti = pod("anti", "100m", None);
        anti.spec.affinity = Some(Affinity {
            pod_anti_affinity: Some(PodAffinity {
                required_during_scheduling_ignored_during_execution: vec![
                    PodAffinityTerm::default(),
                ],
                ..Default::default()
            }),
            ..Default::default()
        });
        let mut soft = pod("soft", "100m", None);
        soft.spec.affinity = Some(Affinity {
            pod_affinity: Some(PodAffinity::default()),
            ..Default::default()
        });
        ni.add_pod(PodInfo::new(Shared::from_typed(anti.clone())));
        ni.add_pod(PodInfo::new(Shared::from_typed(soft)));
        ni.add_pod(PodInfo::new(Shared::from_typed(pod("plain", "100m", None))));
        assert_eq!(ni.num_pods_with_affinity(), 2);
        assert_eq!(ni.num_pods_with_required_anti_affinity(), 1);
        assert!(ni.remove_pod(&anti).is_some());
        assert_eq!(ni.num_pods_with_affinity(), 1);
        assert_eq!(ni.num_pods_with_required_anti_affinity(), 0);
    }

    #[test]
    fn aggregates_follow_requests_pods_and_node_spec() {
        let mut node = Node::default();
        node.metadata.name = "n1".into();
        node.spec.unschedulable = true;
        node.status
            .allocatable
            .insert("cpu".into(), Quantity::parse("4").unwrap());
        node.status
            .allocatable
            .insert("pods".into(), Quantity::parse("110").unwrap());
        let mut ni = NodeInfo::new(Arc::new(node));
        let a = pod("a", "500m", None);
        ni.add_pod(PodInfo::new(Shared::from_typed(a.clone())));
        ni.add_pod(PodInfo::new(Shared::from_typed(pod("b", "1", None))));
        let (a_, r, nz) = (ni.allocatable(), ni.requested(), ni.non_zero_requested());
        assert_eq!((a_.milli_cpu, a_.pods, ni.pod_count()), (4000, 110, 2));
        assert_eq!((r.milli_cpu, nz.milli_cpu), (1500, 1500));
        // No memory requests: 200 MiB each for scoring only.
        assert_eq!((r.memory, nz.memory), (0, 2 * 200 * 1024 * 1024));
        assert!(ni.is_unschedulable() && !ni.has_taints());
        assert_eq!(ni.name(), "n1");
        ni.remove_pod(&a);
        assert_eq!((ni.requested().milli_cpu, ni.pod_count()), (1000, 1));
    }

    #[test]
    fn node_generation_follows_the_node_not_the_pods() {
        let ni = NodeInfo::new(Arc::new(Node::default()));
        assert_eq!(ni.node_generation(), ni.generation());
        let mut added = ni.clone();
        let mut pod = Pod::default();
        pod.metadata.name = "p".into();
        added.add_pod(PodInfo::new(Shared::from_typed(pod)));
        assert_ne!(added.generation(), ni.generation());
        assert_eq!(added.node_generation(), ni.node_generation());
        let renewed = NodeInfo::new(Arc::new(Node::default()));
        assert_ne!(renewed.node_generation(), ni.node_generation());
    }

    #[test]
    fn label_index_finds_exactly_the_labels() {
        let mut node = Node::default();
        node.metadata.labels.insert("zone".into(), "z1".into());
        node.metadata
            .labels
            .insert("kubernetes.io/hostname".into(), "n1".into());
        node.metadata.labels.insert("empty".into(), String::new());
        let ni = NodeInfo::new(Arc::new(node));
        let l = ni.label_index();
        assert_eq!(l.get("zone"), Some("z1"));
        assert_eq!(l.get("kubernetes.io/hostname"), Some("n1"));
        assert_eq!(l.get("empty"), Some(""));
        assert_eq!(l.get("zon"), None);
        assert_eq!(l.get("zone1"), None);
        // A wrong hash never finds the key; the right one does.
        assert_eq!(l.get_hashed("zone", label_hash("zone") ^ 1), None);
        assert_eq!(l.get_hashed("zone", label_hash("zone")), Some("z1"));
        assert_ne!(label_hash("ab"), label_hash("ba"));
        assert_ne!(label_hash("a"), label_hash("a\0"));
    }

    #[test]
    fn specific_ip_conflicts_only_with_itself_and_wildcard() {
        let mut h = HostPortInfo::default();
        h.add("10.0.0.1", "TCP", 80);
        assert!(h.check_conflict("10.0.0.1", "TCP", 80));
        assert!(!h.check_conflict("10.0.0.2", "TCP", 80));
        assert!(h.check_conflict("0.0.0.0", "TCP", 80));
        assert!(!h.check_conflict("10.0.0.1", "TCP", 0));
    }
}
