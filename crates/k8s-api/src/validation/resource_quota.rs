//! ResourceQuota and LimitRange validation (upstream `pkg/apis/core/validation/validation.go`
//! `ValidateResourceQuota`, `validateResourceQuotaResourceName`, `ValidateResourceQuotaSpec`,
//! `ValidateLimitRange`): namespaced, names DNS subdomains, quantities not negative; LimitRange
//! items of a supported type whose bounds are ordered (`min <= defaultRequest <= default <= max`,
//! `maxLimitRequestRatio >= 1`), with no defaults on a `Pod` item.

use k8s_types::core::limit_range::{
    LIMIT_TYPE_CONTAINER, LIMIT_TYPE_PERSISTENT_VOLUME_CLAIM, LIMIT_TYPE_POD,
};
use k8s_types::core::{LimitRange, ResourceList, ResourceQuota};
use k8s_types::status::FieldError;

use super::meta::validate_object_meta;
use super::names::name_is_dns_subdomain;
use super::resources::validate_resource_quantity_value;
use super::{index, key, ErrorList};

/// Upstream `ValidateResourceQuota` (spec and status `hard`/`used` quantities).
pub fn validate_resource_quota(rq: &ResourceQuota) -> ErrorList {
    let mut errs = validate_object_meta(&rq.metadata, true, name_is_dns_subdomain, "metadata");
    for (field, list) in [
        ("spec.hard", &rq.spec.hard),
        ("status.hard", &rq.status.hard),
        ("status.used", &rq.status.used),
    ] {
        errs.extend(quantities(list, field));
    }
    for (i, s) in rq.spec.scopes.iter().enumerate() {
        const SCOPES: [&str; 6] = [
            "Terminating",
            "NotTerminating",
            "BestEffort",
            "NotBestEffort",
            "PriorityClass",
            "CrossNamespacePodAffinity",
        ];
        if !SCOPES.contains(&s.as_str()) {
            errs.push(FieldError::not_supported(
                index("spec.scopes", i),
                s,
                &SCOPES,
            ));
        }
    }
    errs
}

fn quantities(list: &ResourceList, path: &str) -> ErrorList {
    list.iter()
        .flat_map(|(k, v)| validate_resource_quantity_value(k, v, &key(path, k)))
        .collect()
}

/// Upstream `ValidateLimitRange`.
pub fn validate_limit_range(lr: &LimitRange) -> ErrorList {
    let mut errs = validate_object_meta(&lr.metadata, true, name_is_dns_subdomain, "metadata");
    for (i, item) in lr.spec.limits.iter().enumerate() {
        let path = index("spec.limits", i);
        let supported = [
            LIMIT_TYPE_POD,
            LIMIT_TYPE_CONTAINER,
            LIMIT_TYPE_PERSISTENT_VOLUME_CLAIM,
        ];
        if !supported.contains(&item.type_.as_str()) {
            errs.push(FieldError::not_supported(
                format!("{path}.type"),
                &item.type_,
                &supported,
            ));
        }
        for (field, list) in [
            ("max", &item.max),
            ("min", &item.min),
            ("default", &item.default),
            ("defaultRequest", &item.default_request),
            ("maxLimitRequestRatio", &item.max_limit_request_ratio),
        ] {
            errs.extend(quantities(list, &format!("{path}.{field}")));
        }
        if item.type_ == LIMIT_TYPE_POD {
            for (field, list) in [
                ("default", &item.default),
                ("defaultRequest", &item.default_request),
            ] {
                if !list.is_empty() {
                    errs.push(FieldError::forbidden(
                        format!("{path}.{field}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        }
        for (k, min) in &item.min {
            let at = |f: &str| key(&format!("{path}.{f}"), k);
            if let Some(max) = item.max.get(k).filter(|max| min > *max) {
                errs.push(FieldError::invalid(
                    at("min"),
                    min.to_string(),
                    format!("min value {min} is greater than max value {max}"),
                ));
            }
            if let Some(d) = item.default_request.get(k).filter(|d| min > *d) {
                errs.push(FieldError::invalid(
                    at("defaultRequest"),
                    d.to_string(),
                    format!("min value {min} is greater than default request value {d}"),
                ));
            }
            if let Some(d) = item.default.get(k).filter(|d| min > *d) {
                errs.push(FieldError::invalid(
                    at("default"),
                    d.to_string(),
                    format!("min value {min} is greater than default value {d}"),
                ));
            }
        }
        for (k, max) in &item.max {
            let at = |f: &str| key(&format!("{path}.{f}"), k);
            if let Some(d) = item.default_request.get(k).filter(|d| *d > max) {
                errs.push(FieldError::invalid(
                    at("defaultRequest"),
                    d.to_string(),
                    format!("default request value {d} is greater than max value {max}"),
                ));
            }
            if let Some(d) = item.default.get(k).filter(|d| *d > max) {
                errs.push(FieldError::invalid(
                    at("default"),
                    d.to_string(),
                    format!("default value {d} is greater than max value {max}"),
                ));
            }
        }
        for (k, dr) in &item.default_request {
            if let Some(d) = item.default.get(k).filter(|d| dr > *d) {
                errs.push(FieldError::invalid(
                    key(&format!("{path}.defaultRequest"), k),
                    dr.to_string(),
                    format!("default request value {dr} is greater than default limit value {d}"),
                ));
            }
        }
        for (k, ratio) in &item.max_limit_request_ratio {
            if ratio.milli_value() < 1000 {
                errs.push(FieldError::invalid(
                    key(&format!("{path}.maxLimitRequestRatio"), k),
                    ratio.to_string(),
                    format!("ratio {ratio} is less than 1"),
                ));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::LimitRangeItem;
    use k8s_types::Quantity;

    #[test]
    fn limit_range_bounds_must_be_ordered() {
        let mut lr = LimitRange::default();
        lr.metadata.name = "lr".into();
        lr.metadata.namespace = Some("default".into());
        let q = |s: &str| Quantity::parse(s).unwrap_or_default();
        lr.spec.limits.push(LimitRangeItem {
            type_: "Container".into(),
            min: [("cpu".to_string(), q("2"))].into(),
            max: [("cpu".to_string(), q("1"))].into(),
            ..Default::default()
        });
        let errs: Vec<String> = validate_limit_range(&lr)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec!["spec.limits[0].min[cpu]: Invalid value: 2: min value 2 is greater than max value 1"]
        );
    }
}
