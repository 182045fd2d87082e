//! NodeName (Filter): a pod that names a node in `spec.nodeName` fits only that node (upstream
//! `pkg/scheduler/framework/plugins/nodename/node_name.go`).

use std::sync::Arc;

use k8s_sched_framework::{CycleState, FilterPlugin, NodeInfo, Plugin, Status};
use k8s_types::core::Pod;

use super::names;
use crate::runtime::kernel::{NodeFilterKernel, NodeKernels};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// Upstream `ErrReason`.
pub const ERR_REASON: &str = "node(s) didn't match the requested node name";

/// The NodeName plugin.
#[derive(Debug, Default)]
pub struct NodeName;

impl NodeName {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(NodeName))
    }
}

impl Plugin for NodeName {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::NODE_NAME
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl FilterPlugin for NodeName {
    fn filter(&self, _state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        match pod.node_name() {
            Some(n) if n != node.name() => Status::unresolvable(ERR_REASON),
            _ => Status::success(),
        }
    }

    fn filter_nodes(
        &self,
        _state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        failed: &mut Vec<(usize, Status)>,
    ) {
        // Pods without spec.nodeName fit every node.
        let Some(wanted) = pod.node_name() else {
            return;
        };
        for (i, node) in nodes.iter().enumerate() {
            if node.name() != wanted {
                failed.push((i, Status::unresolvable(ERR_REASON)));
            }
        }
    }
}

impl NodeKernels for NodeName {
    /// A pod without `spec.nodeName` fits every node.
    fn filter_kernel(&self, _state: &CycleState, pod: &Pod) -> Option<NodeFilterKernel> {
        pod.node_name().is_none().then_some(NodeFilterKernel::PASS)
    }
}

/// Queueing hints (upstream `nodename/node_name.go` `EventsToRegister`,
/// `isSchedulableAfterNodeAdd`).
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::as_nodes;
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };

    impl EnqueueExtensions for NodeName {
        /// Node Add with a hint.
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![ClusterEventWithHint::with_hint(
                EventResource::Node,
                ActionType::ADD,
            )]
        }

        fn queueing_hint(
            &self,
            _registered: &ClusterEvent,
            pod: &Pod,
            old: Option<EventObject<'_>>,
            new: Option<EventObject<'_>>,
        ) -> Result<QueueingHint, String> {
            let (_, added) = as_nodes(old, new)?;
            let added = added.ok_or("a node add needs the new node")?;
            // Upstream `Fits`: no spec.nodeName, or the added node is the one named.
            let fits = pod
                .spec
                .node_name
                .as_deref()
                .is_none_or(|n| n.is_empty() || n == added.metadata.name);
            Ok(QueueingHint::queue_if(fits))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::Node;

    #[test]
    fn only_the_named_node_fits() {
        let mut node = Node::default();
        node.metadata.name = "a".into();
        let ni = NodeInfo::new(Arc::new(node));
        let mut pod = Pod::default();
        assert!(NodeName.filter(&CycleState::new(), &pod, &ni).is_success());
        pod.spec.node_name = Some("b".into());
        assert_eq!(
            NodeName.filter(&CycleState::new(), &pod, &ni).message(),
            "node(s) didn't match the requested node name"
        );
    }
}
