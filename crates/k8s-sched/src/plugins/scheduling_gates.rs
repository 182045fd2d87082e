//! SchedulingGates (PreEnqueue): a pod with `spec.schedulingGates` is not attempted (upstream
//! `pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go`). No event is emitted;
//! the apiserver already set `PodScheduled=False, reason SchedulingGated`.

use std::sync::Arc;

use k8s_types::core::Pod;
use k8s_types::framework::{Plugin, PreEnqueuePlugin, Status};

use super::names;
use crate::error::ConfigError;
use crate::registry::PluginArgs;

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
