//! Equal pod specs, status lists and owner references stored once.
//!
//! A controller creates the pods of one template in a burst, each with its own copy of the same
//! `ownerReferences`, and defaulting and admission make each one's spec afresh (an equal
//! `PodSpec` of about 600 bytes with its tolerations per pod, until the bind gives it a node). The
//! kubelets write every pod's `status.conditions` and `status.containerStatuses` (and
//! `initContainerStatuses`) afresh, and the pods of one template that started in the same tick
//! have equal ones (five conditions of 120 bytes and one container status each, per stored
//! version). Before an object is stored, each of these is pointed at an equal one stored recently
//! ([`RecentValues`]; specs and owner references on create only: a bound spec names its node, and
//! the versions of an object share its references already), so the store, the watch history and
//! every informer hold one allocation for all of them. Only memory changes:
//! the fields are [`k8s_types::cow_arc::CowArc`]s, equal by value, copied on write. This is
//! k8s-mini's own (kube-apiserver stores each object's bytes in etcd); see
//! `docs/architecture.md`.

use k8s_types::core::pod::{ContainerStatus, PodCondition, PodSpec};
use k8s_types::cow_arc::RecentValues;
use k8s_types::meta::OwnerReference;
use k8s_types::Object;

/// How many distinct lists of each kind are remembered: pods at different stages (scheduled,
/// started, ready) within a few ticks of each other.
const REMEMBERED: usize = 8;

/// How many distinct specs (and owner reference lists) of created objects are remembered: the
/// templates whose pods are being created in the same tick.
const REMEMBERED_SPECS: usize = 4;

/// The recently stored pod specs, status lists and owner references.
#[derive(Debug)]
pub(crate) struct PodShares {
    owner_references: RecentValues<Vec<OwnerReference>>,
    specs: RecentValues<PodSpec>,
    conditions: RecentValues<Vec<PodCondition>>,
    container_statuses: RecentValues<Vec<ContainerStatus>>,
    init_container_statuses: RecentValues<Vec<ContainerStatus>>,
}

impl Default for PodShares {
    fn default() -> Self {
        PodShares {
            owner_references: RecentValues::new(REMEMBERED_SPECS),
            specs: RecentValues::new(REMEMBERED_SPECS),
            conditions: RecentValues::new(REMEMBERED),
            container_statuses: RecentValues::new(REMEMBERED),
            init_container_statuses: RecentValues::new(REMEMBERED),
        }
    }
}

impl PodShares {
    /// Points a created object's owner references (of any kind: most have none) and a created
    /// pod's spec at equal ones of an object created recently, and a pod's status lists as
    /// [`PodShares::share`] does.
    pub(crate) fn share_created(&mut self, obj: &mut Object) {
        self.owner_references
            .share(&mut obj.meta_mut().owner_references);
        if let Object::Pod(pod) = obj {
            self.specs.share(&mut pod.spec);
        }
        self.share(obj);
    }

    /// Points a pod's conditions and (init) container statuses at equal lists stored recently
    /// (other kinds are left as they are).
    pub(crate) fn share(&mut self, obj: &mut Object) {
        if let Object::Pod(pod) = obj {
            self.conditions.share(&mut pod.status.conditions);
            self.container_statuses
                .share(&mut pod.status.container_statuses);
            self.init_container_statuses
                .share(&mut pod.status.init_container_statuses);
        }
    }
}
