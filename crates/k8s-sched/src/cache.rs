//! The scheduler's [`Cache`]: every node (one [`NodeInfo`] each, in name order) with the pods
//! assigned to it, every pod the scheduler knows, and the PodGroups. It is updated incrementally,
//! one object at a time, from watch events (`informer`) or from the detached API
//! ([`crate::Scheduler::add_node`] and friends), and by the scheduling cycle itself: assumed pods
//! on Reserve, forgotten when a later step fails. Mirrors upstream
//! `pkg/scheduler/backend/cache/cache.go` (`AddNode`/`UpdateNode`/`RemoveNode`,
//! `AddPod`/`UpdatePod`/`RemovePod`, `AssumePod`/`ForgetPod`, pods on nodes the cache does not
//! know yet) and `snapshot.go`.
//!
//! Snapshot: upstream copies the NodeInfos whose generation changed into a per-cycle `Snapshot`
//! because informer callbacks run concurrently with the scheduling cycle. In k8s-mini events are
//! applied between cycles on the same thread, so the node list of the cache *is* the cycle's
//! snapshot: at the start of a cycle it holds exactly what upstream's `UpdateSnapshot` would copy,
//! only the NodeInfos touched by an event or an assume/forget have changed, and nothing is copied.
//! Each event costs O(log n) map work plus the work on the one NodeInfo it touches; nothing is
//! proportional to the number of pods in the cluster.
//!
//! A pod counts on its node while it is bound and not terminal (Succeeded/Failed), including while
//! it is being deleted, as upstream (the scheduler's pod informer excludes terminal pods).

use k8s_types::object::Shared;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use k8s_sched_framework::node_info::{node_image_sizes, same_pod};
use k8s_sched_framework::{NodeInfo, PodInfo};
use k8s_types::core::{Node, Pod};
use k8s_types::policy::PodDisruptionBudget;
use k8s_types::scheduling::PodGroup;

use crate::runtime::node_arrays::NodeArrays;

/// A hash map with a fixed (unseeded) hasher, for maps that are looked up but never iterated in
/// an order that could reach output: deterministic, and cheaper than `BTreeMap`'s string
/// comparisons (rustc's FxHash: the node names and `namespace/name` keys are not
/// attacker-chosen in a scheduler's cache).
type FixedHashMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// Where a pod's [`PodInfo`] lives.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Placement {
    node: String,
    /// Assumed by the scheduler (upstream `assumedPods`), not yet confirmed by a bound pod object.
    assumed: bool,
}

/// Nodes with their assigned pods, every known pod, and PodGroups.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    /// Every node, in name order once [`Cache::finish_batch`] ran (the snapshot plugins see).
    nodes: Vec<NodeInfo>,
    /// Node name -> position in `nodes`.
    index: FixedHashMap<String, usize>,
    /// Nodes were appended out of name order since the last `finish_batch`.
    unsorted: bool,
    /// Every known pod by `namespace/name`.
    pods: BTreeMap<String, Shared<Pod>>,
    /// The same pods as a slice, in key order (for [`Cache::pods`]), built on first use after a
    /// change.
    pod_list: OnceLock<Vec<Shared<Pod>>>,
    /// `namespace/podgroup` -> keys of the pods labelled with that coscheduling PodGroup.
    group_members: BTreeMap<String, BTreeSet<String>>,
    /// `namespace/podgroup` -> keys of the pods whose `spec.schedulingGroup` names that native
    /// (`scheduling.k8s.io/v1alpha2`) PodGroup.
    scheduling_group_members: BTreeMap<String, BTreeSet<String>>,
    /// Pods placed on a node (bound or assumed), by key.
    placed: FixedHashMap<String, Placement>,
    /// Pods placed on a node the cache does not have (upstream keeps such NodeInfos without a
    /// Node); they move onto the node when it appears.
    orphans: BTreeMap<String, Vec<PodInfo>>,
    /// Known pods without a node that are not terminal, by key.
    unassigned: BTreeMap<String, Shared<Pod>>,
    /// PodGroups by `namespace/name`.
    pod_groups: BTreeMap<String, Arc<PodGroup>>,
    /// PodDisruptionBudgets by `namespace/name` (upstream: the preemption evaluator's PDB
    /// lister).
    pdbs: BTreeMap<String, Arc<PodDisruptionBudget>>,
    /// Positions of the nodes with pods with pod (anti-)affinity (upstream
    /// `havePodsWithAffinityNodeInfoList`).
    with_affinity: BTreeSet<usize>,
    /// Positions of the nodes with pods with required anti-affinity (upstream
    /// `havePodsWithRequiredAntiAffinityNodeInfoList`).
    with_required_anti_affinity: BTreeSet<usize>,
    /// Normalized image name -> node name -> size in bytes (upstream `imageStates`).
    images: BTreeMap<String, BTreeMap<String, i64>>,
    /// The per-node numbers of the fused node pass, in `nodes` order (`runtime/node_arrays.rs`).
    arrays: NodeArrays,
    /// A reused buffer for the `namespace/name` key of [`Cache::upsert_pod`].
    key_buf: String,
}

