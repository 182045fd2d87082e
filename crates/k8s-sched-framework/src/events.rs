//! Queueing hints (KEP-4247): the cluster events a plugin declares can make a pod it rejected
//! schedulable, and the optional hint that looks at the changed object to decide. Mirrors
//! upstream `staging/src/k8s.io/kube-scheduler/framework/types.go` (`EventResource`,
//! `ActionType`, `ClusterEvent`, `ClusterEventWithHint`, `QueueingHint`, `Match`,
//! `UnrollWildCardResource`) and `interface.go` (`EnqueueExtensions`).
//!
//! The scheduling queue remembers, per unschedulable pod, the plugins that rejected it. When a
//! cluster event happens it moves the pod back to scheduling only if one of those plugins
//! registered a matching event and that registration's hint answers [`QueueingHint::Queue`]
//! (a registration without a hint always answers Queue). A plugin that does not implement
//! [`EnqueueExtensions`] is treated as interested in every event, without a hint.
//!
//! Hints are methods, not stored closures, so they stay object-safe: [`EnqueueExtensions::
//! events_to_register`] lists the registrations and [`EnqueueExtensions::queueing_hint`] is called
//! with the *registered* event that matched (a plugin dispatches on its resource).

use std::fmt;
use std::ops::{BitAnd, BitOr};

use super::interface::Plugin;
use k8s_types::core::{Node, Pod};
use k8s_types::scheduling::PodGroup;

/// The kind of object a cluster event is about (upstream `EventResource`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventResource {
    /// Any pod (matches [`EventResource::AssignedPod`] and [`EventResource::UnschedulablePod`]).
    /// Plugins register this one.
    Pod,
    /// A pod with `spec.nodeName` set (incoming events only; upstream `assignedPod`).
    AssignedPod,
    /// A pod without `spec.nodeName` (incoming events only; upstream `unschedulablePod`).
    UnschedulablePod,
    /// A Node.
    Node,
    /// A coscheduling PodGroup (scheduler-plugins registers it by its resource name
    /// `podgroups.v1alpha1.scheduling.x-k8s.io`).
    PodGroup,
    /// Every resource (upstream `WildCard`, `*`).
    WildCard,
}

impl EventResource {
    /// Upstream's name, used in event labels (`NodeAdd`, `AssignedPodDelete`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventResource::Pod => "Pod",
            EventResource::AssignedPod => "AssignedPod",
            EventResource::UnschedulablePod => "UnschedulablePod",
            EventResource::Node => "Node",
            EventResource::PodGroup => "podgroups.v1alpha1.scheduling.x-k8s.io",
            EventResource::WildCard => "*",
        }
    }

    /// Upstream `EventResource.match`: `self` (registered) matches `incoming`.
    pub fn matches(self, incoming: EventResource) -> bool {
        self == EventResource::WildCard
            || self == incoming
            || (self == EventResource::Pod
                && matches!(
                    incoming,
                    EventResource::AssignedPod | EventResource::UnschedulablePod
                ))
    }
}

/// What happened to the object, as a bit set (upstream `ActionType`; same bit order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ActionType(pub u32);

impl ActionType {
    /// No action (upstream `None`).
    pub const NONE: ActionType = ActionType(0);
    /// The object was created.
    pub const ADD: ActionType = ActionType(1);
    /// The object was deleted (for pods also: became terminal, or an assumed pod was forgotten).
    pub const DELETE: ActionType = ActionType(1 << 1);
    /// A node's `status.allocatable` changed.
    pub const UPDATE_NODE_ALLOCATABLE: ActionType = ActionType(1 << 2);
    /// A node's labels changed.
    pub const UPDATE_NODE_LABEL: ActionType = ActionType(1 << 3);
    /// A node's taints changed, or it was uncordoned (upstream reports `spec.unschedulable`
    /// becoming false as a taint update).
    pub const UPDATE_NODE_TAINT: ActionType = ActionType(1 << 4);
    /// A node's condition statuses changed.
    pub const UPDATE_NODE_CONDITION: ActionType = ActionType(1 << 5);
    /// A node's annotations changed.
    pub const UPDATE_NODE_ANNOTATION: ActionType = ActionType(1 << 6);
    /// A pod's labels changed.
    pub const UPDATE_POD_LABEL: ActionType = ActionType(1 << 7);
    /// A pod's resource requests went down.
    pub const UPDATE_POD_SCALE_DOWN: ActionType = ActionType(1 << 8);
    /// A pod got tolerations.
    pub const UPDATE_POD_TOLERATION: ActionType = ActionType(1 << 9);
    /// All of a pod's scheduling gates were removed.
    pub const UPDATE_POD_SCHEDULING_GATES_ELIMINATED: ActionType = ActionType(1 << 10);
    /// A pod's generated resource claims changed (DRA; never produced by k8s-mini).
    pub const UPDATE_POD_GENERATED_RESOURCE_CLAIM: ActionType = ActionType(1 << 11);
    /// Any other pod update (upstream `updatePodOther`).
    pub const UPDATE_POD_OTHER: ActionType = ActionType(1 << 12);
    /// Every action (upstream `All`).
    pub const ALL: ActionType = ActionType((1 << 13) - 1);
    /// Every update action (upstream `Update`).
    pub const UPDATE: ActionType = ActionType(((1 << 13) - 1) & !0b11);

