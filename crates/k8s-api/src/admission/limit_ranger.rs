//! The `LimitRanger` admission plugin (upstream `plugin/pkg/admission/limitranger/admission.go`:
//! `defaultContainerResourceRequirements`, `mergeContainerResources`, `minConstraint`,
//! `maxConstraint`, `limitRequestRatioConstraint`, `requestLimitEnforcedValues`,
//! `PodValidateLimitFunc`), for pods on create (upstream skips pod updates: containers cannot be
//! added or their resources changed).
//!
//! Mutating: every container and init container gets, for each resource it leaves unset, the
//! LimitRanges' `Container` `default` as its limit and `defaultRequest` as its request (the
//! LimitRange's own defaulting, [`crate::defaults::limit_range`], fills these from `max`/`min`),
//! and the pod the annotation `kubernetes.io/limit-ranger: LimitRanger plugin set: cpu, memory
//! request for container app; cpu limit for container app`.
//!
//! Validating: per `Container` item, each container's request and limit against `min`, `max` and
//! `maxLimitRequestRatio`; per `Pod` item, the pod's sum of containers (init containers: the
//! largest) against the same. Upstream's messages, e.g. `maximum cpu usage per Container is 1, but
//! limit is 2`; several violations are joined as an aggregate (`[a, b]`). Upstream walks each
//! resource map in Go's random order; k8s-mini walks resources by name (deterministic).
//! `PersistentVolumeClaim` items are not enforced (no storage requests are simulated).

use k8s_types::admission::{MutatingAdmission, Operation, ValidatingAdmission};
use k8s_types::core::{
    limit_range::{LIMIT_TYPE_CONTAINER, LIMIT_TYPE_POD},
    Container, LimitRange, Pod, ResourceList,
};
use k8s_types::object::Kind;
use k8s_types::status::Status;
use k8s_types::store::ObjectStore;
use k8s_types::{Object, Quantity, Resource};

/// Upstream `PluginName`.
pub const PLUGIN_NAME: &str = "LimitRanger";
/// Upstream `limitRangerAnnotation`.
pub const LIMIT_RANGER_ANNOTATION: &str = "kubernetes.io/limit-ranger";
/// Upstream `resource.MaxMilliValue`: above it, comparisons use whole values.
const MAX_MILLI_VALUE: i64 = i64::MAX / 1000;

/// The plugin (stateless; LimitRanges are read from the store).
#[derive(Clone, Copy, Debug, Default)]
pub struct LimitRanger;

fn limit_ranges<'a>(store: &'a dyn ObjectStore, namespace: &str) -> Vec<&'a LimitRange> {
    let prefix = format!("{}{namespace}/", Kind::LimitRange.key_prefix());
    store
        .list(&prefix)
        .into_iter()
        .filter_map(LimitRange::from_object_ref)
        .collect()
}

/// Upstream `defaultContainerResourceRequirements`: (requests, limits) from every `Container` item
/// (later items win).
pub fn default_requirements(ranges: &[&LimitRange]) -> (ResourceList, ResourceList) {
    let (mut requests, mut limits) = (ResourceList::new(), ResourceList::new());
    for item in ranges.iter().flat_map(|lr| &lr.spec.limits) {
        if item.type_ == LIMIT_TYPE_CONTAINER {
            requests.extend(item.default_request.clone());
            limits.extend(item.default.clone());
        }
    }
    (requests, limits)
}

/// Upstream `mergeContainerResources`: fills the unset requests/limits of one container and returns
/// the annotation parts (`cpu, memory request for container app`).
fn merge_container(
    c: &mut Container,
    defaults: &(ResourceList, ResourceList),
    what: &str,
) -> Vec<String> {
    let mut set_requests = Vec::new();
    let mut set_limits = Vec::new();
    for (k, v) in &defaults.1 {
        if !c.resources.limits.contains_key(k) {
            c.resources.limits.insert(k.clone(), v.clone());
            set_limits.push(k.clone());
        }
    }
    for (k, v) in &defaults.0 {
        if !c.resources.requests.contains_key(k) {
            c.resources.requests.insert(k.clone(), v.clone());
            set_requests.push(k.clone());
        }
    }
    let mut out = Vec::new();
    if !set_requests.is_empty() {
        set_requests.sort();
        out.push(format!(
            "{} request for {what} {}",
            set_requests.join(", "),
            c.name
        ));
    }
    if !set_limits.is_empty() {
        set_limits.sort();
        out.push(format!(
            "{} limit for {what} {}",
            set_limits.join(", "),
            c.name
        ));
    }
    out
}

