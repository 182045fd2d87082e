//! Validation: every rule gathers ALL of its field errors before answering (upstream
//! `field.ErrorList`), with upstream's field paths and messages; the apiserver turns a non-empty list
//! into `422 Invalid` (`Pod "x" is invalid: [...]`).
//!
//! Upstream sources: `pkg/apis/core/validation/validation.go` (pods, nodes, namespaces, events),
//! `pkg/apis/apps/validation/validation.go` (Deployment, ReplicaSet, DaemonSet, StatefulSet,
//! ControllerRevision),
//! `pkg/apis/batch/validation/validation.go` (Job, CronJob),
//! `pkg/apis/scheduling/validation/validation.go` (PriorityClass),
//! `pkg/apis/policy/validation/validation.go` (PodDisruptionBudget),
//! `pkg/apis/resource/validation/validation.go` (DeviceClass, ResourceSlice, ResourceClaim,
//! ResourceClaimTemplate),
//! `pkg/apis/coordination/validation/validation.go` (Lease),
//! `pkg/apis/core/validation/validation.go` (Service), `pkg/apis/discovery/validation` (EndpointSlice),
//! `k8s.io/apimachinery/pkg/api/validation/objectmeta.go` (metadata) and the scheduler-plugins
//! PodGroup CRD schema.
//!
//! Modules: [`names`] (syntax checks), [`gofmt`] (how bad values print), [`meta`], [`labels`],
//! [`resources`], [`pod_spec`], [`pod`], [`template`], [`deployment`], [`replica_set`],
//! [`namespace`], [`node`], [`priority_class`], [`pod_group`], [`event`], [`other`].

pub mod affinity;
pub mod controller_revision;
pub mod cron_job;
pub mod daemon_set;
pub mod deployment;
pub mod endpoint_slice;
pub mod event;
pub mod gofmt;
pub mod job;
pub mod labels;
pub mod lease;
pub mod meta;
/// Name and label syntax checks (moved to `k8s-types` so the label selector parser shares them).
pub use k8s_types::validation as names;
pub mod namespace;
pub mod node;
pub mod other;
pub mod pod;
pub mod pod_disruption_budget;
pub mod pod_group;
pub mod pod_spec;
pub mod priority_class;
pub mod probe;
pub mod replica_set;
pub mod resource;
pub mod resource_quota;
pub mod resources;
pub mod runtime_class;
pub mod service;
pub mod stateful_set;
pub mod template;
pub mod workload;

use k8s_types::status::FieldError;
use k8s_types::Object;

/// A list of field errors (upstream `field.ErrorList`).
pub type ErrorList = Vec<FieldError>;

/// Upstream `IsNegativeErrorMsg`.
pub const IS_NEGATIVE_ERROR_MSG: &str = "must be greater than or equal to 0";
/// Upstream `isNotIntegerErrorMsg`.
pub const IS_NOT_INTEGER_ERROR_MSG: &str = "must be an integer";
/// Upstream `isNotPositiveErrorMsg`.
pub const IS_NOT_POSITIVE_ERROR_MSG: &str = "must be greater than zero";
/// Upstream `FieldImmutableErrorMsg`.
pub const FIELD_IMMUTABLE_ERROR_MSG: &str = "field is immutable";

/// `path.name` (upstream `Path.Child`).
pub fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        concat_path(&[path, ".", name])
    }
}

/// `path[i]` (upstream `Path.Index`).
pub fn index(path: &str, i: usize) -> String {
    concat_path(&[path, "[", itoa::Buffer::new().format(i), "]"])
}

/// `path[key]` (upstream `Path.Key`), e.g. `spec.containers[0].resources.requests[cpu]`.
pub fn key(path: &str, k: &str) -> String {
    concat_path(&[path, "[", k, "]"])
}

/// `check` at a field path built only when it reports an error: it runs at `""` first (a path
/// only ever appears in the errors), and again at `path()` when that found any. For checks that
/// run on every field of every write and build no paths of their own.
pub fn at_path_if_invalid(
    check: impl Fn(&str) -> ErrorList,
    path: impl FnOnce() -> String,
) -> ErrorList {
    let errs = check("");
    if errs.is_empty() {
        return errs;
    }
    check(&path())
}

/// `check` at `path.name` for a field that has entries; nothing for an empty one (it cannot be
/// invalid), whose path is then never built.
pub fn child_unless_empty(
    empty: bool,
    path: &str,
    name: &str,
    check: impl FnOnce(&str) -> ErrorList,
) -> ErrorList {
    if empty {
        return Vec::new();
    }
    check(&child(path, name))
}

/// The parts joined into one exactly sized string. Field paths are built for every field that
/// is validated, valid or not, so they are written without `format!`'s machinery.
fn concat_path(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        s.push_str(p);
    }
    s
}

/// `Invalid value: "<value>": <detail>` for a string value (printed with Go's `%q`).
pub fn invalid_str(path: impl Into<String>, value: &str, detail: impl Into<String>) -> FieldError {
    FieldError::invalid(path, gofmt::quote(value), detail)
}

