//! Per-node kernels: an optional, data-only description of what a Filter or Score plugin computes
//! per node in the common case, so that the scheduler can run the Filter plugins and the resource
//! Score plugins of a profile in one fused pass over contiguous per-node arrays instead of one
//! pass per plugin. This has no upstream counterpart (upstream runs every plugin on every node,
//! `pkg/scheduler/framework/runtime/framework.go` `RunFilterPlugins`, `RunScorePlugins`); results
//! are the same by construction:
//!
//! - A [`NodeFilterKernel`] is a *sufficient condition for success*: on every node that satisfies
//!   it, the plugin's `filter` returns success. Nodes that do not satisfy it go through the
//!   plugins' `filter` (the exact status, in plugin order).
//! - A [`NodeScoreKernel`] gives the plugin's score *after NormalizeScore* from the node's
//!   numbers alone, with upstream's arithmetic.
//! - A [`NodeGate`] is an *exact* verdict by topology domain: on the snapshot PreFilter read, the
//!   plugin's `filter` succeeds on a node exactly when the node's domain passes every
//!   [`GateCondition`] (PodTopologySpread and InterPodAffinity judge a node by its domains'
//!   counts only). A node the gate rejects is rejected whatever the other plugins say, so the
//!   scheduler may leave its status (which plugin rejected it first, and why) uncomputed unless
//!   the pod fits nowhere and the FailedScheduling message needs it.
//!
//! Kernels are private to k8s-sched: they are not part of the plugin-facing framework
//! (`k8s-sched-framework`). An in-tree plugin offers them by implementing [`NodeKernels`] and being
//! listed in [`node_kernels`]; every other plugin (out-of-tree ones included) runs through the
//! generic per-plugin path.

use std::sync::Arc;

use k8s_sched_framework::{CycleState, NodeInfo, Plugin};
use k8s_types::core::Pod;

/// What an in-tree plugin offers the fused node pass (every method defaults to none: the plugin
/// runs through its `filter_nodes` / `score_nodes` + `normalize_score`).
pub(crate) trait NodeKernels: Send + Sync {
    /// A sufficient condition for the plugin's `filter` to succeed on a node this attempt (read
    /// after PreFilter). Nodes that do not satisfy it still go through `filter`.
    fn filter_kernel(&self, _state: &CycleState, _pod: &Pod) -> Option<NodeFilterKernel> {
        None
    }

    /// The exact verdict of the plugin's `filter` on the nodes of this attempt's snapshot by
    /// topology domain (read after PreFilter): `filter` on the node at position `i` of
    /// [`NodeGate::snapshot`] succeeds exactly when [`NodeGate::passes`]`(i)`, and never
    /// returns an error there.
    fn filter_gate(&self, _state: &CycleState, _pod: &Pod) -> Option<NodeGate> {
        None
    }

    /// This attempt's scores after NormalizeScore as a per-node kernel (read after PreScore): it
    /// gives exactly what `score_nodes` followed by `normalize_score` give.
    fn score_kernel(&self, _state: &CycleState, _pod: &Pod) -> Option<NodeScoreKernel> {
        None
    }
}

/// The kernels `plugin` offers, when it is one of the in-tree plugins that implement
/// [`NodeKernels`] (a type check on the plugin instance, the counterpart of Go's type
/// assertion; a wrapper or an out-of-tree plugin gets none). The framework looks them up once,
/// when it builds the profile.
pub(crate) fn node_kernels(plugin: &Arc<dyn Plugin>) -> Option<Arc<dyn NodeKernels>> {
    use crate::plugins::inter_pod_affinity::InterPodAffinity;
    use crate::plugins::node_resources::{
        balanced_allocation::NodeResourcesBalancedAllocation, fit::NodeResourcesFit,
    };
    use crate::plugins::pod_topology_spread::PodTopologySpread;
    use crate::plugins::{
        image_locality::ImageLocality, node_name::NodeName, node_ports::NodePorts,
        node_unschedulable::NodeUnschedulable, taint_toleration::TaintToleration,
    };
    let mut any = Arc::clone(plugin).as_any_arc();
    macro_rules! first_of {
        ($($t:ty),* $(,)?) => {
            $(any = match any.downcast::<$t>() {
                Ok(p) => return Some(p),
                Err(other) => other,
            };)*
        };
    }
    first_of!(
        NodeResourcesFit,
        NodeResourcesBalancedAllocation,
        TaintToleration,
        NodeUnschedulable,
        NodeName,
        NodePorts,
        ImageLocality,
        InterPodAffinity,
        PodTopologySpread,
    );
    drop(any);
    None
}

