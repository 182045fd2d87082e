//! The simulated container runtime and the kubelet's record of each pod it runs: what the CRI
//! runtime (containerd) and the PLEG's pod cache hold upstream (`pkg/kubelet/container`,
//! `pkg/kubelet/pleg/generic.go`), reduced to the states k8s-mini shows.
//!
//! A pod's sandbox is created (with its IP) when the pod is admitted; its containers are created in
//! the same sync and start `startup_ticks` ticks later, all at once. Containers never exit on their
//! own: only deletion stops them. Images are always "already present on machine".

use std::collections::BTreeMap;

use k8s_types::core::{Container, Pod};
use k8s_types::{Shared, Tick};

/// Where a pod is in its life on this node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodPhase {
    /// Admitted; sandbox and containers created, containers not started yet (`ContainerCreating`).
    Creating {
        /// The tick the pod was admitted.
        since: Tick,
    },
    /// Every container running since the tick.
    Running {
        /// The tick the containers started.
        started: Tick,
    },
    /// Rejected at admission (phase Failed); holds nothing.
    Rejected,
    /// Found already terminal (Succeeded/Failed) or stopped after turning terminal; holds nothing.
    Terminated,
}

impl PodPhase {
    /// True while the pod holds node resources (upstream "active" pods).
    pub fn is_active(self) -> bool {
        matches!(self, PodPhase::Creating { .. } | PodPhase::Running { .. })
    }
}

/// One pod as the kubelet knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimePod {
    /// `metadata.uid` when first seen (a new pod with the same name is a different pod).
    pub uid: String,
    /// The pod as last listed, shared with the apiserver (its spec, the admitted one since a
    /// pod's spec is immutable in what the simulated runtime reads, drives resource accounting and
    /// container names).
    pub pod: Shared<Pod>,
    /// Lifecycle state.
    pub phase: PodPhase,
    /// The sandbox IP, when the pod got one from the pod CIDR (host-network pods use the node IP and
    /// are not recorded here).
    pub pod_ip: Option<String>,
}

impl RuntimePod {
    /// Containers that run until the pod stops: app containers, then sidecars (restartable init
    /// containers), in spec order.
    pub fn long_running_containers(&self) -> Vec<&Container> {
        self.pod
            .spec
            .containers
            .iter()
            .chain(
                self.pod
                    .spec
                    .init_containers
                    .iter()
                    .filter(|c| c.restart_policy.as_deref() == Some("Always")),
            )
            .collect()
    }

    /// Containers in the order the kubelet starts them: init containers, then app containers.
    pub fn start_order(&self) -> Vec<&Container> {
        self.pod
            .spec
            .init_containers
            .iter()
            .chain(self.pod.spec.containers.iter())
            .collect()
    }

    /// Containers in the order the kubelet stops them on deletion (upstream
    /// `killContainersWithSyncResult`: app containers, then sidecars in reverse order).
    pub fn stop_order(&self) -> Vec<&Container> {
        let sidecars: Vec<&Container> = self
            .pod
            .spec
            .init_containers
            .iter()
            .filter(|c| c.restart_policy.as_deref() == Some("Always"))
            .collect();
        self.pod
            .spec
            .containers
            .iter()
            .chain(sidecars.into_iter().rev())
            .collect()
    }
}

/// Every pod the kubelet knows, by `namespace/name`.
#[derive(Clone, Debug, Default)]
pub struct Runtime {
    pods: BTreeMap<String, RuntimePod>,
}

impl Runtime {
    /// The pod under `key`.
    pub fn get(&self, key: &str) -> Option<&RuntimePod> {
        self.pods.get(key)
    }

    /// The pod under `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut RuntimePod> {
        self.pods.get_mut(key)
    }

    /// Records a pod (replacing any record under the same key).
    pub fn insert(&mut self, key: String, pod: RuntimePod) {
        self.pods.insert(key, pod);
    }

    /// Forgets a pod, returning its record.
    pub fn remove(&mut self, key: &str) -> Option<RuntimePod> {
        self.pods.remove(key)
    }

    /// True when some pod's containers are still being created (they start on a later tick).
    pub fn any_creating(&self) -> bool {
        self.pods
            .values()
            .any(|p| matches!(p.phase, PodPhase::Creating { .. }))
    }

    /// Every known key, in order.
    pub fn keys(&self) -> Vec<String> {
        self.pods.keys().cloned().collect()
    }

    /// Pods holding node resources, in key order (upstream `GetActivePods`).
    pub fn active_pods(&self) -> Vec<&Pod> {
        self.pods
            .values()
            .filter(|p| p.phase.is_active())
            .map(|p| &*p.pod)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str, sidecar: bool) -> Container {
        Container {
            name: name.into(),
            restart_policy: sidecar.then(|| "Always".to_string()),
            ..Default::default()
        }
    }

    #[test]
    fn container_orders_follow_upstream() {
        let mut pod = Pod::default();
        pod.spec.init_containers = vec![c("s1", true), c("init", false), c("s2", true)];
        pod.spec.containers = vec![c("a", false), c("b", false)];
        let rp = RuntimePod {
            uid: "u".into(),
            pod: Shared::from_typed(pod),
            phase: PodPhase::Creating { since: 3 },
            pod_ip: None,
        };
        let names = |v: Vec<&Container>| v.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(rp.start_order()), vec!["s1", "init", "s2", "a", "b"]);
        assert_eq!(names(rp.stop_order()), vec!["a", "b", "s2", "s1"]);
        assert_eq!(
            names(rp.long_running_containers()),
            vec!["a", "b", "s1", "s2"]
        );
        assert!(rp.phase.is_active());
        assert!(!PodPhase::Rejected.is_active());
    }
}
