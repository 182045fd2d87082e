//! Scaling, revisions, cleanup and status of a Deployment, after upstream
//! `pkg/controller/deployment/sync.go`: `sync`, `syncStatusOnly`, `getAllReplicaSetsAndSyncRevision`,
//! `getNewReplicaSet` (creating the new ReplicaSet named `<deployment>-<pod-template-hash>`),
//! `scale` (proportional scaling), `cleanupDeployment` (revisionHistoryLimit), `isScalingEvent`,
//! `checkPausedConditions`, `syncDeploymentStatus` and `calculateStatus`.

use k8s_types::apiserver::{ApiExt, DeleteOptions};
use k8s_types::apps::{DeploymentStatus, ReplicaSet, POD_TEMPLATE_HASH_LABEL, REVISION_ANNOTATION};
use k8s_types::core::condition_status;
use k8s_types::core::event::event_types;
use k8s_types::meta::ObjectMeta;
use k8s_types::status::Status;
use k8s_types::Kind;

use super::util::{self, DEPLOYMENT_AVAILABLE, DEPLOYMENT_PROGRESSING};
use super::DeploymentSync;
use crate::controller_utils::{
    clone_and_add_label, cmp_by_creation_timestamp, cmp_by_size_newer, cmp_by_size_older,
    filter_active_replica_sets, is_controlled_by, new_controller_ref, rs_replicas,
};
use crate::pod_template_hash::compute_hash;
use crate::SyncError;

/// Available condition message when enough pods are available (upstream `calculateStatus`).
pub const MINIMUM_AVAILABILITY_MESSAGE: &str = "Deployment has minimum availability.";
/// Available condition message otherwise.
pub const NO_MINIMUM_AVAILABILITY_MESSAGE: &str = "Deployment does not have minimum availability.";
/// Progressing condition message of a paused Deployment (upstream `checkPausedConditions`).
pub const PAUSED_MESSAGE: &str = "Deployment is paused";
/// Progressing condition message of a resumed Deployment.
pub const RESUMED_MESSAGE: &str = "Deployment is resumed";

/// Go's `%q` for a plain name: the name in double quotes.
pub(crate) fn quoted(s: &str) -> String {
    format!("{s:?}")
}

