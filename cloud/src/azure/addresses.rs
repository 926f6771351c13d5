//! Public IPs (Standard SKU, static, one per family) and the private IP recorded as a tag on
//! the cluster resource group (see the module docs of `azure` for why).

use super::arm::ArmClient;
use super::{AzureSettings, NETWORK_API, RESERVATION_TAG, TAGS_API, cluster_tag, rg_path};
use crate::{
    AddressProvider, CloudError, ErrorKind, IpFamily, Reservation, ReservationKey, ReserveRequest,
    Scope,
};
use async_trait::async_trait;
use reqwest::Method;
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::time::Duration;

/// How many addresses from the top of the subnet are probed before taking Azure's suggestions.
const PROBES: u32 = 16;

pub struct AzureAddresses {
    arm: Arc<ArmClient>,
    settings: AzureSettings,
}

impl AzureAddresses {
    pub fn new(arm: Arc<ArmClient>, settings: &AzureSettings) -> Self {
        Self {
            arm,
            settings: settings.clone(),
        }
    }

    fn public_ips_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Network/publicIPAddresses",
            rg_path(&self.settings, &self.settings.resource_group)
        )
    }

    fn tags_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Resources/tags/default",
            rg_path(&self.settings, &self.settings.resource_group)
        )
    }

    fn vnet_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Network/virtualNetworks/{}",
            rg_path(&self.settings, &self.settings.network_resource_group),
            self.settings.virtual_network
        )
    }

    /// The prefix of the private tag names: `<infra-id>-rsvd-`.
    fn private_tag_prefix(&self) -> String {
        format!("{}-rsvd-", self.settings.infra_id)
    }

    fn is_ours(&self, resource: &Value) -> bool {
        resource["tags"][cluster_tag(&self.settings.infra_id)] == "owned"
            && resource["tags"][RESERVATION_TAG].is_string()
    }

    /// A public IP of ours as a Reservation; waits while it is still being provisioned.
    async fn public_reservation(
        &self,
        resource: &Value,
    ) -> Result<Option<Reservation>, CloudError> {
        let mut resource = resource.clone();
        let mut delay = Duration::from_millis(250);
        for _ in 0..40 {
            match resource["properties"]["provisioningState"].as_str() {
                Some("Updating" | "Creating") => {
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(5));
                    let Some(id) = resource["id"].as_str() else {
                        return Ok(None);
                    };
                    let url = self.arm.url(id, NETWORK_API, &[])?;
                    match self.arm.get_optional("GetPublicIPAddress", url).await? {
                        Some(r) => resource = r,
                        None => return Ok(None),
                    }
                }
                Some("Deleting") => return Ok(None),
                _ => break,
            }
        }
        let key = resource["tags"][RESERVATION_TAG]
            .as_str()
            .and_then(ReservationKey::parse);
        let ip = resource["properties"]["ipAddress"]
            .as_str()
            .and_then(|s| s.parse::<IpAddr>().ok());
        let id = resource["id"].as_str().unwrap_or_default().to_string();
        match (
            key,
            ip,
            resource["properties"]["provisioningState"].as_str(),
        ) {
            (Some(key), Some(ip), Some("Succeeded") | None) => Ok(Some(Reservation {
                key,
                id,
                name: resource["name"].as_str().unwrap_or_default().to_string(),
                ip,
            })),
            (_, _, state) => {
                // Failed, or tagged by hand without an address: not a usable reservation. The
                // planner reserves again, and the PUT by name re-provisions this very resource.
                tracing::warn!(%id, ?state, "owned public IP without a usable address; ignored");
                Ok(None)
            }
        }
    }

    async fn reserve_public(&self, request: &ReserveRequest) -> Result<Reservation, CloudError> {
        let path = format!("{}/{}", self.public_ips_path(), request.name);
        let url = self.arm.url(&path, NETWORK_API, &[])?;
        // The name is the idempotency key (PUT is create-or-update). Never take over a public
        // IP of that name that is not ours.
        if let Some(existing) = self
            .arm
            .get_optional("GetPublicIPAddress", url.clone())
            .await?
            && !self.is_ours(&existing)
        {
            return Err(CloudError::fatal(
                "CreateOrUpdatePublicIPAddress",
                format!(
                    "public IP {} exists and is not tagged as this cluster's; refusing to change it",
                    request.name
                ),
            ));
        }
        let version = match request.key.family {
            IpFamily::Ipv4 => "IPv4",
            IpFamily::Ipv6 => "IPv6",
        };
        let body = json!({
            "location": self.settings.region,
            "sku": {"name": "Standard", "tier": "Regional"},
            "tags": {
                cluster_tag(&self.settings.infra_id): "owned",
                RESERVATION_TAG: request.key.to_string(),
            },
            "properties": {
                "publicIPAllocationMethod": "Static",
                "publicIPAddressVersion": version,
            },
        });
        let resource = self
            .arm
            .long_running(
                "CreateOrUpdatePublicIPAddress",
                Method::PUT,
                url,
                Some(&body),
            )
            .await?
            .ok_or_else(|| {
                CloudError::fatal("CreateOrUpdatePublicIPAddress", "no resource after the PUT")
            })?;
        self.public_reservation(&resource).await?.ok_or_else(|| {
            CloudError::new(
                ErrorKind::Transient,
                "CreateOrUpdatePublicIPAddress",
                format!("{} has no address yet", request.name),
            )
        })
    }

    async fn rg_tags(&self) -> Result<serde_json::Map<String, Value>, CloudError> {
        let url = self.arm.url(&self.tags_path(), TAGS_API, &[])?;
        let body = self.arm.get_optional("GetTagsAtScope", url).await?;
        Ok(body
            .and_then(|b| b["properties"]["tags"].as_object().cloned())
            .unwrap_or_default())
    }

    async fn patch_tag(&self, operation: &str, name: &str, ip: IpAddr) -> Result<(), CloudError> {
        let url = self.arm.url(&self.tags_path(), TAGS_API, &[])?;
        let body = json!({
            "operation": operation,
            "properties": {"tags": {name: ip.to_string()}},
        });
        self.arm
            .long_running("UpdateTagsAtScope", Method::PATCH, url, Some(&body))
            .await
            .map(|_| ())
    }

    /// The compute subnet's address prefixes. Azure reports `addressPrefix` for a subnet with
    /// one prefix and `addressPrefixes` for one with several (a dual-stack subnet has an IPv4
    /// and an IPv6 prefix); both are read.
    async fn compute_subnet_prefixes(&self) -> Result<Vec<String>, CloudError> {
        let subnet_url = self.arm.url(
            &format!(
                "{}/subnets/{}",
                self.vnet_path(),
                self.settings.compute_subnet
            ),
            NETWORK_API,
            &[],
        )?;
        let subnet = self
            .arm
            .get_optional("GetSubnet", subnet_url)
            .await?
            .ok_or_else(|| {
                CloudError::new(
                    ErrorKind::NotFound,
                    "GetSubnet",
                    format!(
                        "subnet {} of {} in {} not found",
                        self.settings.compute_subnet,
                        self.settings.virtual_network,
                        self.settings.network_resource_group
                    ),
                )
            })?;
        let properties = &subnet["properties"];
        Ok(properties["addressPrefix"]
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
            .collect())
    }

    /// The compute subnet's prefix of one family (IPv6 prefixes contain a colon).
    async fn compute_subnet_prefix(&self, family: IpFamily) -> Result<String, CloudError> {
        let prefixes = self.compute_subnet_prefixes().await?;
        prefixes
            .iter()
            .find(|p| p.contains(':') == (family == IpFamily::Ipv6))
            .cloned()
            .ok_or_else(|| {
                CloudError::fatal(
                    "GetSubnet",
                    format!(
                        "subnet {} has no {family} prefix (its prefixes: {}); a dual-stack machine network needs a dual-stack compute subnet",
                        self.settings.compute_subnet,
                        prefixes.join(", ")
                    ),
                )
            })
    }

    /// The private IPv6 of this cluster in the compute subnet's IPv6 prefix (see
    /// [`derived_ipv6`] for why it is derived rather than found free).
    async fn private_ipv6(&self) -> Result<Ipv6Addr, CloudError> {
        let prefix = self.compute_subnet_prefix(IpFamily::Ipv6).await?;
        let (network, len) = parse_v6_prefix(&prefix)
            .ok_or_else(|| CloudError::fatal("GetSubnet", format!("bad prefix {prefix}")))?;
        Ok(derived_ipv6(network, len, &self.settings.infra_id))
    }

    /// A free address of the compute subnet, probing from the top down.
    async fn free_private_ip(&self) -> Result<Ipv4Addr, CloudError> {
        let op = "CheckIPAddressAvailability";
        let prefix = self.compute_subnet_prefix(IpFamily::Ipv4).await?;
        let (network, len) = parse_v4_prefix(&prefix)
            .ok_or_else(|| CloudError::fatal("GetSubnet", format!("bad prefix {prefix}")))?;
        let check_url = format!("{}/CheckIPAddressAvailability", self.vnet_path());
        let mut suggestions: Vec<Ipv4Addr> = Vec::new();
        for candidate in candidates(network, len).into_iter().take(PROBES as usize) {
            let url = self.arm.url(
                &check_url,
                NETWORK_API,
                &[("ipAddress", &candidate.to_string())],
            )?;
            let answer = self.arm.send(op, Method::GET, url, &[], None).await?.body;
            if answer["available"] == true {
                return Ok(candidate);
            }
            if suggestions.is_empty()
                && let Some(list) = answer["availableIPAddresses"].as_array()
            {
                suggestions = list
                    .iter()
                    .filter_map(|v| v.as_str()?.parse().ok())
                    .collect();
            }
        }
        suggestions.into_iter().next().ok_or_else(|| {
            CloudError::fatal(
                op,
                format!(
                    "no free address in {prefix} ({})",
                    self.settings.compute_subnet
                ),
            )
        })
    }
}

