//! Pod validation on create, update and status update (upstream `pkg/apis/core/validation/
//! validation.go` `ValidatePodCreate`/`ValidatePod`, `validateContainersOnlyForPod`,
//! `ValidatePodUpdate`, `validateOnlyAddedTolerations`, `validateOnlyDeletedSchedulingGates`,
//! `ValidatePodStatusUpdate`).
//!
//! A pod's spec is immutable except for container images, additions to tolerations and removals of
//! scheduling gates; `spec.nodeName` in particular can only be set through the `pods/binding`
//! subresource.

use std::collections::BTreeMap;

use k8s_types::core::{Container, Pod, PodSchedulingGate, Toleration};
use k8s_types::status::FieldError;

use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::pod_spec::{validate_pod_spec, validate_tolerations};
use super::{child, index, invalid_each, invalid_str, ErrorList};

/// Upstream's message for a forbidden pod spec change (upstream appends a field diff after a
/// newline; k8s-mini omits the diff).
pub const POD_UPDATE_FORBIDDEN_MSG: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";
/// Upstream message for a changed container count.
pub const POD_CONTAINERS_ADD_REMOVE_MSG: &str = "pod updates may not add or remove containers";
/// Upstream message for a changed toleration.
pub const TOLERATION_MODIFIED_MSG: &str =
    "existing toleration can not be modified except its tolerationSeconds";

/// Upstream `validateContainersOnlyForPod`: images without surrounding whitespace.
fn validate_containers_only_for_pod(containers: &[Container], path: &str) -> ErrorList {
    containers
        .iter()
        .enumerate()
        .filter(|(_, c)| c.image.trim() != c.image)
        .map(|(i, c)| {
            invalid_str(
                child(&index(path, i), "image"),
                &c.image,
                "must not have leading or trailing whitespace",
            )
        })
        .collect()
}

/// Upstream message when a pod is created bound to a node while it still has scheduling gates.
pub const NODE_NAME_WITH_GATES_MSG: &str =
    "cannot be set until all schedulingGates have been cleared";

/// Upstream `ValidatePodCreate`: metadata (name a DNS-1123 subdomain), spec, pod-only container
/// checks, and no `spec.nodeName` while scheduling gates remain.
pub fn validate_pod(pod: &Pod) -> ErrorList {
    let mut errs = validate_object_meta(&pod.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_pod_spec(&pod.spec, "spec"));
    errs.extend(validate_containers_only_for_pod(
        &pod.spec.containers,
        "spec.containers",
    ));
    errs.extend(validate_containers_only_for_pod(
        &pod.spec.init_containers,
        "spec.initContainers",
    ));
    if pod.spec.node_name.as_deref().is_some_and(|n| !n.is_empty())
        && !pod.spec.scheduling_gates.is_empty()
    {
        errs.push(FieldError::forbidden(
            "spec.nodeName",
            NODE_NAME_WITH_GATES_MSG,
        ));
    }
    errs
}

fn validate_only_added_tolerations(
    new: &[Toleration],
    old: &[Toleration],
    path: &str,
) -> ErrorList {
    for o in old {
        let found = new.iter().any(|n| {
            let mut clone = o.clone();
            clone.toleration_seconds = n.toleration_seconds;
            clone == *n
        });
        if !found {
            return vec![FieldError::forbidden(path, TOLERATION_MODIFIED_MSG)];
        }
    }
    validate_tolerations(new, path)
}

fn validate_only_deleted_scheduling_gates(
    new: &[PodSchedulingGate],
    old: &[PodSchedulingGate],
    path: &str,
) -> ErrorList {
    let mut added: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, g) in new.iter().enumerate() {
        added.insert(g.name.as_str(), i);
    }
    for g in old {
        added.remove(g.name.as_str());
    }
    let mut errs: Vec<(usize, FieldError)> = added
        .into_iter()
        .map(|(name, i)| {
            (
                i,
                FieldError::forbidden(
                    child(&index(path, i), "name"),
                    format!("only deletion is allowed, but found new scheduling gate '{name}'"),
                ),
            )
        })
        .collect();
    errs.sort_by_key(|(i, _)| *i);
    errs.into_iter().map(|(_, e)| e).collect()
}