    /// True when the two sets share an action.
    pub fn intersects(self, other: ActionType) -> bool {
        self.0 & other.0 != 0
    }

    /// Upstream `ActionType.String` for single actions, `Update` and `All`; other combinations
    /// print their single actions joined by `|`.
    pub fn name(self) -> String {
        let single = |a: ActionType| -> Option<&'static str> {
            Some(match a {
                ActionType::NONE => "None",
                ActionType::ADD => "Add",
                ActionType::DELETE => "Delete",
                ActionType::UPDATE_NODE_ALLOCATABLE => "UpdateNodeAllocatable",
                ActionType::UPDATE_NODE_LABEL => "UpdateNodeLabel",
                ActionType::UPDATE_NODE_TAINT => "UpdateNodeTaint",
                ActionType::UPDATE_NODE_CONDITION => "UpdateNodeCondition",
                ActionType::UPDATE_NODE_ANNOTATION => "UpdateNodeAnnotation",
                ActionType::UPDATE_POD_LABEL => "UpdatePodLabel",
                ActionType::UPDATE_POD_SCALE_DOWN => "UpdatePodScaleDown",
                ActionType::UPDATE_POD_TOLERATION => "UpdatePodToleration",
                ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED => {
                    "UpdatePodSchedulingGatesEliminated"
                }
                ActionType::UPDATE_POD_GENERATED_RESOURCE_CLAIM => {
                    "UpdatePodGeneratedResourceClaim"
                }
                ActionType::UPDATE_POD_OTHER => "UpdatePodOther",
                ActionType::UPDATE => "Update",
                ActionType::ALL => "All",
                _ => return None,
            })
        };
        if let Some(s) = single(self) {
            return s.to_string();
        }
        (0..13)
            .map(|b| ActionType(1 << b))
            .filter(|a| self.intersects(*a))
            .filter_map(single)
            .collect::<Vec<_>>()
            .join("|")
    }
}

impl BitOr for ActionType {
    type Output = ActionType;
    fn bitor(self, rhs: ActionType) -> ActionType {
        ActionType(self.0 | rhs.0)
    }
}

impl BitAnd for ActionType {
    type Output = ActionType;
    fn bitand(self, rhs: ActionType) -> ActionType {
        ActionType(self.0 & rhs.0)
    }
}

/// A change of the cluster (upstream `ClusterEvent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterEvent {
    /// The kind of object.
    pub resource: EventResource,
    /// What happened to it.
    pub action_type: ActionType,
    /// A label replacing `<resource><action>` (upstream sets one only for special events such as
    /// `UnschedulableTimeout`).
    pub custom_label: Option<&'static str>,
}

/// Label of the wildcard event that flushes pods unschedulable for too long (upstream
/// `UnschedulableTimeout`).
pub const UNSCHEDULABLE_TIMEOUT: &str = "UnschedulableTimeout";
/// Label of the wildcard event that moves every pod (upstream `ForceActivate`); k8s-mini uses it
/// after a relist, when the per-object changes are unknown.
pub const FORCE_ACTIVATE: &str = "ForceActivate";

impl ClusterEvent {
    /// An event without a custom label.
    pub const fn new(resource: EventResource, action_type: ActionType) -> ClusterEvent {
        ClusterEvent {
            resource,
            action_type,
            custom_label: None,
        }
    }

    /// A wildcard event (`*`/All) with a label (upstream `EventUnschedulableTimeout`,
    /// `EventForceActivate`).
    pub const fn wildcard(label: &'static str) -> ClusterEvent {
        ClusterEvent {
            resource: EventResource::WildCard,
            action_type: ActionType::ALL,
            custom_label: Some(label),
        }
    }

    /// True for `*`/All (upstream `IsWildCard`).
    pub fn is_wildcard(&self) -> bool {
        self.resource == EventResource::WildCard && self.action_type == ActionType::ALL
    }

