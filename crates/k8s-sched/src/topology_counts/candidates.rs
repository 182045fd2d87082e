//! [`CandidateFilter`]: which counters of a [`TopologyIndex`](super::TopologyIndex) a node's
//! pods can count for, once the index holds [`CANDIDATE_FILTER_MIN`](super::CANDIDATE_FILTER_MIN)
//! counters.
//!
//! A counter whose matcher requires a label pair ([`PodMatcher::required_label`]) counts 0 on a
//! node none of whose pods carries the pair. So when a node changes, only these counters are
//! recounted there: those whose pair one of its pods carries (found through a table of counters by
//! pair, each pod matched against the counters of its own pairs only), those without a pair, and
//! those that counted a pod there before (they may drop to 0).
//! A counter registered later counts only the nodes whose summary of label pairs (a 512-bit Bloom
//! filter per node, one bit per pair) may hold its pair. Both only skip counts that are 0; a hash
//! collision adds a candidate, which is then counted exactly.
//!
//! [`PodMatcher::required_label`]: super::PodMatcher::required_label

use k8s_sched_framework::NodeInfo;
use k8s_types::core::Pod;

use super::{label_pair_hash, Counter};

/// Words of a node's label-pair summary.
const BLOOM_WORDS: usize = 8;

/// The bit of a pair's hash in a summary: (word, mask).
fn bloom_bit(hash: u64) -> (usize, u64) {
    (((hash >> 6) as usize) % BLOOM_WORDS, 1 << (hash & 63))
}

/// See the module doc.
#[derive(Clone, Debug, Default)]
pub(super) struct CandidateFilter {
    /// Per node position: the label pairs of its pods, as a Bloom filter.
    blooms: Vec<[u64; BLOOM_WORDS]>,
    /// Per node position: counters that counted a pod there (ids may repeat or be stale after a
    /// counter was replaced; none is missing).
    nonzero: Vec<Vec<u32>>,
    /// Counters without a required pair: candidates everywhere.
    pub(super) unfiltered: Vec<u32>,
    /// Counters by required pair.
    pub(super) by_label: rustc_hash::FxHashMap<u64, Vec<u32>>,
    /// Per counter: the refresh that last listed it, and where in its list.
    marks: Vec<(u64, u32)>,
    /// Refreshes so far.
    pub(super) refreshes: u64,
    /// The candidate list of the refresh under way (kept for its allocation).
    scratch: Vec<(u32, u32)>,
}

impl CandidateFilter {
    /// A filter over `counters` as counted on `nodes` (the snapshot last synced).
    pub(super) fn new(counters: &[Counter], nodes: &[NodeInfo]) -> CandidateFilter {
        let mut f = CandidateFilter {
            blooms: nodes.iter().map(summary).collect(),
            nonzero: vec![Vec::new(); nodes.len()],
            ..CandidateFilter::default()
        };
        for (id, c) in counters.iter().enumerate() {
            f.add_counter(id as u32, c.required);
            for (pos, &n) in c.per_node.iter().enumerate() {
                if n > 0 {
                    f.nonzero[pos].push(id as u32);
                }
            }
        }
        f
    }

    /// Follows the snapshot to `positions` nodes (new positions are refreshed before use).
    pub(super) fn resize(&mut self, positions: usize) {
        self.blooms.resize(positions, [0; BLOOM_WORDS]);
        self.nonzero.resize_with(positions, Vec::new);
    }

    /// Registers counter `id` with its required pair.
    pub(super) fn add_counter(&mut self, id: u32, required: Option<u64>) {
        match required {
            Some(r) => self.by_label.entry(r).or_default().push(id),
            None => self.unfiltered.push(id),
        }
    }

    /// Forgets counter `id` (about to be replaced); its `nonzero` entries stay, harmlessly.
    pub(super) fn remove_counter(&mut self, id: u32, required: Option<u64>) {
        let list = match required {
            Some(r) => self.by_label.get_mut(&r),
            None => Some(&mut self.unfiltered),
        };
        if let Some(ids) = list {
            ids.retain(|&i| i != id);
        }
        if let Some(r) = required {
            if self.by_label.get(&r).is_some_and(Vec::is_empty) {
                self.by_label.remove(&r);
            }
        }
    }

