//! The scheduling queue, simplified to one pass per tick ([`SchedulingQueue`]): every pending pod
//! is attempted at most once per tick, in QueueSort order. Mirrors upstream
//! `pkg/scheduler/backend/queue/scheduling_queue.go` (activeQ, backoffQ, unschedulablePods) with
//! queueing hints (KEP-4247, the `SchedulerQueueingHints` behaviour):
//!
//! - A failed pod remembers the plugins that rejected it (upstream `UnschedulablePlugins` and
//!   `PendingPlugins`). A pod without rejector plugins (an internal error) goes straight to the
//!   backoff queue: it is retried once its backoff has elapsed (upstream's 1 s doubling to 10 s,
//!   `podInitialBackoffDuration`, `podMaxBackoffDuration`, in ticks).
//! - Otherwise it is unschedulable until a cluster event moves it ([`SchedulingQueue::
//!   move_on_event`]): only events that one of its rejector plugins registered and whose hint
//!   says Queue (`queueing_hints::is_pod_worth_requeuing`). A moved pod is attempted once
//!   its backoff has elapsed (upstream: backoffQ if still backing off, else activeQ); Queue from a
//!   Pending plugin skips the backoff. Plugins without `EnqueueExtensions` are registered for
//!   every event, so pods they rejected move on any event, as before queueing hints.
//! - A pod unschedulable for 5 minutes is retried anyway (upstream
//!   `podMaxInUnschedulablePodsDuration`, the `UnschedulableTimeout` flush).
//! - In-flight pods (attempted and not yet failed or bound, i.e. held at Permit) do not move;
//!   events that happen meanwhile are recorded and replayed against the rejector plugins when
//!   the pod fails (upstream `inFlightEvents`, `determineSchedulingHintForInFlightPod`).
//!
//! - Plugins may activate pods (upstream `PodsToActivate` / `SchedulingQueue.Activate`,
//!   `SchedulingQueue::activate`): unschedulable or backing-off pods move to activeQ at once.
//!   A pod activated during a tick's pass is attempted in that pass if its turn in QueueSort
//!   order has not come yet, else in the next tick.
//!
//! Order (determinism): an event visits the unschedulable pods in `namespace/name` order; the
//! outcome does not depend on it because a move only marks the pod.

use k8s_types::object::Shared;
use std::collections::{BTreeMap, BTreeSet};

use k8s_sched_framework::QueuedPodInfo;
use k8s_types::core::Pod;
use k8s_types::meta::timestamp_tick;
use k8s_types::Tick;

use k8s_sched_framework::events::EVENT_FORCE_ACTIVATE;

use crate::queueing_hints::{
    is_pod_worth_requeuing, EventObj, EventScope, ObservedEvent, QueueingHintMap, QueueingStrategy,
};

/// Upstream `DefaultPodInitialBackoffDuration` (1 s), in ticks.
pub const POD_INITIAL_BACKOFF: Tick = 1;
/// Upstream `DefaultPodMaxBackoffDuration` (10 s), in ticks.
pub const POD_MAX_BACKOFF: Tick = 10;
/// Upstream `DefaultPodMaxInUnschedulablePodsDuration` (5 min), in ticks.
pub const POD_MAX_IN_UNSCHEDULABLE: Tick = 300;

/// Upstream `calculateBackoffDuration` with the default durations: 1, 2, 4, 8, 10, 10 ... ticks
/// for attempts 1, 2, 3, ...
#[cfg(test)]
pub fn backoff_duration(attempts: u32) -> Tick {
    Backoff::default().duration(attempts)
}

/// A pod's backoff after failed attempts (upstream `podInitialBackoffSeconds` and
/// `podMaxBackoffSeconds` of the KubeSchedulerConfiguration), in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Backoff after the first failed attempt.
    pub initial: Tick,
    /// The longest backoff.
    pub max: Tick,
}

impl Default for Backoff {
    /// Upstream's defaults: 1 s and 10 s.
    fn default() -> Backoff {
        Backoff {
            initial: POD_INITIAL_BACKOFF,
            max: POD_MAX_BACKOFF,
        }
    }
}

