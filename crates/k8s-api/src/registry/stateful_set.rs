//! StatefulSet strategy (upstream `pkg/registry/apps/statefulset/strategy.go`): create resets
//! the status and sets `generation: 1`; update keeps the status and bumps `generation` on spec
//! changes.

use k8s_types::apps::{StatefulSet, StatefulSetStatus};

/// Upstream `statefulSetStrategy.PrepareForCreate`.
pub fn prepare_for_create(ss: &mut StatefulSet) {
    ss.status = StatefulSetStatus::default();
    ss.metadata.generation = Some(1);
}

/// Upstream `statefulSetStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut StatefulSet, old: &StatefulSet) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(0).saturating_add(1));
    }
}
