//! Coscheduling (PreFilter, PostFilter, Reserve/Unreserve, Permit): gang scheduling with
//! `scheduling.x-k8s.io/v1alpha1` PodGroups; members join by the label
//! `scheduling.x-k8s.io/pod-group`. Mirrors kubernetes-sigs/scheduler-plugins
//! `pkg/coscheduling/coscheduling.go` and `pkg/coscheduling/core/core.go`.
//!
//! - PreFilter rejects (UnschedulableAndUnresolvable, so no preemption is tried) a member whose
//!   group failed recently when `podGroupBackoffSeconds` is set, has fewer than `minMember` pods in
//!   total, has too many gated pods to reach `minMember`, or whose `minResources` (plus `pods:
//!   minMember`) the nodes' free resources do not cover (upstream `CheckClusterResource`, see
//!   [`coscheduling_fit`]). Then, k8s-mini's own (see `docs/fidelity.md`): a member of a group
//!   with fewer than `minMember` members placed is rejected when the group could not reach its
//!   quorum even if every pod of lower priority were preempted ([`coscheduling_fit::assess`]),
//!   so DefaultPreemption evicts nothing for a gang that can never fit.
//! - Permit holds members (Wait) until `minMember` members are assumed or bound, then allows all
//!   waiting members; a member waits at most `scheduleTimeoutSeconds` of its PodGroup, else the
//!   plugin's `permitWaitingTimeSeconds` (default 60 ticks). A member told to Wait activates its
//!   siblings (upstream `ActivateSiblings` through `PodsToActivate`): those rejected earlier or
//!   backing off go back to activeQ instead of waiting for a Pod Add, a PodGroup change or the
//!   5-minute flush.
//! - PostFilter: when a member fits no node, every waiting member of its group is rejected (their
//!   reservations are rolled back), unless enough members are already assigned or the gap to the
//!   quorum is at most 10%.
//! - Unreserve: when a member is rolled back, its waiting siblings are rejected too.
//!
//! Together: a gang that cannot reach `minMember` leaves no pod bound and every node's allocation
//! as before. Not implemented: the Coscheduling QueueSort. Deviation: for pods without the
//! pod-group label PostFilter adds no reason (upstream adds `can not find pod group`), so
//! FailedScheduling messages of ordinary pods stay those of the default profile.

use k8s_types::object::Shared;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use k8s_sched_framework::node_info::same_pod;
use k8s_sched_framework::{
    CycleState, Handle, NodeToStatus, PermitDecision, PermitPlugin, Plugin, PostFilterPlugin,
    PostFilterResult, PreFilterPlugin, PreFilterResult, ReservePlugin, Status,
};
use k8s_types::apiserver::ApiExt;
use k8s_types::core::Pod;
use k8s_types::scheduling::PodGroup;
use k8s_types::Tick;

use super::{coscheduling_fit, names};
use crate::config::args::CoschedulingArgs;
use crate::pods_to_activate::PodsToActivate;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// Message of Permit when the pod names a PodGroup that does not exist.
pub const MSG_POD_GROUP_NOT_FOUND: &str = "PodGroup not found";
/// Message of PostFilter when the pod's PodGroup does not exist.
pub const MSG_CANNOT_FIND_POD_GROUP: &str = "can not find pod group";
/// Message given to waiting members rejected by PostFilter.
pub const MSG_OPTIMISTIC_REJECTION: &str = "optimistic rejection in PostFilter";
/// Message given to waiting members rejected by Unreserve.
pub const MSG_REJECTION_IN_UNRESERVE: &str = "rejection in Unreserve";

/// The Coscheduling plugin.
#[derive(Debug)]
pub struct Coscheduling {
    permit_waiting_time: Tick,
    pod_group_backoff: Tick,
    backed_off: Mutex<BTreeMap<String, Tick>>,
    /// Upstream `permittedPG`: groups whose `minResources` check passed, until the tick given.
    permitted: Mutex<BTreeMap<String, Tick>>,
    /// `<namespace>/<name>` of the pods whose last PreFilter the gang feasibility check rejected
    /// (only those are moved by the capacity events this plugin adds, see `queueing_hints`).
    infeasible: Mutex<BTreeSet<String>>,
}

impl Default for Coscheduling {
    fn default() -> Coscheduling {
        Coscheduling::new(&CoschedulingArgs::default())
    }
}

impl Coscheduling {
    /// Builds the plugin (args defaulted here).
    pub fn new(args: &CoschedulingArgs) -> Coscheduling {
        let a = args.clone().defaulted();
        Coscheduling {
            permit_waiting_time: a.permit_waiting_time_seconds.unwrap_or(60).max(0) as Tick,
            pod_group_backoff: a.pod_group_backoff_seconds.unwrap_or(0).max(0) as Tick,
            backed_off: Mutex::new(BTreeMap::new()),
            permitted: Mutex::new(BTreeMap::new()),
            infeasible: Mutex::new(BTreeSet::new()),
        }
    }

