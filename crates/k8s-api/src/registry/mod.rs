//! Per-kind REST strategies (upstream `pkg/registry/<group>/<kind>/strategy.go`): what the apiserver
//! does to an object between admission and storage on create (`PrepareForCreate`: reset status,
//! set generation), on update (`PrepareForUpdate`: keep the stored status, bump generation when the
//! spec changes) and on a `/status` update (take only the status). The generic system-field rules
//! (`k8s.io/apiserver/pkg/registry/rest/create.go` `BeforeCreate`, `update.go` `BeforeUpdate`) are in
//! this module.

pub mod cron_job;
pub mod daemon_set;
pub mod deployment;
pub mod job;
pub mod namespace;
pub mod node;
pub mod other;
pub mod persistent_volume_claim;
pub mod pod;
pub mod pod_disruption_budget;
pub mod pod_group;
pub mod replica_set;
pub mod resource;
pub mod resource_quota;
pub mod service;
pub mod stateful_set;
pub mod workload;

use k8s_types::meta::tick_timestamp_compact;
use k8s_types::{Object, Tick};

/// Namespace rules of `BeforeCreate`/`BeforeUpdate`: a namespaced object without a namespace goes to
/// `default` (what kubectl does with no `-n`); a cluster-scoped object's namespace is cleared.
pub fn normalize_namespace(obj: &mut Object) {
    let namespaced = obj.kind().namespaced();
    let meta = obj.meta_mut();
    if namespaced {
        if meta.namespace().is_empty() {
            meta.namespace = Some("default".into());
        }
    } else {
        meta.namespace = None;
    }
}

/// The namespace a request for `kind` addresses: `default` when a namespaced kind is asked for
/// with an empty namespace, empty for cluster-scoped kinds.
pub fn request_namespace(kind: &k8s_types::Kind, namespace: &str) -> String {
    if !kind.namespaced() {
        String::new()
    } else if namespace.is_empty() {
        "default".to_string()
    } else {
        namespace.to_string()
    }
}

/// Upstream `BeforeCreate`'s system fields and the kind's `PrepareForCreate`: clears
/// resourceVersion and deletion fields, sets `creationTimestamp` from `now` and `uid`, then applies
/// the kind's create rules.
pub fn prepare_for_create(obj: &mut Object, now: Tick, uid: String) {
    {
        let meta = obj.meta_mut();
        meta.resource_version = None;
        meta.deletion_timestamp = None;
        meta.deletion_grace_period_seconds = None;
        meta.creation_timestamp = Some(tick_timestamp_compact(now));
        meta.uid = Some(uid);
    }
    match obj {
        Object::Pod(p) => pod::prepare_for_create(p),
        Object::Deployment(d) => deployment::prepare_for_create(d),
        Object::ReplicaSet(rs) => replica_set::prepare_for_create(rs),
        Object::Job(j) => job::prepare_for_create(j),
        Object::DaemonSet(ds) => daemon_set::prepare_for_create(ds),
        Object::CronJob(cj) => cron_job::prepare_for_create(cj),
        Object::StatefulSet(ss) => stateful_set::prepare_for_create(ss),
        Object::PersistentVolumeClaim(c) => persistent_volume_claim::prepare_for_create(c),
        Object::Namespace(ns) => namespace::prepare_for_create(ns),
        Object::PodGroup(pg) => pod_group::prepare_for_create(pg),
        Object::SchedulingPodGroup(pg) => workload::prepare_pod_group_for_create(pg),
        Object::Workload(w) => workload::prepare_workload_for_create(w),
        Object::PodDisruptionBudget(p) => pod_disruption_budget::prepare_for_create(p),
        Object::Service(s) => service::prepare_for_create(s),
        Object::ResourceQuota(q) => resource_quota::prepare_for_create(q),
        Object::DeviceClass(c) => resource::prepare_device_class_for_create(c),
        Object::ResourceSlice(s) => resource::prepare_resource_slice_for_create(s),
        Object::ResourceClaim(c) => resource::prepare_resource_claim_for_create(c),
        // Upstream `controllerrevision` strategy: no PrepareForCreate/Update work.
        Object::Node(_)
        | Object::ControllerRevision(_)
        | Object::LimitRange(_)
        | Object::RuntimeClass(_)
        | Object::PriorityClass(_)
        | Object::Event(_)
        | Object::Lease(_)
        | Object::EndpointSlice(_)
        | Object::ResourceClaimTemplate(_)
        | Object::Other(..) => {}
    }
}

