//! [`TopologyIndex`]: per-selector topology counters kept incrementally from the scheduler's
//! node snapshot, so that PodTopologySpread's PreFilter, PreScore and Score and InterPodAffinity's
//! PreFilter cost follows the number of nodes and topology domains, not the number of pods in the
//! cluster.
//!
//! Upstream (`pkg/scheduler/framework/plugins/podtopologyspread/filtering.go`
//! `calPreFilterState`, `podtopologyspread/scoring.go` `PreScore` and `Score`,
//! `interpodaffinity/filtering.go` `getExistingAntiAffinityCounts` and
//! `getIncomingAffinityAntiAffinityCounts`) visits every pod of every node on every attempt. The
//! index gives the same numbers from counters:
//! - a **counter** is registered the first time a pod needs it: a [`PodMatcher`] (namespaces and
//!   label selectors that a pod must all satisfy) with a topology key; it keeps the number of
//!   matching pods per node and per topology domain (the node's value of the key);
//! - the **existing anti-affinity terms** table keeps, per distinct required anti-affinity term of
//!   the placed pods (upstream `PodInfo.RequiredAntiAffinityTerms`), how many placed pods carry
//!   it per domain.
//!
//! The index follows the snapshot through [`NodeInfo::generation`] (upstream's `Generation`,
//! renewed by every pod added or removed and by every Node change): [`TopologyIndex::sync`]
//! compares each node's generation with the one it saw last and recounts only the nodes that
//! changed, so assumed, forgotten, added, removed and relabelled pods and relabelled nodes are all
//! counted exactly. The cost of a sync is one generation comparison per node plus the recount of
//! the changed nodes' pods.
//!
//! A changed node is recounted only for the counters whose pods could be on it: a counter whose
//! matcher requires a label pair (`app=web` from `matchLabels`, or `app In (web)`) is skipped on
//! a node none of whose pods carries that pair (its count there is 0); so a cluster with hundreds
//! of workloads, each with its own counters (the system default spread constraints give every
//! ReplicaSet two), pays per changed node for the counters of the pods on it, not for all.
//!
//! At most [`counter_cap`] counters are kept (at least [`MAX_COUNTERS`], more on smaller
//! clusters); past it the least recently used one is replaced. Results never depend on which
//! counters exist.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::runtime::node_arrays::{NodeGenerations, GENERATION_BLOCK};
use k8s_sched_framework::node_info::pod_has_required_anti_affinity;
use k8s_sched_framework::NodeInfo;
use k8s_types::core::Pod;

use crate::plugins::inter_pod_affinity::terms::{has_scoring_terms, required_terms, AffinityTerm};
use crate::runtime::kernel::{GateCondition, NodeGate, GATE_NO_DOMAIN};

mod candidates;
mod domain_key;
mod matcher;
use candidates::CandidateFilter;
pub use domain_key::DomainKey;
use matcher::LabelsMemo;
pub use matcher::PodMatcher;

/// Fewest counters kept at once, whatever the cluster's size (and so the most one pod's
/// constraints may ask for in one call); the least recently used one goes first.
pub const MAX_COUNTERS: usize = 64;

/// Node positions all counters may hold together: a counter costs a few words per node position
/// (its per-node counts, its per-domain totals), so the cap on counters falls as the cluster
/// grows (8 MiB of per-node counts at the cap, and up to twice that of per-domain totals for
/// hostname keys).
const COUNTER_POSITIONS: usize = 1 << 21;

/// Counters kept at once for a snapshot of `nodes` nodes when counters may hold `positions`
/// node positions together: `positions / nodes`, at least [`MAX_COUNTERS`] (with
/// [`COUNTER_POSITIONS`]: 419 at 5,000 nodes; 64 from 32,768 nodes).
pub fn counter_cap(positions: usize, nodes: usize) -> usize {
    (positions / nodes.max(1)).max(MAX_COUNTERS)
}

/// With fewer counters than this, a changed node is recounted for every counter (marking the
/// candidates would cost more than it saves).
const CANDIDATE_FILTER_MIN: usize = 8;

/// The hash of a label pair, as [`PodMatcher::required_label`] and the candidate marking compute
/// it (collisions only add candidates, which are then counted exactly).
fn label_pair_hash(key: &str, value: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(key.as_bytes());
    h.write_u8(0xff);
    h.write(value.as_bytes());
    h.finish()
}

/// Topology value -> number of pods, only non-zero entries (upstream removes a pair whose count
/// reaches 0). A hash map: Filter looks up one value per node, and nothing iterates it in an
/// order that reaches output.
pub type DomainCounts = rustc_hash::FxHashMap<DomainKey, i64>;