    /// Factory: decodes, defaults and validates `CoschedulingArgs`.
    ///
    /// # Errors
    /// Decode and validation errors.
    pub fn factory(a: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let args: CoschedulingArgs = a.decode()?;
        let args = args.defaulted();
        a.check(args.validate(&a.path))?;
        Ok(Arc::new(Coscheduling::new(&args)))
    }
}

/// The pod's PodGroup name (label value), if any.
fn pod_group_label(pod: &Pod) -> Option<&str> {
    pod.pod_group().filter(|n| !n.is_empty())
}

/// `<namespace>/<pod group>`.
fn full_name(pod: &Pod, pg: &str) -> String {
    format!("{}/{}", pod.metadata.namespace(), pg)
}

fn get_pod_group(handle: &dyn Handle, pod: &Pod, name: &str) -> Option<PodGroup> {
    handle
        .client()
        .get_typed::<PodGroup>(pod.metadata.namespace(), name)
        .ok()
}

/// Members of the group that are assigned to a node in the snapshot (bound, assumed or waiting),
/// not counting `pod` itself (upstream `CalculateAssignedPods`, whose snapshot predates the
/// current pod's assumption). Upstream scans every pod of every node; k8s-mini asks the
/// scheduler's PodGroup index for the members and the cache for where each one is.
fn assigned_pods(handle: &dyn Handle, pod: &Pod, pg: &str) -> usize {
    handle
        .pod_group_pods(pod.metadata.namespace(), pg)
        .iter()
        .filter(|p| !same_pod(p, pod) && handle.assigned_node(p).is_some())
        .count()
}

/// Every non-terminal pod of the group (upstream lists pods by label with an informer that
/// excludes Succeeded/Failed pods).
fn group_pod_count(handle: &dyn Handle, pod: &Pod, pg: &str) -> usize {
    handle
        .pod_group_pods(pod.metadata.namespace(), pg)
        .iter()
        .filter(|p| !p.is_terminal())
        .count()
}

/// Upstream `PodGroupManager.ActivateSiblings`: every other non-terminal pod of the group (the
/// pod itself excluded by UID) goes into the attempt's PodsToActivate, so the scheduler moves
/// those that are unschedulable or backing off to activeQ when this attempt's scheduling cycle
/// ends.
fn activate_siblings(handle: &dyn Handle, state: &mut CycleState, pod: &Pod, pg: &str) {
    let siblings: Vec<Shared<Pod>> = handle
        .pod_group_pods(pod.metadata.namespace(), pg)
        .into_iter()
        .filter(|p| !p.is_terminal() && !same_pod(p, pod))
        .collect();
    PodsToActivate::add(state, siblings);
}

fn reject_waiting_siblings(handle: &mut dyn Handle, pod: &Pod, pg: &str, msg: &str) {
    let ns = pod.metadata.namespace();
    let uids: Vec<String> = handle
        .waiting_pods()
        .into_iter()
        .filter(|w| w.pod.metadata.namespace() == ns && w.pod.pod_group() == Some(pg))
        .filter_map(|w| w.pod.metadata.uid.clone())
        .collect();
    for uid in uids {
        handle.reject_waiting_pod(&uid, names::COSCHEDULING, msg);
    }
}

impl Plugin for Coscheduling {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::COSCHEDULING
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        Some(self)
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        Some(self)
    }
    fn as_permit(&self) -> Option<&dyn PermitPlugin> {
        Some(self)
    }
}

impl Coscheduling {
    /// scheduler-plugins `PodGroupManager.PreFilter`'s `minResources` part: a group that passed
    /// recently (`permittedPG`, kept for the plugin's `permitWaitingTimeSeconds`) is not checked
    /// again; otherwise [`coscheduling_fit::check_cluster_resource`].
    fn check_min_resources(
        &self,
        handle: &dyn Handle,
        pg: &PodGroup,
        min_resources: &k8s_types::core::ResourceList,
        full: &str,
    ) -> Result<(), Status> {
        let now = handle.now();
        if let Ok(map) = self.permitted.lock() {
            if map.get(full).is_some_and(|until| now < *until) {
                return Ok(());
            }
        }
        coscheduling_fit::check_cluster_resource(
            handle.node_infos(),
            min_resources,
            pg.spec.min_member,
            pg.metadata.namespace(),
            &pg.metadata.name,
        )
        .map_err(Status::unresolvable)?;
        if let Ok(mut map) = self.permitted.lock() {
            map.insert(full.to_string(), now + self.permit_waiting_time);
        }
        Ok(())
    }
}

