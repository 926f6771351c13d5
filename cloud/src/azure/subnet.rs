//! The compute subnet: its prefixes as ARM reports them, and the address arithmetic on them
//! (the IPv6 derived from the infra id, the hash both families' choices start from).

use serde_json::Value;
use std::net::{Ipv4Addr, Ipv6Addr};

/// A subnet's prefixes: `addressPrefix` (a subnet with one) and `addressPrefixes` (a subnet
/// with several, e.g. dual stack).
pub(super) fn prefixes(subnet: &Value) -> Vec<String> {
    let properties = &subnet["properties"];
    properties["addressPrefix"]
        .as_str()
        .into_iter()
        .chain(
            properties["addressPrefixes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str),
        )
        .map(str::to_string)
        .collect()
}

/// `a.b.c.d/len` -> (network, len).
pub(super) fn parse_v4_prefix(prefix: &str) -> Option<(Ipv4Addr, u32)> {
    let (addr, len) = prefix.split_once('/')?;
    let addr: Ipv4Addr = addr.parse().ok()?;
    let len: u32 = len.parse().ok()?;
    if !(2..=29).contains(&len) {
        return None;
    }
    let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    Some((Ipv4Addr::from(u32::from(addr) & mask), len))
}

/// `xx::/len` -> (network, len). Azure IPv6 subnets are /64; anything that leaves fewer than
/// 8 host bits is refused.
pub(super) fn parse_v6_prefix(prefix: &str) -> Option<(Ipv6Addr, u32)> {
    let (addr, len) = prefix.split_once('/')?;
    let addr: Ipv6Addr = addr.parse().ok()?;
    let len: u32 = len.parse().ok()?;
    if len > 120 {
        return None;
    }
    let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
    Some((Ipv6Addr::from(u128::from(addr) & mask), len))
}

/// The cluster's private IPv6 in `network/len`, derived from the infra id.
///
/// CheckIPAddressAvailability is documented as checking "a private IP address", with IPv4
/// examples only; nothing documents what it answers for an IPv6 (and the installer asks it
/// only for IPv4). So the IPv6 is not asked about but chosen
/// where a collision is least likely: in the upper half of the host range, which Azure's
/// dynamic allocation (next free address from the bottom) does not reach, at an offset hashed
/// from the infra id, so two clusters sharing a subnet land apart. It is deterministic: a
/// re-run or a resume derives the same address, and the resource-group tag records it.
pub(super) fn derived_ipv6(network: Ipv6Addr, len: u32, infra_id: &str) -> Ipv6Addr {
    let host_bits = 128 - len.min(120);
    let half = 1u128 << (host_bits - 1);
    let mut offset = half | (u128::from(fnv1a(infra_id.as_bytes())) % half);
    // Never the last address of the range (Azure keeps the last of an IPv4 subnet; stay clear).
    if offset == (half << 1) - 1 {
        offset -= 1;
    }
    Ipv6Addr::from(u128::from(network) | offset)
}

/// FNV-1a, 64 bits: small, stable across releases and platforms (the choice must never move).
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_private_ipv6_is_derived_in_the_upper_half_of_the_prefix_and_stable() {
        let (net, len) = parse_v6_prefix("fd00:10:0:2::/64").unwrap();
        let ip = derived_ipv6(net, len, "mycluster-7xk2p");
        let seg = ip.segments();
        assert_eq!(seg[..4], [0xfd00, 0x10, 0, 2], "{ip} inside the /64");
        assert!(
            seg[4] >= 0x8000,
            "{ip}: upper half, away from dynamic allocation"
        );
        assert_eq!(
            ip,
            derived_ipv6(net, len, "mycluster-7xk2p"),
            "deterministic: a re-run derives the same address"
        );
        assert_ne!(
            ip,
            derived_ipv6(net, len, "othercluster-x9q8z"),
            "another cluster in the same subnet lands elsewhere"
        );
        // Pinned, so a change of the derivation (which would move live clusters' AAAA) shows.
        assert_eq!(ip.to_string(), "fd00:10:0:2:c5ce:f6a6:3c97:2c8");
        // A narrow range still stays inside and off its last address.
        let (net, len) = parse_v6_prefix("fd00::ff00/120").unwrap();
        for id in ["a", "b", "c", "mycluster-7xk2p"] {
            let ip = u128::from(derived_ipv6(net, len, id));
            assert!((0xff80..0xffff).contains(&(ip & 0xffff)), "{id}: {ip:x}");
        }
    }

    #[test]
    fn the_private_ipv6_stays_inside_its_prefix_and_off_its_last_address() {
        let (net, len) = parse_v6_prefix("fd00::ff00/120").unwrap();
        for id in ["a", "b", "c", "d", "e", "mycluster-7xk2p"] {
            let ip = derived_ipv6(net, len, id);
            assert_eq!(
                parse_v6_prefix(&format!("{ip}/120")),
                Some((net, len)),
                "{id}: {ip} inside fd00::ff00/120"
            );
        }
        // An infra id whose hash lands on the last address gets the one below it.
        let last = (0..)
            .map(|i| format!("c{i}"))
            .find(|id| fnv1a(id.as_bytes()) % 128 == 127)
            .unwrap();
        assert_eq!(
            derived_ipv6(net, len, &last),
            "fd00::fffe".parse::<Ipv6Addr>().unwrap(),
            "{last}"
        );
    }

    #[test]
    fn ipv6_prefixes_are_normalized_and_too_narrow_ones_refused() {
        assert_eq!(
            parse_v6_prefix("fd00:10:0:2::1/64"),
            Some(("fd00:10:0:2::".parse().unwrap(), 64))
        );
        // Every host bit is cleared, not only the lowest.
        assert_eq!(
            parse_v6_prefix("fd00:10:0:2:ffff:ffff:ffff:ffff/64"),
            Some(("fd00:10:0:2::".parse().unwrap(), 64))
        );
        assert_eq!(
            parse_v6_prefix("fd00::1:ffff/120"),
            Some(("fd00::1:ff00".parse().unwrap(), 120))
        );
        assert_eq!(parse_v6_prefix("fd00::/121"), None);
        assert_eq!(parse_v6_prefix("10.0.1.0/24"), None);
    }

    #[test]
    fn prefixes_are_normalized_and_tiny_subnets_refused() {
        assert_eq!(
            parse_v4_prefix("10.0.1.7/24"),
            Some((Ipv4Addr::new(10, 0, 1, 0), 24))
        );
        assert_eq!(parse_v4_prefix("10.0.1.0/30"), None);
        assert_eq!(parse_v4_prefix("nope"), None);
        assert_eq!(parse_v4_prefix("fd00::/64"), None);
    }

    #[test]
    fn prefixes_are_read_from_either_field() {
        let one = serde_json::json!({"properties": {"addressPrefix": "10.0.1.0/24"}});
        assert_eq!(prefixes(&one), vec!["10.0.1.0/24"]);
        let two =
            serde_json::json!({"properties": {"addressPrefixes": ["10.0.1.0/24", "fd00::/64"]}});
        assert_eq!(prefixes(&two), vec!["10.0.1.0/24", "fd00::/64"]);
    }
}
