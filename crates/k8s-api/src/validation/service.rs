//! Service validation (upstream `pkg/apis/core/validation/validation.go`: `ValidateService`,
//! `validateServicePort`, `ValidateServiceUpdate`, `ValidateServiceStatusUpdate`).
//!
//! Simplified on purpose: a duplicate port/protocol pair prints `"80/TCP"` where upstream prints
//! the Go struct; `externalIPs`, `loadBalancerSourceRanges`, `sessionAffinityConfig` and the
//! dual-stack rules beyond "IPv4 only" are not checked.

use std::collections::BTreeSet;

use k8s_types::apps::IntOrString;
use k8s_types::core::{service_types, Service, CLUSTER_IP_NONE};
use k8s_types::status::FieldError;

use super::labels::validate_labels;
use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::{
    inclusive_range_error, is_dns1123_label, is_dns1123_subdomain, is_valid_port_name,
    max_len_error, regex_error,
};
use super::{child, index, invalid_each, ErrorList};

/// Upstream `dns1035LabelErrMsg`.
pub const DNS1035_LABEL_ERR_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";

/// Upstream `IsDNS1035Label`.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    let b = value.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[b.len() - 1] != b'-';
    if !ok {
        errs.push(regex_error(
            DNS1035_LABEL_ERR_MSG,
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// Upstream `ValidateServiceName` (`NameIsDNS1035Label`): a generateName prefix may end in `-`.
pub fn name_is_dns1035_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        let mut n = name.to_string();
        n.push('a');
        return is_dns1035_label(&n);
    }
    is_dns1035_label(name)
}

fn valid_port_num(p: i32) -> bool {
    (1..=65535).contains(&p)
}

const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// Upstream `ValidateService`.
pub fn validate_service(svc: &Service) -> ErrorList {
    let mut errs = validate_object_meta(&svc.metadata, true, name_is_dns1035_label, "metadata");
    errs.extend(validate_service_spec(svc));
    errs
}

fn validate_service_spec(svc: &Service) -> ErrorList {
    let mut errs = Vec::new();
    let spec = &svc.spec;
    let ty = svc.type_();
    let types = [
        service_types::CLUSTER_IP,
        service_types::EXTERNAL_NAME,
        service_types::LOAD_BALANCER,
        service_types::NODE_PORT,
    ];
    if !types.contains(&ty) {
        errs.push(FieldError::not_supported("spec.type", ty, &types));
    }
    let headless = svc.is_headless();
    if spec.ports.is_empty() && !headless && ty != service_types::EXTERNAL_NAME {
        errs.push(FieldError::required("spec.ports", ""));
    }
    if ty == service_types::EXTERNAL_NAME {
        if spec.cluster_ip.as_deref().is_some_and(|s| !s.is_empty()) {
            errs.push(FieldError::forbidden(
                "spec.clusterIP",
                "may not be set for ExternalName services",
            ));
        }
        match spec.external_name.as_deref() {
            None | Some("") => errs.push(FieldError::required("spec.externalName", "")),
            Some(n) => errs.extend(invalid_each(
                "spec.externalName",
                n,
                is_dns1123_subdomain(n),
            )),
        }
    }
    let mut names = BTreeSet::new();
    let mut pairs = BTreeSet::new();
    for (i, p) in spec.ports.iter().enumerate() {
        let path = index("spec.ports", i);
        match p.name.as_deref().filter(|n| !n.is_empty()) {
            None if spec.ports.len() > 1 => {
                errs.push(FieldError::required(child(&path, "name"), ""))
            }
            None => {}
            Some(n) => {
                errs.extend(invalid_each(&child(&path, "name"), n, is_dns1123_label(n)));
                if !names.insert(n.to_string()) {
                    errs.push(FieldError::duplicate(
                        child(&path, "name"),
                        format!("{n:?}"),
                    ));
                }
            }
        }
        if !valid_port_num(p.port) {
            errs.push(FieldError::invalid(
                child(&path, "port"),
                p.port.to_string(),
                inclusive_range_error(1, 65535),
            ));
        }
        let proto = p.protocol.as_deref().unwrap_or("");
        if proto.is_empty() {
            errs.push(FieldError::required(child(&path, "protocol"), ""));
        } else if !PROTOCOLS.contains(&proto) {
            errs.push(FieldError::not_supported(
                child(&path, "protocol"),
                proto,
                &PROTOCOLS,
            ));
        }
        match &p.target_port {
            Some(IntOrString::Int(t)) if !valid_port_num(*t) => errs.push(FieldError::invalid(
                child(&path, "targetPort"),
                t.to_string(),
                inclusive_range_error(1, 65535),
            )),
            Some(IntOrString::String(s)) => {
                errs.extend(invalid_each(
                    &child(&path, "targetPort"),
                    s,
                    is_valid_port_name(s),
                ));
            }
            _ => {}
        }
        if ty == service_types::CLUSTER_IP && p.node_port.is_some_and(|n| n != 0) {
            errs.push(FieldError::forbidden(
                child(&path, "nodePort"),
                "may not be used when `type` is 'ClusterIP'",
            ));
        }
        if !pairs.insert((p.port, proto.to_string())) {
            errs.push(FieldError::duplicate(
                path.clone(),
                format!("\"{}/{proto}\"", p.port),
            ));
        }
    }
    if let Some(sel) = &spec.selector {
        errs.extend(validate_labels(sel, "spec.selector"));
    }
    let affinities = ["ClientIP", "None"];
    if let Some(a) = spec.session_affinity.as_deref() {
        if !affinities.contains(&a) {
            errs.push(FieldError::not_supported(
                "spec.sessionAffinity",
                a,
                &affinities,
            ));
        }
    }
    let policies = ["Cluster", "Local"];
    for (field, v) in [
        ("spec.internalTrafficPolicy", &spec.internal_traffic_policy),
        ("spec.externalTrafficPolicy", &spec.external_traffic_policy),
    ] {
        if let Some(v) = v.as_deref() {
            if !policies.contains(&v) {
                errs.push(FieldError::not_supported(field, v, &policies));
            }
        }
    }
    let family_policies = ["PreferDualStack", "RequireDualStack", "SingleStack"];
    if let Some(v) = spec.ip_family_policy.as_deref() {
        if !family_policies.contains(&v) {
            errs.push(FieldError::not_supported(
                "spec.ipFamilyPolicy",
                v,
                &family_policies,
            ));
        }
    }
    let ips = spec.cluster_ip.iter().filter(|s| !s.is_empty()).chain(
        spec.cluster_ips
            .iter()
            .skip(usize::from(spec.cluster_ip.is_some())),
    );
    for (i, ip) in ips.enumerate() {
        let path = index("spec.clusterIPs", i);
        if ip == CLUSTER_IP_NONE {
            if ty == service_types::NODE_PORT || ty == service_types::LOAD_BALANCER {
                errs.push(FieldError::invalid(
                    path,
                    format!("{ip:?}"),
                    format!("may not be set to 'None' for {ty} services"),
                ));
            }
        } else if ip.parse::<std::net::IpAddr>().is_err() {
            errs.push(FieldError::invalid(
                path,
                format!("{ip:?}"),
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            ));
        }
    }
    if let (Some(ip), Some(first)) = (spec.cluster_ip.as_deref(), spec.cluster_ips.first()) {
        if !ip.is_empty() && ip != first {
            errs.push(FieldError::invalid(
                "spec.clusterIPs",
                format!("{:?}", spec.cluster_ips),
                "first value must match `clusterIP`",
            ));
        }
    }
    errs
}

/// Upstream `ValidateServiceUpdate`: the spec rules again; an allocated ClusterIP may not change
/// (unless the Service becomes or stops being ExternalName).
pub fn validate_service_update(new: &Service, old: &Service) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    let external = |s: &Service| s.type_() == service_types::EXTERNAL_NAME;
    if !external(new) && !external(old) {
        let (n, o) = (
            new.spec.cluster_ip.as_deref().unwrap_or(""),
            old.spec.cluster_ip.as_deref().unwrap_or(""),
        );
        if !o.is_empty() && n != o {
            errs.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                format!("{n:?}"),
                "field is immutable",
            ));
        }
    }
    errs.extend(validate_service_spec(new));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::ServicePort;

    fn svc() -> Service {
        let mut s = Service::default();
        s.metadata.name = "web".into();
        s.metadata.namespace = Some("default".into());
        s.spec.type_ = Some("ClusterIP".into());
        s.spec.ports.push(ServicePort {
            port: 80,
            protocol: Some("TCP".into()),
            target_port: Some(IntOrString::Int(8080)),
            ..Default::default()
        });
        s
    }

    fn msgs(errs: ErrorList) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_plain_service_is_valid() {
        assert!(validate_service(&svc()).is_empty());
    }

    #[test]
    fn upstream_messages() {
        let mut s = svc();
        s.metadata.name = "1web".into();
        s.spec.ports.push(ServicePort {
            port: 70000,
            protocol: Some("HTTP".into()),
            target_port: Some(IntOrString::String("Web_Port".into())),
            node_port: Some(30001),
            ..Default::default()
        });
        assert_eq!(
            msgs(validate_service(&s)),
            vec![
                "metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "spec.ports[0].name: Required value",
                "spec.ports[1].name: Required value",
                "spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.ports[1].targetPort: Invalid value: \"Web_Port\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "spec.ports[1].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
            ]
        );
        let mut s = svc();
        s.spec.ports.clear();
        s.spec.type_ = Some("NodePort".into());
        s.spec.cluster_ip = Some("None".into());
        s.spec.session_affinity = Some("Sticky".into());
        assert_eq!(
            msgs(validate_service(&s)),
            vec![
                "spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\"",
                "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services",
            ]
        );
        let mut s = svc();
        s.spec.type_ = Some("ExternalName".into());
        s.spec.cluster_ip = Some("10.96.1.1".into());
        assert_eq!(
            msgs(validate_service(&s))[..2],
            [
                "spec.clusterIP: Forbidden: may not be set for ExternalName services".to_string(),
                "spec.externalName: Required value".to_string(),
            ]
        );
    }

    #[test]
    fn cluster_ip_is_immutable() {
        let mut old = svc();
        old.spec.cluster_ip = Some("10.96.1.1".into());
        old.spec.cluster_ips = vec!["10.96.1.1".into()];
        let mut new = old.clone();
        new.spec.cluster_ip = Some("10.96.1.2".into());
        new.spec.cluster_ips = vec!["10.96.1.2".into()];
        assert_eq!(
            msgs(validate_service_update(&new, &old)),
            vec!["spec.clusterIPs[0]: Invalid value: \"10.96.1.2\": field is immutable"]
        );
    }
}
