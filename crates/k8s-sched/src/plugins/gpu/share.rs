//! GpuShare (PreFilter, Filter, Reserve): whole and fractional GPUs placed GPU by GPU. The
//! scheduler-side half of Alibaba's GPU sharing (the FGD paper simulator's `Open-Gpu-Share` plugin,
//! hkust-adsl/kubernetes-scheduler-simulator `pkg/simulator/plugin/open_gpu_share.go`, and
//! AliyunContainerService's gpushare-scheduler-extender):
//! - Filter: a sharing pod (`alibabacloud.com/gpu-milli: m`, m < 1000) needs one GPU with at least
//!   `m` milli free; a whole-GPU pod (`nvidia.com/gpu: k`) needs `k` fully free GPUs. Per-GPU free
//!   milli comes from the snapshot ([`NodeInfo::gpus`]), which counts every pod on the node by the
//!   GPU indices it holds.
//! - Reserve: picks the GPU indices (`gpuSelMethod`: `best` — the fitting GPU with the least free
//!   milli, the simulator's default; `worst`; `random` (seeded); `FGD` — the GPU that FGDScore
//!   prefers) and asks for the annotation `alibabacloud.com/gpu-index` to be set at binding
//!   ([`crate::binding_annotations`]). Whole GPUs are the first fully free ones in index order
//!   (the simulator's `AllocateExclusiveGpuId`).
//!
//! Pods without GPU requests make PreFilter return Skip, so their Filter is skipped.

use std::sync::{Arc, Mutex};

use k8s_sched_framework::{
    CycleState, FilterPlugin, Handle, NodeInfo, Plugin, PreFilterPlugin, PreFilterResult,
    ReservePlugin, Status,
};
use k8s_types::core::Pod;
use k8s_types::gpushare::{format_gpu_indices, GPU_INDEX_ANNOTATION};
use k8s_types::rng::SplitMix64;
use serde::Deserialize;

use super::fgd::{fgd_score, typical_pods_of_listed};
use super::frag::{TypicalPod, TypicalPodArgs, DEFAULT_POPULARITY_THRESHOLD};
use super::names;
use super::shape::{exclusive_indices, NodeView, PodShape};
use crate::binding_annotations;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// CycleState key of the pod's shape.
pub const PRE_FILTER_STATE_KEY: &str = "PreFilterGpuShare";
/// Reason for a sharing pod that fits on no single GPU of the node (k8s-mini's text; the
/// simulator's filter reports only the node name).
pub const REASON_NO_GPU_WITH_ROOM: &str =
    "node(s) had no GPU with enough free alibabacloud.com/gpu-milli";
/// Reason for a whole-GPU pod without enough fully free GPUs.
pub const REASON_NOT_ENOUGH_FREE_GPUS: &str = "node(s) had not enough fully free GPUs";
/// Reason for a node whose GPU model the pod does not accept.
pub const REASON_GPU_MODEL: &str = "node(s) had a GPU model the pod does not accept";

/// How Reserve picks the GPU of a sharing pod.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuSelMethod {
    /// The fitting GPU with the least free milli (first index on ties).
    #[default]
    Best,
    /// The fitting GPU with the most free milli.
    Worst,
    /// A uniformly random fitting GPU (seeded).
    Random,
    /// The GPU FGDScore prefers.
    Fgd,
}

impl GpuSelMethod {
    /// Parses the simulator's `gpuSelMethod` names (`best`, `worst`, `random`, `FGDScore`/`FGD`).
    pub fn parse(s: &str) -> Option<GpuSelMethod> {
        match s {
            "" | "best" | "Best" | "bestfit" => Some(GpuSelMethod::Best),
            "worst" | "Worst" => Some(GpuSelMethod::Worst),
            "random" | "Random" => Some(GpuSelMethod::Random),
            "FGD" | "FGDScore" | "fgd" => Some(GpuSelMethod::Fgd),
            _ => None,
        }
    }
}

/// `pluginConfig` args of GpuShare.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuShareArgs {
    /// `best` (default), `worst`, `random` or `FGD`.
    #[serde(default)]
    pub gpu_sel_method: String,
    /// Seed of `random` (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Target workload for `FGD`; empty: derived from the listed pods.
    #[serde(default)]
    pub typical_pods: Vec<TypicalPodArgs>,
    /// Share of pods derived typical pods cover, in percent (default 95).
    #[serde(default)]
    pub pod_popularity_threshold: Option<u32>,
}

