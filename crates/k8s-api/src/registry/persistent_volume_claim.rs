//! PersistentVolumeClaim strategy (upstream `pkg/registry/core/persistentvolumeclaim/strategy.go`):
//! create starts the claim `Pending` with an empty status; update keeps the status (the binder
//! writes it through `/status`).

use k8s_types::core::{claim_phases, PersistentVolumeClaim, PersistentVolumeClaimStatus};

/// Upstream `persistentvolumeclaimStrategy.PrepareForCreate`.
pub fn prepare_for_create(pvc: &mut PersistentVolumeClaim) {
    pvc.status = PersistentVolumeClaimStatus {
        phase: Some(claim_phases::PENDING.to_string()),
        ..Default::default()
    };
}

/// Upstream `persistentvolumeclaimStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut PersistentVolumeClaim, old: &PersistentVolumeClaim) {
    new.status.clone_from(&old.status);
}
