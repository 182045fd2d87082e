//! `PodSpec` validation shared by Pods and pod templates (upstream `pkg/apis/core/validation/
//! validation.go` `ValidatePodSpec`, `validateContainers`, `validateInitContainers`,
//! `validateContainerCommon`, `validateContainerPorts`, `validateRestartPolicy`,
//! `ValidateTolerations`, `validateSchedulingGates`, `validateTopologySpreadConstraints`,
//! `ValidatePreemptionPolicy`).
//!
//! Not validated (fields k8s-mini keeps but does not check): affinity terms, host-network port
//! dependencies, env, command/args.

use std::collections::BTreeSet;

use k8s_types::core::{Container, ContainerPort, PodSpec, Toleration, TopologySpreadConstraint};
use k8s_types::status::{FieldError, FieldErrorType};

use super::gofmt::quote;
use super::labels::{validate_label_name, validate_labels};
use super::names::{
    inclusive_range_error, is_dns1123_label, is_label_value, is_qualified_name, is_valid_port_name,
    name_is_dns_subdomain,
};
use super::resources::{validate_overhead, validate_resource_requirements};
use super::{
    at_path_if_invalid, child, child_unless_empty, index, invalid_each, invalid_str, ErrorList,
    IS_NOT_POSITIVE_ERROR_MSG,
};

/// Supported `restartPolicy` values, in upstream's order.
pub const RESTART_POLICIES: [&str; 3] = ["Always", "OnFailure", "Never"];
/// Supported `preemptionPolicy` values, in upstream's order.
pub const PREEMPTION_POLICIES: [&str; 2] = ["PreemptLowerPriority", "Never"];
/// Supported port protocols (upstream `supportedPortProtocols.List()`, sorted).
pub const PORT_PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
/// Supported taint effects, in upstream's order.
pub const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
/// Supported `whenUnsatisfiable` values (sorted, as upstream's set list).
pub const UNSATISFIABLE_ACTIONS: [&str; 2] = ["DoNotSchedule", "ScheduleAnyway"];

/// `Unsupported value` with a raw (already formatted) bad value.
fn not_supported_raw(path: &str, raw_value: String, supported: &[&str]) -> FieldError {
    let list = supported
        .iter()
        .map(|s| quote(s))
        .collect::<Vec<_>>()
        .join(", ");
    FieldError {
        type_: FieldErrorType::NotSupported,
        field: path.to_string(),
        bad_value: Some(raw_value),
        detail: format!("supported values: {list}"),
    }
}

