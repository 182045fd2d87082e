//! The index with many counters at once (a cluster of many workloads, each with its own spread
//! selectors): past [`CANDIDATE_FILTER_MIN`](super::CANDIDATE_FILTER_MIN) counters a changed node is recounted only for the
//! counters whose required label pair one of its pods carries, and past the cap the least
//! recently used counter is replaced. After every change of a randomized cluster (fixed seed),
//! every counter asked for must give, node by node and domain by domain, what a recount of
//! every pod gives.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_sched_framework::NodeInfo;
use k8s_types::core::Pod;
use k8s_types::labels::LabelSelector;
use k8s_types::object::Shared;

use super::matcher::Clause;
use super::{counter_cap, PodMatcher, TopologyIndex, COUNTER_POSITIONS, MAX_COUNTERS};
use crate::cache::Cache;
use crate::plugins::fixtures::{req_selector, NodeBuilder, PodBuilder};
use crate::plugins::selector::Selector;

const HOST: &str = "kubernetes.io/hostname";
const ZONE: &str = "topology.kubernetes.io/zone";
const APPS: usize = 24;

/// xorshift64* with a fixed seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

fn app(i: usize) -> String {
    format!("a{i:02}")
}

fn node(rng: &mut Rng, name: &str) -> Arc<k8s_types::core::Node> {
    let mut b = NodeBuilder::new(name).label(HOST, name);
    // One node in five has no zone.
    if rng.below(5) != 0 {
        b = b.label(ZONE, ["z0", "z1", "z2"][rng.below(3)]);
    }
    Arc::new(b.obj())
}

fn pod(rng: &mut Rng, name: &str, node: &str) -> Shared<Pod> {
    let mut b = PodBuilder::new(name)
        .namespace(["ns-a", "ns-b"][rng.below(2)])
        .label("app", &app(rng.below(APPS)))
        .node(node);
    if rng.below(3) == 0 {
        b = b.label("tier", ["fe", "be"][rng.below(2)]);
    }
    if rng.below(10) == 0 {
        b = b.terminating();
    }
    let mut p = b.obj();
    p.metadata.uid = Some(format!("uid-{name}"));
    Shared::from_typed(p)
}

fn spread(ns: &str, selector: LabelSelector) -> PodMatcher {
    PodMatcher::spread(ns, &Selector::Match(selector))
}

/// Matchers of every shape: with a required pair from `matchLabels` or a one-value `In`, and
/// without one (two values, `NotIn`, `Exists`, everything, nothing), in one or two clauses.
fn matchers() -> Vec<PodMatcher> {
    let mut out = Vec::new();
    for i in 0..APPS {
        let a = app(i);
        out.push(spread(
            "ns-a",
            LabelSelector::from_labels([("app", a.as_str())]),
        ));
        out.push(spread(
            "ns-b",
            LabelSelector::from_labels([("app", a.as_str()), ("tier", "fe")]),
        ));
        out.push(spread("ns-a", req_selector("app", "In", &[&a])));
    }
    out.push(spread("ns-a", req_selector("app", "In", &["a00", "a01"])));
    out.push(spread("ns-b", req_selector("app", "NotIn", &["a03"])));
    out.push(spread("ns-a", req_selector("tier", "Exists", &[])));
    out.push(spread("ns-b", LabelSelector::default()));
    out.push(PodMatcher::spread("ns-a", &Selector::Nothing));
    // Two clauses, counting terminating pods too (InterPodAffinity's kind of matcher): the
    // second clause names the pair.
    let clause = |ns: &[&str], selector: Selector| Clause {
        namespaces: ns.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>(),
        namespace_selector: Selector::Nothing,
        selector,
    };
    for i in 0..4 {
        out.push(PodMatcher {
            skip_terminating: false,
            clauses: vec![
                clause(
                    &["ns-a", "ns-b"],
                    Selector::Match(req_selector("tier", "Exists", &[])),
                ),
                clause(
                    &["ns-a", "ns-b"],
                    Selector::Match(LabelSelector::from_labels([("app", app(i).as_str())])),
                ),
            ],
        });
    }
    out
}

/// Every pod counted again: per node position the matching pods, per domain their sum.
fn recount(nodes: &[NodeInfo], m: &PodMatcher, key: &str) -> (Vec<i64>, BTreeMap<String, i64>) {
    let mut per_node = Vec::new();
    let mut totals = BTreeMap::new();
    for n in nodes {
        let c = n.pods().iter().filter(|p| m.matches(&p.pod)).count() as i64;
        per_node.push(c);
        if let Some(v) = n.node().metadata.labels.get(key) {
            if c > 0 {
                *totals.entry(v.clone()).or_insert(0) += c;
            }
        }
    }
    (per_node, totals)
}

