//! The Filter and Score phases over many nodes at once: [`Framework::filter_chunk`] and
//! [`Framework::score_batch`]. Same plugins, order, statuses, arithmetic and error messages as the
//! per-node [`Framework::run_filter`] and [`Framework::run_score`] (upstream
//! `pkg/scheduler/framework/runtime/framework.go` `RunFilterPlugins`, `RunScorePlugins`), but the
//! loop runs plugin by plugin over a slice of nodes, through the plugins'
//! [`FilterPlugin::filter_nodes`](k8s_sched_framework::FilterPlugin::filter_nodes) and
//! [`ScorePlugin::score_nodes`](k8s_sched_framework::ScorePlugin::score_nodes): one dynamic call
//! and one cycle-state read per plugin per slice instead of per node, and tight loops over the
//! nodes for plugins that implement them. A node rejected by one Filter plugin is not passed to
//! the next, so each node's status is the first failing plugin's, as upstream.

use k8s_sched_framework::{
    CycleState, NodeInfo, NodeScore, Status, MAX_NODE_SCORE, MIN_NODE_SCORE,
};
use k8s_types::core::Pod;

use super::Framework;
use crate::scratch;

/// Reusable buffers of [`Framework::filter_chunk`].
#[derive(Debug, Default)]
pub struct FilterScratch<'a> {
    alive: Vec<&'a NodeInfo>,
    alive_pos: Vec<usize>,
    failed: Vec<(usize, Status)>,
}

/// Reusable buffers of [`Framework::score_batch`].
#[derive(Debug, Default)]
pub struct ScoreScratch<'a> {
    raw: Vec<i64>,
    normalized: Vec<NodeScore<'a>>,
    /// The weighted total per node after [`Framework::score_batch`].
    pub totals: Vec<i64>,
}

impl<'a> FilterScratch<'a> {
    /// Buffers taken from the per-thread pool (`scratch.rs`), reused across pods.
    pub fn pooled() -> FilterScratch<'a> {
        FilterScratch {
            alive: scratch::take(),
            alive_pos: scratch::take(),
            failed: Vec::new(),
        }
    }

    /// Hands the buffers back to the per-thread pool.
    pub fn release(self) {
        scratch::give(self.alive);
        scratch::give(self.alive_pos);
    }
}

impl<'a> ScoreScratch<'a> {
    /// Buffers taken from the per-thread pool (`scratch.rs`), reused across pods.
    pub fn pooled() -> ScoreScratch<'a> {
        ScoreScratch {
            raw: scratch::take(),
            normalized: scratch::take(),
            totals: scratch::take(),
        }
    }

    /// Hands the buffers back to the per-thread pool.
    pub fn release(self) {
        scratch::give(self.raw);
        scratch::give(self.normalized);
        scratch::give(self.totals);
    }
}