impl DeploymentSync<'_> {
    /// Upstream `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (created when
    /// `create_if_not_existed` and missing) and every old one, with revisions synced.
    pub(super) fn get_all_replica_sets_and_sync_revision(
        &mut self,
        create_if_not_existed: bool,
    ) -> Result<(Option<ReplicaSet>, Vec<ReplicaSet>), SyncError> {
        let old = util::find_old_replica_sets(&self.d, &self.rss);
        let new = self.get_new_replica_set(&old, create_if_not_existed)?;
        Ok((new, old))
    }

    /// Upstream `getNewReplicaSet`.
    fn get_new_replica_set(
        &mut self,
        old_rss: &[ReplicaSet],
        create_if_not_existed: bool,
    ) -> Result<Option<ReplicaSet>, SyncError> {
        let existing = util::find_new_replica_set(&self.d, &self.rss);
        let new_revision = util::max_revision(old_rss) + 1;

        if let Some(existing) = existing {
            let mut copy = existing.clone();
            let annotations_updated =
                util::set_new_replica_set_annotations(&self.d, &mut copy, new_revision, true);
            let min_ready_needs_update =
                copy.spec.min_ready_seconds.unwrap_or(0) != util::min_ready_seconds(&self.d);
            if annotations_updated || min_ready_needs_update {
                copy.spec.min_ready_seconds = self.d.spec.min_ready_seconds;
                let updated = self.api.update_typed(copy)?;
                self.remember(&updated);
                return Ok(Some(updated));
            }
            let rs_revision = copy
                .metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .cloned()
                .unwrap_or_default();
            let revision_changed = util::set_deployment_revision(&mut self.d, &rs_revision);
            let mut status_changed = false;
            let conds = util::conditions(&self.d.status);
            if util::has_progress_deadline(&self.d)
                && util::get_condition(&conds, DEPLOYMENT_PROGRESSING).is_none()
            {
                let msg = format!("Found new replica set {}", quoted(&copy.metadata.name));
                let cond = util::new_condition(
                    DEPLOYMENT_PROGRESSING,
                    condition_status::TRUE,
                    util::FOUND_NEW_RS_REASON,
                    msg,
                    self.now,
                );
                util::set_condition(&mut self.d.status, cond);
                status_changed = true;
            }
            self.write_revision_and_status(revision_changed, status_changed)?;
            return Ok(Some(copy));
        }

        if !create_if_not_existed {
            return Ok(None);
        }

        // The new ReplicaSet does not exist: create it.
        let hash = compute_hash(&self.d.spec.template, self.d.status.collision_count);
        let mut template = self.d.spec.template.clone();
        template.metadata.labels =
            clone_and_add_label(&template.metadata.labels, POD_TEMPLATE_HASH_LABEL, &hash).into();
        let mut selector = self.d.spec.selector.clone().unwrap_or_default();
        selector
            .match_labels
            .insert(POD_TEMPLATE_HASH_LABEL.into(), hash.clone());
        let name = format!("{}-{}", self.d.metadata.name, hash);
        let mut new_rs = ReplicaSet {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            metadata: ObjectMeta {
                name: name.clone(),
                namespace: self.d.metadata.namespace.clone(),
                owner_references: vec![new_controller_ref(&self.d.metadata, &Kind::Deployment)]
                    .into(),
                labels: template.metadata.labels.clone(),
                ..Default::default()
            },
            spec: k8s_types::apps::ReplicaSetSpec {
                replicas: Some(0),
                min_ready_seconds: self.d.spec.min_ready_seconds,
                selector: Some(selector),
                template,
            },
            status: Default::default(),
        };
        let new_count = util::new_rs_new_replicas(&self.d, util::replica_count(old_rss), 0)
            .map_err(SyncError::Invalid)?;
        new_rs.spec.replicas = Some(new_count);
        util::set_new_replica_set_annotations(&self.d, &mut new_rs, new_revision, false);

        let mut already_exists = false;
        let created = match self.api.create_typed(new_rs) {
            Ok(rs) => rs,
            Err(e) if e.is_already_exists() => {
                let rs: ReplicaSet = self.api.get_typed(self.d.metadata.namespace(), &name)?;
                if is_controlled_by(&rs.metadata, &self.d.metadata)
                    && util::equal_ignore_hash(&self.d.spec.template, &rs.spec.template)
                {
                    already_exists = true;
                    rs
                } else {
                    // A hash collision: bump collisionCount so the next sync computes a new name.
                    let count = self.d.status.collision_count.unwrap_or(0);
                    self.d.status.collision_count = Some(count.saturating_add(1));
                    self.write_status()?;
                    tracing::info!(
                        deployment = %self.d.metadata.name,
                        old = count,
                        new = count.saturating_add(1),
                        "Found a hash collision for deployment - bumping collisionCount to resolve it"
                    );
                    return Err(e.into());
                }
            }
            Err(e) => {
                let msg = format!(
                    "Failed to create new replica set {}: {}",
                    quoted(&name),
                    e.message
                );
                if util::has_progress_deadline(&self.d) {
                    let cond = util::new_condition(
                        DEPLOYMENT_PROGRESSING,
                        condition_status::FALSE,
                        util::FAILED_RS_CREATE_REASON,
                        msg.clone(),
                        self.now,
                    );
                    util::set_condition(&mut self.d.status, cond);
                    // Upstream ignores this error: the create failure is the bigger issue.
                    let _ = self.write_status();
                }
                self.event(event_types::WARNING, util::FAILED_RS_CREATE_REASON, msg);
                return Err(e.into());
            }
        };
        self.remember(&created);
        if !already_exists && new_count > 0 {
            self.event(
                event_types::NORMAL,
                super::SCALING_REPLICA_SET_REASON,
                format!(
                    "Scaled up replica set {} from 0 to {new_count}",
                    created.metadata.name
                ),
            );
        }
        let revision_changed =
            util::set_deployment_revision(&mut self.d, &new_revision.to_string());
        let mut status_changed = false;
        if !already_exists && util::has_progress_deadline(&self.d) {
            let msg = format!("Created new replica set {}", quoted(&created.metadata.name));
            let cond = util::new_condition(
                DEPLOYMENT_PROGRESSING,
                condition_status::TRUE,
                util::NEW_REPLICA_SET_REASON,
                msg,
                self.now,
            );
            util::set_condition(&mut self.d.status, cond);
            status_changed = true;
        }
        self.write_revision_and_status(revision_changed, status_changed)?;
        Ok(Some(created))
    }

    /// Upstream `sync`: scaling only (paused Deployments and scaling events), cleanup when paused,
    /// then status.
    pub(super) fn sync(&mut self) -> Result<(), SyncError> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(false)?;
        self.scale(new.as_ref(), &old)?;
        if self.d.spec.paused {
            self.cleanup_deployment(&old)?;
        }
        let all: Vec<ReplicaSet> = old
            .iter()
            .chain(new.iter())
            .map(|r| self.fresh(r))
            .collect();
        let new = new.map(|n| self.fresh(&n));
        self.sync_deployment_status(&all, new.as_ref())?;
        Ok(())
    }

    /// Upstream `syncStatusOnly`: a Deployment being deleted only gets its status refreshed.
    pub(super) fn sync_status_only(&mut self) -> Result<(), SyncError> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(false)?;
        let all: Vec<ReplicaSet> = old.iter().chain(new.iter()).cloned().collect();
        self.sync_deployment_status(&all, new.as_ref())?;
        Ok(())
    }

    /// Upstream `isScalingEvent`: an active ReplicaSet's desired-replicas annotation differs from
    /// `spec.replicas`.
    pub(super) fn is_scaling_event(&mut self) -> Result<bool, SyncError> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(false)?;
        let all: Vec<ReplicaSet> = old.into_iter().chain(new).collect();
        let replicas = util::replicas(&self.d);
        Ok(filter_active_replica_sets(&all)
            .iter()
            .filter_map(util::desired_replicas_annotation)
            .any(|desired| desired != replicas))
    }

    /// Upstream `checkPausedConditions`: a paused Deployment gets `Progressing=Unknown`
    /// (`DeploymentPaused`), a resumed one `DeploymentResumed`, unless it already timed out.
    pub(super) fn check_paused_conditions(&mut self) -> Result<(), SyncError> {
        if !util::has_progress_deadline(&self.d) {
            return Ok(());
        }
        let conds = util::conditions(&self.d.status);
        let cond = util::get_condition(&conds, DEPLOYMENT_PROGRESSING);
        if cond.is_some_and(|c| c.reason.as_deref() == Some(util::TIMED_OUT_REASON)) {
            return Ok(());
        }
        let paused_exists =
            cond.is_some_and(|c| c.reason.as_deref() == Some(util::PAUSED_DEPLOY_REASON));
        let new_cond = if self.d.spec.paused && !paused_exists {
            Some((util::PAUSED_DEPLOY_REASON, PAUSED_MESSAGE))
        } else if !self.d.spec.paused && paused_exists {
            Some((util::RESUMED_DEPLOY_REASON, RESUMED_MESSAGE))
        } else {
            None
        };
        if let Some((reason, msg)) = new_cond {
            let c = util::new_condition(
                DEPLOYMENT_PROGRESSING,
                condition_status::UNKNOWN,
                reason,
                msg,
                self.now,
            );
            util::set_condition(&mut self.d.status, c);
            self.write_status()?;
        }
        Ok(())
    }

    /// Upstream `scale`: brings the ReplicaSets to the Deployment's size. One active (or, with none
    /// active, the newest) ReplicaSet takes the full size; a saturated new ReplicaSet scales the old
    /// ones to 0; otherwise, for RollingUpdate, the difference to `replicas + maxSurge` is spread
    /// over the active ReplicaSets in proportion to their size (largest first, leftovers to the
    /// first).
    pub(super) fn scale(
        &mut self,
        new: Option<&ReplicaSet>,
        old: &[ReplicaSet],
    ) -> Result<(), SyncError> {
        let replicas = util::replicas(&self.d);
        if let Some(target) = util::find_active_or_latest(new, old) {
            if rs_replicas(&target) == replicas {
                return Ok(());
            }
            self.scale_replica_set_and_record_event(&target, replicas)?;
            return Ok(());
        }
        if util::is_saturated(&self.d, new) {
            for rs in filter_active_replica_sets(old) {
                self.scale_replica_set_and_record_event(&rs, 0)?;
            }
            return Ok(());
        }
        if !util::is_rolling_update(&self.d) {
            return Ok(());
        }
        let all_list: Vec<ReplicaSet> = old.iter().chain(new).cloned().collect();
        let mut all = filter_active_replica_sets(&all_list);
        let all_replicas = util::replica_count(&all);
        let allowed = if replicas > 0 {
            replicas + util::max_surge(&self.d)
        } else {
            0
        };
        let to_add = allowed - all_replicas;
        let op = match to_add.cmp(&0) {
            std::cmp::Ordering::Greater => {
                all.sort_by(cmp_by_size_newer);
                "up"
            }
            std::cmp::Ordering::Less => {
                all.sort_by(cmp_by_size_older);
                "down"
            }
            std::cmp::Ordering::Equal => "",
        };
        let mut added = 0;
        let mut sizes = Vec::with_capacity(all.len());
        for rs in &all {
            if to_add != 0 {
                let proportion = util::get_proportion(rs, &self.d, to_add, added);
                sizes.push(rs_replicas(rs) + proportion);
                added += proportion;
            } else {
                sizes.push(rs_replicas(rs));
            }
        }
        for (i, rs) in all.iter().enumerate() {
            if i == 0 && to_add != 0 {
                let leftover = to_add - added;
                sizes[0] = (sizes[0] + leftover).max(0);
            }
            self.scale_replica_set(rs, sizes[i], op)?;
        }
        Ok(())
    }

    /// Upstream `cleanupDeployment`: deletes the oldest old ReplicaSets beyond
    /// `revisionHistoryLimit`, only those fully scaled down, observed and not being deleted.
    pub(super) fn cleanup_deployment(&mut self, old: &[ReplicaSet]) -> Result<(), SyncError> {
        let limit = util::revision_history_limit(&self.d);
        if limit == i32::MAX {
            return Ok(());
        }
        let mut cleanable: Vec<ReplicaSet> = old
            .iter()
            .map(|r| self.fresh(r))
            .filter(|r| r.metadata.deletion_timestamp.is_none())
            .collect();
        let diff = cleanable.len() as i64 - i64::from(limit);
        if diff <= 0 {
            return Ok(());
        }
        cleanable.sort_by(util::cmp_by_revision);
        for rs in cleanable.iter().take(diff as usize) {
            if rs.status.replicas != 0
                || rs_replicas(rs) != 0
                || rs.metadata.generation.unwrap_or(0) > rs.status.observed_generation.unwrap_or(0)
                || rs.metadata.deletion_timestamp.is_some()
            {
                continue;
            }
            match self.api.delete(
                &Kind::ReplicaSet,
                rs.metadata.namespace(),
                &rs.metadata.name,
                DeleteOptions::default(),
            ) {
                Ok(_) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Upstream `syncDeploymentStatus`: writes the calculated status when it differs.
    pub(super) fn sync_deployment_status(
        &mut self,
        all: &[ReplicaSet],
        new: Option<&ReplicaSet>,
    ) -> Result<(), Status> {
        let status = calculate_status(all, new, &self.d, self.now);
        if status == self.d.status {
            return Ok(());
        }
        self.d.status = status;
        self.write_status()
    }
}

/// Upstream `calculateStatus`: counts over all ReplicaSets (`replicas`, `readyReplicas`,
/// `availableReplicas` from their status; `updatedReplicas` from the new one;
/// `unavailableReplicas = sum(spec.replicas) - available`, at least 0), the observed generation,
/// and the `Available` condition (`available >= replicas - maxUnavailable`).
pub fn calculate_status(
    all: &[ReplicaSet],
    new: Option<&ReplicaSet>,
    d: &k8s_types::apps::Deployment,
    now: k8s_types::Tick,
) -> DeploymentStatus {
    let available = util::available_replica_count(all);
    let total = util::replica_count(all);
    let unavailable = (total - available).max(0);
    let mut status = DeploymentStatus {
        observed_generation: d.metadata.generation,
        replicas: util::actual_replica_count(all),
        updated_replicas: util::actual_replica_count(new),
        ready_replicas: util::ready_replica_count(all),
        available_replicas: available,
        unavailable_replicas: unavailable,
        conditions: d.status.conditions.clone(),
        collision_count: d.status.collision_count,
    };
    let cond = if available >= util::replicas(d) - util::max_unavailable(d) {
        util::new_condition(
            DEPLOYMENT_AVAILABLE,
            condition_status::TRUE,
            util::MINIMUM_REPLICAS_AVAILABLE,
            MINIMUM_AVAILABILITY_MESSAGE,
            now,
        )
    } else {
        util::new_condition(
            DEPLOYMENT_AVAILABLE,
            condition_status::FALSE,
            util::MINIMUM_REPLICAS_UNAVAILABLE,
            NO_MINIMUM_AVAILABILITY_MESSAGE,
            now,
        )
    };
    util::set_condition(&mut status, cond);
    status
}

/// Oldest first (upstream `ReplicaSetsByCreationTimestamp`), re-exported for the rollout files.
pub(super) fn sort_by_creation(rss: &mut [ReplicaSet]) {
    rss.sort_by(cmp_by_creation_timestamp);
}
