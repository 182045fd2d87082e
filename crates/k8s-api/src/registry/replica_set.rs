//! ReplicaSet strategy (upstream `pkg/registry/apps/replicaset/strategy.go`): create resets the
//! status and sets `generation: 1`; update keeps the status and bumps `generation` on spec changes.

use k8s_types::apps::{ReplicaSet, ReplicaSetStatus};

/// Upstream `rsStrategy.PrepareForCreate`.
pub fn prepare_for_create(rs: &mut ReplicaSet) {
    rs.status = ReplicaSetStatus::default();
    rs.metadata.generation = Some(1);
}

/// Upstream `rsStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut ReplicaSet, old: &ReplicaSet) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(0).saturating_add(1));
    }
}
