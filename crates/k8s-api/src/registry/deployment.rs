//! Deployment strategy (upstream `pkg/registry/apps/deployment/strategy.go`): create resets the
//! status and sets `generation: 1`; update keeps the status and bumps `generation` when the spec or
//! the annotations change (annotations are copied to ReplicaSets, so they count as spec).

use k8s_types::apps::{Deployment, DeploymentStatus};

/// Upstream `deploymentStrategy.PrepareForCreate`.
pub fn prepare_for_create(d: &mut Deployment) {
    d.status = DeploymentStatus::default();
    d.metadata.generation = Some(1);
}

/// Upstream `deploymentStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut Deployment, old: &Deployment) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec || new.metadata.annotations != old.metadata.annotations {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(0).saturating_add(1));
    }
}
