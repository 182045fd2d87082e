//! NodeUnschedulable (Filter): rejects cordoned nodes (`spec.unschedulable`) unless the pod
//! tolerates the `node.kubernetes.io/unschedulable:NoSchedule` taint (upstream
//! `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`).

use std::sync::Arc;

use crate::runtime::kernel::NODE_FLAG_UNSCHEDULABLE;
use k8s_sched_framework::{CycleState, FilterPlugin, NodeInfo, Plugin, Status};
use k8s_types::core::taints::{effects, tolerated};
use k8s_types::core::{Pod, Taint};

use super::names;
use crate::runtime::kernel::{NodeFilterKernel, NodeKernels};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// Upstream `ErrReasonUnschedulable`.
pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
/// Upstream `v1.TaintNodeUnschedulable`.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// The NodeUnschedulable plugin.
#[derive(Debug, Default)]
pub struct NodeUnschedulable;

impl NodeUnschedulable {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(NodeUnschedulable))
    }
}

impl Plugin for NodeUnschedulable {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::NODE_UNSCHEDULABLE
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl FilterPlugin for NodeUnschedulable {
    fn filter(&self, _state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if !node.node().spec.unschedulable {
            return Status::success();
        }
        let taint = Taint {
            key: TAINT_NODE_UNSCHEDULABLE.to_string(),
            value: String::new(),
            effect: effects::NO_SCHEDULE.to_string(),
            time_added: None,
        };
        if tolerated(&taint, &pod.spec.tolerations) {
            return Status::success();
        }
        Status::unresolvable(ERR_REASON_UNSCHEDULABLE)
    }

    fn filter_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        failed: &mut Vec<(usize, Status)>,
    ) {
        for (i, node) in nodes.iter().enumerate() {
            if node.is_unschedulable() {
                let s = self.filter(state, pod, node);
                if !s.is_success() {
                    failed.push((i, s));
                }
            }
        }
    }
}

impl NodeKernels for NodeUnschedulable {
    /// Schedulable nodes pass (cordoned ones go through `filter`: the pod may tolerate it).
    fn filter_kernel(&self, _state: &CycleState, _pod: &Pod) -> Option<NodeFilterKernel> {
        Some(NodeFilterKernel::unless_flags(NODE_FLAG_UNSCHEDULABLE))
    }
}

/// Queueing hints (upstream `nodeunschedulable/node_unschedulable.go` `EventsToRegister`,
/// `isSchedulableAfterNodeChange`, `isSchedulableAfterPodTolerationChange`).
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::{as_nodes, as_pods};
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };

    fn unschedulable_taint() -> Taint {
        Taint {
            key: TAINT_NODE_UNSCHEDULABLE.to_string(),
            value: String::new(),
            effect: effects::NO_SCHEDULE.to_string(),
            time_added: None,
        }
    }

    impl EnqueueExtensions for NodeUnschedulable {
        /// Node Add|UpdateNodeTaint (uncordoning is reported as a taint update) and Pod
        /// UpdatePodToleration, each with a hint.
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![
                ClusterEventWithHint::with_hint(
                    EventResource::Node,
                    ActionType::ADD | ActionType::UPDATE_NODE_TAINT,
                ),
                ClusterEventWithHint::with_hint(
                    EventResource::Pod,
                    ActionType::UPDATE_POD_TOLERATION,
                ),
            ]
        }

        fn queueing_hint(
            &self,
            registered: &ClusterEvent,
            pod: &Pod,
            old: Option<EventObject<'_>>,
            new: Option<EventObject<'_>>,
        ) -> Result<QueueingHint, String> {
            if registered.resource == EventResource::Node {
                let (original, modified) = as_nodes(old, new)?;
                let modified = modified.ok_or("a node event needs the new node")?;
                // Queue when the node became schedulable, or was added schedulable.
                let queue = match original {
                    Some(o) => o.spec.unschedulable && !modified.spec.unschedulable,
                    None => !modified.spec.unschedulable,
                };
                return Ok(QueueingHint::queue_if(queue));
            }
            let (original, modified) = as_pods(old, new)?;
            let (Some(original), Some(modified)) = (original, modified) else {
                return Err("a pod update needs both pods".to_string());
            };
            let taint = unschedulable_taint();
            if modified.metadata.uid == pod.metadata.uid
                && !tolerated(&taint, &original.spec.tolerations)
                && tolerated(&taint, &modified.spec.tolerations)
            {
                return Ok(QueueingHint::Queue);
            }
            Ok(QueueingHint::QueueSkip)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::{Node, Toleration};

    #[test]
    fn cordoned_node_rejected_unless_tolerated() {
        let mut node = Node::default();
        node.spec.unschedulable = true;
        let ni = NodeInfo::new(Arc::new(node));
        let mut pod = Pod::default();
        let s = NodeUnschedulable.filter(&CycleState::new(), &pod, &ni);
        assert_eq!(s.message(), "node(s) were unschedulable");
        assert_eq!(
            s.code(),
            k8s_sched_framework::Code::UnschedulableAndUnresolvable
        );
        pod.spec.tolerations.push(Toleration {
            key: TAINT_NODE_UNSCHEDULABLE.into(),
            operator: "Exists".into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        });
        assert!(NodeUnschedulable
            .filter(&CycleState::new(), &pod, &ni)
            .is_success());
    }
}
