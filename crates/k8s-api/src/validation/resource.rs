//! `resource.k8s.io/v1` validation (upstream `pkg/apis/resource/validation/validation.go`:
//! `ValidateDeviceClass`, `ValidateResourceClaim`, `ValidateResourceClaimTemplate`,
//! `ValidateResourceSlice` and their updates). Object names are DNS subdomains; request and
//! device names DNS labels; the driver name follows `ValidateCSIDriverName`; CEL selectors are
//! compiled (`compilation failed: ...` as upstream's wording around the cel-rust parser's
//! message). Simplifications (docs/fidelity.md): size limits report `Invalid ... must have at
//! most N items` (k8s-mini's field errors have no TooMany type), the CEL cost limit is not
//! estimated, and `firstAvailable` sub-requests, constraints and opaque config are checked only
//! for presence.

use std::collections::BTreeSet;

use k8s_types::core::{ContainerResourceClaim, PodResourceClaim};
use k8s_types::resource::cel::CelSelector;
use k8s_types::resource::{
    DeviceClass, DeviceRequest, DeviceSelector, ResourceClaim, ResourceClaimSpec,
    ResourceClaimTemplate, ResourceSlice, ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE, CEL_SELECTOR_EXPRESSION_MAX_LENGTH, DEVICE_SELECTORS_MAX_SIZE,
    DRIVER_NAME_MAX_LENGTH, RESOURCE_SLICE_MAX_DEVICES,
};
use k8s_types::status::FieldError;

use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::{is_dns1123_label, is_dns1123_subdomain, max_len_error, name_is_dns_subdomain};
use super::{child, index, invalid_each, ErrorList, FIELD_IMMUTABLE_ERROR_MSG};

fn too_many(path: &str, n: usize, max: usize) -> Option<FieldError> {
    (n > max).then(|| {
        FieldError::invalid(
            path,
            n.to_string(),
            format!("must have at most {max} items"),
        )
    })
}

/// Upstream `ValidateCSIDriverName` (the DRA driver name rule).
pub fn validate_driver_name(name: &str, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
        return errs;
    }
    if name.len() > DRIVER_NAME_MAX_LENGTH {
        errs.push(FieldError::invalid(
            path,
            format!("\"{name}\""),
            max_len_error(DRIVER_NAME_MAX_LENGTH),
        ));
    }
    errs.extend(invalid_each(
        path,
        name,
        is_dns1123_subdomain(&name.to_ascii_lowercase()),
    ));
    errs
}

fn required_label(value: &str, path: &str) -> ErrorList {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    invalid_each(path, value, is_dns1123_label(value))
}

/// Upstream `validateSelector` / `validateCELSelector`.
fn validate_selectors(selectors: &[DeviceSelector], path: &str) -> ErrorList {
    let mut errs: ErrorList = too_many(path, selectors.len(), DEVICE_SELECTORS_MAX_SIZE)
        .into_iter()
        .collect();
    for (i, s) in selectors.iter().enumerate() {
        let p = index(path, i);
        let Some(cel) = &s.cel else {
            errs.push(FieldError::required(child(&p, "cel"), ""));
            continue;
        };
        let p = child(&child(&p, "cel"), "expression");
        if cel.expression.len() > CEL_SELECTOR_EXPRESSION_MAX_LENGTH {
            errs.push(FieldError::invalid(
                p,
                "\"\"",
                format!("may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"),
            ));
            continue;
        }
        if cel.expression.trim().is_empty() {
            errs.push(FieldError::required(p, "expression is required"));
            continue;
        }
        if let Err(e) = CelSelector::compile(&cel.expression) {
            errs.push(FieldError::invalid(
                p,
                format!("\"{}\"", cel.expression),
                format!("compilation failed: {e}"),
            ));
        }
    }
    errs
}