/// No domain: the node lacks the key (the fused pass's [`GATE_NO_DOMAIN`]).
pub(crate) const NO_DOMAIN: u32 = GATE_NO_DOMAIN;

/// The domains of one topology key.
#[derive(Clone, Debug, Default)]
struct KeyIndex {
    key: String,
    /// Per node position: domain id, or [`NO_DOMAIN`] (shared with Filter states, copied on
    /// write).
    per_node: Arc<Vec<u32>>,
    /// Domain id -> value.
    values: Vec<String>,
    /// Value -> domain id.
    ids: BTreeMap<String, u32>,
    /// Domain id -> number of nodes in it.
    nodes: Vec<u32>,
    /// Nodes that have the key.
    nodes_with_key: usize,
}

impl KeyIndex {
    fn domain_of(&mut self, node: &NodeInfo) -> u32 {
        let Some(v) = node.node().metadata.labels.get(&self.key) else {
            return NO_DOMAIN;
        };
        if let Some(&id) = self.ids.get(v) {
            return id;
        }
        let id = self.values.len() as u32;
        self.values.push(v.clone());
        self.nodes.push(0);
        self.ids.insert(v.clone(), id);
        id
    }

    fn set(&mut self, pos: usize, dom: u32) {
        let old = self.per_node[pos];
        if old == dom {
            return;
        }
        if old != NO_DOMAIN {
            self.nodes[old as usize] -= 1;
            self.nodes_with_key -= 1;
        }
        if dom != NO_DOMAIN {
            self.nodes[dom as usize] += 1;
            self.nodes_with_key += 1;
        }
        Arc::make_mut(&mut self.per_node)[pos] = dom;
    }
}

/// Adds `delta` to `value`'s entry, dropping it at 0, and to entry `dom` (the value's domain id)
/// of `dense`.
fn add_to(
    map: &mut Arc<DomainCounts>,
    dense: &mut Arc<Vec<i64>>,
    value: &str,
    dom: u32,
    delta: i64,
) {
    if delta == 0 {
        return;
    }
    let d = Arc::make_mut(dense);
    let i = dom as usize;
    if d.len() <= i {
        d.resize(i + 1, 0);
    }
    d[i] += delta;
    let m = Arc::make_mut(map);
    match m.get_mut(value) {
        Some(n) => {
            *n += delta;
            if *n == 0 {
                m.remove(value);
            }
        }
        None => {
            m.insert(DomainKey::from(value), delta);
        }
    }
}

/// Sets counter `c`'s count at `pos` to `n` (the node's domain there is now the key's
/// `per_node[pos]`, and was `old_dom`), moving its totals; nothing when neither changed.
fn recount(c: &mut Counter, keys: &[KeyIndex], pos: usize, old_dom: u32, n: u32) {
    let old_n = c.per_node[pos];
    let values = &keys[c.key].values;
    let dom = keys[c.key].per_node[pos];
    if old_n == n && old_dom == dom {
        return;
    }
    if old_n != n {
        Arc::make_mut(&mut c.per_node)[pos] = n;
    }
    if old_dom != NO_DOMAIN {
        let v = &values[old_dom as usize];
        add_to(&mut c.totals, &mut c.dense, v, old_dom, -i64::from(old_n));
    }
    if dom != NO_DOMAIN {
        add_to(
            &mut c.totals,
            &mut c.dense,
            &values[dom as usize],
            dom,
            i64::from(n),
        );
    }
}

/// Matching pods per node and per domain for one (matcher, key).
#[derive(Clone, Debug)]
struct Counter {
    matcher: PodMatcher,
    /// [`PodMatcher::required_label`] of `matcher`.
    required: Option<u64>,
    key: usize,
    /// Per node position: matching pods (shared with PreScore states, copied on write).
    per_node: Arc<Vec<u32>>,
    totals: Arc<DomainCounts>,
    /// The same totals by domain id (0 where `totals` has no entry).
    dense: Arc<Vec<i64>>,
    last_used: u64,
    /// The last label maps `matcher`'s selectors were evaluated on.
    memo: LabelsMemo,
}

/// One distinct required anti-affinity term of placed pods.
#[derive(Clone, Debug)]
struct TermEntry {
    term: AffinityTerm,
    key: usize,
    totals: Arc<DomainCounts>,
    /// The same totals by domain id (0 where `totals` has no entry).
    dense: Arc<Vec<i64>>,
}

