//! The GPU interconnect of a node and the best-effort `GetPreferredAllocation` policy over it
//! (upstream `NVIDIA/go-gpuallocator` `gpuallocator/besteffort_policy.go`, which the device plugin
//! calls for whole GPUs, `internal/rm/nvml_manager.go` `alignedAlloc`).
//!
//! Every pair of GPUs has one PCIe link (what `nvidia-smi topo -m` prints as SYS, NODE, PHB, PXB,
//! PIX) and zero or more NVLinks. go-gpuallocator scores a pair as the sum of its links: PCIe
//! cross-CPU (SYS) 10, same CPU (NODE) 20, host bridge (PHB) 30, several switches (PXB) 40, one
//! switch (PIX) 50, same board 60, and 100 per NVLink (1 to 18 links: 100 to 1800). GPUs behind an
//! NVSwitch have no GPU-to-GPU NVLink for NVML, and go-gpuallocator does not model NVSwitches
//! ("TODO: Handle NVSwitch semantics"), so on DGX A100/H100 only the PCIe/NUMA part counts.
//!
//! The node says its topology with annotations (none: no topology, the plugin keeps its
//! lowest-index rule):
//! - `k8s-mini.io/gpu-topology`: a machine shape: `dgx-1v` (DGX-1 with V100, NVLink hybrid cube
//!   mesh, the links of go-gpuallocator's `NewDGX1VoltaNode` test machine), `dgx-a100` or
//!   `dgx-h100` (8 GPUs on NVSwitch; GPUs 0-3 on NUMA node 0, 4-7 on NUMA node 1);
//! - `k8s-mini.io/gpu-nvlink-groups`: NVLink islands, `0,1,2,3;4,5,6,7` (every pair in a group has
//!   one NVLink; `0,1@4` gives each pair 4 NVLinks);
//! - `k8s-mini.io/gpu-numa-nodes`: each GPU's NUMA node, `0,0,0,0,1,1,1,1` (PCIe NODE within a
//!   NUMA node, SYS across; without it every GPU is on NUMA node 0).
//!
//! A shape excludes the other two.

use std::collections::BTreeMap;

use k8s_types::status::FieldError;

/// Annotation naming a machine shape.
pub const ANNOTATION_GPU_TOPOLOGY: &str = "k8s-mini.io/gpu-topology";
/// Annotation listing NVLink islands.
pub const ANNOTATION_NVLINK_GROUPS: &str = "k8s-mini.io/gpu-nvlink-groups";
/// Annotation listing each GPU's NUMA node.
pub const ANNOTATION_NUMA_NODES: &str = "k8s-mini.io/gpu-numa-nodes";

/// PCIe link scores (go-gpuallocator `calculateGPUPairScore`).
pub mod pcie {
    /// SYS: across CPU sockets.
    pub const CROSS_CPU: u32 = 10;
    /// NODE: same CPU / NUMA node.
    pub const SAME_CPU: u32 = 20;
    /// PHB: same host bridge.
    pub const HOST_BRIDGE: u32 = 30;
    /// PXB: several PCIe switches.
    pub const MULTI_SWITCH: u32 = 40;
    /// PIX: one PCIe switch.
    pub const SINGLE_SWITCH: u32 = 50;
}
/// Score of each NVLink between two GPUs.
pub const NVLINK: u32 = 100;

/// The most free GPUs the best-effort policy enumerates splits of (12 GPUs into pairs are 10,395
/// splits; 16 would be 2,027,025); upstream has no bound.
pub const MAX_ENUMERATED_GPUS: usize = 12;

/// The machine shapes [`ANNOTATION_GPU_TOPOLOGY`] accepts.
pub const SHAPES: [&str; 3] = ["dgx-1v", "dgx-a100", "dgx-h100"];

/// Pair scores of a node's GPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuTopology {
    /// `score[i][j]`: the link score between GPUs `i` and `j` (0 on the diagonal).
    pub score: Vec<Vec<u32>>,
    /// Each GPU's NUMA node.
    pub numa: Vec<i64>,
}

