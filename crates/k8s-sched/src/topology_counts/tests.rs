//! A randomized cluster (fixed seed) driven through the scheduler [`Cache`]: nodes and pods are
//! added, removed, relabelled, assumed, forgotten and marked terminating; after every step the
//! PreFilter states PodTopologySpread and InterPodAffinity build from their incremental
//! [`TopologyIndex`] must equal upstream's count over every pod (`PreFilterState::compute`), as
//! must every node's Filter verdict, also after preemption-style AddPod/RemovePod on the state;
//! and PodTopologySpread's PreScore state, Score and NormalizeScore from the index must equal
//! those of upstream's count over every pod (`PreScoreState::compute`), for soft constraints
//! and for ReplicaSet-owned and Service-selected pods (the system default constraints).

use k8s_types::object::Shared;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_sched_framework::{
    CycleState, FilterPlugin, NodeInfo, NodeScore, PodInfo, PreFilterPlugin, PreScorePlugin,
    ScorePlugin,
};
use k8s_types::apps::ReplicaSet;
use k8s_types::core::{Node, Pod, PodAffinityTerm};
use k8s_types::object::Object;

use crate::cache::Cache;
use crate::config::inter_pod_affinity_args::InterPodAffinityArgs;
use crate::config::pod_topology_spread_args::{
    PodTopologySpreadArgs, DO_NOT_SCHEDULE, SCHEDULE_ANYWAY,
};
use crate::plugins::fixtures::{
    req_selector, FakeApi, FakeHandle, NodeBuilder, PodBuilder, TermKind,
};
use crate::plugins::inter_pod_affinity::filtering::{
    PreFilterState as IpaState, PRE_FILTER_STATE_KEY as IPA_KEY,
};
use crate::plugins::inter_pod_affinity::terms::has_scoring_terms;
use crate::plugins::inter_pod_affinity::InterPodAffinity;
use crate::plugins::pod_topology_spread::common::{build_default_constraints, filter_constraints};
use crate::plugins::pod_topology_spread::filtering::{
    PreFilterState as PtsState, PRE_FILTER_STATE_KEY as PTS_KEY,
};
use crate::plugins::pod_topology_spread::scoring::{self, PreScoreState};
use crate::plugins::pod_topology_spread::PodTopologySpread;

const ZONE: &str = "zone";
/// The zone key of the system default constraints.
const SYSTEM_ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";
const DNS: &str = DO_NOT_SCHEDULE;

/// xorshift64*: a fixed-seed generator (no external crate, same sequence everywhere).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn random_node(rng: &mut Rng, name: &str) -> Node {
    let mut b = NodeBuilder::new(name).label(HOST, name);
    // Most nodes have a zone; some lack it (they do not count for zone constraints).
    if rng.below(6) != 0 {
        let zone = rng.pick(&["z0", "z1", "z2"]);
        // The system defaults' zone follows it (no draw, so the sequence stays as it was):
        // missing with the zone, "" on some nodes.
        let system_zone = match zone {
            "z0" => "a",
            "z1" => "b",
            _ => "",
        };
        b = b.label(ZONE, zone).label(SYSTEM_ZONE, system_zone);
    }
    if rng.below(2) == 0 {
        b = b.label("disk", rng.pick(&["ssd", "hdd"]));
    }
    if rng.below(8) == 0 {
        b = b.taint("dedicated", "NoSchedule");
    }
    b.obj()
}

