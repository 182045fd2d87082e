//! EndpointSlice validation (upstream `pkg/apis/discovery/validation/validation.go`:
//! `ValidateEndpointSlice`, `validateEndpoints`, `validateEndpointPorts`, `validateAddressType`).
//!
//! Simplified on purpose: `targetRef`, `hints` and FQDN addresses are not checked.

use std::collections::BTreeSet;

use k8s_types::discovery::EndpointSlice;
use k8s_types::status::FieldError;

use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::{inclusive_range_error, is_dns1123_label, name_is_dns_subdomain};
use super::{child, index, invalid_each, ErrorList};

/// Upstream `maxEndpoints`.
pub const MAX_ENDPOINTS: usize = 1000;
/// Upstream `maxPorts`.
pub const MAX_PORTS: usize = 20000;
/// Upstream `maxAddresses`.
pub const MAX_ADDRESSES: usize = 100;

const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// Upstream `ValidateEndpointSlice`.
pub fn validate_endpoint_slice(es: &EndpointSlice) -> ErrorList {
    let mut errs = validate_object_meta(&es.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_body(es));
    errs
}

/// Upstream `ValidateEndpointSliceUpdate`: `addressType` may not change.
pub fn validate_endpoint_slice_update(new: &EndpointSlice, old: &EndpointSlice) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    if new.address_type != old.address_type {
        errs.push(FieldError::invalid(
            "addressType",
            format!("{:?}", new.address_type),
            "field is immutable",
        ));
    }
    errs.extend(validate_body(new));
    errs
}

fn validate_body(es: &EndpointSlice) -> ErrorList {
    let mut errs = Vec::new();
    if es.address_type.is_empty() {
        errs.push(FieldError::required("addressType", ""));
    } else if !ADDRESS_TYPES.contains(&es.address_type.as_str()) {
        errs.push(FieldError::not_supported(
            "addressType",
            &es.address_type,
            &ADDRESS_TYPES,
        ));
    }
    if es.endpoints.len() > MAX_ENDPOINTS {
        errs.push(FieldError::invalid(
            "endpoints",
            es.endpoints.len().to_string(),
            format!("must have at most {MAX_ENDPOINTS} items"),
        ));
    }
    for (i, ep) in es.endpoints.iter().enumerate() {
        let path = child(&index("endpoints", i), "addresses");
        if ep.addresses.is_empty() {
            errs.push(FieldError::required(
                path.clone(),
                "must contain at least 1 address",
            ));
        } else if ep.addresses.len() > MAX_ADDRESSES {
            errs.push(FieldError::invalid(
                path.clone(),
                ep.addresses.len().to_string(),
                format!("must have at most {MAX_ADDRESSES} items"),
            ));
        }
        for (j, a) in ep.addresses.iter().enumerate() {
            let ok = match es.address_type.as_str() {
                "IPv4" => a.parse::<std::net::Ipv4Addr>().is_ok(),
                "IPv6" => a.parse::<std::net::Ipv6Addr>().is_ok(),
                _ => true,
            };
            if !ok {
                errs.push(FieldError::invalid(
                    index(&path, j),
                    format!("{a:?}"),
                    format!("must be a valid {} address", es.address_type),
                ));
            }
        }
    }
    let mut names = BTreeSet::new();
    for (i, p) in es.ports.iter().enumerate() {
        let path = index("ports", i);
        let name = p.name.clone().unwrap_or_default();
        if !name.is_empty() {
            errs.extend(invalid_each(
                &child(&path, "name"),
                &name,
                is_dns1123_label(&name),
            ));
        }
        if !names.insert(name.clone()) {
            errs.push(FieldError::duplicate(
                child(&path, "name"),
                format!("{name:?}"),
            ));
        }
        if let Some(port) = p.port {
            if !(1..=65535).contains(&port) {
                errs.push(FieldError::invalid(
                    child(&path, "port"),
                    port.to_string(),
                    inclusive_range_error(1, 65535),
                ));
            }
        }
        match p.protocol.as_deref() {
            None => errs.push(FieldError::required(child(&path, "protocol"), "")),
            Some(proto) if !PROTOCOLS.contains(&proto) => errs.push(FieldError::not_supported(
                child(&path, "protocol"),
                proto,
                &PROTOCOLS,
            )),
            Some(_) => {}
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::discovery::{Endpoint, EndpointPort};

    #[test]
    fn addresses_ports_and_type() {
        let mut es = EndpointSlice::default();
        es.metadata.name = "web-abc".into();
        es.metadata.namespace = Some("default".into());
        es.address_type = "IPv4".into();
        es.endpoints.push(Endpoint {
            addresses: vec!["10.244.0.300".into()],
            ..Default::default()
        });
        es.endpoints.push(Endpoint::default());
        es.ports.push(EndpointPort {
            name: Some("http".into()),
            port: Some(0),
            protocol: Some("TCP".into()),
            app_protocol: None,
        });
        es.ports.push(EndpointPort {
            name: Some("http".into()),
            port: Some(80),
            protocol: None,
            app_protocol: None,
        });
        let msgs: Vec<String> = validate_endpoint_slice(&es)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            msgs,
            vec![
                "endpoints[0].addresses[0]: Invalid value: \"10.244.0.300\": must be a valid IPv4 address",
                "endpoints[1].addresses: Required value: must contain at least 1 address",
                "ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "ports[1].name: Duplicate value: \"http\"",
                "ports[1].protocol: Required value",
            ]
        );
    }
}