impl Backoff {
    /// Upstream `calculateBackoffDuration`: the initial backoff doubled once per attempt after
    /// the first, capped at the maximum; 0 before any attempt.
    pub fn duration(&self, attempts: u32) -> Tick {
        if attempts == 0 {
            return 0;
        }
        let mut d = self.initial;
        for _ in 1..attempts {
            if d > self.max.saturating_sub(d) {
                return self.max;
            }
            d += d;
        }
        d.min(self.max)
    }
}

/// What the queue remembers about a pending pod.
#[derive(Clone, Debug, Default)]
pub struct QueueEntry {
    uid: String,
    /// The pod as last observed.
    pod: Option<Shared<Pod>>,
    /// Queue timestamp (creation tick, refreshed on each failure).
    pub timestamp: Tick,
    /// The pod's resourceVersion when the scheduler first saw it (its creation revision for a pod not
    /// updated before then).
    pub sequence: i64,
    /// Attempts so far.
    pub attempts: u32,
    /// Tick of the first attempt.
    pub initial_attempt: Option<Tick>,
    /// Tick of the last failed attempt.
    pub last_failure: Option<Tick>,
    /// No retry before this tick.
    pub backoff_until: Tick,
    /// Plugins that rejected the pod in its last attempt (upstream `UnschedulablePlugins`).
    pub unschedulable_plugins: BTreeSet<String>,
    /// Plugins that returned Pending in its last attempt (upstream `PendingPlugins`).
    pub pending_plugins: BTreeSet<String>,
    /// Since the last failure: `Skip` while unschedulable, otherwise moved by an event (or, for
    /// a failure without rejector plugins, straight to the backoff queue).
    pub requeue: QueueingStrategy,
    /// The sequence number of the first cluster event recorded while the pod is in flight.
    in_flight_since: Option<u64>,
    /// The last FailedScheduling message recorded as an event.
    pub last_message: Option<String>,
}

/// Why an attempt failed, for the queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rejection {
    /// Plugins that returned Unschedulable or UnschedulableAndUnresolvable.
    pub unschedulable_plugins: BTreeSet<String>,
    /// Plugins that returned Pending.
    pub pending_plugins: BTreeSet<String>,
}

/// Which of upstream's sub-queues a pending pod is in ([`SchedulingQueue::location`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLocation {
    /// activeQ: attempted at its turn in this tick's pass.
    Active,
    /// backoffQ: moved by an event, still backing off.
    Backoff,
    /// unschedulablePods: waiting for an event its rejector plugins registered (or the
    /// 5-minute flush).
    Unschedulable,
    /// Popped and not yet failed or bound (e.g. held at Permit).
    InFlight,
}

/// What the scheduling queue remembers of a pending pod, as a user of the scheduler sees it
/// ([`crate::Scheduler::pending_pod`]): upstream `QueuedPodInfo`'s attempts and the plugins of
/// its last failed attempt, where it waits and until when it backs off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingPod {
    /// Scheduling attempts so far (upstream `Attempts`).
    pub attempts: u32,
    /// Plugins that rejected it in its last attempt (upstream `UnschedulablePlugins`).
    pub unschedulable_plugins: Vec<String>,
    /// Plugins that returned Pending in its last attempt (upstream `PendingPlugins`).
    pub pending_plugins: Vec<String>,
    /// No retry before this tick (the end of its backoff).
    pub backoff_until: Tick,
    /// The sub-queue it waits in.
    pub location: QueueLocation,
    /// The last FailedScheduling message.
    pub last_message: Option<String>,
}

/// Pending pods the scheduler knows, by `namespace/name`.
#[derive(Clone, Debug, Default)]
pub struct SchedulingQueue {
    entries: BTreeMap<String, QueueEntry>,
    /// Cluster events seen while some pod was in flight, with their sequence numbers (upstream
    /// `inFlightEvents`).
    in_flight_events: Vec<(u64, ObservedEvent)>,
    /// The `in_flight_since` of every entry in flight, counted (so the oldest is found without
    /// visiting every pending pod).
    in_flight: BTreeMap<u64, usize>,
    /// The sequence number of the next cluster event.
    next_event: u64,
    /// Backoff durations.
    backoff: Backoff,
}

impl SchedulingQueue {
    /// An empty queue with the given backoff durations.
    pub fn with_backoff(backoff: Backoff) -> SchedulingQueue {
        SchedulingQueue {
            backoff,
            ..SchedulingQueue::default()
        }
    }