fn term(key: &str, values: &[&str], topology_key: &str, namespaces: &[&str]) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: Some(req_selector(key, "In", values)),
        topology_key: topology_key.into(),
        namespaces: namespaces.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn random_pod(rng: &mut Rng, name: &str) -> Pod {
    let mut b = PodBuilder::new(name)
        .namespace(rng.pick(&["ns-a", "ns-b"]))
        .label("app", rng.pick(&["web", "db", "cache"]));
    if rng.below(2) == 0 {
        b = b.label("tier", rng.pick(&["fe", "be"]));
    }
    match rng.below(7) {
        0 => {
            let tk = rng.pick(&[ZONE, HOST]);
            b = b.pod_affinity_term(true, TermKind::Required, term("app", &["web"], tk, &[]));
        }
        1 => {
            b = b.pod_affinity_term(
                true,
                TermKind::Required,
                term("tier", &["fe"], ZONE, &["ns-a", "ns-b"]),
            );
        }
        2 => {
            b = b.pod_affinity_term(
                false,
                TermKind::Preferred(5),
                term("app", &["db"], ZONE, &[]),
            );
        }
        // A topology key no incoming pod uses: the index meets it first in a placed pod's term.
        3 => {
            b = b.pod_affinity_term(true, TermKind::Required, term("app", &["db"], "disk", &[]));
        }
        _ => {}
    }
    let mut p = b.obj();
    p.metadata.uid = Some(format!("uid-{name}"));
    p
}

/// The incoming pods whose PreFilter states are compared after every step.
fn probes() -> Vec<Pod> {
    let sel = || req_selector("app", "In", &["web"]);
    vec![
        // PodTopologySpread: one zone constraint (the counters' totals).
        PodBuilder::new("spread-zone")
            .namespace("ns-a")
            .label("app", "web")
            .simple_spread(1, ZONE, DNS, sel())
            .obj(),
        // Zone and hostname, minDomains, matchLabelKeys.
        PodBuilder::new("spread-two")
            .namespace("ns-b")
            .label("app", "web")
            .label("tier", "fe")
            .spread(2, ZONE, DNS, Some(sel()), Some(4), None, None, &["tier"])
            .simple_spread(1, HOST, DNS, sel())
            .obj(),
        // nodeAffinityPolicy Honor with node affinity; nodeTaintsPolicy Honor.
        PodBuilder::new("spread-policies")
            .namespace("ns-a")
            .label("app", "db")
            .node_affinity("disk", "In", &["ssd"])
            .spread(1, ZONE, DNS, Some(sel()), None, None, Some("Honor"), &[])
            .obj(),
        // nodeAffinityPolicy Ignore.
        PodBuilder::new("spread-ignore")
            .namespace("ns-b")
            .node_selector(&[("disk", "hdd")])
            .spread(1, ZONE, DNS, Some(sel()), None, Some("Ignore"), None, &[])
            .obj(),
        // InterPodAffinity: anti-affinity on zone and affinity on hostname + zone.
        PodBuilder::new("ipa-anti")
            .namespace("ns-a")
            .label("app", "web")
            .label("tier", "fe")
            .pod_affinity_term(true, TermKind::Required, term("app", &["web"], ZONE, &[]))
            .obj(),
        PodBuilder::new("ipa-affinity")
            .namespace("ns-b")
            .label("app", "cache")
            .pod_affinity_term(false, TermKind::Required, term("app", &["db"], HOST, &[]))
            .pod_affinity_term(
                false,
                TermKind::Required,
                term("tier", &["be"], ZONE, &["ns-a", "ns-b"]),
            )
            .obj(),
        // Only the existing pods' anti-affinity applies to it.
        PodBuilder::new("ipa-plain")
            .namespace("ns-a")
            .label("app", "web")
            .obj(),
    ]
}

/// The PreScore probes: the spreading probes with their constraints made soft (plus one on the
/// disk label, which many nodes lack), and pods the system default constraints apply to (owned
/// by a ReplicaSet, with or without a nodeSelector; selected by a Service).
fn score_probes() -> Vec<Pod> {
    let mut out: Vec<Pod> = probes()
        .into_iter()
        .filter(|p| !p.spec.topology_spread_constraints.is_empty())
        .map(|mut p| {
            for c in &mut p.spec.topology_spread_constraints {
                c.when_unsatisfiable = SCHEDULE_ANYWAY.into();
            }
            p
        })
        .collect();
    out.push(
        PodBuilder::new("soft-disk")
            .namespace("ns-a")
            .label("app", "web")
            .simple_spread(
                1,
                "disk",
                SCHEDULE_ANYWAY,
                req_selector("app", "In", &["web"]),
            )
            .obj(),
    );
    out.push(
        PodBuilder::new("rs-web")
            .namespace("ns-a")
            .label("app", "web")
            .owner("apps/v1", "ReplicaSet", "rs-web")
            .obj(),
    );
    out.push(
        PodBuilder::new("rs-db-ssd")
            .namespace("ns-b")
            .label("app", "db")
            .node_selector(&[("disk", "ssd")])
            .toleration("dedicated")
            .owner("apps/v1", "ReplicaSet", "rs-db")
            .obj(),
    );
    out.push(
        PodBuilder::new("svc-cache")
            .namespace("ns-a")
            .label("app", "cache")
            .obj(),
    );
    out
}

