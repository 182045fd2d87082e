//! Rollout status and the `Progressing` condition, after upstream
//! `pkg/controller/deployment/progress.go` (`syncRolloutStatus`, `requeueStuckDeployment`).
//! Progress deadlines are in ticks (`progressDeadlineSeconds`, one tick = one second).

use k8s_types::apps::ReplicaSet;
use k8s_types::controller::Action;
use k8s_types::core::condition_status;
use k8s_types::status::Status;
use k8s_types::Tick;

use super::sync::{calculate_status, quoted};
use super::util::{self, DEPLOYMENT_PROGRESSING, DEPLOYMENT_REPLICA_FAILURE};
use super::DeploymentSync;

impl DeploymentSync<'_> {
    /// Upstream `syncRolloutStatus`: the calculated status plus the `Progressing` condition —
    /// `NewReplicaSetAvailable` when complete, `ReplicaSetUpdated` (with a fresh
    /// `lastUpdateTime`) on any progress, `ProgressDeadlineExceeded` after the deadline — written
    /// when it differs from the stored status.
    pub(super) fn sync_rollout_status(
        &mut self,
        all: &[ReplicaSet],
        new: Option<&ReplicaSet>,
    ) -> Result<(), Status> {
        let all: Vec<ReplicaSet> = all.iter().map(|r| self.fresh(r)).collect();
        let new = new.map(|n| self.fresh(n));
        let d = &self.d;
        let mut new_status = calculate_status(&all, new.as_ref(), d, self.now);
        if !util::has_progress_deadline(d) {
            util::remove_condition(&mut new_status, DEPLOYMENT_PROGRESSING);
        }
        let current_conds = util::conditions(&d.status);
        let current = util::get_condition(&current_conds, DEPLOYMENT_PROGRESSING).cloned();
        let is_complete_deployment = new_status.replicas == new_status.updated_replicas
            && current
                .as_ref()
                .is_some_and(|c| c.reason.as_deref() == Some(util::NEW_RS_AVAILABLE_REASON));
        if util::has_progress_deadline(d) && !is_complete_deployment {
            let rs_or_deployment = |verb: &str| match &new {
                Some(rs) => format!("ReplicaSet {} {verb}", quoted(&rs.metadata.name)),
                None => format!("Deployment {} {verb}", quoted(&d.metadata.name)),
            };
            if util::deployment_complete(d, &new_status) {
                let cond = util::new_condition(
                    DEPLOYMENT_PROGRESSING,
                    condition_status::TRUE,
                    util::NEW_RS_AVAILABLE_REASON,
                    rs_or_deployment("has successfully progressed."),
                    self.now,
                );
                util::set_condition(&mut new_status, cond);
            } else if util::deployment_progressing(d, &new_status) {
                let mut cond = util::new_condition(
                    DEPLOYMENT_PROGRESSING,
                    condition_status::TRUE,
                    util::REPLICA_SET_UPDATED_REASON,
                    rs_or_deployment("is progressing."),
                    self.now,
                );
                if let Some(cur) = &current {
                    if cur.status == condition_status::TRUE {
                        cond.last_transition_time = cur.last_transition_time.clone();
                    }
                    util::remove_condition(&mut new_status, DEPLOYMENT_PROGRESSING);
                }
                util::set_condition(&mut new_status, cond);
            } else if util::deployment_timed_out(d, &new_status, self.now) {
                let cond = util::new_condition(
                    DEPLOYMENT_PROGRESSING,
                    condition_status::FALSE,
                    util::TIMED_OUT_REASON,
                    rs_or_deployment("has timed out progressing."),
                    self.now,
                );
                util::set_condition(&mut new_status, cond);
            }
        }
        // k8s-mini's ReplicaSets carry no ReplicaFailure condition to promote.
        util::remove_condition(&mut new_status, DEPLOYMENT_REPLICA_FAILURE);

        if new_status == self.d.status {
            return Ok(());
        }
        self.d.status = new_status;
        self.write_status()
    }

    /// Upstream `requeueStuckDeployment`: when a rollout with a deadline is neither complete nor
    /// timed out, when (in ticks) the deadline check is due.
    pub(super) fn requeue_stuck_deployment(&self) -> Action {
        let d = &self.d;
        let conds = util::conditions(&d.status);
        let Some(cur) = util::get_condition(&conds, DEPLOYMENT_PROGRESSING) else {
            return Action::AwaitChange;
        };
        if !util::has_progress_deadline(d)
            || util::deployment_complete(d, &d.status)
            || cur.reason.as_deref() == Some(util::TIMED_OUT_REASON)
        {
            return Action::AwaitChange;
        }
        let last = cur
            .last_update_time
            .as_deref()
            .and_then(k8s_types::meta::timestamp_tick)
            .unwrap_or(0);
        let due = last.saturating_add(util::progress_deadline_seconds(d).max(0) as Tick);
        Action::requeue(due.saturating_sub(self.now).saturating_add(1))
    }
}