/// Upstream `mergePodResourceRequirements`: defaults for every container, then init container.
pub fn merge_pod(pod: &mut Pod, defaults: &(ResourceList, ResourceList)) {
    let mut annotations = Vec::new();
    for c in &mut pod.spec.containers {
        annotations.extend(merge_container(c, defaults, "container"));
    }
    for c in &mut pod.spec.init_containers {
        annotations.extend(merge_container(c, defaults, "init container"));
    }
    if !annotations.is_empty() {
        pod.metadata.annotations.insert(
            LIMIT_RANGER_ANNOTATION.to_string(),
            format!("LimitRanger plugin set: {}", annotations.join("; ")),
        );
    }
}

/// Upstream `requestLimitEnforcedValues`: milli-values when none would overflow, else values.
fn enforced_values(
    req: Option<&Quantity>,
    lim: Option<&Quantity>,
    enforced: &Quantity,
) -> (i64, i64, i64) {
    let zero = Quantity::zero();
    let (r, l) = (req.unwrap_or(&zero), lim.unwrap_or(&zero));
    if r.value() <= MAX_MILLI_VALUE
        && l.value() <= MAX_MILLI_VALUE
        && enforced.value() <= MAX_MILLI_VALUE
    {
        (r.milli_value(), l.milli_value(), enforced.milli_value())
    } else {
        (r.value(), l.value(), enforced.value())
    }
}

/// Upstream `minConstraint`.
pub fn min_constraint(
    limit_type: &str,
    resource: &str,
    enforced: &Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let (req, lim) = (requests.get(resource), limits.get(resource));
    let (r, l, e) = enforced_values(req, lim, enforced);
    match (req, lim) {
        (None, _) => Some(format!(
            "minimum {resource} usage per {limit_type} is {enforced}.  No request is specified"
        )),
        (Some(q), _) if r < e => Some(format!(
            "minimum {resource} usage per {limit_type} is {enforced}, but request is {q}"
        )),
        (_, Some(q)) if l < e => Some(format!(
            "minimum {resource} usage per {limit_type} is {enforced}, but limit is {q}"
        )),
        _ => None,
    }
}

/// Upstream `maxConstraint`.
pub fn max_constraint(
    limit_type: &str,
    resource: &str,
    enforced: &Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let (req, lim) = (requests.get(resource), limits.get(resource));
    let (r, l, e) = enforced_values(req, lim, enforced);
    match (req, lim) {
        (_, None) => Some(format!(
            "maximum {resource} usage per {limit_type} is {enforced}.  No limit is specified"
        )),
        (_, Some(q)) if l > e => Some(format!(
            "maximum {resource} usage per {limit_type} is {enforced}, but limit is {q}"
        )),
        (Some(q), _) if r > e => Some(format!(
            "maximum {resource} usage per {limit_type} is {enforced}, but request is {q}"
        )),
        _ => None,
    }
}

/// Upstream `limitRequestRatioConstraint` (the ratio printed as Go's `%f`).
pub fn ratio_constraint(
    limit_type: &str,
    resource: &str,
    enforced: &Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let (req, lim) = (requests.get(resource), limits.get(resource));
    let (r, l, _) = enforced_values(req, lim, enforced);
    if req.is_none() || r == 0 {
        return Some(format!("{resource} max limit to request ratio per {limit_type} is {enforced}, but no request is specified or request is 0"));
    }
    if lim.is_none() || l == 0 {
        return Some(format!("{resource} max limit to request ratio per {limit_type} is {enforced}, but no limit is specified or limit is 0"));
    }
    let display = l as f64 / r as f64;
    let (observed, max) = if enforced.value() <= MAX_MILLI_VALUE {
        (display * 1000.0, enforced.milli_value() as f64)
    } else {
        (display, enforced.value() as f64)
    };
    (observed > max).then(|| format!("{resource} max limit to request ratio per {limit_type} is {enforced}, but provided ratio is {display:.6}"))
}

/// Every min/max/ratio violation of one (requests, limits) pair against one item.
fn check(
    limit_type: &str,
    item: &k8s_types::core::LimitRangeItem,
    requests: &ResourceList,
    limits: &ResourceList,
    errs: &mut Vec<String>,
) {
    for (k, v) in &item.min {
        errs.extend(min_constraint(limit_type, k, v, requests, limits));
    }
    for (k, v) in &item.max {
        errs.extend(max_constraint(limit_type, k, v, requests, limits));
    }
    for (k, v) in &item.max_limit_request_ratio {
        errs.extend(ratio_constraint(limit_type, k, v, requests, limits));
    }
}

/// The pod's requests and limits for a `Pod` item (upstream `podRequests`/`podLimits`: the sum of
/// the containers, or an init container's when larger).
fn pod_totals(pod: &Pod, pick: fn(&Container) -> &ResourceList) -> ResourceList {
    let mut sum = ResourceList::new();
    for c in &pod.spec.containers {
        sum = k8s_types::quota::add(&sum, pick(c));
    }
    for c in &pod.spec.init_containers {
        for (k, v) in pick(c) {
            if sum.get(k).is_none_or(|s| v > s) {
                sum.insert(k.clone(), v.clone());
            }
        }
    }
    sum
}

