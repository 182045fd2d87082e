//! Container resource requirements (upstream `pkg/apis/core/validation/validation.go`
//! `ValidateContainerResourceRequirements`, `validateContainerResourceName`, `validateResourceName`,
//! `ValidateResourceQuantityValue`, `ValidateNonnegativeQuantity`, and the resource-name helpers of
//! `pkg/apis/core/helper/helpers.go`: `IsNativeResource`, `IsExtendedResourceName`,
//! `IsOvercommitAllowed`, `IsIntegerResourceName`).
//!
//! Rules: names are qualified names (unprefixed ones must be standard container resources: cpu,
//! memory, ephemeral-storage, hugepages-*); quantities are non-negative; extended resources
//! (`example.com/foo`, any domain except `*kubernetes.io/`) are whole numbers and, being
//! non-overcommitable, need a limit equal to the request; other requests must not exceed their
//! limit.

use k8s_types::core::{ResourceList, ResourceRequirements};
use k8s_types::status::FieldError;
use k8s_types::Quantity;

use super::names::is_qualified_name;
use super::{
    at_path_if_invalid, child, invalid_str, key, ErrorList, IS_NEGATIVE_ERROR_MSG,
    IS_NOT_INTEGER_ERROR_MSG,
};

/// Upstream `ResourceDefaultNamespacePrefix`.
const NATIVE_PREFIX: &str = "kubernetes.io/";
/// Upstream `DefaultResourceRequestsPrefix`.
const REQUESTS_PREFIX: &str = "requests.";
/// Upstream `ResourceHugePagesPrefix`.
const HUGEPAGES_PREFIX: &str = "hugepages-";

/// Upstream `standardResources` (resource names valid without a domain).
const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// Upstream `IsHugePageResourceName`.
pub fn is_hugepage(name: &str) -> bool {
    name.starts_with(HUGEPAGES_PREFIX)
}

/// Upstream `IsNativeResource`: no domain, or a `kubernetes.io/` domain.
pub fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains(NATIVE_PREFIX)
}

/// Upstream `IsExtendedResourceName`: a domain-prefixed name outside `kubernetes.io` that is a
/// valid quota name once `requests.` is prepended (e.g. `nvidia.com/gpu`).
pub fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with(REQUESTS_PREFIX) {
        return false;
    }
    is_qualified_name(&format!("{REQUESTS_PREFIX}{name}")).is_empty()
}

/// Upstream `IsOvercommitAllowed`: native resources other than hugepages may request less than
/// their limit.
pub fn is_overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_hugepage(name)
}

fn is_standard_container_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage") || is_hugepage(name)
}

fn is_standard_resource(name: &str) -> bool {
    STANDARD_RESOURCES.contains(&name)
        || is_hugepage(name)
        || name.starts_with("requests.hugepages-")
}