/// Drives a random cluster through `steps` changes, asking `index` after each for `per_step`
/// (matcher, key) counters; returns how many counters the index held at the end.
fn drive(index: &mut TopologyIndex, seed: u64, steps: usize, per_step: usize) -> usize {
    let mut rng = Rng(seed);
    let matchers = matchers();
    let mut cache = Cache::default();
    let mut names: Vec<String> = (0..10).map(|i| format!("node-{i:02}")).collect();
    for n in &names {
        cache.upsert_node(node(&mut rng, n));
    }
    let mut pods: BTreeMap<String, String> = BTreeMap::new();
    let mut next = 0;
    for step in 0..steps {
        match rng.below(8) {
            // A pod lands on a node.
            0..=3 => {
                let name = format!("pod-{next:04}");
                next += 1;
                let on = names[rng.below(names.len())].clone();
                let p = pod(&mut rng, &name, &on);
                pods.insert(p.key(), on);
                cache.upsert_pod(p);
            }
            // A pod goes.
            4 => {
                if let Some(k) = pods.keys().nth(rng.below(pods.len().max(1))).cloned() {
                    cache.remove_pod(&k);
                    pods.remove(&k);
                }
            }
            // A pod is relabelled (same name, new labels) on its node.
            5 => {
                if let Some((k, on)) = pods.iter().nth(rng.below(pods.len().max(1))) {
                    let name = k.rsplit('/').next().unwrap_or_default().to_string();
                    let on = on.clone();
                    cache.remove_pod(k);
                    let p = pod(&mut rng, &name, &on);
                    let key = p.key();
                    cache.upsert_pod(p);
                    pods.retain(|x, _| x.rsplit('/').next() != Some(name.as_str()));
                    pods.insert(key, on);
                }
            }
            // A node moves zone.
            6 => {
                let n = names[rng.below(names.len())].clone();
                cache.upsert_node(node(&mut rng, &n));
            }
            // A node comes or goes with its pods.
            _ => {
                if rng.below(2) == 0 || names.len() < 4 {
                    let n = format!("node-{:02}", 10 + step);
                    cache.upsert_node(node(&mut rng, &n));
                    names.push(n);
                } else {
                    let n = names.remove(rng.below(names.len()));
                    cache.remove_node(&n);
                    let gone: Vec<String> = pods
                        .iter()
                        .filter(|(_, on)| **on == n)
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in gone {
                        cache.remove_pod(&k);
                        pods.remove(&k);
                    }
                }
            }
        }
        cache.finish_batch();
        let nodes = cache.node_infos();
        if step % 2 == 0 {
            let g = cache.node_arrays().generations();
            index.sync_generations(nodes, Some(g));
        } else {
            index.sync(nodes);
        }
        for _ in 0..per_step {
            let m = &matchers[rng.below(matchers.len())];
            let key = [HOST, ZONE][rng.below(2)];
            let id = index.counter(nodes, m, key);
            let (per_node, totals) = recount(nodes, m, key);
            for (pos, &want) in per_node.iter().enumerate() {
                assert_eq!(
                    index.count_on_node(id, pos),
                    want,
                    "step {step}, {m:?} on {pos}"
                );
            }
            let got: BTreeMap<String, i64> = index
                .totals(id)
                .iter()
                .map(|(k, &v)| (k.as_str().to_string(), v))
                .collect();
            assert_eq!(got, totals, "step {step}, {m:?} over {key}");
        }
    }
    index.counters.len()
}

#[test]
fn many_counters_are_recounted_only_where_their_pods_are() {
    let mut index = TopologyIndex::default();
    // 81 matchers over two keys: up to 162 counters, all kept (the cap at ~10 nodes is far above).
    let held = drive(&mut index, 0x5eed_0000_0000_0013, 400, 12);
    assert!(held > 100, "{held} counters");
    // The filter was on for most refreshes, and most counters carry a required pair.
    let f = index.filter.as_deref().expect("the candidate filter is on");
    assert!(f.refreshes > 300, "{} refreshes", f.refreshes);
    let with_pair = index
        .counters
        .iter()
        .filter(|c| c.required.is_some())
        .count();
    assert!(with_pair * 10 > held * 8, "{with_pair} of {held}");
}