/// Node flag: `spec.unschedulable` (cordoned).
pub const NODE_FLAG_UNSCHEDULABLE: u32 = 1;
/// Node flag: `spec.taints` is not empty.
pub const NODE_FLAG_TAINTED: u32 = 1 << 1;
/// Node flag: at least one host port is in use by an assigned pod.
pub const NODE_FLAG_HOST_PORTS: u32 = 1 << 2;

/// The [`NODE_FLAG_UNSCHEDULABLE`]-style flags of a node.
pub fn node_flags(node: &NodeInfo) -> u32 {
    let mut f = 0;
    if node.is_unschedulable() {
        f |= NODE_FLAG_UNSCHEDULABLE;
    }
    if node.has_taints() {
        f |= NODE_FLAG_TAINTED;
    }
    if !node.used_ports().is_empty() {
        f |= NODE_FLAG_HOST_PORTS;
    }
    f
}

/// A sufficient condition for a Filter plugin to pass a node: no flag of `slow_flags` set, at
/// least `min_free_pods` more pods allowed (`allocatable.pods - pods`), at least
/// `min_free_milli_cpu` milli-CPU and `min_free_memory` bytes left (allocatable minus the
/// assigned pods' requests). `i64::MIN` means no requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeFilterKernel {
    /// Nodes with any of these flags need the plugin's `filter`.
    pub slow_flags: u32,
    /// Pods the node must still accept (`allocatable.pods - pod count`).
    pub min_free_pods: i64,
    /// Milli-CPU that must be free.
    pub min_free_milli_cpu: i64,
    /// Bytes of memory that must be free.
    pub min_free_memory: i64,
}

impl NodeFilterKernel {
    /// Passes every node.
    pub const PASS: NodeFilterKernel = NodeFilterKernel {
        slow_flags: 0,
        min_free_pods: i64::MIN,
        min_free_milli_cpu: i64::MIN,
        min_free_memory: i64::MIN,
    };

    /// Passes every node without any of `flags`.
    pub const fn unless_flags(flags: u32) -> NodeFilterKernel {
        NodeFilterKernel {
            slow_flags: flags,
            ..NodeFilterKernel::PASS
        }
    }

    /// Both conditions at once (a node satisfying the result satisfies both).
    pub fn and(self, other: NodeFilterKernel) -> NodeFilterKernel {
        NodeFilterKernel {
            slow_flags: self.slow_flags | other.slow_flags,
            min_free_pods: self.min_free_pods.max(other.min_free_pods),
            min_free_milli_cpu: self.min_free_milli_cpu.max(other.min_free_milli_cpu),
            min_free_memory: self.min_free_memory.max(other.min_free_memory),
        }
    }
}

/// The domain id of a node without the topology key, in [`GateCondition::domains`].
pub const GATE_NO_DOMAIN: u32 = u32::MAX;

