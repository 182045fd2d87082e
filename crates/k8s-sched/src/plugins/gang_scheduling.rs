//! GangScheduling (PreEnqueue, Permit): kube-scheduler's native gang scheduling for pods that
//! name a `scheduling.k8s.io/v1alpha2` PodGroup in `spec.schedulingGroup.podGroupName` (upstream
//! `pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go`, v1.36; KEP-4671).
//!
//! - PreEnqueue: a member whose PodGroup does not exist is held back with
//!   `waiting for pods's pod group "<name>" to appear in scheduling queue` (upstream's wording,
//!   typo included); a member of a `gang` group with fewer than `minCount` pods known to the
//!   scheduler (any phase but terminal: upstream `PodGroupState.AllPodsCount`) with `waiting for
//!   minCount pods from a gang to appear in scheduling queue`. Both UnschedulableAndUnresolvable; a
//!   `basic` group passes. k8s-mini runs PreEnqueue for every pending pod every tick, so the
//!   barrier lifts the tick the PodGroup or the missing pods appear.
//! - Permit: a member of a `gang` group waits (`waiting for minCount pods from a gang to be
//!   scheduled`) until `minCount` members are assumed or bound, for at most upstream's fixed
//!   `permitTimeoutDuration`, 5 minutes ([`PERMIT_TIMEOUT`] ticks); the member that completes the
//!   quorum allows every waiting member of its group. A waiting member activates its unscheduled
//!   siblings (upstream `handle.Activate`). When the timeout passes, the framework rejects the
//!   member (`rejected due to timeout after waiting 5m0s at plugin GangScheduling`) and its
//!   reservation is rolled back, so a gang that cannot reach `minCount` leaves nothing bound.
//!
//! - PlacementFeasible (v1.36's PodGroup scheduling cycle, KEP-4671 "Scheduling Algorithm"):
//!   [`placement_feasible`], called by the cycle (`schedule_one/pod_group.rs`) after each member
//!   is evaluated: `Success` once `minCount` members are scheduled (bound, assumed, or placed in
//!   this cycle), `Wait` while the members not yet evaluated could still make it, `Unschedulable`
//!   when they cannot. k8s-mini calls it as a function of this plugin rather than through a
//!   framework extension point.
//!
//! With the PodGroup cycle off (k8s-mini's default, see docs/fidelity.md), members are attempted
//! one by one and the all-or-nothing guarantee comes from Permit, as in v1.35's alpha.

use k8s_types::object::Shared;
use std::sync::Arc;

use k8s_sched_framework::node_info::same_pod;
use k8s_sched_framework::{
    CycleState, Handle, PermitDecision, PermitPlugin, Plugin, PreEnqueuePlugin, Status,
};
use k8s_types::apiserver::ApiExt;
use k8s_types::core::Pod;
use k8s_types::scheduling::v1alpha2::PodGroup;
use k8s_types::Tick;

use super::names;
use crate::pods_to_activate::PodsToActivate;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// Upstream `permitTimeoutDuration` (5 minutes), in ticks.
pub const PERMIT_TIMEOUT: Tick = 300;
/// PreEnqueue's message while `minCount` members are not known yet.
pub const MSG_WAITING_FOR_MIN_COUNT: &str =
    "waiting for minCount pods from a gang to appear in scheduling queue";
/// Permit's message while fewer than `minCount` members are assumed or bound.
pub const MSG_WAITING_AT_PERMIT: &str = "waiting for minCount pods from a gang to be scheduled";

/// PlacementFeasible's verdict after a member of a gang with `min_count` was evaluated in the
/// PodGroup scheduling cycle: `scheduled` members are bound, assumed or placed in this cycle,
/// `remaining` members of the cycle are not evaluated yet. Upstream `GangScheduling.
/// PlacementFeasible` (`pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go`),
/// with its messages.
pub fn placement_feasible(min_count: i32, scheduled: usize, remaining: usize) -> Status {
    let min = usize::try_from(min_count).unwrap_or(0);
    if remaining + scheduled < min {
        return Status::unschedulable(format!(
            "minCount ({min}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
        ));
    }
    if scheduled < min {
        return Status::new(
            k8s_sched_framework::Code::Wait,
            [format!(
                "minCount ({min}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"
            )],
        );
    }
    Status::success()
}

