//! The fused node pass: Filter and Score of one attempt over the cache's per-node arrays
//! ([`NodeArrays`]) in one pass each, for the plugins that offer a per-node kernel
//! ([`NodeKernels`](super::kernel::NodeKernels), implemented by in-tree plugins only). Plugins
//! without a kernel (out-of-tree plugins, or in-tree ones
//! whose attempt needs more than the node's numbers) run through the generic batched path
//! (`runtime/batch.rs`) on the nodes the kernels admit. The feasible nodes, the statuses of the
//! rejected ones, the next start index, the totals and the chosen node are those of upstream's
//! `findNodesThatPassFilters`, `prioritizeNodes` and `selectHost` (`pkg/scheduler/
//! schedule_one.go`), as the per-node path computes them:
//!
//! - Filter: a node that satisfies every kernel passes every kernel plugin, so only the plugins
//!   without a kernel run on it (in order). A node that does not satisfy them runs every Filter
//!   plugin in order (`Framework::run_filter`), which gives upstream's first failing status.
//! - Score: a kernel gives the plugin's score after NormalizeScore. A plugin whose score is
//!   constant over the scored nodes (e.g. TaintToleration when no scored node has a taint:
//!   every raw score is 0, and upstream's `DefaultNormalizeScore` with `reverse` turns an all-zero
//!   list into 100 for every node) adds its weighted constant without a pass over the nodes.

use k8s_sched_framework::{CycleState, NodeInfo, Status, MAX_NODE_SCORE};
use k8s_types::core::Pod;

use super::batch::{FilterScratch, ScoreScratch};
use super::node_arrays::{NodeArrays, MEMO_KEY_LEN};
use super::Framework;
use crate::plugins::node_resources::balanced_allocation::balanced_resource_score;
use crate::plugins::node_resources::least_allocated::least_resource_score;
use crate::plugins::node_resources::most_allocated::most_resource_score;
use crate::plugins::node_resources::resource_allocation::ResourceUse;
use crate::runtime::kernel::{
    AllocationStrategy, NodeFilterKernel, NodeGate, NodeScoreKernel, GATE_NO_DOMAIN,
};
use crate::scratch;

/// The Filter side of the fused pass for one attempt (see [`Framework::fused_filter`]).
#[derive(Clone, Debug)]
pub struct FusedFilter {
    kernel: NodeFilterKernel,
    /// The exact verdicts of the plugins that offer a gate (all their conditions, merged).
    gate: NodeGate,
    /// The attempt's Filter skips plus the plugins covered by `kernel` and `gate`: what still
    /// runs on the nodes they admit.
    residual_skips: Vec<bool>,
    has_residual: bool,
}

/// Where a Filter search over the candidate nodes stopped (see
/// [`Framework::find_feasible_fused`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilterSearch {
    /// Nodes looked at, from the start index (upstream `processedNodes`).
    pub processed: usize,
    /// A node whose status is an error (not a rejection) ended the search: its position in the
    /// `rejected` list (whose status is then known).
    pub error: Option<usize>,
}

/// One Score kernel with its plugin's weight.
#[derive(Clone, Copy, Debug)]
struct Weighted {
    kernel: NodeScoreKernel,
    weight: i64,
    plugin: usize,
}

/// The Score side of the fused pass for one attempt (see [`Framework::fused_score`]).
#[derive(Clone, Debug)]
pub struct FusedScore {
    kernels: Vec<Weighted>,
    /// Per Score plugin: covered by a kernel (left out of the generic path).
    covered: Vec<bool>,
}

/// The resource kernels resolved for the per-node loop.
#[derive(Clone, Copy, Debug)]
struct Alloc {
    least: bool,
    cpu: i64,
    mem: i64,
    wc: i64,
    wm: i64,
    use_requested: bool,
    weight: i64,
}

#[derive(Clone, Copy, Debug)]
struct Balanced {
    cpu: i64,
    mem: i64,
    weight: i64,
}

impl Framework {
    /// Turns the fused node pass on or off (on by default). Off, every plugin runs through the
    /// generic batched path; results are the same either way.
    pub fn set_fused_node_pass(&mut self, on: bool) {
        self.fused = on;
    }

    /// True when the fused node pass is on.
    pub fn fused_node_pass(&self) -> bool {
        self.fused
    }

