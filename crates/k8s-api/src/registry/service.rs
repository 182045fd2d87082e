//! Service REST strategy and allocation (upstream `pkg/registry/core/service/strategy.go` and
//! `pkg/registry/core/service/storage/alloc.go`, with the bitmap allocators of
//! `pkg/registry/core/service/ipallocator` and `portallocator`).
//!
//! - Create resets the status (upstream `PrepareForCreate`); update keeps it and keeps the
//!   allocated `clusterIP(s)` and node ports a request leaves out (`patchAllocatedValues`).
//! - ClusterIPs come from the service CIDR `10.96.0.0/12` (kubeadm's default
//!   `--service-cluster-ip-range`), node ports from `30000-32767`.
//! - Deviation (deterministic on purpose): upstream picks a random free address of the upper
//!   ("dynamic") band first, then of the lower ("static") band (KEP-3070 / KEP-3668: the lower
//!   band is `min(max(16, size/16), 256)` addresses, `min(max(16, size/32), 128)` ports); k8s-mini
//!   takes the lowest free one of the upper band, then of the lower band. The first Service gets
//!   `10.96.1.1` (offset 256 above `10.96.0.1`) and the first node port is `30086`.
//! - A requested IP or port must be in range and free (upstream messages).
//! - No `kubernetes` Service is created in `default` (a scenario's objects stay exactly its own).

use std::collections::BTreeSet;

use k8s_types::core::{service_types, Service, CLUSTER_IP_NONE};
use k8s_types::status::FieldError;

/// The service CIDR's network address (`10.96.0.0`).
pub const SERVICE_CIDR_BASE: u32 = 0x0A60_0000;
/// The service CIDR's prefix length (`/12`).
pub const SERVICE_CIDR_PREFIX: u32 = 12;
/// The service CIDR as upstream prints it.
pub const SERVICE_CIDR: &str = "10.96.0.0/12";
/// The node port range's first port.
pub const NODE_PORT_MIN: i32 = 30000;
/// The node port range's last port.
pub const NODE_PORT_MAX: i32 = 32767;

/// Usable addresses of the CIDR (network and broadcast excluded), as the bitmap allocator's max.
fn ip_range_size() -> u32 {
    (1u32 << (32 - SERVICE_CIDR_PREFIX)) - 2
}

/// Upstream `calculateRangeOffset` for ClusterIPs: `min(max(16, size/16), 256)`.
pub fn ip_static_band() -> u32 {
    (ip_range_size() / 16).clamp(16, 256)
}

/// Upstream `calculateRangeOffset` for node ports: `min(max(16, size/32), 128)`.
pub fn node_port_static_band() -> i32 {
    ((NODE_PORT_MAX - NODE_PORT_MIN + 1) / 32).clamp(16, 128)
}

/// Dotted quad of a u32.
pub fn format_ipv4(ip: u32) -> String {
    let b = ip.to_be_bytes();
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

/// Parses a dotted quad.
pub fn parse_ipv4(s: &str) -> Option<u32> {
    s.parse::<std::net::Ipv4Addr>().ok().map(u32::from)
}

/// The offset (0 = `10.96.0.1`) of an address inside the range, `None` outside it.
fn ip_offset(ip: u32) -> Option<u32> {
    let first = SERVICE_CIDR_BASE + 1;
    (ip >= first && ip - first < ip_range_size()).then(|| ip - first)
}

/// The ClusterIPs and node ports the other Services hold.
#[derive(Debug, Default)]
pub struct Allocated {
    ips: BTreeSet<u32>,
    node_ports: BTreeSet<i32>,
}

impl Allocated {
    /// What `services` hold.
    pub fn of<'a>(services: impl IntoIterator<Item = &'a Service>) -> Allocated {
        let mut a = Allocated::default();
        for s in services {
            for ip in s.spec.cluster_ips.iter().chain(s.spec.cluster_ip.iter()) {
                if let Some(ip) = parse_ipv4(ip) {
                    a.ips.insert(ip);
                }
            }
            for p in &s.spec.ports {
                if let Some(np) = p.node_port.filter(|&n| n != 0) {
                    a.node_ports.insert(np);
                }
            }
        }
        a
    }

    /// Lowest free ClusterIP: the upper band, then the lower band.
    fn next_ip(&self) -> Option<u32> {
        let first = SERVICE_CIDR_BASE + 1;
        let band = ip_static_band();
        (band..ip_range_size())
            .chain(0..band)
            .map(|o| first + o)
            .find(|ip| !self.ips.contains(ip))
    }

    /// Lowest free node port: the upper band, then the lower band.
    fn next_node_port(&self) -> Option<i32> {
        let band = NODE_PORT_MIN + node_port_static_band();
        (band..=NODE_PORT_MAX)
            .chain(NODE_PORT_MIN..band)
            .find(|p| !self.node_ports.contains(p))
    }
}