/// DGX-1 (Volta) links, from go-gpuallocator `gpuallocator/common_test.go` `NewDGX1VoltaNode`:
/// `(i, j, nvlinks, pcie)`.
const DGX1V: [(usize, usize, u32, u32); 28] = {
    use pcie::{CROSS_CPU as X, HOST_BRIDGE as H, SINGLE_SWITCH as S};
    [
        (0, 1, 1, S),
        (0, 2, 1, H),
        (0, 3, 2, H),
        (0, 4, 2, X),
        (0, 5, 0, X),
        (0, 6, 0, X),
        (0, 7, 0, X),
        (1, 2, 2, H),
        (1, 3, 1, H),
        (1, 4, 0, X),
        (1, 5, 2, X),
        (1, 6, 0, X),
        (1, 7, 0, X),
        (2, 3, 2, S),
        (2, 4, 0, X),
        (2, 5, 0, X),
        (2, 6, 1, X),
        (2, 7, 0, X),
        (3, 4, 0, X),
        (3, 5, 0, X),
        (3, 6, 0, X),
        (3, 7, 1, X),
        (4, 5, 1, S),
        (4, 6, 1, H),
        (4, 7, 2, H),
        (5, 6, 2, H),
        (5, 7, 1, H),
        (6, 7, 2, S),
    ]
};