    /// The fused Filter plan of this attempt over `nodes` (the snapshot PreFilter read; after
    /// PreFilter; `skips` as from [`Framework::filter_skips`]), or `None` when the pass is off
    /// or no plugin offers a kernel or a gate.
    pub fn fused_filter(
        &self,
        state: &CycleState,
        pod: &Pod,
        skips: &[bool],
        nodes: &[NodeInfo],
    ) -> Option<FusedFilter> {
        if !self.fused {
            return None;
        }
        let mut kernel = NodeFilterKernel::PASS;
        let mut gate = NodeGate::for_nodes(nodes);
        let mut residual_skips = skips.to_vec();
        residual_skips.resize(self.filter.len(), false);
        let mut covered = 0;
        let mut has_residual = false;
        for (i, p) in self.filter.iter().enumerate() {
            if residual_skips[i] || p.as_filter().is_none() {
                continue;
            }
            let kernels = self.filter_kernels[i].as_deref();
            match kernels.and_then(|k| k.filter_kernel(state, pod)) {
                Some(k) => {
                    kernel = kernel.and(k);
                    residual_skips[i] = true;
                    covered += 1;
                }
                None => match kernels.and_then(|k| k.filter_gate(state, pod)) {
                    Some(g) if g.covers(nodes) => {
                        for c in g.conditions {
                            gate.push(c);
                        }
                        residual_skips[i] = true;
                        covered += 1;
                    }
                    _ => has_residual = true,
                },
            }
        }
        (covered > 0).then_some(FusedFilter {
            kernel,
            gate,
            residual_skips,
            has_residual,
        })
    }

