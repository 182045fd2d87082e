//! The Recreate strategy, after upstream `pkg/controller/deployment/recreate.go`
//! (`rolloutRecreate`, `scaleDownOldReplicaSetsForRecreate`, `oldPodsRunning`,
//! `scaleUpNewReplicaSetForRecreate`): scale every old ReplicaSet to 0, wait until none of their
//! pods is left running (terminating pods count), then create/scale the new ReplicaSet to
//! `replicas`.

use std::collections::BTreeMap;

use k8s_types::apps::ReplicaSet;
use k8s_types::core::{phases, Pod};

use super::util;
use super::DeploymentSync;
use crate::controller_utils::{filter_active_replica_sets, rs_replicas};
use crate::SyncError;

impl DeploymentSync<'_> {
    /// Upstream `rolloutRecreate`.
    pub(super) fn rollout_recreate(&mut self) -> Result<(), SyncError> {
        // Do not create the new ReplicaSet yet: scale down before scaling up.
        let (mut new, mut old) = self.get_all_replica_sets_and_sync_revision(false)?;
        let mut all: Vec<ReplicaSet> = old.iter().chain(new.iter()).cloned().collect();

        let mut scaled_down = false;
        for rs in filter_active_replica_sets(&old) {
            if rs_replicas(&rs) == 0 {
                continue;
            }
            let (scaled, _) = self.scale_replica_set_and_record_event(&rs, 0)?;
            scaled_down |= scaled;
        }
        if scaled_down {
            self.sync_rollout_status(&all, new.as_ref())?;
            return Ok(());
        }

        let pod_map = self.pod_map();
        if old_pods_running(new.as_ref(), &old, &pod_map) {
            self.sync_rollout_status(&all, new.as_ref())?;
            return Ok(());
        }

        if new.is_none() {
            let (n, o) = self.get_all_replica_sets_and_sync_revision(true)?;
            new = n;
            old = o;
            all = old.iter().chain(new.iter()).cloned().collect();
        }
        if let Some(n) = &new {
            let target = util::replicas(&self.d);
            self.scale_replica_set_and_record_event(&self.fresh(n), target)?;
        }
        if util::deployment_complete(&self.d, &self.d.status) {
            self.cleanup_deployment(&old)?;
        }
        self.sync_rollout_status(&all, new.as_ref())?;
        Ok(())
    }
}

/// Upstream `oldPodsRunning`: old ReplicaSets still report pods, or a pod of an old ReplicaSet is
/// not Succeeded/Failed (Pending, Running, Unknown, or terminating).
fn old_pods_running(
    new: Option<&ReplicaSet>,
    old: &[ReplicaSet],
    pod_map: &BTreeMap<String, Vec<Pod>>,
) -> bool {
    if util::actual_replica_count(old) > 0 {
        return true;
    }
    let new_uid = new.and_then(|n| n.metadata.uid.as_deref());
    pod_map
        .iter()
        .filter(|(uid, _)| Some(uid.as_str()) != new_uid)
        .flat_map(|(_, pods)| pods)
        .any(|p| !matches!(p.phase(), phases::SUCCEEDED | phases::FAILED))
}
