//! FGD (Score): Fragmentation Gradient Descent, the policy of Weng et al., "Beware of
//! Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
//! ATC '23 (§4), as its public simulator computes it (hkust-adsl/kubernetes-scheduler-simulator
//! `pkg/simulator/plugin/fgd_score.go` `calculateGpuShareFragExtendScore`).
//!
//! For each node: `F(before)` is the node's fragmentation against the target workload
//! ([`super::frag::node_frag`]); `F(after)` the same once the pod is placed (a sharing pod is tried
//! on every GPU with room and the best GPU is kept; whole GPUs are taken as the simulator's
//! `NodeResource.Sub` does). The score is `int(sigmoid((F(before) - F(after)) / 1000) * 100)`: the
//! node whose fragmentation grows least (or shrinks most) wins. The GPU it would use is the one
//! GpuShare picks with `gpuSelMethod: FGD`.
//!
//! Args: `typicalPods` (the target workload, see [`super::frag::typical_pods`]); when empty, the
//! typical pods are derived at PreFilter from every pod the scheduler listed
//! (`podPopularityThreshold`, default 95 %).
//!
//! Scores are memoised by (pod shape, node state) when the typical pods come from the args: the
//! same free CPU, the same multiset of free milli-GPU and the same model give the same score.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_sched_framework::{
    CycleState, Handle, NodeInfo, Plugin, PreFilterPlugin, PreFilterResult, PreScorePlugin,
    ScorePlugin, Status, MAX_NODE_SCORE,
};
use k8s_types::core::Pod;
use serde::Deserialize;

use super::frag::{node_frag, sigmoid, typical_pods, TypicalPod, TypicalPodArgs};
use super::names;
use super::shape::{pack_indices, NodeView, PodShape};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// CycleState key of the typical pods derived at PreFilter (when the args have none).
pub const PRE_FILTER_STATE_KEY: &str = "PreFilterFGDScore";
/// CycleState key of the pod's shape.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreFGDScore";

/// `pluginConfig` args of FGDScore.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FgdArgs {
    /// The target workload; empty: derived from the listed pods.
    #[serde(default)]
    pub typical_pods: Vec<TypicalPodArgs>,
    /// Share of pods the derived typical pods cover, in percent (default 95).
    #[serde(default)]
    pub pod_popularity_threshold: Option<u32>,
}

/// Typical pods for one attempt.
#[derive(Clone, Debug)]
pub struct TypicalState(pub Arc<Vec<TypicalPod>>);

/// The pod half of a memo key: the shape's fields (models interned).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PodKey {
    cpu: i64,
    count: u32,
    milli: i64,
    models: u16,
}

/// The node half of a memo key: free CPU, the sorted free milli-GPU packed 11 bits per GPU, the
/// GPU count and the model ([`model_key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct NodeKey {
    cpu_left: i64,
    lefts: u128,
    n: u8,
    model: u64,
}

/// The memo maps' hasher: rustc's FxHash (lookups only, the maps are never iterated, so the hash
/// cannot reach output).
type KeyHash = rustc_hash::FxBuildHasher;

/// Memoised scores: per pod shape, per node state (two levels, so one attempt looks its shape up
/// once and then hashes only the node half).
#[derive(Debug, Default)]
struct Memo {
    scores: HashMap<PodKey, HashMap<NodeKey, i64, KeyHash>, KeyHash>,
    len: usize,
    names: Names,
}

/// Interned strings (pod models, and node models longer than 7 bytes).
#[derive(Debug, Default)]
struct Names {
    names: Vec<String>,
}

impl Names {
    fn intern(&mut self, s: &str) -> u16 {
        match self.names.iter().position(|n| n == s) {
            Some(i) => i as u16,
            None => {
                self.names.push(s.to_string());
                (self.names.len() - 1) as u16
            }
        }
    }
}

/// A node's GPU model as a memo key: up to 7 bytes are packed with the length in the top byte
/// (every model of the openb trace: `G2`, `T4`, `P100`, `V100M32`, ...), longer names are
/// interned and marked with a top byte of 0xFF. No model and the empty model are the same key, as
/// they are for the fragmentation (both accept only pods that name no model).
fn model_key(names: &mut Names, model: &str) -> u64 {
    let b = model.as_bytes();
    if b.len() <= 7 {
        let mut k = (b.len() as u64) << 56;
        for (i, c) in b.iter().enumerate() {
            k |= u64::from(*c) << (8 * i);
        }
        k
    } else {
        (0xFF << 56) | u64::from(names.intern(model))
    }
}