/// The ReplicaSets and the Service [`score_probes`] read.
fn objects() -> Vec<Object> {
    let rs = |ns: &str, name: &str, app: &str| {
        let mut rs = ReplicaSet::default();
        rs.metadata.name = name.into();
        rs.metadata.namespace = Some(ns.into());
        rs.spec.selector = Some(req_selector("app", "In", &[app]));
        Object::ReplicaSet(Box::new(rs))
    };
    let mut svc = k8s_types::core::Service::default();
    svc.metadata.name = "cache".into();
    svc.metadata.namespace = Some("ns-a".into());
    svc.spec.selector = Some([("app".to_string(), "cache".to_string())].into());
    vec![
        rs("ns-a", "rs-web", "web"),
        rs("ns-b", "rs-db", "db"),
        Object::Service(Box::new(svc)),
    ]
}

/// PodTopologySpread's PreScore from the index against upstream's count over every pod for each
/// [`score_probes`] pod, on a subset of the nodes that changes with `step`: same state, Score and
/// NormalizeScore.
fn check_pre_score(step: usize, pts: &PodTopologySpread, h: &FakeHandle, seen: &mut Seen) {
    let nodes = &h.nodes;
    let filtered: Vec<&NodeInfo> = nodes
        .iter()
        .enumerate()
        .filter(|(k, _)| !(k + step).is_multiple_of(4))
        .map(|(_, n)| n)
        .collect();
    for pod in score_probes() {
        let what = format!("step {step}, PreScore of pod {}", pod.metadata.name);
        let own = &pod.spec.topology_spread_constraints;
        let constraints = if own.is_empty() {
            build_default_constraints(
                pts.default_constraints(),
                &pod,
                SCHEDULE_ANYWAY,
                Some(&h.api),
            )
        } else {
            filter_constraints(own, &pod.metadata.labels, SCHEDULE_ANYWAY)
        };
        let mut indexed = CycleState::new();
        let s = pts.pre_score_with_handle(&mut indexed, &pod, &filtered, h);
        if constraints.is_empty() || nodes.is_empty() {
            assert!(s.is_skip(), "{what}: {s:?}");
            continue;
        }
        assert!(s.is_success(), "{what}: {s:?}");
        // The plugin is system-defaulted: only the pod's own constraints need every key.
        let want = PreScoreState::compute(&pod, constraints, &filtered, nodes, !own.is_empty());
        let got = scoring::read(&indexed).expect("indexed state");
        assert_eq!(got.constraints, want.constraints, "{what}");
        assert_eq!(got.ignored_nodes, want.ignored_nodes, "{what}");
        assert_eq!(
            got.topology_value_to_pod_counts, want.topology_value_to_pod_counts,
            "{what}"
        );
        assert_eq!(
            got.topology_normalizing_weight, want.topology_normalizing_weight,
            "{what}"
        );
        let by_position = got.indexed.as_ref().expect("read from the index");
        assert!(filtered.iter().all(|n| by_position.knows(n)), "{what}");
        let mut a: Vec<NodeScore> = Vec::new();
        let mut b: Vec<NodeScore> = Vec::new();
        for n in &filtered {
            let x = pts.score(&indexed, &pod, n).expect("score");
            let y = want.score(&pod, n);
            assert_eq!(x, y, "{what}: Score on {}", n.name());
            a.push(NodeScore {
                name: n.name(),
                score: x,
            });
            b.push(NodeScore {
                name: n.name(),
                score: y,
            });
        }
        assert!(pts.normalize_score(&indexed, &pod, &mut a).is_success());
        want.normalize(&mut b);
        assert_eq!(a, b, "{what}: NormalizeScore");
        seen.score_states += 1;
        if want
            .topology_value_to_pod_counts
            .iter()
            .any(|m| m.values().any(|&n| n > 0))
        {
            seen.score_nonzero += 1;
        }
    }
}