/// Per node position: what the index last saw.
#[derive(Clone, Debug, Default)]
struct Slot {
    /// The node's [`NodeInfo::count_generation`] when counted (0: not counted).
    counted: u64,
    has_taints: bool,
    /// (term id, number of the node's pods carrying it), for the existing anti-affinity terms.
    terms: Vec<(u32, u32)>,
    /// The node's pods with terms InterPodAffinity's PreScore reads (with the terms table).
    scoring_pods: u32,
}

/// Counters over one node snapshot (see the module doc). Not shared between threads by itself;
/// plugins keep it behind a mutex.
#[derive(Clone, Debug, Default)]
pub struct TopologyIndex {
    /// Per node position: the generation last counted (0: none), dense for the sync scan
    /// (shared with Filter states, copied on write).
    gens: Arc<Vec<u64>>,
    slots: Vec<Slot>,
    tainted: usize,
    keys: Vec<KeyIndex>,
    counters: Vec<Counter>,
    /// The existing anti-affinity terms are tracked (switched on by the first use).
    track_terms: bool,
    /// The layout and largest generation of the last sync, when it read a
    /// [`NodeGenerations`] and nothing recounted positions since (see
    /// [`TopologyIndex::sync_generations`]).
    synced: Option<(u64, u64)>,
    terms: Vec<TermEntry>,
    /// Sum of the slots' `scoring_pods`.
    scoring_pods: usize,
    clock: u64,
    /// Per counter: the hash of its (key, matcher), compared before the matcher itself.
    counter_hashes: Vec<u64>,
    /// Which counters a changed node is recounted for, from [`CANDIDATE_FILTER_MIN`] counters
    /// on (see [`candidates`]).
    filter: Option<Box<CandidateFilter>>,
    /// Scratch: the old domain of each key at the position being refreshed.
    old_domains: Vec<u32>,
    /// The node positions all counters may hold together (`None`: [`COUNTER_POSITIONS`]).
    counter_positions: Option<usize>,
}

/// Where the nodes of one snapshot (`&[NodeInfo]`) sit in memory, so that a Filter given a
/// `&NodeInfo` can find its position (and so its domain id in a [`DomainView`]) by address
/// arithmetic instead of a label lookup. A node outside the slice (a clone made by preemption or
/// for nominated pods) has no position, and the caller falls back to the label lookup.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapshotPositions {
    base: usize,
    len: usize,
}

impl SnapshotPositions {
    /// The positions of `nodes`.
    pub fn of(nodes: &[NodeInfo]) -> SnapshotPositions {
        SnapshotPositions {
            base: nodes.as_ptr() as usize,
            len: nodes.len(),
        }
    }

    /// An empty fused-pass gate for the same slice.
    pub fn gate(&self) -> NodeGate {
        NodeGate {
            snapshot: (self.base, self.len),
            conditions: Vec::new(),
        }
    }

    /// The position of `node` in the slice, when it is one of its elements.
    pub fn position(&self, node: &NodeInfo) -> Option<usize> {
        let size = std::mem::size_of::<NodeInfo>();
        let off = (node as *const NodeInfo as usize).checked_sub(self.base)?;
        if size == 0 || off % size != 0 {
            return None;
        }
        let pos = off / size;
        (pos < self.len).then_some(pos)
    }
}

/// A counter's (or an existing anti-affinity term's) per-domain totals by integer domain id,
/// with each node position's domain id and the generation the index counted there: shared
/// (`Arc`) with the index, not copied. [`DomainView::domain`] answers only for a node whose
/// generation is the one counted at its position, so a stale or foreign node is never misread.
#[derive(Clone, Debug, Default)]
pub struct DomainView {
    gens: Arc<Vec<u64>>,
    domains: Arc<Vec<u32>>,
    counts: Arc<Vec<i64>>,
}

/// The result of [`DomainView::domain`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeDomain {
    /// The position is unknown or the node changed since it was counted: look its label up.
    Unknown,
    /// The node lacks the topology key.
    Missing,
    /// The node's domain id.
    Id(u32),
}

impl DomainView {
    /// The domain of `node`, at position `pos` of the synced snapshot.
    #[inline]
    pub fn domain(&self, pos: usize, node: &NodeInfo) -> NodeDomain {
        match (self.gens.get(pos), self.domains.get(pos)) {
            (Some(&g), Some(&d)) if g != 0 && g == node.generation() => {
                if d == NO_DOMAIN {
                    NodeDomain::Missing
                } else {
                    NodeDomain::Id(d)
                }
            }
            _ => NodeDomain::Unknown,
        }
    }

    /// The arrays [`DomainView::domain`] reads, shared: per node position, the generation
    /// counted there (0: none) and the domain id ([`NO_DOMAIN`] when the node lacks the key).
    /// For a reader that checks a node's generation once for several views of one index.
    pub fn arrays(&self) -> (&Arc<Vec<u64>>, &Arc<Vec<u32>>) {
        (&self.gens, &self.domains)
    }

