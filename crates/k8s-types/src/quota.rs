//! Quota arithmetic and usage, shared by the ResourceQuota admission plugin and the resource quota
//! controller: upstream `k8s.io/apiserver/pkg/quota/v1/resources.go` (`Add`, `Mask`,
//! `LessThanOrEqual`), `pkg/quota/v1/evaluator/core/pods.go` (`PodUsageFunc`, `QuotaV1Pod`,
//! `podComputeUsageHelper`, `Constraints`, the pod scopes) and `k8s.io/apiserver/pkg/quota/v1/
//! generic/evaluator.go` (object counts, `count/<resource>.<group>`).

use std::collections::{BTreeMap, BTreeSet};

use crate::core::{phases, resource_names as rn, Container, Pod, ResourceList, ResourceQuota};
use crate::meta::timestamp_tick;
use crate::object::Kind;
use crate::{Quantity, Tick};

/// Upstream `corev1.ResourcePods` (pods in a non-terminal state).
pub const PODS: &str = "pods";
/// Upstream `corev1.ResourceRequestsCPU`.
pub const REQUESTS_CPU: &str = "requests.cpu";
/// Upstream `corev1.ResourceRequestsMemory`.
pub const REQUESTS_MEMORY: &str = "requests.memory";
/// Upstream `corev1.ResourceRequestsEphemeralStorage`.
pub const REQUESTS_EPHEMERAL_STORAGE: &str = "requests.ephemeral-storage";
/// Upstream `corev1.ResourceLimitsCPU`.
pub const LIMITS_CPU: &str = "limits.cpu";
/// Upstream `corev1.ResourceLimitsMemory`.
pub const LIMITS_MEMORY: &str = "limits.memory";
/// Upstream `corev1.ResourceLimitsEphemeralStorage`.
pub const LIMITS_EPHEMERAL_STORAGE: &str = "limits.ephemeral-storage";
/// Upstream `corev1.DefaultResourceRequestsPrefix`.
pub const REQUESTS_PREFIX: &str = "requests.";

/// Upstream `validationSet`: when a quota tracks one of these, every container must set it.
pub const VALIDATION_SET: [&str; 6] = [
    rn::CPU,
    rn::MEMORY,
    REQUESTS_CPU,
    REQUESTS_MEMORY,
    LIMITS_CPU,
    LIMITS_MEMORY,
];

/// Upstream `generic.ObjectCountQuotaResourceNameFor`: `count/pods`, `count/deployments.apps`.
pub fn object_count_name(kind: &Kind) -> String {
    match kind.group() {
        "" => format!("count/{}", kind.plural()),
        g => format!("count/{}.{g}", kind.plural()),
    }
}

/// The legacy object-count names upstream's evaluators also answer for (`services`,
/// `persistentvolumeclaims`, `resourcequotas`); pods are handled by [`pod_matching_resources`].
fn legacy_count_name(kind: &Kind) -> Option<&'static str> {
    match kind {
        Kind::Service => Some("services"),
        Kind::PersistentVolumeClaim => Some("persistentvolumeclaims"),
        Kind::ResourceQuota => Some("resourcequotas"),
        _ => None,
    }
}

/// Upstream `podResources`.
const POD_RESOURCES: [&str; 11] = [
    "count/pods",
    rn::CPU,
    rn::MEMORY,
    rn::EPHEMERAL_STORAGE,
    REQUESTS_CPU,
    REQUESTS_MEMORY,
    REQUESTS_EPHEMERAL_STORAGE,
    LIMITS_CPU,
    LIMITS_MEMORY,
    LIMITS_EPHEMERAL_STORAGE,
    PODS,
];

/// Upstream `helper.IsNativeResource`: no domain, or a `kubernetes.io` one.
fn is_native(name: &str) -> bool {
    match name.split_once('/') {
        None => true,
        Some((domain, _)) => domain.ends_with("kubernetes.io"),
    }
}

/// Upstream `podEvaluator.MatchingResources` (extended resources only as `requests.<name>`).
pub fn pod_matching_resources<'a>(names: impl Iterator<Item = &'a String>) -> BTreeSet<String> {
    names
        .filter(|n| {
            POD_RESOURCES.contains(&n.as_str())
                || n.starts_with("hugepages-")
                || n.starts_with("requests.hugepages-")
                || (!is_native(n) && n.starts_with(REQUESTS_PREFIX))
        })
        .cloned()
        .collect()
}