/// A pod's `namespace/name`, the same string as [`Pod::key`], built without the formatting
/// machinery (a quarter of the instructions; keys are built several times per attempt).
pub(crate) fn pod_key(pod: &Pod) -> String {
    let mut key = String::new();
    write_pod_key(&mut key, pod);
    key
}

/// Appends a pod's `namespace/name` (see [`pod_key`]) to `buf`.
pub(crate) fn write_pod_key(buf: &mut String, pod: &Pod) {
    let (ns, name) = (pod.metadata.namespace(), pod.metadata.name.as_str());
    buf.reserve(ns.len() + 1 + name.len());
    buf.push_str(ns);
    buf.push('/');
    buf.push_str(name);
}

/// Orders a pod against a `namespace/name` key as the key strings would order, without building
/// the pod's key.
fn cmp_pod_key(pod: &Pod, key: &str) -> Ordering {
    let a = pod
        .metadata
        .namespace()
        .bytes()
        .chain(std::iter::once(b'/'))
        .chain(pod.metadata.name.bytes());
    a.cmp(key.bytes())
}

impl Cache {
    /// Every node, in name order.
    pub fn node_infos(&self) -> &[NodeInfo] {
        &self.nodes
    }

    /// One node by name.
    pub fn node_info(&self, name: &str) -> Option<&NodeInfo> {
        self.index.get(name).map(|i| &self.nodes[*i])
    }

    /// The per-node numbers of the fused node pass, indexed like [`Cache::node_infos`].
    pub fn node_arrays(&self) -> &NodeArrays {
        &self.arrays
    }

    /// The position of a node in [`Cache::node_infos`].
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Every known pod (pending, bound and terminal), in namespace/name order. Built on the
    /// first call after pods changed (O(pods)); the scheduling cycle itself does not call it.
    pub fn pods(&self) -> &[Shared<Pod>] {
        self.pod_list
            .get_or_init(|| self.pods.values().cloned().collect())
    }