    /// The total of domain `id` (0 for a domain without pods).
    #[inline]
    pub fn count(&self, id: u32) -> i64 {
        self.counts.get(id as usize).copied().unwrap_or(0)
    }

    /// A fused-pass [`GateCondition`] over these domains: a domain passes when its total is in
    /// `min..=max`; a node without the key gets `missing`. Shares the arrays (no copy). Exact
    /// for the snapshot last synced (every position counted, as after a sync).
    pub fn gate(&self, min: i64, max: i64, missing: bool) -> GateCondition {
        GateCondition {
            domains: Arc::clone(&self.domains),
            counts: Arc::clone(&self.counts),
            min,
            max,
            missing,
        }
    }
}

/// A registered counter (valid until the next [`TopologyIndex::counter`] call may evict it; use
/// it right after registering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterId(usize);

impl TopologyIndex {
    /// Brings every counter up to date with `nodes` (the snapshot, in its order). Nodes whose
    /// generation is unchanged since the last sync at the same position are not looked at again.
    pub fn sync(&mut self, nodes: &[NodeInfo]) {
        self.sync_generations(nodes, None);
    }

    /// [`TopologyIndex::sync`] given the nodes' generations in one array, as
    /// [`node_generations`] gives them (`per_node[i]` is `nodes[i].generation()`):
    /// without reading the `NodeInfo`s, the blocks of [`GENERATION_BLOCK`] nodes are compared
    /// with the generations counted, and only the blocks whose largest generation is above the
    /// largest one seen at the last sync of the same layout (a changed node always gets a
    /// larger generation). `None`, or arrays of other lengths, reads the nodes.
    ///
    /// [`node_generations`]: crate::runtime::node_arrays::node_generations
    pub fn sync_generations(&mut self, nodes: &[NodeInfo], generations: Option<NodeGenerations>) {
        let generations = generations.filter(|g| {
            g.per_node.len() == nodes.len()
                && g.block_max.len() == nodes.len().div_ceil(GENERATION_BLOCK)
        });
        // What the last sync saw, when it was a dense one of the same layout.
        let seen = match (self.synced.take(), generations) {
            (Some((layout, max)), Some(g)) if layout == g.layout => Some(max),
            _ => None,
        };
        if self.slots.len() > nodes.len() {
            for pos in nodes.len()..self.slots.len() {
                self.clear_position(pos);
            }
            self.slots.truncate(nodes.len());
            Arc::make_mut(&mut self.gens).truncate(nodes.len());
            for k in &mut self.keys {
                Arc::make_mut(&mut k.per_node).truncate(nodes.len());
            }
            for c in &mut self.counters {
                Arc::make_mut(&mut c.per_node).truncate(nodes.len());
            }
        }
        while self.slots.len() < nodes.len() {
            self.slots.push(Slot::default());
            Arc::make_mut(&mut self.gens).push(0);
            for k in &mut self.keys {
                Arc::make_mut(&mut k.per_node).push(NO_DOMAIN);
            }
            for c in &mut self.counters {
                Arc::make_mut(&mut c.per_node).push(0);
            }
        }
        if let Some(f) = self.filter.as_deref_mut() {
            f.resize(nodes.len());
        }
        if let Some(g) = generations {
            debug_assert!(
                nodes
                    .iter()
                    .zip(g.per_node)
                    .all(|(n, &x)| n.generation() == x),
                "node generations out of step with the snapshot"
            );
            let gens = g.per_node;
            let mut max = 0;
            for (b, &block_max) in g.block_max.iter().enumerate() {
                max = max.max(block_max);
                let lo = b * GENERATION_BLOCK;
                let hi = (lo + GENERATION_BLOCK).min(nodes.len());
                debug_assert!(gens[lo..hi].iter().all(|&x| x <= block_max));
                if seen.is_some_and(|seen| block_max <= seen) {
                    continue;
                }
                if self.gens[lo..hi] != gens[lo..hi] {
                    for pos in lo..hi {
                        if self.gens[pos] != gens[pos] {
                            self.refresh_position(pos, &nodes[pos]);
                        }
                    }
                }
            }
            self.synced = Some((g.layout, max));
            return;
        }
        // A tight comparison loop between the (few) changed positions.
        let mut pos = 0;
        while pos < nodes.len() {
            let changed = self.gens[pos..]
                .iter()
                .zip(&nodes[pos..])
                .position(|(&g, n)| g != n.generation());
            let Some(off) = changed else {
                break;
            };
            pos += off;
            self.refresh_position(pos, &nodes[pos]);
            pos += 1;
        }
    }

