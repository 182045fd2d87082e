//! Test support of the controller tests: a fake scheduler + kubelet that bind pending pods in the
//! tick they appear, make them Running/Ready the next tick, and finish terminating pods one tick
//! after their deletion started; a miniature tick loop ([`FakeCluster`]); pod accessors. The
//! in-memory apiserver and the object builders are k8s-testing's.

#![allow(dead_code)]

use k8s_controllers::ControllerManager;
use k8s_testing::FakeApi;
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Binding, Pod, PodCondition};
use k8s_types::meta::{tick_timestamp_compact, timestamp_tick};
use k8s_types::{Object, Resource};

/// The fake scheduler and kubelet of one node: binds pending pods (PodScheduled at this tick),
/// makes pods bound in an earlier tick Running and Ready, and finishes pods whose deletion started
/// in an earlier tick.
pub fn fake_scheduler_and_kubelet(api: &mut FakeApi) {
    let now = api.now;
    for pod in api.pods() {
        let key = pod.clone().into_object().key();
        if let Some(ts) = pod.metadata.deletion_timestamp.as_deref() {
            // The deletion started `deletionGracePeriodSeconds` before the deletion timestamp.
            let grace = pod.metadata.deletion_grace_period_seconds.unwrap_or(0) as u64;
            if timestamp_tick(ts).is_some_and(|t| t.saturating_sub(grace) < now) {
                api.remove(&key);
            }
            continue;
        }
        if pod.node_name().is_none() {
            let binding = Binding::new(pod.metadata.namespace(), &pod.metadata.name, "node-a");
            let mut bound = api.bind(&binding).expect("bind");
            bound.set_condition(PodCondition {
                type_: "PodScheduled".into(),
                status: "True".into(),
                last_transition_time: Some(tick_timestamp_compact(now)),
                ..Default::default()
            });
            api.update_status(Object::Pod(Box::new(bound)))
                .expect("scheduled");
            continue;
        }
        let scheduled_at = pod
            .condition("PodScheduled")
            .and_then(|c| c.last_transition_time.as_deref())
            .and_then(timestamp_tick);
        if !pod.is_ready() && scheduled_at.is_some_and(|t| t < now) {
            let mut p = pod.clone();
            p.status.phase = Some("Running".into());
            p.set_condition(PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(tick_timestamp_compact(now)),
                ..Default::default()
            });
            api.update_status(Object::Pod(Box::new(p))).expect("ready");
        }
    }
}

/// The tick loop of k8s-cluster in miniature: clock, controllers, scheduler + kubelet.
pub struct FakeCluster {
    pub api: FakeApi,
    pub manager: ControllerManager,
}

impl FakeCluster {
    pub fn new() -> Self {
        FakeCluster {
            api: FakeApi::at(0),
            manager: ControllerManager::new(),
        }
    }

    pub fn step(&mut self) {
        self.api.now += 1;
        self.manager.reconcile(&mut self.api);
        fake_scheduler_and_kubelet(&mut self.api);
    }

    /// Pods not being deleted (and not terminal).
    pub fn active_pods(&self) -> Vec<Pod> {
        self.api
            .pods()
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none() && !p.is_terminal())
            .collect()
    }

    /// Active pods that are Ready (minReadySeconds 0: ready = available).
    pub fn available_pods(&self) -> Vec<Pod> {
        self.active_pods()
            .into_iter()
            .filter(|p| p.is_ready())
            .collect()
    }
}

/// The image of a pod's first container.
pub fn image(p: &Pod) -> &str {
    p.spec
        .containers
        .first()
        .map(|c| c.image.as_str())
        .unwrap_or("")
}

/// The name of a pod's controller owner.
pub fn owner(p: &Pod) -> String {
    p.metadata
        .controller_ref()
        .map(|r| r.name.clone())
        .unwrap_or_default()
}

/// Changes the Deployment's container image (a template change, as `kubectl set image`).
pub fn set_image(api: &mut FakeApi, name: &str, image: &str) {
    let mut d = api.deployment(name);
    d.spec.template.spec.containers[0].image = image.into();
    api.update_typed(d).expect("update deployment");
}