/// Upstream `ValidatePodSpec`, at `path` (`spec` or `spec.template.spec`).
pub fn validate_pod_spec(spec: &PodSpec, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if let Some(g) = &spec.scheduling_group {
        errs.extend(super::workload::validate_scheduling_group(
            g,
            &child(path, "schedulingGroup"),
        ));
    }
    // A list's field path is built only when the list has entries: an empty list cannot be
    // invalid, and every pod create and update runs this.
    let claims = &spec.resource_claims;
    errs.extend(child_unless_empty(
        claims.is_empty(),
        path,
        "resourceClaims",
        |p| super::resource::validate_pod_resource_claims(claims, None, p),
    ));
    for (field, list) in [
        ("initContainers", &spec.init_containers),
        ("containers", &spec.containers),
    ] {
        for (i, c) in list.iter().enumerate() {
            if c.resources.claims.is_empty() {
                continue;
            }
            errs.extend(super::resource::validate_container_claims(
                &c.resources.claims,
                &spec.resource_claims,
                &child(
                    &child(&index(&child(path, field), i), "resources"),
                    "claims",
                ),
            ));
        }
    }
    if spec.termination_grace_period_seconds.is_none() {
        errs.push(FieldError::required(
            child(path, "terminationGracePeriodSeconds"),
            "",
        ));
    }
    errs.extend(validate_containers(
        &spec.containers,
        &child(path, "containers"),
    ));
    let grace = spec.termination_grace_period_seconds;
    for (i, c) in spec.containers.iter().enumerate() {
        errs.extend(at_path_if_invalid(
            |p| super::probe::validate_container_probes(c, false, grace, p),
            || index(&child(path, "containers"), i),
        ));
    }
    for (i, c) in spec.init_containers.iter().enumerate() {
        errs.extend(at_path_if_invalid(
            |p| super::probe::validate_container_probes(c, !c.is_sidecar(), grace, p),
            || index(&child(path, "initContainers"), i),
        ));
    }
    let inits = &spec.init_containers;
    errs.extend(child_unless_empty(
        inits.is_empty(),
        path,
        "initContainers",
        |p| validate_init_containers(inits, &spec.containers, p),
    ));
    let policy = spec.restart_policy.as_deref().unwrap_or("");
    if !RESTART_POLICIES.contains(&policy) {
        errs.extend(validate_restart_policy(
            policy,
            &child(path, "restartPolicy"),
        ));
    }
    let selector = &spec.node_selector;
    errs.extend(child_unless_empty(
        selector.is_empty(),
        path,
        "nodeSelector",
        |p| validate_labels(selector, p),
    ));
    errs.extend(child_unless_empty(
        spec.scheduling_gates.is_empty(),
        path,
        "schedulingGates",
        |p| validate_scheduling_gates(spec, p),
    ));
    let spread = &spec.topology_spread_constraints;
    errs.extend(child_unless_empty(
        spread.is_empty(),
        path,
        "topologySpreadConstraints",
        |p| validate_topology_spread_constraints(spread, p),
    ));
    if let Some(affinity) = &spec.affinity {
        errs.extend(super::affinity::validate_affinity(
            affinity,
            &child(path, "affinity"),
        ));
    }
    if let Some(sa) = spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        errs.extend(invalid_each(
            &child(path, "serviceAccountName"),
            sa,
            name_is_dns_subdomain(sa, false),
        ));
    }
    if let Some(node) = spec.node_name.as_deref().filter(|s| !s.is_empty()) {
        errs.extend(invalid_each(
            &child(path, "nodeName"),
            node,
            name_is_dns_subdomain(node, false),
        ));
    }
    let tolerations = &spec.tolerations;
    errs.extend(child_unless_empty(
        tolerations.is_empty(),
        path,
        "tolerations",
        |p| validate_tolerations(tolerations, p),
    ));
    if let Some(pc) = spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        errs.extend(invalid_each(
            &child(path, "priorityClassName"),
            pc,
            name_is_dns_subdomain(pc, false),
        ));
    }
    if let Some(pp) = &spec.preemption_policy {
        errs.extend(validate_preemption_policy(
            pp,
            &child(path, "preemptionPolicy"),
        ));
    }
    let overhead = &spec.overhead;
    errs.extend(child_unless_empty(
        overhead.is_empty(),
        path,
        "overhead",
        |p| validate_overhead(overhead, p),
    ));
    errs
}

/// Upstream `validateRestartPolicy`.
pub fn validate_restart_policy(policy: &str, path: &str) -> ErrorList {
    match policy {
        "Always" | "OnFailure" | "Never" => Vec::new(),
        "" => vec![FieldError::required(path, "")],
        other => vec![FieldError::not_supported(path, other, &RESTART_POLICIES)],
    }
}

/// Upstream `ValidatePreemptionPolicy`.
pub fn validate_preemption_policy(policy: &str, path: &str) -> ErrorList {
    match policy {
        "PreemptLowerPriority" | "Never" => Vec::new(),
        "" => vec![FieldError::required(path, "")],
        other => vec![FieldError::not_supported(path, other, &PREEMPTION_POLICIES)],
    }
}

/// Upstream `validateContainerCommon`: name (a DNS-1123 label), image, ports, resources.
fn validate_container_common(c: &Container, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if c.name.is_empty() {
        errs.push(FieldError::required(child(path, "name"), ""));
    } else {
        let msgs = is_dns1123_label(&c.name);
        if !msgs.is_empty() {
            errs.extend(invalid_each(&child(path, "name"), &c.name, msgs));
        }
    }
    if c.image.is_empty() {
        errs.push(FieldError::required(child(path, "image"), ""));
    }
    if !c.ports.is_empty() {
        errs.extend(validate_container_ports(&c.ports, &child(path, "ports")));
    }
    errs.extend(at_path_if_invalid(
        |p| validate_resource_requirements(&c.resources, p),
        || child(path, "resources"),
    ));
    errs
}