    /// Upstream `ClusterEvent.Match`: this (registered) event matches `incoming`. A wildcard
    /// registration matches everything; an incoming wildcard matches only a wildcard
    /// registration (the queue moves every pod on it without asking hints).
    pub fn matches(&self, incoming: &ClusterEvent) -> bool {
        self.is_wildcard()
            || (self.resource.matches(incoming.resource)
                && self.action_type.intersects(incoming.action_type))
    }

    /// Upstream `Label`: the custom label, or resource and action, e.g. `NodeAdd`.
    pub fn label(&self) -> String {
        match self.custom_label {
            Some(l) => l.to_string(),
            None => format!("{}{}", self.resource.as_str(), self.action_type.name()),
        }
    }
}

impl fmt::Display for ClusterEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// Upstream `EventAssignedPodAdd`.
pub const EVENT_ASSIGNED_POD_ADD: ClusterEvent =
    ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD);
/// Upstream `EventAssignedPodDelete`.
pub const EVENT_ASSIGNED_POD_DELETE: ClusterEvent =
    ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE);
/// Upstream `EventUnscheduledPodAdd`.
pub const EVENT_UNSCHEDULED_POD_ADD: ClusterEvent =
    ClusterEvent::new(EventResource::UnschedulablePod, ActionType::ADD);
/// Upstream `EventUnscheduledPodDelete`.
pub const EVENT_UNSCHEDULED_POD_DELETE: ClusterEvent =
    ClusterEvent::new(EventResource::UnschedulablePod, ActionType::DELETE);
/// Upstream `EventUnschedulableTimeout`.
pub const EVENT_UNSCHEDULABLE_TIMEOUT: ClusterEvent = ClusterEvent::wildcard(UNSCHEDULABLE_TIMEOUT);
/// Upstream `EventForceActivate`.
pub const EVENT_FORCE_ACTIVATE: ClusterEvent = ClusterEvent::wildcard(FORCE_ACTIVATE);

/// What a hint says about an event (upstream `QueueingHint`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueingHint {
    /// The event cannot make the pod schedulable.
    QueueSkip,
    /// The event may make the pod schedulable: move it back (after its backoff).
    #[default]
    Queue,
}

impl QueueingHint {
    /// `Queue` when `queue` holds, else `QueueSkip`.
    pub fn queue_if(queue: bool) -> QueueingHint {
        if queue {
            QueueingHint::Queue
        } else {
            QueueingHint::QueueSkip
        }
    }
}

/// The object an event is about (the Go hints receive `interface{}` and cast it).
#[derive(Clone, Copy, Debug)]
pub enum EventObject<'a> {
    /// A Node.
    Node(&'a Node),
    /// A Pod.
    Pod(&'a Pod),
    /// A PodGroup.
    PodGroup(&'a PodGroup),
}

impl<'a> EventObject<'a> {
    /// The Node, if it is one.
    pub fn as_node(self) -> Option<&'a Node> {
        match self {
            EventObject::Node(n) => Some(n),
            _ => None,
        }
    }

    /// The Pod, if it is one.
    pub fn as_pod(self) -> Option<&'a Pod> {
        match self {
            EventObject::Pod(p) => Some(p),
            _ => None,
        }
    }

    /// The PodGroup, if it is one.
    pub fn as_pod_group(self) -> Option<&'a PodGroup> {
        match self {
            EventObject::PodGroup(g) => Some(g),
            _ => None,
        }
    }
}

/// Upstream `util.As[*v1.Node]`: the old and new objects as Nodes.
///
/// # Errors
/// An object that is not a Node (the caller then queues the pod, as upstream does on error).
pub fn as_nodes<'a>(
    old: Option<EventObject<'a>>,
    new: Option<EventObject<'a>>,
) -> Result<(Option<&'a Node>, Option<&'a Node>), String> {
    let cast = |o: Option<EventObject<'a>>, which: &str| match o {
        None => Ok(None),
        Some(o) => o
            .as_node()
            .map(Some)
            .ok_or_else(|| format!("unexpected {which} object type {o:?}, want a Node")),
    };
    Ok((cast(old, "old")?, cast(new, "new")?))
}

/// Upstream `util.As[*v1.Pod]`: the old and new objects as Pods.
///
/// # Errors
/// An object that is not a Pod.
pub fn as_pods<'a>(
    old: Option<EventObject<'a>>,
    new: Option<EventObject<'a>>,
) -> Result<(Option<&'a Pod>, Option<&'a Pod>), String> {
    let cast = |o: Option<EventObject<'a>>, which: &str| match o {
        None => Ok(None),
        Some(o) => o
            .as_pod()
            .map(Some)
            .ok_or_else(|| format!("unexpected {which} object type, want a Pod")),
    };
    Ok((cast(old, "old")?, cast(new, "new")?))
}