/// The FGDScore plugin.
#[derive(Debug)]
pub struct Fgd {
    typical: Option<Arc<Vec<TypicalPod>>>,
    threshold: u32,
    memo: Mutex<Memo>,
}

/// Upper bound on memoised scores before the memo is cleared.
const MEMO_LIMIT: usize = 1 << 20;

impl Fgd {
    /// A plugin with a fixed target workload (`None`: derive it from the listed pods).
    pub fn new(typical: Option<Vec<TypicalPod>>, threshold: u32) -> Fgd {
        Fgd {
            typical: typical.filter(|t| !t.is_empty()).map(Arc::new),
            threshold,
            memo: Mutex::new(Memo::default()),
        }
    }

    /// Factory.
    ///
    /// # Errors
    /// Undecodable args.
    pub fn factory(args: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let a: FgdArgs = args.decode()?;
        let typical: Vec<TypicalPod> = a.typical_pods.iter().map(TypicalPod::from).collect();
        Ok(Arc::new(Fgd::new(
            Some(typical),
            a.pod_popularity_threshold
                .unwrap_or(super::frag::DEFAULT_POPULARITY_THRESHOLD),
        )))
    }

    fn cached(&self, view: &NodeView<'_>, shape: &PodShape, typical: &[TypicalPod]) -> i64 {
        match self.memo.lock() {
            Ok(mut memo) => {
                let pod = Self::pod_key(&mut memo, shape);
                let mut scores = self.take_scores(&mut memo, pod);
                let s = Self::cached_in(&mut memo.names, &mut scores, view, shape, typical);
                Self::put_scores(&mut memo, pod, scores);
                s
            }
            Err(_) => fgd_score(view, shape, typical).0,
        }
    }

    fn pod_key(memo: &mut Memo, shape: &PodShape) -> PodKey {
        PodKey {
            cpu: shape.milli_cpu,
            count: shape.gpu.count,
            milli: shape.gpu.milli,
            models: memo.names.intern(&shape.models),
        }
    }

    /// The memo of one pod shape, taken out of the map while one attempt fills it (`None` when
    /// the typical pods are derived per cycle: nothing is memoised then).
    fn take_scores(&self, memo: &mut Memo, pod: PodKey) -> Option<HashMap<NodeKey, i64, KeyHash>> {
        self.typical.as_ref()?;
        if memo.len >= MEMO_LIMIT {
            memo.scores.clear();
            memo.len = 0;
        }
        let m = memo.scores.remove(&pod).unwrap_or_default();
        memo.len -= m.len();
        Some(m)
    }

    fn put_scores(memo: &mut Memo, pod: PodKey, scores: Option<HashMap<NodeKey, i64, KeyHash>>) {
        if let Some(m) = scores {
            memo.len += m.len();
            memo.scores.insert(pod, m);
        }
    }

    fn cached_in(
        names: &mut Names,
        scores: &mut Option<HashMap<NodeKey, i64, KeyHash>>,
        view: &NodeView<'_>,
        shape: &PodShape,
        typical: &[TypicalPod],
    ) -> i64 {
        let n = view.gpu_left.len();
        let Some(scores) = scores.as_mut().filter(|_| n <= 11) else {
            return fgd_score(view, shape, typical).0;
        };
        let mut sorted = [0i64; 11];
        sorted[..n].copy_from_slice(view.gpu_left);
        sorted[..n].sort_unstable();
        let mut lefts = 0u128;
        for l in &sorted[..n] {
            lefts = (lefts << 11) | (l.clamp(&0, &2047).unsigned_abs() as u128);
        }
        let key = NodeKey {
            cpu_left: view.cpu_left,
            lefts,
            n: n as u8,
            model: model_key(names, view.model.unwrap_or("")),
        };
        *scores
            .entry(key)
            .or_insert_with(|| fgd_score(view, shape, typical).0)
    }
}