/// Upstream `validateContainerResourceName` (names print unquoted: `ResourceName` is a Stringer).
pub fn validate_container_resource_name(name: &str, path: &str) -> ErrorList {
    let mut errs: ErrorList = is_qualified_name(name)
        .into_iter()
        .map(|m| FieldError::invalid(path, name, m))
        .collect();
    if errs.is_empty() && !name.contains('/') && !is_standard_resource(name) {
        errs.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        ));
    }
    if !name.contains('/') {
        if !is_standard_container_resource(name) {
            errs.push(FieldError::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native_resource(name) && !is_extended_resource_name(name) {
        errs.push(FieldError::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errs
}

/// Upstream `ValidateNonnegativeQuantity` (the value prints quoted: upstream passes
/// `value.String()`).
pub fn validate_nonnegative_quantity(q: &Quantity, path: &str) -> ErrorList {
    if q.is_negative() {
        vec![invalid_str(path, &q.to_string(), IS_NEGATIVE_ERROR_MSG)]
    } else {
        Vec::new()
    }
}

/// Upstream `ValidateResourceQuantityValue`: non-negative, and whole for integer resources
/// (extended resources; the value prints unquoted through `Quantity.String()`).
///
/// Upstream tests `MilliValue() % 1000`, whose int64 wraps above about 9.2e15 and then answers at
/// random (`9223372036854775807` passes, `10000000000000000` fails); k8s-mini tests the exact
/// value instead, the same answer wherever upstream's arithmetic does not overflow
/// (docs/fidelity.md).
pub fn validate_resource_quantity_value(name: &str, q: &Quantity, path: &str) -> ErrorList {
    let mut errs = validate_nonnegative_quantity(q, path);
    if is_extended_resource_name(name) && q.nano_value() % 1_000_000_000 != 0 {
        errs.push(FieldError::invalid(
            path,
            q.to_string(),
            IS_NOT_INTEGER_ERROR_MSG,
        ));
    }
    errs
}

/// Upstream `ValidateContainerResourceRequirements`, at `path` = `...containers[i].resources`.
pub fn validate_resource_requirements(req: &ResourceRequirements, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    // Every container of every pod write comes through here: the paths are built for errors only.
    let lim_path = || child(path, "limits");
    let req_path = || child(path, "requests");
    let entry = |name: &str, q: &Quantity, base: &dyn Fn() -> String| {
        at_path_if_invalid(
            |p| {
                let mut e = validate_container_resource_name(name, p);
                e.extend(validate_resource_quantity_value(name, q, p));
                e
            },
            || key(&base(), name),
        )
    };
    let (mut lim_cpu_mem, mut req_cpu_mem, mut lim_huge, mut req_huge) =
        (false, false, false, false);
    for (name, q) in &req.limits {
        errs.extend(entry(name, q, &lim_path));
        lim_huge |= is_hugepage(name);
        lim_cpu_mem |= matches!(name.as_str(), "cpu" | "memory");
    }
    for (name, q) in &req.requests {
        errs.extend(entry(name, q, &req_path));
        match req.limits.get(name) {
            Some(limit) => {
                if q != limit && !is_overcommit_allowed(name) {
                    errs.push(invalid_str(
                        req_path(),
                        &q.to_string(),
                        format!("must be equal to {name} limit of {limit}"),
                    ));
                } else if q > limit {
                    errs.push(invalid_str(
                        req_path(),
                        &q.to_string(),
                        format!("must be less than or equal to {name} limit of {limit}"),
                    ));
                }
            }
            None if !is_overcommit_allowed(name) => errs.push(FieldError::required(
                lim_path(),
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
        req_huge |= is_hugepage(name);
        req_cpu_mem |= matches!(name.as_str(), "cpu" | "memory");
    }
    if !lim_cpu_mem && !req_cpu_mem && (req_huge || lim_huge) {
        errs.push(FieldError::forbidden(
            path,
            "HugePages require cpu or memory",
        ));
    }
    errs
}

/// Upstream `validateOverhead`: resource names and non-negative values of `spec.overhead`.
pub fn validate_overhead(overhead: &ResourceList, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    for (name, q) in overhead {
        let p = key(path, name);
        errs.extend(validate_container_resource_name(name, &p));
        errs.extend(validate_resource_quantity_value(name, q, &p));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(pairs: &[(&str, &str)]) -> ResourceList {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap()))
            .collect()
    }

    #[test]
    fn resource_name_classes() {
        assert!(is_extended_resource_name("nvidia.com/gpu"));
        assert!(!is_extended_resource_name("cpu"));
        assert!(!is_extended_resource_name("kubernetes.io/foo"));
        assert!(is_overcommit_allowed("memory"));
        assert!(!is_overcommit_allowed("nvidia.com/gpu"));
        assert!(!is_overcommit_allowed("hugepages-2Mi"));
    }

    #[test]
    fn requests_above_limits_and_negative_values() {
        let req = ResourceRequirements {
            requests: list(&[("cpu", "2"), ("memory", "-1")]).into(),
            limits: list(&[("cpu", "1")]).into(),
            claims: Vec::new(),
        };
        let errs: Vec<String> =
            validate_resource_requirements(&req, "spec.containers[0].resources")
                .iter()
                .map(ToString::to_string)
                .collect();
        assert_eq!(
            errs,
            vec![
                "spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1",
                "spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be greater than or equal to 0",
            ]
        );
    }

    #[test]
    fn extended_resources_are_whole_and_equal_to_their_limit() {
        let req = ResourceRequirements {
            requests: list(&[("nvidia.com/gpu", "1")]).into(),
            limits: list(&[("nvidia.com/gpu", "500m")]).into(),
            claims: Vec::new(),
        };
        let errs: Vec<String> = validate_resource_requirements(&req, "r")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "r.limits[nvidia.com/gpu]: Invalid value: 500m: must be an integer",
                "r.requests: Invalid value: \"1\": must be equal to nvidia.com/gpu limit of 500m",
            ]
        );
        let only_request = ResourceRequirements {
            requests: list(&[("example.com/foo", "2")]).into(),
            limits: Default::default(),
            claims: Vec::new(),
        };
        assert_eq!(
            validate_resource_requirements(&only_request, "r")[0].to_string(),
            "r.limits: Required value: Limit must be set for non overcommitable resources"
        );
    }

    /// Whole values are integers however large (the largest int64 among them, which a saturated
    /// milli-value once refused); a thousandth is not.
    #[test]
    fn large_whole_extended_quantities_are_integers() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        for whole in ["9223372036854775807", "10000000000000000", "1k", "1Ki"] {
            assert!(
                validate_resource_quantity_value("example.com/foo", &q(whole), "p").is_empty(),
                "{whole}"
            );
        }
        assert_eq!(
            validate_resource_quantity_value("example.com/foo", &q("1001m"), "p")[0].to_string(),
            "p: Invalid value: 1001m: must be an integer"
        );
    }

    #[test]
    fn unknown_unprefixed_names_are_rejected() {
        let errs: Vec<String> = validate_container_resource_name("gpu", "p")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "p: Invalid value: gpu: must be a standard resource type or fully qualified",
                "p: Invalid value: gpu: must be a standard resource for containers",
            ]
        );
    }
}
