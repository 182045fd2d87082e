//! Queueing hints on the scheduler side (KEP-4247): which cluster events a profile's plugins
//! registered ([`QueueingHintMap`], upstream `QueueingHintMap` built by `buildQueueingHintMap`
//! in `pkg/scheduler/scheduler.go`), whether an event is worth requeuing a pod rejected by some
//! plugins ([`is_pod_worth_requeuing`], upstream `PriorityQueue.isPodWorthRequeuing` in
//! `pkg/scheduler/backend/queue/scheduling_queue.go`), and the cluster events the informers'
//! changes produce ([`node_events`], [`pod_events`], [`pod_group_events`], upstream
//! `pkg/scheduler/eventhandlers.go` and `pkg/scheduler/framework/events.go`
//! `NodeSchedulingPropertiesChange` / `PodSchedulingPropertiesChange`).
//!
//! Order (determinism): registrations are kept in plugin-name order, then each plugin's own
//! order; the result of [`is_pod_worth_requeuing`] does not depend on it (like upstream's map
//! iteration it only picks the strongest strategy). Events of one informer sync are produced in
//! object order: Nodes by name, then Pods by `namespace/name`, then PodGroups by
//! `namespace/name`; one object's events in upstream's extractor order.

use k8s_types::object::Shared;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_sched_framework::events::{
    EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE, EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_DELETE,
};
use k8s_sched_framework::{
    ActionType, ClusterEvent, ClusterEventWithHint, EventObject, EventResource, Plugin,
    QueueingHint,
};
use k8s_types::core::{Node, Pod};
use k8s_types::resources::pod_requests;
use k8s_types::scheduling::PodGroup;

use crate::plugins::inter_pod_affinity::terms::{required_terms, NamespaceLabels};
use crate::plugins::names;

/// One plugin's registration of one event.
#[derive(Clone)]
struct HintEntry {
    plugin: Arc<dyn Plugin>,
    registration: ClusterEventWithHint,
}

/// The events every plugin of a profile registered (upstream `QueueingHintMap` of one profile).
/// A plugin that does not implement `EnqueueExtensions` is registered for every event without a
/// hint (upstream `defaultEnqueueExtension`).
#[derive(Clone, Default)]
pub struct QueueingHintMap {
    entries: Vec<HintEntry>,
}

impl std::fmt::Debug for QueueingHintMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(
                self.entries
                    .iter()
                    .map(|e| (e.plugin.name().to_string(), e.registration)),
            )
            .finish()
    }
}

impl QueueingHintMap {
    /// Collects the registrations of `plugins` (the profile's instances by name).
    pub fn build(plugins: &BTreeMap<String, Arc<dyn Plugin>>) -> QueueingHintMap {
        let mut entries = Vec::new();
        for p in plugins.values() {
            let regs = match p.as_enqueue_extensions() {
                Some(ext) => ext.events_to_register(),
                None => ClusterEventWithHint::unroll_wildcard_resource(),
            };
            entries.extend(regs.into_iter().map(|registration| HintEntry {
                plugin: Arc::clone(p),
                registration,
            }));
        }
        QueueingHintMap { entries }
    }

    /// `(plugin, registration)` pairs, in plugin-name order.
    pub fn registrations(&self) -> impl Iterator<Item = (&str, &ClusterEventWithHint)> {
        self.entries
            .iter()
            .map(|e| (e.plugin.name(), &e.registration))
    }
}

/// Where an event sends an unschedulable pod (upstream `queueingStrategy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum QueueingStrategy {
    /// Stays unschedulable (upstream `queueSkip`).
    #[default]
    Skip,
    /// Back to scheduling once its backoff has elapsed (upstream `queueAfterBackoff`: backoffQ
    /// while backing off, else activeQ).
    AfterBackoff,
    /// Back to scheduling now, backoff ignored (upstream `queueImmediately`: a Pending plugin's
    /// hint said Queue).
    Immediately,
}