impl GpuTopology {
    fn from_numa(numa: Vec<i64>) -> GpuTopology {
        let n = numa.len();
        let mut score = vec![vec![0; n]; n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    score[i][j] = if numa[i] == numa[j] {
                        pcie::SAME_CPU
                    } else {
                        pcie::CROSS_CPU
                    };
                }
            }
        }
        GpuTopology { score, numa }
    }

    /// The topology of a well-known 8-GPU machine.
    pub fn shape(name: &str) -> Option<GpuTopology> {
        let numa = vec![0, 0, 0, 0, 1, 1, 1, 1];
        match name {
            "dgx-1v" => {
                let mut t = GpuTopology {
                    score: vec![vec![0; 8]; 8],
                    numa,
                };
                for (i, j, nv, p) in DGX1V {
                    t.score[i][j] = nv * NVLINK + p;
                    t.score[j][i] = nv * NVLINK + p;
                }
                Some(t)
            }
            "dgx-a100" | "dgx-h100" => Some(GpuTopology::from_numa(numa)),
            _ => None,
        }
    }

    /// Reads the annotations for a node with `n` GPUs; `Ok(None)` without any.
    ///
    /// # Errors
    /// One [`FieldError`] per bad annotation.
    pub fn from_annotations(
        annotations: &BTreeMap<String, String>,
        n: usize,
    ) -> Result<Option<GpuTopology>, Vec<FieldError>> {
        let path = |k: &str| format!("metadata.annotations[{k}]");
        let shape = annotations.get(ANNOTATION_GPU_TOPOLOGY);
        let groups = annotations.get(ANNOTATION_NVLINK_GROUPS);
        let numa = annotations.get(ANNOTATION_NUMA_NODES);
        if let Some(s) = shape {
            let Some(t) = GpuTopology::shape(s) else {
                return Err(vec![FieldError::not_supported(
                    path(ANNOTATION_GPU_TOPOLOGY),
                    s,
                    &SHAPES,
                )]);
            };
            let mut errs = Vec::new();
            if n != t.numa.len() {
                errs.push(FieldError::invalid(
                    path(ANNOTATION_GPU_TOPOLOGY),
                    format!("{s:?}"),
                    format!("the shape has {} GPUs, the node {n}", t.numa.len()),
                ));
            }
            for k in [ANNOTATION_NVLINK_GROUPS, ANNOTATION_NUMA_NODES] {
                if annotations.contains_key(k) {
                    errs.push(FieldError::invalid(
                        path(k),
                        format!("{:?}", annotations[k]),
                        format!("may not be set together with {ANNOTATION_GPU_TOPOLOGY}"),
                    ));
                }
            }
            return if errs.is_empty() {
                Ok(Some(t))
            } else {
                Err(errs)
            };
        }
        if groups.is_none() && numa.is_none() {
            return Ok(None);
        }
        let mut errs = Vec::new();
        let mut numa_nodes = vec![0_i64; n];
        if let Some(v) = numa {
            let parsed: Option<Vec<i64>> = v
                .split(',')
                .map(|x| x.trim().parse().ok().filter(|n: &i64| *n >= 0))
                .collect();
            match parsed {
                Some(p) if p.len() == n => numa_nodes = p,
                _ => errs.push(FieldError::invalid(
                    path(ANNOTATION_NUMA_NODES),
                    format!("{v:?}"),
                    format!("must list {n} NUMA node numbers separated by commas, one per GPU"),
                )),
            }
        }
        let mut t = GpuTopology::from_numa(numa_nodes);
        if let Some(v) = groups {
            match parse_groups(v, n) {
                Ok(gs) => {
                    for (members, links) in gs {
                        for &i in &members {
                            for &j in &members {
                                if i != j {
                                    t.score[i][j] += links * NVLINK;
                                }
                            }
                        }
                    }
                }
                Err(detail) => errs.push(FieldError::invalid(
                    path(ANNOTATION_NVLINK_GROUPS),
                    format!("{v:?}"),
                    detail,
                )),
            }
        }
        if errs.is_empty() {
            Ok(Some(t))
        } else {
            Err(errs)
        }
    }

    /// The best-effort policy (go-gpuallocator `bestEffortPolicy.Allocate`) over GPU indices:
    /// every way to split `available` into sets of `size` (the last padded) is scored as the sum of
    /// its sets' pair scores; among the best split (the first found on a tie, in go-gpuallocator's
    /// enumeration order) that has a full set holding all of `required`, the set holding
    /// `required` with the best score (the first on a tie) is the answer. Empty when no answer
    /// exists (too few GPUs, `required` larger than `size` or not available), as upstream; the
    /// kubelet then picks on its own. `available` is taken in index order. More than
    /// [`MAX_ENUMERATED_GPUS`] available GPUs are not enumerated (empty answer) to bound the work.
    pub fn best_effort(&self, available: &[usize], required: &[usize], size: usize) -> Vec<usize> {
        let mut avail: Vec<usize> = available.to_vec();
        avail.sort_unstable();
        avail.dedup();
        if size == 0
            || avail.len() < size
            || required.len() > size
            || avail.len() > MAX_ENUMERATED_GPUS
        {
            return Vec::new();
        }
        if required.iter().any(|r| !avail.contains(r)) {
            return Vec::new();
        }
        let devices: Vec<Option<usize>> = avail.iter().map(|&i| Some(i)).collect();
        let req: Vec<Option<usize>> = required.iter().map(|&i| Some(i)).collect();
        let mut best: Option<(u32, Vec<Vec<Option<usize>>>)> = None;
        iterate_partitions(&devices, size, &mut |partition| {
            let ok = partition
                .iter()
                .any(|set| contains_all(set, &req) && set.iter().all(Option::is_some));
            if !ok {
                return;
            }
            let score: u32 = partition.iter().map(|s| self.set_score(s)).sum();
            if best.as_ref().is_none_or(|(b, _)| score > *b) {
                best = Some((score, partition.to_vec()));
            }
        });
        let Some((_, partition)) = best else {
            return Vec::new();
        };
        let mut chosen: Option<(u32, &Vec<Option<usize>>)> = None;
        for set in partition.iter().filter(|s| contains_all(s, &req)) {
            let score = self.set_score(set);
            if chosen.is_none_or(|(b, _)| score > b) {
                chosen = Some((score, set));
            }
        }
        let set: Vec<usize> = chosen
            .map(|(_, s)| s.iter().flatten().copied().collect())
            .unwrap_or_default();
        if set.len() == size {
            set
        } else {
            Vec::new()
        }
    }

    fn pair(&self, a: Option<usize>, b: Option<usize>) -> u32 {
        match (a, b) {
            (Some(i), Some(j)) if i != j => self
                .score
                .get(i)
                .and_then(|r| r.get(j))
                .copied()
                .unwrap_or(0),
            _ => 0,
        }
    }

    /// go-gpuallocator `calculateGPUSetScore`: the sum over every pair of the set.
    pub fn set_score(&self, set: &[Option<usize>]) -> u32 {
        let mut s = 0;
        for (k, a) in set.iter().enumerate() {
            for b in &set[k + 1..] {
                s += self.pair(*a, *b);
            }
        }
        s
    }
}