/// Upstream `allocateCreate` (ClusterIPs and IP family fields) and the node port allocation of
/// `txnAllocNodePorts`: fills what `svc` leaves to the apiserver, taking nothing `taken` holds.
/// An update passes the other Services only, so the Service keeps what it already has.
///
/// # Errors
/// Field errors in upstream's words (address or port outside the range, already allocated, the
/// range full, a family this single-stack IPv4 cluster does not have).
pub fn allocate(svc: &mut Service, taken: &Allocated) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = svc.type_().to_string();
    if ty == service_types::EXTERNAL_NAME {
        // ExternalName Services get neither IPs nor families (upstream clears them).
        return errs;
    }
    for (i, fam) in svc.spec.ip_families.iter().enumerate() {
        if fam != "IPv4" {
            errs.push(FieldError::invalid(
                format!("spec.ipFamilies[{i}]"),
                format!("{fam:?}"),
                "not configured on this cluster",
            ));
        }
    }
    let headless = svc.is_headless();
    if svc.spec.ip_family_policy.is_none() {
        // Upstream: a headless Service without a selector asks for every family of the cluster.
        let policy = if headless && svc.spec.selector.is_none() {
            "RequireDualStack"
        } else {
            "SingleStack"
        };
        svc.spec.ip_family_policy = Some(policy.to_string());
    }
    if svc.spec.ip_families.is_empty() {
        svc.spec.ip_families = vec!["IPv4".to_string()];
    }
    if headless {
        svc.spec.cluster_ips = vec![CLUSTER_IP_NONE.to_string()];
    } else {
        let requested = svc
            .spec
            .cluster_ip
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| {
                svc.spec
                    .cluster_ips
                    .first()
                    .cloned()
                    .filter(|s| !s.is_empty())
            });
        match requested {
            Some(req) => match parse_ipv4(&req) {
                Some(ip) if ip_offset(ip).is_none() => errs.push(FieldError::invalid(
                    "spec.clusterIPs[0]",
                    format!("{req:?}"),
                    format!("failed to allocate IP {req}: provided IP ({req}) is not in the valid range. The range of valid IPs is {SERVICE_CIDR}"),
                )),
                Some(ip) if taken.ips.contains(&ip) => errs.push(FieldError::invalid(
                    "spec.clusterIPs[0]",
                    format!("{req:?}"),
                    format!("failed to allocate IP {req}: provided IP is already allocated"),
                )),
                // Not an IP: validation reports it.
                _ => {
                    svc.spec.cluster_ip = Some(req.clone());
                    svc.spec.cluster_ips = vec![req];
                }
            },
            None => match taken.next_ip() {
                Some(ip) => {
                    svc.spec.cluster_ip = Some(format_ipv4(ip));
                    svc.spec.cluster_ips = vec![format_ipv4(ip)];
                }
                None => errs.push(FieldError::invalid(
                    "spec.clusterIPs",
                    "[]",
                    "failed to allocate IP: range is full",
                )),
            },
        }
    }
    if svc.needs_node_ports() {
        let mut used: BTreeSet<i32> = BTreeSet::new();
        for (i, port) in svc.spec.ports.iter_mut().enumerate() {
            let field = format!("spec.ports[{i}].nodePort");
            match port.node_port.filter(|&n| n != 0) {
                Some(np) if !(NODE_PORT_MIN..=NODE_PORT_MAX).contains(&np) => {
                    errs.push(FieldError::invalid(
                        field,
                        np.to_string(),
                        format!("provided port is not in the valid range. The range of valid ports is {NODE_PORT_MIN}-{NODE_PORT_MAX}"),
                    ));
                }
                Some(np) if taken.node_ports.contains(&np) => {
                    errs.push(FieldError::invalid(
                        field,
                        np.to_string(),
                        "provided port is already allocated",
                    ));
                }
                Some(np) => {
                    used.insert(np);
                }
                None => {
                    let mut all = Allocated {
                        ips: BTreeSet::new(),
                        node_ports: taken.node_ports.clone(),
                    };
                    all.node_ports.extend(used.iter().copied());
                    match all.next_node_port() {
                        Some(np) => {
                            port.node_port = Some(np);
                            used.insert(np);
                        }
                        None => errs.push(FieldError::invalid(
                            field,
                            "0",
                            "failed to allocate port: range is full",
                        )),
                    }
                }
            }
        }
    }
    errs
}

/// Upstream `PrepareForCreate`: the status is reset.
pub fn prepare_for_create(svc: &mut Service) {
    svc.status.clear();
}