/// Upstream `isPodWorthRequeuing`: the strategy for a pod rejected by `unschedulable` and
/// `pending` plugins when `event` changed `old` into `new`. No rejector plugins or a wildcard
/// event: after backoff. Otherwise each registration of a rejector plugin that matches the
/// event is asked (a hint error counts as Queue); Queue from a Pending plugin is immediate, from
/// an unschedulable plugin after backoff; no Queue at all is Skip.
pub fn is_pod_worth_requeuing(
    map: &QueueingHintMap,
    unschedulable: &BTreeSet<String>,
    pending: &BTreeSet<String>,
    event: &ClusterEvent,
    pod: &Pod,
    old: Option<EventObject<'_>>,
    new: Option<EventObject<'_>>,
) -> QueueingStrategy {
    if unschedulable.is_empty() && pending.is_empty() {
        return QueueingStrategy::AfterBackoff;
    }
    if event.is_wildcard() {
        return QueueingStrategy::AfterBackoff;
    }
    let mut strategy = QueueingStrategy::Skip;
    for e in &map.entries {
        let name = e.plugin.name();
        let is_pending = pending.contains(name);
        if !is_pending && !unschedulable.contains(name) {
            continue;
        }
        if !e.registration.event.matches(event) {
            continue;
        }
        let hint = if e.registration.has_hint {
            match e.plugin.as_enqueue_extensions() {
                Some(ext) => ext
                    .queueing_hint(&e.registration.event, pod, old, new)
                    .unwrap_or_else(|err| {
                        tracing::debug!(plugin = name, error = %err, "QueueingHintFn returns error");
                        QueueingHint::Queue
                    }),
                None => QueueingHint::Queue,
            }
        } else {
            QueueingHint::Queue
        };
        if hint == QueueingHint::QueueSkip {
            continue;
        }
        if is_pending {
            return QueueingStrategy::Immediately;
        }
        if pending.is_empty() {
            return QueueingStrategy::AfterBackoff;
        }
        strategy = QueueingStrategy::AfterBackoff;
    }
    strategy
}

/// An owned object of an event.
#[derive(Clone, Debug)]
pub enum EventObj {
    /// A Node.
    Node(Arc<Node>),
    /// A Pod.
    Pod(Shared<Pod>),
    /// A PodGroup.
    PodGroup(Arc<PodGroup>),
}

impl EventObj {
    /// The borrowed form hints take.
    pub fn as_event_object(&self) -> EventObject<'_> {
        match self {
            EventObj::Node(n) => EventObject::Node(n),
            EventObj::Pod(p) => EventObject::Pod(p),
            EventObj::PodGroup(g) => EventObject::PodGroup(g),
        }
    }
}

/// Which unschedulable pods an event is offered to (upstream calls `MoveAllToActiveOrBackoffQueue`
/// for most events but pre-filters some).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventScope {
    /// Every unschedulable pod (upstream `MoveAllToActiveOrBackoffQueue`).
    All,
    /// Only pods a cross-topology plugin rejected: rejected by PodTopologySpread in the event
    /// pod's namespace, or with a required pod affinity term the event pod matches (upstream
    /// `AssignedPodAdded` / `AssignedPodUpdated` with `getUnschedulablePodsWithCrossTopologyTerm`).
    CrossTopology,
    /// Only the updated pod itself, `namespace/name` (upstream `PriorityQueue.Update` of an
    /// unschedulable pod).
    Only(String),
}

/// A cluster event with its objects, as the queue consumes it.
#[derive(Clone, Debug)]
pub struct ObservedEvent {
    /// The event.
    pub event: ClusterEvent,
    /// The object before (`None` for an add).
    pub old: Option<EventObj>,
    /// The object after (`None` for a delete).
    pub new: Option<EventObj>,
    /// Which pods it is offered to.
    pub scope: EventScope,
}

impl ObservedEvent {
    fn new(event: ClusterEvent, old: Option<EventObj>, new: Option<EventObj>) -> ObservedEvent {
        ObservedEvent {
            event,
            old,
            new,
            scope: EventScope::All,
        }
    }

    /// The pod of a pod event (the new one, else the old one).
    pub fn pod(&self) -> Option<&Pod> {
        match (&self.new, &self.old) {
            (Some(EventObj::Pod(p)), _) | (None, Some(EventObj::Pod(p))) => Some(p),
            _ => None,
        }
    }
}