    /// Upstream `findNodesThatPassFilters` with the fused pass: visits the candidate nodes from
    /// `start` (position `k` is node `candidates[k]`, or node `k` without candidates) until `want`
    /// nodes passed or all were seen. Feasible node indices go to `feasible`, rejected ones with
    /// their status to `rejected`, both in visiting order. Same outcome as running
    /// [`Framework::run_filter`] on each node in turn, except that a node a gate rejected goes
    /// to `deferred` without a status when every plugin of the attempt is covered (it is a
    /// rejection, never an error; [`Framework::run_filter`] gives its status when the pod fits
    /// nowhere).
    #[allow(clippy::too_many_arguments)]
    pub fn find_feasible_fused(
        &self,
        plan: &FusedFilter,
        state: &CycleState,
        pod: &Pod,
        skips: &[bool],
        arrays: &NodeArrays,
        nodes: &[NodeInfo],
        candidates: Option<&[usize]>,
        start: usize,
        want: usize,
        feasible: &mut Vec<usize>,
        rejected: &mut Vec<(usize, Status)>,
        deferred: &mut Vec<usize>,
    ) -> FilterSearch {
        let n = candidates.map_or(nodes.len(), <[usize]>::len);
        if n == 0 || want == 0 || arrays.len() != nodes.len() {
            return FilterSearch::default();
        }
        let k = plan.kernel;
        let gate = &plan.gate;
        let gated = !gate.conditions.is_empty();
        let all = KernelSlices::of(arrays, 0, arrays.len());
        let admits = |i: usize| all.ok(&k, i);
        let index = |pos: usize| candidates.map_or(pos, |c| c[pos]);
        if !plan.has_residual && candidates.is_none() {
            // Every plugin this attempt has a kernel or a gate and every node is a candidate:
            // tight scans over the two contiguous ranges of the rotating search (start..n, then
            // 0..start); the exact path only for the nodes the gates pass and the kernels do not
            // admit.
            let mut step = 0;
            for (lo, hi) in [(start, n), (0, start)] {
                let mut i = lo;
                while i < hi {
                    let (next, done) = if gated {
                        scan_gated(&k, gate, arrays, i, hi, want, feasible, deferred)
                    } else {
                        scan_admitted(&k, arrays, i, hi, want, feasible)
                    };
                    step += next - i;
                    if done {
                        return FilterSearch {
                            processed: step,
                            error: None,
                        };
                    }
                    if next == hi {
                        break;
                    }
                    // Node `next` is not admitted: every Filter plugin in order.
                    step += 1;
                    let st = self.run_filter(state, pod, &nodes[next], skips);
                    if st.is_success() {
                        feasible.push(next);
                        if feasible.len() >= want {
                            return FilterSearch {
                                processed: step,
                                error: None,
                            };
                        }
                    } else {
                        let error = !st.is_rejected();
                        rejected.push((next, st));
                        if error {
                            return FilterSearch {
                                processed: step,
                                error: Some(rejected.len() - 1),
                            };
                        }
                    }
                    i = next + 1;
                }
            }
            return FilterSearch {
                processed: n,
                error: None,
            };
        }
        if !plan.has_residual {
            // Every plugin this attempt has a kernel or a gate: one pass; a node a gate rejects
            // is rejected (its status left for later), the exact path only for the nodes the
            // kernels do not admit.
            for step in 0..n {
                let mut pos = start + step;
                if pos >= n {
                    pos -= n;
                }
                let i = index(pos);
                if gated && !gate.passes(i) {
                    deferred.push(i);
                    continue;
                }
                if !admits(i) {
                    let st = self.run_filter(state, pod, &nodes[i], skips);
                    if !st.is_success() {
                        let error = !st.is_rejected();
                        rejected.push((i, st));
                        if error {
                            return FilterSearch {
                                processed: step + 1,
                                error: Some(rejected.len() - 1),
                            };
                        }
                        continue;
                    }
                }
                feasible.push(i);
                if feasible.len() >= want {
                    return FilterSearch {
                        processed: step + 1,
                        error: None,
                    };
                }
            }
            return FilterSearch {
                processed: n,
                error: None,
            };
        }
        // Plugins without a kernel run, chunk by chunk, on the nodes the kernels admit; chunks
        // are as large as the number of feasible nodes still wanted, so the search stops where
        // the node-by-node one does.
        let mut buffers = FilterScratch::pooled();
        let mut admitted: Vec<&NodeInfo> = scratch::take();
        let mut admitted_pos: Vec<usize> = scratch::take();
        let mut slow: Vec<(usize, Status)> = Vec::new();
        let mut failed: Vec<(usize, Status)> = Vec::new();
        let mut step = 0;
        let mut out = FilterSearch {
            processed: n,
            error: None,
        };
        'chunks: while step < n {
            let size = (want - feasible.len()).max(MIN_CHUNK).min(n - step);
            admitted.clear();
            admitted_pos.clear();
            slow.clear();
            failed.clear();
            for s in step..step + size {
                let i = index((start + s) % n);
                if admits(i) && (!gated || gate.passes(i)) {
                    admitted.push(&nodes[i]);
                    admitted_pos.push(s - step);
                } else {
                    let st = self.run_filter(state, pod, &nodes[i], skips);
                    if !st.is_success() {
                        slow.push((s - step, st));
                    }
                }
            }
            self.filter_chunk(
                state,
                pod,
                &admitted,
                &plan.residual_skips,
                &mut buffers,
                &mut failed,
            );
            // Merge by position in the chunk: the slow statuses and the residual failures.
            let mut slow_it = slow.drain(..).peekable();
            let mut failed_it = failed
                .drain(..)
                .map(|(a, st)| (admitted_pos[a], st))
                .peekable();
            for off in 0..size {
                let st = match (slow_it.peek(), failed_it.peek()) {
                    (Some((p, _)), _) if *p == off => slow_it.next().map(|(_, s)| s),
                    (_, Some((p, _))) if *p == off => failed_it.next().map(|(_, s)| s),
                    _ => None,
                };
                let i = index((start + step + off) % n);
                match st {
                    Some(st) => {
                        let error = !st.is_rejected();
                        rejected.push((i, st));
                        if error {
                            out = FilterSearch {
                                processed: step + off + 1,
                                error: Some(rejected.len() - 1),
                            };
                            break 'chunks;
                        }
                    }
                    None => {
                        feasible.push(i);
                        if feasible.len() >= want {
                            out = FilterSearch {
                                processed: step + off + 1,
                                error: None,
                            };
                            break 'chunks;
                        }
                    }
                }
            }
            step += size;
        }
        buffers.release();
        scratch::give(admitted);
        scratch::give(admitted_pos);
        out
    }

    /// The fused Score plan of this attempt (after PreScore), or `None` when the pass is off or
    /// no running Score plugin offers a kernel.
    pub fn fused_score(&self, state: &CycleState, pod: &Pod) -> Option<FusedScore> {
        if !self.fused {
            return None;
        }
        let skip = state.skip_score_plugins();
        let mut kernels = Vec::new();
        let mut covered = vec![false; self.score.len()];
        for (i, (p, weight)) in self.score.iter().enumerate() {
            if !skip.is_empty() && skip.contains(p.name()) {
                continue;
            }
            if p.as_score().is_none() {
                continue;
            }
            if let Some(kernel) =
                (self.score_kernels[i].as_deref()).and_then(|k| k.score_kernel(state, pod))
            {
                kernels.push(Weighted {
                    kernel,
                    weight: *weight,
                    plugin: i,
                });
                covered[i] = true;
            }
        }
        (!kernels.is_empty()).then_some(FusedScore { kernels, covered })
    }

    /// Upstream `prioritizeNodes` + `selectHost` with the fused pass: the index (into the
    /// cache's node list) of the feasible node with the highest total, ties to the highest index (the name sorting
    /// last). `feasible` holds indices into the cache's node list (and `arrays`); `refs[k]` is
    /// the node of `feasible[k]`.
    ///
    /// # Errors
    /// The statuses [`Framework::run_score`] returns.
    pub fn select_host_fused(
        &self,
        plan: &FusedScore,
        state: &CycleState,
        pod: &Pod,
        arrays: &NodeArrays,
        refs: &[&NodeInfo],
        feasible: &[usize],
    ) -> Result<usize, Status> {
        let mut best = (i64::MIN, 0usize);
        let exact =
            self.fused_totals_each(plan, state, pod, arrays, refs, feasible, |i, total| {
                if (total, i) > best {
                    best = (total, i);
                }
            })?;
        if exact {
            return Ok(best.1);
        }
        // Only with negative requests or allocatable; the generic path gives upstream's exact
        // error.
        let mut scores = ScoreScratch::pooled();
        self.score_batch(state, pod, refs, &mut scores)?;
        let best = feasible
            .iter()
            .zip(&scores.totals)
            .max_by_key(|(idx, total)| (**total, **idx))
            .map_or(feasible[0], |(idx, _)| *idx);
        scores.release();
        Ok(best)
    }

    /// The weighted total of every feasible node through the fused pass, in `feasible` order
    /// (what [`Framework::run_score`] returns for `refs`).
    ///
    /// # Errors
    /// The statuses [`Framework::run_score`] returns.
    pub fn fused_totals(
        &self,
        plan: &FusedScore,
        state: &CycleState,
        pod: &Pod,
        arrays: &NodeArrays,
        refs: &[&NodeInfo],
        feasible: &[usize],
    ) -> Result<Vec<i64>, Status> {
        let mut out = Vec::with_capacity(feasible.len());
        let exact =
            self.fused_totals_each(plan, state, pod, arrays, refs, feasible, |_, t| out.push(t))?;
        if exact {
            return Ok(out);
        }
        let mut scores = ScoreScratch::pooled();
        self.score_batch(state, pod, refs, &mut scores)?;
        let out = scores.totals.clone();
        scores.release();
        Ok(out)
    }

    /// Calls `each(node index, total)` for every feasible node in order. False when a kernel
    /// score fell outside `[0, 100]` (then the totals are not upstream's and the caller takes the
    /// generic path, which reports the error).
    #[allow(clippy::too_many_arguments)]
    fn fused_totals_each(
        &self,
        plan: &FusedScore,
        state: &CycleState,
        pod: &Pod,
        arrays: &NodeArrays,
        refs: &[&NodeInfo],
        feasible: &[usize],
        mut each: impl FnMut(usize, i64),
    ) -> Result<bool, Status> {
        let mut covered = plan.covered.clone();
        let mut constant = 0i64;
        let mut alloc: Option<Alloc> = None;
        let mut balanced: Option<Balanced> = None;
        let mut others: Vec<Weighted> = Vec::new();
        let mut out_of_range = false;
        for w in &plan.kernels {
            match w.kernel {
                NodeScoreKernel::Constant {
                    score,
                    unless_flags,
                } => {
                    let varies = arrays.any_flagged(unless_flags)
                        && feasible
                            .iter()
                            .any(|&i| arrays.flags[i] & unless_flags != 0);
                    if varies {
                        covered[w.plugin] = false;
                    } else {
                        out_of_range |= !(0..=MAX_NODE_SCORE).contains(&score);
                        constant += score * w.weight;
                    }
                }
                NodeScoreKernel::ResourceAllocation {
                    strategy,
                    milli_cpu,
                    memory,
                    cpu_weight,
                    memory_weight,
                    use_requested,
                } if alloc.is_none() => {
                    alloc = Some(Alloc {
                        least: strategy == AllocationStrategy::LeastAllocated,
                        cpu: milli_cpu,
                        mem: memory,
                        wc: cpu_weight,
                        wm: memory_weight,
                        use_requested,
                        weight: w.weight,
                    });
                }
                NodeScoreKernel::BalancedCpuMemory { milli_cpu, memory } if balanced.is_none() => {
                    balanced = Some(Balanced {
                        cpu: milli_cpu,
                        mem: memory,
                        weight: w.weight,
                    });
                }
                _ => others.push(*w),
            }
        }
        // Plugins without a kernel (or whose constant does not hold): the generic path.
        let residual = covered.iter().any(|c| !c)
            && self.score.iter().enumerate().any(|(i, (p, _))| {
                !covered[i]
                    && p.as_score().is_some()
                    && !state.skip_score_plugins().contains(p.name())
            });
        let mut scores = ScoreScratch::pooled();
        // Without residual plugins and other kernels every node's part of `totals` is 0: the
        // buffer is not filled (a `memset` of 8 bytes per feasible node for nothing).
        let zero = !residual && others.is_empty();
        if residual {
            self.score_batch_masked(state, pod, refs, &mut scores, Some(&covered))?;
        } else {
            scores.totals.clear();
            if !zero {
                scores.totals.resize(feasible.len(), 0);
            }
        }
        for w in &others {
            out_of_range |= add_kernel(&w.kernel, w.weight, arrays, feasible, &mut scores.totals);
        }
        let totals = &scores.totals;
        let rest = |k: usize| if zero { 0 } else { totals[k] };
        if alloc.is_none() && balanced.is_none() {
            for (k, &i) in feasible.iter().enumerate() {
                each(i, constant + rest(k));
            }
            scores.release();
            return Ok(!out_of_range);
        }
        // The resource kernels' part of each node's total, from the memo when the node has not
        // changed since it was computed for the same kernel parameters.
        let mut memo = arrays.memo();
        memo.prepare(memo_key(alloc.as_ref(), balanced.as_ref()), arrays.len());
        let (epoch, stamp, total) = memo.parts_mut();
        for (k, &i) in feasible.iter().enumerate() {
            let part = match stamp[i] == epoch {
                true => total[i],
                false => {
                    let mut part = 0;
                    let mut in_range = true;
                    if let Some(a) = &alloc {
                        let s = alloc_score(a, arrays, i);
                        in_range &= (0..=MAX_NODE_SCORE).contains(&s);
                        part += s * a.weight;
                    }
                    if let Some(b) = &balanced {
                        let s = balanced_score(b.cpu, b.mem, arrays, i);
                        in_range &= (0..=MAX_NODE_SCORE).contains(&s);
                        part += s * b.weight;
                    }
                    if in_range {
                        stamp[i] = epoch;
                        total[i] = part;
                    } else {
                        out_of_range = true;
                    }
                    part
                }
            };
            each(i, constant + rest(k) + part);
        }
        drop(memo);
        scores.release();
        Ok(!out_of_range)
    }
}