/// One condition of a [`NodeGate`]: the number of pods the plugin counts in the node's domain
/// of one topology key must lie in `min..=max`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateCondition {
    /// Per node position in the snapshot PreFilter read ([`super::Handle::node_infos`] order):
    /// the node's domain id for the key, [`GATE_NO_DOMAIN`] when the node lacks the key.
    pub domains: Arc<Vec<u32>>,
    /// Per domain id: the plugin's count of matching pods (0 for ids past the end).
    pub counts: Arc<Vec<i64>>,
    /// The smallest count that passes.
    pub min: i64,
    /// The largest count that passes.
    pub max: i64,
    /// The verdict for a node without the key.
    pub missing: bool,
}

impl GateCondition {
    /// The verdict for the node at position `pos` (false for a position the condition does
    /// not know).
    #[inline]
    pub fn passes(&self, pos: usize) -> bool {
        match self.domains.get(pos) {
            Some(&GATE_NO_DOMAIN) => self.missing,
            Some(&d) => self.passes_domain(d),
            None => false,
        }
    }

    /// The verdict for domain id `d` (not [`GATE_NO_DOMAIN`]).
    #[inline]
    pub fn passes_domain(&self, d: u32) -> bool {
        let c = self.counts.get(d as usize).copied().unwrap_or(0);
        self.min <= c && c <= self.max
    }
}

/// An exact Filter verdict for the nodes of one snapshot (see the module doc): on the node at
/// position `pos` of the node slice PreFilter read, the plugin's `filter` returns success when
/// every condition passes, and a rejection (never an error) otherwise.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeGate {
    /// Address of the first node of the slice PreFilter read and its length: the gate speaks
    /// only of that slice.
    pub snapshot: (usize, usize),
    /// Conditions that must all pass.
    pub conditions: Vec<GateCondition>,
}

impl NodeGate {
    /// A gate without conditions for the node slice `nodes`.
    pub fn for_nodes(nodes: &[NodeInfo]) -> NodeGate {
        NodeGate {
            snapshot: (nodes.as_ptr() as usize, nodes.len()),
            conditions: Vec::new(),
        }
    }

    /// True when the gate speaks of exactly the node slice `nodes` and every condition knows
    /// every position.
    pub fn covers(&self, nodes: &[NodeInfo]) -> bool {
        self.snapshot == (nodes.as_ptr() as usize, nodes.len())
            && self
                .conditions
                .iter()
                .all(|c| c.domains.len() == nodes.len())
    }

    /// Adds a condition.
    pub fn push(&mut self, c: GateCondition) {
        self.conditions.push(c);
    }

    /// The verdict for the node at position `pos`.
    #[inline]
    pub fn passes(&self, pos: usize) -> bool {
        self.conditions.iter().all(|c| c.passes(pos))
    }
}

/// Which resource-allocation formula a [`NodeScoreKernel::ResourceAllocation`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocationStrategy {
    /// Upstream `leastRequestedScore`: `(capacity - requested) * 100 / capacity`, 0 when over.
    LeastAllocated,
    /// Upstream `mostRequestedScore`: `min(requested, capacity) * 100 / capacity`.
    MostAllocated,
}

/// A Score plugin's score of a node after NormalizeScore, from the node's numbers. CPU in
/// milli-CPU, memory in bytes; the node's requested values include the pods assigned to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeScoreKernel {
    /// Every node scores `score` (0 to 100) as long as none of the scored nodes has a flag of
    /// `unless_flags`; otherwise the plugin runs through its `score_nodes` and `normalize_score`.
    Constant {
        /// The normalized score.
        score: i64,
        /// Flags that make a node's score depend on more than the kernel knows.
        unless_flags: u32,
    },
    /// Upstream `resourceAllocationScorer` on cpu and memory with LeastAllocated or
    /// MostAllocated: the weighted mean (truncated) of the per-resource scores, a resource left
    /// out when the node's allocatable of it is 0.
    ResourceAllocation {
        /// The formula.
        strategy: AllocationStrategy,
        /// The pod's milli-CPU.
        milli_cpu: i64,
        /// The pod's memory.
        memory: i64,
        /// Weight of cpu.
        cpu_weight: i64,
        /// Weight of memory.
        memory_weight: i64,
        /// Use the nodes' plain requests; otherwise their non-zero requests (upstream
        /// `NonZeroRequested`).
        use_requested: bool,
    },
    /// Upstream BalancedAllocation on cpu and memory (plain requests): `(1 - |f_cpu - f_mem| /
    /// 2) * 100` truncated, each fraction capped at 1, 100 when a resource has no allocatable.
    BalancedCpuMemory {
        /// The pod's milli-CPU.
        milli_cpu: i64,
        /// The pod's memory.
        memory: i64,
    },
}

