//! Recording one [`Explanation`]: an [`Observer`] the scheduling cycle calls at each step of the
//! real attempt of the explained pod (upstream `schedulePod`: `findNodesThatFitPod` with PreFilter,
//! `evaluateNominatedNode`, `findNodesThatPassFilters` with `numFeasibleNodesToFind` and the
//! rotating start index; then `prioritizeNodes` and `selectHost`, all in
//! `pkg/scheduler/schedule_one.go`). Nothing is run twice: the observed attempt takes the
//! per-node Filter path and the per-plugin Score path (`run_score_explained`), which give the same
//! feasible nodes, statuses, totals and choice as the fused and batched paths by construction
//! (checked by `tests/fused_equivalence.rs`), so every verdict and score is the real one. Also the
//! hook the scheduling cycle calls to append outcomes.

use k8s_sched_framework::{CycleState, NodeInfo, PreFilterResult, Status};
use k8s_types::core::Pod;
use k8s_types::scheduling::PodGroup;
use k8s_types::Tick;

use super::{
    Explanation, FilterWindow, NodeFilter, NodeScores, NodeVerdict, NominatedNode, PluginScore,
    PodKey, PreFilterExplanation, StatusView,
};
use crate::plugins::coscheduling_fit::{self, GangFit};
use crate::runtime::handle::CycleHandle;
use crate::runtime::score_explain::PluginScores;

/// Why nodes were not filtered after PreFilter rejected the pod.
pub const NOTE_PRE_FILTER_REJECTED: &str = "PreFilter rejected the pod";
/// Why nodes were not filtered when the nominated node fits.
pub const NOTE_NOMINATED_NODE_FITS: &str = "the nominated node fits";
/// Why nodes were not filtered after a Filter plugin error.
pub const NOTE_FILTER_ERROR: &str = "a Filter plugin failed with an error";
/// Why the nominated node was not evaluated first: the PreFilterResult excludes it.
pub const NOTE_NOMINATED_NOT_IN_PRE_FILTER_RESULT: &str = "not in the PreFilterResult";
/// Why the nominated node was not evaluated first: it is not in the snapshot.
pub const NOTE_NOMINATED_NOT_FOUND: &str = "node not found";
/// Score note when exactly one node is feasible (upstream returns it without scoring).
pub const NOTE_ONE_FEASIBLE_NODE: &str =
    "one feasible node: PreScore and Score are not run (upstream schedulePod)";

/// The gang's feasibility for a member of an existing PodGroup.
pub(crate) fn gang_fit(h: &CycleHandle<'_>, pod: &Pod) -> Option<GangFit> {
    use k8s_sched_framework::Handle;
    use k8s_types::apiserver::ApiExt;
    let name = pod.pod_group().filter(|n| !n.is_empty())?;
    let pg = h
        .client()
        .get_typed::<PodGroup>(pod.metadata.namespace(), name)
        .ok()?;
    Some(coscheduling_fit::assess(h, pod, &pg))
}

fn verdict(s: &Status) -> NodeVerdict {
    if s.is_success() {
        NodeVerdict::Success
    } else {
        NodeVerdict::Rejected(StatusView::from(s))
    }
}

/// What the scheduling cycle reports while it runs an attempt of the explained pod; it becomes
/// that attempt's [`Explanation`] ([`Observer::finish`]). Each method is one step of the cycle,
/// called where the cycle takes it.
pub(crate) struct Observer {
    e: Explanation,
    /// Per node of the snapshot (name order): its verdict once known.
    verdicts: Vec<Option<NodeVerdict>>,
    /// What the nodes without a verdict get when the explanation is finished.
    rest: NodeVerdict,
}

impl Observer {
    /// Starts the explanation of attempt number `attempt` of `pod` by profile `profile` at tick
    /// `tick`, on a snapshot of `num_nodes` nodes, before PreFilter.
    pub(crate) fn start(
        pod: &Pod,
        attempt: u32,
        tick: Tick,
        profile: &str,
        num_nodes: usize,
        gang: Option<GangFit>,
    ) -> Observer {
        Observer {
            e: Explanation {
                pod: PodKey::new(pod.metadata.namespace(), pod.metadata.name.clone()),
                attempt,
                tick,
                profile: profile.to_string(),
                num_nodes,
                pre_filter: PreFilterExplanation::default(),
                nominated_node: None,
                window: None,
                nodes: Vec::new(),
                pre_score: None,
                score_note: None,
                scores: Vec::new(),
                predicted: None,
                outcomes: Vec::new(),
                gang,
            },
            verdicts: vec![None; num_nodes],
            rest: NodeVerdict::NotEvaluated(String::new()),
        }
    }

    /// PreFilter ran: its merged status, result and the plugins that restricted the nodes.
    pub(crate) fn pre_filter(
        &mut self,
        state: &CycleState,
        result: &PreFilterResult,
        status: &Status,
        restricted_by: &[String],
    ) {
        self.e.pre_filter = PreFilterExplanation {
            status: (!status.is_success()).then(|| StatusView::from(status)),
            node_names: result
                .node_names
                .as_ref()
                .map(|set| set.iter().cloned().collect()),
            restricted_by: restricted_by.to_vec(),
            skipped_filter_plugins: state.skip_filter_plugins().iter().cloned().collect(),
        };
        if !status.is_success() {
            self.rest = NodeVerdict::NotEvaluated(NOTE_PRE_FILTER_REJECTED.to_string());
        }
    }

