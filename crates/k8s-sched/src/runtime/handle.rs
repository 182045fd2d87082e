//! [`CycleHandle`]: the [`Handle`] plugins get during a scheduling attempt: the tick's snapshot,
//! the waiting pods, the nominator, the apiserver and the profile's event source (upstream
//! `frameworkImpl` as `framework.Handle`).

use k8s_types::object::Shared;
use std::sync::Arc;

use k8s_sched_framework::{CycleState, Handle, NodeInfo, PodInfo, Status, WaitingPodInfo};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::Pod;
use k8s_types::object::Object;
use k8s_types::Tick;

use super::Framework;
use crate::cache::Cache;
use crate::nominator::Nominator;
use crate::waiting::WaitingPods;

/// The framework as one attempt's plugins see it.
pub struct CycleHandle<'a> {
    /// The profile.
    pub fwk: &'a Framework,
    /// The apiserver.
    pub api: &'a mut dyn ApiClient,
    /// The snapshot.
    pub cache: &'a Cache,
    /// Pods held at Permit.
    pub waiting: &'a mut WaitingPods,
    /// Nominated pods.
    pub nominator: &'a Nominator,
    /// The current tick.
    pub now: Tick,
}

impl Handle for CycleHandle<'_> {
    fn now(&self) -> Tick {
        self.now
    }

    fn scheduler_name(&self) -> &str {
        self.fwk.scheduler_name()
    }

    fn node_infos(&self) -> &[NodeInfo] {
        self.cache.node_infos()
    }

    fn node_info(&self, name: &str) -> Option<&NodeInfo> {
        self.cache.node_info(name)
    }

    fn scheduler_internal(&self) -> Option<&dyn std::any::Any> {
        Some(self.cache.node_arrays())
    }

    fn node_infos_with_pod_affinity(&self) -> Vec<&NodeInfo> {
        self.cache.nodes_with_pod_affinity()
    }

    fn node_infos_with_required_anti_affinity(&self) -> Vec<&NodeInfo> {
        self.cache.nodes_with_required_anti_affinity()
    }

    fn image_summary(&self, image: &str) -> Option<(i64, usize)> {
        self.cache.image_summary(image)
    }

    fn pod_group_pods(&self, namespace: &str, pod_group: &str) -> Vec<Shared<Pod>> {
        self.cache.pod_group_pods(namespace, pod_group)
    }

    fn scheduling_group_pods(&self, namespace: &str, name: &str) -> Vec<Shared<Pod>> {
        self.cache.scheduling_group_pods(namespace, name)
    }

    fn assigned_node(&self, pod: &Pod) -> Option<&str> {
        self.cache.placement(&pod.key())
    }

    fn pods(&self) -> &[Shared<Pod>] {
        self.cache.pods()
    }

    fn pod_disruption_budgets(&self) -> Vec<Arc<k8s_types::policy::PodDisruptionBudget>> {
        self.cache.pdbs()
    }

    fn client(&self) -> &dyn ApiClient {
        &*self.api
    }

    fn client_mut(&mut self) -> &mut dyn ApiClient {
        &mut *self.api
    }

    fn record_event(&mut self, involved: &Object, type_: &str, reason: &str, message: &str) {
        self.fwk
            .record_event(&mut *self.api, involved, type_, reason, message);
    }

    fn waiting_pods(&self) -> Vec<WaitingPodInfo> {
        self.waiting.infos()
    }

    fn allow_waiting_pod(&mut self, uid: &str, plugin: &str) {
        self.waiting.allow(uid, plugin);
    }

    fn reject_waiting_pod(&mut self, uid: &str, plugin: &str, message: &str) {
        self.waiting.reject(uid, plugin, message);
    }

    fn nominated_pods_for_node(&self, node: &str) -> Vec<Shared<Pod>> {
        self.nominator.pods_for_node(node).to_vec()
    }

    fn run_filter_plugins_with_nominated_pods(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
    ) -> Status {
        let skips = self.fwk.filter_skips(state);
        self.fwk.run_filter_with_nominated(
            state,
            pod,
            node,
            &skips,
            self.nominator.pods_for_node(node.name()),
        )
    }

    fn run_pre_filter_extension_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        pod_to_add: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        self.fwk
            .run_pre_filter_extension_add_pod(state, pod, pod_to_add, node)
    }

    fn run_pre_filter_extension_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        pod_to_remove: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        self.fwk
            .run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node)
    }
}