/// Upstream `validateDeviceRequest` and `validateExactDeviceRequest`.
fn validate_request(r: &DeviceRequest, path: &str) -> ErrorList {
    let mut errs = required_label(&r.name, &child(path, "name"));
    match (&r.exactly, r.first_available.is_empty()) {
        (None, true) => errs.push(FieldError::required(
            path,
            "exactly one of `exactly` or `firstAvailable` is required",
        )),
        (Some(_), false) => errs.push(FieldError::invalid(
            path,
            "null",
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
        )),
        (None, false) => {}
        (Some(e), true) => {
            let path = child(path, "exactly");
            let class_path = child(&path, "deviceClassName");
            if e.device_class_name.is_empty() {
                errs.push(FieldError::required(class_path, ""));
            } else {
                errs.extend(invalid_each(
                    &class_path,
                    &e.device_class_name,
                    is_dns1123_subdomain(&e.device_class_name),
                ));
            }
            errs.extend(validate_selectors(&e.selectors, &child(&path, "selectors")));
            let count = e.count.unwrap_or(0);
            let count_path = child(&path, "count");
            match e.allocation_mode.as_deref().unwrap_or("") {
                ALLOCATION_MODE_ALL if count != 0 => errs.push(FieldError::invalid(
                    count_path,
                    count.to_string(),
                    "must not be specified when allocationMode is 'All'",
                )),
                ALLOCATION_MODE_EXACT_COUNT if count <= 0 => errs.push(FieldError::invalid(
                    count_path,
                    count.to_string(),
                    "must be greater than zero",
                )),
                ALLOCATION_MODE_ALL | ALLOCATION_MODE_EXACT_COUNT => {}
                other => errs.push(FieldError::not_supported(
                    child(&path, "allocationMode"),
                    other,
                    &[ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT],
                )),
            }
        }
    }
    errs
}

/// Upstream `validateResourceClaimSpec` at `path` (`spec` or `spec.spec`).
pub fn validate_resource_claim_spec(spec: &ResourceClaimSpec, path: &str) -> ErrorList {
    let path = child(&child(path, "devices"), "requests");
    let reqs = &spec.devices.requests;
    let mut errs: ErrorList = too_many(&path, reqs.len(), ALLOCATION_RESULTS_MAX_SIZE)
        .into_iter()
        .collect();
    let mut seen = BTreeSet::new();
    for (i, r) in reqs.iter().enumerate() {
        let p = index(&path, i);
        if !r.name.is_empty() && !seen.insert(r.name.as_str()) {
            errs.push(FieldError::duplicate(
                child(&p, "name"),
                format!("\"{}\"", r.name),
            ));
        }
        errs.extend(validate_request(r, &p));
    }
    errs
}

/// Upstream `ValidateDeviceClass`.
pub fn validate_device_class(c: &DeviceClass) -> ErrorList {
    let mut errs = validate_object_meta(&c.metadata, false, name_is_dns_subdomain, "metadata");
    errs.extend(validate_selectors(&c.spec.selectors, "spec.selectors"));
    errs
}

/// Upstream `ValidateDeviceClassUpdate`: metadata rules, then the new class as on create.
pub fn validate_device_class_update(n: &DeviceClass, o: &DeviceClass) -> ErrorList {
    let mut errs = validate_object_meta_update(&n.metadata, &o.metadata, "metadata");
    errs.extend(validate_device_class(n));
    errs
}

/// Upstream `ValidateResourceClaim`.
pub fn validate_resource_claim(c: &ResourceClaim) -> ErrorList {
    let mut errs = validate_object_meta(&c.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_resource_claim_spec(&c.spec, "spec"));
    errs
}

/// Upstream `ValidateResourceClaimUpdate`: the spec is immutable.
pub fn validate_resource_claim_update(n: &ResourceClaim, o: &ResourceClaim) -> ErrorList {
    let mut errs = validate_object_meta_update(&n.metadata, &o.metadata, "metadata");
    if n.spec != o.spec {
        errs.push(FieldError::invalid(
            "spec",
            "{...}",
            FIELD_IMMUTABLE_ERROR_MSG,
        ));
    }
    errs
}

/// Upstream `ValidateResourceClaimTemplate`.
pub fn validate_resource_claim_template(t: &ResourceClaimTemplate) -> ErrorList {
    let mut errs = validate_object_meta(&t.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_resource_claim_spec(&t.spec.spec, "spec.spec"));
    errs
}