/// Upstream `ValidatePodUpdate`: the new pod must be valid, and its spec may differ from the stored
/// one only in container images, added tolerations and removed scheduling gates.
pub fn validate_pod_update(new: &Pod, old: &Pod) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_pod_spec(&new.spec, "spec"));
    errs.extend(validate_containers_only_for_pod(
        &new.spec.containers,
        "spec.containers",
    ));
    errs.extend(validate_containers_only_for_pod(
        &new.spec.init_containers,
        "spec.initContainers",
    ));
    if new.spec.containers.len() != old.spec.containers.len() {
        errs.push(FieldError::forbidden(
            "spec.containers",
            POD_CONTAINERS_ADD_REMOVE_MSG,
        ));
        return errs;
    }
    if new.spec.init_containers.len() != old.spec.init_containers.len() {
        errs.push(FieldError::forbidden(
            "spec.initContainers",
            POD_CONTAINERS_ADD_REMOVE_MSG,
        ));
        return errs;
    }
    let mut munged = new.spec.clone();
    for (c, o) in munged.containers.iter_mut().zip(&old.spec.containers) {
        c.image.clone_from(&o.image);
    }
    for (c, o) in munged
        .init_containers
        .iter_mut()
        .zip(&old.spec.init_containers)
    {
        c.image.clone_from(&o.image);
    }
    munged.tolerations.clone_from(&old.spec.tolerations);
    if !old.spec.tolerations.is_empty() || !new.spec.tolerations.is_empty() {
        errs.extend(validate_only_added_tolerations(
            &new.spec.tolerations,
            &old.spec.tolerations,
            "spec.tolerations",
        ));
    }
    errs.extend(validate_only_deleted_scheduling_gates(
        &new.spec.scheduling_gates,
        &old.spec.scheduling_gates,
        "spec.schedulingGates",
    ));
    munged
        .scheduling_gates
        .clone_from(&old.spec.scheduling_gates);
    if old
        .spec
        .termination_grace_period_seconds
        .is_some_and(|g| g < 0)
        && new.spec.termination_grace_period_seconds == Some(1)
    {
        munged.termination_grace_period_seconds = old.spec.termination_grace_period_seconds;
    }
    if munged != old.spec {
        errs.push(FieldError::forbidden("spec", POD_UPDATE_FORBIDDEN_MSG));
    }
    errs
}

/// Upstream `ValidatePodStatusUpdate` (the checks k8s-mini's status fields allow: metadata and a
/// valid `status.nominatedNodeName`).
pub fn validate_pod_status_update(new: &Pod, old: &Pod) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    if let Some(n) = new
        .status
        .nominated_node_name
        .as_deref()
        .filter(|n| !n.is_empty())
    {
        errs.extend(invalid_each(
            "status.nominatedNodeName",
            n,
            name_is_dns_subdomain(n, false),
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Pod {
        let mut p = Pod::default();
        p.metadata.name = "web".into();
        p.metadata.namespace = Some("default".into());
        p.spec.containers = vec![Container {
            image_pull_policy: Some("IfNotPresent".into()),
            name: "app".into(),
            image: "nginx".into(),
            ..Default::default()
        }]
        .into();
        p.spec.restart_policy = Some("Always".into());
        p.spec.termination_grace_period_seconds = Some(30);
        p
    }

    #[test]
    fn image_changes_are_allowed_node_name_changes_are_not() {
        let old = pod();
        let mut new = old.clone();
        new.spec.containers[0].image = "nginx:2".into();
        assert!(validate_pod_update(&new, &old).is_empty());
        let mut moved = old.clone();
        moved.spec.node_name = Some("node-b".into());
        let errs = validate_pod_update(&moved, &old);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec");
        assert_eq!(errs[0].detail, POD_UPDATE_FORBIDDEN_MSG);
    }

    /// Upstream `ValidatePodCreate` (kubernetes PR #115569): a pod created with a node and
    /// scheduling gates is Forbidden at `spec.nodeName`.
    #[test]
    fn a_pod_cannot_be_created_bound_while_gated() {
        let mut p = pod();
        p.spec.scheduling_gates = vec![PodSchedulingGate {
            name: "example.com/foo".into(),
        }];
        assert!(validate_pod(&p).is_empty());
        p.spec.node_name = Some("node-a".into());
        let errs: Vec<String> = validate_pod(&p).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            vec!["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"]
        );
        p.spec.scheduling_gates.clear();
        assert!(validate_pod(&p).is_empty());
    }

    #[test]
    fn scheduling_gates_may_only_be_removed() {
        let mut old = pod();
        old.spec.scheduling_gates = vec![PodSchedulingGate { name: "a".into() }];
        let mut removed = old.clone();
        removed.spec.scheduling_gates.clear();
        assert!(validate_pod_update(&removed, &old).is_empty());
        let mut added = old.clone();
        added
            .spec
            .scheduling_gates
            .push(PodSchedulingGate { name: "b".into() });
        let errs: Vec<String> = validate_pod_update(&added, &old)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec!["spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'b'"]
        );
    }

    #[test]
    fn image_whitespace_is_rejected_for_pods() {
        let mut p = pod();
        p.spec.containers[0].image = " nginx".into();
        assert_eq!(
            validate_pod(&p)[0].to_string(),
            "spec.containers[0].image: Invalid value: \" nginx\": must not have leading or trailing whitespace"
        );
    }
}
