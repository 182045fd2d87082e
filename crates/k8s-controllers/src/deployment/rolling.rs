//! The RollingUpdate strategy, after upstream `pkg/controller/deployment/rolling.go`
//! (`rolloutRolling`, `reconcileNewReplicaSet`, `reconcileOldReplicaSets`,
//! `cleanupUnhealthyReplicas`, `scaleDownOldReplicaSetsForRollingUpdate`).
//!
//! Each pass either scales the new ReplicaSet up (bounded by `replicas + maxSurge` pods in the
//! `spec.replicas` of all ReplicaSets) or scales old ones down (bounded by `replicas -
//! maxUnavailable` available pods, counting only the new ReplicaSet's available pods), never both.

use k8s_types::apps::ReplicaSet;

use super::sync::sort_by_creation;
use super::util;
use super::DeploymentSync;
use crate::controller_utils::{filter_active_replica_sets, rs_replicas};
use crate::SyncError;

impl DeploymentSync<'_> {
    /// Upstream `rolloutRolling`.
    pub(super) fn rollout_rolling(&mut self) -> Result<(), SyncError> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(true)?;
        let Some(new) = new else {
            return Err(SyncError::Invalid(
                "new ReplicaSet was neither found nor created".into(),
            ));
        };
        let all: Vec<ReplicaSet> = old.iter().cloned().chain([new.clone()]).collect();

        if self.reconcile_new_replica_set(&all, &new)? {
            self.sync_rollout_status(&all, Some(&new))?;
            return Ok(());
        }
        let active_old = filter_active_replica_sets(&old);
        if self.reconcile_old_replica_sets(&all, active_old, &new)? {
            self.sync_rollout_status(&all, Some(&new))?;
            return Ok(());
        }
        if util::deployment_complete(&self.d, &self.d.status) {
            self.cleanup_deployment(&old)?;
        }
        self.sync_rollout_status(&all, Some(&new))?;
        Ok(())
    }

    /// Upstream `reconcileNewReplicaSet`: scales the new ReplicaSet down to `replicas` when above
    /// it, else up to [`util::new_rs_new_replicas`].
    fn reconcile_new_replica_set(
        &mut self,
        all: &[ReplicaSet],
        new: &ReplicaSet,
    ) -> Result<bool, SyncError> {
        let replicas = util::replicas(&self.d);
        if rs_replicas(new) == replicas {
            return Ok(false);
        }
        if rs_replicas(new) > replicas {
            let (scaled, _) = self.scale_replica_set_and_record_event(new, replicas)?;
            return Ok(scaled);
        }
        let count = util::new_rs_new_replicas(&self.d, util::replica_count(all), rs_replicas(new))
            .map_err(SyncError::Invalid)?;
        let (scaled, _) = self.scale_replica_set_and_record_event(new, count)?;
        Ok(scaled)
    }

    /// Upstream `reconcileOldReplicaSets`: with `maxScaledDown = allPods - minAvailable -
    /// newRSUnavailable > 0`, first scales down unhealthy old replicas, then old ones while more
    /// than `minAvailable` pods are available. Errors of the two steps are swallowed, as upstream.
    fn reconcile_old_replica_sets(
        &mut self,
        all: &[ReplicaSet],
        old: Vec<ReplicaSet>,
        new: &ReplicaSet,
    ) -> Result<bool, SyncError> {
        if util::replica_count(&old) == 0 {
            return Ok(false);
        }
        let all_pods = util::replica_count(all);
        let min_available = util::replicas(&self.d) - util::max_unavailable(&self.d);
        let new_unavailable = rs_replicas(new) - new.status.available_replicas;
        let max_scaled_down = all_pods - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return Ok(false);
        }
        let (old, cleanup_count) = match self.cleanup_unhealthy_replicas(old, max_scaled_down) {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(error = %e, "cleaning up unhealthy replicas");
                return Ok(false);
            }
        };
        let all: Vec<ReplicaSet> = old.iter().cloned().chain([new.clone()]).collect();
        let scaled_down = match self.scale_down_old_replica_sets_for_rolling_update(&all, old) {
            Ok(n) => n,
            Err(e) => {
                tracing::debug!(error = %e, "scaling down old replica sets");
                return Ok(false);
            }
        };
        Ok(cleanup_count + scaled_down > 0)
    }

    /// Upstream `cleanupUnhealthyReplicas`: oldest first, scales each old ReplicaSet down by its
    /// unavailable replicas, at most `max_cleanup` in total. Returns the ReplicaSets as updated.
    fn cleanup_unhealthy_replicas(
        &mut self,
        mut old: Vec<ReplicaSet>,
        max_cleanup: i32,
    ) -> Result<(Vec<ReplicaSet>, i32), SyncError> {
        sort_by_creation(&mut old);
        let mut total = 0;
        for rs in old.iter_mut() {
            if total >= max_cleanup {
                break;
            }
            let replicas = rs_replicas(rs);
            if replicas == 0 || replicas == rs.status.available_replicas {
                continue;
            }
            let count = (max_cleanup - total).min(replicas - rs.status.available_replicas);
            let new_count = replicas - count;
            if new_count > replicas {
                return Err(SyncError::Invalid(format!(
                    "when cleaning up unhealthy replicas, got invalid request to scale down {}/{} {} -> {}",
                    rs.metadata.namespace(),
                    rs.metadata.name,
                    replicas,
                    new_count
                )));
            }
            let (_, updated) = self.scale_replica_set_and_record_event(rs, new_count)?;
            total += count;
            *rs = updated;
        }
        Ok((old, total))
    }

    /// Upstream `scaleDownOldReplicaSetsForRollingUpdate`: oldest first, scales old ReplicaSets
    /// down by `available - minAvailable` in total (available counted over all ReplicaSets).
    fn scale_down_old_replica_sets_for_rolling_update(
        &mut self,
        all: &[ReplicaSet],
        mut old: Vec<ReplicaSet>,
    ) -> Result<i32, SyncError> {
        let min_available = util::replicas(&self.d) - util::max_unavailable(&self.d);
        let available = util::available_replica_count(all);
        if available <= min_available {
            return Ok(0);
        }
        sort_by_creation(&mut old);
        let to_scale_down = available - min_available;
        let mut total = 0;
        for rs in &old {
            if total >= to_scale_down {
                break;
            }
            let replicas = rs_replicas(rs);
            if replicas == 0 {
                continue;
            }
            let count = replicas.min(to_scale_down - total);
            let new_count = replicas - count;
            self.scale_replica_set_and_record_event(rs, new_count)?;
            total += count;
        }
        Ok(total)
    }
}
