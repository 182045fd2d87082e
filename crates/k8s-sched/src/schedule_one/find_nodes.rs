//! Upstream `findNodesThatFitPod` (`pkg/scheduler/schedule_one.go`): PreFilter, the nominated
//! node first (`evaluateNominatedNode`), then Filter over the candidate nodes from the rotating
//! start index until `numFeasibleNodesToFind` feasible nodes are found (`findNodesThatPassFilters`),
//! through the fused node pass, the chunked per-plugin path, or, for an explained pod, node by node
//! with the `--explain` observer.

use k8s_types::object::Shared;

use k8s_sched_framework::{CycleState, Diagnosis, NodeInfo, Status};
use k8s_types::core::Pod;

use super::{num_feasible_nodes_to_find, Ctx, Failure};
use crate::cache::Cache;
use crate::explain::attempt as explain;
use crate::explain::FilterWindow;
use crate::runtime::batch::FilterScratch;
use crate::runtime::Framework;
use crate::scratch;

/// Upstream `findNodesThatFitPod`: PreFilter, the nominated node first, then Filter over the
/// candidate nodes. Returns indices into the cache's node list.
pub(super) fn find_nodes_that_fit(
    ctx: &mut Ctx<'_>,
    fwk: &Framework,
    state: &mut CycleState,
    pod: &Shared<Pod>,
    mut obs: Option<&mut explain::Observer>,
) -> Result<(Vec<usize>, Diagnosis), Failure> {
    let mut diagnosis = Diagnosis::default();
    let (pre_res, s, plugins_with_nodes) = {
        let h = ctx.handle(fwk);
        fwk.run_pre_filter(state, pod, &h)
    };
    if let Some(o) = obs.as_deref_mut() {
        o.pre_filter(state, &pre_res, &s, &plugins_with_nodes);
    }
    if !s.is_success() {
        if !s.is_rejected() {
            return Err(Failure::error(s.message()));
        }
        diagnosis.add_plugin_status(&s);
        diagnosis.pre_filter_msg = s.message();
        diagnosis.node_to_status.set_absent_nodes_status(s);
        return Ok((Vec::new(), diagnosis));
    }
    let cache: &Cache = &*ctx.cache;
    let skips = fwk.filter_skips(state);
    // The nominated node when it was tried and rejected: upstream's NodeToStatus lists it, so it
    // counts in the next start index even if the search below does not visit it.
    let mut nominated_rejected: Option<usize> = None;
    // The nominated node first (upstream evaluateNominatedNode).
    if let Some(nom) = pod
        .status
        .nominated_node_name
        .as_deref()
        .filter(|n| !n.is_empty())
    {
        let allowed = pre_res
            .node_names
            .as_ref()
            .is_none_or(|set| set.contains(nom));
        let index = cache.node_index(nom);
        if let Some(o) = obs.as_deref_mut().filter(|_| !allowed || index.is_none()) {
            o.nominated(nom, allowed, index, None);
        }
        if let (true, Some(idx)) = (allowed, index) {
            let node = &cache.node_infos()[idx];
            let st = fwk.run_filter_with_nominated(
                state,
                pod,
                node,
                &skips,
                ctx.nominator.pods_for_node(nom),
            );
            if let Some(o) = obs.as_deref_mut() {
                o.nominated(nom, true, Some(idx), Some(&st));
            }
            if st.is_success() {
                return Ok((vec![idx], diagnosis));
            }
            if st.is_rejected() {
                diagnosis.add_plugin_status(&st);
                diagnosis.node_to_status.set(nom, st);
                nominated_rejected = Some(idx);
            } else {
                // Upstream logs "Evaluation failed on nominated node" and searches every node.
                tracing::error!(pod = %pod.key(), node = nom, status = %st, "evaluation failed on nominated node");
            }
        }
    }
    // `None`: every node, without listing them (position k of the candidates is node k).
    let candidates: Option<Vec<usize>> = match &pre_res.node_names {
        None => None,
        Some(set) => {
            diagnosis
                .node_to_status
                .set_absent_nodes_status(Status::unresolvable(format!(
                    "node(s) didn't satisfy plugin(s) [{}]",
                    plugins_with_nodes.join(" ")
                )));
            let mut v: Vec<usize> = set.iter().filter_map(|n| cache.node_index(n)).collect();
            v.sort_unstable();
            if let Some(o) = obs.as_deref_mut() {
                o.candidates(&v);
            }
            Some(v)
        }
    };
    let n = candidates.as_ref().map_or(cache.num_nodes(), Vec::len);
    let num_all = cache.num_nodes();
    if n == 0 {
        advance_start_index(
            ctx.next_start_node_index,
            num_all,
            0,
            0,
            nominated_rejected.is_some(),
        );
        return Ok((Vec::new(), diagnosis));
    }
    let pct = fwk
        .percentage_of_nodes_to_score()
        .unwrap_or(ctx.global_percentage);
    let want = num_feasible_nodes_to_find(pct, n);
    let start = *ctx.next_start_node_index % n;
    if let Some(o) = obs.as_deref_mut() {
        o.window(FilterWindow {
            candidates: n,
            percentage_of_nodes_to_score: pct,
            num_feasible_nodes_to_find: want,
            start_index: start,
            evaluated: 0,
        });
    }
    // Whether the search visited the nominated node, given how many nodes it visited from
    // `start` (not counting a node whose Filter failed with an error).
    let nominated_unvisited = |visited: usize| {
        nominated_rejected.is_some_and(|idx| {
            let pos = match &candidates {
                None => Some(idx),
                Some(c) => c.binary_search(&idx).ok(),
            };
            pos.is_none_or(|p| (p + n - start) % n >= visited)
        })
    };
    let mut feasible: Vec<usize> = scratch::take();
    let mut processed = 0;
    let nodes = cache.node_infos();
    // The fused node pass (runtime/fused.rs) when plugins offer kernels and no pod is nominated:
    // the same feasible nodes, statuses and next start index.
    // An explained attempt takes the per-node path, which reports every verdict.
    if ctx.nominator.is_empty() && obs.is_none() {
        if let Some(plan) = fwk.fused_filter(state, pod, &skips, nodes) {
            let mut rejected: Vec<(usize, Status)> = Vec::new();
            let mut deferred: Vec<usize> = scratch::take();
            let search = fwk.find_feasible_fused(
                &plan,
                state,
                pod,
                &skips,
                cache.node_arrays(),
                nodes,
                candidates.as_deref(),
                start,
                want,
                &mut feasible,
                &mut rejected,
                &mut deferred,
            );
            if let Some(k) = search.error {
                // Upstream keeps no feasible node and no status for the failing one.
                let rejected_before = k + deferred.len();
                let unvisited = nominated_unvisited(search.processed - 1);
                advance_start_index(
                    ctx.next_start_node_index,
                    num_all,
                    0,
                    rejected_before,
                    unvisited,
                );
                scratch::give(deferred);
                return Err(Failure::error(rejected[k].1.message()));
            }
            let unvisited = nominated_unvisited(search.processed);
            let rejected_count = rejected.len() + deferred.len();
            advance_start_index(
                ctx.next_start_node_index,
                num_all,
                feasible.len(),
                rejected_count,
                unvisited,
            );
            if feasible.is_empty() {
                // The statuses a gate left uncomputed: upstream's first failing plugin. The
                // diagnosis is keyed by node, so the order of the two lists does not matter.
                let gated = deferred
                    .iter()
                    .map(|&idx| (idx, fwk.run_filter(state, pod, &nodes[idx], &skips)));
                record_rejections(&mut diagnosis, nodes, rejected.into_iter().chain(gated))?;
            }
            scratch::give(deferred);
            return Ok((feasible, diagnosis));
        }
    }
    // Nodes are filtered in chunks, plugin by plugin (Framework::filter_chunk); the chunk is as
    // large as the number of feasible nodes still wanted, so nothing past the node where
    // upstream's sequential search stops is looked at more than once per chunk, and the outcome
    // (feasible nodes, statuses, next start index) is the node-by-node one.
    let mut buffers = FilterScratch::pooled();
    let mut chunk: Vec<&NodeInfo> = scratch::take();
    let mut chunk_idx: Vec<usize> = scratch::take();
    let mut failed: Vec<(usize, Status)> = Vec::new();
    let mut rejected: Vec<(usize, Status)> = Vec::new();
    let mut i = 0;
    'chunks: while i < n {
        let size = (want - feasible.len()).max(MIN_FILTER_CHUNK).min(n - i);
        chunk.clear();
        chunk_idx.clear();
        failed.clear();
        for k in i..i + size {
            let pos = (start + k) % n;
            let idx = candidates.as_ref().map_or(pos, |c| c[pos]);
            chunk_idx.push(idx);
            chunk.push(&nodes[idx]);
        }
        if ctx.nominator.is_empty() {
            fwk.filter_chunk(state, pod, &chunk, &skips, &mut buffers, &mut failed);
        } else {
            for (pos, node) in chunk.iter().enumerate() {
                let st = fwk.run_filter_with_nominated(
                    state,
                    pod,
                    node,
                    &skips,
                    ctx.nominator.pods_for_node(node.name()),
                );
                if !st.is_success() {
                    failed.push((pos, st));
                }
            }
        }
        let mut statuses = failed.drain(..).peekable();
        for (pos, &idx) in chunk_idx.iter().enumerate() {
            processed += 1;
            let status = statuses.next_if(|(p, _)| *p == pos);
            if let Some(o) = obs.as_deref_mut() {
                o.filtered(idx, status.as_ref().map(|(_, st)| st));
            }
            match status {
                Some((_, st)) if st.is_rejected() => rejected.push((idx, st)),
                Some((_, st)) => {
                    if let Some(o) = obs.as_deref_mut() {
                        o.stopped(true);
                    }
                    let unvisited = nominated_unvisited(processed - 1);
                    advance_start_index(
                        ctx.next_start_node_index,
                        num_all,
                        0,
                        rejected.len(),
                        unvisited,
                    );
                    return Err(Failure::error(st.message()));
                }
                None => {
                    feasible.push(idx);
                    if feasible.len() >= want {
                        if let Some(o) = obs.as_deref_mut() {
                            o.stopped(false);
                        }
                        break 'chunks;
                    }
                }
            }
        }
        i += size;
    }
    buffers.release();
    scratch::give(chunk);
    scratch::give(chunk_idx);
    let unvisited = nominated_unvisited(processed);
    advance_start_index(
        ctx.next_start_node_index,
        num_all,
        feasible.len(),
        rejected.len(),
        unvisited,
    );
    if feasible.is_empty() {
        record_rejections(&mut diagnosis, nodes, rejected.into_iter())?;
    }
    Ok((feasible, diagnosis))
}