    /// The backoff durations.
    pub fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// Registers a pending pod (or resets a recreated one) and returns its queue info.
    pub(crate) fn observe(&mut self, pod: &Shared<Pod>, now: Tick, revision: i64) -> QueuedPodInfo {
        let key = pod.key();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let fresh = || QueueEntry {
            uid: uid.clone(),
            timestamp: pod
                .metadata
                .creation_timestamp
                .as_deref()
                .and_then(timestamp_tick)
                .unwrap_or(now),
            // The pod's resourceVersion when first seen is its creation revision unless it was
            // updated before the scheduler saw it: pods created in one tick queue in creation order,
            // as upstream's informer adds them.
            sequence: match pod.metadata.resource_version_number() {
                0 => revision,
                rv => rv.min(revision),
            },
            ..Default::default()
        };
        let e = self.entries.entry(key).or_insert_with(&fresh);
        if e.uid != uid {
            set_in_flight(&mut self.in_flight, &mut e.in_flight_since, None);
            *e = fresh();
        }
        e.pod = Some(Shared::clone(pod));
        QueuedPodInfo {
            pod: Shared::clone(pod),
            timestamp: e.timestamp,
            attempts: e.attempts,
            initial_attempt_timestamp: e.initial_attempt,
            sequence: e.sequence,
        }
    }

    /// Forgets pods that are no longer pending.
    pub(crate) fn retain(&mut self, pending: &BTreeSet<String>) {
        let in_flight = &mut self.in_flight;
        self.entries.retain(|k, e| {
            let keep = pending.contains(k);
            if !keep {
                set_in_flight(in_flight, &mut e.in_flight_since, None);
            }
            keep
        });
        self.prune_in_flight_events();
    }

    /// Whether the pod may be attempted this tick (see the module docs).
    pub fn should_attempt(&self, key: &str, now: Tick) -> bool {
        let Some(e) = self.entries.get(key) else {
            return true;
        };
        let Some(failed_at) = e.last_failure else {
            return true;
        };
        if e.requeue == QueueingStrategy::Immediately {
            return true;
        }
        if now < e.backoff_until {
            return false;
        }
        e.requeue == QueueingStrategy::AfterBackoff
            || now.saturating_sub(failed_at) >= POD_MAX_IN_UNSCHEDULABLE
    }

    /// Counts an attempt; the pod is in flight until it fails or is removed.
    pub(crate) fn record_attempt(&mut self, key: &str, now: Tick) {
        let next = self.next_event;
        if let Some(e) = self.entries.get_mut(key) {
            e.attempts += 1;
            e.initial_attempt.get_or_insert(now);
            set_in_flight(&mut self.in_flight, &mut e.in_flight_since, Some(next));
        }
    }

    /// Records a failed attempt: backoff, refreshed queue timestamp, the rejector plugins, and
    /// where the pod goes (upstream `AddUnschedulableIfNotPresent`): straight to backoff without
    /// rejector plugins, else unschedulable unless an event recorded while it was in flight is
    /// worth requeuing it (checked with `hints`, the pod's profile's registrations).
    pub(crate) fn record_failure(
        &mut self,
        key: &str,
        now: Tick,
        rejection: Rejection,
        hints: &QueueingHintMap,
    ) {
        let Some(e) = self.entries.get_mut(key) else {
            return;
        };
        e.last_failure = Some(now);
        e.backoff_until = now + self.backoff.duration(e.attempts);
        e.timestamp = now;
        e.unschedulable_plugins = rejection.unschedulable_plugins;
        e.pending_plugins = rejection.pending_plugins;
        let since = e.in_flight_since;
        set_in_flight(&mut self.in_flight, &mut e.in_flight_since, None);
        e.requeue = if e.unschedulable_plugins.is_empty() && e.pending_plugins.is_empty() {
            QueueingStrategy::AfterBackoff
        } else {
            let mut strategy = QueueingStrategy::Skip;
            if let (Some(since), Some(pod)) = (since, e.pod.as_deref()) {
                for (_, ev) in self.in_flight_events.iter().filter(|(s, _)| *s >= since) {
                    if !applies_to(ev, key) {
                        continue;
                    }
                    let s = is_pod_worth_requeuing(
                        hints,
                        &e.unschedulable_plugins,
                        &e.pending_plugins,
                        &ev.event,
                        pod,
                        ev.old.as_ref().map(|o| o.as_event_object()),
                        ev.new.as_ref().map(|o| o.as_event_object()),
                    );
                    strategy = strategy.max(s);
                    if strategy == QueueingStrategy::Immediately {
                        break;
                    }
                }
            }
            strategy
        };
        self.prune_in_flight_events();
    }

