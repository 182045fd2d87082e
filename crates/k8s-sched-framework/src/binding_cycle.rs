//! The binding-cycle extension points around Bind: [`PreBindPlugin`] (may still fail the pod, e.g.
//! provision volumes before the pod is bound) and [`PostBindPlugin`] (informational, after a
//! successful bind). Mirrors upstream `staging/src/k8s.io/kube-scheduler/framework/interface.go`
//! (`PreBindPlugin`, `PostBindPlugin`) and their runners in
//! `pkg/scheduler/framework/runtime/framework.go` (`RunPreBindPlugins`, `RunPostBindPlugins`).
//!
//! Order in the binding cycle (upstream `bindingCycle`): wait at Permit, PreBind (every plugin, in
//! order), Bind (the first plugin that does not Skip), then PostBind (every plugin, in order). When
//! a PreBind or Bind plugin fails the Reserve plugins' Unreserve runs in reverse order, the assumed
//! pod is forgotten and the pod goes back to the queue.

use super::cycle_state::CycleState;
use super::interface::{Handle, Plugin};
use super::status::Status;
use k8s_types::core::Pod;

/// PreBind: work that must succeed before the pod is bound (upstream `PreBindPlugin`; in-tree
/// upstream users are VolumeBinding and DynamicResources).
pub trait PreBindPlugin: Plugin {
    /// Success lets binding go on. A rejecting status (Unschedulable, UnschedulableAndUnresolvable)
    /// fails the pod with a FitError on the chosen node; any other non-success status is an
    /// internal error, reported as `running PreBind plugin "<name>": <message>`. Either way the
    /// pod is unreserved, forgotten and retried.
    fn pre_bind(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node_name: &str,
        handle: &mut dyn Handle,
    ) -> Status;
}

/// PostBind: told about a pod after it was bound (upstream `PostBindPlugin`), e.g. to clean up
/// state. It cannot fail the pod.
pub trait PostBindPlugin: Plugin {
    /// Called once the Binding succeeded, with the node the pod was bound to.
    fn post_bind(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node_name: &str,
        handle: &mut dyn Handle,
    );
}
