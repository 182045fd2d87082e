//! NodePorts (PreFilter, Filter): a pod's `hostPort`s must be free on the node (upstream
//! `pkg/scheduler/framework/plugins/nodeports/node_ports.go`). PreFilter collects the wanted ports
//! and returns Skip for pods without host ports.

use std::sync::Arc;

use crate::runtime::kernel::NODE_FLAG_HOST_PORTS;
use k8s_sched_framework::node_info::pod_host_ports;
use k8s_sched_framework::{
    CycleState, FilterPlugin, Handle, NodeInfo, Plugin, PreFilterPlugin, PreFilterResult, Status,
};
use k8s_types::core::Pod;

use super::names;
use crate::runtime::kernel::{NodeFilterKernel, NodeKernels};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// Upstream `ErrReason`.
pub const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";
/// CycleState key of the wanted ports.
pub const PRE_FILTER_STATE_KEY: &str = "PreFilterNodePorts";

/// The wanted host ports: (hostIP, protocol, hostPort).
#[derive(Clone, Debug, Default)]
pub struct PreFilterState(pub Vec<(String, String, i32)>);

/// The NodePorts plugin.
#[derive(Debug, Default)]
pub struct NodePorts;

impl NodePorts {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(NodePorts))
    }
}

impl Plugin for NodePorts {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::NODE_PORTS
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl PreFilterPlugin for NodePorts {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
        let ports = pod_host_ports(pod);
        if ports.is_empty() {
            return (None, Status::skip());
        }
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(ports));
        (None, Status::success())
    }
}

impl FilterPlugin for NodePorts {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        let stored =
            state.read_or_compute(PRE_FILTER_STATE_KEY, || PreFilterState(pod_host_ports(pod)));
        let wanted = &stored.0;
        let used = node.used_ports();
        if wanted
            .iter()
            .any(|(ip, proto, port)| used.check_conflict(ip, proto, *port))
        {
            return Status::unschedulable(ERR_REASON);
        }
        Status::success()
    }
}

impl NodeKernels for NodePorts {
    /// Nodes without host ports in use pass (nothing can conflict).
    fn filter_kernel(&self, _state: &CycleState, _pod: &Pod) -> Option<NodeFilterKernel> {
        Some(NodeFilterKernel::unless_flags(NODE_FLAG_HOST_PORTS))
    }
}

/// Queueing hints (upstream `nodeports/node_ports.go` `EventsToRegister`,
/// `isSchedulableAfterPodDeleted`).
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::as_pods;
    use k8s_sched_framework::HostPortInfo;
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };

    impl EnqueueExtensions for NodePorts {
        /// Pod Delete with a hint (host ports are immutable, so pod updates cannot help) and Node
        /// Add without one.
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![
                ClusterEventWithHint::with_hint(EventResource::Pod, ActionType::DELETE),
                ClusterEventWithHint::without_hint(EventResource::Node, ActionType::ADD),
            ]
        }

        fn queueing_hint(
            &self,
            _registered: &ClusterEvent,
            pod: &Pod,
            old: Option<EventObject<'_>>,
            new: Option<EventObject<'_>>,
        ) -> Result<QueueingHint, String> {
            let (deleted, _) = as_pods(old, new)?;
            let deleted = deleted.ok_or("a pod deletion needs the deleted pod")?;
            // An unscheduled, unnominated pod held no ports.
            if deleted.node_name().is_none()
                && deleted
                    .status
                    .nominated_node_name
                    .as_deref()
                    .is_none_or(str::is_empty)
            {
                return Ok(QueueingHint::QueueSkip);
            }
            let ports = pod_host_ports(deleted);
            if ports.is_empty() {
                return Ok(QueueingHint::QueueSkip);
            }
            let mut in_use = HostPortInfo::default();
            for (ip, proto, port) in &ports {
                in_use.add(ip, proto, *port);
            }
            // No common port: deleting it cannot make room for the pod.
            let conflict = pod_host_ports(pod)
                .iter()
                .any(|(ip, proto, port)| in_use.check_conflict(ip, proto, *port));
            Ok(QueueingHint::queue_if(conflict))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_sched_framework::PodInfo;
    use k8s_types::core::{Container, ContainerPort, Node};
    use k8s_types::object::Shared;

    fn pod_with_port(port: i32) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = format!("p{port}");
        p.spec.containers.push(Container {
            ports: vec![ContainerPort {
                container_port: 80,
                host_port: Some(port),
                ..Default::default()
            }],
            ..Default::default()
        });
        p
    }

    #[test]
    fn used_host_port_rejects() {
        let mut ni = NodeInfo::new(Arc::new(Node::default()));
        ni.add_pod(PodInfo::new(Shared::from_typed(pod_with_port(8080))));
        let mut state = CycleState::new();
        state.write(
            PRE_FILTER_STATE_KEY,
            PreFilterState(pod_host_ports(&pod_with_port(8080))),
        );
        let s = NodePorts.filter(&state, &pod_with_port(8080), &ni);
        assert_eq!(s.message(), ERR_REASON);
        assert_eq!(s.code(), k8s_sched_framework::Code::Unschedulable);
        assert!(NodePorts
            .filter(&CycleState::new(), &pod_with_port(9090), &ni)
            .is_success());
    }
}