/// Upstream `NodeSchedulingPropertiesChange`: the update events of a node, in upstream's order
/// (uncordon, allocatable, labels, taints, conditions, annotations).
pub fn node_scheduling_properties_change(new: &Node, old: &Node) -> Vec<ClusterEvent> {
    let mut out = Vec::new();
    let mut push = |changed: bool, a: ActionType| {
        if changed {
            out.push(ClusterEvent::new(EventResource::Node, a));
        }
    };
    // Upstream reports `spec.unschedulable` turning false as a taint update.
    push(
        new.spec.unschedulable != old.spec.unschedulable && !new.spec.unschedulable,
        ActionType::UPDATE_NODE_TAINT,
    );
    push(
        new.status.allocatable != old.status.allocatable,
        ActionType::UPDATE_NODE_ALLOCATABLE,
    );
    push(
        new.metadata.labels != old.metadata.labels,
        ActionType::UPDATE_NODE_LABEL,
    );
    push(
        new.spec.taints != old.spec.taints,
        ActionType::UPDATE_NODE_TAINT,
    );
    let strip = |n: &Node| -> BTreeMap<String, String> {
        n.status
            .conditions
            .iter()
            .map(|c| (c.type_.clone(), c.status.clone()))
            .collect()
    };
    push(strip(new) != strip(old), ActionType::UPDATE_NODE_CONDITION);
    push(
        new.metadata.annotations != old.metadata.annotations,
        ActionType::UPDATE_NODE_ANNOTATION,
    );
    out
}

/// Upstream `extractPodScaleDown`: some resource request of `old` is gone or smaller in `new`.
fn pod_scaled_down(new: &Pod, old: &Pod) -> bool {
    let (n, o) = (pod_requests(new), pod_requests(old));
    o.milli_cpu > n.milli_cpu
        || o.memory > n.memory
        || o.ephemeral_storage > n.ephemeral_storage
        || o.scalar
            .iter()
            .any(|(name, v)| n.scalar.get(name).is_none_or(|nv| v > nv))
}

/// Upstream `PodSchedulingPropertiesChange`: the update events of a pod (labels, scale down,
/// gates eliminated, tolerations), or one `updatePodOther` event; the resource is
/// `AssignedPod` or `UnschedulablePod` by the new pod's `spec.nodeName`.
pub fn pod_scheduling_properties_change(new: &Pod, old: &Pod) -> Vec<ClusterEvent> {
    let r = if new.node_name().is_some() {
        EventResource::AssignedPod
    } else {
        EventResource::UnschedulablePod
    };
    let mut out = Vec::new();
    if new.metadata.labels != old.metadata.labels {
        out.push(ClusterEvent::new(r, ActionType::UPDATE_POD_LABEL));
    }
    if pod_scaled_down(new, old) {
        out.push(ClusterEvent::new(r, ActionType::UPDATE_POD_SCALE_DOWN));
    }
    if new.spec.scheduling_gates.is_empty() && !old.spec.scheduling_gates.is_empty() {
        out.push(ClusterEvent::new(
            r,
            ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        ));
    }
    if new.spec.tolerations.len() != old.spec.tolerations.len() {
        out.push(ClusterEvent::new(r, ActionType::UPDATE_POD_TOLERATION));
    }
    if out.is_empty() {
        out.push(ClusterEvent::new(r, ActionType::UPDATE_POD_OTHER));
    }
    out
}

/// The events of a node changing from `old` to `new` between two syncs (upstream
/// `addNodeToCache`, `updateNodeInCache`, `deleteNodeFromCache`).
pub fn node_events(old: Option<&Arc<Node>>, new: Option<&Arc<Node>>) -> Vec<ObservedEvent> {
    let obj = |n: &Arc<Node>| Some(EventObj::Node(Arc::clone(n)));
    match (old, new) {
        (None, None) => Vec::new(),
        (None, Some(n)) => vec![ObservedEvent::new(
            ClusterEvent::new(EventResource::Node, ActionType::ADD),
            None,
            obj(n),
        )],
        (Some(o), None) => vec![ObservedEvent::new(
            ClusterEvent::new(EventResource::Node, ActionType::DELETE),
            obj(o),
            None,
        )],
        (Some(o), Some(n)) => node_scheduling_properties_change(n, o)
            .into_iter()
            .map(|e| ObservedEvent::new(e, obj(o), obj(n)))
            .collect(),
    }
}