    /// Adds `delta` placed pods carrying term `t` to the domain of position `pos` (nothing when
    /// the node lacks the term's key).
    fn add_term_count(&mut self, t: u32, pos: usize, delta: i64) {
        let e = &mut self.terms[t as usize];
        let dom = self.keys[e.key].per_node[pos];
        if dom != NO_DOMAIN {
            add_to(
                &mut e.totals,
                &mut e.dense,
                &self.keys[e.key].values[dom as usize],
                dom,
                delta,
            );
        }
    }

    /// Removes everything position `pos` contributes (its node left the snapshot).
    fn clear_position(&mut self, pos: usize) {
        if self.gens[pos] != 0 {
            Arc::make_mut(&mut self.gens)[pos] = 0;
        }
        if let Some(f) = self.filter.as_deref_mut() {
            f.clear(pos);
        }
        let slot = std::mem::take(&mut self.slots[pos]);
        if slot.has_taints {
            self.tainted -= 1;
        }
        self.scoring_pods -= slot.scoring_pods as usize;
        for (t, n) in slot.terms {
            self.add_term_count(t, pos, -i64::from(n));
        }
        for c in &mut self.counters {
            let dom = self.keys[c.key].per_node[pos];
            if dom != NO_DOMAIN {
                let v = &self.keys[c.key].values[dom as usize];
                add_to(
                    &mut c.totals,
                    &mut c.dense,
                    v,
                    dom,
                    -i64::from(c.per_node[pos]),
                );
            }
            if c.per_node[pos] != 0 {
                Arc::make_mut(&mut c.per_node)[pos] = 0;
            }
        }
        for k in &mut self.keys {
            k.set(pos, NO_DOMAIN);
        }
    }

    /// Recounts position `pos`, now holding `node`: what it contributed (its terms, taints,
    /// domains and counts) is replaced by what `node` contributes. A counter whose count and
    /// domain there are unchanged is not touched; with the [`CandidateFilter`] on, only the
    /// candidates it lists are looked at (the others count 0 there, before and after).
    fn refresh_position(&mut self, pos: usize, node: &NodeInfo) {
        let counted = self.slots[pos].counted;
        if self.gens[pos] != 0 && counted != 0 {
            if counted == node.count_generation() {
                // Only what counting does not read changed (a pod's status): the counts stand.
                Arc::make_mut(&mut self.gens)[pos] = node.generation();
                return;
            }
            if counted == node.count_base() {
                if let Some(added) = node.pods().last() {
                    self.count_added_pod(pos, node, &added.pod);
                    return;
                }
            }
        }
        // The terms go first: they are counted in the old domains.
        let slot = std::mem::take(&mut self.slots[pos]);
        if slot.has_taints {
            self.tainted -= 1;
        }
        self.scoring_pods -= slot.scoring_pods as usize;
        for (t, n) in slot.terms {
            self.add_term_count(t, pos, -i64::from(n));
        }
        if self.gens[pos] != node.generation() {
            Arc::make_mut(&mut self.gens)[pos] = node.generation();
        }
        let has_taints = node.has_taints();
        self.slots[pos].counted = node.count_generation();
        self.slots[pos].has_taints = has_taints;
        if has_taints {
            self.tainted += 1;
        }
        let mut old_domains = std::mem::take(&mut self.old_domains);
        old_domains.clear();
        for k in &mut self.keys {
            old_domains.push(k.per_node[pos]);
            let dom = k.domain_of(node);
            k.set(pos, dom);
        }
        match self.filter.as_deref_mut() {
            Some(f) => {
                let list = f.candidates(pos, node, &mut self.counters);
                for &(id, n) in &list {
                    let c = &mut self.counters[id as usize];
                    recount(c, &self.keys, pos, old_domains[c.key], n);
                    if n > 0 {
                        f.note_nonzero(pos, id);
                    }
                }
                f.done(list);
            }
            None => {
                for c in &mut self.counters {
                    let n = c.matcher.count(node, &mut c.memo);
                    recount(c, &self.keys, pos, old_domains[c.key], n);
                }
            }
        }
        self.old_domains = old_domains;
        if self.track_terms {
            self.count_terms(pos, node);
        }
    }

