//! The Services and EndpointSlices tables of the text output, as `kubectl get services -A` and
//! `kubectl get endpointslices -A` print them (upstream `pkg/printers/internalversion/printers.go`:
//! `printService` with `getServiceExternalIP` and `makePortString`, `printEndpointSlice` with
//! `formatDiscoveryPorts` and `formatDiscoveryEndpoints`). Printed only when the store holds
//! such objects, so the output of a scenario without them is unchanged.

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{service_types, Service};
use k8s_types::discovery::EndpointSlice;
use k8s_types::meta::{timestamp_tick, ObjectMeta};
use k8s_types::Tick;

use crate::output::table;
use crate::state::human_duration;

fn age(meta: &ObjectMeta, now: Tick) -> String {
    meta.creation_timestamp
        .as_deref()
        .and_then(timestamp_tick)
        .map_or_else(
            || "<unknown>".into(),
            |c| human_duration(i64::try_from(now.saturating_sub(c)).unwrap_or(i64::MAX)),
        )
}

/// Upstream `listWithMoreString`: at most `max` items, then ` + N more...`; `<unset>` when empty.
fn list_with_more(items: &[String], max: usize) -> String {
    if items.is_empty() {
        return "<unset>".into();
    }
    let shown = items[..items.len().min(max)].join(",");
    if items.len() > max {
        format!("{shown} + {} more...", items.len() - max)
    } else {
        shown
    }
}

/// Upstream `getServiceExternalIP`: `externalIPs` (LoadBalancer: no ingress here, so
/// `<pending>` without them), the `externalName` of an ExternalName Service, else `<none>`.
fn external_ip(svc: &Service) -> String {
    let external: Vec<String> = svc
        .spec
        .rest
        .get("externalIPs")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    match svc.type_() {
        service_types::EXTERNAL_NAME => svc.spec.external_name.clone().unwrap_or_default(),
        service_types::LOAD_BALANCER if external.is_empty() => "<pending>".into(),
        _ if external.is_empty() => "<none>".into(),
        _ => external.join(","),
    }
}

/// Upstream `makePortString`: `port[:nodePort]/protocol`, comma-separated.
fn port_string(svc: &Service) -> String {
    let ports: Vec<String> = svc
        .spec
        .ports
        .iter()
        .map(|p| {
            let proto = p.protocol.as_deref().unwrap_or("TCP");
            match p.node_port.filter(|&n| n > 0) {
                Some(np) => format!("{}:{np}/{proto}", p.port),
                None => format!("{}/{proto}", p.port),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    }
}

/// `kubectl get services -A`; `None` when there is no Service.
pub fn services_table(api: &dyn ApiClient, now: Tick) -> Option<String> {
    let services = api.list_typed::<Service>(None, None);
    if services.is_empty() {
        return None;
    }
    let rows: Vec<Vec<String>> = services
        .iter()
        .map(|s| {
            vec![
                s.metadata.namespace().to_string(),
                s.metadata.name.clone(),
                s.type_().to_string(),
                s.spec
                    .cluster_ip
                    .clone()
                    .filter(|ip| !ip.is_empty())
                    .unwrap_or_else(|| "<none>".into()),
                external_ip(s),
                port_string(s),
                age(&s.metadata, now),
            ]
        })
        .collect();
    Some(table(
        &[
            "NAMESPACE",
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
        ],
        &rows,
    ))
}

/// `kubectl get endpointslices -A`; `None` when there is no EndpointSlice.
pub fn endpoint_slices_table(api: &dyn ApiClient, now: Tick) -> Option<String> {
    let slices = api.list_typed::<EndpointSlice>(None, None);
    if slices.is_empty() {
        return None;
    }
    let rows: Vec<Vec<String>> = slices
        .iter()
        .map(|s| {
            let ports: Vec<String> = s
                .ports
                .iter()
                .map(|p| match (p.port, &p.name) {
                    (Some(n), _) => n.to_string(),
                    (None, Some(name)) => name.clone(),
                    (None, None) => "*".into(),
                })
                .collect();
            let addresses: Vec<String> = s
                .endpoints
                .iter()
                .flat_map(|e| e.addresses.iter().cloned())
                .collect();
            vec![
                s.metadata.namespace().to_string(),
                s.metadata.name.clone(),
                s.address_type.clone(),
                list_with_more(&ports, 3),
                list_with_more(&addresses, 3),
                age(&s.metadata, now),
            ]
        })
        .collect();
    Some(table(
        &[
            "NAMESPACE",
            "NAME",
            "ADDRESSTYPE",
            "PORTS",
            "ENDPOINTS",
            "AGE",
        ],
        &rows,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::ServicePort;

    #[test]
    fn columns_are_kubectls() {
        assert_eq!(list_with_more(&[], 3), "<unset>");
        let four: Vec<String> = (1..=4).map(|i| format!("10.0.0.{i}")).collect();
        assert_eq!(
            list_with_more(&four, 3),
            "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more..."
        );
        let mut s = Service::default();
        s.spec.type_ = Some("NodePort".into());
        s.spec.ports = vec![
            ServicePort {
                port: 80,
                node_port: Some(30086),
                protocol: Some("TCP".into()),
                ..Default::default()
            },
            ServicePort {
                port: 53,
                protocol: Some("UDP".into()),
                ..Default::default()
            },
        ];
        assert_eq!(port_string(&s), "80:30086/TCP,53/UDP");
        assert_eq!(external_ip(&s), "<none>");
        s.spec.type_ = Some("LoadBalancer".into());
        assert_eq!(external_ip(&s), "<pending>");
    }
}