/// Upstream `validateContainers`: at least one container, names unique among them, no
/// `restartPolicy` on regular containers.
pub fn validate_containers(containers: &[Container], path: &str) -> ErrorList {
    if containers.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        let p = || index(path, i);
        errs.extend(at_path_if_invalid(|p| validate_container_common(c, p), p));
        if !names.insert(c.name.as_str()) {
            errs.push(FieldError::duplicate(child(&p(), "name"), quote(&c.name)));
        }
        if c.restart_policy.is_some() {
            errs.push(FieldError::forbidden(
                child(&p(), "restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    errs
}

/// Upstream `validateInitContainers`: names unique across init and regular containers;
/// `restartPolicy` may only be `Always` (a sidecar).
pub fn validate_init_containers(
    inits: &[Container],
    regular: &[Container],
    path: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    let mut names: BTreeSet<&str> = regular.iter().map(|c| c.name.as_str()).collect();
    for (i, c) in inits.iter().enumerate() {
        let p = index(path, i);
        errs.extend(validate_container_common(c, &p));
        if let Some(rp) = c.restart_policy.as_deref() {
            if rp != "Always" {
                errs.push(FieldError::not_supported(
                    child(&p, "restartPolicy"),
                    rp,
                    &["Always"],
                ));
            }
        }
        if names.contains(c.name.as_str()) {
            errs.push(FieldError::duplicate(child(&p, "name"), quote(&c.name)));
        } else if !c.name.is_empty() {
            names.insert(c.name.as_str());
        }
    }
    errs
}

/// Upstream `validateContainerPorts`.
pub fn validate_container_ports(ports: &[ContainerPort], path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let p = index(path, i);
        if let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) {
            let msgs = is_valid_port_name(name);
            if !msgs.is_empty() {
                errs.extend(invalid_each(&child(&p, "name"), name, msgs));
            } else if !names.insert(name) {
                errs.push(FieldError::duplicate(child(&p, "name"), quote(name)));
            }
        }
        if port.container_port == 0 {
            errs.push(FieldError::required(child(&p, "containerPort"), ""));
        } else if !(1..=65535).contains(&port.container_port) {
            errs.push(FieldError::invalid(
                child(&p, "containerPort"),
                port.container_port.to_string(),
                inclusive_range_error(1, 65535),
            ));
        }
        if let Some(hp) = port.host_port.filter(|hp| *hp != 0) {
            if !(1..=65535).contains(&hp) {
                errs.push(FieldError::invalid(
                    child(&p, "hostPort"),
                    hp.to_string(),
                    inclusive_range_error(1, 65535),
                ));
            }
        }
        match port.protocol.as_deref() {
            None | Some("") => errs.push(FieldError::required(child(&p, "protocol"), "")),
            Some("TCP" | "UDP" | "SCTP") => {}
            Some(other) => errs.push(FieldError::not_supported(
                child(&p, "protocol"),
                other,
                &PORT_PROTOCOLS,
            )),
        }
    }
    errs
}

/// Go `%#v` of a `core.Toleration` (upstream prints the whole toleration for the Exists-with-value
/// error). A set `tolerationSeconds` pointer prints as `(*int64)(...)`: upstream prints a memory
/// address there.
fn toleration_go(t: &Toleration) -> String {
    let secs = if t.toleration_seconds.is_some() {
        "(*int64)(...)"
    } else {
        "(*int64)(nil)"
    };
    format!(
        "core.Toleration{{Key:{}, Operator:{}, Value:{}, Effect:{}, TolerationSeconds:{secs}}}",
        quote(&t.key),
        quote(&t.operator),
        quote(&t.value),
        quote(&t.effect)
    )
}

/// Upstream `ValidateTolerations`.
pub fn validate_tolerations(tolerations: &[Toleration], path: &str) -> ErrorList {
    let mut errs = Vec::new();
    for (i, t) in tolerations.iter().enumerate() {
        let p = index(path, i);
        if !t.key.is_empty() {
            errs.extend(validate_label_name(&t.key, &child(&p, "key")));
        }
        if t.key.is_empty() && t.operator != "Exists" {
            errs.push(invalid_str(
                child(&p, "operator"),
                &t.operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.toleration_seconds.is_some() && t.effect != "NoExecute" {
            errs.push(invalid_str(
                child(&p, "effect"),
                &t.effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match t.operator.as_str() {
            "Equal" | "" => {
                let msgs = is_label_value(&t.value);
                if !msgs.is_empty() {
                    errs.push(invalid_str(child(&p, "operator"), &t.value, msgs.join(";")));
                }
            }
            "Exists" => {
                if !t.value.is_empty() {
                    errs.push(FieldError::invalid(
                        child(&p, "operator"),
                        toleration_go(t),
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                child(&p, "operator"),
                other,
                &["Equal", "Exists"],
            )),
        }
        if !t.effect.is_empty() && !TAINT_EFFECTS.contains(&t.effect.as_str()) {
            errs.push(FieldError::not_supported(
                child(&p, "effect"),
                &t.effect,
                &TAINT_EFFECTS,
            ));
        }
    }
    errs
}

/// Upstream `validateSchedulingGates`: qualified names, no duplicates.
fn validate_scheduling_gates(spec: &PodSpec, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, g) in spec.scheduling_gates.iter().enumerate() {
        let p = index(path, i);
        errs.extend(invalid_each(&p, &g.name, is_qualified_name(&g.name)));
        if !seen.insert(g.name.as_str()) {
            errs.push(FieldError::duplicate(&p, quote(&g.name)));
        }
    }
    errs
}

/// Upstream `validateTopologySpreadConstraints`: maxSkew > 0, topologyKey set, a supported
/// whenUnsatisfiable, no repeated {topologyKey, whenUnsatisfiable}, minDomains > 0 and only with
/// DoNotSchedule.
pub fn validate_topology_spread_constraints(
    constraints: &[TopologySpreadConstraint],
    path: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    for (i, c) in constraints.iter().enumerate() {
        let p = index(path, i);
        if c.max_skew <= 0 {
            errs.push(FieldError::invalid(
                child(&p, "maxSkew"),
                c.max_skew.to_string(),
                IS_NOT_POSITIVE_ERROR_MSG,
            ));
        }
        if c.topology_key.is_empty() {
            errs.push(FieldError::required(
                child(&p, "topologyKey"),
                "can not be empty",
            ));
        }
        if !UNSATISFIABLE_ACTIONS.contains(&c.when_unsatisfiable.as_str()) {
            errs.push(not_supported_raw(
                &child(&p, "whenUnsatisfiable"),
                quote(&c.when_unsatisfiable),
                &UNSATISFIABLE_ACTIONS,
            ));
        }
        let repeated = constraints[i + 1..].iter().any(|o| {
            o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
        });
        if repeated {
            errs.push(FieldError::duplicate(
                child(&p, "{topologyKey, whenUnsatisfiable}"),
                quote(&format!("{{{}, {}}}", c.topology_key, c.when_unsatisfiable)),
            ));
        }
        if let Some(md) = c.min_domains {
            if md <= 0 {
                errs.push(FieldError::invalid(
                    child(&p, "minDomains"),
                    md.to_string(),
                    IS_NOT_POSITIVE_ERROR_MSG,
                ));
            }
            if c.when_unsatisfiable != "DoNotSchedule" {
                errs.push(FieldError::invalid(
                    child(&p, "minDomains"),
                    md.to_string(),
                    format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {}",
                        c.when_unsatisfiable
                    ),
                ));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(name: &str, image: &str) -> Container {
        Container {
            name: name.into(),
            image: image.into(),
            image_pull_policy: Some("IfNotPresent".into()),
            ..Default::default()
        }
    }

    #[test]
    fn containers_need_names_images_and_unique_names() {
        let spec = PodSpec {
            containers: vec![
                container("", ""),
                container("app", "nginx"),
                container("app", "x"),
            ]
            .into(),
            init_containers: vec![container("app", "busybox")],
            restart_policy: Some("Always".into()),
            termination_grace_period_seconds: Some(30),
            ..Default::default()
        };
        let errs: Vec<String> = validate_pod_spec(&spec, "spec")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "spec.containers[0].name: Required value",
                "spec.containers[0].image: Required value",
                "spec.containers[2].name: Duplicate value: \"app\"",
                "spec.initContainers[0].name: Duplicate value: \"app\"",
            ]
        );
    }

    #[test]
    fn no_containers_and_bad_restart_policy() {
        let spec = PodSpec {
            restart_policy: Some("Sometimes".into()),
            termination_grace_period_seconds: Some(30),
            ..Default::default()
        };
        let errs: Vec<String> = validate_pod_spec(&spec, "spec")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "spec.containers: Required value",
                "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
            ]
        );
    }

    #[test]
    fn tolerations_follow_upstream_rules() {
        let t = Toleration {
            key: String::new(),
            operator: "Equal".into(),
            value: String::new(),
            effect: "NoExecute".into(),
            toleration_seconds: None,
        };
        let errs = validate_tolerations(&[t], "spec.tolerations");
        assert_eq!(
            errs[0].to_string(),
            "spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\""
        );
    }

    #[test]
    fn topology_spread_rules() {
        let c = TopologySpreadConstraint {
            max_skew: 0,
            topology_key: "zone".into(),
            when_unsatisfiable: "DoNotSchedule".into(),
            ..Default::default()
        };
        let errs = validate_topology_spread_constraints(&[c.clone(), c], "t");
        assert_eq!(
            errs[0].to_string(),
            "t[0].maxSkew: Invalid value: 0: must be greater than zero"
        );
        assert_eq!(
            errs[1].to_string(),
            "t[0].{topologyKey, whenUnsatisfiable}: Duplicate value: \"{zone, DoNotSchedule}\""
        );
    }
}
