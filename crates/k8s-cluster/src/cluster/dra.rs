//! The NVIDIA DRA driver's kubelet plugin on a node (`k8s_deviceplugin::dra`): when a node
//! labelled `nvidia.com/dra-kubelet-plugin=true` registers, its GPUs are published as one
//! ResourceSlice through the apiserver (as the driver's resourceslice controller does once its
//! kubelet plugin starts), and the device plugin does not serve them (docs/dra.md).

use k8s_deviceplugin::dra::{dra_enabled, NvidiaDraDriver};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::Node;
use k8s_types::resource::ResourceSlice;
use k8s_types::status::Status;
use k8s_types::{Kind, Object};

/// The node, when the DRA driver runs there (kept for [`publish_resource_slices`] after the
/// kubelet registered it).
pub(crate) fn dra_node(node: &Node) -> Option<Node> {
    dra_enabled(node).then(|| node.clone())
}

/// Publishes the node's ResourceSlice when the DRA driver runs there and no slice of its pool
/// exists yet (a restored dump keeps the one it has).
pub(crate) fn publish_resource_slices(
    api: &mut dyn ApiClient,
    node: &Node,
    n_gpus: usize,
) -> Result<(), Status> {
    if !dra_enabled(node) || n_gpus == 0 {
        return Ok(());
    }
    let slice = NvidiaDraDriver::for_node(node, n_gpus).resource_slice();
    let exists = api
        .list_shared(&Kind::ResourceSlice, None, None)
        .iter()
        .filter_map(|o| match o.as_ref() {
            Object::ResourceSlice(s) => Some(&**s),
            _ => None,
        })
        .any(|s: &ResourceSlice| {
            s.spec.driver == slice.spec.driver && s.spec.pool.name == slice.spec.pool.name
        });
    if exists {
        return Ok(());
    }
    api.create(Object::ResourceSlice(Box::new(slice)))
        .map(|_| ())
}
