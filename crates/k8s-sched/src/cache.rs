//! The scheduler's [`Cache`]: the snapshot of nodes (one [`NodeInfo`] each, in name order) with
//! the pods assigned to them, rebuilt from the apiserver at the start of every tick, plus the
//! assumed pods of this tick and the pods waiting at Permit. Mirrors upstream
//! `pkg/scheduler/backend/cache/cache.go` and `snapshot.go` (assume/forget), without the
//! incremental informer updates: k8s-mini lists everything once per tick.
//!
//! A pod counts on its node while it is bound and not terminal (Succeeded/Failed), including while
//! it is being deleted, as upstream (the scheduler's pod informer excludes terminal pods).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_types::core::{Node, Pod};
use k8s_types::framework::{NodeInfo, PodInfo};

/// Nodes with their assigned pods, and every pod listed this tick.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    nodes: Vec<NodeInfo>,
    index: BTreeMap<String, usize>,
    pods: Vec<Arc<Pod>>,
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

    /// The position of a node in [`Cache::node_infos`].
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Every pod listed at the start of the tick, in namespace/name order.
    pub fn pods(&self) -> &[Arc<Pod>] {
        &self.pods
    }

    /// Replaces the snapshot: `nodes` sorted by name, bound non-terminal pods added to their
    /// nodes (pods bound to unknown nodes are ignored).
    pub(crate) fn rebuild(&mut self, mut nodes: Vec<Node>, pods: Vec<Arc<Pod>>) {
        nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        self.nodes = nodes
            .into_iter()
            .map(|n| NodeInfo::new(Arc::new(n)))
            .collect();
        self.index = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name().to_string(), i))
            .collect();
        for p in &pods {
            if p.is_terminal() {
                continue;
            }
            if let Some(node) = p.node_name() {
                if let Some(i) = self.index.get(node) {
                    self.nodes[*i].add_pod(PodInfo::new(Arc::clone(p)));
                }
            }
        }
        self.pods = pods;
    }

    /// Adds a pod the scheduler decided to place on `node` (upstream `AssumePod`); false when the
    /// node is unknown.
    pub(crate) fn assume(&mut self, pi: PodInfo, node: &str) -> bool {
        match self.index.get(node) {
            Some(i) => {
                self.nodes[*i].add_pod(pi);
                true
            }
            None => false,
        }
    }

    /// Removes an assumed pod again (upstream `ForgetPod`); false when it was not there.
    pub(crate) fn forget(&mut self, pod: &Pod, node: &str) -> bool {
        match self.index.get(node) {
            Some(i) => self.nodes[*i].remove_pod(pod).is_some(),
            None => false,
        }
    }
}
