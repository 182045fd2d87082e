//! [`Scheduler`]: kube-scheduler as one call per tick ([`Scheduler::schedule`]). Builds the
//! profiles from a `KubeSchedulerConfiguration`, then each tick lists nodes and pods, rebuilds the
//! snapshot, resolves pods waiting at Permit, and attempts every eligible pending pod once in
//! QueueSort order (upstream `pkg/scheduler/scheduler.go`, `schedule_one.go`).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Node, Pod};
use k8s_types::framework::{PodInfo, QueuedPodInfo, WaitingPodInfo};
use k8s_types::scheduling::PodGroup;

use crate::cache::Cache;
use crate::config::validation::{set_defaults, validate};
use crate::config::KubeSchedulerConfiguration;
use crate::error::ConfigError;
use crate::nominator::Nominator;
use crate::podgroup_status::update_pod_groups;
use crate::queue::SchedulingQueue;
use crate::registry::Registry;
use crate::runtime::Framework;
use crate::schedule_one::{process_waiting, schedule_one, Ctx};
use crate::waiting::{pod_key, WaitingPods};

/// kube-scheduler.
#[derive(Debug)]
pub struct Scheduler {
    profiles: Vec<Framework>,
    by_name: BTreeMap<String, usize>,
    percentage_of_nodes_to_score: i32,
    cache: Cache,
    queue: SchedulingQueue,
    waiting: WaitingPods,
    nominator: Nominator,
    next_start_node_index: usize,
    last_signature: Option<u64>,
    generation: u64,
}

impl Scheduler {
    /// A scheduler with the in-tree plugins.
    ///
    /// # Errors
    /// [`ConfigError`] naming the field path of the first problem (validation, unknown plugin,
    /// bad plugin args, invalid profile).
    pub fn new(config: KubeSchedulerConfiguration) -> Result<Scheduler, ConfigError> {
        Scheduler::with_registry(config, Registry::new())
    }

    /// A scheduler with the in-tree plugins plus out-of-tree ones from `registry`.
    ///
    /// # Errors
    /// As [`Scheduler::new`], plus a name registered both in-tree and in `registry`.
    pub fn with_registry(
        mut config: KubeSchedulerConfiguration,
        registry: Registry,
    ) -> Result<Scheduler, ConfigError> {
        let mut reg = Registry::in_tree();
        reg.merge(registry)?;
        set_defaults(&mut config);
        validate(&config)?;
        let mut profiles = Vec::new();
        let mut by_name = BTreeMap::new();
        for (i, p) in config.profiles.iter().enumerate() {
            let fwk = Framework::new(i, p, &reg)?;
            by_name.insert(fwk.scheduler_name().to_string(), i);
            profiles.push(fwk);
        }
        Ok(Scheduler {
            profiles,
            by_name,
            percentage_of_nodes_to_score: config.percentage_of_nodes_to_score.unwrap_or(0),
            cache: Cache::default(),
            queue: SchedulingQueue::default(),
            waiting: WaitingPods::default(),
            nominator: Nominator::default(),
            next_start_node_index: 0,
            last_signature: None,
            generation: 0,
        })
    }

    /// The profiles, in configuration order.
    pub fn profiles(&self) -> &[Framework] {
        &self.profiles
    }

    /// The profile scheduling pods with this `spec.schedulerName`.
    pub fn profile(&self, scheduler_name: &str) -> Option<&Framework> {
        self.by_name.get(scheduler_name).map(|i| &self.profiles[*i])
    }

    /// The scheduler's view of the cluster as of the end of the last tick: nodes with their
    /// bound, assumed and waiting pods.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// Pods held at Permit (e.g. gang members waiting for their siblings).
    pub fn waiting_pods(&self) -> Vec<WaitingPodInfo> {
        self.waiting.infos()
    }

    /// The queue's memory of pending pods (attempts, backoff).
    pub fn queue(&self) -> &SchedulingQueue {
        &self.queue
    }

