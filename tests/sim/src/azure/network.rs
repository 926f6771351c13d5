//! `virtualNetworks/{vnet}/subnets/{subnet}` GET and
//! `virtualNetworks/{vnet}/CheckIPAddressAvailability` in the fake. Azure keeps the first four
//! and the last address of a subnet; addresses in use are refused, with up to five suggestions
//! when the asked one is taken. A subnet with one prefix reports `addressPrefix`; a dual-stack
//! one reports `addressPrefixes` (IPv4, then its IPv6 /64). What the real
//! CheckIPAddressAvailability answers for an IPv6 is not documented, so the fake refuses IPv6
//! there (400), and an agent that asked would fail.

use super::arm::{Call, Reply};
use super::world::{SUBSCRIPTION, World, rg_id};
use serde_json::{Value, json};
use std::net::{Ipv4Addr, Ipv6Addr};

#[derive(Debug, Clone)]
pub struct Subnet {
    pub name: String,
    pub network: Ipv4Addr,
    pub len: u32,
    /// The IPv6 prefix of a dual-stack subnet (Azure IPv6 subnets are exactly /64).
    pub ipv6: Option<(Ipv6Addr, u8)>,
}

impl Subnet {
    pub(super) fn contains(&self, ip: Ipv4Addr) -> bool {
        let mask = u32::MAX.checked_shl(32 - self.len).unwrap_or(0);
        u32::from(ip) & mask == u32::from(self.network)
    }

    pub(super) fn platform_reserved(&self, ip: Ipv4Addr) -> bool {
        let offset = u32::from(ip) - u32::from(self.network);
        offset < 4 || offset == (1u32 << (32 - self.len)) - 1
    }

    pub(super) fn prefix(&self) -> String {
        format!("{}/{}", self.network, self.len)
    }

    /// The subnet's prefix properties as ARM reports them.
    fn prefixes(&self) -> (&'static str, Value) {
        match self.ipv6 {
            None => ("addressPrefix", json!(self.prefix())),
            Some((net, len)) => (
                "addressPrefixes",
                json!([self.prefix(), format!("{net}/{len}")]),
            ),
        }
    }
}

/// The one virtual network of the world: where subnets are looked up and addresses checked.
#[derive(Debug, Clone)]
pub struct VirtualNetwork {
    pub rg: String,
    pub name: String,
    pub subnets: Vec<Subnet>,
}

impl World {
    /// Whether the path names the world's vnet (ARM names are case-insensitive).
    pub(super) fn is_vnet(&self, rg: &str, vnet: &str) -> bool {
        rg.eq_ignore_ascii_case(&self.vnet.rg) && vnet.eq_ignore_ascii_case(&self.vnet.name)
    }

    pub(super) fn subnet(&self, rg: &str, vnet: &str, name: &str, rg_name: &str) -> Reply {
        if !self.is_vnet(rg, vnet) {
            return Reply::error(
                404,
                "ResourceNotFound",
                format!(
                    "The Resource 'Microsoft.Network/virtualNetworks/{vnet}' under resource group '{rg_name}' was not found."
                ),
            );
        }
        let vnet_name = &self.vnet.name;
        match self
            .vnet
            .subnets
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
        {
            None => Reply::error(
                404,
                "NotFound",
                format!(
                    "Resource /subscriptions/{SUBSCRIPTION}/resourceGroups/{rg_name}/providers/Microsoft.Network/virtualNetworks/{vnet_name}/subnets/{name} not found."
                ),
            ),
            Some(s) => {
                let (key, prefixes) = s.prefixes();
                let mut properties = json!({
                    "provisioningState": "Succeeded",
                    "privateEndpointNetworkPolicies": "Disabled",
                    "privateLinkServiceNetworkPolicies": "Enabled",
                });
                properties[key] = prefixes;
                Reply::json(
                    200,
                    json!({
                        "name": s.name,
                        "id": format!("{}/providers/Microsoft.Network/virtualNetworks/{vnet_name}/subnets/{}", rg_id(&self.vnet.rg), s.name),
                        "etag": "W/\"00000000-0000-0000-0000-00000000beef\"",
                        "type": "Microsoft.Network/virtualNetworks/subnets",
                        "properties": properties,
                    }),
                )
            }
        }
    }

    pub(super) fn check_ip(&self, call: &Call, rg: &str, vnet: &str) -> Reply {
        if !self.is_vnet(rg, vnet) {
            return Reply::error(
                404,
                "ResourceNotFound",
                format!("The Resource 'Microsoft.Network/virtualNetworks/{vnet}' was not found."),
            );
        }
        let Some(ip) = call
            .query
            .get("ipAddress")
            .and_then(|s| s.parse::<Ipv4Addr>().ok())
        else {
            return Reply::error(
                400,
                "InvalidRequestFormat",
                "Cannot parse the request: ipAddress is missing or not an IPv4 address.",
            );
        };
        let Some(subnet) = self.vnet.subnets.iter().find(|s| s.contains(ip)) else {
            return Reply::error(
                400,
                "PrivateIPAddressNotInAnySubnet",
                format!(
                    "Private static IP address {ip} does not belong to the range of any subnet in virtual network {}.",
                    self.vnet.name
                ),
            );
        };
        let reserved = subnet.platform_reserved(ip);
        if !reserved && !self.private_ip_taken(ip) {
            return Reply::json(200, json!({"available": true, "isPlatformReserved": false}));
        }
        let size = 1u32 << (32 - subnet.len);
        let suggestions: Vec<String> = (4..size - 1)
            .map(|o| Ipv4Addr::from(u32::from(subnet.network) + o))
            .filter(|a| !self.private_ip_taken(*a))
            .take(5)
            .map(|a| a.to_string())
            .collect();
        Reply::json(
            200,
            json!({"available": false, "availableIPAddresses": suggestions, "isPlatformReserved": reserved}),
        )
    }
}
