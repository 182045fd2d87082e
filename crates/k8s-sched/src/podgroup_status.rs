//! PodGroup status (`phase`, `scheduled`, `running`, `succeeded`, `failed`), recomputed from the
//! member pods at the end of every scheduling tick and written through `update_status` when it
//! changes. Phase rules follow kubernetes-sigs/scheduler-plugins
//! `pkg/controllers/podgroup_controller.go`; upstream advances one phase per reconcile from
//! `Pending`, k8s-mini computes the current phase directly.

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{phases, Pod};
use k8s_types::scheduling::PodGroup;

/// Not enough members exist, or none is being scheduled yet.
pub const PHASE_PENDING: &str = "Pending";
/// At least `minMember` members exist.
pub const PHASE_SCHEDULING: &str = "Scheduling";
/// At least `minMember` members are bound.
pub const PHASE_SCHEDULED: &str = "Scheduled";
/// At least `minMember` members are running or succeeded.
pub const PHASE_RUNNING: &str = "Running";
/// At least `minMember` members succeeded.
pub const PHASE_FINISHED: &str = "Finished";
/// A member failed and `minMember` members have run.
pub const PHASE_FAILED: &str = "Failed";

/// The status fields of `pg` given its member pods.
pub fn compute(pg: &PodGroup, members: &[&Pod]) -> k8s_types::scheduling::PodGroupStatus {
    let min = pg.spec.min_member;
    let count = |phase: &str| members.iter().filter(|p| p.phase() == phase).count() as i32;
    let running = count(phases::RUNNING);
    let succeeded = count(phases::SUCCEEDED);
    let failed = count(phases::FAILED);
    let scheduled = members.iter().filter(|p| p.node_name().is_some()).count() as i32;
    let phase = if (members.len() as i32) < min {
        PHASE_PENDING
    } else {
        let mut phase = PHASE_SCHEDULING;
        if scheduled >= min {
            phase = PHASE_SCHEDULED;
        }
        if succeeded + running >= min {
            phase = PHASE_RUNNING;
        }
        if failed != 0 && failed + running + succeeded >= min {
            phase = PHASE_FAILED;
        }
        if succeeded >= min {
            phase = PHASE_FINISHED;
        }
        phase
    };
    k8s_types::scheduling::PodGroupStatus {
        phase: Some(phase.to_string()),
        scheduled,
        running,
        succeeded,
        failed,
    }
}

/// Recomputes and writes every PodGroup's status that changed.
pub(crate) fn update_pod_groups(api: &mut dyn ApiClient) {
    let groups: Vec<PodGroup> = api.list_typed(None, None);
    if groups.is_empty() {
        return;
    }
    let pods: Vec<Pod> = api.list_typed(None, None);
    for pg in groups {
        let ns = pg.metadata.namespace();
        let members: Vec<&Pod> = pods
            .iter()
            .filter(|p| {
                p.metadata.namespace() == ns && p.pod_group() == Some(pg.metadata.name.as_str())
            })
            .collect();
        let status = compute(&pg, &members);
        if status != pg.status {
            let mut updated = pg.clone();
            updated.status = status;
            if let Err(e) = api.update_status_typed(updated) {
                tracing::warn!(podgroup = %pg.metadata.name, error = %e, "updating PodGroup status failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_follow_member_counts() {
        let mut pg = PodGroup::default();
        pg.spec.min_member = 2;
        let mut a = Pod::default();
        let mut b = Pod::default();
        assert_eq!(compute(&pg, &[&a]).phase.as_deref(), Some(PHASE_PENDING));
        assert_eq!(
            compute(&pg, &[&a, &b]).phase.as_deref(),
            Some(PHASE_SCHEDULING)
        );
        a.spec.node_name = Some("n".into());
        b.spec.node_name = Some("n".into());
        let s = compute(&pg, &[&a, &b]);
        assert_eq!(
            (s.phase.as_deref(), s.scheduled),
            (Some(PHASE_SCHEDULED), 2)
        );
        a.status.phase = Some("Running".into());
        b.status.phase = Some("Succeeded".into());
        assert_eq!(
            compute(&pg, &[&a, &b]).phase.as_deref(),
            Some(PHASE_RUNNING)
        );
    }
}
