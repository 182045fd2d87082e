//! `GetPreferredAllocation` (upstream `NVIDIA/k8s-device-plugin` `internal/rm/allocate.go`
//! `getPreferredAllocation`).
//!
//! Upstream, for whole GPUs it asks `go-gpuallocator`'s best-effort policy for the set with the best
//! NVLink/PCIe topology score, and falls back to a "distributed" policy for shared (time-sliced)
//! replicas. A simulated node has no interconnect topology, so k8s-mini uses one documented,
//! deterministic rule instead: the required devices first, then the lowest GPU indices among the
//! available ones.

use k8s_types::deviceplugin::compare_device_ids;

/// Picks `size` device IDs: every ID of `must_include` first (sorted, duplicates dropped), then the
/// lowest IDs of `available` (numeric order for indices, see [`compare_device_ids`]) until `size` are
/// chosen. When `must_include` alone has `size` or more IDs, exactly those are returned (the kubelet
/// never asks for fewer devices than it already holds). When `available` is too small the result is
/// shorter than `size`; the kubelet then falls back to its own choice, as upstream.
pub fn lowest_index_first(
    available: &[String],
    must_include: &[String],
    size: usize,
) -> Vec<String> {
    let mut chosen: Vec<String> = must_include.to_vec();
    chosen.sort_by(|a, b| compare_device_ids(a, b));
    chosen.dedup();
    if chosen.len() >= size {
        return chosen;
    }
    let mut rest: Vec<&String> = available.iter().filter(|id| !chosen.contains(id)).collect();
    rest.sort_by(|a, b| compare_device_ids(a, b));
    rest.dedup();
    for id in rest {
        if chosen.len() == size {
            break;
        }
        chosen.push(id.clone());
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn must_include_first_then_lowest_indices() {
        // 8-GPU node, GPUs 1 and 4 busy: the 3 lowest free ones are 0, 2, 3.
        let available = ids(&["7", "0", "2", "3", "5", "6"]);
        assert_eq!(
            lowest_index_first(&available, &[], 3),
            ids(&["0", "2", "3"])
        );
        // An init container's GPU 6 is reused: it comes first, then 0 and 2.
        assert_eq!(
            lowest_index_first(&available, &ids(&["6"]), 3),
            ids(&["6", "0", "2"])
        );
        // Indices sort numerically: 10 after 9.
        assert_eq!(
            lowest_index_first(&ids(&["10", "9"]), &[], 2),
            ids(&["9", "10"])
        );
    }

    #[test]
    fn short_inputs_give_short_answers() {
        assert_eq!(lowest_index_first(&ids(&["3"]), &[], 2), ids(&["3"]));
        assert_eq!(
            lowest_index_first(&ids(&["0", "1"]), &ids(&["1", "0"]), 1),
            ids(&["0", "1"])
        );
    }
}
