//! DefaultBinder (Bind): posts a `v1` Binding to the `pods/binding` subresource (upstream
//! `pkg/scheduler/framework/plugins/defaultbinder/default_binder.go`).

use std::sync::Arc;

use k8s_sched_framework::{BindPlugin, CycleState, Handle, Plugin, Status};
use k8s_types::core::{Binding, Pod};

use super::names;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// The DefaultBinder plugin.
#[derive(Debug, Default)]
pub struct DefaultBinder;

impl DefaultBinder {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(DefaultBinder))
    }
}

impl Plugin for DefaultBinder {
    fn name(&self) -> &str {
        names::DEFAULT_BINDER
    }
    fn as_bind(&self) -> Option<&dyn BindPlugin> {
        Some(self)
    }
}

impl BindPlugin for DefaultBinder {
    fn bind(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        node_name: &str,
        handle: &mut dyn Handle,
    ) -> Status {
        let mut binding = Binding::new(pod.metadata.namespace(), &pod.metadata.name, node_name);
        binding.metadata.uid = pod.metadata.uid.clone();
        // Annotations Reserve plugins asked for (k8s-mini: see `crate::binding_annotations`); the
        // apiserver copies a Binding's annotations onto the pod.
        if let Some(ann) = crate::binding_annotations::get(state) {
            binding.metadata.annotations = ann.clone().into();
        }
        match handle.client_mut().bind_only(&binding) {
            Ok(()) => Status::success(),
            Err(e) => Status::error(e.message),
        }
    }
}
