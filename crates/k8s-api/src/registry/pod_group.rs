//! PodGroup strategy: the generic custom-resource strategy of apiextensions-apiserver
//! (`pkg/registry/customresource/strategy.go`) for a CRD with the status subresource: create drops
//! the status and sets `generation: 1`; update keeps the status and bumps `generation` when anything
//! but metadata and status changed.

use k8s_types::scheduling::{PodGroup, PodGroupStatus};

/// Create: status dropped, generation 1.
pub fn prepare_for_create(pg: &mut PodGroup) {
    pg.status = PodGroupStatus::default();
    pg.metadata.generation = Some(1);
}

/// Update: status kept, generation bumped on spec changes.
pub fn prepare_for_update(new: &mut PodGroup, old: &PodGroup) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(0).saturating_add(1));
    }
}