    /// Offers a cluster event to the unschedulable pods (upstream
    /// `MoveAllToActiveOrBackoffQueue` / `movePodsToActiveOrBackoffQueue`), in `namespace/name`
    /// order: each pod in the event's scope whose rejector plugins find it worth requeuing is
    /// moved. `hints` gives a pod's profile's registrations (`None`: not scheduled by this
    /// scheduler); `cross_topology` decides pods for [`EventScope::CrossTopology`] events. Pods
    /// in flight do not move; the event is kept for them. Returns the number of pods moved.
    pub(crate) fn move_on_event<'h>(
        &mut self,
        ev: &ObservedEvent,
        hints: impl Fn(&Pod) -> Option<&'h QueueingHintMap>,
        cross_topology: impl Fn(&Pod, &QueueEntry) -> bool,
    ) -> usize {
        let mut moved = 0;
        let mut any_in_flight = false;
        for (key, e) in &mut self.entries {
            if e.in_flight_since.is_some() {
                any_in_flight = true;
                continue;
            }
            if e.last_failure.is_none() || e.requeue != QueueingStrategy::Skip {
                continue;
            }
            if !applies_to(ev, key) {
                continue;
            }
            let Some(pod) = e.pod.clone() else {
                continue;
            };
            if ev.scope == EventScope::CrossTopology && !cross_topology(&pod, e) {
                continue;
            }
            let Some(map) = hints(&pod) else {
                continue;
            };
            let s = is_pod_worth_requeuing(
                map,
                &e.unschedulable_plugins,
                &e.pending_plugins,
                &ev.event,
                &pod,
                ev.old.as_ref().map(|o| o.as_event_object()),
                ev.new.as_ref().map(|o| o.as_event_object()),
            );
            if s != QueueingStrategy::Skip {
                e.requeue = s;
                moved += 1;
            }
        }
        if any_in_flight {
            self.in_flight_events.push((self.next_event, ev.clone()));
        }
        self.next_event += 1;
        moved
    }

    /// Upstream `PriorityQueue.Activate` (the pods a plugin put in
    /// [`crate::pods_to_activate::PodsToActivate`]), in `namespace/name` order: a pod in the
    /// unschedulable pool or in backoff moves to activeQ now (its backoff is ignored, as
    /// upstream's `moveToActiveQ`); a pod in flight (attempted, e.g. held at Permit) gets a
    /// `ForceActivate` event meant for it alone, so it is requeued after its backoff if it fails
    /// (upstream `addEventsIfPodInFlight` with `EventForceActivate`); a pod already in activeQ or
    /// unknown to the queue is untouched. Returns the number of pods moved to activeQ.
    pub(crate) fn activate(&mut self, pods: &BTreeMap<String, Shared<Pod>>, now: Tick) -> usize {
        let mut moved = 0;
        for (key, pod) in pods {
            match self.location(key, now) {
                Some(QueueLocation::Unschedulable | QueueLocation::Backoff) => {
                    if let Some(e) = self.entries.get_mut(key) {
                        e.requeue = QueueingStrategy::Immediately;
                        moved += 1;
                    }
                }
                Some(QueueLocation::InFlight) => {
                    let ev = ObservedEvent {
                        event: EVENT_FORCE_ACTIVATE,
                        old: None,
                        new: Some(EventObj::Pod(Shared::clone(pod))),
                        scope: EventScope::Only(key.clone()),
                    };
                    self.in_flight_events.push((self.next_event, ev));
                    self.next_event += 1;
                }
                Some(QueueLocation::Active) | None => {}
            }
        }
        moved
    }

    /// Where upstream's queue would hold the pod at tick `now` (`None`: not in the queue). A pod
    /// whose PreEnqueue plugins fail is not tracked here (the scheduler runs them every tick).
    pub fn location(&self, key: &str, now: Tick) -> Option<QueueLocation> {
        let e = self.entries.get(key)?;
        if e.in_flight_since.is_some() {
            return Some(QueueLocation::InFlight);
        }
        let Some(failed_at) = e.last_failure else {
            return Some(QueueLocation::Active);
        };
        let flushed = now.saturating_sub(failed_at) >= POD_MAX_IN_UNSCHEDULABLE;
        Some(match e.requeue {
            QueueingStrategy::Immediately => QueueLocation::Active,
            QueueingStrategy::Skip if !flushed => QueueLocation::Unschedulable,
            _ if now < e.backoff_until => QueueLocation::Backoff,
            _ => QueueLocation::Active,
        })
    }

    /// Drops recorded events no in-flight pod needs any more.
    fn prune_in_flight_events(&mut self) {
        if self.in_flight_events.is_empty() {
            return;
        }
        match self.in_flight.keys().next().copied() {
            None => self.in_flight_events.clear(),
            Some(oldest) => self.in_flight_events.retain(|(s, _)| *s >= oldest),
        }
    }

    /// The last FailedScheduling message recorded for the pod.
    pub fn last_message(&self, key: &str) -> Option<&str> {
        self.entries
            .get(key)
            .and_then(|e| e.last_message.as_deref())
    }

    /// Remembers the last FailedScheduling message recorded.
    pub(crate) fn set_last_message(&mut self, key: &str, msg: String) {
        if let Some(e) = self.entries.get_mut(key) {
            e.last_message = Some(msg);
        }
    }

    /// Forgets a pod (bound).
    pub(crate) fn remove(&mut self, key: &str) {
        if let Some(mut e) = self.entries.remove(key) {
            set_in_flight(&mut self.in_flight, &mut e.in_flight_since, None);
        }
        self.prune_in_flight_events();
    }

    /// The entry of a pod.
    #[cfg(test)]
    pub fn entry(&self, key: &str) -> Option<&QueueEntry> {
        self.entries.get(key)
    }

    /// The public view of a pending pod at tick `now`.
    pub fn pending_pod(&self, key: &str, now: Tick) -> Option<PendingPod> {
        let e = self.entries.get(key)?;
        Some(PendingPod {
            attempts: e.attempts,
            unschedulable_plugins: e.unschedulable_plugins.iter().cloned().collect(),
            pending_plugins: e.pending_plugins.iter().cloned().collect(),
            backoff_until: e.backoff_until,
            location: self.location(key, now)?,
            last_message: e.last_message.clone(),
        })
    }

    /// For a pod whose last attempt failed, the ticks at which time alone lets it be retried: the
    /// end of its backoff, and its flush out of the unschedulable pods
    /// [`POD_MAX_IN_UNSCHEDULABLE`] ticks after the failure (upstream
    /// `flushUnschedulablePodsLeftover`). `None` for a pod the queue does not hold or that has not
    /// failed. What a driver that skips idle ticks asks, without reading the queue's bookkeeping.
    pub fn retry_ticks(&self, key: &str) -> Option<[Tick; 2]> {
        let e = self.entries.get(key)?;
        let failed = e.last_failure?;
        Some([
            e.backoff_until,
            failed.saturating_add(POD_MAX_IN_UNSCHEDULABLE),
        ])
    }
}

