//! The Filter and Score phases over many nodes at once: [`Framework::filter_chunk`] and
//! [`Framework::score_batch`]. Same plugins, order, statuses, arithmetic and error messages as the
//! per-node [`Framework::run_filter`] and [`Framework::run_score`] (upstream
//! `pkg/scheduler/framework/runtime/framework.go` `RunFilterPlugins`, `RunScorePlugins`), but the
//! loop runs plugin by plugin over a slice of nodes, through the plugins'
//! [`FilterPlugin::filter_nodes`](k8s_types::framework::FilterPlugin::filter_nodes) and
//! [`ScorePlugin::score_nodes`](k8s_types::framework::ScorePlugin::score_nodes): one dynamic call
//! and one cycle-state read per plugin per slice instead of per node, and tight loops over the
//! nodes for plugins that implement them. A node rejected by one Filter plugin is not passed to
//! the next, so each node's status is the first failing plugin's, as upstream.

use k8s_types::core::Pod;
use k8s_types::framework::{
    CycleState, NodeInfo, NodeScore, Status, MAX_NODE_SCORE, MIN_NODE_SCORE,
};

use super::Framework;

/// Reusable buffers of [`Framework::filter_chunk`].
#[derive(Debug, Default)]
pub struct FilterScratch<'a> {
    alive: Vec<&'a NodeInfo>,
    alive_pos: Vec<usize>,
    failed: Vec<(usize, Status)>,
}

/// Reusable buffers of [`Framework::score_batch`].
#[derive(Debug, Default)]
pub struct ScoreScratch<'a> {
    raw: Vec<i64>,
    normalized: Vec<NodeScore<'a>>,
    /// The weighted total per node after [`Framework::score_batch`].
    pub totals: Vec<i64>,
}

impl Framework {
    /// Runs the Filter plugins (except those skipped in this attempt, `skips` as from
    /// [`Framework::filter_skips`]) on `nodes`. Appends `(i, status)` to `failed` for every
    /// `nodes[i]` that did not pass, in increasing `i`, with the status [`Framework::run_filter`]
    /// returns for it.
    pub fn filter_chunk<'a>(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&'a NodeInfo],
        skips: &[bool],
        scratch: &mut FilterScratch<'a>,
        failed: &mut Vec<(usize, Status)>,
    ) {
        let start = failed.len();
        scratch.alive.clear();
        scratch.alive.extend_from_slice(nodes);
        scratch.alive_pos.clear();
        scratch.alive_pos.extend(0..nodes.len());
        for (i, p) in self.filter.iter().enumerate() {
            if scratch.alive.is_empty() {
                break;
            }
            if skips.get(i).copied().unwrap_or(false) {
                continue;
            }
            let Some(f) = p.as_filter() else {
                continue;
            };
            scratch.failed.clear();
            f.filter_nodes(state, pod, &scratch.alive, &mut scratch.failed);
            if scratch.failed.is_empty() {
                continue;
            }
            let mut write = 0;
            let mut next_failed = scratch.failed.drain(..).peekable();
            for read in 0..scratch.alive.len() {
                if next_failed.peek().is_some_and(|(r, _)| *r == read) {
                    if let Some((_, s)) = next_failed.next() {
                        let s = if s.is_rejected() {
                            s
                        } else {
                            Status::error(format!(
                                "running {:?} filter plugin: {}",
                                p.name(),
                                s.message()
                            ))
                        };
                        failed.push((scratch.alive_pos[read], s.with_plugin(p.name())));
                    }
                } else {
                    scratch.alive[write] = scratch.alive[read];
                    scratch.alive_pos[write] = scratch.alive_pos[read];
                    write += 1;
                }
            }
            scratch.alive.truncate(write);
            scratch.alive_pos.truncate(write);
        }
        failed[start..].sort_by_key(|(i, _)| *i);
    }

    /// Runs PreScore-surviving Score plugins on `nodes`, normalizes and weights their scores like
    /// [`Framework::run_score`]; the totals are left in `scratch.totals` (in `nodes` order).
    ///
    /// # Errors
    /// The statuses [`Framework::run_score`] returns.
    pub fn score_batch<'a>(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&'a NodeInfo],
        scratch: &mut ScoreScratch<'a>,
    ) -> Result<(), Status> {
        let n = nodes.len();
        scratch.totals.clear();
        scratch.totals.resize(n, 0);
        scratch.raw.clear();
        scratch.raw.resize(n, 0);
        scratch.normalized.clear();
        let skip = state.skip_score_plugins();
        for (p, weight) in &self.score {
            if !skip.is_empty() && skip.contains(p.name()) {
                continue;
            }
            let Some(sp) = p.as_score() else {
                continue;
            };
            if let Err(s) = sp.score_nodes(state, pod, nodes, &mut scratch.raw) {
                return Err(Status::error(format!(
                    "running Score plugins: plugin {:?} failed with: {}",
                    p.name(),
                    s.message()
                )));
            }
            if scratch.normalized.is_empty() {
                scratch
                    .normalized
                    .extend(nodes.iter().map(|node| NodeScore {
                        name: node.name(),
                        score: 0,
                    }));
            }
            for (ns, raw) in scratch.normalized.iter_mut().zip(&scratch.raw) {
                ns.score = *raw;
            }
            let s = sp.normalize_score(state, pod, &mut scratch.normalized);
            if !s.is_success() {
                return Err(Status::error(format!(
                    "running Normalize on Score plugins: plugin {:?} failed with: {}",
                    p.name(),
                    s.message()
                )));
            }
            for (ns, total) in scratch.normalized.iter().zip(scratch.totals.iter_mut()) {
                if ns.score < MIN_NODE_SCORE || ns.score > MAX_NODE_SCORE {
                    return Err(Status::error(format!(
                        "applying score defaultWeights on Score plugins: plugin {:?} returns an invalid score {}, it should in the range of [{}, {}] after normalizing",
                        p.name(),
                        ns.score,
                        MIN_NODE_SCORE,
                        MAX_NODE_SCORE
                    )));
                }
                *total += ns.score * weight;
            }
        }
        Ok(())
    }
}