/// The resources of `names` an object of `kind` is counted in (the evaluator's
/// `MatchingResources`).
pub fn matching_resources<'a>(
    kind: &Kind,
    names: impl Iterator<Item = &'a String>,
) -> BTreeSet<String> {
    if *kind == Kind::Pod {
        return pod_matching_resources(names);
    }
    let count = object_count_name(kind);
    let legacy = legacy_count_name(kind);
    names
        .filter(|n| **n == count || Some(n.as_str()) == legacy)
        .cloned()
        .collect()
}

/// `a + b` per resource (upstream `quota.Add`).
pub fn add(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut out = a.clone();
    for (k, v) in b {
        match out.get_mut(k) {
            Some(q) => q.add(v),
            None => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// Only the resources of `names` (upstream `quota.Mask`).
pub fn mask(list: &ResourceList, names: &BTreeSet<String>) -> ResourceList {
    list.iter()
        .filter(|(k, _)| names.contains(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Upstream `quota.LessThanOrEqual`: whether every resource of `a` that `b` limits is within it,
/// and the resources that are not.
pub fn less_than_or_equal(a: &ResourceList, b: &ResourceList) -> (bool, BTreeSet<String>) {
    let exceeded: BTreeSet<String> = a
        .iter()
        .filter(|(k, v)| b.get(*k).is_some_and(|limit| *v > limit))
        .map(|(k, _)| k.clone())
        .collect();
    (exceeded.is_empty(), exceeded)
}

/// Upstream `prettyPrint`: `name=quantity` sorted by name, joined with `,`.
pub fn pretty_print(list: &ResourceList) -> String {
    list.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Upstream `QuotaV1Pod`: a pod is charged unless it is terminal, or being deleted and past
/// `deletionTimestamp + deletionGracePeriodSeconds`.
pub fn quota_v1_pod(pod: &Pod, now: Tick) -> bool {
    let phase = pod.status.phase.as_deref().unwrap_or("");
    if phase == phases::FAILED || phase == phases::SUCCEEDED {
        return false;
    }
    if let (Some(ts), Some(grace)) = (
        pod.metadata.deletion_timestamp.as_deref(),
        pod.metadata.deletion_grace_period_seconds,
    ) {
        if let Some(t) = timestamp_tick(ts) {
            if now > t.saturating_add(grace.max(0).unsigned_abs()) {
                return false;
            }
        }
    }
    true
}

fn sum_into(out: &mut ResourceList, list: &ResourceList) {
    *out = add(out, list);
}

fn max_into(out: &mut ResourceList, list: &ResourceList) {
    for (k, v) in list {
        match out.get_mut(k) {
            Some(q) if *q < *v => *q = v.clone(),
            Some(_) => {}
            None => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Upstream `resource.PodRequests` / `PodLimits` over `pick` (requests or limits), on quantities:
/// `max(sum(containers) + sum(sidecars), max over init containers of (init + sidecars before it))`
/// plus the pod overhead (for limits, only for resources that have a limit).
fn pod_resources(pod: &Pod, pick: fn(&Container) -> &ResourceList, limits: bool) -> ResourceList {
    let mut reqs = ResourceList::new();
    for c in &pod.spec.containers {
        sum_into(&mut reqs, pick(c));
    }
    let mut restartable = ResourceList::new();
    let mut init_max = ResourceList::new();
    for ic in &pod.spec.init_containers {
        if ic.restart_policy.as_deref() == Some("Always") {
            sum_into(&mut reqs, pick(ic));
            sum_into(&mut restartable, pick(ic));
            max_into(&mut init_max, &restartable);
        } else {
            let tmp = add(pick(ic), &restartable);
            max_into(&mut init_max, &tmp);
        }
    }
    max_into(&mut reqs, &init_max);
    if limits {
        for (k, v) in &pod.spec.overhead {
            if let Some(q) = reqs.get_mut(k) {
                q.add(v);
            }
        }
    } else {
        sum_into(&mut reqs, &pod.spec.overhead);
    }
    reqs
}

/// Upstream `podComputeUsageHelper`.
pub fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut out = ResourceList::new();
    out.insert(
        PODS.into(),
        Quantity::from_value(1, crate::quantity::Format::DecimalSI),
    );
    for (name, req, lim) in [
        (rn::CPU, REQUESTS_CPU, LIMITS_CPU),
        (rn::MEMORY, REQUESTS_MEMORY, LIMITS_MEMORY),
        (
            rn::EPHEMERAL_STORAGE,
            REQUESTS_EPHEMERAL_STORAGE,
            LIMITS_EPHEMERAL_STORAGE,
        ),
    ] {
        if let Some(q) = requests.get(name) {
            out.insert(name.into(), q.clone());
            out.insert(req.into(), q.clone());
        }
        if let Some(q) = limits.get(name) {
            out.insert(lim.into(), q.clone());
        }
    }
    for (name, q) in requests {
        if name.starts_with("hugepages-") {
            out.insert(name.clone(), q.clone());
            out.insert(format!("{REQUESTS_PREFIX}{name}"), q.clone());
        } else if !is_native(name) && !name.starts_with(REQUESTS_PREFIX) {
            out.insert(format!("{REQUESTS_PREFIX}{name}"), q.clone());
        }
    }
    out
}

/// Upstream `PodUsageFunc`: `count/pods` always; the compute usage while [`quota_v1_pod`].
pub fn pod_usage(pod: &Pod, now: Tick) -> ResourceList {
    let one = Quantity::from_value(1, crate::quantity::Format::DecimalSI);
    let mut out = ResourceList::new();
    out.insert("count/pods".into(), one);
    if !quota_v1_pod(pod, now) {
        return out;
    }
    let requests = pod_resources(pod, |c| &c.resources.requests, false);
    let limits = pod_resources(pod, |c| &c.resources.limits, true);
    add(&out, &compute_usage(&requests, &limits))
}

/// An object's usage: [`pod_usage`] for a pod, else its count (`count/<resource>` and the legacy
/// name) of 1.
pub fn object_usage(obj: &crate::Object, now: Tick) -> ResourceList {
    if let crate::Object::Pod(p) = obj {
        return pod_usage(p, now);
    }
    let kind = obj.kind();
    let one = Quantity::from_value(1, crate::quantity::Format::DecimalSI);
    let mut out = ResourceList::new();
    out.insert(object_count_name(&kind), one.clone());
    if let Some(l) = legacy_count_name(&kind) {
        out.insert(l.into(), one);
    }
    out
}

/// Upstream `isBestEffort`: no container (init included) requests or limits cpu or memory.
fn is_best_effort(pod: &Pod) -> bool {
    pod.spec
        .containers
        .iter()
        .chain(&pod.spec.init_containers)
        .all(|c| {
            [rn::CPU, rn::MEMORY].iter().all(|r| {
                !c.resources.requests.contains_key(*r) && !c.resources.limits.contains_key(*r)
            })
        })
}

/// Upstream `podMatchesScopeFunc` for the scopes of `spec.scopes` (`Terminating`: an
/// `activeDeadlineSeconds >= 0`, a field k8s-mini's pods do not have, so no pod is; `BestEffort`:
/// QoS class BestEffort; `PriorityClass`: a priority class name). Any other scope matches nothing.
pub fn pod_matches_scope(pod: &Pod, scope: &str) -> bool {
    let terminating = false;
    match scope {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        "PriorityClass" => pod
            .spec
            .priority_class_name
            .as_deref()
            .is_some_and(|n| !n.is_empty()),
        _ => false,
    }
}

/// Upstream `generic.Matches` with the status' hard resources: the quota limits something `obj` is
/// counted in, and `obj` is in every scope (objects other than pods are in none).
pub fn quota_matches(quota: &ResourceQuota, obj: &crate::Object) -> bool {
    let kind = obj.kind();
    if matching_resources(&kind, quota.status.hard.keys()).is_empty() {
        return false;
    }
    quota.spec.scopes.iter().all(|s| match obj {
        crate::Object::Pod(p) => pod_matches_scope(p, s),
        _ => false,
    })
}

/// Upstream `podEvaluator.Constraints`: with `required` the quota's tracked resources, every
/// container (then init container) must set those of [`VALIDATION_SET`]; the error is
/// `must specify <resource> for: <containers>; ...`.
pub fn pod_constraints(pod: &Pod, required: &BTreeSet<String>) -> Result<(), String> {
    let required: BTreeSet<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|r| VALIDATION_SET.contains(r))
        .collect();
    let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in pod.spec.containers.iter().chain(&pod.spec.init_containers) {
        let usage = compute_usage(&c.resources.requests, &c.resources.limits);
        for r in &required {
            if !usage.contains_key(*r) {
                missing
                    .entry((*r).to_string())
                    .or_default()
                    .insert(c.name.clone());
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|(r, cs)| {
            format!(
                "{r} for: {}",
                cs.iter().cloned().collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ResourceRequirements;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_default()
    }

    fn container(name: &str, req: &[(&str, &str)], lim: &[(&str, &str)]) -> Container {
        let list = |xs: &[(&str, &str)]| xs.iter().map(|(k, v)| (k.to_string(), q(v))).collect();
        Container {
            name: name.into(),
            resources: ResourceRequirements {
                requests: list(req),
                limits: list(lim),
                claims: Vec::new(),
            },
            ..Default::default()
        }
    }

    #[test]
    fn pod_usage_follows_pod_usage_func() {
        let mut pod = Pod::default();
        pod.spec.containers = vec![
            container(
                "a",
                &[
                    ("cpu", "500m"),
                    ("memory", "128Mi"),
                    ("nvidia.com/gpu", "1"),
                ],
                &[("cpu", "1")],
            ),
            container("b", &[("cpu", "250m"), ("memory", "128Mi")], &[]),
        ]
        .into();
        let u = pod_usage(&pod, 0);
        let got: Vec<String> = u.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            got,
            vec![
                "count/pods=1",
                "cpu=750m",
                "limits.cpu=1",
                "memory=256Mi",
                "pods=1",
                "requests.cpu=750m",
                "requests.memory=256Mi",
                "requests.nvidia.com/gpu=1",
            ]
        );
        // A Succeeded pod only counts as an object.
        pod.status.phase = Some(phases::SUCCEEDED.into());
        assert_eq!(pretty_print(&pod_usage(&pod, 0)), "count/pods=1");
    }

    #[test]
    fn a_deleted_pod_stops_counting_after_its_grace_period_twice() {
        let mut pod = Pod::default();
        // Deleted at 100 with 30 s: deletionTimestamp 130, charged until 160 included.
        pod.metadata.deletion_timestamp = Some(crate::meta::tick_timestamp(130).into());
        pod.metadata.deletion_grace_period_seconds = Some(30);
        assert!(quota_v1_pod(&pod, 160));
        assert!(!quota_v1_pod(&pod, 161));
    }

    #[test]
    fn constraints_name_each_missing_resource_and_container() {
        let mut pod = Pod::default();
        pod.spec.containers = vec![
            container("app", &[("cpu", "1")], &[]),
            container("log", &[], &[]),
        ]
        .into();
        let required: BTreeSet<String> = ["requests.cpu", "limits.memory", "pods"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            pod_constraints(&pod, &required),
            Err("must specify limits.memory for: app,log; requests.cpu for: log".into())
        );
    }

    #[test]
    fn exceeded_resources_and_pretty_print() {
        let list = |xs: &[(&str, &str)]| -> ResourceList {
            xs.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
        };
        let used = list(&[("requests.cpu", "1500m"), ("pods", "2")]);
        let requested = list(&[("requests.cpu", "750m"), ("pods", "1")]);
        let hard = list(&[("requests.cpu", "2"), ("pods", "5")]);
        let (ok, exceeded) = less_than_or_equal(&add(&used, &requested), &hard);
        assert!(!ok);
        assert_eq!(exceeded.iter().collect::<Vec<_>>(), vec!["requests.cpu"]);
        assert_eq!(
            pretty_print(&mask(&add(&used, &requested), &exceeded)),
            "requests.cpu=2250m"
        );
        assert_eq!(
            object_count_name(&Kind::Deployment),
            "count/deployments.apps"
        );
        assert_eq!(object_count_name(&Kind::Pod), "count/pods");
    }
}