impl PreFilterPlugin for Coscheduling {
    fn pre_filter(
        &self,
        _state: &mut CycleState,
        pod: &Pod,
        handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
        let Some(pg_name) = pod_group_label(pod) else {
            return (None, Status::success());
        };
        let Some(pg) = get_pod_group(handle, pod, pg_name) else {
            return (None, Status::success());
        };
        let full = full_name(pod, pg_name);
        if let Ok(map) = self.backed_off.lock() {
            if map.get(&full).is_some_and(|until| handle.now() < *until) {
                return (
                    None,
                    Status::unresolvable(format!("podGroup {full} failed recently")),
                );
            }
        }
        let pods: Vec<Shared<Pod>> = handle
            .pod_group_pods(pod.metadata.namespace(), pg_name)
            .into_iter()
            .filter(|p| !p.is_terminal())
            .collect();
        let mut quorum_gap = i64::from(pg.spec.min_member) - pods.len() as i64;
        if quorum_gap > 0 {
            return (
                None,
                Status::unresolvable(format!(
                    "pre-filter pod {} cannot find enough sibling pods, current pods number: {}, minMember of group: {}",
                    pod.metadata.name, pods.len(), pg.spec.min_member
                )),
            );
        }
        // Upstream: each gated member counts against the surplus over minMember.
        for p in &pods {
            if !p.spec.scheduling_gates.is_empty() {
                quorum_gap += 1;
            }
            if quorum_gap > 0 {
                return (
                    None,
                    Status::unresolvable(format!(
                        "pre-filter pod {} cannot proceed due to gated pods in the same PodGroup",
                        pod.metadata.name
                    )),
                );
            }
        }
        if let Some(min_resources) = &pg.spec.min_resources {
            if let Err(s) = self.check_min_resources(handle, &pg, min_resources, &full) {
                return (None, s);
            }
        }
        // k8s-mini's own: no member of a gang that cannot reach its quorum even with every
        // evictable pod gone goes on (so PostFilter preempts nothing for it); see coscheduling_fit.
        if pod.spec.preemption_policy.as_deref() != Some("Never")
            && (assigned_pods(handle, pod, pg_name) as i64) < i64::from(pg.spec.min_member)
        {
            let verdict = coscheduling_fit::check_feasible(handle, pod, &pg);
            let key = format!("{}/{}", pod.metadata.namespace(), pod.metadata.name);
            if let Ok(mut set) = self.infeasible.lock() {
                if verdict.is_ok() {
                    set.remove(&key);
                } else {
                    set.insert(key);
                }
            }
            if let Err(fit) = verdict {
                return (None, Status::unresolvable(fit.to_string()));
            }
        }
        (None, Status::success())
    }
}

impl PostFilterPlugin for Coscheduling {
    fn post_filter(
        &self,
        _state: &mut CycleState,
        pod: &Pod,
        _statuses: &NodeToStatus,
        handle: &mut dyn Handle,
    ) -> (Option<PostFilterResult>, Status) {
        let Some(pg_name) = pod_group_label(pod) else {
            // Deviation (see module docs): no reason for pods outside any group.
            return (
                Some(PostFilterResult::default()),
                Status::new(
                    k8s_sched_framework::Code::Unschedulable,
                    Vec::<String>::new(),
                ),
            );
        };
        let Some(pg) = get_pod_group(&*handle, pod, pg_name) else {
            return (
                Some(PostFilterResult::default()),
                Status::unschedulable(MSG_CANNOT_FIND_POD_GROUP),
            );
        };
        let min = i64::from(pg.spec.min_member);
        let assigned = assigned_pods(&*handle, pod, pg_name) as i64;
        let quiet = Status::new(
            k8s_sched_framework::Code::Unschedulable,
            Vec::<String>::new(),
        );
        if assigned >= min {
            return (Some(PostFilterResult::default()), quiet);
        }
        // A gap to the quorum of at most 10%: later members may still make it.
        let not_assigned = (min - assigned) as f32 / min as f32;
        if not_assigned <= 0.1 {
            return (Some(PostFilterResult::default()), quiet);
        }
        reject_waiting_siblings(handle, pod, pg_name, MSG_OPTIMISTIC_REJECTION);
        let full = full_name(pod, pg_name);
        if self.pod_group_backoff > 0 && group_pod_count(&*handle, pod, pg_name) as i64 >= min {
            if let Ok(mut map) = self.backed_off.lock() {
                map.insert(full.clone(), handle.now() + self.pod_group_backoff);
            }
        }
        // Upstream DeletePermittedPodGroup: the next member checks minResources again.
        if let Ok(mut map) = self.permitted.lock() {
            map.remove(&full);
        }
        (
            Some(PostFilterResult::default()),
            Status::unschedulable(format!(
                "PodGroup {full} gets rejected due to Pod {} is unschedulable even after PostFilter",
                pod.metadata.name
            )),
        )
    }
}