/// The FGD score of placing `shape` on `view` and, for a sharing pod, the GPU index that achieves
/// it (the first index among equal scores). A pod without requests scores 100.
pub fn fgd_score(
    view: &NodeView<'_>,
    shape: &PodShape,
    typical: &[TypicalPod],
) -> (i64, Option<usize>) {
    if shape.milli_cpu == 0 && !shape.wants_gpu() {
        return (MAX_NODE_SCORE, None);
    }
    let before = node_frag(view.cpu_left, view.gpu_left, view.model, typical);
    let cpu_after = view.cpu_left - shape.milli_cpu;
    let score_of =
        |after: f64| -> i64 { (sigmoid((before - after) / 1000.0) * MAX_NODE_SCORE as f64) as i64 };
    let mut left: Vec<i64> = view.gpu_left.to_vec();
    if shape.gpu.is_shared() {
        let mut best: Option<(i64, usize)> = None;
        for i in 0..left.len() {
            if left[i] < shape.gpu.milli {
                continue;
            }
            left[i] -= shape.gpu.milli;
            let s = score_of(node_frag(cpu_after, &left, view.model, typical));
            left[i] += shape.gpu.milli;
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, i));
            }
        }
        return match best {
            Some((s, i)) => (s, Some(i)),
            None => (0, None),
        };
    }
    if shape.wants_gpu() {
        if let Some(idx) = pack_indices(&left, &shape.gpu) {
            for i in idx {
                left[i] -= shape.gpu.milli;
            }
        }
    }
    (
        score_of(node_frag(cpu_after, &left, view.model, typical)),
        None,
    )
}

impl Plugin for Fgd {
    fn name(&self) -> &str {
        names::FGD_SCORE
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

/// Typical pods of every pod the scheduler listed (the fallback target workload).
pub fn typical_pods_of_listed(handle: &dyn Handle, threshold: u32) -> Vec<TypicalPod> {
    let shapes: Vec<PodShape> = handle.pods().iter().map(|p| PodShape::of(p)).collect();
    typical_pods(&shapes, threshold, super::frag::DEFAULT_INCREASE_STEP)
}

impl PreFilterPlugin for Fgd {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        _pod: &Pod,
        handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
        if self.typical.is_none() {
            let t = typical_pods_of_listed(handle, self.threshold);
            state.write(PRE_FILTER_STATE_KEY, TypicalState(Arc::new(t)));
        }
        (None, Status::success())
    }
}

impl PreScorePlugin for Fgd {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        state.write(PRE_SCORE_STATE_KEY, PodShape::of(pod));
        Status::success()
    }
}

impl ScorePlugin for Fgd {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let stored = state.read_or_compute(PRE_SCORE_STATE_KEY, || PodShape::of(pod));
        let shape: &PodShape = &stored;
        let typical: &[TypicalPod] = match &self.typical {
            Some(t) => t,
            None => match state.read::<TypicalState>(PRE_FILTER_STATE_KEY) {
                Some(t) => &t.0,
                None => &[],
            },
        };
        let view = NodeView::of(node);
        if !shape.accepts_model(view.model) && shape.wants_gpu() {
            return Err(Status::error(format!(
                "node {} does not match the GPU model request of pod {}",
                node.name(),
                pod.metadata.name
            )));
        }
        Ok(self.cached(&view, shape, typical))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let stored = state.read_or_compute(PRE_SCORE_STATE_KEY, || PodShape::of(pod));
        let shape: &PodShape = &stored;
        let typical: &[TypicalPod] = match &self.typical {
            Some(t) => t,
            None => match state.read::<TypicalState>(PRE_FILTER_STATE_KEY) {
                Some(t) => &t.0,
                None => &[],
            },
        };
        let Ok(mut memo) = self.memo.lock() else {
            return Err(Status::error("FGDScore memo lock poisoned"));
        };
        let pod_key = Self::pod_key(&mut memo, shape);
        let mut memo_scores = self.take_scores(&mut memo, pod_key);
        let mut result = Ok(());
        for (n, out) in nodes.iter().zip(scores.iter_mut()) {
            let view = NodeView::of(n);
            if !shape.accepts_model(view.model) && shape.wants_gpu() {
                result = Err(Status::error(format!(
                    "node {} does not match the GPU model request of pod {}",
                    n.name(),
                    pod.metadata.name
                )));
                break;
            }
            *out = Self::cached_in(&mut memo.names, &mut memo_scores, &view, shape, typical);
        }
        Self::put_scores(&mut memo, pod_key, memo_scores);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::gpushare::GpuRequest;