/// A handle over the cache's nodes; on two steps out of three it also gives the cache's node
/// generations, so the index syncs through [`TopologyIndex::sync_generations`]'s block
/// comparison on those steps (skipping unchanged blocks on the second of two in a row) and by
/// reading the nodes on the others.
fn handle(cache: &Cache, step: usize) -> FakeHandle {
    FakeHandle {
        nodes: cache.node_infos().to_vec(),
        api: FakeApi { objects: objects() },
        generations: (!step.is_multiple_of(3)).then(|| {
            let g = cache.node_arrays().generations();
            (g.per_node.to_vec(), g.block_max.to_vec(), g.layout)
        }),
        all_pods: Vec::new(),
    }
}

fn assert_pts_equal(a: &PtsState, b: &PtsState, what: &str) {
    assert_eq!(a.constraints, b.constraints, "{what}: constraints");
    assert_eq!(
        a.tp_value_to_match_num, b.tp_value_to_match_num,
        "{what}: counts"
    );
    assert_eq!(a.critical_paths, b.critical_paths, "{what}: critical paths");
}

fn assert_ipa_equal(a: &IpaState, b: &IpaState, what: &str) {
    assert_eq!(
        a.existing_anti_affinity_counts.to_counts(),
        b.existing_anti_affinity_counts.to_counts(),
        "{what}: existing anti-affinity counts"
    );
    assert_eq!(
        a.affinity_counts.to_counts(),
        b.affinity_counts.to_counts(),
        "{what}: affinity counts"
    );
    assert_eq!(
        a.anti_affinity_counts.to_counts(),
        b.anti_affinity_counts.to_counts(),
        "{what}: anti-affinity counts"
    );
    for (x, y) in [
        (
            &a.existing_anti_affinity_counts,
            &b.existing_anti_affinity_counts,
        ),
        (&a.affinity_counts, &b.affinity_counts),
        (&a.anti_affinity_counts, &b.anti_affinity_counts),
    ] {
        assert_eq!(x.is_empty(), y.is_empty(), "{what}: emptiness");
    }
}

fn assert_filters_equal(
    plugin: &dyn FilterPlugin,
    indexed: &CycleState,
    scratch: &CycleState,
    pod: &Pod,
    nodes: &[NodeInfo],
    what: &str,
) {
    for n in nodes {
        let a = plugin.filter(indexed, pod, n);
        let b = plugin.filter(scratch, pod, n);
        assert_eq!(
            (a.code(), a.message()),
            (b.code(), b.message()),
            "{what}: Filter on {}",
            n.name()
        );
    }
}

/// Compares both plugins' indexed PreFilter states with from-scratch ones for every probe, then
/// adds and removes `extra` on `node` (preemption's dry run) and compares again.
/// How often the compared states held something (so the test does not pass on empty counts).
#[derive(Debug, Default)]
struct Seen {
    spread_nonzero: usize,
    existing_anti: usize,
    incoming_terms: usize,
    /// Indexed states whose integer-domain Filter path judged every node of the snapshot.
    fast_spread: usize,
    fast_affinity: usize,
    /// PreScore states compared, and those with a non-zero domain count.
    score_states: usize,
    score_nonzero: usize,
}

