//! Defaulting: what kube-apiserver fills in while decoding a request body, before admission and
//! validation (upstream `pkg/apis/core/v1/defaults.go`, `pkg/apis/apps/v1/defaults.go`,
//! `pkg/apis/scheduling/v1/defaults.go`, `pkg/apis/batch/v1/defaults.go`, `pkg/apis/resource/v1/defaults.go`; discovery/v1 EndpointSlices have none). Runs on create and on update, first.

pub mod cron_job;
pub mod daemon_set;
pub mod deployment;
pub mod job;
pub mod limit_range;
pub mod namespace;
pub mod node;
pub mod persistent_volume_claim;
pub mod pod;
pub mod pod_spec;
pub mod priority_class;
pub mod replica_set;
pub mod resource;
pub mod service;
pub mod stateful_set;

use k8s_types::Object;

/// Applies the defaults of the object's kind in place.
pub fn apply(obj: &mut Object) {
    match obj {
        Object::Pod(p) => pod::set_defaults_pod(p),
        Object::Deployment(d) => deployment::set_defaults_deployment(d),
        Object::ReplicaSet(rs) => replica_set::set_defaults_replica_set(rs),
        Object::Job(j) => job::set_defaults_job(j),
        Object::DaemonSet(ds) => daemon_set::set_defaults_daemon_set(ds),
        Object::CronJob(cj) => cron_job::set_defaults_cron_job(cj),
        Object::StatefulSet(ss) => stateful_set::set_defaults_stateful_set(ss),
        Object::PersistentVolumeClaim(c) => {
            persistent_volume_claim::set_defaults_persistent_volume_claim(c);
        }
        Object::Namespace(ns) => namespace::set_defaults_namespace(ns),
        Object::Node(n) => node::set_defaults_node(n),
        Object::PriorityClass(pc) => priority_class::set_defaults_priority_class(pc),
        Object::Service(s) => service::set_defaults_service(s),
        Object::LimitRange(l) => limit_range::set_defaults_limit_range(l),
        Object::ResourceClaim(c) => resource::set_defaults_resource_claim_spec(&mut c.spec),
        Object::ResourceClaimTemplate(t) => {
            resource::set_defaults_resource_claim_spec(&mut t.spec.spec);
        }
        // policy/v1 has no defaults for PodDisruptionBudget (an unset
        // unhealthyPodEvictionPolicy means IfHealthyBudget where it is read).
        // apps/v1 has no defaults for ControllerRevision.
        Object::Event(_)
        | Object::ControllerRevision(_)
        | Object::PodGroup(_)
        | Object::Workload(_)
        | Object::SchedulingPodGroup(_)
        | Object::PodDisruptionBudget(_)
        | Object::Lease(_)
        | Object::EndpointSlice(_)
        | Object::ResourceQuota(_)
        | Object::RuntimeClass(_)
        | Object::DeviceClass(_)
        | Object::ResourceSlice(_)
        | Object::Other(..) => {}
    }
}