/// The events of a pod changing from `old` to `new` between two syncs. Terminal pods count as
/// absent (upstream's pod informer lists only non-terminal pods). A new assigned pod is
/// `AssignedPodAdd` (offered to cross-topology pods only), a vanished one `AssignedPodDelete`
/// (every pod); unscheduled pods give `UnschedulablePodAdd`/`Delete`; an assigned pod's update
/// gives its `PodSchedulingPropertiesChange` events (every pod for a scale down, else
/// cross-topology pods only); an unscheduled pod's update is offered to that pod only.
pub fn pod_events(old: Option<&Shared<Pod>>, new: Option<&Shared<Pod>>) -> Vec<ObservedEvent> {
    let visible = |p: Option<&Shared<Pod>>| p.filter(|p| !p.is_terminal()).cloned();
    let (old, new) = (visible(old), visible(new));
    let obj = |p: &Shared<Pod>| Some(EventObj::Pod(Shared::clone(p)));
    let add = |n: &Shared<Pod>| {
        if n.node_name().is_some() {
            let mut e = ObservedEvent::new(EVENT_ASSIGNED_POD_ADD, None, obj(n));
            e.scope = EventScope::CrossTopology;
            e
        } else {
            ObservedEvent::new(EVENT_UNSCHEDULED_POD_ADD, None, obj(n))
        }
    };
    let delete = |o: &Shared<Pod>| {
        let ev = if o.node_name().is_some() {
            EVENT_ASSIGNED_POD_DELETE
        } else {
            EVENT_UNSCHEDULED_POD_DELETE
        };
        ObservedEvent::new(ev, obj(o), None)
    };
    match (old, new) {
        (None, None) => Vec::new(),
        (None, Some(n)) => vec![add(&n)],
        (Some(o), None) => vec![delete(&o)],
        (Some(o), Some(n)) => {
            if o.metadata.uid != n.metadata.uid
                || (o.node_name().is_some() && o.node_name() != n.node_name())
            {
                return vec![delete(&o), add(&n)];
            }
            if o.node_name().is_none() && n.node_name().is_some() {
                // Bound: the unscheduled informer drops it, the assigned one adds it.
                return vec![add(&n)];
            }
            if o.metadata.resource_version == n.metadata.resource_version && o == n {
                return Vec::new();
            }
            let key = n.key();
            pod_scheduling_properties_change(&n, &o)
                .into_iter()
                .map(|e| {
                    let mut ev = ObservedEvent::new(e, obj(&o), obj(&n));
                    ev.scope = if n.node_name().is_none() {
                        EventScope::Only(key.clone())
                    } else if e.action_type.intersects(ActionType::UPDATE_POD_SCALE_DOWN) {
                        EventScope::All
                    } else {
                        EventScope::CrossTopology
                    };
                    ev
                })
                .collect()
        }
    }
}

/// The events of a PodGroup changing (scheduler-plugins registers the GVK
/// `podgroups.v1alpha1.scheduling.x-k8s.io`): Add, Delete, and Update when its spec changed.
pub fn pod_group_events(
    old: Option<&Arc<PodGroup>>,
    new: Option<&Arc<PodGroup>>,
) -> Vec<ObservedEvent> {
    let obj = |g: &Arc<PodGroup>| Some(EventObj::PodGroup(Arc::clone(g)));
    let ev = |a| ClusterEvent::new(EventResource::PodGroup, a);
    match (old, new) {
        (None, None) => Vec::new(),
        (None, Some(n)) => vec![ObservedEvent::new(ev(ActionType::ADD), None, obj(n))],
        (Some(o), None) => vec![ObservedEvent::new(ev(ActionType::DELETE), obj(o), None)],
        (Some(o), Some(n)) if o.spec != n.spec => {
            vec![ObservedEvent::new(ev(ActionType::UPDATE), obj(o), obj(n))]
        }
        _ => Vec::new(),
    }
}

/// Upstream `getUnschedulablePodsWithCrossTopologyTerm` for one queued pod: it was rejected by
/// PodTopologySpread and is in `event_pod`'s namespace, or one of its required pod affinity
/// terms matches `event_pod` (whose namespace has labels `ns_labels`).
pub fn has_cross_topology_term(
    queued: &Pod,
    unschedulable: &BTreeSet<String>,
    event_pod: &Pod,
    ns_labels: &NamespaceLabels,
) -> bool {
    if unschedulable.contains(names::POD_TOPOLOGY_SPREAD)
        && queued.metadata.namespace() == event_pod.metadata.namespace()
    {
        return true;
    }
    required_terms(queued, false)
        .iter()
        .any(|t| t.matches(event_pod, ns_labels))
}
