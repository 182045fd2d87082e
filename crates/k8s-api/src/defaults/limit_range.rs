//! LimitRange defaults (upstream `pkg/apis/core/v1/defaults.go` `SetDefaults_LimitRangeItem`): in a
//! `Container` item, a resource with a `max` but no `default` gets the max as its default limit; a
//! resource with a `default` but no `defaultRequest` gets the default as its default request; then
//! a resource with a `min` but still no `defaultRequest` gets the min.

use k8s_types::core::limit_range::LIMIT_TYPE_CONTAINER;
use k8s_types::core::LimitRange;

/// Upstream `SetDefaults_LimitRangeItem` for every item.
pub fn set_defaults_limit_range(lr: &mut LimitRange) {
    for item in &mut lr.spec.limits {
        if item.type_ != LIMIT_TYPE_CONTAINER {
            continue;
        }
        for (k, v) in &item.max {
            item.default.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in &item.default {
            item.default_request
                .entry(k.clone())
                .or_insert_with(|| v.clone());
        }
        for (k, v) in &item.min {
            item.default_request
                .entry(k.clone())
                .or_insert_with(|| v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::LimitRangeItem;
    use k8s_types::Quantity;

    #[test]
    fn max_defaults_the_limit_and_the_limit_or_min_the_request() {
        let q = |s: &str| Quantity::parse(s).unwrap_or_default();
        let mut lr = LimitRange::default();
        lr.spec.limits.push(LimitRangeItem {
            type_: "Container".into(),
            max: [("cpu".to_string(), q("2"))].into(),
            min: [("memory".to_string(), q("64Mi"))].into(),
            ..Default::default()
        });
        set_defaults_limit_range(&mut lr);
        let item = &lr.spec.limits[0];
        assert_eq!(item.default, [("cpu".to_string(), q("2"))].into());
        assert_eq!(
            item.default_request,
            [
                ("cpu".to_string(), q("2")),
                ("memory".to_string(), q("64Mi"))
            ]
            .into()
        );
    }
}