    /// False when no pod at `pos` carries the pair hashed `required` (the summary lacks its bit).
    pub(super) fn may_hold(&self, pos: usize, required: u64) -> bool {
        let (w, bit) = bloom_bit(required);
        self.blooms[pos][w] & bit != 0
    }

    /// Notes that counter `id` counts a pod at `pos`.
    pub(super) fn note_nonzero(&mut self, pos: usize, id: u32) {
        self.nonzero[pos].push(id);
    }

    /// The counters to recount at `pos`, now holding `node`, each with its count of the node's
    /// pods: each pod is matched against the counters of its label pairs, the counters without
    /// a pair count all the node's pods, and those that counted a pod there before and are not
    /// otherwise listed count 0. Renews the position's summary and empties its `nonzero` list
    /// (the caller notes the counters that count a pod again). Give the list back with
    /// [`CandidateFilter::done`].
    pub(super) fn candidates(
        &mut self,
        pos: usize,
        node: &NodeInfo,
        counters: &mut [Counter],
    ) -> Vec<(u32, u32)> {
        self.refreshes += 1;
        let now = self.refreshes;
        self.marks.resize(counters.len(), (0, 0));
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let mut bloom = [0; BLOOM_WORDS];
        for pi in node.pods() {
            for (k, v) in &pi.pod.metadata.labels {
                let h = label_pair_hash(k, v);
                let (w, bit) = bloom_bit(h);
                bloom[w] |= bit;
                for &id in self.by_label.get(&h).into_iter().flatten() {
                    let at = match self.marks[id as usize] {
                        (r, at) if r == now => at as usize,
                        _ => {
                            self.marks[id as usize] = (now, out.len() as u32);
                            out.push((id, 0));
                            out.len() - 1
                        }
                    };
                    let c = &mut counters[id as usize];
                    if c.matcher.matches_memo(&pi.pod, &mut c.memo) {
                        out[at].1 += 1;
                    }
                }
            }
        }
        self.blooms[pos] = bloom;
        for &id in &self.unfiltered {
            if self.marks[id as usize].0 != now {
                self.marks[id as usize] = (now, out.len() as u32);
                let c = &mut counters[id as usize];
                out.push((id, c.matcher.count(node, &mut c.memo)));
            }
        }
        for id in self.nonzero[pos].drain(..) {
            if (id as usize) < counters.len() && self.marks[id as usize].0 != now {
                self.marks[id as usize] = (now, out.len() as u32);
                out.push((id, 0));
            }
        }
        out
    }

    /// The counters that may count `pod`, just added at `pos` (the node's other pods counted
    /// before): those of its label pairs and those without a pair, each once, with a count of 0
    /// for the caller to fill. Adds its pairs to the position's summary. Give the list back with
    /// [`CandidateFilter::done`].
    pub(super) fn added_pod(&mut self, pos: usize, pod: &Pod, counters: usize) -> Vec<(u32, u32)> {
        self.refreshes += 1;
        let now = self.refreshes;
        self.marks.resize(counters, (0, 0));
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let bloom = &mut self.blooms[pos];
        for (k, v) in &pod.metadata.labels {
            let h = label_pair_hash(k, v);
            let (w, bit) = bloom_bit(h);
            bloom[w] |= bit;
            for &id in self.by_label.get(&h).into_iter().flatten() {
                if self.marks[id as usize].0 != now {
                    self.marks[id as usize] = (now, out.len() as u32);
                    out.push((id, 0));
                }
            }
        }
        for &id in &self.unfiltered {
            if self.marks[id as usize].0 != now {
                self.marks[id as usize] = (now, out.len() as u32);
                out.push((id, 0));
            }
        }
        out
    }

    /// Takes back the list [`CandidateFilter::candidates`] gave.
    pub(super) fn done(&mut self, list: Vec<(u32, u32)>) {
        self.scratch = list;
    }

    /// Empties position `pos` (its node left the snapshot).
    pub(super) fn clear(&mut self, pos: usize) {
        self.blooms[pos] = [0; BLOOM_WORDS];
        self.nonzero[pos].clear();
    }
}

/// The label-pair summary of `node`'s pods.
fn summary(node: &NodeInfo) -> [u64; BLOOM_WORDS] {
    let mut bloom = [0; BLOOM_WORDS];
    for pi in node.pods() {
        for (k, v) in &pi.pod.metadata.labels {
            let (w, bit) = bloom_bit(label_pair_hash(k, v));
            bloom[w] |= bit;
        }
    }
    bloom
}