    /// [`TopologyIndex::refresh_position`] of a node counted at `pos` before one pod, `pod`, was
    /// added (its [`NodeInfo::count_base`]): the same domains and the other pods' counts, so only
    /// the counters that match `pod` and its terms change, each by one.
    fn count_added_pod(&mut self, pos: usize, node: &NodeInfo, pod: &Pod) {
        let add = |c: &mut Counter, keys: &[KeyIndex]| {
            let matched = c.matcher.matches_memo(pod, &mut c.memo);
            if matched {
                let dom = keys[c.key].per_node[pos];
                recount(c, keys, pos, dom, c.per_node[pos] + 1);
            }
            matched
        };
        match self.filter.as_deref_mut() {
            Some(f) => {
                let list = f.added_pod(pos, pod, self.counters.len());
                for &(id, _) in &list {
                    if add(&mut self.counters[id as usize], &self.keys) {
                        f.note_nonzero(pos, id);
                    }
                }
                f.done(list);
            }
            None => {
                for c in &mut self.counters {
                    add(c, &self.keys);
                }
            }
        }
        if self.track_terms {
            if has_scoring_terms(pod) {
                self.slots[pos].scoring_pods += 1;
                self.scoring_pods += 1;
            }
            let mut found: BTreeMap<u32, u32> = BTreeMap::new();
            self.collect_terms(pod, &mut found);
            for (t, n) in found {
                self.add_term_count(t, pos, i64::from(n));
                let terms = &mut self.slots[pos].terms;
                match terms.binary_search_by_key(&t, |&(id, _)| id) {
                    Ok(i) => terms[i].1 += n,
                    Err(i) => terms.insert(i, (t, n)),
                }
            }
        }
        Arc::make_mut(&mut self.gens)[pos] = node.generation();
        self.slots[pos].counted = node.count_generation();
    }

    /// Counts the required anti-affinity terms of `node`'s pods at `pos` (cleared before).
    fn count_terms(&mut self, pos: usize, node: &NodeInfo) {
        let mut found: BTreeMap<u32, u32> = BTreeMap::new();
        let scoring = node
            .pods()
            .iter()
            .filter(|p| has_scoring_terms(&p.pod))
            .count() as u32;
        self.slots[pos].scoring_pods = scoring;
        self.scoring_pods += scoring as usize;
        for pi in node.pods() {
            self.collect_terms(&pi.pod, &mut found);
        }
        for (&t, &n) in &found {
            self.add_term_count(t, pos, i64::from(n));
        }
        self.slots[pos].terms = found.into_iter().collect();
    }

    /// Counts `pod`'s required anti-affinity terms into `found`, by term id.
    fn collect_terms(&mut self, pod: &Pod, found: &mut BTreeMap<u32, u32>) {
        if !pod_has_required_anti_affinity(pod) {
            return;
        }
        for t in required_terms(pod, true) {
            *found.entry(self.term_id(t)).or_insert(0) += 1;
        }
    }

    fn term_id(&mut self, term: AffinityTerm) -> u32 {
        if let Some(i) = self.terms.iter().position(|e| e.term == term) {
            return i as u32;
        }
        let key = self.key_id(&term.topology_key);
        self.terms.push(TermEntry {
            term,
            key,
            totals: Arc::default(),
            dense: Arc::default(),
        });
        (self.terms.len() - 1) as u32
    }

    /// The index of topology key `key`, registering it (and reading every node's value of it
    /// from the synced positions' last seen nodes) when new. Needs the nodes only when new, so
    /// it is called with them by [`TopologyIndex::counter`]; for terms found during a sync the
    /// nodes are the ones being synced.
    fn key_id(&mut self, key: &str) -> usize {
        if let Some(i) = self.keys.iter().position(|k| k.key == key) {
            return i;
        }
        self.keys.push(KeyIndex {
            key: key.to_string(),
            per_node: Arc::new(vec![NO_DOMAIN; self.slots.len()]),
            ..KeyIndex::default()
        });
        self.keys.len() - 1
    }

    /// Fills a new key's domains from `nodes` (the synced snapshot).
    fn fill_key(&mut self, k: usize, nodes: &[NodeInfo]) {
        for (pos, node) in nodes.iter().enumerate() {
            let dom = self.keys[k].domain_of(node);
            self.keys[k].set(pos, dom);
        }
    }

