//! PodDisruptionBudget strategy (upstream `pkg/registry/policy/poddisruptionbudget/strategy.go`):
//! create resets the status and sets `generation: 1`; update keeps the status and bumps
//! `generation` when the spec changes; a `/status` update takes only the status.

use k8s_types::policy::{PodDisruptionBudget, PodDisruptionBudgetStatus};

/// Upstream `podDisruptionBudgetStrategy.PrepareForCreate`.
pub fn prepare_for_create(pdb: &mut PodDisruptionBudget) {
    pdb.status = PodDisruptionBudgetStatus::default();
    pdb.metadata.generation = Some(1);
}

/// Upstream `podDisruptionBudgetStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut PodDisruptionBudget, old: &PodDisruptionBudget) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(0).saturating_add(1));
    }
}
