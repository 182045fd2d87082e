//! `resource.k8s.io/v1` strategies (upstream `pkg/registry/resource/{deviceclass,resourceslice,
//! resourceclaim,resourceclaimtemplate}/strategy.go`): DeviceClass and ResourceSlice get
//! `generation: 1` on create, bumped when the spec changes; a ResourceClaim's status is dropped
//! on create and kept on update (it is written through `/status` only, by the scheduler and the
//! ResourceClaim controller); a `/status` write keeps the stored spec and metadata (upstream
//! `ResetObjectMetaForStatus`).

use k8s_types::meta::ObjectMeta;
use k8s_types::resource::{DeviceClass, ResourceClaim, ResourceSlice};

fn bump_generation(new: &mut ObjectMeta, old: &ObjectMeta) {
    new.generation = Some(old.generation.unwrap_or(0).saturating_add(1));
}

/// DeviceClass create: generation 1.
pub fn prepare_device_class_for_create(c: &mut DeviceClass) {
    c.metadata.generation = Some(1);
}

/// DeviceClass update: generation bumped on spec changes.
pub fn prepare_device_class_for_update(new: &mut DeviceClass, old: &DeviceClass) {
    if new.spec != old.spec {
        bump_generation(&mut new.metadata, &old.metadata);
    }
}

/// ResourceSlice create: generation 1.
pub fn prepare_resource_slice_for_create(s: &mut ResourceSlice) {
    s.metadata.generation = Some(1);
}

/// ResourceSlice update: generation bumped on spec changes.
pub fn prepare_resource_slice_for_update(new: &mut ResourceSlice, old: &ResourceSlice) {
    if new.spec != old.spec {
        bump_generation(&mut new.metadata, &old.metadata);
    }
}

/// ResourceClaim create: the status is dropped.
pub fn prepare_resource_claim_for_create(c: &mut ResourceClaim) {
    c.status = Default::default();
}

/// ResourceClaim update: the stored status is kept.
pub fn prepare_resource_claim_for_update(new: &mut ResourceClaim, old: &ResourceClaim) {
    new.status.clone_from(&old.status);
}

/// ResourceClaim `/status` update: spec and metadata from the stored object, except the
/// resourceVersion the caller sent (already handled by the caller) and finalizers, which the
/// ResourceClaim controller and the scheduler change with the status (upstream's status
/// strategy resets metadata; both write finalizers with a regular update first, k8s-mini lets
/// the status write carry them: docs/fidelity.md).
pub fn prepare_resource_claim_for_status_update(new: &mut ResourceClaim, old: &ResourceClaim) {
    let status = std::mem::take(&mut new.status);
    let finalizers = std::mem::take(&mut new.metadata.finalizers);
    let rv = new.metadata.resource_version.take();
    *new = old.clone();
    new.status = status;
    new.metadata.finalizers = finalizers;
    new.metadata.resource_version = rv;
}
