//! Shared (fractional) GPUs: the resource names and annotations of Alibaba's GPU-sharing stack, a
//! pod's GPU request ([`GpuRequest`]), which GPU indices a pod holds ([`PodGpu`]) and a node's
//! per-GPU free milli-GPU ([`NodeGpus`]), kept up to date by the scheduler's
//! `NodeInfo` (k8s-sched-framework).
//!
//! The model (documented for users in `docs/trace-replay.md`):
//! - every physical GPU offers [`MILLI_PER_GPU`] (1000) milli-GPU;
//! - a pod asks either for whole GPUs (`nvidia.com/gpu: k`, reported by the NVIDIA device plugin)
//!   or for a fraction of one GPU (`alibabacloud.com/gpu-milli: m`, 0 < m < 1000, reported by the
//!   GPU-share device plugin: 1000 devices per GPU). These are the names of the trace's own node
//!   YAML and of Alibaba's open-gpu-share scheduler plugin (hkust-adsl/kubernetes-scheduler-simulator
//!   `pkg/type/open-gpu-share/utils/const.go`: `ResourceName`, `DeviceIndex`, `DevIdSep`);
//! - a whole-GPU pod takes fully free GPUs; a sharing pod takes `m` milli on one GPU that has at
//!   least `m` free;
//! - the scheduler records the GPU indices it chose in the pod annotation
//!   [`GPU_INDEX_ANNOTATION`] (`"3"`, or `"0-1-2-3"` for several GPUs), set through the Binding;
//!   the kubelet's device manager then hands out devices on exactly those GPUs.

use std::collections::BTreeMap;

use crate::core::{node_labels, resource_names, Node, Pod, ALLOCATED_DEVICES_ANNOTATION};
use crate::resources::Resources;

/// Milli-GPU per physical GPU (open-gpu-share `MILLI`).
pub const MILLI_PER_GPU: i64 = 1000;
/// The extended resource of a fraction of one GPU, in milli-GPU (open-gpu-share `ResourceName`).
pub const GPU_MILLI: &str = "alibabacloud.com/gpu-milli";
/// Pod annotation with the GPU indices the scheduler chose (open-gpu-share `DeviceIndex`).
pub const GPU_INDEX_ANNOTATION: &str = "alibabacloud.com/gpu-index";
/// Separator of several indices in [`GPU_INDEX_ANNOTATION`] (open-gpu-share `DevIdSep`).
pub const GPU_INDEX_SEPARATOR: char = '-';

/// What a pod asks of GPUs: `count` GPUs with `milli` milli-GPU on each. Whole GPUs have
/// `milli == 1000`; a sharing pod has `count == 1` and `milli < 1000`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GpuRequest {
    /// Number of GPUs.
    pub count: u32,
    /// Milli-GPU on each of them (1..=1000).
    pub milli: i64,
}

impl GpuRequest {
    /// The GPU request in a pod's effective requests: `nvidia.com/gpu: k` is `k` whole GPUs;
    /// otherwise `alibabacloud.com/gpu-milli: m` is one shared GPU when `m < 1000`, else
    /// `m / 1000` whole GPUs (rounded up). `None` when the pod asks for no GPU.
    pub fn from_requests(requests: &Resources) -> Option<GpuRequest> {
        let whole = requests.get(resource_names::NVIDIA_GPU);
        if whole > 0 {
            return Some(GpuRequest {
                count: u32::try_from(whole).unwrap_or(u32::MAX),
                milli: MILLI_PER_GPU,
            });
        }
        let milli = requests.get(GPU_MILLI);
        if milli <= 0 {
            return None;
        }
        if milli < MILLI_PER_GPU {
            return Some(GpuRequest { count: 1, milli });
        }
        let count = (milli + MILLI_PER_GPU - 1) / MILLI_PER_GPU;
        Some(GpuRequest {
            count: u32::try_from(count).unwrap_or(u32::MAX),
            milli: MILLI_PER_GPU,
        })
    }

    /// True for a fraction of one GPU.
    pub fn is_shared(&self) -> bool {
        self.count == 1 && self.milli < MILLI_PER_GPU
    }

    /// Total milli-GPU (`count * milli`).
    pub fn total_milli(&self) -> i64 {
        i64::from(self.count) * self.milli
    }
}

/// A pod's GPU request and, when known, the GPU indices it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodGpu {
    /// The request.
    pub request: GpuRequest,
    /// The GPU indices the pod holds: from [`GPU_INDEX_ANNOTATION`] (the scheduler's choice), else
    /// from the kubelet's `k8s-mini.io/allocated-devices`; empty when not known yet.
    pub indices: Vec<usize>,
}

impl PodGpu {
    /// The GPU part of `pod` whose effective requests are `requests`; `None` without GPUs.
    pub fn of(pod: &Pod, requests: &Resources) -> Option<PodGpu> {
        let request = GpuRequest::from_requests(requests)?;
        let indices = pod_gpu_indices(pod).unwrap_or_default();
        Some(PodGpu { request, indices })
    }
}