/// Upstream `BeforeUpdate` and the kind's `PrepareForUpdate`: system fields (uid,
/// creationTimestamp, deletion fields, generation, resourceVersion) come from the stored object,
/// the status is kept, and generation is bumped when the kind's rule says the spec changed.
pub fn prepare_for_update(new: &mut Object, old: &Object) {
    keep_system_fields(new, old);
    match (new, old) {
        (Object::Pod(n), Object::Pod(o)) => pod::prepare_for_update(n, o),
        (Object::Deployment(n), Object::Deployment(o)) => deployment::prepare_for_update(n, o),
        (Object::ReplicaSet(n), Object::ReplicaSet(o)) => replica_set::prepare_for_update(n, o),
        (Object::Job(n), Object::Job(o)) => job::prepare_for_update(n, o),
        (Object::DaemonSet(n), Object::DaemonSet(o)) => daemon_set::prepare_for_update(n, o),
        (Object::CronJob(n), Object::CronJob(o)) => cron_job::prepare_for_update(n, o),
        (Object::StatefulSet(n), Object::StatefulSet(o)) => stateful_set::prepare_for_update(n, o),
        (Object::PersistentVolumeClaim(n), Object::PersistentVolumeClaim(o)) => {
            persistent_volume_claim::prepare_for_update(n, o);
        }
        (Object::Namespace(n), Object::Namespace(o)) => namespace::prepare_for_update(n, o),
        (Object::Node(n), Object::Node(o)) => node::prepare_for_update(n, o),
        (Object::PodGroup(n), Object::PodGroup(o)) => pod_group::prepare_for_update(n, o),
        (Object::SchedulingPodGroup(n), Object::SchedulingPodGroup(o)) => {
            workload::prepare_pod_group_for_update(n, o);
        }
        (Object::Workload(n), Object::Workload(o)) => workload::prepare_workload_for_update(n, o),
        (Object::PodDisruptionBudget(n), Object::PodDisruptionBudget(o)) => {
            pod_disruption_budget::prepare_for_update(n, o);
        }
        (Object::Service(n), Object::Service(o)) => service::prepare_for_update(n, o),
        (Object::ResourceQuota(n), Object::ResourceQuota(o)) => {
            resource_quota::prepare_for_update(n, o);
        }
        (Object::DeviceClass(n), Object::DeviceClass(o)) => {
            resource::prepare_device_class_for_update(n, o);
        }
        (Object::ResourceSlice(n), Object::ResourceSlice(o)) => {
            resource::prepare_resource_slice_for_update(n, o);
        }
        (Object::ResourceClaim(n), Object::ResourceClaim(o)) => {
            resource::prepare_resource_claim_for_update(n, o);
        }
        _ => {}
    }
}

/// `BeforeUpdate`'s system fields: uid, creationTimestamp, deletion fields, generation and
/// resourceVersion always come from the stored object.
fn keep_system_fields(new: &mut Object, old: &Object) {
    let (nm, om) = (new.meta_mut(), old.meta());
    nm.uid.clone_from(&om.uid);
    nm.creation_timestamp.clone_from(&om.creation_timestamp);
    nm.deletion_timestamp.clone_from(&om.deletion_timestamp);
    nm.deletion_grace_period_seconds = om.deletion_grace_period_seconds;
    nm.generation = om.generation;
    nm.resource_version.clone_from(&om.resource_version);
}