/// Pushes nodes `lo..hi` onto `feasible`, in order, while the kernel admits them and `feasible`
/// holds fewer than `want`. Returns where it stopped (the first node not admitted, which is not
/// pushed; the node after the one that reached `want`; or `hi`) and whether `want` was reached.
#[inline]
fn scan_admitted(
    k: &NodeFilterKernel,
    arrays: &NodeArrays,
    lo: usize,
    hi: usize,
    want: usize,
    feasible: &mut Vec<usize>,
) -> (usize, bool) {
    let s = KernelSlices::of(arrays, lo, hi);
    let (flags, pods, cpu, mem) = (s.flags, s.pods, s.cpu, s.mem);
    feasible.reserve((hi - lo).min(want.saturating_sub(feasible.len())));
    // Blocks of 8 nodes that are all admitted and cannot reach `want` are checked without
    // branches (the compiler vectorizes the block) and pushed at once; the first block with a
    // node not admitted, or that could reach `want`, goes node by node below, so where the scan
    // stops is the same.
    const BLOCK: usize = 8;
    let mut start = 0;
    while start + BLOCK <= flags.len() && feasible.len() + BLOCK < want {
        let mut all = true;
        for j in start..start + BLOCK {
            all &= (flags[j] & k.slow_flags == 0)
                & (pods[j] >= k.min_free_pods)
                & (cpu[j] >= k.min_free_milli_cpu)
                & (mem[j] >= k.min_free_memory);
        }
        if !all {
            break;
        }
        feasible.extend(lo + start..lo + start + BLOCK);
        start += BLOCK;
    }
    // Node by node: at most `room` more (the last of them reaches `want`), up to the first node
    // not admitted; the run of admitted nodes is pushed at once.
    let room = want.saturating_sub(feasible.len()).max(1);
    let end = flags.len().min(start + room);
    let stop = (start..end).find(|&j| !s.ok(k, j));
    feasible.extend(lo + start..lo + stop.unwrap_or(end));
    match stop {
        Some(j) => (lo + j, false),
        None if end > start && feasible.len() >= want => (lo + end, true),
        None => (hi, false),
    }
}

