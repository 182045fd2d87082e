//! ResourceQuota strategy (upstream `pkg/registry/core/resourcequota/strategy.go`): create clears
//! the status (the resource quota controller fills it), an update keeps the stored status, a
//! `/status` update keeps the stored spec.

use k8s_types::core::{ResourceQuota, ResourceQuotaStatus};

/// Upstream `resourcequotaStrategy.PrepareForCreate`.
pub fn prepare_for_create(rq: &mut ResourceQuota) {
    rq.status = ResourceQuotaStatus::default();
}

/// Upstream `resourcequotaStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut ResourceQuota, old: &ResourceQuota) {
    new.status.clone_from(&old.status);
}
