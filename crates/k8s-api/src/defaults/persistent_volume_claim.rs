//! PersistentVolumeClaim defaults (upstream `pkg/apis/core/v1/defaults.go`
//! `SetDefaults_PersistentVolumeClaimSpec`: `volumeMode: Filesystem`; `SetDefaults_PersistentVolumeClaim`:
//! `status.phase: Pending`).

use k8s_types::core::{claim_phases, PersistentVolumeClaim, PersistentVolumeClaimSpec};

/// Upstream `PersistentVolumeFilesystem`.
pub const FILESYSTEM_VOLUME_MODE: &str = "Filesystem";

/// Upstream `SetDefaults_PersistentVolumeClaimSpec`.
pub fn set_defaults_persistent_volume_claim_spec(spec: &mut PersistentVolumeClaimSpec) {
    if spec.volume_mode.is_none() {
        spec.volume_mode = Some(FILESYSTEM_VOLUME_MODE.to_string());
    }
}

/// Upstream `SetDefaults_PersistentVolumeClaim`.
pub fn set_defaults_persistent_volume_claim(pvc: &mut PersistentVolumeClaim) {
    set_defaults_persistent_volume_claim_spec(&mut pvc.spec);
    if pvc.status.phase.as_deref().unwrap_or("").is_empty() {
        pvc.status.phase = Some(claim_phases::PENDING.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_is_pending_filesystem() {
        let mut c = PersistentVolumeClaim::default();
        set_defaults_persistent_volume_claim(&mut c);
        assert_eq!(c.status.phase.as_deref(), Some("Pending"));
        assert_eq!(c.spec.volume_mode.as_deref(), Some("Filesystem"));
    }
}