/// One `Invalid value: "<value>": <msg>` per message (the usual shape of upstream's syntax checks).
pub fn invalid_each(path: &str, value: &str, msgs: Vec<String>) -> ErrorList {
    msgs.into_iter()
        .map(|m| invalid_str(path, value, m))
        .collect()
}

/// Upstream `ValidateNonnegativeField`.
pub fn nonnegative(path: &str, value: i64) -> ErrorList {
    if value < 0 {
        vec![FieldError::invalid(
            path,
            value.to_string(),
            IS_NEGATIVE_ERROR_MSG,
        )]
    } else {
        Vec::new()
    }
}

/// Drops repeated errors (upstream `ErrorList.ToAggregate` prints each distinct message once).
pub fn dedup(errs: ErrorList) -> ErrorList {
    let mut seen = std::collections::BTreeSet::new();
    errs.into_iter()
        .filter(|e| seen.insert(e.to_string()))
        .collect()
}

/// Validation of a new object (upstream `strategy.Validate`).
pub fn validate_create(obj: &Object) -> ErrorList {
    dedup(match obj {
        Object::Pod(p) => pod::validate_pod(p),
        Object::Deployment(d) => deployment::validate_deployment(d),
        Object::ReplicaSet(rs) => replica_set::validate_replica_set(rs),
        Object::Job(j) => job::validate_job(j),
        Object::DaemonSet(ds) => daemon_set::validate_daemon_set(ds),
        Object::CronJob(cj) => cron_job::validate_cron_job_create(cj),
        Object::StatefulSet(ss) => stateful_set::validate_stateful_set(ss),
        Object::PersistentVolumeClaim(c) => stateful_set::validate_persistent_volume_claim(c),
        Object::ControllerRevision(c) => controller_revision::validate_controller_revision(c),
        Object::Namespace(ns) => namespace::validate_namespace(ns),
        Object::Node(n) => node::validate_node(n),
        Object::PriorityClass(pc) => priority_class::validate_priority_class(pc),
        Object::PodGroup(pg) => pod_group::validate_pod_group(pg),
        Object::Workload(w) => workload::validate_workload(w),
        Object::SchedulingPodGroup(pg) => workload::validate_pod_group(pg),
        Object::PodDisruptionBudget(p) => pod_disruption_budget::validate_pod_disruption_budget(p),
        Object::Lease(l) => lease::validate_lease(l),
        Object::Service(s) => service::validate_service(s),
        Object::EndpointSlice(e) => endpoint_slice::validate_endpoint_slice(e),
        Object::Event(e) => event::validate_event(e),
        Object::ResourceQuota(q) => resource_quota::validate_resource_quota(q),
        Object::LimitRange(l) => resource_quota::validate_limit_range(l),
        Object::RuntimeClass(rc) => runtime_class::validate_runtime_class(rc),
        Object::DeviceClass(c) => resource::validate_device_class(c),
        Object::ResourceSlice(s) => resource::validate_resource_slice(s, None),
        Object::ResourceClaim(c) => resource::validate_resource_claim(c),
        Object::ResourceClaimTemplate(t) => resource::validate_resource_claim_template(t),
        Object::Other(u, namespaced) => other::validate_other(u, *namespaced),
    })
}