/// The GpuShare plugin.
#[derive(Debug)]
pub struct GpuShare {
    method: GpuSelMethod,
    rng: Mutex<SplitMix64>,
    typical: Vec<TypicalPod>,
    threshold: u32,
}

impl GpuShare {
    /// A plugin with this GPU selection.
    pub fn new(method: GpuSelMethod, seed: u64, typical: Vec<TypicalPod>) -> GpuShare {
        GpuShare {
            method,
            rng: Mutex::new(SplitMix64::new(seed)),
            typical,
            threshold: DEFAULT_POPULARITY_THRESHOLD,
        }
    }

    /// Factory.
    ///
    /// # Errors
    /// Undecodable args, or an unknown `gpuSelMethod`.
    pub fn factory(args: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let a: GpuShareArgs = args.decode()?;
        let method = GpuSelMethod::parse(&a.gpu_sel_method).ok_or_else(|| ConfigError::Decode {
            path: format!("{}.gpuSelMethod", args.path),
            message: format!(
                "unknown GPU selection method {:?} (best, worst, random, FGD)",
                a.gpu_sel_method
            ),
        })?;
        let mut p = GpuShare::new(
            method,
            a.seed,
            a.typical_pods.iter().map(TypicalPod::from).collect(),
        );
        if let Some(t) = a.pod_popularity_threshold {
            p.threshold = t;
        }
        Ok(Arc::new(p))
    }

    /// The GPU indices Reserve gives `shape` on a node with this view; `None` when it does not fit.
    pub fn select(
        &self,
        view: &NodeView<'_>,
        shape: &PodShape,
        typical: &[TypicalPod],
    ) -> Option<Vec<usize>> {
        if !shape.gpu.is_shared() {
            return exclusive_indices(view.gpu_left, shape.gpu.count);
        }
        let fits = |l: i64| l >= shape.gpu.milli;
        match self.method {
            GpuSelMethod::Best | GpuSelMethod::Worst => {
                let mut best: Option<usize> = None;
                for (i, l) in view.gpu_left.iter().enumerate() {
                    if !fits(*l) {
                        continue;
                    }
                    let better = match best {
                        None => true,
                        Some(b) if self.method == GpuSelMethod::Best => *l < view.gpu_left[b],
                        Some(b) => *l > view.gpu_left[b],
                    };
                    if better {
                        best = Some(i);
                    }
                }
                best.map(|i| vec![i])
            }
            GpuSelMethod::Random => {
                let mut rng = self.rng.lock().ok()?;
                let mut chosen = None;
                let mut seen = 0usize;
                for (i, l) in view.gpu_left.iter().enumerate() {
                    if fits(*l) {
                        seen += 1;
                        if rng.below(seen) == 0 {
                            chosen = Some(i);
                        }
                    }
                }
                chosen.map(|i| vec![i])
            }
            GpuSelMethod::Fgd => fgd_score(view, shape, typical).1.map(|i| vec![i]),
        }
    }
}

impl Plugin for GpuShare {
    fn name(&self) -> &str {
        names::GPU_SHARE
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        Some(self)
    }
}

impl PreFilterPlugin for GpuShare {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
        let shape = PodShape::of(pod);
        if !shape.wants_gpu() {
            return (None, Status::skip());
        }
        state.write(PRE_FILTER_STATE_KEY, shape);
        (None, Status::success())
    }
}

/// Filter of one shape on one node (exposed for tools that bypass the CycleState).
pub fn gpu_fits(shape: &PodShape, node: &NodeInfo) -> Status {
    let gpus = node.gpus();
    if !shape.accepts_model(gpus.model()) {
        return Status::unresolvable(REASON_GPU_MODEL);
    }
    if gpus.fits(&shape.gpu) {
        return Status::success();
    }
    let reason = if shape.gpu.is_shared() {
        REASON_NO_GPU_WITH_ROOM
    } else {
        REASON_NOT_ENOUGH_FREE_GPUS
    };
    if (gpus.count() as u64) < u64::from(shape.gpu.count) {
        Status::unresolvable(reason)
    } else {
        Status::unschedulable(reason)
    }
}

