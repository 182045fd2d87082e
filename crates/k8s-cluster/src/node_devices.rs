//! The device plugins of a node's machine, from its manifest: NVIDIA GPUs (whole, MIG, shared,
//! with a topology; docs/gpus.md) and GPU-share milli-GPUs (docs/trace-replay.md).

use k8s_deviceplugin::{plugins_for_node, DevicePluginConfig, NvidiaDevicePlugin};
use k8s_types::core::{node_labels, resource_names, Node, ResourceList};
use k8s_types::deviceplugin::DevicePlugin;
use k8s_types::status::FieldError;

/// The most devices k8s-mini models for one node's device plugin (each is tracked individually).
pub const MAX_DEVICES_PER_NODE: i64 = 4096;

/// GFD label with each GPU's memory in MiB.
const LABEL_GPU_MEMORY: &str = "nvidia.com/gpu.memory";

/// Problems with the GPU description of a node manifest: a count above [`MAX_DEVICES_PER_NODE`], a
/// `nvidia.com/gpu.count` label that is not a non-negative integer, a bad MIG / sharing / topology
/// label or annotation ([`DevicePluginConfig::from_node`]), a MIG layout the GPUs cannot take, or
/// more than [`MAX_DEVICES_PER_NODE`] devices once replicated.
pub(crate) fn gpu_count_errors(node: &Node) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (list, path) in [
        (&node.status.capacity, "status.capacity"),
        (&node.status.allocatable, "status.allocatable"),
    ] {
        if let Some(q) = list.get(resource_names::NVIDIA_GPU) {
            if q.value() > MAX_DEVICES_PER_NODE {
                errs.push(FieldError::invalid(
                    format!("{path}[{}]", resource_names::NVIDIA_GPU),
                    q.to_string(),
                    format!("k8s-mini models at most {MAX_DEVICES_PER_NODE} devices per node"),
                ));
            }
        }
    }
    if let Some(v) = node.metadata.labels.get(node_labels::NVIDIA_GPU_COUNT) {
        let ok = v
            .parse::<i64>()
            .is_ok_and(|n| (0..=MAX_DEVICES_PER_NODE).contains(&n));
        if !ok {
            errs.push(FieldError::invalid(
                format!("metadata.labels[{}]", node_labels::NVIDIA_GPU_COUNT),
                format!("{v:?}"),
                format!("must be an integer from 0 to {MAX_DEVICES_PER_NODE}"),
            ));
        }
    }
    if !errs.is_empty() {
        return errs;
    }
    let n = gpu_count(node);
    let mut cfg =
        match DevicePluginConfig::from_node(&node.metadata.labels, &node.metadata.annotations, n) {
            Ok(c) => c,
            Err(e) => return e,
        };
    if k8s_deviceplugin::dra::dra_enabled(node) && cfg.mig_config.is_some() {
        // The DRA driver has no MIG strategy: every MIG device is a device of its own (as the
        // device plugin's `mixed`); only the layout is checked.
        cfg.mig_strategy = k8s_deviceplugin::config::MigStrategy::Mixed;
    }
    if n == 0 {
        return errs;
    }
    match plugins_for_node(n, &product(node), gpu_memory(node), &cfg) {
        Err(e) => errs.extend(e),
        Ok(plugins) => {
            let total: usize = plugins.iter().map(|p| p.list_and_watch().len()).sum();
            if i64::try_from(total).unwrap_or(i64::MAX) > MAX_DEVICES_PER_NODE {
                errs.push(FieldError::invalid(
                    "metadata.labels[nvidia.com/gpu.replicas]",
                    format!("{:?}", cfg.sharing.replicas.to_string()),
                    format!(
                        "{total} devices: k8s-mini models at most {MAX_DEVICES_PER_NODE} devices per node"
                    ),
                ));
            }
        }
    }
    errs
}