/// The four arrays a [`NodeFilterKernel`] reads, over nodes `lo..hi` (index `j` is node
/// `lo + j`): the per-node test of the fused Filter scans.
struct KernelSlices<'a> {
    flags: &'a [u32],
    pods: &'a [i64],
    cpu: &'a [i64],
    mem: &'a [i64],
}

impl<'a> KernelSlices<'a> {
    #[inline(always)]
    fn of(arrays: &'a NodeArrays, lo: usize, hi: usize) -> KernelSlices<'a> {
        KernelSlices {
            flags: &arrays.flags[lo..hi],
            pods: &arrays.free_pods[lo..hi],
            cpu: &arrays.free_cpu[lo..hi],
            mem: &arrays.free_mem[lo..hi],
        }
    }

    /// The kernel admits node `j` of the slices.
    #[inline(always)]
    fn ok(&self, k: &NodeFilterKernel, j: usize) -> bool {
        self.flags[j] & k.slow_flags == 0
            && self.pods[j] >= k.min_free_pods
            && self.cpu[j] >= k.min_free_milli_cpu
            && self.mem[j] >= k.min_free_memory
    }
}

/// [`scan_admitted`] with a gate: a node the gate rejects goes to `deferred` (no status)
/// (and the scan goes on); stops at the first node the gate passes and the kernel does not
/// admit, or when `feasible` reaches `want`.
#[allow(clippy::too_many_arguments)]
#[inline]
fn scan_gated(
    k: &NodeFilterKernel,
    gate: &NodeGate,
    arrays: &NodeArrays,
    lo: usize,
    hi: usize,
    want: usize,
    feasible: &mut Vec<usize>,
    deferred: &mut Vec<usize>,
) -> (usize, bool) {
    let s = KernelSlices::of(arrays, lo, hi);
    feasible.reserve((hi - lo).min(want.saturating_sub(feasible.len())));
    // One condition (the common case) is read through plain slices.
    let single = match gate.conditions.as_slice() {
        [c] if c.domains.len() >= hi => Some((&c.domains[lo..hi], c)),
        _ => None,
    };
    for j in 0..hi - lo {
        let passes = match single {
            Some((domains, c)) => match domains[j] {
                GATE_NO_DOMAIN => c.missing,
                d => c.passes_domain(d),
            },
            None => gate.passes(lo + j),
        };
        if !passes {
            deferred.push(lo + j);
            continue;
        }
        if !s.ok(k, j) {
            return (lo + j, false);
        }
        feasible.push(lo + j);
        if feasible.len() >= want {
            return (lo + j + 1, true);
        }
    }
    (hi, false)
}

/// The memo key of the resource kernels' parameters.
fn memo_key(alloc: Option<&Alloc>, balanced: Option<&Balanced>) -> [i64; MEMO_KEY_LEN] {
    let mut k = [0i64; MEMO_KEY_LEN];
    if let Some(a) = alloc {
        k[..8].copy_from_slice(&[
            1,
            i64::from(a.least),
            a.cpu,
            a.mem,
            a.wc,
            a.wm,
            i64::from(a.use_requested),
            a.weight,
        ]);
    }
    if let Some(b) = balanced {
        k[8..].copy_from_slice(&[1, b.cpu, b.mem, b.weight]);
    }
    k
}

/// The smallest chunk of nodes filtered at once when some plugin has no kernel.
const MIN_CHUNK: usize = 32;

/// Adds `weight * kernel score` of each feasible node to `totals` (a kernel the fused loop does
/// not handle itself). True when a score fell outside `[0, 100]`.
fn add_kernel(
    kernel: &NodeScoreKernel,
    weight: i64,
    arrays: &NodeArrays,
    feasible: &[usize],
    totals: &mut [i64],
) -> bool {
    let mut out_of_range = false;
    let mut add = |t: &mut i64, s: i64| {
        out_of_range |= !(0..=MAX_NODE_SCORE).contains(&s);
        *t += s * weight;
    };
    match *kernel {
        NodeScoreKernel::Constant { score, .. } => {
            for t in totals.iter_mut() {
                add(t, score);
            }
        }
        NodeScoreKernel::ResourceAllocation {
            strategy,
            milli_cpu,
            memory,
            cpu_weight,
            memory_weight,
            use_requested,
        } => {
            let a = Alloc {
                least: strategy == AllocationStrategy::LeastAllocated,
                cpu: milli_cpu,
                mem: memory,
                wc: cpu_weight,
                wm: memory_weight,
                use_requested,
                weight,
            };
            for (t, &i) in totals.iter_mut().zip(feasible) {
                add(t, alloc_score(&a, arrays, i));
            }
        }
        NodeScoreKernel::BalancedCpuMemory { milli_cpu, memory } => {
            for (t, &i) in totals.iter_mut().zip(feasible) {
                add(t, balanced_score(milli_cpu, memory, arrays, i));
            }
        }
    }
    out_of_range
}

/// The ResourceAllocation kernel on node `i`: NodeResourcesFit's LeastAllocated or
/// MostAllocated formula on cpu and memory, dividing by the arrays' reciprocals.
#[inline(always)]
fn alloc_score(a: &Alloc, arrays: &NodeArrays, i: usize) -> i64 {
    let (rc, rm) = if a.use_requested {
        (arrays.req_cpu[i], arrays.req_mem[i])
    } else {
        (arrays.nz_cpu[i], arrays.nz_mem[i])
    };
    let resources = [
        ResourceUse {
            requested: rc + a.cpu,
            allocatable: arrays.alloc_cpu[i],
            weight: a.wc,
            inverse: arrays.inv_cpu[i],
        },
        ResourceUse {
            requested: rm + a.mem,
            allocatable: arrays.alloc_mem[i],
            weight: a.wm,
            inverse: arrays.inv_mem[i],
        },
    ];
    if a.least {
        least_resource_score(resources)
    } else {
        most_resource_score(resources)
    }
}

/// NodeResourcesBalancedAllocation's formula on cpu and memory of node `i` (plain requests).
#[inline(always)]
fn balanced_score(cpu: i64, mem: i64, arrays: &NodeArrays, i: usize) -> i64 {
    balanced_resource_score(
        [
            ResourceUse::new(arrays.req_cpu[i] + cpu, arrays.alloc_cpu[i], 1),
            ResourceUse::new(arrays.req_mem[i] + mem, arrays.alloc_mem[i], 1),
        ]
        .into_iter(),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_sched_framework::CycleState;
    use k8s_types::core::{ContainerPort, Taint, Toleration};
    use k8s_types::Quantity;

    use crate::cache::Cache;
    use crate::detached_client::DetachedClient;
    use crate::nominator::Nominator;
    use crate::perf_workloads::{make_node, make_pod, PodTemplate};
    use crate::runtime::handle::CycleHandle;
    use crate::waiting::WaitingPods;
    use crate::{KubeSchedulerConfiguration, Scheduler};

    use super::*;

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn taint(key: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: "x".into(),
            effect: effect.into(),
            time_added: None,
        }
    }

    /// A random cluster of upstream's node-default shape with varied allocatable, cordons,
    /// taints and busy nodes.
    fn cluster(r: &mut Rng) -> Cache {
        let mut c = Cache::default();
        let n = 10 + r.below(200) as usize;
        let lacking_zones = r.below(3) == 0;
        for i in 0..n {
            // Every third cluster has nodes without a zone (PodTopologySpread then counts
            // without its gate).
            let zones = if lacking_zones { 5 } else { 4 };
            let zone = ["zone1", "zone2", "zone3", "zone1", ""][r.below(zones) as usize];
            let mut node = make_node(&format!("n{i:04}"), Some(zone).filter(|z| !z.is_empty()));
            let cpu = ["1", "2", "4", "8", "0"][r.below(5) as usize];
            node.status
                .allocatable
                .insert("cpu".into(), Quantity::parse(cpu).expect("cpu"));
            if r.below(10) == 0 {
                node.status
                    .allocatable
                    .insert("memory".into(), Quantity::parse("1000Ti").expect("memory"));
            }
            match r.below(12) {
                0 => node.spec.unschedulable = true,
                1 => node.spec.taints.push(taint("dedicated", "NoSchedule")),
                2 => node.spec.taints.push(taint("spot", "PreferNoSchedule")),
                _ => {}
            }
            c.upsert_node(Arc::new(node));
        }
        c.finish_batch();
        for k in 0..r.below(n as u64 * 20) as usize {
            let on = format!("n{:04}", r.below(n as u64));
            let (template, ns) = [
                (PodTemplate::Default, "default"),
                (PodTemplate::Default, "default"),
                (PodTemplate::TopologySpreading, "default"),
                (PodTemplate::PodAntiAffinity, "sched-0"),
            ][r.below(4) as usize];
            let mut p = make_pod(template, ns, &format!("e{k}-"), k);
            if r.below(20) == 0 {
                p.spec.containers[0].ports = vec![ContainerPort {
                    container_port: 80,
                    host_port: Some(8080),
                    ..Default::default()
                }];
            }
            p.spec.node_name = Some(on);
            c.upsert_pod(k8s_types::Shared::from_typed(p));
        }
        c
    }

    fn pod(r: &mut Rng, i: usize) -> k8s_types::core::Pod {
        let (template, ns) = [
            (PodTemplate::Default, "default"),
            (PodTemplate::Default, "default"),
            (PodTemplate::HighPriority, "default"),
            (PodTemplate::LowPriority, "default"),
            (PodTemplate::NodeAffinity, "default"),
            (PodTemplate::TopologySpreading, "default"),
            (PodTemplate::PodAntiAffinity, "sched-0"),
        ][r.below(7) as usize];
        let mut p = make_pod(template, ns, "p-", i);
        // Tighter spreading than the template's maxSkew 5, so that zones get rejected.
        for c in &mut p.spec.topology_spread_constraints {
            c.max_skew = 1;
        }
        // Anti-affinity by zone as well as by hostname (some nodes lack a zone).
        if let Some(anti) = p
            .spec
            .affinity
            .as_mut()
            .and_then(|a| a.pod_anti_affinity.as_mut())
        {
            if r.below(2) == 0 {
                for t in &mut anti.required_during_scheduling_ignored_during_execution {
                    t.topology_key = "topology.kubernetes.io/zone".into();
                }
            }
        }
        match r.below(6) {
            0 => p.spec.tolerations.push(Toleration {
                key: "dedicated".into(),
                operator: "Exists".into(),
                ..Default::default()
            }),
            1 => p.spec.containers[0].ports[0].host_port = Some(8080),
            2 => p.spec.containers[0].resources.requests.clear(),
            _ => {}
        }
        p
    }

    #[test]
    fn fused_filter_and_totals_equal_the_generic_ones() {
        let scheduler = Scheduler::new(KubeSchedulerConfiguration::default()).expect("default");
        let fwk = &scheduler.profiles()[0];
        let mut r = Rng(0x2545_f491_4f6c_dd1d);
        let mut api = DetachedClient::default();
        let mut waiting = WaitingPods::default();
        let nominator = Nominator::default();
        let (mut fused_filters, mut fused_scores, mut rejected_total) = (0, 0, 0);
        let mut deferred_total = 0;
        for round in 0..30 {
            let cache = cluster(&mut r);
            let nodes = cache.node_infos();
            for i in 0..8 {
                let pod = Arc::new(pod(&mut r, round * 100 + i));
                let mut state = CycleState::new();
                let handle = CycleHandle {
                    fwk,
                    api: &mut api,
                    cache: &cache,
                    waiting: &mut waiting,
                    nominator: &nominator,
                    now: 0,
                };
                let (_, s, _) = fwk.run_pre_filter(&mut state, &pod, &handle);
                if !s.is_success() {
                    continue;
                }
                let skips = fwk.filter_skips(&state);
                // Node-by-node from a random start, wanting a random number of nodes.
                let n = nodes.len();
                let start = r.below(n as u64) as usize;
                let want = 1 + r.below(n as u64) as usize;
                let (mut want_feasible, mut want_rejected, mut processed) = (vec![], vec![], n);
                for step in 0..n {
                    let i = (start + step) % n;
                    let st = fwk.run_filter(&state, &pod, &nodes[i], &skips);
                    if st.is_success() {
                        want_feasible.push(i);
                        if want_feasible.len() >= want {
                            processed = step + 1;
                            break;
                        }
                    } else {
                        want_rejected.push((i, st));
                    }
                }
                let plan = fwk
                    .fused_filter(&state, &pod, &skips, nodes)
                    .expect("kernels");
                fused_filters += 1;
                let (mut feasible, mut rejected, mut deferred) = (vec![], vec![], vec![]);
                let search = fwk.find_feasible_fused(
                    &plan,
                    &state,
                    &pod,
                    &skips,
                    cache.node_arrays(),
                    nodes,
                    None,
                    start,
                    want,
                    &mut feasible,
                    &mut rejected,
                    &mut deferred,
                );
                assert_eq!(feasible, want_feasible, "pod {}", pod.metadata.name);
                // A status a gate left out is the one the plugins give.
                deferred_total += deferred.len();
                // A node a gate rejected gets the status the plugins give; in visiting order
                // (from `start`) with the others.
                let mut rejected: Vec<(usize, Status)> = rejected
                    .into_iter()
                    .chain(
                        deferred
                            .into_iter()
                            .map(|i| (i, fwk.run_filter(&state, &pod, &nodes[i], &skips))),
                    )
                    .collect();
                rejected.sort_by_key(|(i, _)| (*i + n - start) % n);
                assert_eq!(rejected, want_rejected, "pod {}", pod.metadata.name);
                assert_eq!(search.processed, processed);
                rejected_total += rejected.len();
                if feasible.len() < 2 {
                    continue;
                }
                let refs: Vec<&NodeInfo> = feasible.iter().map(|&i| &nodes[i]).collect();
                let s = fwk.run_pre_score(&mut state, &pod, &refs, &handle);
                assert!(s.is_success(), "{s:?}");
                let want_totals = fwk.run_score(&state, &pod, &refs).expect("score");
                let Some(plan) = fwk.fused_score(&state, &pod) else {
                    continue;
                };
                fused_scores += 1;
                let totals = fwk
                    .fused_totals(&plan, &state, &pod, cache.node_arrays(), &refs, &feasible)
                    .expect("fused totals");
                assert_eq!(totals, want_totals, "pod {}", pod.metadata.name);
            }
        }
        assert!(fused_filters > 200 && fused_scores > 150 && rejected_total > 1000);
        assert!(deferred_total > 100, "{deferred_total}");
    }
}
