//! SchedulingGates (PreEnqueue): a pod with `spec.schedulingGates` is not attempted (upstream
//! `pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go`). No event is emitted;
//! the apiserver already set `PodScheduled=False, reason SchedulingGated`.

use std::sync::Arc;

use k8s_sched_framework::{Plugin, PreEnqueuePlugin, Status};
use k8s_types::core::Pod;

use super::names;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// The SchedulingGates plugin.
#[derive(Debug, Default)]
pub struct SchedulingGates;

impl SchedulingGates {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(SchedulingGates))
    }
}

impl Plugin for SchedulingGates {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::SCHEDULING_GATES
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        Some(self)
    }
}

impl PreEnqueuePlugin for SchedulingGates {
    fn pre_enqueue(&self, pod: &Pod) -> Status {
        if pod.spec.scheduling_gates.is_empty() {
            return Status::success();
        }
        let gates: Vec<&str> = pod
            .spec
            .scheduling_gates
            .iter()
            .map(|g| g.name.as_str())
            .collect();
        // Go's %v of a []string: "[a b]".
        Status::unresolvable(format!(
            "waiting for scheduling gates: [{}]",
            gates.join(" ")
        ))
    }
}

/// Queueing hints (upstream `schedulinggates/scheduling_gates.go` `EventsToRegister`,
/// `isSchedulableAfterUpdatePodSchedulingGatesEliminated`).
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::as_pods;
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };

    impl EnqueueExtensions for SchedulingGates {
        /// Pod UpdatePodSchedulingGatesEliminated with a hint.
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![ClusterEventWithHint::with_hint(
                EventResource::Pod,
                ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
            )]
        }

        fn queueing_hint(
            &self,
            _registered: &ClusterEvent,
            pod: &Pod,
            old: Option<EventObject<'_>>,
            new: Option<EventObject<'_>>,
        ) -> Result<QueueingHint, String> {
            let (_, modified) = as_pods(old, new)?;
            let modified = modified.ok_or("a pod update needs the new pod")?;
            // Only the gated pod's own update can make it schedulable.
            Ok(QueueingHint::queue_if(
                modified.metadata.uid == pod.metadata.uid,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::PodSchedulingGate;

    #[test]
    fn gated_pods_are_held() {
        let mut pod = Pod::default();
        assert!(SchedulingGates.pre_enqueue(&pod).is_success());
        pod.spec.scheduling_gates = vec![
            PodSchedulingGate { name: "a".into() },
            PodSchedulingGate { name: "b".into() },
        ];
        assert_eq!(
            SchedulingGates.pre_enqueue(&pod).message(),
            "waiting for scheduling gates: [a b]"
        );
    }
}