impl FilterPlugin for GpuShare {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        gpu_fits(
            &state.read_or_compute(PRE_FILTER_STATE_KEY, || PodShape::of(pod)),
            node,
        )
    }

    fn filter_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        failed: &mut Vec<(usize, Status)>,
    ) {
        let stored = state.read_or_compute(PRE_FILTER_STATE_KEY, || PodShape::of(pod));
        let shape: &PodShape = &stored;
        for (i, n) in nodes.iter().enumerate() {
            let g = n.gpus();
            if shape.accepts_model(g.model()) && g.fits(&shape.gpu) {
                continue;
            }
            failed.push((i, gpu_fits(shape, n)));
        }
    }
}

impl ReservePlugin for GpuShare {
    fn reserve(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node_name: &str,
        handle: &mut dyn Handle,
    ) -> Status {
        let shape = state
            .read_or_compute(PRE_FILTER_STATE_KEY, || PodShape::of(pod))
            .into_owned();
        if !shape.wants_gpu() {
            return Status::success();
        }
        let Some(node) = handle.node_info(node_name) else {
            return Status::error(format!("node {node_name:?} not found in the snapshot"));
        };
        let mut view = NodeView::of(node);
        // In the tick loop the pod is already assumed on the node: its CPU is in `requested`.
        if node.pods().iter().any(|p| p.is_same_pod(pod)) {
            view.cpu_left += shape.milli_cpu;
        }
        let derived;
        let typical: &[TypicalPod] = if self.method == GpuSelMethod::Fgd && self.typical.is_empty()
        {
            derived = typical_pods_of_listed(&*handle, self.threshold);
            &derived
        } else {
            &self.typical
        };
        match self.select(&view, &shape, typical) {
            Some(idx) => {
                binding_annotations::add(state, GPU_INDEX_ANNOTATION, format_gpu_indices(&idx));
                Status::success()
            }
            None => Status::unschedulable(if shape.gpu.is_shared() {
                REASON_NO_GPU_WITH_ROOM
            } else {
                REASON_NOT_ENOUGH_FREE_GPUS
            }),
        }
    }

    fn unreserve(
        &self,
        state: &mut CycleState,
        _pod: &Pod,
        _node_name: &str,
        _handle: &mut dyn Handle,
    ) {
        binding_annotations::remove(state, GPU_INDEX_ANNOTATION);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::gpushare::GpuRequest;

    fn view(left: &[i64]) -> NodeView<'_> {
        NodeView {
            cpu_left: 8000,
            cpu_capacity: 8000,
            gpu_left: left,
            model: None,
        }
    }

    fn shared(milli: i64) -> PodShape {
        PodShape {
            milli_cpu: 1000,
            gpu: GpuRequest { count: 1, milli },
            models: String::new(),
        }
    }

    #[test]
    fn best_and_worst_fit_follow_the_simulator() {
        let left = [1000, 300, 600, 600];
        let best = GpuShare::new(GpuSelMethod::Best, 0, vec![]);
        assert_eq!(best.select(&view(&left), &shared(500), &[]), Some(vec![2]));
        assert_eq!(best.select(&view(&left), &shared(200), &[]), Some(vec![1]));
        let worst = GpuShare::new(GpuSelMethod::Worst, 0, vec![]);
        assert_eq!(worst.select(&view(&left), &shared(200), &[]), Some(vec![0]));
        assert_eq!(best.select(&view(&[300, 600]), &shared(900), &[]), None);
        let whole = PodShape {
            milli_cpu: 1000,
            gpu: GpuRequest {
                count: 1,
                milli: 1000,
            },
            models: String::new(),
        };
        assert_eq!(best.select(&view(&left), &whole, &[]), Some(vec![0]));
    }

    #[test]
    fn random_selection_is_seeded_and_fits() {
        let left = [1000, 300, 600, 600];
        let a = GpuShare::new(GpuSelMethod::Random, 42, vec![]);
        let b = GpuShare::new(GpuSelMethod::Random, 42, vec![]);
        for _ in 0..20 {
            let x = a.select(&view(&left), &shared(500), &[]);
            assert_eq!(x, b.select(&view(&left), &shared(500), &[]));
            let i = x.expect("fits")[0];
            assert!(left[i] >= 500);
        }
    }

    #[test]
    fn sel_method_names_parse() {
        assert_eq!(GpuSelMethod::parse("FGDScore"), Some(GpuSelMethod::Fgd));
        assert_eq!(GpuSelMethod::parse(""), Some(GpuSelMethod::Best));
        assert_eq!(GpuSelMethod::parse("nope"), None);
    }
}
