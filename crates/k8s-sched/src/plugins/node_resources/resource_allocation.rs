//! The resource scorer shared by NodeResourcesFit and NodeResourcesBalancedAllocation: per
//! configured resource, (allocatable, requested after placing the pod), then the strategy's
//! formula, each in its own file (`least_allocated.rs`, `most_allocated.rs`,
//! `requested_to_capacity_ratio.rs`, and `balanced_allocation.rs`'s `balanced_resource_score`).
//! Mirrors upstream `pkg/scheduler/framework/plugins/noderesources/resource_allocation.go`, with
//! the same integer arithmetic (128-bit intermediates so large byte counts cannot overflow). The
//! fused node pass (`runtime/fused.rs`) calls the same formulas on its per-node arrays.
//!
//! CPU and memory count "non-zero" requests (100m / 200Mi per container that sets none) unless
//! `use_requested` (BalancedAllocation). An extended resource the pod does not request, or one the
//! node does not have, is left out of the score.

use k8s_sched_framework::{NodeInfo, MAX_NODE_SCORE};
use k8s_types::core::Pod;
use k8s_types::resources::{pod_non_zero_requests, pod_requests, Resources};

use super::balanced_allocation::balanced_resource_score;
use super::least_allocated::least_resource_score;
use super::most_allocated::most_resource_score;
use super::requested_to_capacity_ratio::{requested_to_capacity_ratio_score, scaled_shape};
use crate::config::args::ResourceSpec;
use crate::plugins::helper::is_scalar_resource_name;

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
        ResourceAllocationScorer {
            resources,
            use_requested: false,
            scorer: Scorer::RequestedToCapacityRatio(scaled_shape(shape)),
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
        let requested = if self.use_requested {
            node.requested()
        } else {
            node.non_zero_requested()
        };
        match kind {
            ResourceKind::Cpu => (
                node.allocatable().milli_cpu,
                requested.milli_cpu + pod_request,
            ),
            ResourceKind::Memory => (node.allocatable().memory, requested.memory + pod_request),
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
        for (n, o) in nodes.iter().zip(out.iter_mut()) {
            *o = self.score_kinds(n, &kinds, pod_requests);
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
        let uses = self
            .resources
            .iter()
            .zip(kinds)
            .zip(pod_requests)
            .map(|((r, kind), pr)| {
                let (alloc, req) = self.allocatable_requested_of(node, kind, *pr);
                ResourceUse::new(req, alloc, r.weight)
            });
        match &self.scorer {
            Scorer::LeastAllocated => least_resource_score(uses),
            Scorer::MostAllocated => most_resource_score(uses),
            Scorer::RequestedToCapacityRatio(shape) => {
                requested_to_capacity_ratio_score(shape, uses)
            }
            Scorer::Balanced => balanced_resource_score(uses),
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

/// One resource of a node as a strategy scores it: upstream's `requested[i]` (the node's requests
/// including the pod's), `allocatable[i]` and `resources[i].Weight`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResourceUse {
    /// Requested on the node, the pod included.
    pub requested: i64,
    /// The node's allocatable (0: the resource is left out of the score).
    pub allocatable: i64,
    /// The resource's weight.
    pub weight: i64,
    /// `1 / allocatable` when the caller keeps it (the fused node pass's arrays), else 0: the
    /// formulas then divide by `div_exact` instead of an integer division (same quotient).
    pub inverse: f64,
}

impl ResourceUse {
    /// A resource without a kept reciprocal.
    pub fn new(requested: i64, allocatable: i64, weight: i64) -> ResourceUse {
        ResourceUse {
            requested,
            allocatable,
            weight,
            inverse: 0.0,
        }
    }
}

/// The weighted mean (truncated) of `score` over the resources the node has (allocatable not 0),
/// 0 when there is none: the loop of upstream `leastResourceScorer` and `mostResourceScorer`.
#[inline(always)]
pub(super) fn weighted_mean(
    resources: impl IntoIterator<Item = ResourceUse>,
    score: impl Fn(&ResourceUse) -> i64,
) -> i64 {
    let (mut node_score, mut weight_sum) = (0i128, 0i128);
    for r in resources {
        if r.allocatable == 0 {
            continue;
        }
        let w = i128::from(r.weight);
        node_score += i128::from(score(&r)) * w;
        weight_sum += w;
    }
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

/// Allocatable values at or below this may divide by [`div_exact`] (the numerator
/// `100 * allocatable` stays below 2^53).
pub(crate) const FAST_DIV_LIMIT: i64 = 1 << 46;

/// `a * 100 / b` truncated, for `0 <= a <= b`, `b > 0`: by the reciprocal `inverse` (`1 / b`, or 0
/// when the caller keeps none) when [`div_exact`] is exact for it, else in 64-bit arithmetic
/// unless `a * 100` overflows.
#[inline(always)]
pub(super) fn times_max_over(a: i64, b: i64, inverse: f64) -> i64 {
    if inverse != 0.0 && b <= FAST_DIV_LIMIT && (0..=b).contains(&a) {
        return div_exact(a * MAX_NODE_SCORE, b, inverse);
    }
    match a.checked_mul(MAX_NODE_SCORE) {
        Some(p) => p / b,
        None => ((i128::from(a) * i128::from(MAX_NODE_SCORE)) / i128::from(b)) as i64,
    }
}

/// `1 / d` for [`ResourceUse::inverse`] (0 when `d <= 0`).
pub(crate) fn inverse(d: i64) -> f64 {
    if d > 0 {
        1.0 / d as f64
    } else {
        0.0
    }
}

/// `n / d` truncated, for `0 <= n < 2^53` and `0 < d`, with `inv` = `1.0 / d as f64`: a
/// floating-point estimate (off by at most one) corrected with integer arithmetic, so the result
/// is exactly integer division's.
#[inline(always)]
fn div_exact(n: i64, d: i64, inv: f64) -> i64 {
    let mut q = (n as f64 * inv) as i64;
    let r = n - q * d;
    q += i64::from(r >= d);
    q -= i64::from(r < 0);
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn div_exact_equals_integer_division() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for d in [1i64, 2, 3, 7, 100, 4000, 32 << 30, (1 << 46) - 1, 1 << 46] {
            let inv = 1.0 / d as f64;
            for k in 0..=100i64 {
                // Exact multiples and their neighbours (where rounding could go wrong).
                for n in [k * d - 1, k * d, k * d + 1] {
                    if (0..=100 * d).contains(&n) {
                        assert_eq!(div_exact(n, d, inv), n / d, "{n} / {d}");
                    }
                }
            }
            for _ in 0..10_000 {
                let n = (next() % (100 * d as u64 + 1)) as i64;
                assert_eq!(div_exact(n, d, inv), n / d, "{n} / {d}");
            }
        }
    }

    #[test]
    fn a_kept_reciprocal_gives_the_integer_quotient() {
        for (a, b) in [(0, 7), (3, 7), (7, 7), (1 << 40, 1 << 46), (5, 1 << 47)] {
            let exact = times_max_over(a, b, 0.0);
            assert_eq!(times_max_over(a, b, inverse(b)), exact, "{a} / {b}");
            assert_eq!(exact, ((i128::from(a) * 100) / i128::from(b)) as i64);
        }
    }
}