/// Validation of an update of spec and metadata (upstream `strategy.ValidateUpdate`). `new` already
/// carries the stored status and system fields.
pub fn validate_update(new: &Object, old: &Object) -> ErrorList {
    dedup(match (new, old) {
        (Object::Pod(n), Object::Pod(o)) => pod::validate_pod_update(n, o),
        (Object::Deployment(n), Object::Deployment(o)) => {
            deployment::validate_deployment_update(n, o)
        }
        (Object::ReplicaSet(n), Object::ReplicaSet(o)) => {
            replica_set::validate_replica_set_update(n, o)
        }
        (Object::Job(n), Object::Job(o)) => job::validate_job_update(n, o),
        (Object::DaemonSet(n), Object::DaemonSet(o)) => {
            daemon_set::validate_daemon_set_update(n, o)
        }
        (Object::CronJob(n), Object::CronJob(o)) => cron_job::validate_cron_job_update(n, o),
        (Object::StatefulSet(n), Object::StatefulSet(o)) => {
            stateful_set::validate_stateful_set_update(n, o)
        }
        (Object::PersistentVolumeClaim(n), Object::PersistentVolumeClaim(o)) => {
            stateful_set::validate_persistent_volume_claim_update(n, o)
        }
        (Object::ControllerRevision(n), Object::ControllerRevision(o)) => {
            controller_revision::validate_controller_revision_update(n, o)
        }
        (Object::PriorityClass(n), Object::PriorityClass(o)) => {
            priority_class::validate_priority_class_update(n, o)
        }
        (Object::PodGroup(n), Object::PodGroup(o)) => pod_group::validate_pod_group_update(n, o),
        (Object::Workload(n), Object::Workload(o)) => workload::validate_workload_update(n, o),
        (Object::SchedulingPodGroup(n), Object::SchedulingPodGroup(o)) => {
            workload::validate_pod_group_update(n, o)
        }
        (Object::PodDisruptionBudget(n), Object::PodDisruptionBudget(o)) => {
            pod_disruption_budget::validate_pod_disruption_budget_update(n, o)
        }
        (Object::Event(n), Object::Event(o)) => event::validate_event_update(n, o),
        (Object::Lease(n), Object::Lease(o)) => lease::validate_lease_update(n, o),
        (Object::Service(n), Object::Service(o)) => service::validate_service_update(n, o),
        (Object::EndpointSlice(n), Object::EndpointSlice(o)) => {
            endpoint_slice::validate_endpoint_slice_update(n, o)
        }
        (Object::ResourceQuota(n), Object::ResourceQuota(_)) => {
            let mut errs = meta::validate_object_meta_update(&n.metadata, old.meta(), "metadata");
            errs.extend(resource_quota::validate_resource_quota(n));
            errs
        }
        (Object::LimitRange(n), Object::LimitRange(_)) => {
            let mut errs = meta::validate_object_meta_update(&n.metadata, old.meta(), "metadata");
            errs.extend(resource_quota::validate_limit_range(n));
            errs
        }
        (Object::DeviceClass(n), Object::DeviceClass(o)) => {
            resource::validate_device_class_update(n, o)
        }
        (Object::ResourceSlice(n), Object::ResourceSlice(o)) => {
            let mut errs = meta::validate_object_meta_update(&n.metadata, &o.metadata, "metadata");
            errs.extend(resource::validate_resource_slice(n, Some(o)));
            errs
        }
        (Object::ResourceClaim(n), Object::ResourceClaim(o)) => {
            resource::validate_resource_claim_update(n, o)
        }
        (Object::ResourceClaimTemplate(n), Object::ResourceClaimTemplate(o)) => {
            resource::validate_resource_claim_template_update(n, o)
        }
        (n, o) => meta::validate_object_meta_update(n.meta(), o.meta(), "metadata"),
    })
}

/// Validation of a `/status` update (upstream `statusStrategy.ValidateUpdate`).
pub fn validate_status_update(new: &Object, old: &Object) -> ErrorList {
    dedup(match (new, old) {
        (Object::Pod(n), Object::Pod(o)) => pod::validate_pod_status_update(n, o),
        (Object::Deployment(n), Object::Deployment(o)) => {
            deployment::validate_deployment_status_update(n, o)
        }
        (Object::ReplicaSet(n), Object::ReplicaSet(o)) => {
            replica_set::validate_replica_set_status_update(n, o)
        }
        (Object::Job(n), Object::Job(o)) => job::validate_job_status_update(n, o),
        (Object::DaemonSet(n), Object::DaemonSet(o)) => {
            daemon_set::validate_daemon_set_status_update(n, o)
        }
        (Object::StatefulSet(n), Object::StatefulSet(o)) => {
            stateful_set::validate_stateful_set_status_update(n, o)
        }
        (Object::PodDisruptionBudget(n), Object::PodDisruptionBudget(o)) => {
            pod_disruption_budget::validate_pod_disruption_budget_status_update(n, o)
        }
        (Object::ResourceQuota(n), Object::ResourceQuota(_)) => {
            let mut errs = meta::validate_object_meta_update(&n.metadata, old.meta(), "metadata");
            errs.extend(resource_quota::validate_resource_quota(n));
            errs
        }
        (n, o) => meta::validate_object_meta_update(n.meta(), o.meta(), "metadata"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The path is built only when the check finds an error, and the errors are then the
    /// check's at the real path (as if it had run there directly).
    #[test]
    fn a_path_is_built_only_for_an_invalid_field() {
        let built = Cell::new(0);
        let path = || {
            built.set(built.get() + 1);
            key("spec.containers[0].resources.requests", "cpu")
        };
        let check = |value: i64| move |p: &str| nonnegative(p, value);
        assert!(at_path_if_invalid(check(1), path).is_empty());
        assert_eq!(built.get(), 0);
        let errs = at_path_if_invalid(check(-1), path);
        assert_eq!(built.get(), 1);
        assert_eq!(
            errs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["spec.containers[0].resources.requests[cpu]: Invalid value: -1: must be greater than or equal to 0"]
        );
        assert_eq!(
            errs,
            nonnegative("spec.containers[0].resources.requests[cpu]", -1)
        );
    }

    /// An empty field is not checked; a set one is checked at `path.name`.
    #[test]
    fn only_set_fields_are_checked_at_their_child_path() {
        let called = Cell::new(false);
        let check = |p: &str| {
            called.set(true);
            nonnegative(p, -1)
        };
        assert!(child_unless_empty(true, "spec", "overhead", check).is_empty());
        assert!(!called.get());
        let errs = child_unless_empty(false, "spec", "overhead", check);
        assert!(called.get());
        assert_eq!(errs, nonnegative("spec.overhead", -1));
        assert_eq!(
            child_unless_empty(false, "", "x", check),
            nonnegative("x", -1)
        );
    }
}