fn check(
    step: usize,
    pts: &PodTopologySpread,
    ipa: &InterPodAffinity,
    cache: &Cache,
    extra: Option<(&PodInfo, &NodeInfo)>,
    seen: &mut Seen,
) {
    let h = handle(cache, step);
    let nodes = &h.nodes;
    let scoring = nodes
        .iter()
        .flat_map(|n| n.pods())
        .filter(|p| has_scoring_terms(&p.pod))
        .count();
    for pod in probes() {
        let what = format!("step {step}, pod {}", pod.metadata.name);
        // PodTopologySpread.
        let constraints = filter_constraints(
            &pod.spec.topology_spread_constraints,
            &pod.metadata.labels,
            DNS,
        );
        let mut indexed = CycleState::new();
        let (_, s) = pts.pre_filter(&mut indexed, &pod, &h);
        if constraints.is_empty() {
            assert!(s.is_skip(), "{what}: {s:?}");
        } else {
            let mut scratch = CycleState::new();
            scratch.write(PTS_KEY, PtsState::compute(&pod, constraints, nodes));
            let got = indexed.read::<PtsState>(PTS_KEY).expect("indexed state");
            let want = scratch.read::<PtsState>(PTS_KEY).expect("scratch state");
            assert_pts_equal(got, want, &what);
            if let Some(f) = &got.fast {
                assert!(nodes.iter().all(|n| f.judge(n).is_some()), "{what}");
                seen.fast_spread += 1;
            }
            if want
                .tp_value_to_match_num
                .iter()
                .any(|m| m.values().any(|&n| n > 0))
            {
                seen.spread_nonzero += 1;
            }
            assert_filters_equal(pts, &indexed, &scratch, &pod, nodes, &what);
            if let Some((pi, node)) = extra {
                for delta in [1, -1] {
                    let (a, b) = if delta == 1 {
                        (
                            pts.add_pod(&mut indexed, &pod, pi, node),
                            pts.add_pod(&mut scratch, &pod, pi, node),
                        )
                    } else {
                        (
                            pts.remove_pod(&mut indexed, &pod, pi, node),
                            pts.remove_pod(&mut scratch, &pod, pi, node),
                        )
                    };
                    assert!(a.is_success() && b.is_success());
                    let got = indexed.read::<PtsState>(PTS_KEY).expect("indexed state");
                    let want = scratch.read::<PtsState>(PTS_KEY).expect("scratch state");
                    assert_pts_equal(got, want, &format!("{what}, AddPod/RemovePod {delta}"));
                    assert_filters_equal(pts, &indexed, &scratch, &pod, nodes, &what);
                }
            }
        }
        // InterPodAffinity.
        let mut indexed = CycleState::new();
        let (_, s) = ipa.pre_filter(&mut indexed, &pod, &h);
        let want = IpaState::compute(&pod, nodes, None, Some(&h.api));
        match want {
            None => assert!(s.is_skip(), "{what}: IPA {s:?}"),
            Some(want) => {
                assert!(s.is_success(), "{what}: IPA {s:?}");
                let mut scratch = CycleState::new();
                scratch.write(IPA_KEY, want);
                let got = indexed.read::<IpaState>(IPA_KEY).expect("indexed state");
                let want = scratch.read::<IpaState>(IPA_KEY).expect("scratch state");
                assert_ipa_equal(got, want, &what);
                let fast = got
                    .fast
                    .as_ref()
                    .expect("an indexed state has the fast path");
                assert!(nodes.iter().all(|n| fast.judge(n).is_some()), "{what}");
                seen.fast_affinity += 1;
                seen.existing_anti += usize::from(!want.existing_anti_affinity_counts.is_empty());
                seen.incoming_terms += usize::from(
                    !want.affinity_counts.is_empty() || !want.anti_affinity_counts.is_empty(),
                );
                assert_eq!(got.pods_with_scoring_terms, Some(scoring), "{what}");
                assert_filters_equal(ipa, &indexed, &scratch, &pod, nodes, &what);
                if let Some((pi, node)) = extra {
                    assert!(ipa.add_pod(&mut indexed, &pod, pi, node).is_success());
                    assert!(ipa.add_pod(&mut scratch, &pod, pi, node).is_success());
                    let got = indexed.read::<IpaState>(IPA_KEY).expect("indexed state");
                    let want = scratch.read::<IpaState>(IPA_KEY).expect("scratch state");
                    assert_ipa_equal(got, want, &format!("{what}, AddPod"));
                    assert_filters_equal(ipa, &indexed, &scratch, &pod, nodes, &what);
                    assert!(ipa.remove_pod(&mut indexed, &pod, pi, node).is_success());
                    assert!(ipa.remove_pod(&mut scratch, &pod, pi, node).is_success());
                    let got = indexed.read::<IpaState>(IPA_KEY).expect("indexed state");
                    let want = scratch.read::<IpaState>(IPA_KEY).expect("scratch state");
                    assert_ipa_equal(got, want, &format!("{what}, RemovePod"));
                }
            }
        }
    }
    check_pre_score(step, pts, &h, seen);
}