    /// One tick: list, snapshot, resolve waiting pods, attempt every eligible pending pod once,
    /// bind or report, then refresh PodGroup statuses.
    pub fn schedule(&mut self, api: &mut dyn ApiClient) {
        let now = api.now();
        let revision = api.revision();
        let nodes: Vec<Node> = api.list_typed(None, None);
        let pods: Vec<Arc<Pod>> = api
            .list_typed::<Pod>(None, None)
            .into_iter()
            .map(Arc::new)
            .collect();
        let pod_groups: Vec<PodGroup> = api.list_typed(None, None);

        let sig = signature(&nodes, &pods, &pod_groups);
        if self.last_signature != Some(sig) {
            self.generation += 1;
            self.last_signature = Some(sig);
        }
        self.cache.rebuild(nodes, pods.clone());
        self.reassume_waiting(&pods);
        self.waiting.expire(now);

        let pending: Vec<Arc<Pod>> = pods
            .iter()
            .filter(|p| {
                p.node_name().is_none()
                    && !p.is_terminating()
                    && !p.is_terminal()
                    && self.by_name.contains_key(p.scheduler_name())
                    && !self.waiting.contains(&pod_key(p))
            })
            .cloned()
            .collect();
        self.nominator.rebuild(pending.iter());
        // Waiting pods keep their queue entries (attempts, backoff) for when they are rejected.
        let keys: BTreeSet<String> = pending
            .iter()
            .map(|p| p.key())
            .chain(self.waiting.iter().map(|w| w.pod.key()))
            .collect();
        self.queue.retain(&keys);

        let Scheduler {
            profiles,
            by_name,
            percentage_of_nodes_to_score,
            cache,
            queue,
            waiting,
            nominator,
            next_start_node_index,
            generation,
            ..
        } = self;
        let mut ctx = Ctx {
            api,
            cache,
            queue,
            waiting,
            nominator,
            next_start_node_index,
            global_percentage: *percentage_of_nodes_to_score,
            now,
            generation: *generation,
        };
        process_waiting(&mut ctx, profiles);

        let mut queued: Vec<(usize, QueuedPodInfo)> = Vec::new();
        for p in &pending {
            let Some(&pi) = by_name.get(p.scheduler_name()) else {
                continue;
            };
            let q = ctx.queue.observe(p, now, revision);
            if !profiles[pi].run_pre_enqueue(p).is_success() {
                continue;
            }
            queued.push((pi, q));
        }
        let sorter = &profiles[0];
        queued.sort_by(|(_, a), (_, b)| {
            if sorter.less(a, b) {
                std::cmp::Ordering::Less
            } else if sorter.less(b, a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        for (pi, q) in queued {
            if !ctx.queue.should_attempt(&q.pod.key(), now, ctx.generation) {
                continue;
            }
            schedule_one(&mut ctx, profiles, pi, q.pod);
            process_waiting(&mut ctx, profiles);
        }
        update_pod_groups(&mut *ctx.api);
    }

    /// Puts waiting pods back on their nodes in the fresh snapshot; drops those bound or deleted
    /// elsewhere (a deleted one is rejected so its gang's reservations are rolled back).
    fn reassume_waiting(&mut self, pods: &[Arc<Pod>]) {
        let by_key: BTreeMap<String, &Arc<Pod>> = pods.iter().map(|p| (pod_key(p), p)).collect();
        for key in self.waiting.keys() {
            let Some(w) = self.waiting.get(&key) else {
                continue;
            };
            let (pod, node) = (Arc::clone(&w.pod), w.node.clone());
            match by_key.get(&key) {
                Some(current) if current.node_name().is_some() => {
                    // Bound by someone else: it is in the snapshot as a bound pod now.
                    self.waiting.remove(&key);
                }
                Some(current) if !current.is_terminating() => {
                    if !self.cache.assume(PodInfo::new(pod), &node) {
                        self.waiting
                            .reject(&key, "", &format!("node {node:?} not found"));
                    }
                }
                _ => {
                    // Deleted: reject (no event is written for a pod that is gone).
                    self.waiting.reject(&key, "", "pod deleted while waiting");
                }
            }
        }
    }
}

fn hash_node(h: &mut DefaultHasher, n: &Node) {
    n.metadata.name.hash(h);
    n.metadata.labels.hash(h);
    n.spec.unschedulable.hash(h);
    for t in &n.spec.taints {
        (&t.key, &t.value, &t.effect).hash(h);
    }
    n.status.allocatable.hash(h);
}

/// A fingerprint of what can make a pending pod schedulable: nodes (labels, taints, cordon,
/// allocatable), assigned non-terminal pods (identity, node, deletion), PodGroups and the gang
/// members that exist. Used only for change detection, never output.
fn signature(nodes: &[Node], pods: &[Arc<Pod>], groups: &[PodGroup]) -> u64 {
    let mut h = DefaultHasher::new();
    for n in nodes {
        hash_node(&mut h, n);
    }
    for p in pods {
        if let Some(node) = p.node_name() {
            if p.is_terminal() {
                continue;
            }
            (p.key(), &p.metadata.uid, node, p.is_terminating()).hash(&mut h);
        } else if let Some(pg) = p.pod_group() {
            (p.key(), pg).hash(&mut h);
        }
    }
    for g in groups {
        (
            g.metadata.namespace(),
            &g.metadata.name,
            g.spec.min_member,
            g.spec.schedule_timeout_seconds,
        )
            .hash(&mut h);
    }
    h.finish()
}
