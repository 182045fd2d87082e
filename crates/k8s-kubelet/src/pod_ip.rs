//! Pod IP address management from the node's `spec.podCIDR`: what the CNI plugin's `host-local` IPAM
//! does on a real node (containernetworking/plugins `plugins/ipam/host-local`), reduced to one rule.
//!
//! The network address (`.0`) and the first host address (`.1`, the bridge gateway) are never
//! handed out, nor the IPv4 broadcast address. k8s-mini gives each new pod the LOWEST free address
//! from `.2` on, so a freed address is reused by the next pod; real `host-local` continues round-robin
//! after the last address it handed out. Both are deterministic; lowest-free keeps scenarios short.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A pod CIDR that does not parse (upstream `net.ParseCIDR`: `invalid CIDR address: <text>`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid CIDR address: {0}")]
pub struct InvalidCidr(pub String);

/// Hands out pod IPs from one CIDR (IPv4 or IPv6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodIpAllocator {
    network: IpAddr,
    /// Number of addresses in the range (saturated at `u128::MAX` for a `/0` IPv6 range).
    size: u128,
    /// Offsets from `network` currently in use.
    used: BTreeSet<u128>,
}

/// The first offset handed out: `.2` (`.0` is the network, `.1` the gateway).
const FIRST_OFFSET: u128 = 2;

impl PodIpAllocator {
    /// Parses `10.244.1.0/24` or `fd00:10:244:1::/64`. Host bits in the address are ignored
    /// (`10.244.1.7/24` is the range `10.244.1.0/24`), as `net.ParseCIDR` returns the masked network.
    ///
    /// # Errors
    /// [`InvalidCidr`] when the text is not `<ip>/<prefix>` with a prefix within the address length.
    pub fn parse(cidr: &str) -> Result<PodIpAllocator, InvalidCidr> {
        let err = || InvalidCidr(cidr.to_string());
        let (addr, prefix) = cidr.split_once('/').ok_or_else(err)?;
        if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let prefix: u32 = prefix.parse().map_err(|_| err())?;
        let ip: IpAddr = addr.parse().map_err(|_| err())?;
        let bits: u32 = if ip.is_ipv4() { 32 } else { 128 };
        if prefix > bits {
            return Err(err());
        }
        let host_bits = bits - prefix;
        let value = ip_to_u128(ip);
        let mask = if host_bits >= 128 {
            u128::MAX
        } else {
            (1u128 << host_bits) - 1
        };
        let network = u128_to_ip(value & !mask, ip.is_ipv4());
        let size = if host_bits >= 128 {
            u128::MAX
        } else {
            1u128 << host_bits
        };
        Ok(PodIpAllocator {
            network,
            size,
            used: BTreeSet::new(),
        })
    }

    /// The last offset that may be handed out: the IPv4 broadcast address is excluded.
    fn last_offset(&self) -> Option<u128> {
        let last = if self.network.is_ipv4() {
            self.size.checked_sub(2)?
        } else {
            self.size.checked_sub(1)?
        };
        (last >= FIRST_OFFSET).then_some(last)
    }

    /// The lowest free address from `.2` on, now marked used; `None` when the range is exhausted
    /// (the CNI `ADD` would fail and the pod stay in ContainerCreating).
    pub fn allocate(&mut self) -> Option<IpAddr> {
        let last = self.last_offset()?;
        let mut candidate = FIRST_OFFSET;
        for &u in self.used.range(FIRST_OFFSET..) {
            if u != candidate {
                break;
            }
            candidate += 1;
        }
        if candidate > last {
            return None;
        }
        self.used.insert(candidate);
        Some(self.ip_at(candidate))
    }

    /// Marks a given address used (a pod that already has an IP when the kubelet starts). Returns
    /// false when the address is outside the assignable range or already used.
    pub fn reserve(&mut self, ip: &str) -> bool {
        match self.offset_of(ip) {
            Some(off) => self.used.insert(off),
            None => false,
        }
    }

