//! A minimal PersistentVolume binder, after upstream
//! `pkg/controller/volume/persistentvolume/pv_controller.go` (`syncUnboundClaim`) with dynamic
//! provisioning: a `Pending` claim without `spec.volumeName` is bound at once to a provisioned
//! volume named `pvc-<claim uid>` (upstream's provisioners name volumes so); the claim's
//! `status` becomes `phase: Bound` with its access modes and its requested storage as capacity.
//!
//! Simplifications (docs/fidelity.md, PersistentVolumeClaims): no PersistentVolume objects, no
//! StorageClasses (so no `WaitForFirstConsumer`: every claim binds when created), no provisioning
//! events, no real storage; a claim naming a `volumeName` is taken as bound to it.

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::{claim_phases, PersistentVolumeClaim};
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::workqueue::WorkQueue;
use k8s_types::Kind;

/// The controller name, as upstream registers it.
pub const PERSISTENT_VOLUME_BINDER_CONTROLLER_NAME: &str = "persistentvolume-binder-controller";

/// The name of the volume provisioned for a claim (upstream `pvc-<uid>`).
pub fn provisioned_volume_name(claim: &PersistentVolumeClaim) -> String {
    format!("pvc-{}", claim.metadata.uid.as_deref().unwrap_or(""))
}

/// The binder.
#[derive(Clone, Debug, Default)]
pub struct PersistentVolumeBinderController;

impl PersistentVolumeBinderController {
    /// A binder.
    pub fn new() -> Self {
        PersistentVolumeBinderController
    }
}

impl Controller for PersistentVolumeBinderController {
    fn name(&self) -> &str {
        PERSISTENT_VOLUME_BINDER_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::PersistentVolumeClaim]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        _informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        if change.new.is_some() {
            queue.add(change.key.clone());
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(claim) = informers
            .of(&Kind::PersistentVolumeClaim)
            .get_typed::<PersistentVolumeClaim>(key)
            .cloned()
        else {
            return Ok(Action::AwaitChange);
        };
        if claim.metadata.deletion_timestamp.is_some()
            || claim.status.phase.as_deref() == Some(claim_phases::BOUND)
        {
            return Ok(Action::AwaitChange);
        }
        let mut claim = claim;
        if claim.spec.volume_name.is_none() {
            claim.spec.volume_name = Some(provisioned_volume_name(&claim));
            claim = api.update_typed(claim)?;
        }
        claim.status.phase = Some(claim_phases::BOUND.to_string());
        claim
            .status
            .access_modes
            .clone_from(&claim.spec.access_modes);
        claim.status.capacity = claim
            .spec
            .resources
            .requests
            .iter()
            .filter(|(k, _)| k.as_str() == "storage")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        api.update_status_typed(claim)?;
        Ok(Action::AwaitChange)
    }
}
