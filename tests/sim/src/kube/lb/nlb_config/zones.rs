//! The zones an NLB forwards between: its addresses' and its VPC's subnets', and whether an
//! address serves a listener given where the healthy targets are and cross-zone.

use super::Config;
use crate::kube::lb::Ipv4Cidr;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// Where an NLB's addresses and its targets are: each NLB address's zone, and every subnet
/// of the VPC with its zone (to place the targets, as ELB places an IP target by the subnet
/// that holds it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Zones {
    pub addresses: BTreeMap<Ipv4Addr, String>,
    pub subnets: Vec<(Ipv4Cidr, String)>,
}

impl Zones {
    /// The zone of a target; None when no subnet of the VPC holds it (ELB then registers
    /// it for every zone, "all").
    fn of_target(&self, target: Ipv4Addr) -> Option<&str> {
        self.subnets
            .iter()
            .find(|(cidr, _)| cidr.contains(target))
            .map(|(_, zone)| zone.as_str())
    }

    /// Whether the NLB node holding `address` forwards traffic on `port` to one of the
    /// healthy `targets`: with cross-zone on, to any; off, only to one in its own zone (or
    /// one registered for every zone). An address whose zone is unknown serves when any
    /// target is healthy.
    pub fn serves(
        &self,
        config: &Config,
        address: Ipv4Addr,
        port: u16,
        targets: &[Ipv4Addr],
    ) -> bool {
        if targets.is_empty() {
            return false;
        }
        let Some(zone) = self.addresses.get(&address) else {
            return true;
        };
        config.cross_zone(port)
            || targets
                .iter()
                .any(|t| self.of_target(*t).is_none_or(|z| z == zone))
    }
}
