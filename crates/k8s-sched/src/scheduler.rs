//! [`Scheduler`]: kube-scheduler as one call per tick ([`Scheduler::schedule`]). Builds the
//! profiles from a `KubeSchedulerConfiguration`, then each tick brings the cache up to date from
//! watch events (a full list only the first time or after the watch history was compacted),
//! offers the resulting cluster events to the queue (queueing hints; a relist is a wildcard
//! event), resolves pods waiting at Permit, and attempts every eligible pending pod once in
//! QueueSort order (upstream `pkg/scheduler/scheduler.go`, `schedule_one.go`). Without an apiserver, the
//! detached calls of [`detached`] schedule one pod at a time against the same cache.

pub mod detached;

use k8s_types::object::Shared;
use std::collections::{BTreeMap, BTreeSet};

use k8s_sched_framework::events::EVENT_FORCE_ACTIVATE;
use k8s_sched_framework::node_info::same_pod;
use k8s_sched_framework::{PodInfo, QueuedPodInfo, WaitingPodInfo};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Pod;
use k8s_types::Tick;

use crate::cache::Cache;
use crate::config::validation::{set_defaults, validate};
use crate::config::KubeSchedulerConfiguration;
use crate::detached_client::DetachedClient;
use crate::explain::{Explainer, Explanation, PodKey};
use crate::informer::{Informer, Synced};
use crate::nominator::Nominator;
use crate::plugins::inter_pod_affinity::terms::namespace_labels;
use crate::podgroup_status::update_pod_groups;
use crate::queue::{Backoff, PendingPod, QueueLocation, SchedulingQueue};
use crate::queueing_hints::{has_cross_topology_term, EventScope, ObservedEvent};
use crate::runtime::Framework;
use crate::schedule_one::{process_waiting, schedule_one, Ctx};
use crate::waiting::{pod_key, WaitingPods};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::Registry;

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
    informer: Informer,
    detached: DetachedClient,
    explain: Option<Explainer>,
    /// The gates `GenericWorkload` and `GangScheduling` are on: native PodGroups get their
    /// `PodGroupScheduled` condition.
    gang_scheduling: bool,
    /// Gangs go through the PodGroup scheduling cycle ([`KubeSchedulerConfiguration::
    /// pod_group_cycle_enabled`]).
    pod_group_cycle: bool,
    /// The last PodGroup cycle of each gang, by `namespace/name` (for `--explain`).
    pod_group_cycles: BTreeMap<String, crate::explain::PodGroupCycle>,
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
        let mut reg = crate::plugins::in_tree_registry();
        reg.merge(registry)?;
        set_defaults(&mut config);
        validate(&config)?;
        let mut profiles = Vec::new();
        let mut by_name = BTreeMap::new();
        for (i, p) in config.profiles.iter().enumerate() {
            let fwk = Framework::new(i, p, &reg, config.gang_scheduling_enabled())?;
            by_name.insert(fwk.scheduler_name().to_string(), i);
            profiles.push(fwk);
        }
        Ok(Scheduler {
            profiles,
            by_name,
            percentage_of_nodes_to_score: config.percentage_of_nodes_to_score.unwrap_or(0),
            cache: Cache::default(),
            queue: SchedulingQueue::with_backoff(Backoff {
                initial: config
                    .pod_initial_backoff_seconds
                    .and_then(|s| k8s_types::Tick::try_from(s).ok())
                    .unwrap_or(crate::queue::POD_INITIAL_BACKOFF),
                max: config
                    .pod_max_backoff_seconds
                    .and_then(|s| k8s_types::Tick::try_from(s).ok())
                    .unwrap_or(crate::queue::POD_MAX_BACKOFF),
            }),
            waiting: WaitingPods::default(),
            nominator: Nominator::default(),
            next_start_node_index: 0,
            informer: Informer::default(),
            detached: DetachedClient::default(),
            explain: None,
            gang_scheduling: config.gang_scheduling_enabled(),
            pod_group_cycle: config.pod_group_cycle_enabled(),
            pod_group_cycles: BTreeMap::new(),
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

    /// True when a profile schedules pods with this `spec.schedulerName`.
    pub fn has_profile(&self, scheduler_name: &str) -> bool {
        self.by_name.contains_key(scheduler_name)
    }

    /// For the pending pod `namespace/name` whose last attempt failed, the ticks at which time
    /// alone lets the queue retry it: the end of its backoff, and its flush out of the
    /// unschedulable pods 5 minutes after the failure (upstream `podMaxInUnschedulablePodsDuration`,
    /// `flushUnschedulablePodsLeftover`). `None` when the queue does not hold the pod or it has not
    /// failed (it is attempted at the next tick). What a driver that skips idle ticks asks ("when
    /// can something retry?") without reading the queue's bookkeeping.
    pub fn retry_ticks(&self, pod_key: &str) -> Option<[k8s_types::Tick; 2]> {
        self.queue.retry_ticks(pod_key)
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

    /// Where the pod `key` (`namespace/name`) waits in the scheduling queue at tick `now`:
    /// activeQ, backoffQ or the unschedulable pods (upstream's three queues); `None` when it is
    /// not queued (bound, in flight, gated before PreEnqueue, or unknown).
    pub fn queue_location(&self, key: &str, now: Tick) -> Option<QueueLocation> {
        self.queue.location(key, now)
    }

    /// What the scheduling queue remembers of the pending pod `key` at tick `now` (attempts, the
    /// plugins that rejected it, its backoff); `None` when it is not queued.
    pub fn pending_pod(&self, key: &str, now: Tick) -> Option<PendingPod> {
        self.queue.pending_pod(key, now)
    }

    /// The pod backoff of this scheduler's configuration (`podInitialBackoffSeconds`,
    /// `podMaxBackoffSeconds`; upstream's defaults 1 s and 10 s).
    pub fn pod_backoff(&self) -> Backoff {
        self.queue.backoff()
    }

    /// Starts recording an [`Explanation`] of every scheduling attempt of `pod` (`None` stops;
    /// either way the earlier records are dropped). Other pods are not affected; while nothing is
    /// explained each attempt pays one `Option` check (see [`crate::explain`]).
    pub fn set_explain(&mut self, pod: Option<PodKey>) {
        self.explain = pod.map(Explainer::new);
    }

    /// The recorded attempts of the explained pod, oldest first (empty when nothing is explained).
    pub fn explanations(&self) -> &[Explanation] {
        self.explain
            .as_ref()
            .map_or(&[][..], Explainer::explanations)
    }

    /// The earliest tick, from `now` on, at which this scheduler may act when nothing in the cluster
    /// changes (for a driver that skips idle ticks; call after a pass that saw every write): `now`
    /// while a pod waits at Permit (its timeout) or a pending pod may be attempted now; else the
    /// earliest end of a pending pod's backoff or its 5-minute flush out of the unschedulable pods
    /// (upstream `flushUnschedulablePodsLeftover`, [`SchedulingQueue::retry_ticks`]); `None` with
    /// no pending pod.
    pub fn next_wakeup(&self, now: Tick) -> Option<Tick> {
        if !self.waiting.is_empty() {
            return Some(now);
        }
        let mut next: Option<Tick> = None;
        for p in self.cache.unassigned_pods() {
            if p.is_terminating() || !self.by_name.contains_key(p.scheduler_name()) {
                continue;
            }
            let key = p.key();
            if self.queue.should_attempt(&key, now) {
                return Some(now);
            }
            let Some(retry) = self.queue.retry_ticks(&key) else {
                return Some(now);
            };
            for w in retry.into_iter().filter(|&w| w > now) {
                next = Some(next.map_or(w, |n| n.min(w)));
            }
        }
        next
    }

    /// The store revision the scheduler's informers reflect (`None` before the first list): its
    /// next pass watches the history after it, so a cluster compacts no further than this (a
    /// watch answered `410 Gone` makes the scheduler relist and move every unschedulable pod).
    pub fn watch_position(&self) -> Option<i64> {
        self.informer.position()
    }

    /// One tick: list, snapshot, resolve waiting pods, attempt every eligible pending pod once,
    /// bind or report, then refresh PodGroup statuses.
    pub fn schedule(&mut self, api: &mut dyn ApiClient) {
        self.schedule_upto(api, None);
    }

    /// [`Scheduler::schedule`] with informers whose watches deliver the changes up to store
    /// revision `upto` only (the cluster's `spec.informerLag`): the cache and the queue see the
    /// store as it was some ticks ago. A pod bound since then is still in the cache as pending,
    /// and its binding answers `409 Conflict` (`pods/binding` has no resourceVersion
    /// precondition: the conflict is the apiserver's "already assigned" check, upstream
    /// `pkg/registry/core/pod/storage/storage.go` `assignPod`); the scheduler handles it as any
    /// failed binding (the assumed pod is forgotten and the pod requeued).
    pub fn schedule_upto(&mut self, api: &mut dyn ApiClient, upto: Option<i64>) {
        let now = api.now();
        let revision = api.revision();
        let mut events: Vec<ObservedEvent> = Vec::new();
        let synced = self
            .informer
            .sync(&*api, upto, &mut self.cache, &mut events);
        if synced == Synced::Relisted {
            // The per-object changes are unknown: move every unschedulable pod.
            events = vec![ObservedEvent {
                event: EVENT_FORCE_ACTIVATE,
                old: None,
                new: None,
                scope: EventScope::All,
            }];
        }
        self.check_waiting(synced == Synced::Relisted);
        self.waiting.expire(now);

        let pending: Vec<Shared<Pod>> = self
            .cache
            .unassigned_pods()
            .filter(|p| {
                !p.is_terminating()
                    && self.by_name.contains_key(p.scheduler_name())
                    && !self.waiting.contains(&pod_key(p))
                    // An assumed pod (bound by this scheduler, the bound object not yet
                    // delivered by a lagging informer) is not scheduled again: upstream
                    // `eventhandlers.go` skips updates of assumed pods
                    // (`Cache.IsAssumedPod`), and a bound pod has left the queue.
                    && !self.cache.is_assumed(&crate::cache::pod_key(p))
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
        self.offer_events(&*api, &events);

        let Scheduler {
            profiles,
            by_name,
            percentage_of_nodes_to_score,
            cache,
            queue,
            waiting,
            nominator,
            next_start_node_index,
            explain,
            gang_scheduling,
            pod_group_cycle,
            pod_group_cycles,
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
            explain: explain.as_mut(),
            detached: None,
        };
        process_waiting(&mut ctx, profiles);

        let mut queued: Vec<(usize, QueuedPodInfo)> = Vec::new();
        for p in &pending {
            let Some(&pi) = by_name.get(p.scheduler_name()) else {
                continue;
            };
            let q = ctx.queue.observe(p, now, revision);
            let admitted = {
                let fwk = &profiles[pi];
                let handle = ctx.handle(fwk);
                fwk.run_pre_enqueue(p, &handle).is_success()
            };
            if !admitted {
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
        let mut cycled: BTreeSet<String> = BTreeSet::new();
        for (pi, q) in &queued {
            if !ctx.queue.should_attempt(&q.pod.key(), now) {
                continue;
            }
            if *pod_group_cycle {
                if let Some((key, min_count)) = gang_of(&*ctx.api, &q.pod) {
                    if cycled.insert(key.clone()) {
                        let members = gang_members(&queued, *pi, &q.pod, now);
                        let before = scheduled_members(ctx.cache, &q.pod);
                        let record = crate::schedule_one::schedule_one_pod_group(
                            &mut ctx, profiles, *pi, members, min_count, before,
                        );
                        pod_group_cycles.insert(key, record);
                        process_waiting(&mut ctx, profiles);
                    }
                    continue;
                }
            }
            schedule_one(&mut ctx, profiles, *pi, Shared::clone(&q.pod));
            process_waiting(&mut ctx, profiles);
        }
        update_pod_groups(&mut *ctx.api);
        if *gang_scheduling {
            crate::podgroup_scheduled::update_pod_group_conditions(&mut *ctx.api);
        }
    }

    /// The last PodGroup scheduling cycle of the gang `namespace/name`, when the cycle is on and
    /// one ran.
    pub fn pod_group_cycle(
        &self,
        namespace: &str,
        name: &str,
    ) -> Option<&crate::explain::PodGroupCycle> {
        self.pod_group_cycles.get(&format!("{namespace}/{name}"))
    }

    /// Offers the tick's cluster events to the queue, in order (upstream
    /// `MoveAllToActiveOrBackoffQueue` per informer event): each moves the unschedulable pods whose
    /// rejector plugins registered it and whose hints say Queue. `AssignedPod` add/update events
    /// only reach pods with a cross-topology term (see [`EventScope::CrossTopology`]).
    fn offer_events(&mut self, api: &dyn ApiClient, events: &[ObservedEvent]) {
        let Scheduler {
            profiles,
            by_name,
            queue,
            ..
        } = self;
        for ev in events {
            let ns_labels = match (&ev.scope, ev.pod()) {
                (EventScope::CrossTopology, Some(p)) => {
                    namespace_labels(p.metadata.namespace(), Some(api))
                }
                _ => Default::default(),
            };
            let moved = queue.move_on_event(
                ev,
                |p| {
                    by_name
                        .get(p.scheduler_name())
                        .map(|i| profiles[*i].queueing_hints())
                },
                |p, e| {
                    ev.pod().is_some_and(|evp| {
                        has_cross_topology_term(p, &e.unschedulable_plugins, evp, &ns_labels)
                    })
                },
            );
            if moved > 0 {
                tracing::debug!(event = %ev.event, moved, "cluster event moved unschedulable pods");
            }
        }
    }

    /// Checks the pods held at Permit against the updated cache: drops those bound elsewhere (the
    /// cache has them as bound pods), rejects deleted or terminating ones and those whose node is
    /// gone (Unreserve rolls their gang back), and after a relist puts the others back on their
    /// nodes.
    fn check_waiting(&mut self, relisted: bool) {
        for key in self.waiting.keys() {
            let Some(w) = self.waiting.get(&key) else {
                continue;
            };
            let (pod, node) = (Shared::clone(&w.pod), w.node.clone());
            let current = self
                .cache
                .pod(&pod.key())
                .filter(|c| same_pod(c, &pod))
                .cloned();
            match current {
                Some(c) if c.node_name().is_some() => {
                    // Bound by someone else: it is in the cache as a bound pod now.
                    self.waiting.remove(&key);
                }
                Some(c) if !c.is_terminating() => {
                    let placed = !relisted
                        && self.cache.node_index(&node).is_some()
                        && self.cache.placement(&pod.key()) == Some(node.as_str());
                    if !placed && !self.cache.assume(PodInfo::new(pod), &node) {
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

/// The `namespace/name` key and `minCount` of the `gang` PodGroup `pod` belongs to (None for a
/// pod outside any native group, or in a `basic` one, or whose PodGroup is gone).
fn gang_of(api: &dyn ApiClient, pod: &Pod) -> Option<(String, i32)> {
    let name = pod.scheduling_group_name()?;
    let ns = pod.metadata.namespace();
    let pg = api
        .get_typed::<k8s_types::scheduling::v1alpha2::PodGroup>(ns, name)
        .ok()?;
    let min = pg.spec.gang_min_count()?;
    Some((format!("{ns}/{name}"), min))
}

/// The pending members of `pod`'s group admitted this tick with the same profile, in upstream's
/// `podGroupInfoForPod` order: higher priority first, then the earlier first attempt (never
/// attempted: now), then the queue's arrival sequence (k8s-mini's tie-break).
fn gang_members(
    queued: &[(usize, QueuedPodInfo)],
    profile: usize,
    pod: &Pod,
    now: Tick,
) -> Vec<Shared<Pod>> {
    let ns = pod.metadata.namespace();
    let group = pod.scheduling_group_name();
    let mut members: Vec<&QueuedPodInfo> = queued
        .iter()
        .filter(|(pi, q)| {
            *pi == profile
                && q.pod.metadata.namespace() == ns
                && q.pod.scheduling_group_name() == group
        })
        .map(|(_, q)| q)
        .collect();
    members.sort_by_key(|q| {
        (
            std::cmp::Reverse(q.pod.priority()),
            q.initial_attempt_timestamp.unwrap_or(now),
            q.sequence,
        )
    });
    members.into_iter().map(|q| Shared::clone(&q.pod)).collect()
}

/// Members of `pod`'s group bound or assumed (upstream `ScheduledPodsCount` before the cycle).
fn scheduled_members(cache: &Cache, pod: &Pod) -> usize {
    let Some(name) = pod.scheduling_group_name() else {
        return 0;
    };
    cache
        .scheduling_group_pods(pod.metadata.namespace(), name)
        .iter()
        .filter(|p| !p.is_terminal() && cache.placement(&pod_key(p)).is_some())
        .count()
}
