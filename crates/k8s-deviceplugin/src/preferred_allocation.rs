//! `GetPreferredAllocation` (upstream `NVIDIA/k8s-device-plugin` `internal/rm/allocate.go`
//! `getPreferredAllocation`).
//!
//! Upstream, for whole GPUs it asks `go-gpuallocator`'s best-effort policy for the set with the best
//! NVLink/PCIe topology score ([`crate::topology::GpuTopology::best_effort`], used when the node
//! gives its topology), and for replicas and MIG devices the "distributed" policy ([`distributed`]).
//! A node without a topology uses one documented, deterministic rule instead
//! ([`lowest_index_first`]): the required devices first, then the lowest GPU indices among the
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

/// The physical device of a (possibly replicated) device ID: the part before `::` (upstream
/// `AnnotatedID.GetID`; `"0::3"` is replica 3 of GPU `"0"`, `"1:2::0"` replica 0 of MIG device
/// `"1:2"`).
pub fn physical_id(id: &str) -> &str {
    id.split_once("::").map_or(id, |(d, _)| d)
}

/// Upstream `greedyAlloc` with the default `distributed` comparator (`internal/rm/allocate.go`):
/// `required` first; then, one device at a time, a free replica of the physical device with the
/// fewest allocated replicas (its replicas in `all` minus its free candidates), ties going to the
/// physical device picked least often in this call, so a request for several replicas spreads over
/// GPUs. Upstream's sort is not stable; k8s-mini breaks the remaining ties by device ID order
/// ([`compare_device_ids`]). Returns only `required` when the free devices are too few (upstream
/// answers an error and the kubelet picks on its own).
pub fn distributed(
    all: &[String],
    available: &[String],
    required: &[String],
    size: usize,
) -> Vec<String> {
    use std::collections::BTreeMap;
    let mut chosen: Vec<String> = required.to_vec();
    let mut candidates: Vec<&String> = available
        .iter()
        .filter(|id| !required.contains(id) && all.contains(id))
        .collect();
    candidates.sort_by(|a, b| compare_device_ids(a, b));
    candidates.dedup();
    let needed = size.saturating_sub(required.len());
    if candidates.len() < needed {
        return chosen;
    }
    // physical ID -> (total replicas, free candidates).
    let mut count: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for c in &candidates {
        count.entry(physical_id(c)).or_default().1 += 1;
    }
    for d in all {
        if let Some(e) = count.get_mut(physical_id(d)) {
            e.0 += 1;
        }
    }
    let mut picked: BTreeMap<&str, usize> = BTreeMap::new();
    for _ in 0..needed {
        let best = candidates
            .iter()
            .enumerate()
            .min_by(|(_, a), (_, b)| {
                let (pa, pb) = (physical_id(a), physical_id(b));
                let alloc = |p: &str| count.get(p).map_or(0, |(t, f)| t - f);
                let picks = |p: &str| picked.get(p).copied().unwrap_or(0);
                alloc(pa)
                    .cmp(&alloc(pb))
                    .then(picks(pa).cmp(&picks(pb)))
                    .then_with(|| compare_device_ids(a, b))
            })
            .map(|(i, _)| i);
        let Some(i) = best else { break };
        let id = candidates.remove(i);
        let p = physical_id(id);
        *picked.entry(p).or_default() += 1;
        if let Some(e) = count.get_mut(p) {
            e.1 -= 1;
        }
        chosen.push(id.clone());
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributed_spreads_replicas_over_gpus() {
        // 2 GPUs x 4 replicas. GPU 0 has 3 replicas in use, GPU 1 one: a 1-replica request goes
        // to GPU 1 (1 allocated < 3).
        let all: Vec<String> = (0..2)
            .flat_map(|g| (0..4).map(move |r| format!("{g}::{r}")))
            .collect();
        let available = ids(&["0::3", "1::1", "1::2", "1::3"]);
        assert_eq!(distributed(&all, &available, &[], 1), ids(&["1::1"]));
        // All free, 3 replicas: GPU 0, GPU 1, GPU 0 again (both have 1 allocated, GPU 0 was picked
        // once and GPU 1 once, the ID order breaks the tie).
        assert_eq!(
            distributed(&all, &all, &[], 3),
            ids(&["0::0", "1::0", "0::1"])
        );
        // Too few free: only the required ones.
        assert_eq!(
            distributed(&all, &ids(&["0::0"]), &ids(&["1::0"]), 3),
            ids(&["1::0"])
        );
        assert_eq!(physical_id("1:2::0"), "1:2");
        assert_eq!(physical_id("3"), "3");
    }

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