#[test]
fn counters_equal_a_recount_after_every_cluster_change() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let pts = PodTopologySpread::new(&PodTopologySpreadArgs::default());
    let ipa = InterPodAffinity::new(&InterPodAffinityArgs::default().defaulted());
    let mut cache = Cache::default();
    let mut node_names: Vec<String> = Vec::new();
    for i in 0..8 {
        let name = format!("node-{i:02}");
        cache.upsert_node(Arc::new(random_node(&mut rng, &name)));
        node_names.push(name);
    }
    cache.finish_batch();
    // Pods by key, with the node they were put on and whether that was an assumption.
    let mut pods: BTreeMap<String, (Shared<Pod>, String, bool)> = BTreeMap::new();
    let mut next_pod = 0usize;
    let mut next_node = node_names.len();
    let mut ops = [0usize; 9];
    let mut seen = Seen::default();
    for step in 0..400 {
        let op = rng.below(9);
        ops[op] += 1;
        let mut extra: Option<(PodInfo, String)> = None;
        match op {
            // A bound pod arrives.
            0 | 1 => {
                let name = format!("pod-{next_pod:03}");
                next_pod += 1;
                let node = node_names[rng.below(node_names.len())].clone();
                let mut p = random_pod(&mut rng, &name);
                p.spec.node_name = Some(node.clone());
                let p = Shared::from_typed(p);
                cache.upsert_pod(Shared::clone(&p));
                // The first bound pod's kubelet reports a new status: a version counting reads
                // nothing new in (its node's count generation stays, its generation does not),
                // on a node the index counted at the last check.
                let first = pods
                    .iter()
                    .find(|(_, v)| !v.2)
                    .map(|(k, v)| (k.clone(), v.clone()));
                if let Some((key, (q, on, _))) = first {
                    let counted = cache.node_info(&on).map(NodeInfo::count_generation);
                    let mut running = (*q).clone();
                    running.status.message = Some(format!("step {step}").into());
                    let q = Shared::from_typed(running);
                    cache.upsert_pod(Shared::clone(&q));
                    if let Some(ni) = cache.node_info(&on) {
                        assert_eq!(Some(ni.count_generation()), counted);
                        assert_ne!(ni.generation(), ni.count_generation());
                    }
                    pods.insert(key, (q, on, false));
                }
                pods.insert(p.key(), (p, node, false));
            }
            // A pod is deleted.
            2 => {
                if let Some(key) = pods.keys().nth(rng.below(pods.len().max(1))).cloned() {
                    cache.remove_pod(&key);
                    pods.remove(&key);
                }
            }
            // A pod's labels change (and maybe it starts terminating).
            3 => {
                if let Some(key) = pods.keys().nth(rng.below(pods.len().max(1))).cloned() {
                    let (p, node, assumed) = pods[&key].clone();
                    let mut q = (*p).clone();
                    q.metadata
                        .labels
                        .insert("app".into(), rng.pick(&["web", "db", "cache"]).into());
                    if rng.below(3) == 0 {
                        q.metadata.deletion_timestamp = Some("1970-01-01T00:00:01Z".into());
                    }
                    let q = Shared::from_typed(q);
                    if assumed {
                        // The scheduler's own copy changes: forget and assume again.
                        cache.forget(&p, &node);
                        cache.assume(PodInfo::new(Shared::clone(&q)), &node);
                    } else {
                        cache.upsert_pod(Shared::clone(&q));
                    }
                    pods.insert(key, (q, node, assumed));
                }
            }
            // The scheduler assumes a new pod on a node.
            4 => {
                let name = format!("pod-{next_pod:03}");
                next_pod += 1;
                let node = node_names[rng.below(node_names.len())].clone();
                let p = Shared::from_typed(random_pod(&mut rng, &name));
                cache.upsert_pod(Shared::clone(&p));
                assert!(cache.assume(PodInfo::new(Shared::clone(&p)), &node));
                pods.insert(p.key(), (p, node, true));
            }
            // An assumed pod is forgotten, or confirmed by its binding.
            5 => {
                let assumed: Vec<String> = pods
                    .iter()
                    .filter(|(_, v)| v.2)
                    .map(|(k, _)| k.clone())
                    .collect();
                if !assumed.is_empty() {
                    let key = assumed[rng.below(assumed.len())].clone();
                    let (p, node, _) = pods[&key].clone();
                    if rng.below(2) == 0 {
                        assert!(cache.forget(&p, &node));
                        cache.remove_pod(&key);
                        pods.remove(&key);
                    } else {
                        let mut bound = (*p).clone();
                        bound.spec.node_name = Some(node.clone());
                        let bound = Shared::from_typed(bound);
                        cache.upsert_pod(Shared::clone(&bound));
                        pods.insert(key, (bound, node, false));
                    }
                }
            }
            // A node's labels (zone, disk, taints) change.
            6 => {
                let name = node_names[rng.below(node_names.len())].clone();
                cache.upsert_node(Arc::new(random_node(&mut rng, &name)));
            }
            // A node is added or removed (its pods wait for it to come back).
            7 => {
                if rng.below(2) == 0 || node_names.len() < 3 {
                    let name = format!("node-{next_node:02}");
                    next_node += 1;
                    cache.upsert_node(Arc::new(random_node(&mut rng, &name)));
                    node_names.push(name);
                } else {
                    let i = rng.below(node_names.len());
                    let name = node_names.remove(i);
                    cache.remove_node(&name);
                    // Its pods go with it in this test.
                    let gone: Vec<String> = pods
                        .iter()
                        .filter(|(_, v)| v.1 == name)
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in gone {
                        cache.remove_pod(&k);
                        pods.remove(&k);
                    }
                }
            }
            // Preemption's dry run: a pod added to and removed from a node's state.
            _ => {
                let node = node_names[rng.below(node_names.len())].clone();
                let mut p = random_pod(&mut rng, "dry-run");
                p.spec.node_name = Some(node.clone());
                extra = Some((PodInfo::new(Shared::from_typed(p)), node));
            }
        }
        cache.finish_batch();
        let extra_node = extra
            .as_ref()
            .and_then(|(_, n)| cache.node_info(n).cloned());
        let extra_ref = match (&extra, &extra_node) {
            (Some((pi, _)), Some(n)) => Some((pi, n)),
            _ => None,
        };
        check(step, &pts, &ipa, &cache, extra_ref, &mut seen);
    }
    // Every kind of step ran.
    assert!(ops.iter().all(|&n| n > 20), "{ops:?}");
    assert!(
        seen.spread_nonzero > 100
            && seen.existing_anti > 100
            && seen.incoming_terms > 100
            && seen.fast_spread > 100
            && seen.fast_affinity > 100
            && seen.score_states > 1000
            && seen.score_nonzero > 500,
        "{seen:?}"
    );
    assert!(!pods.is_empty());
}