    /// The nominated node `node` (at `index` in the snapshot, when it is there and the
    /// PreFilterResult allows it) was evaluated first with `status` (`None`: not evaluated).
    pub(crate) fn nominated(
        &mut self,
        node: &str,
        allowed: bool,
        index: Option<usize>,
        status: Option<&Status>,
    ) {
        let v = match (allowed, index, status) {
            (true, Some(idx), Some(st)) => {
                self.verdicts[idx] = Some(verdict(st));
                if st.is_success() {
                    self.rest = NodeVerdict::NotEvaluated(NOTE_NOMINATED_NODE_FITS.to_string());
                }
                verdict(st)
            }
            (false, _, _) => {
                NodeVerdict::NotEvaluated(NOTE_NOMINATED_NOT_IN_PRE_FILTER_RESULT.to_string())
            }
            _ => NodeVerdict::NotEvaluated(NOTE_NOMINATED_NOT_FOUND.to_string()),
        };
        self.e.nominated_node = Some(NominatedNode {
            node: node.to_string(),
            verdict: v,
        });
    }

    /// The PreFilterResult's candidates (indices, sorted): every other node is marked as not
    /// in it.
    pub(crate) fn candidates(&mut self, candidates: &[usize]) {
        for (i, slot) in self.verdicts.iter_mut().enumerate() {
            if candidates.binary_search(&i).is_err() {
                *slot = Some(NodeVerdict::NotInPreFilterResult);
            }
        }
    }

    /// How the Filter search walks the candidates (set before it starts).
    pub(crate) fn window(&mut self, window: FilterWindow) {
        self.e.window = Some(window);
    }

    /// The search evaluated node `index`: `None` is Success.
    pub(crate) fn filtered(&mut self, index: usize, status: Option<&Status>) {
        self.verdicts[index] = Some(status.map_or(NodeVerdict::Success, verdict));
        if let Some(w) = self.e.window.as_mut() {
            w.evaluated += 1;
        }
    }

    /// The search stopped early: it found enough feasible nodes (`error` false) or a Filter
    /// plugin failed with an error; the candidates it did not reach get that reason.
    pub(crate) fn stopped(&mut self, error: bool) {
        let v = if error {
            NodeVerdict::NotEvaluated(NOTE_FILTER_ERROR.to_string())
        } else {
            NodeVerdict::SkippedByPercentageOfNodesToScore
        };
        for slot in self.verdicts.iter_mut().filter(|s| s.is_none()) {
            *slot = Some(v.clone());
        }
    }

    /// Exactly one node is feasible: upstream selects it without PreScore and Score.
    pub(crate) fn one_feasible(&mut self, node: &str) {
        self.e.score_note = Some(NOTE_ONE_FEASIBLE_NODE.to_string());
        self.e.predicted = Some(node.to_string());
    }

    /// PreScore failed with `status`.
    pub(crate) fn pre_score_failed(&mut self, status: &Status) {
        self.e.pre_score = Some(StatusView::from(status));
    }

    /// Score failed with `status`.
    pub(crate) fn score_failed(&mut self, status: &Status) {
        self.e.score_note = Some(status.message());
    }

    /// Score ran on `nodes` (the feasible ones, in search order) with these per-plugin scores;
    /// returns each node's total (the sum of the weighted scores), in the same order.
    pub(crate) fn scored(&mut self, nodes: &[&NodeInfo], per_plugin: &[PluginScores]) -> Vec<i64> {
        let mut rows: Vec<NodeScores> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let plugins: Vec<PluginScore> = per_plugin
                    .iter()
                    .map(|p| PluginScore {
                        plugin: p.plugin.clone(),
                        raw: p.raw.get(i).copied().unwrap_or(0),
                        normalized: p.normalized.get(i).copied().unwrap_or(0),
                        weight: p.weight,
                        weighted: p.weighted(i),
                        skipped: p.skipped,
                    })
                    .collect();
                NodeScores {
                    node: n.name().to_string(),
                    total: plugins.iter().map(|p| p.weighted).sum(),
                    plugins,
                }
            })
            .collect();
        let totals: Vec<i64> = rows.iter().map(|r| r.total).collect();
        // Highest total first; among equals the name sorting last first (it is the one selected).
        rows.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| b.node.cmp(&a.node)));
        self.e.predicted = rows.first().map(|r| r.node.clone());
        self.e.scores = rows;
        totals
    }

    /// The explanation, every node listed in name order with its verdict.
    pub(crate) fn finish(mut self, nodes: &[NodeInfo]) -> Explanation {
        let rest = self.rest;
        self.e.nodes = nodes
            .iter()
            .zip(self.verdicts)
            .map(|(n, v)| NodeFilter {
                node: n.name().to_string(),
                verdict: v.unwrap_or_else(|| rest.clone()),
            })
            .collect();
        self.e
    }
}
