//! What the GPU policies look at: a pod's [`PodShape`] (milli-CPU, GPU request, allowed GPU models)
//! and a node's [`NodeView`] (free milli-CPU, free milli-GPU per GPU, GPU model). Mirrors the FGD
//! paper simulator's `PodResource` / `NodeResource` (hkust-adsl/kubernetes-scheduler-simulator
//! `pkg/type/resource.go`, `pkg/utils/utils.go` `GetPodResource`, `GetNodeResourceViaNodeInfo`):
//! memory is not part of either, as there.

use k8s_sched_framework::NodeInfo;
use k8s_types::core::{node_labels, Pod};
use k8s_types::gpushare::{GpuRequest, MILLI_PER_GPU};
use k8s_types::resources::{pod_non_zero_requests, pod_requests};

/// The largest node CPU the simulator normalises by, in milli-CPU (open-gpu-share `MaxSpecCpu`).
pub const MAX_SPEC_CPU: i64 = 128_000;
/// The largest node GPU the simulator normalises by, in milli-GPU (open-gpu-share `MaxSpecGpu`).
pub const MAX_SPEC_GPU: i64 = 8_000;

/// A pod as the GPU policies see it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodShape {
    /// CPU request in milli-CPU, counting 100m for containers without one (upstream
    /// `GetNonzeroRequests`, as the simulator's `GetPodResource`).
    pub milli_cpu: i64,
    /// GPUs; `count == 0` for a CPU-only pod.
    pub gpu: GpuRequest,
    /// Allowed GPU models joined by `|` (the trace's `gpu_spec`); empty means any model.
    pub models: String,
}

impl PodShape {
    /// The shape of `pod`: requests, and the allowed models from the pod's required node affinity
    /// on `nvidia.com/gpu.product` (operator `In`, first such requirement).
    pub fn of(pod: &Pod) -> PodShape {
        let gpu = GpuRequest::from_requests(&pod_requests(pod)).unwrap_or_default();
        PodShape {
            milli_cpu: pod_non_zero_requests(pod).milli_cpu,
            gpu,
            models: required_gpu_models(pod).join("|"),
        }
    }

    /// True when the pod asks for a GPU.
    pub fn wants_gpu(&self) -> bool {
        self.gpu.count > 0 && self.gpu.milli > 0
    }

    /// Total milli-GPU (`count * milli`).
    pub fn total_milli_gpu(&self) -> i64 {
        self.gpu.total_milli()
    }

    /// Upstream simulator `IsNodeAccessibleToPodByType`: any model when the pod names none; a node
    /// without a model never; else the node's model must be one of the pod's.
    pub fn accepts_model(&self, node_model: Option<&str>) -> bool {
        models_accept(&self.models, node_model)
    }
}

/// See [`PodShape::accepts_model`]; `models` is `|`-separated.
pub fn models_accept(models: &str, node_model: Option<&str>) -> bool {
    if models.is_empty() {
        return true;
    }
    let mut named = 0;
    for m in models.split('|').filter(|m| !m.is_empty()) {
        named += 1;
        if Some(m) == node_model {
            return true;
        }
    }
    if named == 0 {
        return true;
    }
    false
}

/// The values of the first `nvidia.com/gpu.product In (...)` requirement of the pod's required
/// node affinity (the trace importer writes `gpu_spec` there).
pub fn required_gpu_models(pod: &Pod) -> Vec<String> {
    let Some(sel) = pod
        .spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
    else {
        return Vec::new();
    };
    for term in &sel.node_selector_terms {
        for r in &term.match_expressions {
            if r.key == node_labels::NVIDIA_GPU_PRODUCT && r.operator == "In" {
                return r.values.clone();
            }
        }
    }
    Vec::new()
}

/// A node as the GPU policies see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeView<'a> {
    /// Free milli-CPU: allocatable minus the pods' requests.
    pub cpu_left: i64,
    /// Allocatable milli-CPU.
    pub cpu_capacity: i64,
    /// Free milli-GPU per GPU index.
    pub gpu_left: &'a [i64],
    /// GPU model.
    pub model: Option<&'a str>,
}

impl<'a> NodeView<'a> {
    /// The view of a scheduler NodeInfo.
    pub fn of(node: &'a NodeInfo) -> NodeView<'a> {
        NodeView {
            cpu_left: node.allocatable().milli_cpu - node.requested().milli_cpu,
            cpu_capacity: node.allocatable().milli_cpu,
            gpu_left: node.gpus().milli_left(),
            model: node.gpus().model(),
        }
    }

    /// Sum of free milli-GPU.
    pub fn total_gpu_left(&self) -> i64 {
        self.gpu_left.iter().sum()
    }

    /// GPUs with all 1000 milli free.
    pub fn fully_free(&self) -> usize {
        self.gpu_left
            .iter()
            .filter(|l| **l >= MILLI_PER_GPU)
            .count()
    }
}

/// Indices of GPUs sorted by free milli ascending, ties by index (the simulator's
/// `SortedMilliGpuLeftIndexList(true)`, a stable sort).
pub fn ascending_by_left(left: &[i64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..left.len()).collect();
    idx.sort_by_key(|i| (left[*i], *i));
    idx
}

/// The GPUs a non-shared request takes by the simulator's `NodeResource.Sub`: walking GPUs from the
/// least free upwards (ties by index), each with at least `milli` free; `None` when too few.
pub fn pack_indices(left: &[i64], req: &GpuRequest) -> Option<Vec<usize>> {
    let mut out = Vec::with_capacity(req.count as usize);
    for i in ascending_by_left(left) {
        if out.len() == req.count as usize {
            break;
        }
        if left[i] >= req.milli {
            out.push(i);
        }
    }
    (out.len() == req.count as usize).then_some(out)
}

/// The first `count` fully free GPUs in index order (the simulator's `AllocateExclusiveGpuId`).
pub fn exclusive_indices(left: &[i64], count: u32) -> Option<Vec<usize>> {
    let out: Vec<usize> = left
        .iter()
        .enumerate()
        .filter(|(_, l)| **l >= MILLI_PER_GPU)
        .map(|(i, _)| i)
        .take(count as usize)
        .collect();
    (out.len() == count as usize).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_access_follows_the_simulator() {
        assert!(models_accept("", Some("T4")));
        assert!(models_accept("", None));
        assert!(models_accept("V100M16|V100M32", Some("V100M32")));
        assert!(!models_accept("V100M16|V100M32", Some("T4")));
        assert!(!models_accept("T4", None));
    }

    #[test]
    fn packing_takes_the_least_free_gpus_first() {
        let left = [200, 1000, 1000, 500];
        let whole = GpuRequest {
            count: 2,
            milli: 1000,
        };
        assert_eq!(pack_indices(&left, &whole), Some(vec![1, 2]));
        let shared = GpuRequest {
            count: 1,
            milli: 300,
        };
        assert_eq!(pack_indices(&left, &shared), Some(vec![3]));
        assert_eq!(exclusive_indices(&left, 2), Some(vec![1, 2]));
        assert_eq!(exclusive_indices(&left, 3), None);
        assert_eq!(ascending_by_left(&left), vec![0, 3, 1, 2]);
    }
}