/// PreEnqueue's message while the PodGroup does not exist.
pub fn msg_pod_group_missing(name: &str) -> String {
    format!("waiting for pods's pod group {name:?} to appear in scheduling queue")
}

/// The GangScheduling plugin.
#[derive(Debug, Default)]
pub struct GangScheduling;

impl GangScheduling {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(GangScheduling))
    }
}

fn pod_group(handle: &dyn Handle, pod: &Pod, name: &str) -> Option<PodGroup> {
    handle
        .client()
        .get_typed::<PodGroup>(pod.metadata.namespace(), name)
        .ok()
}

/// The group's non-terminal members known to the scheduler (upstream `PodGroupState`'s pods).
fn members(handle: &dyn Handle, pod: &Pod, name: &str) -> Vec<Shared<Pod>> {
    handle
        .scheduling_group_pods(pod.metadata.namespace(), name)
        .into_iter()
        .filter(|p| !p.is_terminal())
        .collect()
}

impl Plugin for GangScheduling {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::GANG_SCHEDULING
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        Some(self)
    }
    fn as_permit(&self) -> Option<&dyn PermitPlugin> {
        Some(self)
    }
}

impl PreEnqueuePlugin for GangScheduling {
    fn pre_enqueue(&self, _pod: &Pod) -> Status {
        // Needs the PodGroup lister: see `pre_enqueue_with`.
        Status::success()
    }

    fn pre_enqueue_with(&self, pod: &Pod, handle: &dyn Handle) -> Status {
        let Some(name) = pod.scheduling_group_name() else {
            return Status::success();
        };
        let Some(pg) = pod_group(handle, pod, name) else {
            return Status::unresolvable(msg_pod_group_missing(name));
        };
        let Some(min) = pg.spec.gang_min_count() else {
            return Status::success();
        };
        if (members(handle, pod, name).len() as i64) < i64::from(min) {
            return Status::unresolvable(MSG_WAITING_FOR_MIN_COUNT);
        }
        Status::success()
    }
}

impl PermitPlugin for GangScheduling {
    fn permit(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _node_name: &str,
        handle: &mut dyn Handle,
    ) -> PermitDecision {
        let Some(name) = pod.scheduling_group_name() else {
            return PermitDecision::Allow;
        };
        let Some(pg) = pod_group(&*handle, pod, name) else {
            return PermitDecision::Reject(Status::error(format!(
                "failed to get podGroup {}/{name}: podgroups.scheduling.k8s.io {name:?} not found",
                pod.metadata.namespace()
            )));
        };
        let Some(min) = pg.spec.gang_min_count() else {
            return PermitDecision::Allow;
        };
        let group = members(&*handle, pod, name);
        // Upstream `ScheduledPodsCount`: the members assumed or bound, this one included.
        let scheduled = 1 + group
            .iter()
            .filter(|p| !same_pod(p, pod) && handle.assigned_node(p).is_some())
            .count();
        if (scheduled as i64) < i64::from(min) {
            let unscheduled: Vec<Shared<Pod>> = group
                .iter()
                .filter(|p| !same_pod(p, pod) && handle.assigned_node(p).is_none())
                .cloned()
                .collect();
            PodsToActivate::add(state, unscheduled);
            return PermitDecision::Wait(PERMIT_TIMEOUT);
        }
        let ns = pod.metadata.namespace().to_string();
        let uids: Vec<String> = handle
            .waiting_pods()
            .into_iter()
            .filter(|w| {
                w.pod.metadata.namespace() == ns && w.pod.scheduling_group_name() == Some(name)
            })
            .filter_map(|w| w.pod.metadata.uid.clone())
            .collect();
        for uid in uids {
            handle.allow_waiting_pod(&uid, names::GANG_SCHEDULING);
        }
        PermitDecision::Allow
    }
}

