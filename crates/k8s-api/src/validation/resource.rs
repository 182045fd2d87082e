//! `resource.k8s.io/v1` validation (upstream `pkg/apis/resource/validation/validation.go`:
//! `ValidateDeviceClass`, `ValidateResourceClaim`, `ValidateResourceClaimTemplate`,
//! `ValidateResourceSlice` and their updates). Object names are DNS subdomains; request and
//! device names DNS labels; the driver name follows `ValidateCSIDriverName`; CEL selectors are
//! compiled (`compilation failed: ...` as upstream's wording around the cel-rust parser's
//! message). Simplifications (docs/fidelity.md): size limits report `Invalid ... must have at
//! most N items` (k8s-mini's field errors have no TooMany type), the CEL cost limit is not
//! estimated, sub-request tolerations and opaque config are checked only for presence.

use std::collections::BTreeSet;

use k8s_types::core::{ContainerResourceClaim, PodResourceClaim};
use k8s_types::resource::cel::CelSelector;
use k8s_types::resource::{
    DeviceClass, DeviceConstraint, DeviceRequest, DeviceSelector, ResourceClaim, ResourceClaimSpec,
    ResourceClaimTemplate, ResourceSlice, ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE, CEL_SELECTOR_EXPRESSION_MAX_LENGTH, DEVICE_CONSTRAINTS_MAX_SIZE,
    DEVICE_MAX_ID_LENGTH, DEVICE_SELECTORS_MAX_SIZE, DRIVER_NAME_MAX_LENGTH,
    FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE, RESOURCE_SLICE_MAX_DEVICES,
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

/// Upstream `validateDeviceClass` (a request's class name), `validateSelectorSlice` and
/// `validateDeviceAllocationMode`: the checks `exactly` and a `firstAvailable` entry share.
fn validate_class_selectors_mode(
    class: &str,
    selectors: &[DeviceSelector],
    mode: Option<&str>,
    count: Option<i64>,
    path: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    let class_path = child(path, "deviceClassName");
    if class.is_empty() {
        errs.push(FieldError::required(class_path, ""));
    } else {
        errs.extend(invalid_each(
            &class_path,
            class,
            is_dns1123_subdomain(class),
        ));
    }
    errs.extend(validate_selectors(selectors, &child(path, "selectors")));
    let count = count.unwrap_or(0);
    let count_path = child(path, "count");
    match mode.unwrap_or("") {
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
            child(path, "allocationMode"),
            other,
            &[ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT],
        )),
    }
    errs
}

/// Upstream `validateDeviceRequest`, `validateExactDeviceRequest` and `validateDeviceSubRequest`:
/// exactly one of `exactly` and `firstAvailable`; sub-requests (at most 8) have unique DNS-label
/// names (a repeated one is `Duplicate value` at `firstAvailable[i]`).
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
        (None, false) => {
            let path = child(path, "firstAvailable");
            let subs = &r.first_available;
            if let Some(e) = too_many(&path, subs.len(), FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE) {
                errs.push(e);
                return errs;
            }
            let mut seen = BTreeSet::new();
            for (i, sub) in subs.iter().enumerate() {
                let p = index(&path, i);
                errs.extend(required_label(&sub.name, &child(&p, "name")));
                errs.extend(validate_class_selectors_mode(
                    &sub.device_class_name,
                    &sub.selectors,
                    sub.allocation_mode.as_deref(),
                    sub.count,
                    &p,
                ));
            }
            for (i, sub) in subs.iter().enumerate() {
                if !seen.insert(sub.name.as_str()) {
                    errs.push(FieldError::duplicate(
                        index(&path, i),
                        format!("\"{}\"", sub.name),
                    ));
                }
            }
        }
        (Some(e), true) => {
            errs.extend(validate_class_selectors_mode(
                &e.device_class_name,
                &e.selectors,
                e.allocation_mode.as_deref(),
                e.count,
                &child(path, "exactly"),
            ));
        }
    }
    errs
}

const REQUEST_REF_MSG: &str =
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";

