//! Resource-based node scoring shared by NodeResourcesFit and NodeResourcesBalancedAllocation:
//! per configured resource, (allocatable, requested-after-placing-the-pod), then one of the
//! upstream scorers. Mirrors upstream `pkg/scheduler/framework/plugins/noderesources/`
//! `resource_allocation.go`, `least_allocated.go`, `most_allocated.go`,
//! `requested_to_capacity_ratio.go` and `balanced_allocation.go`, with the same integer arithmetic
//! (128-bit intermediates so large byte counts cannot overflow).
//!
//! CPU and memory count "non-zero" requests (100m / 200Mi per container that sets none) unless
//! `use_requested` (BalancedAllocation). An extended resource the pod does not request, or one the
//! node does not have, is left out of the score.

use k8s_types::core::Pod;
use k8s_types::framework::{NodeInfo, MAX_NODE_SCORE};
use k8s_types::resources::{pod_non_zero_requests, pod_requests, Resources};

use super::helper::{broken_linear, is_scalar_resource_name};
use crate::config::args::{ResourceSpec, MAX_CUSTOM_PRIORITY_SCORE};

/// Upstream `maxUtilization`.
const MAX_UTILIZATION: i64 = 100;

/// The scoring function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scorer {
    /// `(allocatable - requested) * 100 / allocatable`, weighted mean.
    LeastAllocated,
    /// `requested * 100 / allocatable` (requested capped at allocatable), weighted mean.
    MostAllocated,
    /// Piecewise-linear function of utilization; the shape's scores already scaled to 0-100.
    RequestedToCapacityRatio(Vec<(i64, i64)>),
    /// `(1 - std(fractions)) * 100`.
    Balanced,
}

/// Scores nodes on a list of resources (upstream `resourceAllocationScorer`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceAllocationScorer {
    /// Resources and weights, in configuration order.
    pub resources: Vec<ResourceSpec>,
    /// Use plain requests for cpu/memory instead of non-zero requests.
    pub use_requested: bool,
    /// The function.
    pub scorer: Scorer,
}

impl ResourceAllocationScorer {
    /// A RequestedToCapacityRatio scorer from a config shape of (utilization 0-100, score 0-10).
    pub fn requested_to_capacity_ratio(resources: Vec<ResourceSpec>, shape: &[(i64, i64)]) -> Self {
        let scale = MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE;
        ResourceAllocationScorer {
            resources,
            use_requested: false,
            scorer: Scorer::RequestedToCapacityRatio(
                shape.iter().map(|(u, s)| (*u, s * scale)).collect(),
            ),
        }
    }

    /// The pod's request of each configured resource (upstream `calculatePodResourceRequestList`):
    /// milli-CPU for `cpu`, units otherwise.
    pub fn pod_requests(&self, pod: &Pod) -> Vec<i64> {
        let reqs: Resources = if self.use_requested {
            pod_requests(pod)
        } else {
            pod_non_zero_requests(pod)
        };
        self.resources.iter().map(|r| reqs.get(&r.name)).collect()
    }

    /// True when the pod requests none of the resources (upstream `isBestEffortPod`).
    pub fn is_best_effort(pod_requests: &[i64]) -> bool {
        pod_requests.iter().all(|r| *r == 0)
    }

    /// (allocatable, requested including the pod) of one resource; (0, 0) leaves it out
    /// (upstream `calculateResourceAllocatableRequest`).
    fn allocatable_requested_of(
        &self,
        node: &NodeInfo,
        kind: &ResourceKind<'_>,
        pod_request: i64,
    ) -> (i64, i64) {
        // cpu and memory from the node's compact summary (same values as its Resources).
        let s = node.summary();
        match kind {
            ResourceKind::Cpu => {
                let requested = if self.use_requested {
                    s.requested_milli_cpu
                } else {
                    s.non_zero_milli_cpu
                };
                (s.allocatable_milli_cpu, requested + pod_request)
            }
            ResourceKind::Memory => {
                let requested = if self.use_requested {
                    s.requested_memory
                } else {
                    s.non_zero_memory
                };
                (s.allocatable_memory, requested + pod_request)
            }
            ResourceKind::EphemeralStorage => (
                node.allocatable().ephemeral_storage,
                node.requested().ephemeral_storage + pod_request,
            ),
            ResourceKind::Other { scalar: true, .. } if pod_request == 0 => (0, 0),
            ResourceKind::Other { name, .. } => match node.allocatable().scalar.get(*name) {
                Some(a) => (
                    *a,
                    node.requested().scalar.get(*name).copied().unwrap_or(0) + pod_request,
                ),
                None => (0, 0),
            },
        }
    }

