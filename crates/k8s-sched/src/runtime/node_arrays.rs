//! [`NodeArrays`]: the per-node numbers the fused node pass reads (`runtime/fused.rs`), as one
//! contiguous array per field (struct of arrays), indexed like the cache's node list. The cache
//! keeps it in step with its [`NodeInfo`]s (`Cache::refresh_flags`, `Cache::rebuild_flags`). No
//! upstream counterpart: upstream's plugins read each `NodeInfo` (`pkg/scheduler/framework/
//! types.go`); these are copies of the same values (CPU in milli-CPU, memory in bytes).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime::kernel::node_flags;
use k8s_sched_framework::{Handle, NodeInfo};

use crate::plugins::node_resources::resource_allocation::inverse;

/// Nodes per block of [`NodeGenerations::block_max`].
pub const GENERATION_BLOCK: usize = 64;

/// The generations of a snapshot's nodes in one array, with a per-block summary (see
/// [`node_generations`]). A node change always gives the node a fresh generation, larger than
/// every generation before it (process-wide, [`NodeInfo::generation`]), so within one `layout` a
/// block whose `block_max` is not above a generation seen earlier has not changed since.
#[derive(Clone, Copy, Debug)]
pub struct NodeGenerations<'a> {
    /// `per_node[i]` is [`NodeInfo::generation`] of node `i` of the snapshot.
    pub per_node: &'a [u64],
    /// Per block of [`GENERATION_BLOCK`] consecutive nodes: at least the largest generation the
    /// block has held in this layout.
    pub block_max: &'a [u64],
    /// Identifies the placement of nodes at positions: it changes (to a value no other layout
    /// in the process has had) whenever nodes move to other positions.
    pub layout: u64,
}

/// The [`NodeInfo::generation`] of every node of [`Handle::node_infos`], in the same order, when
/// the handle is the scheduler's own (its [`Handle::scheduler_internal`] is the cache's
/// [`NodeArrays`]): plugins that follow the snapshot (the topology counters) find the changed
/// nodes without reading every `NodeInfo`. `None` for any other handle.
pub fn node_generations(handle: &dyn Handle) -> Option<NodeGenerations<'_>> {
    let any = handle.scheduler_internal()?;
    if let Some(arrays) = any.downcast_ref::<NodeArrays>() {
        return Some(arrays.generations());
    }
    #[cfg(test)]
    if let Some((per_node, block_max, layout)) = any.downcast_ref::<TestGenerations>() {
        return Some(NodeGenerations {
            per_node,
            block_max,
            layout: *layout,
        });
    }
    None
}

/// What a test handle answers for [`node_generations`]: per node, block maxima, layout.
#[cfg(test)]
pub type TestGenerations = (Vec<u64>, Vec<u64>, u64);

/// A fresh [`NodeGenerations::layout`] value (process-wide, never repeated).
fn next_layout() -> u64 {
    static NEXT_LAYOUT: AtomicU64 = AtomicU64::new(1);
    NEXT_LAYOUT.fetch_add(1, Ordering::Relaxed)
}

/// The per-node numbers of the fused pass, one array per field.
#[derive(Clone, Debug, Default)]
pub struct NodeArrays {
    /// [`node_flags`] of each node.
    pub flags: Vec<u32>,
    /// `allocatable.pods - pod count`.
    pub free_pods: Vec<i64>,
    /// `allocatable.milli_cpu - requested.milli_cpu`.
    pub free_cpu: Vec<i64>,
    /// `allocatable.memory - requested.memory`.
    pub free_mem: Vec<i64>,
    /// `allocatable.milli_cpu`.
    pub alloc_cpu: Vec<i64>,
    /// `allocatable.memory`.
    pub alloc_mem: Vec<i64>,
    /// `requested.milli_cpu`.
    pub req_cpu: Vec<i64>,
    /// `requested.memory`.
    pub req_mem: Vec<i64>,
    /// `non_zero_requested.milli_cpu`.
    pub nz_cpu: Vec<i64>,
    /// `non_zero_requested.memory`.
    pub nz_mem: Vec<i64>,
    /// `1 / allocatable.milli_cpu` (0 when 0), for the resource formulas (`ResourceUse::inverse`).
    pub inv_cpu: Vec<f64>,
    /// `1 / allocatable.memory` (0 when 0), for the resource formulas (`ResourceUse::inverse`).
    pub inv_mem: Vec<f64>,
    /// [`NodeInfo::generation`] of each node (renewed by every change the cache makes).
    pub generation: Vec<u64>,
    /// Per block of [`GENERATION_BLOCK`] nodes: the largest generation set in it.
    pub generation_block_max: Vec<u64>,
    /// This node layout (see [`NodeGenerations::layout`]).
    layout: Layout,
    /// Number of nodes with each flag bit set.
    flagged: [u32; 32],
    /// Kernel scores kept from earlier attempts (see [`ScoreMemo`]).
    memo: RefCell<ScoreMemo>,
}

