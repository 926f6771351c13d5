//! IP ranges of either family, as the load-balancer controllers check addresses against them.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A range type of one address family: `$addr`, as the `$bits`-bit integer `$int`, parsed
/// from `<address>/<prefix length>` (`$form` in the error).
macro_rules! cidr {
    ($(#[$doc:meta])* $name:ident, $addr:ty, $int:ty, $bits:literal, $form:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            pub network: $addr,
            pub prefix: u8,
        }

        impl $name {
            pub fn new(network: $addr, prefix: u8) -> Self {
                Self { network, prefix }
            }

            fn mask(&self) -> $int {
                <$int>::MAX
                    .checked_shl($bits - u32::from(self.prefix.min($bits)))
                    .unwrap_or(0)
            }

            pub fn contains(&self, ip: $addr) -> bool {
                <$int>::from(ip) & self.mask() == <$int>::from(self.network) & self.mask()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}/{}", self.network, self.prefix)
            }
        }

        impl FromStr for $name {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                let (net, prefix) = s
                    .split_once('/')
                    .ok_or(format!("{s:?}: expected {}", $form))?;
                let network = net.parse().map_err(|_| format!("{s:?}: bad address"))?;
                let prefix = prefix
                    .parse()
                    .ok()
                    .filter(|p| *p <= $bits)
                    .ok_or(format!("{s:?}: bad prefix length"))?;
                Ok(Self { network, prefix })
            }
        }
    };
}

cidr!(
    /// An IPv4 range, `10.0.128.0/17`.
    Ipv4Cidr, Ipv4Addr, u32, 32, "a.b.c.d/n"
);
cidr!(
    /// An IPv6 range, `fd00:10:0:2::/64`.
    Ipv6Cidr, Ipv6Addr, u128, 128, "x::/n"
);

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Display;

    /// `range` parses and prints back, holds `inside` and not `outside`; `bare` (no prefix
    /// length) and `too_long` (a prefix longer than the family's) are refused.
    fn check<C: FromStr + Display>(
        [range, inside, outside, bare, too_long]: [&str; 5],
        contains: impl Fn(&C, &str) -> bool,
    ) {
        let Ok(c) = range.parse::<C>() else {
            panic!("{range} does not parse");
        };
        assert_eq!(c.to_string(), range);
        assert!(contains(&c, inside), "{range} holds {inside}");
        assert!(!contains(&c, outside), "{range} does not hold {outside}");
        assert!(bare.parse::<C>().is_err(), "{bare} is refused");
        assert!(too_long.parse::<C>().is_err(), "{too_long} is refused");
    }

    #[test]
    fn cidrs_parse_print_and_contain() {
        let v4 = [
            "10.0.128.0/17",
            "10.0.200.1",
            "10.0.127.255",
            "10.0.0.0",
            "10.0.0.0/33",
        ];
        check(v4, |c: &Ipv4Cidr, ip| c.contains(ip.parse().unwrap()));
        assert!(Ipv4Cidr::new(Ipv4Addr::UNSPECIFIED, 0).contains(Ipv4Addr::BROADCAST));
        let v6 = [
            "fd00:10:0:2::/64",
            "fd00:10:0:2:c5ce::1",
            "fd00:10:0:1::1",
            "fd00::",
            "fd00::/129",
        ];
        check(v6, |c: &Ipv6Cidr, ip| c.contains(ip.parse().unwrap()));
    }
}