/// Upstream `PrepareForUpdate` with `patchAllocatedValues` and `normalizeClusterIPs`: the status is kept; a request that
/// leaves out the allocated `clusterIP(s)` or a port's `nodePort` keeps the stored ones (while
/// the Service keeps needing them).
pub fn prepare_for_update(new: &mut Service, old: &Service) {
    new.status.clone_from(&old.status);
    let keeps_ip = |s: &Service| s.type_() != service_types::EXTERNAL_NAME;
    if keeps_ip(new) && keeps_ip(old) {
        if new.spec.cluster_ip.as_deref().unwrap_or("").is_empty() {
            new.spec.cluster_ip.clone_from(&old.spec.cluster_ip);
        }
        if new.spec.cluster_ips.is_empty() {
            // Upstream normalizeClusterIPs: a request that changes only clusterIP gets
            // clusterIPs = [clusterIP] (validation then refuses the change).
            if new.spec.cluster_ip != old.spec.cluster_ip {
                new.spec.cluster_ips = new.spec.cluster_ip.iter().cloned().collect();
            } else {
                new.spec.cluster_ips.clone_from(&old.spec.cluster_ips);
            }
        }
        if new.spec.ip_family_policy.is_none() {
            new.spec
                .ip_family_policy
                .clone_from(&old.spec.ip_family_policy);
        }
        if new.spec.ip_families.is_empty() {
            new.spec.ip_families.clone_from(&old.spec.ip_families);
        }
    }
    if new.needs_node_ports() && old.needs_node_ports() {
        for p in &mut new.spec.ports {
            if p.node_port.filter(|&n| n != 0).is_none() {
                p.node_port = old
                    .spec
                    .ports
                    .iter()
                    .find(|o| o.port == p.port && o.protocol == p.protocol)
                    .and_then(|o| o.node_port);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::ServicePort;

    fn svc(ty: &str) -> Service {
        let mut s = Service::default();
        s.spec.type_ = Some(ty.to_string());
        s.spec.ports.push(ServicePort {
            port: 80,
            ..Default::default()
        });
        s
    }

    #[test]
    fn bands_follow_the_kep_formulas() {
        // 10.96.0.0/12: 2^20 - 2 usable addresses, /16 = 65535 -> capped at 256.
        assert_eq!(ip_static_band(), 256);
        // 2768 ports / 32 = 86.
        assert_eq!(node_port_static_band(), 86);
    }

    #[test]
    fn lowest_free_address_of_the_upper_band_then_the_next() {
        let mut a = svc("ClusterIP");
        assert!(allocate(&mut a, &Allocated::default()).is_empty());
        assert_eq!(a.spec.cluster_ip.as_deref(), Some("10.96.1.1"));
        assert_eq!(a.spec.cluster_ips, vec!["10.96.1.1".to_string()]);
        assert_eq!(a.spec.ip_family_policy.as_deref(), Some("SingleStack"));
        assert_eq!(a.spec.ip_families, vec!["IPv4".to_string()]);
        let mut b = svc("NodePort");
        assert!(allocate(&mut b, &Allocated::of([&a])).is_empty());
        assert_eq!(b.spec.cluster_ip.as_deref(), Some("10.96.1.2"));
        assert_eq!(b.spec.ports[0].node_port, Some(30086));
        // A requested address in the lower band is free; the same one again is taken.
        let mut c = svc("ClusterIP");
        c.spec.cluster_ip = Some("10.96.0.10".into());
        assert!(allocate(&mut c, &Allocated::of([&a, &b])).is_empty());
        let mut d = svc("NodePort");
        d.spec.cluster_ip = Some("10.96.0.10".into());
        d.spec.ports[0].node_port = Some(30086);
        let errs: Vec<String> = allocate(&mut d, &Allocated::of([&a, &b, &c]))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "spec.clusterIPs[0]: Invalid value: \"10.96.0.10\": failed to allocate IP 10.96.0.10: provided IP is already allocated",
                "spec.ports[0].nodePort: Invalid value: 30086: provided port is already allocated",
            ]
        );
        let mut e = svc("ClusterIP");
        e.spec.cluster_ip = Some("10.0.0.1".into());
        let errs = allocate(&mut e, &Allocated::default());
        assert!(errs[0].to_string().ends_with(
            "provided IP (10.0.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12"
        ));
    }

    #[test]
    fn headless_and_external_name() {
        let mut h = svc("ClusterIP");
        h.spec.cluster_ip = Some("None".into());
        h.spec.selector = Some([("app".to_string(), "db".to_string())].into());
        assert!(allocate(&mut h, &Allocated::default()).is_empty());
        assert_eq!(h.spec.cluster_ips, vec!["None".to_string()]);
        assert_eq!(h.spec.ip_family_policy.as_deref(), Some("SingleStack"));
        let mut h2 = svc("ClusterIP");
        h2.spec.cluster_ip = Some("None".into());
        allocate(&mut h2, &Allocated::default());
        assert_eq!(
            h2.spec.ip_family_policy.as_deref(),
            Some("RequireDualStack")
        );
        let mut x = svc("ExternalName");
        assert!(allocate(&mut x, &Allocated::default()).is_empty());
        assert_eq!(x.spec.cluster_ip, None);
        assert!(x.spec.ip_families.is_empty());
    }
}