impl Framework {
    /// Runs the Filter plugins (except those skipped in this attempt, `skips` as from
    /// [`Framework::filter_skips`]) on `nodes`. Appends `(i, status)` to `failed` for every
    /// `nodes[i]` that did not pass, in increasing `i`, with the status [`Framework::run_filter`]
    /// returns for it.
    pub fn filter_chunk<'a>(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&'a NodeInfo],
        skips: &[bool],
        scratch: &mut FilterScratch<'a>,
        failed: &mut Vec<(usize, Status)>,
    ) {
        let start = failed.len();
        scratch.alive.clear();
        scratch.alive.extend_from_slice(nodes);
        scratch.alive_pos.clear();
        scratch.alive_pos.extend(0..nodes.len());
        for (i, p) in self.filter.iter().enumerate() {
            if scratch.alive.is_empty() {
                break;
            }
            if skips.get(i).copied().unwrap_or(false) {
                continue;
            }
            let Some(f) = p.as_filter() else {
                continue;
            };
            scratch.failed.clear();
            f.filter_nodes(state, pod, &scratch.alive, &mut scratch.failed);
            if scratch.failed.is_empty() {
                continue;
            }
            let mut write = 0;
            let mut next_failed = scratch.failed.drain(..).peekable();
            for read in 0..scratch.alive.len() {
                if next_failed.peek().is_some_and(|(r, _)| *r == read) {
                    if let Some((_, s)) = next_failed.next() {
                        let s = if s.is_rejected() {
                            s
                        } else {
                            Status::error(format!(
                                "running {:?} filter plugin: {}",
                                p.name(),
                                s.message()
                            ))
                        };
                        failed.push((scratch.alive_pos[read], s.with_plugin(p.name())));
                    }
                } else {
                    scratch.alive[write] = scratch.alive[read];
                    scratch.alive_pos[write] = scratch.alive_pos[read];
                    write += 1;
                }
            }
            scratch.alive.truncate(write);
            scratch.alive_pos.truncate(write);
        }
        failed[start..].sort_by_key(|(i, _)| *i);
    }

    /// Runs PreScore-surviving Score plugins on `nodes`, normalizes and weights their scores like
    /// [`Framework::run_score`]; the totals are left in `scratch.totals` (in `nodes` order).
    ///
    /// # Errors
    /// The statuses [`Framework::run_score`] returns.
    pub fn score_batch<'a>(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&'a NodeInfo],
        scratch: &mut ScoreScratch<'a>,
    ) -> Result<(), Status> {
        self.score_batch_masked(state, pod, nodes, scratch, None)
    }

    /// [`Framework::score_batch`] leaving out the Score plugins `i` with `left_out[i]` (in the
    /// order of the profile's Score plugins); the fused pass adds their scores itself.
    ///
    /// # Errors
    /// The statuses [`Framework::run_score`] returns for the plugins that run.
    pub(crate) fn score_batch_masked<'a>(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&'a NodeInfo],
        scratch: &mut ScoreScratch<'a>,
        left_out: Option<&[bool]>,
    ) -> Result<(), Status> {
        let n = nodes.len();
        scratch.totals.clear();
        scratch.totals.resize(n, 0);
        scratch.raw.clear();
        scratch.raw.resize(n, 0);
        scratch.normalized.clear();
        let skip = state.skip_score_plugins();
        for (i, (p, weight)) in self.score.iter().enumerate() {
            if left_out.is_some_and(|m| m.get(i).copied().unwrap_or(false)) {
                continue;
            }
            if !skip.is_empty() && skip.contains(p.name()) {
                continue;
            }
            let Some(sp) = p.as_score() else {
                continue;
            };
            if let Err(s) = sp.score_nodes(state, pod, nodes, &mut scratch.raw) {
                return Err(Status::error(format!(
                    "running Score plugins: plugin {:?} failed with: {}",
                    p.name(),
                    s.message()
                )));
            }
            if scratch.normalized.is_empty() {
                scratch
                    .normalized
                    .extend(nodes.iter().map(|node| NodeScore {
                        name: node.name(),
                        score: 0,
                    }));
            }
            for (ns, raw) in scratch.normalized.iter_mut().zip(&scratch.raw) {
                ns.score = *raw;
            }
            let s = sp.normalize_score(state, pod, &mut scratch.normalized);
            if !s.is_success() {
                return Err(Status::error(format!(
                    "running Normalize on Score plugins: plugin {:?} failed with: {}",
                    p.name(),
                    s.message()
                )));
            }
            for (ns, total) in scratch.normalized.iter().zip(scratch.totals.iter_mut()) {
                if ns.score < MIN_NODE_SCORE || ns.score > MAX_NODE_SCORE {
                    return Err(Status::error(format!(
                        "applying score defaultWeights on Score plugins: plugin {:?} returns an invalid score {}, it should in the range of [{}, {}] after normalizing",
                        p.name(),
                        ns.score,
                        MIN_NODE_SCORE,
                        MAX_NODE_SCORE
                    )));
                }
                *total += ns.score * weight;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use k8s_types::object::Shared;
    use std::sync::Arc;

    use k8s_sched_framework::CycleState;
    use k8s_types::core::{ContainerPort, Taint, Toleration};

    use crate::cache::Cache;
    use crate::detached_client::DetachedClient;
    use crate::nominator::Nominator;
    use crate::perf_workloads::{make_node, make_pod, PodTemplate};
    use crate::runtime::handle::CycleHandle;
    use crate::waiting::WaitingPods;
    use crate::{KubeSchedulerConfiguration, Scheduler};

    use super::*;

    fn taint(key: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: "x".into(),
            effect: effect.into(),
            time_added: None,
        }
    }

    /// A mixed cluster: plain, cordoned, tainted, full, PreferNoSchedule, zone-less, busy nodes.
    fn cluster() -> Cache {
        let mut c = Cache::default();
        for i in 0..8 {
            let mut n = make_node(
                &format!("n{i}"),
                Some(if i == 5 { "zone9" } else { "zone1" }),
            );
            match i {
                1 => n.spec.unschedulable = true,
                2 => n.spec.taints.push(taint("dedicated", "NoSchedule")),
                4 => n.spec.taints.push(taint("spot", "PreferNoSchedule")),
                _ => {}
            }
            c.upsert_node(Arc::new(n));
        }
        c.finish_batch();
        // n3 is full (40 x 100m), n6 holds a pod using hostPort 8080, n7 is half full.
        for (node, count) in [("n3", 40), ("n7", 20)] {
            for k in 0..count {
                let mut p = make_pod(PodTemplate::Default, "default", node, k);
                p.spec.node_name = Some(node.into());
                c.upsert_pod(Shared::from_typed(p));
            }
        }
        let mut hp = make_pod(PodTemplate::Default, "default", "hp-", 0);
        hp.spec.containers[0].ports = vec![ContainerPort {
            container_port: 80,
            host_port: Some(8080),
            ..Default::default()
        }];
        hp.spec.node_name = Some("n6".into());
        c.upsert_pod(Shared::from_typed(hp));
        c
    }

    fn pods() -> Vec<k8s_types::core::Pod> {
        let mut out = vec![
            make_pod(PodTemplate::Default, "default", "", 1),
            make_pod(PodTemplate::NodeAffinity, "default", "", 2),
            make_pod(PodTemplate::HighPriority, "default", "", 3),
        ];
        let mut tolerant = make_pod(PodTemplate::Default, "default", "tol-", 4);
        tolerant.spec.tolerations.push(Toleration {
            key: "dedicated".into(),
            operator: "Exists".into(),
            ..Default::default()
        });
        out.push(tolerant);
        let mut ported = make_pod(PodTemplate::Default, "default", "port-", 5);
        ported.spec.containers[0].ports[0].host_port = Some(8080);
        out.push(ported);
        let mut named = make_pod(PodTemplate::Default, "default", "named-", 6);
        named.spec.node_name = Some("n7".into());
        out.push(named);
        out
    }

    #[test]
    fn batch_filter_and_score_equal_the_node_by_node_ones() {
        let scheduler = Scheduler::new(KubeSchedulerConfiguration::default()).expect("default");
        let fwk = &scheduler.profiles()[0];
        let cache = cluster();
        let nodes: Vec<&NodeInfo> = cache.node_infos().iter().collect();
        let mut api = DetachedClient::default();
        let mut waiting = WaitingPods::default();
        let nominator = Nominator::default();
        let mut rejected_somewhere = 0;
        for pod in pods() {
            let pod = Arc::new(pod);
            let mut state = CycleState::new();
            let handle = CycleHandle {
                fwk,
                api: &mut api,
                cache: &cache,
                waiting: &mut waiting,
                nominator: &nominator,
                now: 0,
            };
            let (_, s, _) = fwk.run_pre_filter(&mut state, &pod, &handle);
            assert!(s.is_success(), "{s:?}");
            let skips = fwk.filter_skips(&state);
            let one_by_one: Vec<(usize, Status)> = nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (i, fwk.run_filter(&state, &pod, n, &skips)))
                .filter(|(_, s)| !s.is_success())
                .collect();
            let mut batch = Vec::new();
            fwk.filter_chunk(
                &state,
                &pod,
                &nodes,
                &skips,
                &mut FilterScratch::default(),
                &mut batch,
            );
            assert_eq!(batch, one_by_one, "pod {}", pod.metadata.name);
            rejected_somewhere += batch.len();

            let feasible: Vec<&NodeInfo> = nodes
                .iter()
                .enumerate()
                .filter(|(i, _)| !batch.iter().any(|(j, _)| j == i))
                .map(|(_, n)| *n)
                .collect();
            let s = fwk.run_pre_score(&mut state, &pod, &feasible, &handle);
            assert!(s.is_success(), "{s:?}");
            let totals = fwk.run_score(&state, &pod, &feasible).expect("score");
            let mut scratch = ScoreScratch::default();
            fwk.score_batch(&state, &pod, &feasible, &mut scratch)
                .expect("score batch");
            assert_eq!(scratch.totals, totals, "pod {}", pod.metadata.name);
        }
        // Rejections by hand: default 3 (cordon n1, taint n2, cpu n3); node affinity 4 (+ zone9
        // n5); 3000m 4 (+ n7 with 2000m free); tolerant 2 (n1, n3); host port 4 (+ n6); nodeName
        // n7: the 7 other nodes.
        assert_eq!(rejected_somewhere, 3 + 4 + 4 + 2 + 4 + 7);
    }
}