/// The number of GPUs a node manifest shares through the GPU-share device plugin:
/// `status.capacity["alibabacloud.com/gpu-milli"]` (else allocatable) divided by 1000.
pub fn shared_gpu_count(node: &Node) -> usize {
    let from = |list: &ResourceList| list.get(k8s_types::gpushare::GPU_MILLI).map(|q| q.value());
    let milli = from(&node.status.capacity)
        .or_else(|| from(&node.status.allocatable))
        .unwrap_or(0);
    usize::try_from(milli / k8s_types::gpushare::MILLI_PER_GPU).unwrap_or(0)
}

/// The number of physical NVIDIA GPUs a node manifest describes: `status.capacity["nvidia.com/gpu"]`,
/// else `status.allocatable["nvidia.com/gpu"]`, else the GPU Feature Discovery label
/// `nvidia.com/gpu.count`. On a node with a MIG, sharing or topology configuration the label comes
/// first: there the advertised `nvidia.com/gpu` counts MIG devices or replicas, while GFD's
/// `nvidia.com/gpu.count` (which the plugin publishes when the manifest does not) counts GPUs.
pub fn gpu_count(node: &Node) -> usize {
    let from = |list: &ResourceList| list.get(resource_names::NVIDIA_GPU).map(|q| q.value());
    let label = || {
        node.metadata
            .labels
            .get(node_labels::NVIDIA_GPU_COUNT)
            .and_then(|v| v.parse().ok())
    };
    let configured =
        DevicePluginConfig::from_node(&node.metadata.labels, &node.metadata.annotations, 0)
            .map_or(true, |c| c.configured);
    let n = if configured { label() } else { None }
        .or_else(|| from(&node.status.capacity))
        .or_else(|| from(&node.status.allocatable))
        .or_else(label)
        .unwrap_or(0);
    usize::try_from(n).unwrap_or(0)
}

fn product(node: &Node) -> String {
    node.metadata
        .labels
        .get(node_labels::NVIDIA_GPU_PRODUCT)
        .cloned()
        .unwrap_or_else(|| "NVIDIA-GPU".to_string())
}

fn gpu_memory(node: &Node) -> Option<u64> {
    node.metadata
        .labels
        .get(LABEL_GPU_MEMORY)
        .and_then(|v| v.parse().ok())
}

/// The device plugins of a node's machine: GPUs ([`gpu_count`]) as NVIDIA device plugins, one per
/// resource, configured by the node's labels and annotations (docs/gpus.md), and
/// `alibabacloud.com/gpu-milli` (1000 per GPU) as the GPU-share device plugin over the same GPUs
/// (docs/trace-replay.md). A configuration that does not build (only possible for a node restored
/// without validation) falls back to whole GPUs.
pub(crate) fn device_plugins(node: &Node) -> Vec<Box<dyn DevicePlugin>> {
    let n_gpus = gpu_count(node);
    let mut plugins: Vec<Box<dyn DevicePlugin>> = Vec::new();
    // A node whose GPUs the NVIDIA DRA driver manages has no GPU device plugin (cluster/dra.rs).
    if n_gpus > 0 && !k8s_deviceplugin::dra::dra_enabled(node) {
        let product = product(node);
        let built = DevicePluginConfig::from_node(
            &node.metadata.labels,
            &node.metadata.annotations,
            n_gpus,
        )
        .and_then(|cfg| plugins_for_node(n_gpus, &product, gpu_memory(node), &cfg));
        match built {
            Ok(ps) => plugins.extend(ps.into_iter().map(|p| Box::new(p) as Box<dyn DevicePlugin>)),
            Err(_) => plugins.push(Box::new(NvidiaDevicePlugin::with_product(n_gpus, &product))),
        }
    }
    // Fractional GPUs: `alibabacloud.com/gpu-milli` in the manifest (1000 per GPU) becomes the
    // GPU-share device plugin over the same GPUs (docs/trace-replay.md).
    let shared = shared_gpu_count(node);
    if shared > 0 {
        plugins.push(Box::new(k8s_deviceplugin::GpuShareDevicePlugin::new(
            shared,
        )));
    }
    plugins
}
