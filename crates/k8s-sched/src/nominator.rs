//! The [`Nominator`]: pending pods nominated to a node by preemption (`status.nominatedNodeName`).
//! Filters treat equal-or-higher-priority nominated pods as already running on their node, so the
//! space freed by preemption goes to the preemptor (upstream
//! `pkg/scheduler/backend/queue/nominator.go`, `RunFilterPluginsWithNominatedPods`).

use k8s_types::object::Shared;
use std::collections::BTreeMap;

use k8s_sched_framework::node_info::same_pod;
use k8s_types::core::Pod;

/// Node name -> pods nominated to it, in nomination order.
#[derive(Clone, Debug, Default)]
pub struct Nominator {
    by_node: BTreeMap<String, Vec<Shared<Pod>>>,
}

impl Nominator {
    /// Rebuilds from the pending pods' `status.nominatedNodeName`.
    pub(crate) fn rebuild<'a>(&mut self, pending: impl Iterator<Item = &'a Shared<Pod>>) {
        self.by_node.clear();
        for p in pending {
            if let Some(n) = p
                .status
                .nominated_node_name
                .as_deref()
                .filter(|n| !n.is_empty())
            {
                self.by_node
                    .entry(n.to_string())
                    .or_default()
                    .push(Shared::clone(p));
            }
        }
    }

    /// Nominates `pod` to `node` (replacing an earlier nomination).
    pub(crate) fn add(&mut self, pod: &Shared<Pod>, node: &str) {
        self.remove(pod);
        self.by_node
            .entry(node.to_string())
            .or_default()
            .push(Shared::clone(pod));
    }

    /// Drops `pod`'s nomination.
    pub(crate) fn remove(&mut self, pod: &Pod) {
        for v in self.by_node.values_mut() {
            v.retain(|p| !same_pod(p, pod));
        }
        self.by_node.retain(|_, v| !v.is_empty());
    }

    /// Pods nominated to `node`.
    pub fn pods_for_node(&self, node: &str) -> &[Shared<Pod>] {
        self.by_node.get(node).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The node `pod` is nominated to, if any (O(nominated pods)).
    pub fn nominated_node(&self, pod: &Pod) -> Option<&str> {
        self.by_node
            .iter()
            .find(|(_, v)| v.iter().any(|p| same_pod(p, pod)))
            .map(|(n, _)| n.as_str())
    }

    /// True when no pod is nominated anywhere.
    pub fn is_empty(&self) -> bool {
        self.by_node.is_empty()
    }
}
