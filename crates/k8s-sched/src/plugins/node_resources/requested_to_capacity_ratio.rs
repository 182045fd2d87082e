//! The RequestedToCapacityRatio scoring strategy of NodeResourcesFit: a piecewise-linear function
//! (the configured shape) of each resource's utilization after placing the pod. Upstream
//! `pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio.go`.

use k8s_sched_framework::MAX_NODE_SCORE;

use super::resource_allocation::ResourceUse;
use crate::config::args::MAX_CUSTOM_PRIORITY_SCORE;
use crate::plugins::helper::broken_linear;

/// Upstream `maxUtilization`.
const MAX_UTILIZATION: i64 = 100;

/// The configured shape of (utilization 0-100, score 0-10) with its scores scaled to 0-100, as
/// upstream `buildRequestedToCapacityRatioScorerFunction` scales them.
pub fn scaled_shape(shape: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let scale = MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE;
    shape.iter().map(|(u, s)| (*u, s * scale)).collect()
}

/// Upstream `scaledUtilization`: `requested * 100 / capacity`, requested clamped to
/// [0, capacity].
pub fn scaled_utilization(requested: i64, capacity: i64) -> i64 {
    if capacity <= 0 || requested <= 0 {
        return 0;
    }
    if requested >= capacity {
        return MAX_UTILIZATION;
    }
    ((i128::from(requested) * i128::from(MAX_UTILIZATION)) / i128::from(capacity)) as i64
}

/// Upstream `requestedToCapacityRatioScorer` with the scaled shape (see [`scaled_shape`]): the
/// shape's score of each resource's utilization, and their weighted mean rounded, over the
/// resources that score above 0 (a resource the node has none of left out).
pub fn requested_to_capacity_ratio_score(
    shape: &[(i64, i64)],
    resources: impl IntoIterator<Item = ResourceUse>,
) -> i64 {
    let (mut node_score, mut weight_sum) = (0i128, 0i128);
    for r in resources {
        if r.allocatable == 0 {
            continue;
        }
        let s = if r.requested > r.allocatable {
            broken_linear(shape, MAX_UTILIZATION)
        } else {
            broken_linear(shape, scaled_utilization(r.requested, r.allocatable))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_the_scaled_shape_and_round() {
        // Upstream's default-like shape: 0% -> 10, 100% -> 0 (least allocated), scaled to 100.
        let shape = scaled_shape(&[(0, 10), (100, 0)]);
        assert_eq!(shape, [(0, 100), (100, 0)]);
        let cpu = ResourceUse::new(1000, 4000, 1);
        let mem = ResourceUse::new(2000, 4000, 2);
        // cpu 25% -> 75, memory 50% -> 50: (75 + 2 * 50) / 3 = 58.33, rounded.
        assert_eq!(requested_to_capacity_ratio_score(&shape, [cpu, mem]), 58);
        // A request over the capacity scores as 100% utilization (0 here: left out of the mean).
        let over = ResourceUse::new(5000, 4000, 1);
        assert_eq!(requested_to_capacity_ratio_score(&shape, [over, cpu]), 75);
        assert_eq!(scaled_utilization(5000, 4000), 100);
        assert_eq!(scaled_utilization(-1, 4000), 0);
    }
}
