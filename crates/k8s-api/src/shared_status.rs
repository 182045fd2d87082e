//! Equal pod status lists stored once.
//!
//! The kubelets write every pod's `status.conditions` and `status.containerStatuses` afresh, and
//! the pods of one template that started in the same tick have equal ones (five conditions of 120
//! bytes and one container status each, per stored version). Before a pod is stored, each list is
//! pointed at an equal list stored recently ([`RecentValues`]), so the store, the watch history
//! and every informer hold one allocation for all of them. Only memory changes: the lists are
//! [`k8s_types::cow_arc::CowArc`]s, equal by value, copied on write. This is k8s-mini's own
//! (kube-apiserver stores each object's bytes in etcd); see `docs/architecture.md`.

use k8s_types::core::pod::{ContainerStatus, PodCondition};
use k8s_types::cow_arc::RecentValues;
use k8s_types::Object;

/// How many distinct lists of each kind are remembered: pods at different stages (scheduled,
/// started, ready) within a few ticks of each other.
const REMEMBERED: usize = 8;

/// The recently stored pod status lists.
#[derive(Debug)]
pub(crate) struct PodStatusShares {
    conditions: RecentValues<Vec<PodCondition>>,
    container_statuses: RecentValues<Vec<ContainerStatus>>,
}

impl Default for PodStatusShares {
    fn default() -> Self {
        PodStatusShares {
            conditions: RecentValues::new(REMEMBERED),
            container_statuses: RecentValues::new(REMEMBERED),
        }
    }
}

impl PodStatusShares {
    /// Points a pod's conditions and container statuses at equal lists stored recently (other
    /// kinds are left as they are).
    pub(crate) fn share(&mut self, obj: &mut Object) {
        if let Object::Pod(pod) = obj {
            self.conditions.share(&mut pod.status.conditions);
            self.container_statuses
                .share(&mut pod.status.container_statuses);
        }
    }
}
