//! Node strategy (upstream `pkg/registry/core/node/strategy.go`): create keeps the status the
//! kubelet registers with; update keeps the stored status (it changes through `/status`).

use k8s_types::core::Node;

/// Upstream `nodeStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut Node, old: &Node) {
    new.status.clone_from(&old.status);
}