#[test]
fn domain_keys_look_up_as_the_strings_they_hold() {
    use crate::topology_counts::{DomainCounts, DomainKey};
    let long = "a-topology-value-longer-than-thirty-bytes";
    let mut m = DomainCounts::default();
    m.insert(DomainKey::from("node-00001"), 2);
    m.insert(DomainKey::from(long), 5);
    m.insert(DomainKey::from(""), 1);
    assert_eq!(m.get("node-00001"), Some(&2));
    assert_eq!(m.get(long), Some(&5));
    assert_eq!(m.get(""), Some(&1));
    assert_eq!(m.get("node-0000"), None);
    assert!(matches!(DomainKey::from(long), DomainKey::Heap(_)));
    assert_eq!(DomainKey::from("zone-a").as_str(), "zone-a");
}

#[test]
fn the_labels_memo_answers_for_the_same_map_only() {
    use crate::topology_counts::LabelsMemo;
    use k8s_types::meta::StringMap;
    let web = StringMap::from([("app".to_string(), "web".to_string())]);
    let twin = StringMap::from([("app".to_string(), "web".to_string())]);
    let mut memo = LabelsMemo::default();
    let evals = std::cell::Cell::new(0);
    let eval = |answer: bool| {
        evals.set(evals.get() + 1);
        answer
    };
    assert!(memo.get_or(&web, || eval(true)));
    // A copy of the map is the same allocation: remembered.
    assert!(memo.get_or(&web.clone(), || eval(false)));
    // Equal contents in another allocation are evaluated (the memo compares addresses).
    assert!(!memo.get_or(&twin, || eval(false)));
    assert_eq!(evals.get(), 2);
    // Writing to a remembered map copies it (the memo holds it), so the write is seen.
    let mut relabelled = web.clone();
    relabelled.insert("app".to_string(), "db".to_string());
    assert!(!StringMap::ptr_eq(&relabelled, &web));
    assert!(!memo.get_or(&relabelled, || eval(false)));
    assert_eq!(evals.get(), 3);
    // Two entries: `twin` was replaced by `relabelled`; `web` was replaced first.
    assert!(!memo.get_or(&relabelled, || eval(true)));
    assert!(memo.get_or(&web, || eval(true)));
    assert_eq!(evals.get(), 4);
}