    /// Frees an address; unknown or foreign addresses are ignored.
    pub fn release(&mut self, ip: &str) {
        if let Some(off) = self.offset_of(ip) {
            self.used.remove(&off);
        }
    }

    /// Number of addresses in use.
    pub fn used_count(&self) -> usize {
        self.used.len()
    }

    fn ip_at(&self, offset: u128) -> IpAddr {
        u128_to_ip(ip_to_u128(self.network) + offset, self.network.is_ipv4())
    }

    fn offset_of(&self, ip: &str) -> Option<u128> {
        let ip: IpAddr = ip.parse().ok()?;
        if ip.is_ipv4() != self.network.is_ipv4() {
            return None;
        }
        let off = ip_to_u128(ip).checked_sub(ip_to_u128(self.network))?;
        let last = self.last_offset()?;
        (FIRST_OFFSET..=last).contains(&off).then_some(off)
    }
}

fn ip_to_u128(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn u128_to_ip(v: u128, v4: bool) -> IpAddr {
    if v4 {
        // Offsets stay inside the /0..=/32 range, so the value fits 32 bits.
        IpAddr::V4(Ipv4Addr::from(u32::try_from(v).unwrap_or(u32::MAX)))
    } else {
        IpAddr::V6(Ipv6Addr::from(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_lowest_free_address_from_dot_two() {
        let mut a = PodIpAllocator::parse("10.244.1.0/24").expect("valid");
        assert_eq!(
            a.allocate().map(|i| i.to_string()).as_deref(),
            Some("10.244.1.2")
        );
        assert_eq!(
            a.allocate().map(|i| i.to_string()).as_deref(),
            Some("10.244.1.3")
        );
        assert_eq!(
            a.allocate().map(|i| i.to_string()).as_deref(),
            Some("10.244.1.4")
        );
        a.release("10.244.1.3");
        assert_eq!(
            a.allocate().map(|i| i.to_string()).as_deref(),
            Some("10.244.1.3")
        );
        assert_eq!(
            a.allocate().map(|i| i.to_string()).as_deref(),
            Some("10.244.1.5")
        );
        assert_eq!(a.used_count(), 4);
    }

    #[test]
    fn a_slash_30_has_one_pod_address() {
        // 10.0.0.0/30: .0 network, .1 gateway, .2 pod, .3 broadcast.
        let mut a = PodIpAllocator::parse("10.0.0.1/30").expect("valid");
        assert_eq!(
            a.allocate().map(|i| i.to_string()).as_deref(),
            Some("10.0.0.2")
        );
        assert_eq!(a.allocate(), None);
        assert!(PodIpAllocator::parse("10.0.0.0/31")
            .expect("valid")
            .allocate()
            .is_none());
    }

    #[test]
    fn reserve_and_ipv6() {
        let mut a = PodIpAllocator::parse("10.244.0.0/24").expect("valid");
        assert!(a.reserve("10.244.0.2"));
        assert!(!a.reserve("10.244.0.2"));
        assert!(!a.reserve("10.244.0.1"));
        assert!(!a.reserve("10.244.0.255"));
        assert!(!a.reserve("10.245.0.9"));
        assert_eq!(
            a.allocate().map(|i| i.to_string()).as_deref(),
            Some("10.244.0.3")
        );
        let mut v6 = PodIpAllocator::parse("fd00:10:244:1::/64").expect("valid");
        assert_eq!(
            v6.allocate().map(|i| i.to_string()).as_deref(),
            Some("fd00:10:244:1::2")
        );
    }

    #[test]
    fn invalid_cidrs_are_rejected_with_upstream_text() {
        assert_eq!(
            PodIpAllocator::parse("10.244.1.0").unwrap_err().to_string(),
            "invalid CIDR address: 10.244.1.0"
        );
        assert!(PodIpAllocator::parse("10.244.1.0/33").is_err());
        assert!(PodIpAllocator::parse("10.244.1.0/+4").is_err());
        assert!(PodIpAllocator::parse("nope/24").is_err());
    }
}
