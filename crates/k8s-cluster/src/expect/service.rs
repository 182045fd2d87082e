//! The `service` check: a Service's ClusterIP and node ports, and what its EndpointSlices
//! (managed by the EndpointSlice controller, `kubernetes.io/service-name` = the Service) list:
//! the addresses by condition, the number of slices and their ports.

use std::collections::BTreeSet;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Service;
use k8s_types::discovery::EndpointSlice;
use serde::Deserialize;

/// `service`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceExpectation {
    /// Name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// `spec.clusterIP` (`None` for a headless Service).
    #[serde(default, rename = "clusterIP")]
    pub cluster_ip: Option<String>,
    /// Every port's `nodePort`, in port order.
    #[serde(default)]
    pub node_ports: Option<Vec<i32>>,
    /// Addresses of the endpoints with `ready: true`, sorted.
    #[serde(default)]
    pub ready: Option<Vec<String>>,
    /// Addresses of the endpoints with `ready: false`, sorted.
    #[serde(default)]
    pub not_ready: Option<Vec<String>>,
    /// Addresses of the endpoints with `terminating: true`, sorted.
    #[serde(default)]
    pub terminating: Option<Vec<String>>,
    /// Number of slices.
    #[serde(default)]
    pub slices: Option<usize>,
    /// The slices' ports as `name=port/protocol` (`port/protocol` for an unnamed one), sorted,
    /// without repeats.
    #[serde(default)]
    pub ports: Option<Vec<String>>,
}

/// `None` when every given field holds, else the differences joined by `; `.
pub(super) fn check_service(api: &dyn ApiClient, e: &ServiceExpectation) -> Option<String> {
    let namespace = e.namespace.as_deref().unwrap_or("default");
    let svc: Service = match api.get_typed(namespace, &e.name) {
        Ok(s) => s,
        Err(err) => return Some(err.message),
    };
    let slices: Vec<EndpointSlice> = api
        .list_typed::<EndpointSlice>(Some(namespace), None)
        .into_iter()
        .filter(|s| s.service_name() == Some(e.name.as_str()) && s.managed_by_controller())
        .collect();
    let mut problems = Vec::new();
    if let Some(want) = &e.cluster_ip {
        let got = svc.spec.cluster_ip.clone().unwrap_or_default();
        if *want != got {
            problems.push(format!("expected clusterIP {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &e.node_ports {
        let got: Vec<i32> = svc.spec.ports.iter().filter_map(|p| p.node_port).collect();
        if *want != got {
            problems.push(format!("expected nodePorts {want:?}, got {got:?}"));
        }
    }
    let endpoints = || slices.iter().flat_map(|s| &s.endpoints);
    let addresses = |keep: &dyn Fn(&k8s_types::discovery::Endpoint) -> bool| -> Vec<String> {
        let mut v: Vec<String> = endpoints()
            .filter(|ep| keep(ep))
            .flat_map(|ep| ep.addresses.iter().cloned())
            .collect();
        v.sort_by_key(|a| {
            a.parse::<std::net::Ipv4Addr>()
                .map(u32::from)
                .unwrap_or(u32::MAX)
        });
        v
    };
    for (field, want, got) in [
        (
            "ready",
            &e.ready,
            addresses(&|ep| ep.conditions.ready == Some(true)),
        ),
        (
            "notReady",
            &e.not_ready,
            addresses(&|ep| ep.conditions.ready != Some(true)),
        ),
        (
            "terminating",
            &e.terminating,
            addresses(&|ep| ep.conditions.terminating == Some(true)),
        ),
    ] {
        if let Some(want) = want {
            if *want != got {
                problems.push(format!("expected {field} {want:?}, got {got:?}"));
            }
        }
    }
    if let Some(want) = e.slices {
        if want != slices.len() {
            problems.push(format!("expected {want} slices, got {}", slices.len()));
        }
    }
    if let Some(want) = &e.ports {
        let got: BTreeSet<String> = slices
            .iter()
            .flat_map(|s| &s.ports)
            .map(|p| {
                let pp = format!(
                    "{}/{}",
                    p.port.unwrap_or(0),
                    p.protocol.as_deref().unwrap_or("")
                );
                match p.name.as_deref().filter(|n| !n.is_empty()) {
                    Some(n) => format!("{n}={pp}"),
                    None => pp,
                }
            })
            .collect();
        let got: Vec<String> = got.into_iter().collect();
        if *want != got {
            problems.push(format!("expected ports {want:?}, got {got:?}"));
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}