/// Upstream `ValidateResourceClaimTemplateUpdate`: the spec is immutable.
pub fn validate_resource_claim_template_update(
    n: &ResourceClaimTemplate,
    o: &ResourceClaimTemplate,
) -> ErrorList {
    let mut errs = validate_object_meta_update(&n.metadata, &o.metadata, "metadata");
    if n.spec != o.spec {
        errs.push(FieldError::invalid(
            "spec",
            "{...}",
            FIELD_IMMUTABLE_ERROR_MSG,
        ));
    }
    errs
}

const WHERE_FIELDS: &str =
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";

/// Upstream `ValidateResourceSlice` / `validateResourceSliceSpec` (`old`: on update, the
/// driver, pool name and node name are immutable).
pub fn validate_resource_slice(s: &ResourceSlice, old: Option<&ResourceSlice>) -> ErrorList {
    let mut errs = validate_object_meta(&s.metadata, false, name_is_dns_subdomain, "metadata");
    let spec = &s.spec;
    errs.extend(validate_driver_name(&spec.driver, "spec.driver"));
    if spec.pool.name.is_empty() {
        errs.push(FieldError::required("spec.pool.name", ""));
    } else {
        for part in spec.pool.name.split('/') {
            errs.extend(invalid_each(
                "spec.pool.name",
                &spec.pool.name,
                is_dns1123_subdomain(part),
            ));
        }
    }
    if spec.pool.resource_slice_count <= 0 {
        errs.push(FieldError::invalid(
            "spec.pool.resourceSliceCount",
            spec.pool.resource_slice_count.to_string(),
            "must be greater than zero",
        ));
    }
    if spec.pool.generation < 0 {
        errs.push(FieldError::invalid(
            "spec.pool.generation",
            spec.pool.generation.to_string(),
            "must be greater than or equal to zero",
        ));
    }
    if let Some(o) = old {
        for (field, changed) in [
            ("spec.pool.name", spec.pool.name != o.spec.pool.name),
            ("spec.driver", spec.driver != o.spec.driver),
            ("spec.nodeName", spec.node_name != o.spec.node_name),
        ] {
            if changed {
                errs.push(FieldError::invalid(
                    field,
                    "{...}",
                    FIELD_IMMUTABLE_ERROR_MSG,
                ));
            }
        }
    }
    let mut set = Vec::new();
    if let Some(n) = &spec.node_name {
        if n.is_empty() {
            errs.push(FieldError::invalid(
                "spec.nodeName",
                "\"\"",
                "must be either unset or set to a non-empty string",
            ));
        } else {
            set.push("`nodeName`");
        }
    }
    if spec.node_selector.is_some() {
        set.push("`nodeSelector`");
    }
    for (field, v) in [
        ("allNodes", spec.all_nodes),
        ("perDeviceNodeSelection", spec.per_device_node_selection),
    ] {
        match v {
            Some(true) => set.push(if field == "allNodes" {
                "`allNodes`"
            } else {
                "`perDeviceNodeSelection`"
            }),
            Some(false) => errs.push(FieldError::invalid(
                child("spec", field),
                "false",
                "must be either unset or set to true",
            )),
            None => {}
        }
    }
    match set.len() {
        0 => errs.push(FieldError::required("spec", WHERE_FIELDS)),
        1 => {}
        _ => errs.push(FieldError::invalid(
            "spec",
            format!("\"{{{}}}\"", set.join(", ")),
            format!("{WHERE_FIELDS}, but multiple fields are set"),
        )),
    }
    errs.extend(too_many(
        "spec.devices",
        spec.devices.len(),
        RESOURCE_SLICE_MAX_DEVICES,
    ));
    let mut seen = BTreeSet::new();
    for (i, d) in spec.devices.iter().enumerate() {
        let p = index("spec.devices", i);
        errs.extend(required_label(&d.name, &child(&p, "name")));
        if !d.name.is_empty() && !seen.insert(d.name.as_str()) {
            errs.push(FieldError::duplicate(&p, format!("\"{}\"", d.name)));
        }
        for (name, a) in &d.attributes {
            let ap = super::key(&child(&p, "attributes"), name);
            if a.values_set() != 1 {
                errs.push(FieldError::invalid(
                    ap.clone(),
                    "\"\"",
                    "exactly one value must be specified",
                ));
            }
            if a.string.as_ref().is_some_and(|s| s.len() > 64) {
                errs.push(FieldError::invalid(
                    child(&ap, "string"),
                    "\"\"",
                    "may not be more than 64 bytes",
                ));
            }
        }
    }
    errs
}