/// Parses `"3"` or `"0-1-2-3"`; `None` when a part is not a number.
pub fn parse_gpu_indices(value: &str) -> Option<Vec<usize>> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    value
        .split(GPU_INDEX_SEPARATOR)
        .map(|p| p.trim().parse::<usize>().ok())
        .collect()
}

/// Formats indices for [`GPU_INDEX_ANNOTATION`] (`"0-1"`).
pub fn format_gpu_indices(indices: &[usize]) -> String {
    indices
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(&GPU_INDEX_SEPARATOR.to_string())
}

/// The GPU indices a pod holds: [`GPU_INDEX_ANNOTATION`], else the GPUs named in the kubelet's
/// allocated-devices annotation (`nvidia.com/gpu=0,1` or `alibabacloud.com/gpu-milli=3-0..3-459`).
pub fn pod_gpu_indices(pod: &Pod) -> Option<Vec<usize>> {
    let ann = &pod.metadata.annotations;
    if let Some(v) = ann.get(GPU_INDEX_ANNOTATION) {
        return parse_gpu_indices(v);
    }
    let devices = ann.get(ALLOCATED_DEVICES_ANNOTATION)?;
    let mut out: Vec<usize> = Vec::new();
    for part in devices.split(';') {
        let Some((res, ids)) = part.split_once('=') else {
            continue;
        };
        if res == resource_names::NVIDIA_GPU {
            for id in ids.split(',') {
                if let Ok(i) = id.trim().parse::<usize>() {
                    out.push(i);
                }
            }
        } else if res == GPU_MILLI {
            // Device IDs are `<gpu>-<k>`: the GPU is the part before the dash.
            if let Some(first) = ids.split([',', '.']).next() {
                if let Some((g, _)) = first.split_once('-') {
                    if let Ok(i) = g.trim().parse::<usize>() {
                        out.push(i);
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    (!out.is_empty()).then_some(out)
}

/// A node's GPUs as the scheduler sees them: free milli-GPU per GPU index, the GPU model, the
/// pods' GPU "affinity" tags (how many sharing pods and k-GPU pods run there), and GPU requests
/// of pods whose GPU indices are not known yet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeGpus {
    left: Vec<i64>,
    model: Option<String>,
    /// Pods per tag: 0 = sharing pods, k = pods with k whole GPUs.
    tags: BTreeMap<u32, u32>,
    unassigned_whole: i64,
    unassigned_milli: i64,
}

impl NodeGpus {
    /// The GPUs of `node`: `status.allocatable["nvidia.com/gpu"]`, else
    /// `allocatable["alibabacloud.com/gpu-milli"] / 1000`; all free. The model is the
    /// `nvidia.com/gpu.product` label.
    pub fn new(node: &Node) -> NodeGpus {
        let alloc = &node.status.allocatable;
        let whole = alloc
            .get(resource_names::NVIDIA_GPU)
            .map(|q| q.value())
            .unwrap_or(0);
        let n = if whole > 0 {
            whole
        } else {
            alloc.get(GPU_MILLI).map(|q| q.value()).unwrap_or(0) / MILLI_PER_GPU
        };
        let n = usize::try_from(n.clamp(0, 4096)).unwrap_or(0);
        NodeGpus {
            left: vec![MILLI_PER_GPU; n],
            model: node
                .metadata
                .labels
                .get(node_labels::NVIDIA_GPU_PRODUCT)
                .cloned(),
            tags: BTreeMap::new(),
            unassigned_whole: 0,
            unassigned_milli: 0,
        }
    }

    /// A node with these free milli-GPU per GPU (tests and tools).
    pub fn from_left(left: Vec<i64>, model: Option<&str>) -> NodeGpus {
        NodeGpus {
            left,
            model: model.map(str::to_string),
            ..NodeGpus::default()
        }
    }

    /// Number of GPUs.
    pub fn count(&self) -> usize {
        self.left.len()
    }

    /// Free milli-GPU per GPU index.
    pub fn milli_left(&self) -> &[i64] {
        &self.left
    }

    /// The GPU model (`nvidia.com/gpu.product`), if labelled.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Sum of free milli-GPU.
    pub fn total_left(&self) -> i64 {
        self.left.iter().sum()
    }

    /// GPUs with all 1000 milli free.
    pub fn fully_free(&self) -> usize {
        self.left.iter().filter(|l| **l >= MILLI_PER_GPU).count()
    }

    /// Pods per GPU tag: key 0 = sharing pods, k = pods holding k whole GPUs.
    pub fn tags(&self) -> &BTreeMap<u32, u32> {
        &self.tags
    }

    /// Whole GPUs requested by pods on the node whose indices are unknown.
    pub fn unassigned_whole(&self) -> i64 {
        self.unassigned_whole
    }

    /// Shared milli-GPU requested by pods on the node whose GPU index is unknown.
    pub fn unassigned_milli(&self) -> i64 {
        self.unassigned_milli
    }

    /// True when the request fits: `count` GPUs with at least `milli` free each, not counting
    /// whole GPUs already promised to pods whose indices are unknown.
    pub fn fits(&self, req: &GpuRequest) -> bool {
        if req.count == 0 {
            return true;
        }
        let reserved = usize::try_from(self.unassigned_whole.max(0)).unwrap_or(usize::MAX);
        // Whole GPUs must also leave the fully free GPUs promised to pods of unknown index.
        let need = if req.milli >= MILLI_PER_GPU {
            (req.count as usize).saturating_add(reserved)
        } else {
            req.count as usize
        };
        let min = req.milli.min(MILLI_PER_GPU);
        let mut n = 0usize;
        for l in &self.left {
            if *l >= min {
                n += 1;
                if n >= need {
                    return true;
                }
            }
        }
        false
    }

    /// Adds a pod's GPUs.
    pub fn add(&mut self, g: &PodGpu) {
        self.apply(g, 1);
    }

    /// Removes a pod's GPUs (exact inverse of [`NodeGpus::add`]).
    pub fn remove(&mut self, g: &PodGpu) {
        self.apply(g, -1);
    }

    fn apply(&mut self, g: &PodGpu, sign: i64) {
        let tag = if g.request.is_shared() {
            0
        } else {
            g.request.count
        };
        if sign > 0 {
            *self.tags.entry(tag).or_insert(0) += 1;
        } else if let Some(c) = self.tags.get_mut(&tag) {
            *c = c.saturating_sub(1);
            if *c == 0 {
                self.tags.remove(&tag);
            }
        }
        let known = !g.indices.is_empty() && g.indices.iter().all(|i| *i < self.left.len());
        if known {
            for i in &g.indices {
                self.left[*i] -= sign * g.request.milli;
            }
        } else if g.request.is_shared() {
            self.unassigned_milli += sign * g.request.milli;
        } else {
            self.unassigned_whole += sign * i64::from(g.request.count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Quantity;

    fn reqs(name: &str, v: i64) -> Resources {
        let mut r = Resources::default();
        r.scalar.insert(name.to_string(), v);
        r
    }

    #[test]
    fn requests_map_to_whole_or_shared_gpus() {
        assert_eq!(
            GpuRequest::from_requests(&reqs(resource_names::NVIDIA_GPU, 2)),
            Some(GpuRequest {
                count: 2,
                milli: 1000
            })
        );
        let shared = GpuRequest::from_requests(&reqs(GPU_MILLI, 460)).unwrap();
        assert!(shared.is_shared());
        assert_eq!(shared.total_milli(), 460);
        assert_eq!(
            GpuRequest::from_requests(&reqs(GPU_MILLI, 2000)),
            Some(GpuRequest {
                count: 2,
                milli: 1000
            })
        );
        assert_eq!(GpuRequest::from_requests(&Resources::default()), None);
    }

    #[test]
    fn indices_parse_from_scheduler_or_kubelet_annotations() {
        assert_eq!(parse_gpu_indices("0-1-3"), Some(vec![0, 1, 3]));
        assert_eq!(parse_gpu_indices("x"), None);
        assert_eq!(format_gpu_indices(&[2, 5]), "2-5");
        let mut p = Pod::default();
        p.metadata.annotations.insert(
            ALLOCATED_DEVICES_ANNOTATION.into(),
            "alibabacloud.com/gpu-milli=3-0..3-459".into(),
        );
        assert_eq!(pod_gpu_indices(&p), Some(vec![3]));
        p.metadata
            .annotations
            .insert(GPU_INDEX_ANNOTATION.into(), "1".into());
        assert_eq!(pod_gpu_indices(&p), Some(vec![1]));
    }

    #[test]
    fn node_slots_track_shared_and_whole_pods() {
        let mut node = Node::default();
        node.status.allocatable.insert(
            resource_names::NVIDIA_GPU.into(),
            Quantity::parse("4").unwrap(),
        );
        let mut g = NodeGpus::new(&node);
        assert_eq!(g.milli_left(), &[1000, 1000, 1000, 1000]);
        let shared = PodGpu {
            request: GpuRequest {
                count: 1,
                milli: 460,
            },
            indices: vec![2],
        };
        let whole = PodGpu {
            request: GpuRequest {
                count: 2,
                milli: 1000,
            },
            indices: vec![0, 1],
        };
        g.add(&shared);
        g.add(&whole);
        assert_eq!(g.milli_left(), &[0, 0, 540, 1000]);
        assert_eq!(g.fully_free(), 1);
        assert_eq!(g.total_left(), 1540);
        assert_eq!(g.tags().get(&0), Some(&1));
        assert_eq!(g.tags().get(&2), Some(&1));
        assert!(g.fits(&GpuRequest {
            count: 1,
            milli: 540
        }));
        assert!(!g.fits(&GpuRequest {
            count: 2,
            milli: 1000
        }));
        // A whole-GPU pod without known indices reserves a fully free GPU.
        let unknown = PodGpu {
            request: GpuRequest {
                count: 1,
                milli: 1000,
            },
            indices: vec![],
        };
        g.add(&unknown);
        assert!(!g.fits(&GpuRequest {
            count: 1,
            milli: 1000
        }));
        g.remove(&unknown);
        g.remove(&whole);
        g.remove(&shared);
        assert_eq!(g.milli_left(), &[1000, 1000, 1000, 1000]);
        assert!(g.tags().is_empty());
    }
}
