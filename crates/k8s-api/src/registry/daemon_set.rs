//! DaemonSet strategy (upstream `pkg/registry/apps/daemonset/strategy.go`): create resets the
//! status and sets `generation: 1`; update keeps the status and bumps `generation` on spec
//! changes. (The deprecated `spec.templateGeneration` is not kept: pods are told apart by their
//! `controller-revision-hash` label only.)

use k8s_types::apps::{DaemonSet, DaemonSetStatus};

/// Upstream `daemonSetStrategy.PrepareForCreate`.
pub fn prepare_for_create(ds: &mut DaemonSet) {
    ds.status = DaemonSetStatus::default();
    ds.metadata.generation = Some(1);
}

/// Upstream `daemonSetStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut DaemonSet, old: &DaemonSet) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(0).saturating_add(1));
    }
}