/// Upstream `validatePodResourceClaims` (pkg/apis/core/validation): each entry has a unique
/// DNS-label name and exactly one of `resourceClaimName` and `resourceClaimTemplateName`; for a
/// template, `<pod>-<claim>` must make a valid claim name ("final ResourceClaim name: ...").
/// `pod_name` is None inside a pod template.
pub fn validate_pod_resource_claims(
    claims: &[PodResourceClaim],
    pod_name: Option<&str>,
    path: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, c) in claims.iter().enumerate() {
        let p = index(path, i);
        let name_path = child(&p, "name");
        if c.name.is_empty() {
            errs.push(FieldError::required(name_path, ""));
        } else if names.contains(c.name.as_str()) {
            errs.push(FieldError::duplicate(name_path, format!("\"{}\"", c.name)));
        } else {
            let name_errs = invalid_each(&name_path, &c.name, is_dns1123_label(&c.name));
            if name_errs.is_empty() && c.resource_claim_template_name.is_some() {
                if let Some(pod) = pod_name.filter(|n| !n.is_empty()) {
                    let final_name = format!("{pod}-{}", c.name);
                    for d in name_is_dns_subdomain(&final_name, false) {
                        errs.push(FieldError::invalid(
                            &name_path,
                            format!("\"{final_name}\""),
                            format!("final ResourceClaim name: {d}"),
                        ));
                    }
                }
            }
            errs.extend(name_errs);
            names.insert(c.name.as_str());
        }
        match (&c.resource_claim_name, &c.resource_claim_template_name) {
            (Some(_), Some(_)) => errs.push(FieldError::invalid(
                &p,
                "{...}",
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            )),
            (None, None) => errs.push(FieldError::invalid(
                &p,
                "{...}",
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )),
            _ => {}
        }
        for (field, v) in [
            ("resourceClaimName", &c.resource_claim_name),
            ("resourceClaimTemplateName", &c.resource_claim_template_name),
        ] {
            if let Some(v) = v {
                errs.extend(invalid_each(
                    &child(&p, field),
                    v,
                    name_is_dns_subdomain(v, false),
                ));
            }
        }
    }
    errs
}

/// Upstream `validateResourceClaimNames`: a container's `resources.claims[]` name one of the
/// pod's `spec.resourceClaims`, each once.
pub fn validate_container_claims(
    claims: &[ContainerResourceClaim],
    pod_claims: &[PodResourceClaim],
    path: &str,
) -> ErrorList {
    let pod_names: BTreeSet<&str> = pod_claims.iter().map(|c| c.name.as_str()).collect();
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, c) in claims.iter().enumerate() {
        let p = index(path, i);
        if c.name.is_empty() {
            errs.push(FieldError::required(p, ""));
            continue;
        }
        let key = match c.request.as_deref().filter(|r| !r.is_empty()) {
            Some(r) => format!("{}/{r}", c.name),
            None => c.name.clone(),
        };
        if !seen.insert(key.clone()) {
            errs.push(FieldError::duplicate(&p, format!("\"{key}\"")));
        }
        if !pod_names.contains(c.name.as_str()) {
            let detail = if pod_names.is_empty() {
                "must be one of the names in pod.spec.resourceClaims which is empty".to_string()
            } else {
                format!(
                    "must be one of the names in pod.spec.resourceClaims: {}",
                    pod_names.iter().copied().collect::<Vec<_>>().join(", ")
                )
            };
            errs.push(FieldError::not_found(p, format!("\"{}\"", c.name), detail));
        }
    }
    errs
}