/// Upstream `PodValidateLimitFunc`: every violation, in item order.
pub fn validate_pod(ranges: &[&LimitRange], pod: &Pod) -> Vec<String> {
    let mut errs = Vec::new();
    for item in ranges.iter().flat_map(|lr| &lr.spec.limits) {
        if item.type_ == LIMIT_TYPE_CONTAINER {
            for c in pod.spec.containers.iter().chain(&pod.spec.init_containers) {
                check(
                    LIMIT_TYPE_CONTAINER,
                    item,
                    &c.resources.requests,
                    &c.resources.limits,
                    &mut errs,
                );
            }
        } else if item.type_ == LIMIT_TYPE_POD {
            let requests = pod_totals(pod, |c| &c.resources.requests);
            let limits = pod_totals(pod, |c| &c.resources.limits);
            check(LIMIT_TYPE_POD, item, &requests, &limits, &mut errs);
        }
    }
    errs
}

/// Upstream `utilerrors.NewAggregate(...).Error()`: one message as is, several as `[a, b]`.
pub fn aggregate(errs: &[String]) -> String {
    match errs {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

impl MutatingAdmission for LimitRanger {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn admit(
        &self,
        operation: Operation,
        obj: &mut Object,
        _old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        let (Operation::Create, Object::Pod(pod)) = (operation, obj) else {
            return Ok(());
        };
        let ranges = limit_ranges(store, pod.metadata.namespace());
        if !ranges.is_empty() {
            merge_pod(pod, &default_requirements(&ranges));
        }
        Ok(())
    }
}

impl ValidatingAdmission for LimitRanger {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn validate(
        &self,
        operation: Operation,
        obj: &Object,
        _old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        let (Operation::Create, Object::Pod(pod)) = (operation, obj) else {
            return Ok(());
        };
        let ranges = limit_ranges(store, pod.metadata.namespace());
        let errs = validate_pod(&ranges, pod);
        if errs.is_empty() {
            Ok(())
        } else {
            Err(super::forbidden(obj, &aggregate(&errs)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::{LimitRangeItem, ResourceRequirements};

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_default()
    }

    fn list(xs: &[(&str, &str)]) -> ResourceList {
        xs.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
    }

    fn range(item: LimitRangeItem) -> LimitRange {
        let mut lr = LimitRange::default();
        lr.spec.limits.push(item);
        lr
    }

    #[test]
    fn defaults_fill_only_what_is_unset_and_annotate() {
        let lr = range(LimitRangeItem {
            type_: LIMIT_TYPE_CONTAINER.into(),
            default: list(&[("cpu", "500m"), ("memory", "512Mi")]),
            default_request: list(&[("cpu", "250m"), ("memory", "256Mi")]),
            ..Default::default()
        });
        let mut pod = Pod::default();
        pod.spec.containers.push(Container {
            name: "app".into(),
            resources: ResourceRequirements {
                requests: list(&[("memory", "100Mi")]).into(),
                limits: Default::default(),
                claims: Vec::new(),
            },
            ..Default::default()
        });
        merge_pod(&mut pod, &default_requirements(&[&lr]));
        let c = &pod.spec.containers[0];
        assert_eq!(
            c.resources.requests,
            list(&[("cpu", "250m"), ("memory", "100Mi")])
        );
        assert_eq!(
            c.resources.limits,
            list(&[("cpu", "500m"), ("memory", "512Mi")])
        );
        assert_eq!(
            pod.metadata.annotations[LIMIT_RANGER_ANNOTATION],
            "LimitRanger plugin set: cpu request for container app; cpu, memory limit for container app"
        );
    }

    #[test]
    fn min_max_and_ratio_messages_are_upstreams() {
        let req = list(&[("cpu", "100m")]);
        let lim = list(&[("cpu", "2")]);
        assert_eq!(
            max_constraint("Container", "cpu", &q("1"), &req, &lim).as_deref(),
            Some("maximum cpu usage per Container is 1, but limit is 2")
        );
        assert_eq!(
            min_constraint("Container", "cpu", &q("200m"), &req, &lim).as_deref(),
            Some("minimum cpu usage per Container is 200m, but request is 100m")
        );
        assert_eq!(
            min_constraint("Pod", "memory", &q("1Mi"), &req, &lim).as_deref(),
            Some("minimum memory usage per Pod is 1Mi.  No request is specified")
        );
        assert_eq!(
            ratio_constraint("Container", "cpu", &q("4"), &req, &lim).as_deref(),
            Some("cpu max limit to request ratio per Container is 4, but provided ratio is 20.000000")
        );
        assert_eq!(
            ratio_constraint("Container", "cpu", &q("20"), &req, &lim),
            None
        );
        assert_eq!(aggregate(&["a".into(), "b".into()]), "[a, b]");
    }
}
