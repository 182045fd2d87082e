//! The MostAllocated scoring strategy of NodeResourcesFit: favors nodes with less of the
//! configured resources left after placing the pod (bin packing). Upstream
//! `pkg/scheduler/framework/plugins/noderesources/most_allocated.go`.

use super::resource_allocation::{times_max_over, weighted_mean, ResourceUse};

/// Upstream `mostRequestedScore`: `min(requested, capacity) * 100 / capacity`, 0 when the node
/// has none of the resource.
pub fn most_requested_score(requested: i64, capacity: i64) -> i64 {
    most_requested(&ResourceUse::new(requested, capacity, 1))
}

/// [`most_requested_score`] of one resource, dividing by its reciprocal when it has one.
#[inline(always)]
fn most_requested(r: &ResourceUse) -> i64 {
    if r.allocatable == 0 {
        return 0;
    }
    times_max_over(r.requested.min(r.allocatable), r.allocatable, r.inverse)
}

/// Upstream `mostResourceScorer`: the weighted mean (truncated) of [`most_requested_score`] over
/// the resources, a resource the node has none of left out.
#[inline(always)]
pub fn most_resource_score(resources: impl IntoIterator<Item = ResourceUse>) -> i64 {
    weighted_mean(resources, most_requested)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_requested_score_as_upstream() {
        assert_eq!(most_requested_score(0, 4000), 0);
        assert_eq!(most_requested_score(3000, 4000), 75);
        assert_eq!(most_requested_score(1000, 3000), 33);
        // A request over the capacity counts as the capacity.
        assert_eq!(most_requested_score(5000, 4000), 100);
        assert_eq!(most_requested_score(10, 0), 0);
    }

    #[test]
    fn the_weighted_mean_leaves_out_resources_the_node_lacks() {
        let cpu = ResourceUse::new(1000, 4000, 1);
        let mem = ResourceUse::new(3000, 4000, 3);
        // (25 * 1 + 75 * 3) / 4 = 62.5, truncated.
        assert_eq!(most_resource_score([cpu, mem]), 62);
        assert_eq!(most_resource_score([ResourceUse::new(9, 0, 1), mem]), 75);
    }
}