impl AzureAddresses {
    /// The user's public IP at `path` (a resource id), unless absent or ours.
    async fn user_public_ip(
        &self,
        query: &crate::UserReservationQuery,
        path: &str,
    ) -> Result<Option<crate::UserMade>, CloudError> {
        if !path
            .to_ascii_lowercase()
            .contains("/providers/microsoft.network/publicipaddresses/")
        {
            return Ok(Some(crate::UserMade::Misfit {
                resource: path.to_string(),
                problem: "is not a public IP resource id (…/providers/Microsoft.Network/publicIPAddresses/<name>)".into(),
            }));
        }
        let url = self.arm.url(path, NETWORK_API, &[])?;
        Ok(
            match self.arm.get_optional("GetPublicIPAddress", url).await? {
                Some(resource) if !self.is_ours(&resource) => Some(super::adopt::check_public(
                    &resource,
                    query,
                    &self.settings.region,
                )),
                _ => None,
            },
        )
    }

    /// A private IP the user chose: of the purpose's family, inside the compute subnet, and
    /// (IPv4, until adopted) free there per CheckIPAddressAvailability.
    async fn user_private_ip(
        &self,
        query: &crate::UserReservationQuery,
        ip: IpAddr,
    ) -> Result<crate::UserMade, CloudError> {
        let misfit = |problem: String| crate::UserMade::Misfit {
            resource: format!("private IP {ip}"),
            problem,
        };
        if IpFamily::of(&ip) != query.key.family {
            return Ok(misfit(format!("is not an {} address", query.key.family)));
        }
        let prefix = self.compute_subnet_prefix(query.key.family).await?;
        let inside = match ip {
            IpAddr::V4(v4) => parse_v4_prefix(&prefix).is_some_and(|(net, len)| {
                let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
                u32::from(v4) & mask == u32::from(net)
            }),
            IpAddr::V6(v6) => parse_v6_prefix(&prefix).is_some_and(|(net, len)| {
                let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
                u128::from(v6) & mask == u128::from(net)
            }),
        };
        if !inside {
            return Ok(misfit(format!(
                "is outside the compute subnet {} ({prefix}), where the internal load balancer takes its address",
                self.settings.compute_subnet
            )));
        }
        if let IpAddr::V4(_) = ip
            && query.adopted_before != Some(ip)
        {
            let url = self.arm.url(
                &format!("{}/CheckIPAddressAvailability", self.vnet_path()),
                NETWORK_API,
                &[("ipAddress", &ip.to_string())],
            )?;
            let answer = self
                .arm
                .send("CheckIPAddressAvailability", Method::GET, url, &[], None)
                .await?
                .body;
            if answer["available"] != true {
                return Ok(misfit(format!(
                    "is not free in the compute subnet {} (CheckIPAddressAvailability); pick a free one",
                    self.settings.compute_subnet
                )));
            }
        }
        Ok(crate::UserMade::Fits(Reservation {
            key: query.key.clone(),
            id: format!("ip {ip}"),
            name: format!("{} (yours, in {})", ip, self.settings.compute_subnet),
            ip,
        }))
    }
}

