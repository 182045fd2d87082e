//! Computing one [`Explanation`]: upstream `schedulePod` step by step on the attempt's snapshot
//! (`findNodesThatFitPod`: PreFilter, `evaluateNominatedNode`, `findNodesThatPassFilters` with
//! `numFeasibleNodesToFind` and the rotating start index; then `prioritizeNodes` and
//! `selectHost`, all in `pkg/scheduler/schedule_one.go`), keeping every verdict and score. Runs
//! with a fresh cycle state just before the real attempt, using the same framework calls, so the
//! numbers are the ones the real attempt sees. Also the hooks the scheduling cycle calls to append
//! outcomes.

use std::sync::Arc;

use k8s_sched_framework::{CycleState, NodeInfo, Status};
use k8s_types::core::Pod;

use super::{
    Explanation, FilterWindow, NodeFilter, NodeScores, NodeVerdict, NominatedNode, Outcome,
    PluginScore, PodKey, PreFilterExplanation, StatusView,
};
use crate::plugins::coscheduling_fit::{self, GangFit};
use crate::runtime::handle::CycleHandle;
use crate::runtime::Framework;
use crate::schedule_one::{num_feasible_nodes_to_find, select_host, Ctx};
use k8s_types::scheduling::PodGroup;

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

/// Starts a new attempt of the explained pod: computes its [`Explanation`] and stores it.
/// Called once per attempt of that pod only.
pub(crate) fn begin(ctx: &mut Ctx<'_>, fwk: &Framework, pod: &Arc<Pod>) {
    let attempt = ctx.explain.as_deref().map_or(1, |x| x.next_attempt(pod));
    let e = explain(ctx, fwk, pod, attempt);
    if let Some(x) = ctx.explain.as_deref_mut() {
        x.begin(e);
    }
}

/// Appends an outcome of `pod` when it is the explained pod; `outcome` is only built then.
pub(crate) fn note(ctx: &mut Ctx<'_>, pod: &Pod, outcome: impl FnOnce() -> Outcome) {
    if let Some(x) = ctx.explain.as_deref_mut() {
        if x.wants(pod) {
            x.record(pod, ctx.now, outcome());
        }
    }
}

