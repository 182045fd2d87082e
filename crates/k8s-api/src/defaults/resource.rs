//! `resource.k8s.io/v1` defaults (upstream `pkg/apis/resource/v1/defaults.go`,
//! `SetDefaults_ExactDeviceRequest`): an `exactly` request without `allocationMode` gets
//! `ExactCount`, and with `ExactCount` a zero `count` becomes 1. DeviceClass, ResourceSlice and
//! the rest of the claim have no defaults.

use k8s_types::resource::{ResourceClaimSpec, ALLOCATION_MODE_EXACT_COUNT};

/// Defaults every `exactly` request of a claim (or a template's claim) spec.
pub fn set_defaults_resource_claim_spec(spec: &mut ResourceClaimSpec) {
    for r in &mut spec.devices.requests {
        let Some(e) = r.exactly.as_mut() else {
            continue;
        };
        let mode = e
            .allocation_mode
            .get_or_insert_with(|| ALLOCATION_MODE_EXACT_COUNT.to_string());
        if mode == ALLOCATION_MODE_EXACT_COUNT && e.count.unwrap_or(0) == 0 {
            e.count = Some(1);
        }
    }
}
