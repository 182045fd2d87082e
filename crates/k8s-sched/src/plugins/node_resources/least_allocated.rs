//! The LeastAllocated scoring strategy of NodeResourcesFit: favors nodes with more of the
//! configured resources left after placing the pod. Upstream
//! `pkg/scheduler/framework/plugins/noderesources/least_allocated.go`.

use super::resource_allocation::{times_max_over, weighted_mean, ResourceUse};

/// Upstream `leastRequestedScore`: `(capacity - requested) * 100 / capacity`, 0 when the node has
/// none of the resource or the request exceeds it.
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    least_requested(&ResourceUse::new(requested, capacity, 1))
}

/// [`least_requested_score`] of one resource, dividing by its reciprocal when it has one.
#[inline(always)]
fn least_requested(r: &ResourceUse) -> i64 {
    if r.allocatable == 0 || r.requested > r.allocatable {
        return 0;
    }
    times_max_over(r.allocatable - r.requested, r.allocatable, r.inverse)
}

/// Upstream `leastResourceScorer`: the weighted mean (truncated) of [`least_requested_score`]
/// over the resources, a resource the node has none of left out.
#[inline(always)]
pub fn least_resource_score(resources: impl IntoIterator<Item = ResourceUse>) -> i64 {
    weighted_mean(resources, least_requested)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_requested_score_as_upstream() {
        assert_eq!(least_requested_score(0, 4000), 100);
        assert_eq!(least_requested_score(3000, 4000), 25);
        // Truncated: (3000 - 1000) * 100 / 3000 = 66.7.
        assert_eq!(least_requested_score(1000, 3000), 66);
        assert_eq!(least_requested_score(5000, 4000), 0);
        assert_eq!(least_requested_score(0, 0), 0);
        // Byte counts whose product with 100 overflows 64 bits.
        assert_eq!(least_requested_score(i64::MAX / 4, i64::MAX / 2), 50);
    }

    #[test]
    fn the_weighted_mean_leaves_out_resources_the_node_lacks() {
        let cpu = ResourceUse::new(1000, 4000, 1);
        let mem = ResourceUse::new(3000, 4000, 3);
        // (75 * 1 + 25 * 3) / 4 = 37.5, truncated.
        assert_eq!(least_resource_score([cpu, mem]), 37);
        assert_eq!(least_resource_score([cpu, ResourceUse::new(0, 0, 5)]), 75);
        assert_eq!(least_resource_score([]), 0);
    }
}
