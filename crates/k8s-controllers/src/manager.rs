//! [`ControllerManager`]: kube-controller-manager (upstream `cmd/kube-controller-manager`), here a
//! list of [`Controller`]s run once each per tick, in order.

use k8s_types::apiserver::ApiClient;
use k8s_types::controller::Controller;

use crate::deployment::DeploymentController;
use crate::garbage_collector::GarbageCollector;
use crate::pod_gc::PodGarbageCollector;
use crate::replica_set::ReplicaSetController;
use crate::taint_eviction::TaintEvictionController;

/// Runs its controllers one after the other, each making one pass per tick.
pub struct ControllerManager {
    controllers: Vec<Box<dyn Controller>>,
}

impl Default for ControllerManager {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ControllerManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerManager")
            .field("controllers", &self.controller_names())
            .finish()
    }
}

impl ControllerManager {
    /// The default set, in tick order: taint eviction, pod GC, Deployment, ReplicaSet, garbage
    /// collector. The evictors go first so a ReplicaSet replaces what they delete in the same tick;
    /// the Deployment controller goes before the ReplicaSet controller so a ReplicaSet it scales gets
    /// its pods in the same tick.
    pub fn new() -> Self {
        Self::with_controllers(vec![
            Box::new(TaintEvictionController::new()),
            Box::new(PodGarbageCollector::new()),
            Box::new(DeploymentController::new()),
            Box::new(ReplicaSetController::new()),
            Box::new(GarbageCollector::new()),
        ])
    }

    /// A manager running exactly `controllers`, in the given order.
    pub fn with_controllers(controllers: Vec<Box<dyn Controller>>) -> Self {
        ControllerManager { controllers }
    }

    /// One tick: each controller's [`Controller::reconcile`] once, in order.
    pub fn reconcile(&mut self, api: &mut dyn ApiClient) {
        for c in &mut self.controllers {
            let _span = tracing::debug_span!("controller", name = c.name()).entered();
            c.reconcile(api);
        }
    }

    /// The controllers' names, in run order (e.g. `deployment-controller`).
    pub fn controller_names(&self) -> Vec<&str> {
        self.controllers.iter().map(|c| c.name()).collect()
    }
}