fn parse_groups(v: &str, n: usize) -> Result<Vec<(Vec<usize>, u32)>, String> {
    let mut out = Vec::new();
    let mut seen = vec![false; n];
    for g in v.split(';').map(str::trim).filter(|g| !g.is_empty()) {
        let (members, links) = match g.split_once('@') {
            Some((m, l)) => (
                m,
                l.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|l| (1..=18).contains(l))
                    .ok_or_else(|| format!("NVLinks per pair in {g:?} must be 1 to 18"))?,
            ),
            None => (g, 1),
        };
        let mut idx = Vec::new();
        for m in members.split(',') {
            let i: usize = m
                .trim()
                .parse()
                .ok()
                .filter(|i| *i < n)
                .ok_or_else(|| format!("{:?} is not a GPU index below {n}", m.trim()))?;
            if seen[i] {
                return Err(format!("GPU {i} is in two groups"));
            }
            seen[i] = true;
            idx.push(i);
        }
        out.push((idx, links));
    }
    Ok(out)
}

fn contains_all(set: &[Option<usize>], subset: &[Option<usize>]) -> bool {
    subset.iter().all(|d| set.contains(d))
}

/// A split of GPUs into sets (`None`: padding).
type Partition = [Vec<Option<usize>>];

/// go-gpuallocator `iterateGPUSets`: every `size`-combination of `devices`, in lexicographic
/// order of positions.
fn iterate_sets(devices: &[Option<usize>], size: usize, f: &mut dyn FnMut(&[Option<usize>])) {
    if size == 0 || size > devices.len() {
        return;
    }
    let mut idx: Vec<usize> = (0..size).collect();
    loop {
        let set: Vec<Option<usize>> = idx.iter().map(|&i| devices[i]).collect();
        f(&set);
        // Advance to the next combination.
        let mut k = size;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            if idx[k] < devices.len() - size + k {
                idx[k] += 1;
                for m in k + 1..size {
                    idx[m] = idx[m - 1] + 1;
                }
                break;
            }
        }
    }
}

