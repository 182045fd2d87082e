//! `resource.k8s.io/v1` defaults (upstream `pkg/apis/resource/v1/defaults.go`,
//! `SetDefaults_ExactDeviceRequest`, `SetDefaults_DeviceSubRequest`): an `exactly` request or a
//! `firstAvailable` entry without `allocationMode` gets `ExactCount`, and with `ExactCount` a zero
//! `count` becomes 1. DeviceClass, ResourceSlice and the rest of the claim have no defaults.

use k8s_types::resource::{ResourceClaimSpec, ALLOCATION_MODE_EXACT_COUNT};

fn default_mode_and_count(mode: &mut Option<String>, count: &mut Option<i64>) {
    let mode = mode.get_or_insert_with(|| ALLOCATION_MODE_EXACT_COUNT.to_string());
    if mode == ALLOCATION_MODE_EXACT_COUNT && count.unwrap_or(0) == 0 {
        *count = Some(1);
    }
}

/// Defaults every `exactly` request and `firstAvailable` entry of a claim (or a template's
/// claim) spec.
pub fn set_defaults_resource_claim_spec(spec: &mut ResourceClaimSpec) {
    for r in &mut spec.devices.requests {
        if let Some(e) = r.exactly.as_mut() {
            default_mode_and_count(&mut e.allocation_mode, &mut e.count);
        }
        for sub in &mut r.first_available {
            default_mode_and_count(&mut sub.allocation_mode, &mut sub.count);
        }
    }
}