/// Sets an entry's `in_flight_since` to `new`, keeping the counted set of in-flight sequence
/// numbers in step.
fn set_in_flight(in_flight: &mut BTreeMap<u64, usize>, slot: &mut Option<u64>, new: Option<u64>) {
    if let Some(old) = slot.take() {
        if let Some(n) = in_flight.get_mut(&old) {
            *n -= 1;
            if *n == 0 {
                in_flight.remove(&old);
            }
        }
    }
    if let Some(s) = new {
        *in_flight.entry(s).or_insert(0) += 1;
    }
    *slot = new;
}

/// Whether `ev` may move the pod `key` (an update of an unscheduled pod concerns only itself).
fn applies_to(ev: &ObservedEvent, key: &str) -> bool {
    match &ev.scope {
        EventScope::Only(k) => k == key,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::args::NodeResourcesFitArgs;
    use crate::plugins::names;
    use crate::plugins::node_resources::fit::NodeResourcesFit;
    use crate::queueing_hints::{node_events, pod_events};
    use k8s_sched_framework::Plugin;
    use k8s_types::core::{Container, Node, ResourceRequirements};
    use k8s_types::Quantity;
    use std::sync::Arc;

    fn pod(name: &str, cpu: &str, node: Option<&str>) -> Shared<Pod> {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = Some("default".into());
        p.metadata.uid = Some(format!("uid-{name}"));
        p.spec.node_name = node.map(str::to_string);
        let mut c = Container {
            resources: ResourceRequirements::default(),
            ..Default::default()
        };
        c.resources
            .requests
            .insert("cpu".into(), Quantity::parse(cpu).unwrap());
        p.spec.containers.push(c);
        Shared::from_typed(p)
    }

    fn node(name: &str, labels: &[(&str, &str)]) -> Arc<Node> {
        let mut n = Node::default();
        n.metadata.name = name.into();
        for (k, v) in labels {
            n.metadata.labels.insert((*k).into(), (*v).into());
        }
        for (r, q) in [("cpu", "4"), ("memory", "8Gi"), ("pods", "110")] {
            n.status
                .allocatable
                .insert(r.into(), Quantity::parse(q).unwrap());
        }
        Arc::new(n)
    }

    fn fit_hints() -> QueueingHintMap {
        let mut m: BTreeMap<String, Arc<dyn k8s_sched_framework::Plugin>> = BTreeMap::new();
        let fit: Arc<dyn Plugin> =
            Arc::new(NodeResourcesFit::new(&NodeResourcesFitArgs::default()));
        m.insert(names::NODE_RESOURCES_FIT.into(), fit);
        QueueingHintMap::build(&m)
    }

    fn rejected_by(plugin: &str) -> Rejection {
        Rejection {
            unschedulable_plugins: [plugin.to_string()].into(),
            pending_plugins: BTreeSet::new(),
        }
    }

    #[test]
    fn backoff_doubles_to_ten() {
        let d: Vec<Tick> = (0..7).map(backoff_duration).collect();
        assert_eq!(d, vec![0, 1, 2, 4, 8, 10, 10]);
        // podInitialBackoffSeconds 2, podMaxBackoffSeconds 4; and 3 / 5 (capped, not 6).
        let b = Backoff { initial: 2, max: 4 };
        let d: Vec<Tick> = (0..5).map(|a| b.duration(a)).collect();
        assert_eq!(d, vec![0, 2, 4, 4, 4]);
        let b = Backoff { initial: 3, max: 5 };
        let d: Vec<Tick> = (0..4).map(|a| b.duration(a)).collect();
        assert_eq!(d, vec![0, 3, 5, 5]);
    }

    /// The configured backoff reaches a failed pod: with podInitialBackoffSeconds 2 and
    /// podMaxBackoffSeconds 4, a pod failing at ticks 0 and 2 waits until 2, then 6.
    #[test]
    fn the_configured_backoff_is_used() {
        let mut q = SchedulingQueue::with_backoff(Backoff { initial: 2, max: 4 });
        let p = pod("p", "100m", None);
        let hints = QueueingHintMap::default();
        q.observe(&p, 0, 1);
        q.record_attempt(&p.key(), 0);
        q.record_failure(&p.key(), 0, Rejection::default(), &hints);
        assert!(!q.should_attempt(&p.key(), 1));
        assert!(q.should_attempt(&p.key(), 2));
        q.record_attempt(&p.key(), 2);
        q.record_failure(&p.key(), 2, Rejection::default(), &hints);
        assert!(!q.should_attempt(&p.key(), 5));
        assert!(q.should_attempt(&p.key(), 6));
    }

    #[test]
    fn error_failures_retry_after_backoff_alone() {
        let mut q = SchedulingQueue::default();
        q.observe(&pod("a", "1", None), 10, 5);
        q.record_attempt("default/a", 10);
        q.record_attempt("default/a", 10);
        q.record_failure("default/a", 10, Rejection::default(), &fit_hints());
        // Attempt 2 -> 2 ticks backoff, then retried without any event.
        assert!(!q.should_attempt("default/a", 11));
        assert!(q.should_attempt("default/a", 12));
        assert_eq!(q.retry_ticks("default/a"), Some([12, 310]));
        assert_eq!(q.retry_ticks("default/unknown"), None);
        q.observe(&pod("b", "1", None), 10, 6);
        assert_eq!(q.retry_ticks("default/b"), None, "never failed");
    }

    /// A pod rejected with `Insufficient cpu` (NodeResourcesFit) ignores a node label change
    /// (NodeResourcesFit registers Node Add|UpdateNodeAllocatable only) and moves when a pod
    /// assigned to a node is deleted (upstream `isSchedulableAfterPodEvent`: Queue).
    #[test]
    fn insufficient_cpu_moves_on_pod_delete_not_on_label_change() {
        let hints = fit_hints();
        let mut q = SchedulingQueue::default();
        let web = pod("web", "2", None);
        q.observe(&web, 10, 5);
        q.record_attempt("default/web", 10);
        q.record_failure(
            "default/web",
            10,
            rejected_by(names::NODE_RESOURCES_FIT),
            &hints,
        );
        assert_eq!(
            q.entry("default/web").map(|e| e.requeue),
            Some(QueueingStrategy::Skip)
        );
        assert!(!q.should_attempt("default/web", 11));

        let (before, after) = (node("n1", &[]), node("n1", &[("disk", "ssd")]));
        for ev in node_events(Some(&before), Some(&after)) {
            assert_eq!(q.move_on_event(&ev, |_| Some(&hints), |_, _| true), 0);
        }
        assert!(!q.should_attempt("default/web", 12));

        // An unscheduled pod's deletion frees nothing either (upstream: QueueSkip).
        for ev in pod_events(Some(&pod("other", "3", None)), None) {
            assert_eq!(q.move_on_event(&ev, |_| Some(&hints), |_, _| true), 0);
        }
        let big = pod("big", "3", Some("n1"));
        let evs = pod_events(Some(&big), None);
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].event.label(), "AssignedPodDelete");
        assert_eq!(q.move_on_event(&evs[0], |_| Some(&hints), |_, _| true), 1);
        assert_eq!(
            q.entry("default/web").map(|e| e.requeue),
            Some(QueueingStrategy::AfterBackoff)
        );
        // Backoff (1 tick after attempt 1) has elapsed at tick 11.
        assert!(q.should_attempt("default/web", 11));
    }

    #[test]
    fn five_minutes_unschedulable_flushes() {
        let hints = fit_hints();
        let mut q = SchedulingQueue::default();
        q.observe(&pod("web", "2", None), 10, 5);
        q.record_attempt("default/web", 10);
        q.record_failure(
            "default/web",
            10,
            rejected_by(names::NODE_RESOURCES_FIT),
            &hints,
        );
        assert!(!q.should_attempt("default/web", 10 + POD_MAX_IN_UNSCHEDULABLE - 1));
        assert!(q.should_attempt("default/web", 10 + POD_MAX_IN_UNSCHEDULABLE));
    }

    /// Upstream `PriorityQueue.Activate` (`TestPriorityQueue_Activate` cases): a pod in the
    /// unschedulable pool or in backoff moves to activeQ (backoff ignored); a pod in activeQ or
    /// not in the queue is untouched; a pod in flight gets a ForceActivate event for itself, so
    /// when it fails it goes to backoff instead of the unschedulable pool.
    #[test]
    fn activate_moves_unschedulable_and_backoff_pods_only() {
        let hints = fit_hints();
        let mut q = SchedulingQueue::default();
        for name in ["active", "backoff", "unsched", "inflight", "bystander"] {
            q.observe(&pod(name, "1", None), 10, 5);
        }
        // backoff: 2 attempts, an error -> 2 ticks of backoff (until 12).
        q.record_attempt("default/backoff", 10);
        q.record_attempt("default/backoff", 10);
        q.record_failure("default/backoff", 10, Rejection::default(), &hints);
        // unsched / bystander: rejected by NodeResourcesFit, no event since.
        for k in ["default/unsched", "default/bystander"] {
            q.record_attempt(k, 10);
            q.record_failure(k, 10, rejected_by(names::NODE_RESOURCES_FIT), &hints);
        }
        q.record_attempt("default/inflight", 10);
        let now = 11;
        let loc = |q: &SchedulingQueue, n: &str| q.location(&format!("default/{n}"), now);
        assert_eq!(loc(&q, "active"), Some(QueueLocation::Active));
        assert_eq!(loc(&q, "backoff"), Some(QueueLocation::Backoff));
        assert_eq!(loc(&q, "unsched"), Some(QueueLocation::Unschedulable));
        assert_eq!(loc(&q, "inflight"), Some(QueueLocation::InFlight));
        assert_eq!(loc(&q, "unknown"), None);

        let to_activate: BTreeMap<String, Shared<Pod>> =
            ["active", "backoff", "unsched", "inflight", "unknown"]
                .iter()
                .map(|n| (format!("default/{n}"), pod(n, "1", None)))
                .collect();
        assert_eq!(q.activate(&to_activate, now), 2);
        assert_eq!(loc(&q, "active"), Some(QueueLocation::Active));
        assert_eq!(loc(&q, "backoff"), Some(QueueLocation::Active));
        assert_eq!(loc(&q, "unsched"), Some(QueueLocation::Active));
        assert_eq!(loc(&q, "bystander"), Some(QueueLocation::Unschedulable));
        assert_eq!(loc(&q, "unknown"), None);
        assert!(q.should_attempt("default/backoff", now));
        assert!(q.should_attempt("default/unsched", now));
        assert!(!q.should_attempt("default/bystander", now));

        // The in-flight pod fails with a rejector plugin that registered nothing relevant: the
        // ForceActivate event recorded for it requeues it after its backoff (1 tick after its
        // first attempt) instead of leaving it unschedulable.
        assert_eq!(loc(&q, "inflight"), Some(QueueLocation::InFlight));
        q.record_failure(
            "default/inflight",
            12,
            rejected_by(names::NODE_RESOURCES_FIT),
            &hints,
        );
        assert_eq!(
            q.entry("default/inflight").map(|e| e.requeue),
            Some(QueueingStrategy::AfterBackoff)
        );
        assert_eq!(
            q.location("default/inflight", 12),
            Some(QueueLocation::Backoff)
        );
        assert_eq!(
            q.location("default/inflight", 13),
            Some(QueueLocation::Active)
        );
        assert!(q.in_flight_events.is_empty());
    }

    /// Events seen while a pod is in flight (e.g. held at Permit) are replayed when it fails
    /// (upstream `determineSchedulingHintForInFlightPod`).
    #[test]
    fn in_flight_events_are_replayed_on_failure() {
        let hints = fit_hints();
        let mut q = SchedulingQueue::default();
        q.observe(&pod("web", "2", None), 10, 5);
        q.record_attempt("default/web", 10);
        let evs = pod_events(Some(&pod("big", "3", Some("n1"))), None);
        assert_eq!(q.move_on_event(&evs[0], |_| Some(&hints), |_, _| true), 0);
        q.record_failure(
            "default/web",
            12,
            rejected_by(names::NODE_RESOURCES_FIT),
            &hints,
        );
        assert_eq!(
            q.entry("default/web").map(|e| e.requeue),
            Some(QueueingStrategy::AfterBackoff)
        );
        assert!(q.in_flight_events.is_empty());
    }

    /// Events recorded while pods are in flight are kept exactly as long as the oldest in-flight
    /// pod needs them: after the older pod leaves, only the events from the younger one's attempt
    /// on remain; after both leave, none.
    #[test]
    fn in_flight_events_are_kept_for_the_oldest_pod_in_flight() {
        let hints = fit_hints();
        let mut q = SchedulingQueue::default();
        q.observe(&pod("a", "2", None), 10, 5);
        q.observe(&pod("b", "2", None), 10, 6);
        q.record_attempt("default/a", 10);
        let ev = |n: &str| pod_events(Some(&pod(n, "3", Some("n1"))), None).remove(0);
        q.move_on_event(&ev("x"), |_| Some(&hints), |_, _| true);
        q.record_attempt("default/b", 10);
        q.move_on_event(&ev("y"), |_| Some(&hints), |_, _| true);
        assert_eq!(q.in_flight_events.len(), 2);
        q.remove("default/a");
        assert_eq!(q.in_flight_events.len(), 1);
        assert_eq!(q.in_flight.len(), 1);
        q.retain(&BTreeSet::new());
        assert!(q.in_flight_events.is_empty());
        assert!(q.in_flight.is_empty());
    }
}
