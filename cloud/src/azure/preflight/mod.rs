//! Azure preflight, reads only (ARM has no dry run):
//!
//! - `credentials`: a token is obtained and the subscription can be read (`GET
//!   /subscriptions/{id}`, 2022-12-01; 2018-05-01 on Azure Stack Hub): its display name and state, and who asks (client id and
//!   tenant; never the secret).
//! - `permissions`: the caller's own effective actions per resource group (see [`permissions`]).
//! - `quota-public-ips`: the region's network usages (`GET /subscriptions/{s}/providers/
//!   Microsoft.Network/locations/{location}/usages`): `PublicIPAddresses` (all public IPs) and
//!   `StandardSkuPublicIpAddresses` (the Standard SKU the agent creates), `limit -
//!   currentValue`, must cover the public IPs still to create.
//! - `subnets`: the control-plane and compute subnets exist in the vnet of the network resource
//!   group, and the compute subnet (where the internal load balancer takes its address) still
//!   has a free one: `CheckIPAddressAvailability` of its top address, whose answer lists up to
//!   five free addresses of the subnet when that one is taken (none: the subnet is full).
//! - `private-zone-vnet`: the private zone has a `virtualNetworkLinks` entry for the cluster's
//!   vnet (else the cluster cannot resolve `api-int`).

mod permissions;
mod quota;

use super::arm::ArmClient;
use super::{AzureSettings, rg_path};
use crate::permissions::AzureWrites;
use crate::preflight::{Check, Needs, Preflight};
use crate::{CloudError, ErrorKind, Zone};
use async_trait::async_trait;
use quota::quota_verdict;
use reqwest::Method;
use serde_json::Value;
use std::net::Ipv4Addr;
use std::sync::Arc;

/// What the agent will create and write, from the install-config (beyond [`AzureSettings`]).
#[derive(Debug, Clone, Default)]
pub struct AzureTargets {
    pub control_plane_subnet: String,
    pub writes: AzureWrites,
}

pub struct AzurePreflight {
    arm: Arc<ArmClient>,
    settings: AzureSettings,
    targets: AzureTargets,
}

impl AzurePreflight {
    pub fn new(arm: Arc<ArmClient>, settings: &AzureSettings, targets: AzureTargets) -> Self {
        Self {
            arm,
            settings: settings.clone(),
            targets,
        }
    }

    async fn get(&self, operation: &str, path: &str, api: &str) -> Result<Value, CloudError> {
        let url = self.arm.url(path, api, &[])?;
        Ok(self
            .arm
            .send(operation, Method::GET, url, &[], None)
            .await?
            .body)
    }

    fn identity(&self) -> String {
        format!(
            "client {} of tenant {}",
            self.settings.credential.client_id, self.settings.credential.tenant_id
        )
    }

    async fn credentials(&self) -> Check {
        const NAME: &str = "credentials";
        let id = &self.settings.subscription_id;
        let subscription = match self
            .get(
                "GetSubscription",
                &format!("subscriptions/{id}"),
                self.settings.api.subscriptions,
            )
            .await
        {
            Ok(s) => s,
            Err(e) => {
                return Check::from_error(
                    NAME,
                    &e,
                    format!(
                        "give the agent a working service principal (the installer's azure-credentials secret, or AZURE_CLIENT_ID / AZURE_CLIENT_SECRET / AZURE_TENANT_ID) with a role in subscription {id}"
                    ),
                );
            }
        };
        let state = subscription["state"].as_str().unwrap_or("?");
        let reason = format!(
            "subscription {} ({id}), state {state}, as {}",
            subscription["displayName"].as_str().unwrap_or("?"),
            self.identity()
        );
        match state {
            "Enabled" => Check::pass(NAME, reason),
            // Disabled and Deleted subscriptions are read-only: every write is refused.
            "Disabled" | "Deleted" => Check::fail(
                NAME,
                format!("{reason}: ARM refuses writes"),
                "re-enable the subscription (Azure portal > Subscriptions) or use another one",
            ),
            _ => Check::warn(
                NAME,
                reason,
                Some("check the subscription's billing state".into()),
            ),
        }
    }

    async fn quota(&self, needs: &Needs) -> Check {
        const NAME: &str = "quota-public-ips";
        if needs.public_addresses == 0 {
            return Check::pass(NAME, "no public IP to create");
        }
        let path = format!(
            "subscriptions/{}/providers/Microsoft.Network/locations/{}/usages",
            self.settings.subscription_id, self.settings.region
        );
        let usages = match self.arm.url(&path, self.settings.api.network, &[]) {
            Ok(url) => self.arm.list("ListUsages", url).await,
            Err(e) => Err(e),
        };
        match usages {
            Ok(usages) => quota_verdict(&self.settings.region, &usages, needs.public_addresses),
            Err(e) => Check::from_error(
                NAME,
                &e,
                "allow Microsoft.Network/locations/usages/read on the subscription",
            ),
        }
    }

