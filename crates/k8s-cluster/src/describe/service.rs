//! `kubectl describe service`: upstream `staging/src/k8s.io/kubectl/pkg/describe/describe.go`
//! (v1.32, `ServiceDescriber.Describe`, `describeService`, `formatEndpointSlices`,
//! `buildIngressString`). The endpoints are the Service's EndpointSlices (label
//! `kubernetes.io/service-name`), the fields as the apiserver stored them (its defaulting and
//! allocation set the type, `sessionAffinity`, `internalTrafficPolicy`, the cluster IPs, the IP
//! families and node ports). Fields k8s-mini keeps untyped (`externalIPs`, `loadBalancerIP`,
//! `healthCheckNodePort`, `loadBalancerSourceRanges`, `status.loadBalancer`) are read from the
//! stored JSON.

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::IntOrString;
use k8s_types::core::{Event, Service};
use k8s_types::discovery::EndpointSlice;
use k8s_types::Tick;
use serde_json::Value;

use super::{
    annotations_multiline, describe_events, labels_multiline, object_events, PrefixWriter,
};
use crate::printers::format_labels;

/// Upstream `discoveryv1.LabelServiceName`.
const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";

/// The Service's EndpointSlices: those of its namespace labelled with its name, in list order.
pub fn service_endpoint_slices(api: &dyn ApiClient, svc: &Service) -> Vec<EndpointSlice> {
    api.list_typed::<EndpointSlice>(Some(svc.metadata.namespace()), None)
        .into_iter()
        .filter(|s| {
            s.metadata
                .labels
                .get(LABEL_SERVICE_NAME)
                .map(String::as_str)
                == Some(svc.metadata.name.as_str())
        })
        .collect()
}

/// The Service's Events (kind, namespace, name and uid).
pub fn service_events(api: &dyn ApiClient, svc: &Service) -> Vec<Event> {
    object_events(
        api,
        "Service",
        svc.metadata.namespace(),
        &svc.metadata.name,
        &[svc.metadata.uid.as_deref().unwrap_or("")],
    )
}