/// The fused pass's per-node sum of the resource kernels' weighted scores, kept across attempts
/// with the same kernel parameters (consecutive pods of one shape): `total[i]` is valid while
/// `stamp[i] == epoch`. [`NodeArrays::set`] invalidates the node it refreshes, so a value is
/// only reused while the node's numbers are the ones it was computed from.
#[derive(Clone, Debug, Default)]
pub struct ScoreMemo {
    /// The kernel parameters the values belong to.
    key: Option<[i64; MEMO_KEY_LEN]>,
    epoch: u32,
    stamp: Vec<u32>,
    total: Vec<i64>,
}

/// Length of a [`ScoreMemo`] key.
pub const MEMO_KEY_LEN: usize = 12;

impl ScoreMemo {
    /// Makes the memo hold values for `key` over `len` nodes (forgetting others' values).
    pub fn prepare(&mut self, key: [i64; MEMO_KEY_LEN], len: usize) {
        if self.stamp.len() != len {
            self.stamp.clear();
            self.stamp.resize(len, 0);
            self.total.resize(len, 0);
        }
        if self.key != Some(key) {
            self.key = Some(key);
            self.epoch = self.epoch.wrapping_add(1);
            if self.epoch == 0 {
                self.stamp.fill(0);
                self.epoch = 1;
            }
        }
    }

    /// The current epoch with the stamps and values, for a loop that keeps them in registers:
    /// node `i`'s value is `total[i]` when `stamp[i] == epoch`.
    #[inline(always)]
    pub fn parts_mut(&mut self) -> (u32, &mut [u32], &mut [i64]) {
        (self.epoch, &mut self.stamp, &mut self.total)
    }
}

/// A [`NodeGenerations::layout`] value: fresh for every new (the cache makes a new
/// [`NodeArrays`] whenever nodes change positions) or cloned `NodeArrays`.
#[derive(Debug, PartialEq, Eq)]
struct Layout(u64);

impl Default for Layout {
    fn default() -> Layout {
        Layout(next_layout())
    }
}

impl Clone for Layout {
    /// A copy may change apart from the original: it is another layout.
    fn clone(&self) -> Layout {
        Layout::default()
    }
}

impl NodeArrays {
    /// The nodes' generations with their block summary and this layout.
    pub fn generations(&self) -> NodeGenerations<'_> {
        NodeGenerations {
            per_node: &self.generation,
            block_max: &self.generation_block_max,
            layout: self.layout.0,
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.flags.len()
    }

    /// True without nodes.
    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }

    /// True when some node has a flag of `mask`.
    pub fn any_flagged(&self, mask: u32) -> bool {
        (0..self.flagged.len()).any(|b| mask & (1 << b) != 0 && self.flagged[b] > 0)
    }

    fn count_flags(&mut self, flags: u32, add: bool) {
        for b in 0..self.flagged.len() {
            if flags & (1 << b) != 0 {
                if add {
                    self.flagged[b] += 1;
                } else {
                    self.flagged[b] -= 1;
                }
            }
        }
    }

    /// The memo of kernel scores (borrowed by one fused pass at a time).
    pub fn memo(&self) -> std::cell::RefMut<'_, ScoreMemo> {
        self.memo.borrow_mut()
    }

    /// Copies node `i`'s numbers (growing the arrays when `i` is the next position).
    pub fn set(&mut self, i: usize, n: &NodeInfo) {
        if let Some(stamp) = self.memo.get_mut().stamp.get_mut(i) {
            *stamp = 0;
        }
        if i >= self.len() {
            let len = i + 1;
            self.flags.resize(len, 0);
            for v in [
                &mut self.free_pods,
                &mut self.free_cpu,
                &mut self.free_mem,
                &mut self.alloc_cpu,
                &mut self.alloc_mem,
                &mut self.req_cpu,
                &mut self.req_mem,
                &mut self.nz_cpu,
                &mut self.nz_mem,
            ] {
                v.resize(len, 0);
            }
            self.inv_cpu.resize(len, 0.0);
            self.inv_mem.resize(len, 0.0);
            self.generation.resize(len, 0);
            self.generation_block_max
                .resize(len.div_ceil(GENERATION_BLOCK), 0);
        }
        let g = n.generation();
        self.generation[i] = g;
        let block = &mut self.generation_block_max[i / GENERATION_BLOCK];
        *block = (*block).max(g);
        let (a, r, nz) = (n.allocatable(), n.requested(), n.non_zero_requested());
        let flags = node_flags(n);
        self.count_flags(self.flags[i], false);
        self.count_flags(flags, true);
        self.flags[i] = flags;
        self.free_pods[i] = a.pods - n.pod_count() as i64;
        self.free_cpu[i] = a.milli_cpu - r.milli_cpu;
        self.free_mem[i] = a.memory - r.memory;
        self.alloc_cpu[i] = a.milli_cpu;
        self.alloc_mem[i] = a.memory;
        self.req_cpu[i] = r.milli_cpu;
        self.req_mem[i] = r.memory;
        self.nz_cpu[i] = nz.milli_cpu;
        self.nz_mem[i] = nz.memory;
        self.inv_cpu[i] = inverse(a.milli_cpu);
        self.inv_mem[i] = inverse(a.memory);
    }

    /// Rebuilds every entry from `nodes` (after positions changed).
    pub fn rebuild(&mut self, nodes: &[NodeInfo]) {
        *self = NodeArrays::default();
        for (i, n) in nodes.iter().enumerate() {
            self.set(i, n);
        }
    }
}