#[cfg(test)]
mod tests {
    /// The in-tree plugins that offer kernels are recognised when built by the registry (the
    /// fused pass depends on it); a plugin without kernels (NodeAffinity) is not.
    #[test]
    fn node_kernels_recognises_the_in_tree_plugins() {
        let registry = crate::in_tree_registry();
        let build = |name: &str| {
            registry
                .build(&crate::PluginArgs {
                    name,
                    args: None,
                    path: String::new(),
                })
                .expect("in-tree plugin builds")
        };
        for name in [
            "NodeResourcesFit",
            "NodeResourcesBalancedAllocation",
            "TaintToleration",
            "NodeUnschedulable",
            "NodeName",
            "NodePorts",
            "ImageLocality",
            "InterPodAffinity",
            "PodTopologySpread",
        ] {
            assert!(super::node_kernels(&build(name)).is_some(), "{name}");
        }
        assert!(super::node_kernels(&build("NodeAffinity")).is_none());
    }

    use super::*;

    fn cond(
        domains: &Arc<Vec<u32>>,
        counts: &[i64],
        min: i64,
        max: i64,
        missing: bool,
    ) -> GateCondition {
        GateCondition {
            domains: Arc::clone(domains),
            counts: Arc::new(counts.to_vec()),
            min,
            max,
            missing,
        }
    }

    #[test]
    fn a_condition_reads_the_count_of_each_positions_domain() {
        // Positions 0..5: domains 0, 1, none, 2 (past `counts`: count 0), 0.
        let d = Arc::new(vec![0, 1, GATE_NO_DOMAIN, 2, 0]);
        // Passes with at most 1 pod in the domain.
        let c = cond(&d, &[1, 2], i64::MIN, 1, false);
        let got: Vec<bool> = (0..6).map(|p| c.passes(p)).collect();
        // Position 5 is unknown: it never passes.
        assert_eq!(got, [true, false, false, true, true, false]);
        // At least one pod, a node without the key passing.
        let c = cond(&d, &[1, 2], 1, i64::MAX, true);
        let got: Vec<bool> = (0..5).map(|p| c.passes(p)).collect();
        assert_eq!(got, [true, true, true, false, true]);
    }

    #[test]
    fn a_gate_needs_every_condition() {
        let d = Arc::new(vec![0, 1, 2]);
        let other = Arc::new(vec![0, 0, 1]);
        let mut g = NodeGate::default();
        g.push(cond(&d, &[0, 0, 5], i64::MIN, 0, true));
        g.push(cond(&other, &[0, 3], i64::MIN, 0, true));
        let got: Vec<bool> = (0..3).map(|p| g.passes(p)).collect();
        assert_eq!(got, [true, true, false]);
    }

    #[test]
    fn a_gate_covers_only_the_slice_it_was_made_for() {
        let node = || NodeInfo::new(Arc::new(k8s_types::core::Node::default()));
        let nodes = vec![node(), node()];
        let mut g = NodeGate::for_nodes(&nodes);
        assert!(g.covers(&nodes));
        assert!(!g.covers(&nodes[..1]));
        let copy = nodes.clone();
        assert!(!g.covers(&copy));
        g.push(cond(&Arc::new(vec![0]), &[0], 0, 0, true));
        assert!(!g.covers(&nodes), "a condition shorter than the slice");
    }
}