/// `formatEndpointSlices`: the ready endpoints' `address:port` for the ports named `port_name`
/// (addresses alone for slices without ports), at most three, then `+ N more...`; `<none>`
/// without slices. An endpoint whose `ready` is unset counts as ready.
fn format_endpoint_slices(slices: &[EndpointSlice], port_name: &str) -> String {
    if slices.is_empty() {
        return "<none>".to_string();
    }
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let (mut more, mut count) = (false, 0usize);
    let mut add = |addr: Option<String>, ready: bool| {
        if list.len() == MAX {
            more = true;
        }
        if !ready {
            return;
        }
        if !more {
            if let Some(a) = addr {
                list.push(a);
            }
        }
        count += 1;
    };
    for slice in slices {
        if slice.ports.is_empty() {
            for e in &slice.endpoints {
                add(
                    e.addresses.first().cloned(),
                    e.conditions.ready.unwrap_or(true),
                );
            }
            continue;
        }
        for port in &slice.ports {
            if port.name.as_deref().unwrap_or("") != port_name {
                continue;
            }
            for e in &slice.endpoints {
                // `net.JoinHostPort`: IPv6 addresses in brackets.
                let addr = e.addresses.first().map(|a| {
                    let p = port.port.unwrap_or(0);
                    if a.contains(':') {
                        format!("[{a}]:{p}")
                    } else {
                        format!("{a}:{p}")
                    }
                });
                add(addr, e.conditions.ready.unwrap_or(true));
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

/// A string list of the stored spec (`externalIPs`, `loadBalancerSourceRanges`), joined by `,`.
fn rest_list(svc: &Service, key: &str) -> String {
    svc.spec
        .rest
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// `buildIngressString` over `status.loadBalancer.ingress`: each IP (with ` (<ipMode>)` when
/// set) or hostname, joined by `, `.
fn ingress_string(svc: &Service) -> String {
    let Some(ingress) = svc
        .status
        .get("loadBalancer")
        .and_then(|lb| lb.get("ingress"))
        .and_then(Value::as_array)
    else {
        return String::new();
    };
    ingress
        .iter()
        .map(|i| match i.get("ip").and_then(Value::as_str) {
            Some(ip) if !ip.is_empty() => match i.get("ipMode").and_then(Value::as_str) {
                Some(mode) => format!("{ip} ({mode})"),
                None => ip.to_string(),
            },
            _ => i
                .get("hostname")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `kubectl describe service` prints for `svc`, with its EndpointSlices (see
/// [`service_endpoint_slices`]) and `events` (see [`service_events`]), the clock at `now`.
pub fn describe_service(
    svc: &Service,
    slices: &[EndpointSlice],
    events: Vec<Event>,
    now: Tick,
) -> String {
    let spec = &svc.spec;
    let mut w = PrefixWriter::new();
    w.write(0, &format!("Name:\t{}\n", svc.metadata.name));
    w.write(0, &format!("Namespace:\t{}\n", svc.metadata.namespace()));
    labels_multiline(&mut w, "Labels", &svc.metadata.labels);
    annotations_multiline(&mut w, "Annotations", &svc.metadata.annotations);
    let selector = spec.selector.clone().unwrap_or_default();
    w.write(0, &format!("Selector:\t{}\n", format_labels(&selector)));
    w.write(
        0,
        &format!("Type:\t{}\n", spec.type_.as_deref().unwrap_or("")),
    );
    if let Some(p) = &spec.ip_family_policy {
        w.write(0, &format!("IP Family Policy:\t{p}\n"));
    }
    let or_none = |s: String| if s.is_empty() { "<none>".into() } else { s };
    w.write(
        0,
        &format!("IP Families:\t{}\n", or_none(spec.ip_families.join(","))),
    );
    w.write(
        0,
        &format!("IP:\t{}\n", spec.cluster_ip.as_deref().unwrap_or("")),
    );
    w.write(
        0,
        &format!("IPs:\t{}\n", or_none(spec.cluster_ips.join(","))),
    );
    let external_ips = rest_list(svc, "externalIPs");
    if !external_ips.is_empty() {
        w.write(0, &format!("External IPs:\t{external_ips}\n"));
    }
    if let Some(ip) = spec
        .rest
        .get("loadBalancerIP")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        w.write(0, &format!("Desired LoadBalancer IP:\t{ip}\n"));
    }
    if let Some(name) = spec.external_name.as_deref().filter(|s| !s.is_empty()) {
        w.write(0, &format!("External Name:\t{name}\n"));
    }
    let ingress = ingress_string(svc);
    if !ingress.is_empty() {
        w.write(0, &format!("LoadBalancer Ingress:\t{ingress}\n"));
    }
    for sp in &spec.ports {
        let name = sp
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or("<unset>");
        let protocol = sp.protocol.as_deref().unwrap_or("");
        w.write(0, &format!("Port:\t{name}\t{}/{protocol}\n", sp.port));
        let target = match &sp.target_port {
            Some(IntOrString::Int(n)) => n.to_string(),
            Some(IntOrString::String(s)) => s.clone(),
            // Upstream's zero IntOrString prints its IntVal.
            None => "0".to_string(),
        };
        w.write(0, &format!("TargetPort:\t{target}/{protocol}\n"));
        if let Some(np) = sp.node_port.filter(|p| *p != 0) {
            w.write(0, &format!("NodePort:\t{name}\t{np}/{protocol}\n"));
        }
        w.write(
            0,
            &format!(
                "Endpoints:\t{}\n",
                format_endpoint_slices(slices, sp.name.as_deref().unwrap_or(""))
            ),
        );
    }
    w.write(
        0,
        &format!(
            "Session Affinity:\t{}\n",
            spec.session_affinity.as_deref().unwrap_or("")
        ),
    );
    if let Some(p) = spec
        .external_traffic_policy
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.write(0, &format!("External Traffic Policy:\t{p}\n"));
    }
    if let Some(p) = &spec.internal_traffic_policy {
        w.write(0, &format!("Internal Traffic Policy:\t{p}\n"));
    }
    if let Some(port) = spec
        .rest
        .get("healthCheckNodePort")
        .and_then(Value::as_i64)
        .filter(|p| *p != 0)
    {
        w.write(0, &format!("HealthCheck NodePort:\t{port}\n"));
    }
    let ranges = rest_list(svc, "loadBalancerSourceRanges");
    if !ranges.is_empty() {
        w.write(0, &format!("LoadBalancer Source Ranges:\t{ranges}\n"));
    }
    describe_events(&mut w, events, now);
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::discovery::{Endpoint, EndpointConditions, EndpointPort};

    fn slice(ports: &[(&str, i32)], addrs: &[(&str, Option<bool>)]) -> EndpointSlice {
        EndpointSlice {
            ports: ports
                .iter()
                .map(|(n, p)| EndpointPort {
                    name: Some((*n).to_string()),
                    port: Some(*p),
                    ..Default::default()
                })
                .collect(),
            endpoints: addrs
                .iter()
                .map(|(a, ready)| Endpoint {
                    addresses: vec![(*a).to_string()],
                    conditions: EndpointConditions {
                        ready: *ready,
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn endpoints_are_upstreams_three_ready_then_more() {
        // Worked by hand from formatEndpointSlices: five endpoints, the second not ready; the
        // first three ready ones are listed, then the count of the ready ones beyond three.
        let s = slice(
            &[("http", 8080)],
            &[
                ("10.0.0.1", Some(true)),
                ("10.0.0.2", Some(false)),
                ("10.0.0.3", None),
                ("10.0.0.4", Some(true)),
                ("10.0.0.5", Some(true)),
            ],
        );
        assert_eq!(
            format_endpoint_slices(std::slice::from_ref(&s), "http"),
            "10.0.0.1:8080,10.0.0.3:8080,10.0.0.4:8080 + 1 more..."
        );
        // Another port name matches nothing; no slices at all is `<none>`.
        assert_eq!(format_endpoint_slices(&[s], "metrics"), "");
        assert_eq!(format_endpoint_slices(&[], "http"), "<none>");
        let headless = slice(&[], &[("fd00::1", None)]);
        assert_eq!(format_endpoint_slices(&[headless], ""), "fd00::1");
        let v6 = slice(&[("", 80)], &[("fd00::1", None)]);
        assert_eq!(format_endpoint_slices(&[v6], ""), "[fd00::1]:80");
    }
}
