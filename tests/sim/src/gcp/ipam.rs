//! One allocator of a VPC's internal addresses for the whole fake: what is in use, what is
//! reserved, and the next free address or block of a subnetwork.
//!
//! In use (GCE never hands out, and refuses to give a second holder, an address that any of
//! these holds): an address resource (`addresses`, INTERNAL or EXTERNAL), an instance's
//! primary `networkIP`, its nic0 alias IP ranges (the current ones and those of an
//! `updateNetworkInterface` still RUNNING), and the IP of a forwarding rule the simulated
//! service controller made (even one without an address resource behind it).
//!
//! Reserved in every subnetwork's primary range: the network address, the default gateway
//! (`.1`), the second-to-last address and the broadcast address ("Reserved IPv4 addresses in
//! IPv4 subnets", docs.cloud.google.com/vpc/docs/subnets#unusable-ip-addresses-in-every-subnet).

use super::{SubnetSeed, World};
use std::net::Ipv4Addr;

/// A block of addresses: its first address and prefix length (an alias IP range).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Block {
    pub start: Ipv4Addr,
    pub prefix: u8,
}

impl Block {
    /// How GCE shows an alias IP range: CIDR notation (`10.0.1.11/32`).
    pub fn cidr(&self) -> String {
        format!("{}/{}", self.start, self.prefix)
    }

    /// Every address of the block, first to last.
    pub fn addresses(&self) -> impl Iterator<Item = Ipv4Addr> {
        let (lo, hi) = span(self.start, self.prefix);
        (lo..=hi).map(Ipv4Addr::from)
    }

    pub fn overlaps(&self, other: &Block) -> bool {
        let (a_lo, a_hi) = span(self.start, self.prefix);
        let (b_lo, b_hi) = span(other.start, other.prefix);
        a_lo <= b_hi && b_lo <= a_hi
    }
}

/// The first and last address (as numbers) of `base/prefix`.
pub(crate) fn span(base: Ipv4Addr, prefix: u8) -> (u32, u32) {
    let size = 1u64 << (32 - u32::from(prefix.min(32)));
    let start = u32::from(base);
    let last = u64::from(start) + size - 1;
    (start, u32::try_from(last).unwrap_or(u32::MAX))
}

/// The usable addresses of a subnetwork's primary range (as numbers): all but the reserved
/// four.
pub(crate) fn usable(subnet: &SubnetSeed) -> (u32, u32) {
    let (lo, hi) = span(subnet.cidr, subnet.prefix);
    (lo.saturating_add(2), hi.saturating_sub(2))
}

/// Whether `ip` is one of the subnetwork's reserved addresses (inside its range).
pub(crate) fn is_reserved(subnet: &SubnetSeed, ip: u32) -> bool {
    let (lo, hi) = span(subnet.cidr, subnet.prefix);
    let (first, last) = usable(subnet);
    (lo..=hi).contains(&ip) && !(first..=last).contains(&ip)
}

impl World {
    /// Whether any holder (see the module doc) has `ip`.
    pub(crate) fn ip_in_use(&self, ip: Ipv4Addr) -> bool {
        let text = ip.to_string();
        self.addresses
            .values()
            .any(|a| a["address"] == text.as_str())
            || self.instances.values().any(|i| i.holds(ip))
            || self
                .forwarding_rule_ips
                .keys()
                .any(|held| *held == std::net::IpAddr::V4(ip))
    }

    /// The first free block of `prefix` in the subnetwork's usable range, aligned to its size.
    pub(crate) fn free_block(&self, subnet: &SubnetSeed, prefix: u8) -> Option<Block> {
        let (first, last) = usable(subnet);
        let size = 1u64 << (32 - u32::from(prefix.min(32)));
        let mut start = u64::from(first).div_ceil(size) * size;
        while start + size - 1 <= u64::from(last) {
            let block = Block {
                start: Ipv4Addr::from(u32::try_from(start).ok()?),
                prefix,
            };
            if !block.addresses().any(|ip| self.ip_in_use(ip)) {
                return Some(block);
            }
            start += size;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subnet(cidr: [u8; 4], prefix: u8) -> SubnetSeed {
        SubnetSeed {
            name: "s".into(),
            project: None,
            network: "n".into(),
            cidr: Ipv4Addr::from(cidr),
            prefix,
        }
    }

    #[test]
    fn the_four_reserved_addresses_of_a_subnetwork_are_never_usable() {
        let s = subnet([10, 0, 0, 0], 29);
        let reserved: Vec<u32> = (0..8)
            .map(|o| u32::from(Ipv4Addr::new(10, 0, 0, o)))
            .filter(|ip| is_reserved(&s, *ip))
            .collect();
        let ip = |o| u32::from(Ipv4Addr::new(10, 0, 0, o));
        assert_eq!(reserved, [ip(0), ip(1), ip(6), ip(7)]);
        assert!(!is_reserved(&s, ip(8)), "outside the range is not reserved");
        assert_eq!(usable(&s), (ip(2), ip(5)));
    }

    #[test]
    fn blocks_show_as_cidr_and_overlap_by_their_addresses() {
        let a = Block {
            start: Ipv4Addr::new(10, 0, 1, 8),
            prefix: 30,
        };
        let b = Block {
            start: Ipv4Addr::new(10, 0, 1, 11),
            prefix: 32,
        };
        assert_eq!(a.cidr(), "10.0.1.8/30");
        assert_eq!(a.addresses().count(), 4);
        assert!(a.overlaps(&b) && b.overlaps(&a));
        let c = Block {
            start: Ipv4Addr::new(10, 0, 1, 12),
            prefix: 32,
        };
        assert!(!a.overlaps(&c));
    }
}