    /// The known pods labelled with coscheduling PodGroup `pod_group` in `namespace`, in name
    /// order.
    pub fn pod_group_pods(&self, namespace: &str, pod_group: &str) -> Vec<Shared<Pod>> {
        self.group_members
            .get(&format!("{namespace}/{pod_group}"))
            .map(|keys| {
                keys.iter()
                    .filter_map(|k| self.pods.get(k).cloned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The known pods whose `spec.schedulingGroup.podGroupName` is `name` in `namespace`, in
    /// name order.
    pub fn scheduling_group_pods(&self, namespace: &str, name: &str) -> Vec<Shared<Pod>> {
        self.scheduling_group_members
            .get(&format!("{namespace}/{name}"))
            .map(|keys| {
                keys.iter()
                    .filter_map(|k| self.pods.get(k).cloned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Number of known pods.
    pub fn num_pods(&self) -> usize {
        self.pods.len()
    }

    /// One known pod by `namespace/name`.
    pub fn pod(&self, key: &str) -> Option<&Shared<Pod>> {
        self.pods.get(key)
    }

    /// Known pods without a node that are not terminal, in namespace/name order.
    pub fn unassigned_pods(&self) -> impl Iterator<Item = &Shared<Pod>> {
        self.unassigned.values()
    }

    /// The node a pod (by `namespace/name`) is placed on, bound or assumed.
    pub fn placement(&self, key: &str) -> Option<&str> {
        self.placed.get(key).map(|p| p.node.as_str())
    }

    /// True when the pod (by `namespace/name`) is assumed: placed by the scheduler, its binding
    /// not yet seen.
    pub fn is_assumed(&self, key: &str) -> bool {
        self.placed.get(key).is_some_and(|p| p.assumed)
    }

    /// One PodGroup by `namespace/name`.
    pub fn pod_group(&self, key: &str) -> Option<&Arc<PodGroup>> {
        self.pod_groups.get(key)
    }

    /// The nodes with at least one pod with pod affinity or anti-affinity, in name order
    /// (upstream `HavePodsWithAffinityList`).
    pub fn nodes_with_pod_affinity(&self) -> Vec<&NodeInfo> {
        self.with_affinity.iter().map(|&i| &self.nodes[i]).collect()
    }

    /// The nodes with at least one pod with required anti-affinity, in name order (upstream
    /// `HavePodsWithRequiredAntiAffinityList`).
    pub fn nodes_with_required_anti_affinity(&self) -> Vec<&NodeInfo> {
        self.with_required_anti_affinity
            .iter()
            .map(|&i| &self.nodes[i])
            .collect()
    }

    /// An image's size in bytes on the first node (in name order) that has it, and the number of
    /// nodes that have it (upstream `ImageStateSummary`).
    pub fn image_summary(&self, image: &str) -> Option<(i64, usize)> {
        let nodes = self.images.get(image)?;
        nodes.values().next().map(|size| (*size, nodes.len()))
    }

    /// Refreshes the affinity lists for the node at position `i`.
    fn refresh_flags(&mut self, i: usize) {
        let Some(n) = self.nodes.get(i) else {
            return;
        };
        self.arrays.set(i, n);
        let (aff, anti) = (
            n.num_pods_with_affinity() > 0,
            n.num_pods_with_required_anti_affinity() > 0,
        );
        if aff {
            self.with_affinity.insert(i);
        } else {
            self.with_affinity.remove(&i);
        }
        if anti {
            self.with_required_anti_affinity.insert(i);
        } else {
            self.with_required_anti_affinity.remove(&i);
        }
    }

    /// Recomputes the affinity lists after node positions changed.
    fn rebuild_flags(&mut self) {
        self.with_affinity.clear();
        self.with_required_anti_affinity.clear();
        self.arrays = NodeArrays::default();
        for i in 0..self.nodes.len() {
            self.refresh_flags(i);
        }
    }

    fn index_images(&mut self, name: &str, node: &Node, add: bool) {
        if node.status.images.is_empty() {
            return;
        }
        for (image, size) in node_image_sizes(node) {
            if add {
                self.images
                    .entry(image)
                    .or_default()
                    .insert(name.to_string(), size);
            } else if let Some(m) = self.images.get_mut(&image) {
                m.remove(name);
                if m.is_empty() {
                    self.images.remove(&image);
                }
            }
        }
    }

    /// Forgets everything (before a relist).
    pub(crate) fn clear(&mut self) {
        *self = Cache::default();
    }

    /// Replaces the whole cache: `nodes` and the bound non-terminal `pods` on them (upstream
    /// relist after the watch was compacted). Assumed pods are dropped.
    pub(crate) fn rebuild(
        &mut self,
        nodes: Vec<Node>,
        pods: Vec<Shared<Pod>>,
        groups: Vec<PodGroup>,
    ) {
        self.clear();
        for n in nodes {
            self.upsert_node(Arc::new(n));
        }
        for g in groups {
            self.upsert_pod_group(Arc::new(g));
        }
        for p in pods {
            self.upsert_pod(p);
        }
        self.finish_batch();
    }

    /// Sorts nodes appended out of name order (call after a batch of node events, before a
    /// scheduling cycle).
    pub(crate) fn finish_batch(&mut self) {
        if !self.unsorted {
            return;
        }
        self.nodes.sort_by(|a, b| a.name().cmp(b.name()));
        self.reindex();
        self.rebuild_flags();
        self.unsorted = false;
    }

    fn reindex(&mut self) {
        self.index = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name().to_string(), i))
            .collect();
    }

    /// Adds or replaces a node (upstream `AddNode`/`UpdateNode`), keeping its pods. Returns the
    /// previous Node object.
    pub(crate) fn upsert_node(&mut self, node: Arc<Node>) -> Option<Arc<Node>> {
        let name = node.metadata.name.clone();
        if let Some(&i) = self.index.get(&name) {
            let old_node = Arc::clone(self.nodes[i].node_arc());
            if old_node.status.images != node.status.images {
                self.index_images(&name, &old_node, false);
                self.index_images(&name, &node, true);
            }
            let old = std::mem::replace(&mut self.nodes[i], NodeInfo::new(node));
            for pi in old.pods() {
                self.nodes[i].add_pod(pi.clone());
            }
            self.refresh_flags(i);
            return Some(old_node);
        }
        self.index_images(&name, &node, true);
        let mut ni = NodeInfo::new(node);
        for pi in self.orphans.remove(&name).unwrap_or_default() {
            ni.add_pod(pi);
        }
        if self
            .nodes
            .last()
            .is_some_and(|last| last.name() > name.as_str())
        {
            self.unsorted = true;
        }
        self.index.insert(name, self.nodes.len());
        self.nodes.push(ni);
        self.refresh_flags(self.nodes.len() - 1);
        None
    }

    /// Removes a node (upstream `RemoveNode`); its pods stay known and return with the node.
    /// Returns the removed Node object.
    pub(crate) fn remove_node(&mut self, name: &str) -> Option<Arc<Node>> {
        let i = self.index.remove(name)?;
        let ni = self.nodes.remove(i);
        self.index_images(name, ni.node(), false);
        if !ni.pods().is_empty() {
            self.orphans
                .entry(name.to_string())
                .or_default()
                .extend(ni.pods().iter().cloned());
        }
        if i < self.nodes.len() {
            for v in self.index.values_mut() {
                if *v > i {
                    *v -= 1;
                }
            }
        }
        self.rebuild_flags();
        Some(Arc::clone(ni.node_arc()))
    }

    /// Adds or replaces a PodDisruptionBudget.
    pub(crate) fn upsert_pdb(&mut self, pdb: Arc<PodDisruptionBudget>) {
        let key = format!("{}/{}", pdb.metadata.namespace(), pdb.metadata.name);
        self.pdbs.insert(key, pdb);
    }

    /// Removes a PodDisruptionBudget by `namespace/name`.
    pub(crate) fn remove_pdb(&mut self, key: &str) {
        self.pdbs.remove(key);
    }

    /// Every PodDisruptionBudget, in `namespace/name` order.
    pub fn pdbs(&self) -> Vec<Arc<PodDisruptionBudget>> {
        self.pdbs.values().cloned().collect()
    }

    /// Adds or replaces a PodGroup; returns the previous one.
    pub(crate) fn upsert_pod_group(&mut self, pg: Arc<PodGroup>) -> Option<Arc<PodGroup>> {
        let key = format!("{}/{}", pg.metadata.namespace(), pg.metadata.name);
        self.pod_groups.insert(key, pg)
    }

    /// Removes a PodGroup by `namespace/name`.
    pub(crate) fn remove_pod_group(&mut self, key: &str) -> Option<Arc<PodGroup>> {
        self.pod_groups.remove(key)
    }

    fn place(&mut self, key: String, pi: PodInfo, node: &str, assumed: bool) {
        match self.index.get(node) {
            Some(&i) => {
                self.nodes[i].add_pod(pi);
                self.refresh_flags(i);
            }
            None => self.orphans.entry(node.to_string()).or_default().push(pi),
        }
        self.placed.insert(
            key,
            Placement {
                node: node.to_string(),
                assumed,
            },
        );
    }

    fn unplace(&mut self, key: &str, pod: &Pod) -> Option<Placement> {
        let pl = self.placed.remove(key)?;
        match self.index.get(&pl.node) {
            Some(&i) => {
                self.nodes[i].remove_pod(pod);
                self.refresh_flags(i);
            }
            None => {
                if let Some(v) = self.orphans.get_mut(&pl.node) {
                    v.retain(|p| !same_pod(&p.pod, pod));
                    if v.is_empty() {
                        self.orphans.remove(&pl.node);
                    }
                }
            }
        }
        Some(pl)
    }

    /// The pod object stored on the pod's node, if placed (the assumed object for assumed pods).
    fn placed_pod(&self, key: &str) -> Option<Shared<Pod>> {
        let pl = self.placed.get(key)?;
        let list = match self.index.get(&pl.node) {
            Some(&i) => self.nodes[i].pods(),
            None => self.orphans.get(&pl.node).map(Vec::as_slice).unwrap_or(&[]),
        };
        // Recently placed pods are at the end.
        list.iter()
            .rev()
            .find(|p| cmp_pod_key(&p.pod, key) == Ordering::Equal)
            .map(|p| Shared::clone(&p.pod))
    }

    /// Keeps the derived pod views (lazy list, PodGroup membership) in step with a change of
    /// the pod at `key` from `old` to `new`.
    fn pod_changed(&mut self, key: &str, old: Option<&Pod>, new: Option<&Pod>) {
        self.pod_list = OnceLock::new();
        let group = |p: &Pod| {
            p.pod_group()
                .map(|g| format!("{}/{}", p.metadata.namespace(), g))
        };
        reindex(
            &mut self.group_members,
            key,
            old.and_then(group),
            new.and_then(group),
        );
        let scheduling_group = |p: &Pod| {
            p.scheduling_group_name()
                .map(|g| format!("{}/{}", p.metadata.namespace(), g))
        };
        reindex(
            &mut self.scheduling_group_members,
            key,
            old.and_then(scheduling_group),
            new.and_then(scheduling_group),
        );
    }

    /// Adds or replaces a pod as the informer delivers it (upstream `AddPod`/`UpdatePod`): a
    /// bound non-terminal pod is (re)placed on its node, confirming it when it was assumed; an
    /// assumed pod whose update is still unbound stays assumed; a pod that became terminal leaves
    /// its node. Returns the previous object.
    pub(crate) fn upsert_pod(&mut self, pod: Shared<Pod>) -> Option<Shared<Pod>> {
        // The key is built in a reused buffer; owned copies are made only for new map entries.
        let mut key = std::mem::take(&mut self.key_buf);
        key.clear();
        write_pod_key(&mut key, &pod);
        let old = self.upsert_pod_keyed(&key, pod);
        self.key_buf = key;
        old
    }

    fn upsert_pod_keyed(&mut self, key: &str, pod: Shared<Pod>) -> Option<Shared<Pod>> {
        let old = match self.pods.get_mut(key) {
            Some(slot) => Some(std::mem::replace(slot, Shared::clone(&pod))),
            None => self.pods.insert(key.to_string(), Shared::clone(&pod)),
        };
        self.pod_changed(key, old.as_deref(), Some(&pod));
        if pod.node_name().is_none() && !pod.is_terminal() {
            match self.unassigned.get_mut(key) {
                Some(slot) => *slot = Shared::clone(&pod),
                None => {
                    self.unassigned.insert(key.to_string(), Shared::clone(&pod));
                }
            }
        } else {
            self.unassigned.remove(key);
        }
        let want = if pod.is_terminal() {
            None
        } else {
            pod.node_name()
        };
        let current = self.placed.get(key).map(|pl| pl.assumed);
        match (current, want) {
            (None, None) => {}
            (None, Some(node)) => {
                let node = node.to_string();
                self.place(key.to_string(), PodInfo::new(pod), &node, false);
            }
            (Some(assumed), None) => {
                // An assumed pod stays assumed until bound (or forgotten); anything else leaves.
                if !assumed || pod.is_terminal() {
                    if let Some(prev) = self.placed_pod(key) {
                        self.unplace(key, &prev);
                    }
                }
            }
            (Some(_), Some(node)) => {
                if self.confirm_in_place(key, old.as_ref(), &pod, node) {
                    return old;
                }
                let node = node.to_string();
                if let Some(prev) = self.placed_pod(key) {
                    self.unplace(key, &prev);
                } else {
                    self.placed.remove(key);
                }
                self.place(key.to_string(), PodInfo::new(pod), &node, false);
            }
        }
        old
    }

    /// The update of a placed pod that stays on the same known node and whose new object derives
    /// the same [`PodInfo`] (same containers, init containers, overhead, affinity and
    /// annotations, the only inputs of `PodInfo::new` and of the affinity counts): the common
    /// case of an assumed pod confirmed by its bound object. Does what the general path does
    /// (remove the pod from its node, add it again at the end, upstream `updatePod`), with the
    /// same node state, pod order and generations, but reuses the derived requests, ports and
    /// GPUs instead of computing them again and keeps the placement entry. False (nothing done)
    /// when the fast path does not apply.
    fn confirm_in_place(
        &mut self,
        key: &str,
        old: Option<&Shared<Pod>>,
        pod: &Shared<Pod>,
        node: &str,
    ) -> bool {
        let Some(pl) = self.placed.get_mut(key) else {
            return false;
        };
        if pl.node != node {
            return false;
        }
        let Some(&i) = self.index.get(node) else {
            return false;
        };
        let ni = &mut self.nodes[i];
        // The node's entry is usually the version the cache held (`old`): found by pointer
        // without reading the pods; else (an assumed copy) by key. Recently placed pods are at
        // the end (as `placed_pod`); a key is on a node's list at most once.
        let pods = ni.pods();
        let at = old
            .and_then(|old| pods.iter().rposition(|p| Shared::ptr_eq(&p.pod, old)))
            .or_else(|| {
                pods.iter()
                    .rposition(|p| cmp_pod_key(&p.pod, key) == Ordering::Equal)
            });
        let Some(at) = at else {
            return false;
        };
        let prev = &pods[at];
        let (a, b) = (&prev.pod, pod);
        let same_inputs = Shared::ptr_eq(a, b)
            || (a.spec.containers == b.spec.containers
                && a.spec.init_containers == b.spec.init_containers
                && a.spec.overhead == b.spec.overhead
                && a.spec.affinity == b.spec.affinity
                && a.metadata.annotations == b.metadata.annotations);
        if !same_inputs {
            return false;
        }
        if ni.replace_pod_at(at, Shared::clone(pod)).is_none() {
            return false;
        }
        pl.assumed = false;
        self.refresh_flags(i);
        true
    }

    /// Removes a pod by `namespace/name` (upstream `RemovePod`, also for assumed pods). Returns
    /// the removed object.
    pub(crate) fn remove_pod(&mut self, key: &str) -> Option<Shared<Pod>> {
        let old = self.pods.remove(key);
        self.pod_changed(key, old.as_deref(), None);
        self.unassigned.remove(key);
        if let Some(prev) = self.placed_pod(key) {
            self.unplace(key, &prev);
        } else {
            self.placed.remove(key);
        }
        old
    }

    /// Places a pod the scheduler decided to put on `node` (upstream `AssumePod`); false when the
    /// node is unknown.
    pub(crate) fn assume(&mut self, pi: PodInfo, node: &str) -> bool {
        if !self.index.contains_key(node) {
            return false;
        }
        let key = pod_key(&pi.pod);
        if let Some(prev) = self.placed_pod(&key) {
            self.unplace(&key, &prev);
        }
        self.place(key, pi, node, true);
        true
    }

    /// Removes an assumed pod again (upstream `ForgetPod`); false when it is not placed on `node`.
    pub(crate) fn forget(&mut self, pod: &Pod, node: &str) -> bool {
        let key = pod_key(pod);
        match self.placed.get(&key) {
            Some(pl) if pl.node == node => {
                let prev = self.placed_pod(&key);
                self.unplace(&key, prev.as_deref().unwrap_or(pod));
                true
            }
            _ => false,
        }
    }
}

/// Moves `key` from group `before` to group `after` in a membership index (a group left empty is
/// dropped).
fn reindex(
    index: &mut BTreeMap<String, BTreeSet<String>>,
    key: &str,
    before: Option<String>,
    after: Option<String>,
) {
    if before == after {
        return;
    }
    if let Some(g) = before {
        if let Some(m) = index.get_mut(&g) {
            m.remove(key);
            if m.is_empty() {
                index.remove(&g);
            }
        }
    }
    if let Some(g) = after {
        index.entry(g).or_default().insert(key.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf_workloads::make_node;
    use crate::runtime::node_arrays::GENERATION_BLOCK;

    fn pod(name: &str, node: Option<&str>) -> Shared<Pod> {
        let mut p = crate::perf_workloads::make_pod(
            crate::perf_workloads::PodTemplate::Default,
            "default",
            "",
            0,
        );
        p.metadata.name = name.into();
        p.metadata.uid = Some(format!("uid-{name}"));
        p.spec.node_name = node.map(str::to_string);
        Shared::from_typed(p)
    }

    fn pods_on(c: &Cache, node: &str) -> Vec<String> {
        c.node_info(node)
            .map(|n| {
                n.pods()
                    .iter()
                    .map(|p| p.pod.metadata.name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The generation arrays the topology counters read: equal to the nodes' generations after
    /// every change, the block maximum never below a node's generation, and a new layout when
    /// nodes move (a removal, an out-of-order addition) but not when a node is appended in
    /// order or changes in place.
    #[test]
    fn node_generation_arrays_follow_the_nodes_and_their_positions() {
        fn check(c: &Cache) -> u64 {
            let g = c.node_arrays().generations();
            let want: Vec<u64> = c.node_infos().iter().map(NodeInfo::generation).collect();
            assert_eq!(g.per_node, want.as_slice());
            for (i, &gen) in g.per_node.iter().enumerate() {
                assert!(g.block_max[i / GENERATION_BLOCK] >= gen);
            }
            g.layout
        }
        let mut c = Cache::default();
        for i in 0..70 {
            c.upsert_node(Arc::new(make_node(&format!("n{i:03}"), None)));
        }
        c.finish_batch();
        assert_eq!(c.node_arrays().generations().block_max.len(), 2);
        let first = check(&c);
        c.upsert_pod(pod("p1", Some("n065")));
        c.upsert_node(Arc::new(make_node("n070", None)));
        assert_eq!(check(&c), first, "changes in place and in-order additions");
        c.remove_node("n010");
        let second = check(&c);
        assert_ne!(second, first);
        c.upsert_node(Arc::new(make_node("a-first", None)));
        c.finish_batch();
        assert_ne!(check(&c), second);
    }

    #[test]
    fn nodes_stay_in_name_order_and_keep_pods_across_removal() {
        let mut c = Cache::default();
        c.upsert_node(Arc::new(make_node("b", None)));
        c.upsert_node(Arc::new(make_node("a", None)));
        c.finish_batch();
        let names: Vec<&str> = c.node_infos().iter().map(|n| n.name()).collect();
        assert_eq!(names, vec!["a", "b"]);
        c.upsert_pod(pod("p1", Some("b")));
        // A pod bound to a node the cache does not know waits for the node.
        c.upsert_pod(pod("p2", Some("c")));
        assert_eq!(pods_on(&c, "b"), vec!["p1"]);
        c.upsert_node(Arc::new(make_node("c", None)));
        assert_eq!(pods_on(&c, "c"), vec!["p2"]);
        c.remove_node("b");
        assert_eq!(c.node_index("c"), Some(1));
        c.upsert_node(Arc::new(make_node("b", None)));
        c.finish_batch();
        assert_eq!(pods_on(&c, "b"), vec!["p1"]);
        // 100m and 500Mi per pod.
        assert_eq!(c.node_info("b").map(|n| n.requested().milli_cpu), Some(100));
        assert_eq!(c.node_index("c"), Some(2));
    }

    #[test]
    fn assumed_pods_are_confirmed_by_the_bound_object_and_removed_by_delete() {
        let mut c = Cache::default();
        c.upsert_node(Arc::new(make_node("a", None)));
        c.upsert_node(Arc::new(make_node("b", None)));
        let pending = pod("p", None);
        c.upsert_pod(Shared::clone(&pending));
        assert_eq!(c.unassigned_pods().count(), 1);
        assert!(c.assume(PodInfo::new(Shared::clone(&pending)), "a"));
        assert!(c.is_assumed("default/p"));
        // A status update of the still-unbound pod keeps the assumption.
        c.upsert_pod(Shared::clone(&pending));
        assert_eq!(pods_on(&c, "a"), vec!["p"]);
        // The binding arrives for another node: upstream moves the pod there.
        c.upsert_pod(pod("p", Some("b")));
        assert!(!c.is_assumed("default/p"));
        assert_eq!(pods_on(&c, "a"), Vec::<String>::new());
        assert_eq!(pods_on(&c, "b"), vec!["p"]);
        assert_eq!(c.unassigned_pods().count(), 0);
        assert_eq!(
            c.node_info("b").map(|n| n.requested().memory),
            Some(500 * 1024 * 1024)
        );
        c.remove_pod("default/p");
        assert_eq!(pods_on(&c, "b"), Vec::<String>::new());
        assert_eq!(c.node_info("b").map(|n| n.requested().milli_cpu), Some(0));
        assert!(c.pods().is_empty());
    }

    #[test]
    fn forget_and_terminal_pods_free_the_node() {
        let mut c = Cache::default();
        c.upsert_node(Arc::new(make_node("a", None)));
        let p = pod("p", None);
        assert!(c.assume(PodInfo::new(Shared::clone(&p)), "a"));
        assert!(!c.forget(&p, "b"));
        assert!(c.forget(&p, "a"));
        assert_eq!(c.node_info("a").map(|n| n.pod_count()), Some(0));
        let mut done = (*pod("q", Some("a"))).clone();
        c.upsert_pod(Shared::from_typed(done.clone()));
        assert_eq!(c.node_info("a").map(|n| n.pod_count()), Some(1));
        done.status.phase = Some("Succeeded".into());
        c.upsert_pod(Shared::from_typed(done));
        assert_eq!(c.node_info("a").map(|n| n.pod_count()), Some(0));
        // Terminal pods stay listed (Handle::pods lists every pod).
        assert_eq!(c.pods().len(), 1);
    }

    #[test]
    fn confirming_an_assumed_pod_moves_it_last_as_upstream_update_pod() {
        // Upstream `updatePod` removes the pod from its NodeInfo and adds it again, so a
        // confirmed pod goes after the pods placed since; the in-place confirmation keeps that.
        let mut c = Cache::default();
        c.upsert_node(Arc::new(make_node("a", None)));
        let (p1, p2) = (pod("p1", None), pod("p2", None));
        assert!(c.assume(PodInfo::new(Shared::clone(&p1)), "a"));
        assert!(c.assume(PodInfo::new(Shared::clone(&p2)), "a"));
        let gen = c.node_info("a").map(NodeInfo::generation);
        let mut bound = (*p1).clone();
        bound.spec.node_name = Some("a".into());
        let bound = Shared::from_typed(bound);
        c.upsert_pod(Shared::clone(&bound));
        assert_eq!(pods_on(&c, "a"), vec!["p2", "p1"]);
        assert!(!c.is_assumed("default/p1"));
        assert!(c.is_assumed("default/p2"));
        // The node holds the bound object now, and its generation changed.
        let held = c
            .node_info("a")
            .and_then(|n| n.pods().last().map(|pi| Shared::clone(&pi.pod)));
        assert!(held.is_some_and(|p| Shared::ptr_eq(&p, &bound)));
        assert_ne!(c.node_info("a").map(NodeInfo::generation), gen);
        // 2 x (100m, 500Mi).
        assert_eq!(c.node_info("a").map(|n| n.requested().milli_cpu), Some(200));
        // A bound object with other requests than the assumed one is counted by its own.
        let mut bigger = (*p2).clone();
        bigger.spec.node_name = Some("a".into());
        bigger.spec.containers[0].resources.requests.insert(
            "cpu".into(),
            k8s_types::Quantity::parse("1").unwrap_or_default(),
        );
        c.upsert_pod(Shared::from_typed(bigger));
        assert_eq!(pods_on(&c, "a"), vec!["p1", "p2"]);
        assert_eq!(
            c.node_info("a").map(|n| n.requested().milli_cpu),
            Some(1100)
        );
        assert_eq!(c.node_arrays().free_cpu[0], 4000 - 1100);
    }

    #[test]
    fn pod_key_equals_pod_key_method() {
        let mut p = (*pod("p", None)).clone();
        assert_eq!(pod_key(&p), "default/p");
        assert_eq!(pod_key(&p), p.key());
        p.metadata.namespace = None;
        assert_eq!(pod_key(&p), p.key());
        assert_eq!(pod_key(&p), "/p");
    }

    #[test]
    fn pod_list_follows_key_order() {
        let mut c = Cache::default();
        for name in ["b", "a", "c"] {
            c.upsert_pod(pod(name, None));
        }
        let mut other = (*pod("a", None)).clone();
        other.metadata.namespace = Some("a-b".into());
        c.upsert_pod(Shared::from_typed(other));
        let keys: Vec<String> = c.pods().iter().map(|p| p.key()).collect();
        // "a-b/a" < "default/..." as key strings.
        assert_eq!(keys, vec!["a-b/a", "default/a", "default/b", "default/c"]);
        c.remove_pod("default/b");
        assert_eq!(c.pods().len(), 3);
    }
}