    /// Switches on the existing anti-affinity terms table and syncs: every node is counted once
    /// the first time, then only changed nodes.
    pub fn sync_with_terms(&mut self, nodes: &[NodeInfo], generations: Option<NodeGenerations>) {
        if !self.track_terms {
            self.synced = None;
            self.track_terms = true;
            // Recount everything so the terms of unchanged nodes are found.
            Arc::make_mut(&mut self.gens)
                .iter_mut()
                .for_each(|g| *g = 0);
        }
        let before = self.keys.len();
        self.sync_generations(nodes, generations);
        // Keys first seen in this sync got their domains only at the positions counted after
        // they appeared: recount once more with every position's domain known.
        if self.keys.len() > before {
            for k in before..self.keys.len() {
                self.fill_key(k, nodes);
            }
            Arc::make_mut(&mut self.gens)
                .iter_mut()
                .for_each(|g| *g = 0);
            self.synced = None;
            for e in &mut self.terms {
                e.totals = Arc::default();
                e.dense = Arc::default();
            }
            for s in &mut self.slots {
                s.terms.clear();
                s.scoring_pods = 0;
            }
            self.scoring_pods = 0;
            self.sync(nodes);
        }
    }

    /// The counter of `matcher` over topology key `key`, registered (and counted over `nodes`,
    /// which must be the snapshot just synced) when new.
    pub fn counter(&mut self, nodes: &[NodeInfo], matcher: &PodMatcher, key: &str) -> CounterId {
        self.clock += 1;
        let k = match self.keys.iter().position(|x| x.key == key) {
            Some(k) => k,
            None => {
                let k = self.key_id(key);
                self.fill_key(k, nodes);
                k
            }
        };
        let hash = || {
            let mut h = rustc_hash::FxHasher::default();
            k.hash(&mut h);
            matcher.hash(&mut h);
            h.finish()
        };
        let same = |c: &Counter| c.key == k && c.matcher == *matcher;
        // A few counters are compared directly; many through their hashes first.
        let found = if self.counters.len() < CANDIDATE_FILTER_MIN {
            self.counters.iter().position(same)
        } else {
            let hash = hash();
            self.counter_hashes
                .iter()
                .enumerate()
                .filter(|&(_, &h)| h == hash)
                .map(|(i, _)| i)
                .find(|&i| same(&self.counters[i]))
        };
        if let Some(i) = found {
            self.counters[i].last_used = self.clock;
            return CounterId(i);
        }
        if self.filter.is_none() && self.counters.len() + 1 >= CANDIDATE_FILTER_MIN {
            self.filter = Some(Box::new(CandidateFilter::new(&self.counters, nodes)));
        }
        let required = matcher.required_label();
        let mut per_node = vec![0; nodes.len()];
        let mut c = Counter {
            matcher: matcher.clone(),
            required,
            key: k,
            per_node: Arc::default(),
            totals: Arc::default(),
            dense: Arc::default(),
            last_used: self.clock,
            memo: LabelsMemo::default(),
        };
        let positions = self.counter_positions.unwrap_or(COUNTER_POSITIONS);
        let id = if self.counters.len() >= counter_cap(positions, nodes.len()) {
            // Replace the least recently used counter in place: the ids handed out since it was
            // last used stay valid.
            self.counters
                .iter()
                .enumerate()
                .min_by_key(|(_, c)| c.last_used)
                .map_or(0, |(i, _)| i)
        } else {
            self.counters.len()
        };
        for (pos, node) in nodes.iter().enumerate() {
            let filter = self.filter.as_deref_mut();
            if let (Some(f), Some(r)) = (&filter, required) {
                if !f.may_hold(pos, r) {
                    continue;
                }
            }
            let n = c.matcher.count(node, &mut c.memo);
            if n == 0 {
                continue;
            }
            per_node[pos] = n;
            if let Some(f) = filter {
                f.note_nonzero(pos, id as u32);
            }
            let dom = self.keys[k].per_node[pos];
            if dom != NO_DOMAIN {
                add_to(
                    &mut c.totals,
                    &mut c.dense,
                    &self.keys[k].values[dom as usize],
                    dom,
                    i64::from(n),
                );
            }
        }
        c.per_node = Arc::new(per_node);
        if id < self.counters.len() {
            if let Some(f) = self.filter.as_deref_mut() {
                f.remove_counter(id as u32, self.counters[id].required);
            }
            self.counters[id] = c;
            self.counter_hashes[id] = hash();
        } else {
            self.counters.push(c);
            self.counter_hashes.push(hash());
        }
        if let Some(f) = self.filter.as_deref_mut() {
            f.add_counter(id as u32, required);
        }
        CounterId(id)
    }

    /// Matching pods per domain of counter `id` (non-zero domains only).
    pub fn totals(&self, id: CounterId) -> &Arc<DomainCounts> {
        &self.counters[id.0].totals
    }

    /// Matching pods on the node at position `pos`.
    pub fn count_on_node(&self, id: CounterId, pos: usize) -> i64 {
        i64::from(self.counters[id.0].per_node[pos])
    }

