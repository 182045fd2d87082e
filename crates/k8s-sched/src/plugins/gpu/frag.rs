//! GPU fragmentation as defined by the FGD paper (Weng et al., "Beware of Fragmentation: Scheduling
//! GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC '23, §3) and its public
//! simulator (hkust-adsl/kubernetes-scheduler-simulator `pkg/utils/frag.go`: `GetTypicalPods`,
//! `NodeGpuShareFragAmount`, `GetNodePodFrag`, `FragAmountSumExceptQ3`).
//!
//! The *target workload* is the list of the most frequent pod shapes ([`typical_pods`]). For one node
//! and one typical pod, the node's free GPU is classified: when the node can host the pod (enough
//! GPUs with enough free milli, enough CPU, an allowed GPU model: case Q3) only the free milli on
//! GPUs too small for the pod is fragment; in every other case (lacking GPU, lacking CPU, wrong
//! model, or a CPU-only typical pod) all free milli-GPU of the node counts. The node's
//! fragmentation is the frequency-weighted sum over typical pods ([`node_frag`]), in milli-GPU;
//! the cluster's is the sum over nodes.

use std::collections::BTreeMap;

use k8s_types::gpushare::GpuRequest;
use serde::{Deserialize, Serialize};

use super::shape::PodShape;

/// Default share of pods the typical pods cover, in percent (the paper's experiment scripts pass
/// `--pod-popularity-threshold 95`; the simulator's own default constant is 60).
pub const DEFAULT_POPULARITY_THRESHOLD: u32 = 95;
/// Default number of shapes added per step while covering the threshold (`--pod-increase-step 1`).
pub const DEFAULT_INCREASE_STEP: usize = 1;

/// One typical pod: a shape and its frequency in the target workload (0..1, summing to 1).
#[derive(Clone, Debug, PartialEq)]
pub struct TypicalPod {
    /// The shape.
    pub shape: PodShape,
    /// Frequency.
    pub freq: f64,
}

/// A typical pod as written in plugin args (`pluginConfig[].args.typicalPods[]`), with the
/// simulator's field names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypicalPodArgs {
    /// Milli-CPU.
    #[serde(default)]
    pub milli_cpu: i64,
    /// Milli-GPU per GPU (0 for a CPU-only pod).
    #[serde(default)]
    pub milli_gpu: i64,
    /// Number of GPUs.
    #[serde(default)]
    pub gpu_number: u32,
    /// Allowed GPU models joined by `|`; empty for any.
    #[serde(default)]
    pub gpu_type: String,
    /// Frequency (0..1).
    #[serde(default)]
    pub percentage: f64,
}

impl From<&TypicalPod> for TypicalPodArgs {
    fn from(t: &TypicalPod) -> TypicalPodArgs {
        TypicalPodArgs {
            milli_cpu: t.shape.milli_cpu,
            milli_gpu: t.shape.gpu.milli,
            gpu_number: t.shape.gpu.count,
            gpu_type: t.shape.models.clone(),
            percentage: t.freq,
        }
    }
}

impl From<&TypicalPodArgs> for TypicalPod {
    fn from(a: &TypicalPodArgs) -> TypicalPod {
        TypicalPod {
            shape: PodShape {
                milli_cpu: a.milli_cpu,
                gpu: GpuRequest {
                    count: if a.milli_gpu > 0 { a.gpu_number } else { 0 },
                    milli: if a.gpu_number > 0 { a.milli_gpu } else { 0 },
                },
                models: a.gpu_type.clone(),
            },
            freq: a.percentage,
        }
    }
}

/// The simulator's `GetTypicalPods` (with `isInvolvedCpuPods: true`, `gpuResWeight: 0`): count
/// pods per shape, sort by count descending (ties: the larger shape by milli-CPU, milli-GPU, GPU
/// count, models first), take shapes `step` at a time until they cover `threshold_pct` percent of
/// the pods, and renormalise their frequencies to sum to 1.
pub fn typical_pods<'a>(
    shapes: impl IntoIterator<Item = &'a PodShape>,
    threshold_pct: u32,
    step: usize,
) -> Vec<TypicalPod> {
    let mut counts: BTreeMap<&PodShape, u64> = BTreeMap::new();
    let mut total = 0u64;
    for s in shapes {
        *counts.entry(s).or_insert(0) += 1;
        total += 1;
    }
    if total == 0 {
        return Vec::new();
    }
    let mut list: Vec<(&PodShape, u64)> = counts.into_iter().collect();
    list.sort_by(|(a, ca), (b, cb)| {
        cb.cmp(ca)
            .then(b.milli_cpu.cmp(&a.milli_cpu))
            .then(shape_gpu_milli(b).cmp(&shape_gpu_milli(a)))
            .then(b.gpu.count.cmp(&a.gpu.count))
            .then(b.models.cmp(&a.models))
    });
    let expected = f64::from(threshold_pct) * total as f64 / 100.0;
    let step = step.max(1);
    let mut taken = 0usize;
    let mut cum = 0u64;
    while (cum as f64) < expected && taken < list.len() {
        let upto = (taken + step).min(list.len());
        while taken < upto {
            cum += list[taken].1;
            taken += 1;
        }
    }
    list.truncate(taken);
    list.into_iter()
        .map(|(s, c)| TypicalPod {
            shape: s.clone(),
            freq: c as f64 / cum as f64,
        })
        .collect()
}