/// The gang's feasibility for a member of an existing PodGroup.
fn gang_fit(h: &CycleHandle<'_>, pod: &Pod) -> Option<GangFit> {
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

/// Computes the explanation of one attempt of `pod` with profile `fwk` on the current snapshot.
fn explain(ctx: &mut Ctx<'_>, fwk: &Framework, pod: &Arc<Pod>, attempt: u32) -> Explanation {
    let mut e = Explanation {
        pod: PodKey::new(pod.metadata.namespace(), pod.metadata.name.clone()),
        attempt,
        tick: ctx.now,
        profile: fwk.scheduler_name().to_string(),
        num_nodes: ctx.cache.num_nodes(),
        pre_filter: PreFilterExplanation::default(),
        nominated_node: None,
        window: None,
        nodes: Vec::new(),
        pre_score: None,
        score_note: None,
        scores: Vec::new(),
        predicted: None,
        outcomes: Vec::new(),
        gang: None,
    };
    if e.num_nodes == 0 {
        return e;
    }
    let mut state = CycleState::new();
    let (pre_res, s, restricted_by) = {
        let h = CycleHandle {
            fwk,
            api: &mut *ctx.api,
            cache: &*ctx.cache,
            waiting: &mut *ctx.waiting,
            nominator: &*ctx.nominator,
            now: ctx.now,
        };
        e.gang = gang_fit(&h, pod);
        fwk.run_pre_filter(&mut state, pod, &h)
    };
    e.pre_filter = PreFilterExplanation {
        status: (!s.is_success()).then(|| StatusView::from(&s)),
        node_names: pre_res
            .node_names
            .as_ref()
            .map(|set| set.iter().cloned().collect()),
        restricted_by,
        skipped_filter_plugins: state.skip_filter_plugins().iter().cloned().collect(),
    };
    let nodes = ctx.cache.node_infos();
    let mut verdicts: Vec<Option<NodeVerdict>> = vec![None; nodes.len()];
    let finish = |e: &mut Explanation, verdicts: Vec<Option<NodeVerdict>>, rest: &str| {
        e.nodes = nodes
            .iter()
            .zip(verdicts)
            .map(|(n, v)| NodeFilter {
                node: n.name().to_string(),
                verdict: v.unwrap_or_else(|| NodeVerdict::NotEvaluated(rest.to_string())),
            })
            .collect();
    };
    if !s.is_success() {
        finish(&mut e, verdicts, NOTE_PRE_FILTER_REJECTED);
        return e;
    }
    let skips = fwk.filter_skips(&state);

    // The nominated node first.
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
        match (allowed, ctx.cache.node_index(nom)) {
            (true, Some(idx)) => {
                let st = fwk.run_filter_with_nominated(
                    &state,
                    pod,
                    &nodes[idx],
                    &skips,
                    ctx.nominator.pods_for_node(nom),
                );
                e.nominated_node = Some(NominatedNode {
                    node: nom.to_string(),
                    verdict: verdict(&st),
                });
                if st.is_success() {
                    verdicts[idx] = Some(NodeVerdict::Success);
                    finish(&mut e, verdicts, NOTE_NOMINATED_NODE_FITS);
                    e.score_note = Some(NOTE_ONE_FEASIBLE_NODE.to_string());
                    e.predicted = Some(nom.to_string());
                    return e;
                }
                verdicts[idx] = Some(verdict(&st));
                if !st.is_rejected() {
                    finish(&mut e, verdicts, NOTE_FILTER_ERROR);
                    return e;
                }
            }
            (false, _) => {
                e.nominated_node = Some(NominatedNode {
                    node: nom.to_string(),
                    verdict: NodeVerdict::NotEvaluated(
                        NOTE_NOMINATED_NOT_IN_PRE_FILTER_RESULT.to_string(),
                    ),
                });
            }
            (true, None) => {
                e.nominated_node = Some(NominatedNode {
                    node: nom.to_string(),
                    verdict: NodeVerdict::NotEvaluated(NOTE_NOMINATED_NOT_FOUND.to_string()),
                });
            }
        }
    }

    let candidates: Vec<usize> = match &pre_res.node_names {
        None => (0..nodes.len()).collect(),
        Some(set) => {
            let mut v: Vec<usize> = set.iter().filter_map(|n| ctx.cache.node_index(n)).collect();
            v.sort_unstable();
            for (i, slot) in verdicts.iter_mut().enumerate() {
                if v.binary_search(&i).is_err() {
                    *slot = Some(NodeVerdict::NotInPreFilterResult);
                }
            }
            v
        }
    };
    let n = candidates.len();
    if n == 0 {
        finish(&mut e, verdicts, "");
        return e;
    }
    let pct = fwk
        .percentage_of_nodes_to_score()
        .unwrap_or(ctx.global_percentage);
    let want = num_feasible_nodes_to_find(pct, n);
    let start = *ctx.next_start_node_index % n;
    let mut feasible: Vec<usize> = Vec::new();
    let mut evaluated = 0;
    let mut stop: Option<NodeVerdict> = None;
    for i in 0..n {
        let idx = candidates[(start + i) % n];
        if let Some(v) = &stop {
            verdicts[idx] = Some(v.clone());
            continue;
        }
        evaluated += 1;
        let st = fwk.run_filter_with_nominated(
            &state,
            pod,
            &nodes[idx],
            &skips,
            ctx.nominator.pods_for_node(nodes[idx].name()),
        );
        verdicts[idx] = Some(verdict(&st));
        if st.is_success() {
            feasible.push(idx);
            if feasible.len() >= want {
                stop = Some(NodeVerdict::SkippedByPercentageOfNodesToScore);
            }
        } else if !st.is_rejected() {
            stop = Some(NodeVerdict::NotEvaluated(NOTE_FILTER_ERROR.to_string()));
        }
    }
    e.window = Some(FilterWindow {
        candidates: n,
        percentage_of_nodes_to_score: pct,
        num_feasible_nodes_to_find: want,
        start_index: start,
        evaluated,
    });
    let filter_error = matches!(stop, Some(NodeVerdict::NotEvaluated(_)));
    finish(&mut e, verdicts, "");
    if filter_error || feasible.is_empty() {
        return e;
    }
    if feasible.len() == 1 {
        e.score_note = Some(NOTE_ONE_FEASIBLE_NODE.to_string());
        e.predicted = Some(nodes[feasible[0]].name().to_string());
        return e;
    }
    let refs: Vec<&NodeInfo> = feasible.iter().map(|i| &nodes[*i]).collect();
    let s = {
        let h = CycleHandle {
            fwk,
            api: &mut *ctx.api,
            cache: &*ctx.cache,
            waiting: &mut *ctx.waiting,
            nominator: &*ctx.nominator,
            now: ctx.now,
        };
        fwk.run_pre_score(&mut state, pod, &refs, &h)
    };
    if !s.is_success() {
        e.pre_score = Some(StatusView::from(&s));
        return e;
    }
    let per_plugin = match fwk.run_score_explained(&state, pod, &refs) {
        Ok(p) => p,
        Err(s) => {
            e.score_note = Some(s.message());
            return e;
        }
    };
    let mut rows: Vec<NodeScores> = refs
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
    e.predicted = Some(select_host(&refs, &totals).to_string());
    // Highest total first; among equals the name sorting last first (it is the one selected).
    rows.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| b.node.cmp(&a.node)));
    e.scores = rows;
    e
}
