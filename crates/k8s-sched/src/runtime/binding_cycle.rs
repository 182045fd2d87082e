//! The binding-cycle runners of a [`Framework`] that sit around Bind: PreBind and PostBind
//! (upstream `pkg/scheduler/framework/runtime/framework.go` `RunPreBindPlugins`,
//! `RunPostBindPlugins`), and the profile's queueing-hint registrations.

use k8s_sched_framework::{CycleState, Handle, Status};
use k8s_types::core::Pod;

use super::Framework;
use crate::queueing_hints::QueueingHintMap;

/// Upstream `RunPreBindPlugins` error text: `running PreBind plugin "<name>": <message>`.
pub fn pre_bind_error(plugin: &str, message: &str) -> String {
    format!("running PreBind plugin {plugin:?}: {message}")
}

impl Framework {
    /// Upstream `RunPreBindPlugins`: every PreBind plugin in order; the first failure stops. A
    /// rejecting status keeps its code and gets the plugin's name; any other failure becomes an
    /// `Error` status `running PreBind plugin "<name>": <message>`.
    pub fn run_pre_bind(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: &str,
        handle: &mut dyn Handle,
    ) -> Status {
        for p in &self.pre_bind {
            let Some(pb) = p.as_pre_bind() else {
                continue;
            };
            let s = pb.pre_bind(state, pod, node, handle);
            if s.is_success() {
                continue;
            }
            if s.is_rejected() {
                return s.with_plugin(p.name());
            }
            return Status::error(pre_bind_error(p.name(), &s.message())).with_plugin(p.name());
        }
        Status::success()
    }

    /// Upstream `RunPostBindPlugins`: every PostBind plugin in order, after a successful bind.
    pub fn run_post_bind(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node: &str,
        handle: &mut dyn Handle,
    ) {
        for p in &self.post_bind {
            if let Some(pb) = p.as_post_bind() {
                pb.post_bind(state, pod, node, handle);
            }
        }
    }

    /// The cluster events each plugin of the profile registered (upstream
    /// `frameworkImpl.EnqueueExtensions` turned into the queue's `QueueingHintMap`).
    pub fn queueing_hints(&self) -> &QueueingHintMap {
        &self.queueing_hints
    }
}