fn shape_gpu_milli(s: &PodShape) -> i64 {
    if s.gpu.count == 0 {
        0
    } else {
        s.gpu.milli
    }
}

/// Fragmentation of one node for one typical pod, in milli-GPU (the simulator's `GetNodePodFrag`
/// class, then `NodeGpuShareFragAmount`'s amount: partial for Q3, all free milli otherwise).
pub fn pod_frag(cpu_left: i64, left: &[i64], model: Option<&str>, pod: &PodShape) -> i64 {
    let total: i64 = left.iter().sum();
    if !pod.wants_gpu() || !pod.accepts_model(model) {
        return total;
    }
    let milli = pod.gpu.milli;
    let hosts = left.iter().filter(|l| **l >= milli).count() >= pod.gpu.count as usize;
    if hosts && cpu_left >= pod.milli_cpu {
        left.iter().filter(|l| **l < milli).sum()
    } else {
        total
    }
}

/// The node's fragmentation against the target workload, in milli-GPU (the simulator's
/// `NodeGpuShareFragAmountScore`: the frequency-weighted sum over typical pods, Q3's satisfied part
/// excluded).
pub fn node_frag(cpu_left: i64, left: &[i64], model: Option<&str>, typical: &[TypicalPod]) -> f64 {
    if left.is_empty() {
        return 0.0;
    }
    typical
        .iter()
        .map(|t| t.freq * pod_frag(cpu_left, left, model, &t.shape) as f64)
        .sum()
}

/// The logistic function the FGD score squashes fragmentation deltas with.
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(cpu: i64, count: u32, milli: i64) -> PodShape {
        PodShape {
            milli_cpu: cpu,
            gpu: GpuRequest { count, milli },
            models: String::new(),
        }
    }

    #[test]
    fn typical_pods_cover_the_threshold_and_renormalise() {
        let a = shape(4000, 1, 1000);
        let b = shape(2000, 1, 500);
        let c = shape(1000, 0, 0);
        let mut pods = vec![a.clone(); 6];
        pods.extend(vec![b.clone(); 3]);
        pods.push(c.clone());
        // 95% of 10 pods = 9.5: a (6) + b (3) = 9 < 9.5, so c is taken too.
        let t = typical_pods(&pods, 95, 1);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].shape, a);
        assert!((t[0].freq - 0.6).abs() < 1e-12);
        // 80%: a + b = 9 >= 8, renormalised over 9 pods.
        let t = typical_pods(&pods, 80, 1);
        assert_eq!(t.len(), 2);
        assert!((t[1].freq - 3.0 / 9.0).abs() < 1e-12);
        // Equal counts: the larger shape first.
        let t = typical_pods(&[b.clone(), a.clone()], 100, 1);
        assert_eq!(t[0].shape, a);
    }

    #[test]
    fn frag_follows_the_paper_cases() {
        // Node: 8 CPUs free, GPUs with 1000, 500, 200 milli free (1700 total).
        let left = [1000, 500, 200];
        // Q3: a 0.5-GPU pod fits; only the 200 milli GPU is fragment.
        assert_eq!(pod_frag(8000, &left, None, &shape(1000, 1, 500)), 200);
        // Q4 (lacking CPU): everything is fragment.
        assert_eq!(pod_frag(500, &left, None, &shape(1000, 1, 500)), 1700);
        // Q2 (lacking GPU): two whole GPUs do not fit.
        assert_eq!(pod_frag(8000, &left, None, &shape(1000, 2, 1000)), 1700);
        // Q3 for one whole GPU: the partial GPUs (700 milli) are fragment.
        assert_eq!(pod_frag(8000, &left, None, &shape(1000, 1, 1000)), 700);
        // A CPU-only typical pod counts all free GPU (the simulator's XL/XR classes).
        assert_eq!(pod_frag(8000, &left, None, &shape(1000, 0, 0)), 1700);
        // Wrong model: no access.
        let mut t4 = shape(1000, 1, 500);
        t4.models = "T4".into();
        assert_eq!(pod_frag(8000, &left, Some("G2"), &t4), 1700);
        let typical = vec![
            TypicalPod {
                shape: shape(1000, 1, 500),
                freq: 0.5,
            },
            TypicalPod {
                shape: shape(1000, 1, 1000),
                freq: 0.5,
            },
        ];
        assert!((node_frag(8000, &left, None, &typical) - 450.0).abs() < 1e-9);
        assert!((sigmoid(0.0) - 0.5).abs() < 1e-12);
    }
}
