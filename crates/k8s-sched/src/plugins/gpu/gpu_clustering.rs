//! GpuClusteringScore (Score): the FGD paper's *Clustering* baseline (simulator
//! `pkg/simulator/plugin/gpu_clustering_score.go`): pods with the same GPU request ("tag": sharing,
//! or k whole GPUs) are kept together. With `g = 25 * (8000 - free milli-GPU of the node) / 8000`
//! (integer arithmetic):
//! - the node runs only pods of the pod's tag: `75 + g`;
//! - it runs the pod's tag and others: `50 + g`;
//! - it runs no GPU pod: `25 + g`;
//! - it runs only other tags: `g`;
//! - a CPU-only pod scores 0 everywhere.

use std::sync::Arc;

use k8s_sched_framework::{
    CycleState, NodeInfo, Plugin, PreScorePlugin, ScorePlugin, Status, MAX_NODE_SCORE,
    MIN_NODE_SCORE,
};
use k8s_types::core::Pod;
use k8s_types::gpushare::GpuRequest;

use super::names;
use super::shape::{PodShape, MAX_SPEC_GPU};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// CycleState key of the pod's shape.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreGpuClusteringScore";

/// The GpuClusteringScore plugin.
#[derive(Debug, Default)]
pub struct GpuClusteringScore;

impl GpuClusteringScore {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(GpuClusteringScore))
    }
}

/// The tag of a GPU request: 0 for a sharing pod, else the number of whole GPUs.
pub fn tag(req: &GpuRequest) -> u32 {
    if req.is_shared() {
        0
    } else {
        req.count
    }
}

/// The score of a pod with request `req` on a node with `total_left` free milli-GPU whose pods
/// carry `tags` (tag -> pods).
pub fn clustering_score(
    req: &GpuRequest,
    total_left: i64,
    tags: &std::collections::BTreeMap<u32, u32>,
) -> i64 {
    if req.count == 0 || req.milli <= 0 {
        return MIN_NODE_SCORE;
    }
    let quarter = MAX_NODE_SCORE / 4;
    let g = quarter * (MAX_SPEC_GPU - total_left) / MAX_SPEC_GPU;
    let same = tags.get(&tag(req)).is_some_and(|n| *n > 0);
    if same {
        if tags.len() == 1 {
            g + MAX_NODE_SCORE * 3 / 4
        } else {
            g + MAX_NODE_SCORE * 2 / 4
        }
    } else if tags.is_empty() {
        g + MAX_NODE_SCORE / 4
    } else {
        g
    }
}

impl Plugin for GpuClusteringScore {
    fn name(&self) -> &str {
        names::GPU_CLUSTERING_SCORE
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreScorePlugin for GpuClusteringScore {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        state.write(PRE_SCORE_STATE_KEY, PodShape::of(pod));
        Status::success()
    }
}

impl ScorePlugin for GpuClusteringScore {
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
            let g = n.gpus();
            *out = clustering_score(&shape.gpu, g.total_left(), g.tags());
        }
        Ok(())
    }

    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let stored = state.read_or_compute(PRE_SCORE_STATE_KEY, || PodShape::of(pod));
        let shape: &PodShape = &stored;
        let gpus = node.gpus();
        Ok(clustering_score(&shape.gpu, gpus.total_left(), gpus.tags()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn same_tag_nodes_score_highest() {
        let shared = GpuRequest {
            count: 1,
            milli: 500,
        };
        let one = GpuRequest {
            count: 1,
            milli: 1000,
        };
        let only_shared: BTreeMap<u32, u32> = [(0, 2)].into();
        let mixed: BTreeMap<u32, u32> = [(0, 1), (1, 1)].into();
        let empty = BTreeMap::new();
        // 8-GPU node with 6500 milli free: g = 25 * 1500 / 8000 = 4.
        assert_eq!(clustering_score(&shared, 6500, &only_shared), 79);
        assert_eq!(clustering_score(&shared, 6500, &mixed), 54);
        assert_eq!(clustering_score(&one, 6500, &only_shared), 4);
        // Idle 8-GPU node: g = 0.
        assert_eq!(clustering_score(&shared, 8000, &empty), 25);
        // Idle 2-GPU node: g = 25 * 6000 / 8000 = 18.
        assert_eq!(clustering_score(&shared, 2000, &empty), 43);
        assert_eq!(clustering_score(&GpuRequest::default(), 2000, &empty), 0);
    }
}