#[test]
fn replaced_counters_leave_and_join_the_candidate_table() {
    // One position in all: the cap is MAX_COUNTERS, below the 162 counters asked for, so the
    // least recently used ones are replaced all along.
    let mut index = TopologyIndex {
        counter_positions: Some(1),
        ..TopologyIndex::default()
    };
    let held = drive(&mut index, 0x5eed_0000_0000_0031, 400, 12);
    assert_eq!(held, MAX_COUNTERS);
    // The tables list exactly the held counters, by their required pair or as unfiltered.
    let f = index.filter.as_deref().expect("the candidate filter is on");
    let listed: usize = f.by_label.values().map(Vec::len).sum();
    let with_pair = index
        .counters
        .iter()
        .filter(|c| c.required.is_some())
        .count();
    assert_eq!(listed, with_pair);
    assert_eq!(f.unfiltered.len(), held - with_pair);
}

#[test]
fn the_counter_cap_follows_the_cluster_size() {
    // 2^21 positions: 419 counters at 5,000 nodes, 64 (the floor) from 32,768 nodes.
    assert_eq!(counter_cap(COUNTER_POSITIONS, 5_000), 419);
    assert_eq!(counter_cap(COUNTER_POSITIONS, 1_000), 2_097);
    assert_eq!(counter_cap(COUNTER_POSITIONS, 32_768), 64);
    assert_eq!(counter_cap(COUNTER_POSITIONS, 100_000), 64);
    assert_eq!(counter_cap(COUNTER_POSITIONS, 0), COUNTER_POSITIONS);
}

#[test]
fn required_labels_are_those_every_counted_pod_carries() {
    let h = super::label_pair_hash;
    let m = spread(
        "ns",
        LabelSelector::from_labels([("app", "web"), ("tier", "fe")]),
    );
    // The first matchLabels pair in key order.
    assert_eq!(m.required_label(), Some(h("app", "web")));
    let m = spread("ns", req_selector("app", "In", &["web"]));
    assert_eq!(m.required_label(), Some(h("app", "web")));
    assert_eq!(
        spread("ns", req_selector("app", "In", &["a", "b"])).required_label(),
        None
    );
    assert_eq!(
        spread("ns", req_selector("app", "NotIn", &["a"])).required_label(),
        None
    );
    assert_eq!(
        spread("ns", LabelSelector::default()).required_label(),
        None
    );
    assert_eq!(
        PodMatcher::spread("ns", &Selector::Nothing).required_label(),
        None
    );
    // The pair and the split between key and value both count.
    assert_ne!(h("app", "web"), h("ap", "pweb"));
}

#[test]
fn a_status_update_is_not_recounted() {
    let mut rng = Rng(0x5eed_0000_0000_0077);
    let mut cache = Cache::default();
    for i in 0..4 {
        cache.upsert_node(node(&mut rng, &format!("node-{i:02}")));
    }
    let mut placed = Vec::new();
    for i in 0..12 {
        let p = pod(
            &mut rng,
            &format!("pod-{i:02}"),
            &format!("node-{:02}", i % 4),
        );
        cache.upsert_pod(Shared::clone(&p));
        placed.push(p);
    }
    cache.finish_batch();
    let mut index = TopologyIndex::default();
    index.sync(cache.node_infos());
    let matchers = matchers();
    let ids: Vec<_> = matchers
        .iter()
        .map(|m| index.counter(cache.node_infos(), m, HOST))
        .collect();
    let refreshes = |i: &TopologyIndex| i.filter.as_deref().expect("the filter is on").refreshes;
    let before = refreshes(&index);
    // A kubelet's status write of one pod: its node's generation moves, not what counting reads.
    let mut running = (*placed[0]).clone();
    running.status.phase = Some("Running".into());
    cache.upsert_pod(Shared::from_typed(running));
    cache.finish_batch();
    index.sync(cache.node_infos());
    assert_eq!(refreshes(&index), before);
    // One pod more on node-01: that node alone is refreshed, once.
    cache.upsert_pod(pod(&mut rng, "pod-new", "node-01"));
    cache.finish_batch();
    index.sync(cache.node_infos());
    assert_eq!(refreshes(&index), before + 1);
    for (m, &id) in matchers.iter().zip(&ids) {
        let (per_node, _) = recount(cache.node_infos(), m, HOST);
        for (pos, &want) in per_node.iter().enumerate() {
            assert_eq!(index.count_on_node(id, pos), want, "{m:?} on {pos}");
        }
    }
}