/// Queueing hints (upstream `EventsToRegister`): a pod added to the same scheduling group may
/// complete the gang. Upstream also registers PodGroup Add and Update (a `minCount` decrease);
/// k8s-mini does not need them for the PreEnqueue barrier, which it re-runs every tick.
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::as_pods;
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };

    impl EnqueueExtensions for GangScheduling {
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![ClusterEventWithHint::with_hint(
                EventResource::Pod,
                ActionType::ADD,
            )]
        }

        fn queueing_hint(
            &self,
            _registered: &ClusterEvent,
            pod: &Pod,
            old: Option<EventObject<'_>>,
            new: Option<EventObject<'_>>,
        ) -> Result<QueueingHint, String> {
            let (_, added) = as_pods(old, new)?;
            let Some(added) = added else {
                return Err("a pod add needs the new pod".to_string());
            };
            let same = pod.scheduling_group_name().is_some()
                && added.metadata.namespace() == pod.metadata.namespace()
                && added.scheduling_group_name() == pod.scheduling_group_name();
            Ok(if same {
                QueueingHint::Queue
            } else {
                QueueingHint::QueueSkip
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::fixtures::{FakeHandle, NodeBuilder, PodBuilder};
    use k8s_types::core::PodSchedulingGroup;
    use k8s_types::object::Object;
    use k8s_types::scheduling::v1alpha2::{
        BasicSchedulingPolicy, GangSchedulingPolicy, PodGroupSchedulingPolicy,
    };

    fn member(name: &str, group: &str, node: Option<&str>) -> Pod {
        let mut b = PodBuilder::new(name).namespace("default");
        if let Some(n) = node {
            b = b.node(n);
        }
        let mut p = b.obj();
        p.metadata.uid = Some(format!("uid-{name}"));
        p.spec.scheduling_group = Some(PodSchedulingGroup {
            pod_group_name: Some(group.into()),
        });
        p
    }

    fn group(name: &str, gang: Option<i32>) -> Object {
        let mut pg = PodGroup::default();
        pg.metadata.name = name.into();
        pg.metadata.namespace = Some("default".into());
        pg.spec.scheduling_policy = match gang {
            Some(n) => PodGroupSchedulingPolicy {
                gang: Some(GangSchedulingPolicy { min_count: n }),
                basic: None,
            },
            None => PodGroupSchedulingPolicy {
                basic: Some(BasicSchedulingPolicy {}),
                gang: None,
            },
        };
        Object::SchedulingPodGroup(Box::new(pg))
    }

    fn handle(pods: &[Pod], objects: Vec<Object>) -> FakeHandle {
        let nodes = [NodeBuilder::new("node-1").obj()];
        let mut h = FakeHandle::new(&nodes, pods, objects);
        h.all_pods = pods.iter().cloned().map(Shared::from_typed).collect();
        h
    }

    /// Upstream `TestGangSchedulingFlow`'s PreEnqueue cases: no PodGroup, quorum not met
    /// (2 pods of minCount 3), quorum met, a basic group and a pod outside any group.
    #[test]
    fn pre_enqueue_is_a_barrier_until_the_pod_group_and_min_count_pods_exist() {
        let p1 = member("p1", "pg1", None);
        let p2 = member("p2", "pg1", None);
        let p3 = member("p3", "pg1", None);
        let h = handle(&[p1.clone(), p2.clone()], Vec::new());
        let s = GangScheduling.pre_enqueue_with(&p1, &h);
        assert_eq!(
            s.code(),
            k8s_sched_framework::Code::UnschedulableAndUnresolvable
        );
        assert_eq!(
            s.message(),
            "waiting for pods's pod group \"pg1\" to appear in scheduling queue"
        );

        let h = handle(&[p1.clone(), p2.clone()], vec![group("pg1", Some(3))]);
        let s = GangScheduling.pre_enqueue_with(&p1, &h);
        assert_eq!(
            s.code(),
            k8s_sched_framework::Code::UnschedulableAndUnresolvable
        );
        assert_eq!(s.message(), MSG_WAITING_FOR_MIN_COUNT);

        let h = handle(&[p1.clone(), p2, p3], vec![group("pg1", Some(3))]);
        assert!(GangScheduling.pre_enqueue_with(&p1, &h).is_success());

        let basic = member("b", "pg3", None);
        let h = handle(std::slice::from_ref(&basic), vec![group("pg3", None)]);
        assert!(GangScheduling.pre_enqueue_with(&basic, &h).is_success());
        let plain = PodBuilder::new("plain").namespace("default").obj();
        assert!(GangScheduling.pre_enqueue_with(&plain, &h).is_success());
    }

    /// minCount 3, three members evaluated in turn. The first placed: 1 scheduled, 2 remaining,
    /// 1 + 2 >= 3 -> Wait. The second failed: 1 scheduled, 1 remaining, 1 + 1 < 3 ->
    /// Unschedulable. Two placed and the last failed: 2 + 0 < 3 -> Unschedulable. Three placed ->
    /// Success.
    #[test]
    fn placement_feasible_counts_scheduled_and_remaining_members() {
        use k8s_sched_framework::Code;
        let s = placement_feasible(3, 1, 2);
        assert_eq!(s.code(), Code::Wait);
        assert_eq!(
            s.message(),
            "minCount (3) is not yet satisfied: 1 scheduled, 2 remaining"
        );
        assert_eq!(placement_feasible(3, 1, 1).code(), Code::Unschedulable);
        let s = placement_feasible(3, 2, 0);
        assert_eq!(s.code(), Code::Unschedulable);
        assert_eq!(
            s.message(),
            "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
        );
        assert!(placement_feasible(3, 3, 0).is_success());
        // Members bound in an earlier cycle count: 2 bound + 1 placed now.
        assert!(placement_feasible(3, 3, 2).is_success());
    }

    /// minCount 3: with one sibling placed, this pod makes 2 scheduled (itself counted, as
    /// upstream's ScheduledPodsCount counts the assumed pod): it waits 300 ticks (5 minutes).
    /// With two siblings placed it is the third: allowed.
    #[test]
    fn permit_waits_five_minutes_until_min_count_members_are_scheduled() {
        let pod = member("p1", "pg1", None);
        let placed = member("p2", "pg1", Some("node-1"));
        let pending = member("p3", "pg1", None);
        let mut h = handle(
            &[pod.clone(), placed.clone(), pending],
            vec![group("pg1", Some(3))],
        );
        let mut state = CycleState::default();
        assert_eq!(
            GangScheduling.permit(&mut state, &pod, "node-1", &mut h),
            PermitDecision::Wait(300)
        );
        let third = member("p3", "pg1", Some("node-1"));
        let mut h = handle(&[pod.clone(), placed, third], vec![group("pg1", Some(3))]);
        assert_eq!(
            GangScheduling.permit(&mut state, &pod, "node-1", &mut h),
            PermitDecision::Allow
        );
        // A basic group, and a gang whose PodGroup is gone (upstream returns an error status).
        let mut h = handle(std::slice::from_ref(&pod), vec![group("pg1", None)]);
        assert_eq!(
            GangScheduling.permit(&mut state, &pod, "node-1", &mut h),
            PermitDecision::Allow
        );
        let mut h = handle(std::slice::from_ref(&pod), Vec::new());
        match GangScheduling.permit(&mut state, &pod, "node-1", &mut h) {
            PermitDecision::Reject(s) => assert_eq!(
                s.message(),
                "failed to get podGroup default/pg1: podgroups.scheduling.k8s.io \"pg1\" not found"
            ),
            other => panic!("{other:?}"),
        }
    }
}