#[test]
fn a_node_recount_through_the_memo_equals_matching_each_pod() {
    use crate::plugins::fixtures::snapshot;
    use crate::plugins::selector::Selector;
    use crate::topology_counts::{LabelsMemo, PodMatcher};
    let template = PodBuilder::new("template").label("app", "web").obj();
    let sharing = |name: &str| {
        let mut p = PodBuilder::new(name).namespace("default").node("n1").obj();
        p.metadata.labels = template.metadata.labels.clone();
        p
    };
    let mut terminating = PodBuilder::new("c")
        .namespace("default")
        .node("n1")
        .terminating()
        .obj();
    terminating.metadata.labels = template.metadata.labels.clone();
    let pods = vec![
        sharing("a"),
        sharing("b"),
        terminating,
        // Its own map with the same label, in another namespace.
        PodBuilder::new("d")
            .namespace("other")
            .label("app", "web")
            .node("n1")
            .obj(),
        PodBuilder::new("e")
            .namespace("default")
            .label("app", "db")
            .node("n1")
            .obj(),
        sharing("f"),
    ];
    let nodes = snapshot(&[NodeBuilder::new("n1").obj()], &pods);
    let selector = Selector::from_label_selector(Some(&req_selector("app", "In", &["web"])));
    let matcher = PodMatcher::spread("default", &selector);
    let by_pod = pods.iter().filter(|p| matcher.matches(p)).count();
    // a, b and f: c is terminating, d in another namespace, e labelled db.
    assert_eq!(by_pod, 3);
    let mut memo = LabelsMemo::default();
    assert_eq!(matcher.count(&nodes[0], &mut memo), 3);
    // Again, every selector outcome now from the memo.
    assert_eq!(matcher.count(&nodes[0], &mut memo), 3);
    // InterPodAffinity's matchers count terminating pods.
    let all = PodMatcher {
        skip_terminating: false,
        ..matcher
    };
    assert_eq!(all.count(&nodes[0], &mut memo), 4);
}