    /// Matching pods on the nodes that lack the counter's key (upstream counts them in the domain
    /// `""` where a missing label reads as the empty value).
    pub fn count_without_key(&self, id: CounterId) -> i64 {
        let c = &self.counters[id.0];
        let k = &self.keys[c.key];
        if k.nodes_with_key == self.slots.len() {
            return 0;
        }
        k.per_node
            .iter()
            .zip(c.per_node.iter())
            .filter(|(&d, _)| d == NO_DOMAIN)
            .map(|(_, &n)| i64::from(n))
            .sum()
    }

    /// Counter `id`'s matching pods per node position of the snapshot last synced, shared: valid
    /// at a position whose generation ([`DomainView::arrays`]) is the node's.
    pub fn node_counts(&self, id: CounterId) -> &Arc<Vec<u32>> {
        &self.counters[id.0].per_node
    }

    /// Every domain of the counter's key that has at least one node, with its matching pods
    /// (zero included), in value order.
    pub fn domain_counts(&self, id: CounterId) -> BTreeMap<String, i64> {
        let c = &self.counters[id.0];
        let k = &self.keys[c.key];
        k.ids
            .iter()
            .filter(|(_, &d)| k.nodes[d as usize] > 0)
            .map(|(v, _)| (v.clone(), c.totals.get(v.as_str()).copied().unwrap_or(0)))
            .collect()
    }

    /// The node at `pos`'s value of the counter's key (`None` when it lacks the key).
    pub fn domain_at(&self, id: CounterId, pos: usize) -> Option<&str> {
        let k = &self.keys[self.counters[id.0].key];
        match k.per_node.get(pos) {
            Some(&d) if d != NO_DOMAIN => Some(k.values[d as usize].as_str()),
            _ => None,
        }
    }

    /// Number of domain ids of the counter's key: the ids [`DomainView::domain`] gives are below
    /// it.
    pub fn domain_ids(&self, id: CounterId) -> usize {
        self.keys[self.counters[id.0].key].values.len()
    }

    /// The value of domain id `d` of the counter's key (`d` below
    /// [`TopologyIndex::domain_ids`]).
    pub fn domain_value(&self, id: CounterId, d: u32) -> &str {
        &self.keys[self.counters[id.0].key].values[d as usize]
    }

    /// The domain id of `value` of the counter's key (`None` when no node had that value).
    pub fn domain_id(&self, id: CounterId, value: &str) -> Option<u32> {
        self.keys[self.counters[id.0].key].ids.get(value).copied()
    }

    /// True when every node of the synced snapshot has label `key` (false for an unknown key).
    pub fn all_nodes_have_key(&self, key: &str) -> bool {
        self.keys
            .iter()
            .find(|k| k.key == key)
            .is_some_and(|k| k.nodes_with_key == self.slots.len())
    }

    /// Placed pods with required pod affinity or preferred (anti-)affinity terms (needs
    /// [`TopologyIndex::sync_with_terms`]).
    pub fn pods_with_scoring_terms(&self) -> usize {
        self.scoring_pods
    }

    /// Number of nodes with at least one taint.
    pub fn tainted_nodes(&self) -> usize {
        self.tainted
    }

    /// Where Filter finds the domains and counts of counter `id` by node position (see
    /// [`DomainView`]); valid for the snapshot last synced.
    pub fn domain_view(&self, id: CounterId) -> DomainView {
        let c = &self.counters[id.0];
        DomainView {
            gens: Arc::clone(&self.gens),
            domains: Arc::clone(&self.keys[c.key].per_node),
            counts: Arc::clone(&c.dense),
        }
    }

    /// [`TopologyIndex::existing_anti_affinity_terms`] with each term's [`DomainView`].
    pub fn existing_anti_affinity_term_views(
        &self,
    ) -> impl Iterator<Item = (&AffinityTerm, &Arc<DomainCounts>, DomainView)> {
        self.terms.iter().filter(|e| !e.totals.is_empty()).map(|e| {
            let view = DomainView {
                gens: Arc::clone(&self.gens),
                domains: Arc::clone(&self.keys[e.key].per_node),
                counts: Arc::clone(&e.dense),
            };
            (&e.term, &e.totals, view)
        })
    }

    /// Per distinct required anti-affinity term of the placed pods with at least one counted pod:
    /// the term and the pods carrying it per domain of its topology key. Needs
    /// [`TopologyIndex::sync_with_terms`].
    pub fn existing_anti_affinity_terms(
        &self,
    ) -> impl Iterator<Item = (&AffinityTerm, &Arc<DomainCounts>)> {
        self.terms
            .iter()
            .filter(|e| !e.totals.is_empty())
            .map(|e| (&e.term, &e.totals))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod many_counters_tests;