/// Upstream `validateRequestNameRef`: `<request>` or `<request>/<subrequest>` naming a request
/// (and one of its `firstAvailable` entries) of the claim.
fn validate_request_ref(name: &str, requests: &[DeviceRequest], path: &str) -> ErrorList {
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() > 2 {
        return vec![FieldError::invalid(
            path,
            format!("\"{name}\""),
            REQUEST_REF_MSG,
        )];
    }
    let mut errs: ErrorList = segments
        .iter()
        .flat_map(|s| required_label(s, path))
        .collect();
    let known = requests.iter().any(|r| {
        r.name == segments[0]
            && match segments.get(1) {
                None => true,
                Some(sub) => r.first_available.iter().any(|s| s.name == *sub),
            }
    });
    if !known {
        errs.push(FieldError::invalid(
            path,
            format!("\"{name}\""),
            REQUEST_REF_MSG,
        ));
    }
    errs
}

/// Upstream `IsCIdentifier` (the name part of a qualified attribute name).
fn validate_c_identifier(id: &str, value: &str, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if id.len() > DEVICE_MAX_ID_LENGTH {
        errs.push(FieldError::invalid(
            path,
            "\"\"",
            format!("may not be more than {DEVICE_MAX_ID_LENGTH} bytes"),
        ));
    }
    let mut chars = id.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        errs.push(FieldError::invalid(
            path,
            format!("\"{value}\""),
            "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
        ));
    }
    errs
}

/// Upstream `validateFullyQualifiedName` (with `validateQualifiedName`): `<domain>/<name>`, the
/// domain a driver name, the name a C identifier.
fn validate_fully_qualified_name(name: &str, path: &str) -> ErrorList {
    if name.is_empty() {
        return vec![FieldError::required(path, "name required")];
    }
    let mut errs = Vec::new();
    match name.split_once('/') {
        None => {
            errs.extend(validate_c_identifier(name, name, path));
            errs.push(FieldError::invalid(
                path,
                format!("\"{name}\""),
                "a fully qualified name must be a domain and a name separated by a slash",
            ));
        }
        Some((domain, id)) => {
            if domain.is_empty() {
                errs.push(FieldError::required(path, "the domain must not be empty"));
            } else {
                errs.extend(validate_driver_name(domain, path));
            }
            if id.is_empty() {
                errs.push(FieldError::required(path, "the name must not be empty"));
            } else {
                errs.extend(validate_c_identifier(id, id, path));
            }
        }
    }
    errs
}

/// Upstream `validateDeviceConstraint` (with `DRAConsumableCapacity` off, its v1.34/v1.35
/// default): the `requests` name requests of the claim, without repeats; `matchAttribute` is
/// required and fully qualified.
fn validate_constraint(c: &DeviceConstraint, requests: &[DeviceRequest], path: &str) -> ErrorList {
    let rpath = child(path, "requests");
    let mut errs: ErrorList = too_many(&rpath, c.requests.len(), ALLOCATION_RESULTS_MAX_SIZE)
        .into_iter()
        .collect();
    if errs.is_empty() {
        let mut seen = BTreeSet::new();
        for (i, name) in c.requests.iter().enumerate() {
            errs.extend(validate_request_ref(name, requests, &index(&rpath, i)));
        }
        for (i, name) in c.requests.iter().enumerate() {
            if !seen.insert(name.as_str()) {
                errs.push(FieldError::duplicate(
                    index(&rpath, i),
                    format!("\"{name}\""),
                ));
            }
        }
    }
    let mpath = child(path, "matchAttribute");
    match &c.match_attribute {
        None => errs.push(FieldError::required(mpath, "")),
        Some(a) => errs.extend(validate_fully_qualified_name(a, &mpath)),
    }
    errs
}

/// Upstream `validateResourceClaimSpec` at `path` (`spec` or `spec.spec`).
pub fn validate_resource_claim_spec(spec: &ResourceClaimSpec, path: &str) -> ErrorList {
    let devices = child(path, "devices");
    let path = child(&devices, "requests");
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
    let cpath = child(&devices, "constraints");
    let constraints = &spec.devices.constraints;
    match too_many(&cpath, constraints.len(), DEVICE_CONSTRAINTS_MAX_SIZE) {
        Some(e) => errs.push(e),
        None => {
            for (i, c) in constraints.iter().enumerate() {
                errs.extend(validate_constraint(c, reqs, &index(&cpath, i)));
            }
        }
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
