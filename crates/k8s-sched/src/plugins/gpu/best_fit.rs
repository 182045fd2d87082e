//! BestFitScore (Score + NormalizeScore): the FGD paper's *BestFit* baseline (simulator
//! `pkg/simulator/plugin/best_fit_score.go` `getBestFitScore` and `plugin_utils.go`
//! `NormalizeScore`): the raw score is `int(100 * (1 - (0.5 * (free CPU - request) / 128 CPUs +
//! 0.5 * (free GPU - request) / 8 GPUs)))`, i.e. the node left with the least free (CPU, GPU) is
//! best; the raw scores of the feasible nodes are then rescaled linearly to `[0, 100]` (all 0 when
//! they are equal).

use std::sync::Arc;

use k8s_sched_framework::{
    CycleState, NodeInfo, NodeScore, Plugin, PreScorePlugin, ScorePlugin, Status, MAX_NODE_SCORE,
    MIN_NODE_SCORE,
};
use k8s_types::core::Pod;

use super::names;
use super::shape::{NodeView, PodShape, MAX_SPEC_CPU, MAX_SPEC_GPU};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// CycleState key of the pod's shape.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreBestFitScore";

/// The BestFitScore plugin.
#[derive(Debug, Default)]
pub struct BestFitScore;

impl BestFitScore {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(BestFitScore))
    }
}

/// The raw best-fit score, or `None` when the free CPU or GPU is smaller than the request.
pub fn best_fit_raw(view: &NodeView<'_>, shape: &PodShape) -> Option<i64> {
    let free = [view.cpu_left as f64, view.total_gpu_left() as f64];
    let req = [shape.milli_cpu as f64, shape.total_milli_gpu() as f64];
    let spec = [MAX_SPEC_CPU as f64, MAX_SPEC_GPU as f64];
    let mut s = 0.0;
    for i in 0..2 {
        if free[i] < req[i] {
            return None;
        }
        s += (free[i] - req[i]) / spec[i] * 0.5;
    }
    Some(((1.0 - s) * MAX_NODE_SCORE as f64) as i64)
}

/// The simulator's `NormalizeScore`: min-max rescaling to `[0, 100]`, all 0 when equal.
pub fn normalize_min_max(scores: &mut [NodeScore<'_>]) {
    let hi = scores.iter().map(|s| s.score).max().unwrap_or(0);
    let lo = scores.iter().map(|s| s.score).min().unwrap_or(0);
    let range = hi - lo;
    for s in scores.iter_mut() {
        s.score = if range == 0 {
            MIN_NODE_SCORE
        } else {
            (s.score - lo) * (MAX_NODE_SCORE - MIN_NODE_SCORE) / range + MIN_NODE_SCORE
        };
    }
}

impl Plugin for BestFitScore {
    fn name(&self) -> &str {
        names::BEST_FIT_SCORE
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreScorePlugin for BestFitScore {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        state.write(PRE_SCORE_STATE_KEY, PodShape::of(pod));
        Status::success()
    }
}

impl ScorePlugin for BestFitScore {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let stored = state.read_or_compute(PRE_SCORE_STATE_KEY, || PodShape::of(pod));
        let shape: &PodShape = &stored;
        best_fit_raw(&NodeView::of(node), shape).ok_or_else(|| {
            Status::error(format!(
                "the score between node({}) and pod({}) is negative, should not happen",
                node.name(),
                pod.metadata.name
            ))
        })
    }

    fn normalize_score(
        &self,
        _state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore<'_>],
    ) -> Status {
        normalize_min_max(scores);
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::gpushare::GpuRequest;

    #[test]
    fn raw_scores_and_normalisation() {
        let pod = PodShape {
            milli_cpu: 16_000,
            gpu: GpuRequest {
                count: 1,
                milli: 1000,
            },
            models: String::new(),
        };
        let eight = [1000; 8];
        let idle = NodeView {
            cpu_left: 96_000,
            cpu_capacity: 96_000,
            gpu_left: &eight,
            model: None,
        };
        // 0.5 * 80000/128000 + 0.5 * 7000/8000 = 0.3125 + 0.4375 = 0.75 -> 25.
        assert_eq!(best_fit_raw(&idle, &pod), Some(25));
        let two = [1000, 0];
        let tight = NodeView {
            cpu_left: 16_000,
            cpu_capacity: 64_000,
            gpu_left: &two,
            model: None,
        };
        assert_eq!(best_fit_raw(&tight, &pod), Some(100));
        let short = NodeView {
            cpu_left: 1000,
            ..tight
        };
        assert_eq!(best_fit_raw(&short, &pod), None);
        let mut s = [
            NodeScore {
                name: "a",
                score: 25,
            },
            NodeScore {
                name: "b",
                score: 100,
            },
            NodeScore {
                name: "c",
                score: 40,
            },
        ];
        normalize_min_max(&mut s);
        assert_eq!(
            s.iter().map(|x| x.score).collect::<Vec<_>>(),
            vec![0, 100, 20]
        );
    }
}
