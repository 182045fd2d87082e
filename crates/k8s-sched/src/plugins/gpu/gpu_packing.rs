//! GpuPackingScore (Score): the FGD paper's *Packing* baseline (simulator
//! `pkg/simulator/plugin/gpu_packing_score.go` `getPackingScore`), from best to worst:
//! 1. only partly used GPUs are needed: `100 - (sum over the GPUs used of their free percent) / 10`,
//!    at least 50;
//! 2. fully free GPUs of a node already in use are needed: `50 - number of them`, at least 33;
//! 3. the node is idle: `33 - its number of GPUs`, at least that number.
//!
//! A pod without GPUs scores 0.

use std::sync::Arc;

use k8s_sched_framework::{
    CycleState, NodeInfo, Plugin, PreScorePlugin, ScorePlugin, Status, MAX_NODE_SCORE,
    MIN_NODE_SCORE,
};
use k8s_types::core::Pod;
use k8s_types::gpushare::MILLI_PER_GPU;

use super::names;
use super::shape::{ascending_by_left, NodeView, PodShape};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// CycleState key of the pod's shape.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreGpuPackingScore";

/// The GpuPackingScore plugin.
#[derive(Debug, Default)]
pub struct GpuPackingScore;

impl GpuPackingScore {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(GpuPackingScore))
    }
}

/// The packing score, or `None` when the GPUs do not fit.
pub fn packing_score(left: &[i64], shape: &PodShape) -> Option<i64> {
    if !shape.wants_gpu() {
        return Some(MIN_NODE_SCORE);
    }
    let n = left.len() as i64;
    let fully_free = left.iter().filter(|l| **l >= MILLI_PER_GPU).count() as i64;
    if fully_free == n {
        return Some((MAX_NODE_SCORE / 3 - fully_free).max(fully_free));
    }
    let mut need = shape.gpu.count as usize;
    let mut free_used = 0i64;
    let mut used: Vec<usize> = Vec::new();
    for i in ascending_by_left(left) {
        if need == 0 {
            break;
        }
        if left[i] >= shape.gpu.milli {
            need -= 1;
            used.push(i);
            if left[i] == MILLI_PER_GPU {
                free_used += 1;
            }
        }
    }
    if need != 0 {
        return None;
    }
    if free_used > 0 {
        return Some((MAX_NODE_SCORE / 2 - free_used).max(MAX_NODE_SCORE / 3));
    }
    let ratio: i64 = used.iter().map(|i| left[*i] * 100 / MILLI_PER_GPU).sum();
    Some((MAX_NODE_SCORE - ratio / 10).max(MAX_NODE_SCORE / 2))
}

impl Plugin for GpuPackingScore {
    fn name(&self) -> &str {
        names::GPU_PACKING_SCORE
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreScorePlugin for GpuPackingScore {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        state.write(PRE_SCORE_STATE_KEY, PodShape::of(pod));
        Status::success()
    }
}

impl ScorePlugin for GpuPackingScore {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let stored = state.read_or_compute(PRE_SCORE_STATE_KEY, || PodShape::of(pod));
        let shape: &PodShape = &stored;
        let view = NodeView::of(node);
        packing_score(view.gpu_left, shape).ok_or_else(|| {
            Status::error(format!(
                "failed to schedule pod({}) on node({})",
                pod.metadata.name,
                node.name()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::gpushare::GpuRequest;

    fn shape(count: u32, milli: i64) -> PodShape {
        PodShape {
            milli_cpu: 100,
            gpu: GpuRequest { count, milli },
            models: String::new(),
        }
    }

    /// The simulator's own test cases (`gpu_packing_score_test.go`
    /// `TestGpuPackingScorePlugin_Score`).
    #[test]
    fn simulator_test_values() {
        assert_eq!(
            packing_score(&[200, 1000, 1000, 500], &shape(2, 1000)),
            Some(48)
        );
        assert_eq!(packing_score(&[1000; 4], &shape(2, 1000)), Some(29));
        assert_eq!(packing_score(&[1000; 8], &shape(2, 1000)), Some(25));
        assert_eq!(
            packing_score(&[200, 1000, 1000, 500], &shape(2, 200)),
            Some(93)
        );
        assert_eq!(packing_score(&[200, 300], &shape(1, 1000)), None);
        assert_eq!(packing_score(&[200, 300], &shape(0, 0)), Some(0));
    }
}
