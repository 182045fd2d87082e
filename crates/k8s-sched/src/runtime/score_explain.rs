//! [`Framework::run_score_explained`]: the Score phase of one attempt with every intermediate
//! value kept (raw score, normalized score, weight, weighted score, per plugin and node), for
//! `--explain`. Same arithmetic, order and errors as [`Framework::run_score`] (upstream
//! `pkg/scheduler/framework/runtime/framework.go` `RunScorePlugins`: Score per node, then
//! NormalizeScore, then the weight), which stays the allocation-light path used when nothing is
//! being explained.

use k8s_sched_framework::{
    CycleState, NodeInfo, NodeScore, Status, MAX_NODE_SCORE, MIN_NODE_SCORE,
};
use k8s_types::core::Pod;

use super::Framework;

/// One Score plugin's contribution to every scored node (indices follow the `nodes` argument).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginScores {
    /// The plugin's name, e.g. `NodeResourcesFit`.
    pub plugin: String,
    /// The profile's weight for the plugin (upstream `scorePluginWeight`; unset or 0 counts as 1).
    pub weight: i64,
    /// True when its PreScore returned Skip: the plugin scored nothing and adds 0.
    pub skipped: bool,
    /// `Score` per node, before NormalizeScore (empty when skipped).
    pub raw: Vec<i64>,
    /// The score per node after NormalizeScore, in `[0, 100]` (empty when skipped).
    pub normalized: Vec<i64>,
}

impl PluginScores {
    /// `normalized * weight` of node `i` (0 when skipped).
    pub fn weighted(&self, i: usize) -> i64 {
        self.normalized.get(i).copied().unwrap_or(0) * self.weight
    }
}

impl Framework {
    /// Runs every Score plugin on `nodes` like [`Framework::run_score`], keeping the raw and
    /// normalized scores. The totals are `sum(weighted)` per node.
    ///
    /// # Errors
    /// The same statuses as [`Framework::run_score`]: a plugin error, or a normalized score
    /// outside `[0, 100]`.
    pub fn run_score_explained(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
    ) -> Result<Vec<PluginScores>, Status> {
        let skip = state.skip_score_plugins();
        let mut out = Vec::with_capacity(self.score.len());
        for (p, weight) in &self.score {
            let mut entry = PluginScores {
                plugin: p.name().to_string(),
                weight: *weight,
                skipped: false,
                raw: Vec::new(),
                normalized: Vec::new(),
            };
            if skip.contains(p.name()) {
                entry.skipped = true;
                out.push(entry);
                continue;
            }
            let Some(sp) = p.as_score() else {
                continue;
            };
            let mut scores: Vec<NodeScore<'_>> = Vec::with_capacity(nodes.len());
            for n in nodes {
                match sp.score(state, pod, n) {
                    Ok(v) => scores.push(NodeScore {
                        name: n.name(),
                        score: v,
                    }),
                    Err(s) => {
                        return Err(Status::error(format!(
                            "running Score plugins: plugin {:?} failed with: {}",
                            p.name(),
                            s.message()
                        )))
                    }
                }
            }
            entry.raw = scores.iter().map(|s| s.score).collect();
            let s = sp.normalize_score(state, pod, &mut scores);
            if !s.is_success() {
                return Err(Status::error(format!(
                    "running Normalize on Score plugins: plugin {:?} failed with: {}",
                    p.name(),
                    s.message()
                )));
            }
            for ns in &scores {
                if ns.score < MIN_NODE_SCORE || ns.score > MAX_NODE_SCORE {
                    return Err(Status::error(format!(
                        "applying score defaultWeights on Score plugins: plugin {:?} returns an invalid score {}, it should in the range of [{}, {}] after normalizing",
                        p.name(),
                        ns.score,
                        MIN_NODE_SCORE,
                        MAX_NODE_SCORE
                    )));
                }
            }
            entry.normalized = scores.iter().map(|s| s.score).collect();
            out.push(entry);
        }
        Ok(out)
    }
}