impl ReservePlugin for Coscheduling {
    fn reserve(
        &self,
        _state: &mut CycleState,
        _pod: &Pod,
        _node_name: &str,
        _handle: &mut dyn Handle,
    ) -> Status {
        Status::success()
    }

    fn unreserve(
        &self,
        _state: &mut CycleState,
        pod: &Pod,
        _node_name: &str,
        handle: &mut dyn Handle,
    ) {
        let Some(pg_name) = pod_group_label(pod) else {
            return;
        };
        if get_pod_group(&*handle, pod, pg_name).is_none() {
            return;
        }
        reject_waiting_siblings(handle, pod, pg_name, MSG_REJECTION_IN_UNRESERVE);
    }
}

impl PermitPlugin for Coscheduling {
    fn permit(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _node_name: &str,
        handle: &mut dyn Handle,
    ) -> PermitDecision {
        let Some(pg_name) = pod_group_label(pod) else {
            return PermitDecision::Allow;
        };
        let Some(pg) = get_pod_group(&*handle, pod, pg_name) else {
            return PermitDecision::Reject(Status::unschedulable(MSG_POD_GROUP_NOT_FOUND));
        };
        let assigned = assigned_pods(&*handle, pod, pg_name) as i64;
        if assigned + 1 >= i64::from(pg.spec.min_member) {
            let ns = pod.metadata.namespace().to_string();
            let uids: Vec<String> = handle
                .waiting_pods()
                .into_iter()
                .filter(|w| w.pod.metadata.namespace() == ns && w.pod.pod_group() == Some(pg_name))
                .filter_map(|w| w.pod.metadata.uid.clone())
                .collect();
            for uid in uids {
                handle.allow_waiting_pod(&uid, names::COSCHEDULING);
            }
            return PermitDecision::Allow;
        }
        let wait = match pg.spec.schedule_timeout_seconds {
            Some(s) if s > 0 => s as Tick,
            _ => self.permit_waiting_time,
        };
        // Siblings rejected or backing off go back to activeQ so they reach Permit too.
        activate_siblings(&*handle, state, pod, pg_name);
        PermitDecision::Wait(wait)
    }
}

/// Queueing hints. scheduler-plugins `coscheduling/coscheduling.go` `EventsToRegister`: Pod Add
/// and PodGroup Add|Update, without hints. k8s-mini adds (its own, for the gang feasibility check,
/// whose verdict depends on the cluster's capacity): Node Add and allocatable, label and taint
/// updates, and Pod Delete, with a hint that queues only a pod whose last PreFilter the
/// feasibility check rejected, and for a Pod Delete only when the deleted pod was on a node and
/// is not a member of the pod's own group. Every other Coscheduling rejection is requeued
/// exactly as upstream.
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::as_pods;
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };

    impl EnqueueExtensions for Coscheduling {
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![
                ClusterEventWithHint::without_hint(EventResource::Pod, ActionType::ADD),
                ClusterEventWithHint::without_hint(
                    EventResource::PodGroup,
                    ActionType::ADD | ActionType::UPDATE,
                ),
                ClusterEventWithHint::with_hint(EventResource::Pod, ActionType::DELETE),
                ClusterEventWithHint::with_hint(
                    EventResource::Node,
                    ActionType::ADD
                        | ActionType::UPDATE_NODE_ALLOCATABLE
                        | ActionType::UPDATE_NODE_LABEL
                        | ActionType::UPDATE_NODE_TAINT,
                ),
            ]
        }

        fn queueing_hint(
            &self,
            registered: &ClusterEvent,
            pod: &Pod,
            old: Option<EventObject<'_>>,
            new: Option<EventObject<'_>>,
        ) -> Result<QueueingHint, String> {
            let key = format!("{}/{}", pod.metadata.namespace(), pod.metadata.name);
            let rejected_as_infeasible = self.infeasible.lock().is_ok_and(|set| set.contains(&key));
            if !rejected_as_infeasible {
                return Ok(QueueingHint::QueueSkip);
            }
            if registered.resource == EventResource::Node {
                return Ok(QueueingHint::Queue);
            }
            let (original, _) = as_pods(old, new)?;
            let Some(deleted) = original else {
                return Err("a pod delete needs the old pod".to_string());
            };
            let sibling = deleted.metadata.namespace() == pod.metadata.namespace()
                && deleted.pod_group().is_some()
                && deleted.pod_group() == pod.pod_group();
            if deleted.node_name().is_none() || sibling {
                return Ok(QueueingHint::QueueSkip);
            }
            Ok(QueueingHint::Queue)
        }
    }
}