    fn shape(cpu: i64, count: u32, milli: i64) -> PodShape {
        PodShape {
            milli_cpu: cpu,
            gpu: GpuRequest { count, milli },
            models: String::new(),
        }
    }

    #[test]
    fn score_is_the_sigmoid_of_the_fragmentation_delta() {
        // Target workload: only 0.5-GPU pods with 1 CPU.
        let typical = vec![TypicalPod {
            shape: shape(1000, 1, 500),
            freq: 1.0,
        }];
        let left = [1000, 700];
        let view = NodeView {
            cpu_left: 8000,
            cpu_capacity: 8000,
            gpu_left: &left,
            model: None,
        };
        // Before: the 0.5-GPU typical pod fits; no GPU has < 500 free: F = 0.
        // A 0.3-GPU pod on GPU 0 leaves [700, 700]: F = 0 -> sigmoid(0) = 0.5 -> 50.
        // On GPU 1 it leaves [1000, 400]: F = 400 -> sigmoid(-0.4) = 0.4013 -> 40.
        assert_eq!(
            fgd_score(&view, &shape(1000, 1, 300), &typical),
            (50, Some(0))
        );
        // A whole GPU takes GPU 0, leaving [0, 700]: F = 0 -> 50.
        assert_eq!(
            fgd_score(&view, &shape(1000, 1, 1000), &typical),
            (50, None)
        );
        // A 0.7-GPU pod: on GPU 0 -> [300, 700]: F = 300 -> sigmoid(-0.3) -> 42;
        // on GPU 1 -> [1000, 0]: F = 0 -> 50. GPU 1 wins.
        assert_eq!(
            fgd_score(&view, &shape(1000, 1, 700), &typical),
            (50, Some(1))
        );
        // Taking all CPU makes the typical pod lack CPU: F(after) = all free milli (1000 - 0 + 700 - 300...).
        // [700, 700] with 0 CPU left: F = 1400 -> sigmoid(-1.4) = 0.1978 -> 19.
        assert_eq!(
            fgd_score(&view, &shape(8000, 1, 300), &typical),
            (19, Some(0))
        );
    }

    #[test]
    fn memoised_scores_equal_fresh_ones() {
        let typical = vec![
            TypicalPod {
                shape: shape(1000, 1, 500),
                freq: 0.5,
            },
            TypicalPod {
                shape: shape(2000, 2, 1000),
                freq: 0.5,
            },
        ];
        let p = Fgd::new(Some(typical.clone()), 95);
        let left = [1000, 200, 1000, 600];
        let view = NodeView {
            cpu_left: 6000,
            cpu_capacity: 8000,
            gpu_left: &left,
            model: Some("T4"),
        };
        let s = shape(1000, 1, 200);
        let fresh = fgd_score(&view, &s, &typical).0;
        assert_eq!(p.cached(&view, &s, &typical), fresh);
        assert_eq!(p.cached(&view, &s, &typical), fresh);
        // Model keys: short names packed with their length, long ones interned.
        let mut names = Names::default();
        assert_eq!(model_key(&mut names, ""), 0);
        assert_eq!(model_key(&mut names, "T4"), (2 << 56) | 0x3454);
        assert_eq!(model_key(&mut names, "A100-SXM4-80GB"), 0xFF << 56);
        assert_eq!(model_key(&mut names, "H100-SXM5-80GB"), (0xFF << 56) | 1);
        assert_eq!(model_key(&mut names, "A100-SXM4-80GB"), 0xFF << 56);
        // GPU order does not matter.
        let left2 = [600, 1000, 200, 1000];
        let view2 = NodeView {
            gpu_left: &left2,
            ..view.clone()
        };
        assert_eq!(fgd_score(&view2, &s, &typical).0, fresh);
    }
}