/// Upstream's `nextStartNodeIndex` update in `findNodesThatFitPod`: advanced by the feasible
/// nodes plus the nodes with a status in NodeToStatus (the rejected ones of the search, and the
/// rejected nominated node when the search did not visit it), modulo the number of all nodes
/// (not of the PreFilterResult's candidates; the search starts at the index modulo the
/// candidates). Also done when a Filter failed with an error (then with no feasible node).
fn advance_start_index(
    next: &mut usize,
    num_all_nodes: usize,
    feasible: usize,
    rejected: usize,
    nominated_unvisited: bool,
) {
    if num_all_nodes > 0 {
        let processed = feasible + rejected + usize::from(nominated_unvisited);
        *next = (*next + processed) % num_all_nodes;
    }
}

/// Records the rejected nodes' statuses in the diagnosis (upstream does so as it filters; only
/// a pod that fits nowhere reads them, so they are recorded only then). A status that is not a
/// rejection is an error of the attempt.
fn record_rejections(
    diagnosis: &mut Diagnosis,
    nodes: &[NodeInfo],
    rejected: impl Iterator<Item = (usize, Status)>,
) -> Result<(), Failure> {
    for (idx, st) in rejected {
        if st.is_success() {
            return Err(Failure::error(format!(
                "internal error: node {:?} was rejected by a Filter gate but passes every Filter plugin",
                nodes[idx].name()
            )));
        }
        if !st.is_rejected() {
            return Err(Failure::error(st.message()));
        }
        diagnosis.add_plugin_status(&st);
        diagnosis.node_to_status.set(nodes[idx].name(), st);
    }
    Ok(())
}

/// The smallest chunk of nodes filtered at once (see `find_nodes_that_fit`).
const MIN_FILTER_CHUNK: usize = 32;
