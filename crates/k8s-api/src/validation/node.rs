//! Node validation (upstream `pkg/apis/core/validation/validation.go` `ValidateNode`,
//! `validateNodeTaints`, `validateTaintEffect`, `validateNodeResources`): the name is a DNS-1123
//! subdomain, taints have qualified keys, valid values, a supported effect, and are unique by key and
//! effect; capacity and allocatable quantities are non-negative, and whole for extended resources.

use std::collections::BTreeSet;

use k8s_types::core::{Node, Taint};
use k8s_types::status::{FieldError, FieldErrorType};

use super::gofmt::quote;
use super::labels::validate_label_name;
use super::meta::validate_object_meta;
use super::names::{is_label_value, name_is_dns_subdomain};
use super::pod_spec::TAINT_EFFECTS;
use super::resources::validate_resource_quantity_value;
use super::{child, index, invalid_str, key, ErrorList};

fn taint_go(t: &Taint) -> String {
    let added = if t.time_added.is_some() {
        "(*v1.Time)(...)"
    } else {
        "(*v1.Time)(nil)"
    };
    format!(
        "core.Taint{{Key:{}, Value:{}, Effect:{}, TimeAdded:{added}}}",
        quote(&t.key),
        quote(&t.value),
        quote(&t.effect)
    )
}

/// Upstream `validateNodeTaints`.
pub fn validate_taints(taints: &[Taint], path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, t) in taints.iter().enumerate() {
        let p = index(path, i);
        errs.extend(validate_label_name(&t.key, &child(&p, "key")));
        let msgs = is_label_value(&t.value);
        if !msgs.is_empty() {
            errs.push(invalid_str(child(&p, "value"), &t.value, msgs.join(";")));
        }
        if t.effect.is_empty() {
            errs.push(FieldError::required(child(&p, "effect"), ""));
        } else if !TAINT_EFFECTS.contains(&t.effect.as_str()) {
            errs.push(FieldError::not_supported(
                child(&p, "effect"),
                &t.effect,
                &TAINT_EFFECTS,
            ));
        }
        if !seen.insert((t.effect.clone(), t.key.clone())) {
            errs.push(FieldError {
                type_: FieldErrorType::Duplicate,
                field: p,
                bad_value: Some(taint_go(t)),
                detail: "taints must be unique by key and effect pair".to_string(),
            });
        }
    }
    errs
}

/// Upstream `ValidateNode` (metadata, taints, and `validateNodeResources` on status capacity and
/// allocatable).
pub fn validate_node(node: &Node) -> ErrorList {
    let mut errs = validate_object_meta(&node.metadata, false, name_is_dns_subdomain, "metadata");
    errs.extend(validate_taints(&node.spec.taints, "spec.taints"));
    for (list, path) in [
        (&node.status.capacity, "status.capacity"),
        (&node.status.allocatable, "status.allocatable"),
    ] {
        for (name, q) in list {
            errs.extend(validate_resource_quantity_value(name, q, &key(path, name)));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_resources_must_be_non_negative_and_whole_for_extended_resources() {
        let mut node = Node::default();
        node.metadata.name = "n1".into();
        let q = |s: &str| k8s_types::Quantity::parse(s).unwrap();
        node.status.capacity.insert("pods".into(), q("-5"));
        node.status
            .capacity
            .insert("nvidia.com/gpu".into(), q("1.5"));
        let msgs: Vec<String> = validate_node(&node)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            msgs,
            vec![
                "status.capacity[nvidia.com/gpu]: Invalid value: 1500m: must be an integer",
                "status.capacity[pods]: Invalid value: \"-5\": must be greater than or equal to 0",
            ]
        );
    }

    #[test]
    fn taints_must_be_unique_by_key_and_effect() {
        let t = Taint {
            key: "gpu".into(),
            value: String::new(),
            effect: "NoSchedule".into(),
            time_added: None,
        };
        let errs = validate_taints(&[t.clone(), t], "spec.taints");
        assert_eq!(
            errs[0].to_string(),
            "spec.taints[1]: Duplicate value: core.Taint{Key:\"gpu\", Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair"
        );
    }
}