/// A `/status` update: the kind's `statusStrategy.PrepareForUpdate` plus `BeforeUpdate`'s system
/// fields. The spec always comes from the stored object; metadata follows upstream per kind:
/// - Pod: labels, annotations and finalizers from the request; ownerReferences stored; an empty
///   `qosClass` is backfilled (upstream `podStatusStrategy`);
/// - Deployment: annotations from the request, labels stored (the deployment controller writes
///   its revision annotation this way);
/// - ReplicaSet, Job, DaemonSet, CronJob, StatefulSet, PersistentVolumeClaim, Node, Namespace,
///   PodDisruptionBudget, Service, ResourceQuota: metadata from the request;
/// - ResourceClaim: spec and metadata stored, but finalizers from the request;
/// - PodGroup and untyped kinds (custom resources): only the status (upstream
///   `customresource.statusStrategy`);
/// - PriorityClass, Event, EndpointSlice, LimitRange (no status subresource): the stored object, unchanged.
pub fn with_status_from(new: Object, old: &Object) -> Object {
    let mut out = new;
    keep_system_fields(&mut out, old);
    match (&mut out, old) {
        (Object::Pod(n), Object::Pod(o)) => pod::prepare_for_status_update(n, o),
        (Object::Deployment(n), Object::Deployment(o)) => {
            n.spec.clone_from(&o.spec);
            n.metadata.labels.clone_from(&o.metadata.labels);
        }
        (Object::ReplicaSet(n), Object::ReplicaSet(o)) => n.spec.clone_from(&o.spec),
        (Object::Job(n), Object::Job(o)) => n.spec.clone_from(&o.spec),
        (Object::DaemonSet(n), Object::DaemonSet(o)) => n.spec.clone_from(&o.spec),
        (Object::CronJob(n), Object::CronJob(o)) => n.spec.clone_from(&o.spec),
        (Object::StatefulSet(n), Object::StatefulSet(o)) => n.spec.clone_from(&o.spec),
        (Object::PersistentVolumeClaim(n), Object::PersistentVolumeClaim(o)) => {
            n.spec.clone_from(&o.spec);
        }
        (Object::PodDisruptionBudget(n), Object::PodDisruptionBudget(o)) => {
            n.spec.clone_from(&o.spec);
        }
        (Object::Node(n), Object::Node(o)) => n.spec.clone_from(&o.spec),
        (Object::Namespace(n), Object::Namespace(o)) => n.spec.clone_from(&o.spec),
        (Object::Service(n), Object::Service(o)) => n.spec.clone_from(&o.spec),
        (Object::ResourceQuota(n), Object::ResourceQuota(o)) => n.spec.clone_from(&o.spec),
        (Object::PodGroup(n), Object::PodGroup(o)) => {
            let status = std::mem::take(&mut n.status);
            *n = o.clone();
            n.status = status;
        }
        (Object::SchedulingPodGroup(n), Object::SchedulingPodGroup(o)) => {
            let status = std::mem::take(&mut n.status);
            *n = o.clone();
            n.status = status;
        }
        (Object::ResourceClaim(n), Object::ResourceClaim(o)) => {
            resource::prepare_resource_claim_for_status_update(n, o);
        }
        (Object::Other(n, _), Object::Other(o, _)) => {
            let mut kept = o.clone();
            other::copy_status(&mut kept, n);
            *n = kept;
        }
        _ => return old.clone(),
    }
    out
}

/// True when two versions of an object are the same apart from resourceVersion (upstream skips
/// such no-op writes: `GuaranteedUpdate` does not write identical bytes, so the revision stays).
/// `a`'s resourceVersion is swapped for `b`'s during the comparison and put back (no copy).
pub fn same_ignoring_resource_version(a: &mut Object, b: &Object) -> bool {
    let saved = std::mem::replace(
        &mut a.meta_mut().resource_version,
        b.meta().resource_version.clone(),
    );
    let same = *a == *b;
    a.meta_mut().resource_version = saved;
    same
}