/// One registration of [`EnqueueExtensions::events_to_register`] (upstream
/// `ClusterEventWithHint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterEventWithHint {
    /// The event (resource and the action types of interest).
    pub event: ClusterEvent,
    /// True when the plugin's [`EnqueueExtensions::queueing_hint`] decides for this event; false
    /// means always Queue (upstream: a nil `QueueingHintFn`).
    pub has_hint: bool,
}

impl ClusterEventWithHint {
    /// A registration answered by the plugin's hint.
    pub const fn with_hint(resource: EventResource, action_type: ActionType) -> Self {
        ClusterEventWithHint {
            event: ClusterEvent::new(resource, action_type),
            has_hint: true,
        }
    }

    /// A registration without a hint (always Queue).
    pub const fn without_hint(resource: EventResource, action_type: ActionType) -> Self {
        ClusterEventWithHint {
            event: ClusterEvent::new(resource, action_type),
            has_hint: false,
        }
    }

    /// Every resource with every action, without hints: what a plugin that does not implement
    /// [`EnqueueExtensions`] is registered for (upstream `UnrollWildCardResource`, limited to the
    /// resources k8s-mini has).
    pub fn unroll_wildcard_resource() -> Vec<ClusterEventWithHint> {
        [
            EventResource::Pod,
            EventResource::Node,
            EventResource::PodGroup,
        ]
        .into_iter()
        .map(|r| ClusterEventWithHint::without_hint(r, ActionType::ALL))
        .collect()
    }
}

/// EnqueueExtensions: the events that can make a pod this plugin rejected schedulable (upstream
/// `EnqueueExtensions` + the `QueueingHintFn`s of its registrations). Optional: a plugin that
/// rejects pods (PreEnqueue, PreFilter, Filter, Reserve, Permit) should implement it, otherwise
/// every event moves the pods it rejected.
pub trait EnqueueExtensions: Plugin {
    /// The registrations, in the plugin's order. An empty list means no event can make the pod
    /// schedulable (e.g. only an update of the pod itself).
    fn events_to_register(&self) -> Vec<ClusterEventWithHint>;

    /// The hint for `registered` (one of [`EnqueueExtensions::events_to_register`] with
    /// `has_hint`), for `pod` (which this plugin rejected), when an event changed `old` into `new`
    /// (`old` is `None` for an add, `new` is `None` for a delete). Default: Queue.
    ///
    /// # Errors
    /// A message when the objects are not what the hint expects; the queue then moves the pod
    /// (upstream treats a hint error as Queue).
    fn queueing_hint(
        &self,
        _registered: &ClusterEvent,
        _pod: &Pod,
        _old: Option<EventObject<'_>>,
        _new: Option<EventObject<'_>>,
    ) -> Result<QueueingHint, String> {
        Ok(QueueingHint::Queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_follows_upstream() {
        let node_add = ClusterEvent::new(EventResource::Node, ActionType::ADD);
        let reg = ClusterEvent::new(
            EventResource::Node,
            ActionType::ADD | ActionType::UPDATE_NODE_ALLOCATABLE,
        );
        assert!(reg.matches(&node_add));
        assert!(!reg.matches(&ClusterEvent::new(
            EventResource::Node,
            ActionType::UPDATE_NODE_LABEL
        )));
        // Pod registrations match assigned and unscheduled pod events; not the other way round.
        let pod_delete = ClusterEvent::new(EventResource::Pod, ActionType::DELETE);
        assert!(pod_delete.matches(&EVENT_ASSIGNED_POD_DELETE));
        assert!(pod_delete.matches(&EVENT_UNSCHEDULED_POD_DELETE));
        assert!(
            !ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE).matches(&pod_delete)
        );
        // An incoming wildcard matches only a wildcard registration.
        assert!(!reg.matches(&EVENT_UNSCHEDULABLE_TIMEOUT));
        assert!(ClusterEvent::new(EventResource::WildCard, ActionType::ALL).matches(&node_add));
    }

    #[test]
    fn labels_follow_upstream() {
        assert_eq!(EVENT_ASSIGNED_POD_ADD.label(), "AssignedPodAdd");
        assert_eq!(
            ClusterEvent::new(EventResource::Node, ActionType::UPDATE_NODE_TAINT).label(),
            "NodeUpdateNodeTaint"
        );
        assert_eq!(EVENT_UNSCHEDULABLE_TIMEOUT.label(), "UnschedulableTimeout");
        assert_eq!(ActionType::UPDATE.name(), "Update");
        assert_eq!((ActionType::ADD | ActionType::DELETE).name(), "Add|Delete");
        assert!(!ActionType::UPDATE.intersects(ActionType::ADD | ActionType::DELETE));
    }
}