/// `a.b.c.d/len` -> (network, len).
fn parse_v4_prefix(prefix: &str) -> Option<(Ipv4Addr, u32)> {
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
fn parse_v6_prefix(prefix: &str) -> Option<(Ipv6Addr, u32)> {
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
fn derived_ipv6(network: Ipv6Addr, len: u32, infra_id: &str) -> Ipv6Addr {
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
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Usable addresses from the top down: Azure keeps the first four and the last of a subnet.
fn candidates(network: Ipv4Addr, len: u32) -> Vec<Ipv4Addr> {
    let base = u32::from(network);
    let size = 1u32 << (32 - len);
    (4..size - 1)
        .rev()
        .take(PROBES as usize)
        .map(|offset| Ipv4Addr::from(base + offset))
        .collect()
}

#[async_trait]
impl AddressProvider for AzureAddresses {
    async fn observe(&self) -> Result<Vec<Reservation>, CloudError> {
        let url = self.arm.url(&self.public_ips_path(), NETWORK_API, &[])?;
        let mut found = Vec::new();
        for resource in self.arm.list("ListPublicIPAddresses", url).await? {
            if self.is_ours(&resource)
                && let Some(r) = self.public_reservation(&resource).await?
            {
                found.push(r);
            }
        }
        let prefix = self.private_tag_prefix();
        let rg_id = format!(
            "/{}",
            rg_path(&self.settings, &self.settings.resource_group)
        );
        for (name, value) in self.rg_tags().await? {
            let Some(purpose) = name.strip_prefix(&prefix) else {
                continue;
            };
            let key = ReservationKey::parse(purpose).filter(|k| k.scope == Scope::Private);
            // The address must be of the family its name says (`-ipv6` holds an IPv6).
            let ip = value
                .as_str()
                .and_then(|s| s.parse::<IpAddr>().ok())
                .filter(|ip| key.as_ref().is_some_and(|k| k.family == IpFamily::of(ip)));
            match (key, ip) {
                (Some(key), Some(ip)) => found.push(Reservation {
                    key,
                    id: format!("{rg_id}/tags/{name}"),
                    name,
                    ip,
                }),
                _ => {
                    tracing::warn!(tag = %name, "resource-group tag looks like ours but does not parse; ignored")
                }
            }
        }
        found.sort();
        Ok(found)
    }

    async fn reserve(&self, request: &ReserveRequest) -> Result<Reservation, CloudError> {
        match request.key.scope {
            Scope::Public => self.reserve_public(request).await,
            Scope::Private => {
                let ip = match request.key.family {
                    IpFamily::Ipv4 => IpAddr::V4(self.free_private_ip().await?),
                    IpFamily::Ipv6 => IpAddr::V6(self.private_ipv6().await?),
                };
                self.patch_tag("Merge", &request.name, ip).await?;
                Ok(Reservation {
                    key: request.key.clone(),
                    id: format!(
                        "/{}/tags/{}",
                        rg_path(&self.settings, &self.settings.resource_group),
                        request.name
                    ),
                    name: request.name.clone(),
                    ip,
                })
            }
        }
    }

    /// Public IPs by name in the cluster resource group (or by id); a private IP as the user
    /// names it, checked to lie in the compute subnet and to be free there. Reads only.
    async fn find_user_made(
        &self,
        queries: &[crate::UserReservationQuery],
    ) -> Result<Vec<crate::UserMade>, CloudError> {
        let mut found = Vec::new();
        for query in queries {
            let made = match (query.key.scope, &query.lookup) {
                (Scope::Public, crate::UserLookup::Name(name)) => {
                    let path = format!("{}/{name}", self.public_ips_path());
                    self.user_public_ip(query, &path).await?
                }
                (Scope::Public, crate::UserLookup::Id(id)) => {
                    self.user_public_ip(query, id).await?
                }
                (Scope::Private, crate::UserLookup::Ip(ip)) => {
                    Some(self.user_private_ip(query, *ip).await?)
                }
                (_, lookup) => Some(crate::UserMade::Misfit {
                    resource: lookup.to_string(),
                    problem: format!(
                        "cannot be {}: Azure has a public IP resource for a public reservation and none for a private one (name the private IP itself)",
                        query.key
                    ),
                }),
            };
            found.extend(made);
        }
        Ok(found)
    }

    async fn release(&self, reservation: &Reservation) -> Result<(), CloudError> {
        let result = match reservation.key.scope {
            Scope::Public => {
                let url = self.arm.url(&reservation.id, NETWORK_API, &[])?;
                self.arm
                    .long_running("DeletePublicIPAddress", Method::DELETE, url, None)
                    .await
                    .map(|_| ())
            }
            Scope::Private => {
                self.patch_tag("Delete", &reservation.name, reservation.ip)
                    .await
            }
        };
        match result {
            Err(e) if e.kind == ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_start_at_the_top_and_skip_azures_reserved_addresses() {
        let (net, len) = parse_v4_prefix("10.0.1.0/24").unwrap();
        let c = candidates(net, len);
        assert_eq!(c[0], Ipv4Addr::new(10, 0, 1, 254));
        assert_eq!(c.len(), PROBES as usize);
        let (net, len) = parse_v4_prefix("10.0.1.0/29").unwrap();
        let c = candidates(net, len);
        assert_eq!(
            c,
            vec![
                Ipv4Addr::new(10, 0, 1, 6),
                Ipv4Addr::new(10, 0, 1, 5),
                Ipv4Addr::new(10, 0, 1, 4)
            ]
        );
    }

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
    fn ipv6_prefixes_are_normalized_and_too_narrow_ones_refused() {
        assert_eq!(
            parse_v6_prefix("fd00:10:0:2::1/64"),
            Some(("fd00:10:0:2::".parse().unwrap(), 64))
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
    }
}