    fn vnet_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Network/virtualNetworks/{}",
            rg_path(&self.settings, &self.settings.network_resource_group),
            self.settings.virtual_network
        )
    }

    async fn subnets(&self, needs: &Needs) -> Check {
        const NAME: &str = "subnets";
        let (vnet, rg) = (
            &self.settings.virtual_network,
            &self.settings.network_resource_group,
        );
        let fix = format!(
            "correct platform.azure.networkResourceGroupName / virtualNetwork / controlPlaneSubnet / computeSubnet: both subnets must exist in vnet {vnet} of resource group {rg}"
        );
        let compute = &self.settings.compute_subnet;
        let mut names = vec![&self.targets.control_plane_subnet, compute];
        names.dedup();
        let mut found = Vec::new();
        let mut compute_prefix = None;
        for name in names {
            let path = format!("{}/subnets/{name}", self.vnet_path());
            let subnet = match self
                .get("GetSubnet", &path, self.settings.api.network)
                .await
            {
                Ok(s) => s,
                Err(e) if e.kind == ErrorKind::NotFound => {
                    return Check::fail(
                        NAME,
                        format!(
                            "subnet {name} not found in vnet {vnet} of resource group {rg}: {e}"
                        ),
                        fix,
                    );
                }
                Err(e) => return Check::from_error(NAME, &e, fix),
            };
            let prefixes = super::subnet::prefixes(&subnet);
            if name == compute {
                compute_prefix = prefixes
                    .iter()
                    .find_map(|p| super::subnet::parse_v4_prefix(p));
            }
            found.push(format!("{name} {}", prefixes.join(" ")));
        }
        let found = format!("in vnet {vnet} of {rg}: {}", found.join(", "));
        if needs.private_addresses.values().sum::<u32>() == 0 {
            return Check::pass(NAME, format!("{found} (no private IP to choose)"));
        }
        let Some((network, len)) = compute_prefix else {
            return Check::fail(
                NAME,
                format!("{found}: the compute subnet {compute} has no IPv4 prefix"),
                "give the compute subnet an IPv4 prefix of at least /29",
            );
        };
        // The top usable address (Azure keeps the last one): its answer names free addresses
        // of the same subnet when it is taken.
        let top = Ipv4Addr::from(u32::from(network) + (1u32 << (32 - len)) - 2);
        let url = match self.arm.url(
            &format!("{}/CheckIPAddressAvailability", self.vnet_path()),
            self.settings.api.network,
            &[("ipAddress", &top.to_string())],
        ) {
            Ok(url) => url,
            Err(e) => return Check::from_error(NAME, &e, fix),
        };
        let answer = match self
            .arm
            .send("CheckIPAddressAvailability", Method::GET, url, &[], None)
            .await
        {
            Ok(r) => r.body,
            Err(e) => {
                return Check::from_error(
                    NAME,
                    &e,
                    format!(
                        "allow Microsoft.Network/virtualNetworks/checkIpAddressAvailability/read on {rg}"
                    ),
                );
            }
        };
        let free = if answer["available"] == true {
            Some(top.to_string())
        } else {
            answer["availableIPAddresses"]
                .as_array()
                .and_then(|list| list.first())
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        match free {
            Some(ip) => Check::pass(
                NAME,
                format!("{found}; {compute} has free addresses ({ip})"),
            ),
            None => Check::fail(
                NAME,
                format!(
                    "{found}; the compute subnet {compute} has no free address (CheckIPAddressAvailability of {top} names none): the internal load balancer would get no IP"
                ),
                format!("free addresses in {compute} or widen it"),
            ),
        }
    }

    async fn private_zone_vnet(&self, zone: Option<&Zone>) -> Check {
        const NAME: &str = "private-zone-vnet";
        let Some(zone) = zone else {
            return Check::not_checked(
                NAME,
                "no private zone to write (DNS is the user's, or every record goes into the base-domain zone)",
            );
        };
        let vnet_id = format!("/{}", self.vnet_path());
        let links = match self.arm.url(
            &format!("{}/virtualNetworkLinks", zone.id),
            self.settings.api.private_dns,
            &[],
        ) {
            Ok(url) => self.arm.list("ListVirtualNetworkLinks", url).await,
            Err(e) => Err(e),
        };
        let links = match links {
            Ok(links) => links,
            Err(e) => {
                return Check::from_error(
                    NAME,
                    &e,
                    format!(
                        "allow Microsoft.Network/privateDnsZones/virtualNetworkLinks/read on {}",
                        self.settings.resource_group
                    ),
                );
            }
        };
        let target = |link: &Value| {
            link["properties"]["virtualNetwork"]["id"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        let domain = &zone.reference.domain;
        let vnet = &self.settings.virtual_network;
        match links
            .iter()
            .find(|l| target(l).eq_ignore_ascii_case(&vnet_id))
        {
            Some(link) => {
                let name = link["name"].as_str().unwrap_or("?");
                match link["properties"]["virtualNetworkLinkState"].as_str() {
                    Some("InProgress") => Check::warn(
                        NAME,
                        format!("{domain} is being linked to vnet {vnet} (link {name} InProgress)"),
                        Some("wait for the link to complete".into()),
                    ),
                    _ => Check::pass(
                        NAME,
                        format!("{domain} is linked to vnet {vnet} (link {name})"),
                    ),
                }
            }
            None => Check::fail(
                NAME,
                format!(
                    "{domain} is linked to [{}], not to the cluster's vnet {vnet}: the cluster would not resolve api-int",
                    links.iter().map(target).collect::<Vec<_>>().join(", ")
                ),
                format!(
                    "az network private-dns link vnet create -g {} -z {domain} -n {}-network-link -v {vnet_id} -e false",
                    self.settings.resource_group, self.settings.infra_id
                ),
            ),
        }
    }
}

#[async_trait]
impl Preflight for AzurePreflight {
    async fn checks(&self, needs: &Needs) -> Vec<Check> {
        vec![
            self.credentials().await,
            permissions::check(&self.arm, &self.settings, &self.targets).await,
            self.quota(needs).await,
            self.subnets(needs).await,
            self.private_zone_vnet(needs.private_zone()).await,
        ]
    }
}