    /// [`ResourceAllocationScorer::score`] of every node into `out` (same values), resolving the
    /// resource names once.
    pub fn score_nodes(&self, nodes: &[&NodeInfo], pod_requests: &[i64], out: &mut [i64]) {
        let kinds = self.kinds();
        let native = kinds.len() == pod_requests.len()
            && kinds
                .iter()
                .all(|k| !matches!(k, ResourceKind::Other { .. }));
        if native {
            match self.scorer {
                Scorer::LeastAllocated => {
                    return self.score_native(nodes, &kinds, pod_requests, out, true);
                }
                Scorer::MostAllocated => {
                    return self.score_native(nodes, &kinds, pod_requests, out, false);
                }
                Scorer::Balanced if kinds.len() == 2 => {
                    return self.score_balanced_pair(nodes, &kinds, pod_requests, out);
                }
                _ => {}
            }
        }
        for (n, o) in nodes.iter().zip(out.iter_mut()) {
            *o = self.score_kinds(n, &kinds, pod_requests);
        }
    }

    /// LeastAllocated / MostAllocated over cpu, memory and ephemeral-storage only: the same
    /// arithmetic as [`ResourceAllocationScorer::score`], with the scorer and resource kinds
    /// decided once.
    fn score_native(
        &self,
        nodes: &[&NodeInfo],
        kinds: &[ResourceKind<'_>],
        pod_requests: &[i64],
        out: &mut [i64],
        least: bool,
    ) {
        if let ([ResourceKind::Cpu, ResourceKind::Memory], [r0, r1], [p0, p1]) =
            (kinds, self.resources.as_slice(), pod_requests)
        {
            // The default resources: straight-line code for cpu and memory.
            let (w0, w1) = (i128::from(r0.weight), i128::from(r1.weight));
            let part = |req: i64, alloc: i64| {
                if least {
                    least_requested_score(req, alloc)
                } else {
                    most_requested_score(req, alloc)
                }
            };
            for (n, o) in nodes.iter().zip(out.iter_mut()) {
                let s = n.summary();
                let (req_cpu, req_mem) = if self.use_requested {
                    (s.requested_milli_cpu, s.requested_memory)
                } else {
                    (s.non_zero_milli_cpu, s.non_zero_memory)
                };
                let (mut node_score, mut weight_sum) = (0i128, 0i128);
                if s.allocatable_milli_cpu != 0 {
                    node_score += i128::from(part(req_cpu + p0, s.allocatable_milli_cpu)) * w0;
                    weight_sum += w0;
                }
                if s.allocatable_memory != 0 {
                    node_score += i128::from(part(req_mem + p1, s.allocatable_memory)) * w1;
                    weight_sum += w1;
                }
                *o = weighted_mean(node_score, weight_sum);
            }
            return;
        }
        for (n, o) in nodes.iter().zip(out.iter_mut()) {
            let (mut node_score, mut weight_sum) = (0i128, 0i128);
            for ((r, kind), pr) in self.resources.iter().zip(kinds).zip(pod_requests) {
                let (alloc, req) = self.allocatable_requested_of(n, kind, *pr);
                if alloc == 0 {
                    continue;
                }
                let s = if least {
                    least_requested_score(req, alloc)
                } else {
                    most_requested_score(req, alloc)
                };
                let w = i128::from(r.weight);
                node_score += i128::from(s) * w;
                weight_sum += w;
            }
            *o = weighted_mean(node_score, weight_sum);
        }
    }

    /// BalancedAllocation over two of cpu, memory and ephemeral-storage: `(1 - |f0 - f1| / 2) *
    /// 100` truncated, as [`ResourceAllocationScorer::score`] computes for two fractions.
    fn score_balanced_pair(
        &self,
        nodes: &[&NodeInfo],
        kinds: &[ResourceKind<'_>],
        pod_requests: &[i64],
        out: &mut [i64],
    ) {
        let (k0, k1) = (&kinds[0], &kinds[1]);
        let (p0, p1) = (pod_requests[0], pod_requests[1]);
        for (n, o) in nodes.iter().zip(out.iter_mut()) {
            let (a0, r0) = self.allocatable_requested_of(n, k0, p0);
            let (a1, r1) = self.allocatable_requested_of(n, k1, p1);
            let std = if a0 != 0 && a1 != 0 {
                ((fraction(r0, a0) - fraction(r1, a1)) / 2.0).abs()
            } else {
                0.0
            };
            *o = ((1.0 - std) * MAX_NODE_SCORE as f64) as i64;
        }
    }

    fn kinds(&self) -> Vec<ResourceKind<'_>> {
        self.resources
            .iter()
            .map(|r| ResourceKind::of(&r.name))
            .collect()
    }

    /// The node's score for a pod with these per-resource requests (upstream `score`).
    pub fn score(&self, node: &NodeInfo, pod_requests: &[i64]) -> i64 {
        self.score_kinds(node, &self.kinds(), pod_requests)
    }

    fn score_kinds(
        &self,
        node: &NodeInfo,
        kinds: &[ResourceKind<'_>],
        pod_requests: &[i64],
    ) -> i64 {
        let pairs = || {
            self.resources
                .iter()
                .zip(kinds.iter())
                .zip(pod_requests.iter().copied())
        };
        match &self.scorer {
            Scorer::LeastAllocated | Scorer::MostAllocated => {
                let least = self.scorer == Scorer::LeastAllocated;
                let (mut node_score, mut weight_sum) = (0i128, 0i128);
                for ((r, kind), pr) in pairs() {
                    let (alloc, req) = self.allocatable_requested_of(node, kind, pr);
                    if alloc == 0 {
                        continue;
                    }
                    let s = if least {
                        least_requested_score(req, alloc)
                    } else {
                        most_requested_score(req, alloc)
                    };
                    let w = i128::from(r.weight);
                    node_score += i128::from(s) * w;
                    weight_sum += w;
                }
                weighted_mean(node_score, weight_sum)
            }
            Scorer::RequestedToCapacityRatio(shape) => {
                let (mut node_score, mut weight_sum) = (0i128, 0i128);
                for ((r, kind), pr) in pairs() {
                    let (alloc, req) = self.allocatable_requested_of(node, kind, pr);
                    if alloc == 0 {
                        continue;
                    }
                    let s = if req > alloc {
                        broken_linear(shape, MAX_UTILIZATION)
                    } else {
                        broken_linear(shape, scaled_utilization(req, alloc))
                    };
                    if s > 0 {
                        let w = i128::from(r.weight);
                        node_score += i128::from(s) * w;
                        weight_sum += w;
                    }
                }
                if weight_sum == 0 {
                    0
                } else {
                    // Upstream: int64(math.Round(float64(nodeScore) / float64(weightSum))).
                    (node_score as f64 / weight_sum as f64).round() as i64
                }
            }
            Scorer::Balanced => {
                let (mut count, mut total) = (0usize, 0f64);
                let (mut first, mut second) = (0f64, 0f64);
                for ((_, kind), pr) in pairs() {
                    let (alloc, req) = self.allocatable_requested_of(node, kind, pr);
                    if alloc == 0 {
                        continue;
                    }
                    let f = fraction(req, alloc);
                    match count {
                        0 => first = f,
                        1 => second = f,
                        _ => {}
                    }
                    total += f;
                    count += 1;
                }
                let std = match count {
                    2 => ((first - second) / 2.0).abs(),
                    c if c > 2 => {
                        let mean = total / c as f64;
                        let mut sum = 0f64;
                        for ((_, kind), pr) in pairs() {
                            let (alloc, req) = self.allocatable_requested_of(node, kind, pr);
                            if alloc == 0 {
                                continue;
                            }
                            let f = fraction(req, alloc);
                            sum += (f - mean) * (f - mean);
                        }
                        (sum / c as f64).sqrt()
                    }
                    _ => 0.0,
                };
                // Upstream truncates: int64((1 - std) * float64(MaxNodeScore)).
                ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
            }
        }
    }
}

/// A configured resource name, resolved once per scoring pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ResourceKind<'a> {
    Cpu,
    Memory,
    EphemeralStorage,
    /// Any other name; `scalar` per upstream `IsScalarResourceName` (left out of the score when
    /// the pod does not request it).
    Other {
        name: &'a str,
        scalar: bool,
    },
}

impl<'a> ResourceKind<'a> {
    fn of(name: &'a str) -> ResourceKind<'a> {
        match name {
            "cpu" => ResourceKind::Cpu,
            "memory" => ResourceKind::Memory,
            "ephemeral-storage" => ResourceKind::EphemeralStorage,
            _ => ResourceKind::Other {
                name,
                scalar: is_scalar_resource_name(name),
            },
        }
    }
}

fn fraction(requested: i64, allocatable: i64) -> f64 {
    let f = requested as f64 / allocatable as f64;
    if f > 1.0 {
        1.0
    } else {
        f
    }
}

/// `node_score / weight_sum` truncated (0 for no weight), in 64-bit arithmetic when both fit.
fn weighted_mean(node_score: i128, weight_sum: i128) -> i64 {
    if weight_sum == 0 {
        return 0;
    }
    if let (Ok(a), Ok(b)) = (i64::try_from(node_score), i64::try_from(weight_sum)) {
        // The default weights (cpu 1, memory 1) sum to 2: a constant divisor is a shift.
        if b == 2 {
            return a / 2;
        }
        if let Some(v) = a.checked_div(b) {
            return v;
        }
    }
    (node_score / weight_sum) as i64
}

/// `a * 100 / b` for `0 <= a <= b`, `b > 0`, in 64-bit arithmetic unless `a * 100` overflows.
fn times_max_over(a: i64, b: i64) -> i64 {
    match a.checked_mul(MAX_NODE_SCORE) {
        Some(p) => p / b,
        None => ((i128::from(a) * i128::from(MAX_NODE_SCORE)) / i128::from(b)) as i64,
    }
}

/// Upstream `leastRequestedScore`.
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    times_max_over(capacity - requested, capacity)
}

/// Upstream `mostRequestedScore`.
pub fn most_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 {
        return 0;
    }
    let requested = requested.min(capacity);
    times_max_over(requested, capacity)
}

/// Upstream `scaledUtilization`: `requested * 100 / capacity`, requested clamped to [0, capacity].
pub fn scaled_utilization(requested: i64, capacity: i64) -> i64 {
    if capacity <= 0 || requested <= 0 {
        return 0;
    }
    if requested >= capacity {
        return MAX_UTILIZATION;
    }
    ((i128::from(requested) * i128::from(MAX_UTILIZATION)) / i128::from(capacity)) as i64
}
