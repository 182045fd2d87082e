//! `scheduling.k8s.io/v1alpha2` Workload and PodGroup strategies (upstream
//! `pkg/registry/scheduling/workload/strategy.go` and `podgroup/strategy.go`): create sets
//! `generation: 1` (and drops a PodGroup's status, written through `/status` only); update keeps
//! the status and bumps `generation` when the spec changed.

use k8s_types::meta::ObjectMeta;
use k8s_types::scheduling::v1alpha2::{PodGroup, Workload};

fn bump_generation(new: &mut ObjectMeta, old: &ObjectMeta) {
    new.generation = Some(old.generation.unwrap_or(0).saturating_add(1));
}

/// Workload create: generation 1.
pub fn prepare_workload_for_create(w: &mut Workload) {
    w.metadata.generation = Some(1);
}

/// Workload update: generation bumped on spec changes.
pub fn prepare_workload_for_update(new: &mut Workload, old: &Workload) {
    if new.spec != old.spec {
        bump_generation(&mut new.metadata, &old.metadata);
    }
}

/// PodGroup create: status dropped, generation 1.
pub fn prepare_pod_group_for_create(pg: &mut PodGroup) {
    pg.status = Default::default();
    pg.metadata.generation = Some(1);
}

/// PodGroup update: status kept, generation bumped on spec changes.
pub fn prepare_pod_group_for_update(new: &mut PodGroup, old: &PodGroup) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec {
        bump_generation(&mut new.metadata, &old.metadata);
    }
}