/// go-gpuallocator `iterateGPUPartitions`: every split of `devices` (padded with `None` to a
/// multiple of `size`) into sets of `size`, where padding only ever fills one set.
fn iterate_partitions(devices: &[Option<usize>], size: usize, f: &mut dyn FnMut(&Partition)) {
    if size == 0 || size > devices.len() {
        return;
    }
    if size == 1 {
        for d in devices {
            f(&[vec![*d]]);
        }
        return;
    }
    let mut padded = devices.to_vec();
    while !padded.len().is_multiple_of(size) {
        padded.push(None);
    }
    let padding = padded.iter().filter(|d| d.is_none()).count();
    fn go(
        devices: &[Option<usize>],
        size: usize,
        padding: usize,
        accum: &mut Vec<Vec<Option<usize>>>,
        f: &mut dyn FnMut(&Partition),
    ) {
        if size == devices.len() {
            accum.push(devices.to_vec());
            f(accum);
            accum.pop();
            return;
        }
        iterate_sets(&devices[1..], size - 1, &mut |rest| {
            let mut set = Vec::with_capacity(size);
            set.push(devices[0]);
            set.extend_from_slice(rest);
            let p = set.iter().filter(|d| d.is_none()).count();
            if p != 0 && p != padding {
                return;
            }
            let remaining: Vec<Option<usize>> = devices
                .iter()
                .filter(|d| !set.contains(d))
                .copied()
                .collect();
            accum.push(set);
            go(&remaining, size, padding, accum, f);
            accum.pop();
        });
    }
    go(&padded, size, padding, &mut Vec::new(), f);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dgx1v() -> GpuTopology {
        GpuTopology::shape("dgx-1v").expect("shape")
    }

    /// go-gpuallocator's own `TestBestEffortAllocate` cases on its DGX-1 Volta machine.
    #[test]
    fn best_effort_matches_go_gpuallocator_tests() {
        let t = dgx1v();
        let all: Vec<usize> = (0..8).collect();
        // "Single NVLINK, prefer same switch": (4,5) = 100 + PIX 50 beats (0,2) = 100 + PHB 30.
        assert_eq!(t.best_effort(&[0, 2, 4, 5], &[], 2), vec![4, 5]);
        // "Single NVLINK, prefer same socket".
        assert_eq!(t.best_effort(&[0, 4, 5, 6], &[], 2), vec![5, 6]);
        // "Prefer dual NVLINK same socket": (0,3) = 200 + 30.
        assert_eq!(t.best_effort(&[0, 3, 1], &[], 2), vec![0, 3]);
        // "Prefer dual NVLINK cross socket": (0,4) = 200 + 10 beats (0,1) = 100 + 50.
        assert_eq!(t.best_effort(&[0, 1, 4], &[], 2), vec![0, 4]);
        assert_eq!(t.best_effort(&all, &[4], 1), vec![4]);
        assert_eq!(t.best_effort(&all, &[4], 2), vec![4, 7]);
        assert_eq!(t.best_effort(&all, &[4], 4), vec![4, 5, 6, 7]);
        assert!(t
            .best_effort(&[1, 2, 3, 4, 5, 6, 7], &[0, 1, 2, 3], 4)
            .is_empty());
        assert_eq!(t.best_effort(&all, &[0, 2, 4, 6], 4), vec![0, 2, 4, 6]);
        assert!(t.best_effort(&all, &[1, 2, 3, 4, 5, 6], 4).is_empty());
    }

    #[test]
    fn nvlink_groups_and_numa_nodes() {
        let a = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        // Two NVLink islands {0,1} and {2,3} on one NUMA node: a pair within an island scores
        // 100 + 20 = 120, across 20. All free: {0,1}{2,3} scores 240, and of its two equal sets
        // the first wins. With GPU 0 busy: {1,_}{2,3} (0 + 120) beats {1,2}{3,_} and {1,3}{2,_}.
        let t = GpuTopology::from_annotations(&a(&[(ANNOTATION_NVLINK_GROUPS, "0,1;2,3")]), 4)
            .expect("valid")
            .expect("some");
        assert_eq!(t.score[0][1], 120);
        assert_eq!(t.score[1][2], 20);
        assert_eq!(t.best_effort(&[0, 1, 2, 3], &[], 2), vec![0, 1]);
        assert_eq!(t.best_effort(&[1, 2, 3], &[], 2), vec![2, 3]);
        // NUMA only: 2 GPUs of 4 free on each side; the same-NUMA pair wins (20 > 10).
        let t = GpuTopology::from_annotations(&a(&[(ANNOTATION_NUMA_NODES, "0,0,1,1")]), 4)
            .expect("valid")
            .expect("some");
        assert_eq!(t.best_effort(&[1, 2, 3], &[], 2), vec![2, 3]);
        assert!(GpuTopology::from_annotations(&a(&[]), 4)
            .expect("ok")
            .is_none());
        let e = GpuTopology::from_annotations(&a(&[(ANNOTATION_NVLINK_GROUPS, "0,1;1,2")]), 4)
            .expect_err("overlap");
        assert_eq!(e[0].detail, "GPU 1 is in two groups");
        let e = GpuTopology::from_annotations(&a(&[(ANNOTATION_GPU_TOPOLOGY, "dgx-h100")]), 4)
            .expect_err("8-GPU shape");
        assert_eq!(e[0].detail, "the shape has 8 GPUs, the node 4");
        assert!(
            GpuTopology::from_annotations(&a(&[(ANNOTATION_GPU_TOPOLOGY, "dgx-9")]), 8).is_err()
        );
    }

    #[test]
    fn enumeration_is_bounded() {
        // 13 GPUs on one NUMA node: above the bound, no answer (the plugin falls back to the
        // lowest indices); 12: every pairing scores 6 x 20, the first ({0,1}{2,3}...) wins.
        let t = GpuTopology::from_numa(vec![0; 13]);
        let all: Vec<usize> = (0..13).collect();
        assert!(t.best_effort(&all, &[], 2).is_empty());
        assert_eq!(t.best_effort(&all[..12], &[], 2), vec![0, 1]);
    }

    #[test]
    fn partitions_are_enumerated_as_upstream() {
        let d: Vec<Option<usize>> = (0..4).map(Some).collect();
        let mut seen = Vec::new();
        iterate_partitions(&d, 2, &mut |p| seen.push(p.to_vec()));
        // 4 GPUs into pairs: 3 ways, the first set always holding GPU 0.
        assert_eq!(seen.len(), 3);
        assert_eq!(
            seen[0],
            vec![vec![Some(0), Some(1)], vec![Some(2), Some(3)]]
        );
        let mut n = 0;
        // 3 GPUs into pairs: padded to 4, 3 ways ({0,1}{2,_}, {0,2}{1,_}, {0,_}{1,2}).
        iterate_partitions(&d[..3], 2, &mut |_| n += 1);
        assert_eq!(n, 3);
    }
}
