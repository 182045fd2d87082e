//! The `PodGroupScheduled` condition of native `scheduling.k8s.io/v1alpha2` PodGroups, written by
//! the scheduler through `update_status` at the end of each scheduling tick while the
//! `GenericWorkload` / `GangScheduling` gates are on (KEP-5832 "PodGroup Status Lifecycle"; the
//! condition type and reasons of upstream `scheduling/v1alpha2/types.go`).
//!
//! - `True`, reason `Scheduled`, once `minCount` members (one for a `basic` group) are assigned to
//!   nodes; it stays `True` afterwards (KEP-4671: a terminal state, later disruptions do not revert
//!   it), with an empty message.
//! - `False`, reason `Unschedulable`, while fewer are assigned and some member's last attempt
//!   failed (its `PodScheduled=False, Unschedulable` condition); the message is that member's
//!   (the first such member by name), i.e. its FailedScheduling message.
//! - No condition before any attempt (e.g. behind the PreEnqueue barrier).
//!
//! `lastTransitionTime` is the tick the status last changed; `observedGeneration` the group's
//! generation. The condition is computed from the member pods as stored, so it is the same
//! whatever order the tick's attempts ran in. Upstream's messages for this condition are not
//! published; k8s-mini's are described above (docs/fidelity.md).

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{pod_conditions, Pod};
use k8s_types::meta::tick_timestamp;
use k8s_types::scheduling::v1alpha2::{
    Condition, PodGroup, POD_GROUP_SCHEDULED, REASON_SCHEDULED, REASON_UNSCHEDULABLE,
};

/// The condition `pg` should carry given its members (`None`: leave the status as it is).
pub(crate) fn compute(pg: &PodGroup, members: &[&Pod], now: u64) -> Option<Condition> {
    let min = pg.spec.gang_min_count().unwrap_or(1).max(1) as usize;
    let old = pg
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == POD_GROUP_SCHEDULED);
    let assigned = members.iter().filter(|p| p.node_name().is_some()).count();
    let (status, reason, message) = if assigned >= min || old.is_some_and(|c| c.status == "True") {
        ("True", REASON_SCHEDULED, String::new())
    } else {
        let failed = members.iter().find_map(|p| {
            p.condition(pod_conditions::POD_SCHEDULED)
                .filter(|c| c.status == "False" && c.reason.as_deref() == Some("Unschedulable"))
        })?;
        (
            "False",
            REASON_UNSCHEDULABLE,
            failed.message.as_deref().unwrap_or_default().to_string(),
        )
    };
    let since = match old {
        Some(c) if c.status == status => c.last_transition_time.clone(),
        _ => Some(tick_timestamp(now)),
    };
    Some(Condition {
        type_: POD_GROUP_SCHEDULED.to_string(),
        status: status.to_string(),
        observed_generation: pg.metadata.generation,
        last_transition_time: since,
        reason: reason.to_string(),
        message,
    })
}

/// Recomputes and writes the condition of every native PodGroup whose condition changed.
pub(crate) fn update_pod_group_conditions(api: &mut dyn ApiClient) {
    let groups: Vec<PodGroup> = api.list_typed(None, None);
    if groups.is_empty() {
        return;
    }
    let now = api.now();
    let pods: Vec<Pod> = api.list_typed(None, None);
    for pg in groups {
        let ns = pg.metadata.namespace();
        let members: Vec<&Pod> = pods
            .iter()
            .filter(|p| {
                p.metadata.namespace() == ns
                    && p.scheduling_group_name() == Some(pg.metadata.name.as_str())
            })
            .collect();
        let Some(cond) = compute(&pg, &members, now) else {
            continue;
        };
        let mut updated = pg.clone();
        updated
            .status
            .conditions
            .retain(|c| c.type_ != POD_GROUP_SCHEDULED);
        updated.status.conditions.push(cond);
        if updated.status != pg.status {
            if let Err(e) = api.update_status_typed(updated) {
                tracing::warn!(podgroup = %pg.metadata.name, error = %e, "updating PodGroup status failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::PodCondition;
    use k8s_types::scheduling::v1alpha2::GangSchedulingPolicy;

    fn gang(min: i32) -> PodGroup {
        let mut pg = PodGroup::default();
        pg.metadata.generation = Some(1);
        pg.spec.scheduling_policy.gang = Some(GangSchedulingPolicy { min_count: min });
        pg
    }

    fn unschedulable(msg: &str) -> Pod {
        let mut p = Pod::default();
        p.status.conditions.push(PodCondition {
            type_: pod_conditions::POD_SCHEDULED.into(),
            status: "False".into(),
            reason: Some("Unschedulable".into()),
            message: Some(msg.into()),
            last_transition_time: None,
        });
        p
    }

    /// minCount 2: nothing tried -> no condition; one member unschedulable -> False with its
    /// message at tick 5; both assigned at tick 9 -> True (transition at 9); one member gone
    /// afterwards -> still True, transition time kept.
    #[test]
    fn the_condition_follows_the_members() {
        let mut pg = gang(2);
        let idle = Pod::default();
        assert_eq!(compute(&pg, &[&idle, &idle], 0), None);

        let failed = unschedulable("0/1 nodes are available: 1 Insufficient cpu.");
        let c = compute(&pg, &[&idle, &failed], 5).expect("condition");
        assert_eq!(
            (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
            (
                "False",
                "Unschedulable",
                "0/1 nodes are available: 1 Insufficient cpu."
            )
        );
        assert_eq!(
            c.last_transition_time.as_deref(),
            Some("1970-01-01T00:00:05Z")
        );
        pg.status.conditions = vec![c];

        let mut bound = Pod::default();
        bound.spec.node_name = Some("n".into());
        let c = compute(&pg, &[&bound, &bound], 9).expect("condition");
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", "Scheduled")
        );
        assert_eq!(
            c.last_transition_time.as_deref(),
            Some("1970-01-01T00:00:09Z")
        );
        pg.status.conditions = vec![c.clone()];

        assert_eq!(compute(&pg, &[&bound, &failed], 20), Some(c));
    }
}
