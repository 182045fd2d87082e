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
//!
//! Plugins offer kernels through [`FilterPlugin::filter_kernel`] and
//! [`ScorePlugin::score_kernel`](super::ScorePlugin::score_kernel) (default: none); plugins that
//! offer none run through the generic per-plugin path, so out-of-tree plugins keep working.
//!
//! [`FilterPlugin::filter_kernel`]: super::FilterPlugin::filter_kernel

use super::node_info::NodeInfo;

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

    /// True when `node` satisfies the condition (reads the node's summary).
    pub fn admits(&self, node: &NodeInfo) -> bool {
        let s = node.summary();
        node_flags(node) & self.slow_flags == 0
            && s.allocatable_pods - s.pod_count >= self.min_free_pods
            && s.allocatable_milli_cpu - s.requested_milli_cpu >= self.min_free_milli_cpu
            && s.allocatable_memory - s.requested_memory >= self.min_free_memory
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
