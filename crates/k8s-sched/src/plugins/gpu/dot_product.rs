//! DotProductScore (Score): Tetris' alignment heuristic (Grandl et al., SIGCOMM '14) as the FGD
//! paper's *DotProd* baseline (simulator `pkg/simulator/plugin/dot_product_score.go` with
//! `dimExtMethod: merge`, `normMethod: max`): the node's free (milli-CPU, total free milli-GPU) and
//! the pod's request, each divided by the largest node spec (128 CPUs, 8 GPUs), have dot product
//! `d`; the score is `int(100 * (1 - d / 2))`, so the node whose free resources align least with
//! the request (the tightest) wins. A node with too little CPU scores 0.

use std::sync::Arc;

use k8s_sched_framework::{
    CycleState, NodeInfo, Plugin, PreScorePlugin, ScorePlugin, Status, MAX_NODE_SCORE,
    MIN_NODE_SCORE,
};
use k8s_types::core::Pod;
use serde::Deserialize;

use super::names;
use super::shape::{NodeView, PodShape, MAX_SPEC_CPU, MAX_SPEC_GPU};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// CycleState key of the pod's shape.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreDotProductScore";

/// `pluginConfig` args (the simulator's names; only `merge` / `max` are implemented, the paper's
/// setting for DotProd).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DotProductArgs {
    /// GPU dimension handling: `merge` (default).
    #[serde(default)]
    pub dim_ext_method: String,
    /// Normalisation: `max` (default).
    #[serde(default)]
    pub norm_method: String,
}

/// The DotProductScore plugin.
#[derive(Debug, Default)]
pub struct DotProductScore;

impl DotProductScore {
    /// Factory.
    ///
    /// # Errors
    /// Undecodable args, or a method other than `merge` / `max`.
    pub fn factory(args: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let a: DotProductArgs = args.decode()?;
        if !matches!(a.dim_ext_method.as_str(), "" | "merge") {
            return Err(ConfigError::Decode {
                path: format!("{}.dimExtMethod", args.path),
                message: format!("only \"merge\" is implemented, got {:?}", a.dim_ext_method),
            });
        }
        if !matches!(a.norm_method.as_str(), "" | "max") {
            return Err(ConfigError::Decode {
                path: format!("{}.normMethod", args.path),
                message: format!("only \"max\" is implemented, got {:?}", a.norm_method),
            });
        }
        Ok(Arc::new(DotProductScore))
    }
}

/// The score of `shape` on `view`.
pub fn dot_product_score(view: &NodeView<'_>, shape: &PodShape) -> i64 {
    if view.cpu_left < shape.milli_cpu {
        return MIN_NODE_SCORE;
    }
    let cpu = |x: i64| x as f64 / MAX_SPEC_CPU as f64;
    let gpu = |x: i64| x as f64 / MAX_SPEC_GPU as f64;
    let d = cpu(view.cpu_left) * cpu(shape.milli_cpu)
        + gpu(view.total_gpu_left()) * gpu(shape.total_milli_gpu());
    (MAX_NODE_SCORE as f64 * (1.0 - d / 2.0)) as i64
}

impl Plugin for DotProductScore {
    fn name(&self) -> &str {
        names::DOT_PRODUCT_SCORE
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreScorePlugin for DotProductScore {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        state.write(PRE_SCORE_STATE_KEY, PodShape::of(pod));
        Status::success()
    }
}

impl ScorePlugin for DotProductScore {
    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let stored = state.read_or_compute(PRE_SCORE_STATE_KEY, || PodShape::of(pod));
        let shape: &PodShape = &stored;
        for (n, out) in nodes.iter().zip(scores.iter_mut()) {
            *out = dot_product_score(&NodeView::of(n), shape);
        }
        Ok(())
    }

    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let view = NodeView::of(node);
        let shape = state.read_or_compute(PRE_SCORE_STATE_KEY, || PodShape::of(pod));
        Ok(dot_product_score(&view, &shape))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::gpushare::GpuRequest;

    #[test]
    fn tighter_nodes_score_higher() {
        let pod = PodShape {
            milli_cpu: 32_000,
            gpu: GpuRequest {
                count: 1,
                milli: 1000,
            },
            models: String::new(),
        };
        let idle = [1000; 8];
        let view = NodeView {
            cpu_left: 128_000,
            cpu_capacity: 128_000,
            gpu_left: &idle,
            model: None,
        };
        // d = 1 * 0.25 + 1 * 0.125 = 0.375 -> 100 * (1 - 0.1875) = 81.25 -> 81.
        assert_eq!(dot_product_score(&view, &pod), 81);
        let small = [1000, 0];
        let tight = NodeView {
            cpu_left: 32_000,
            cpu_capacity: 64_000,
            gpu_left: &small,
            model: None,
        };
        // d = 0.25 * 0.25 + 0.125 * 0.125 = 0.078125 -> 96.09 -> 96.
        assert_eq!(dot_product_score(&tight, &pod), 96);
        let short = NodeView {
            cpu_left: 1000,
            ..tight
        };
        assert_eq!(dot_product_score(&short, &pod), 0);
    }
}
