//! Public IPs (Standard SKU, static, one per family) and the private IPs recorded as tags on
//! the cluster resource group (see the module docs of `azure` for why; the IPv4 is chosen
//! among the other clusters of the vnet in `private_ip`, the IPv6 derived in `subnet`).

mod public_ip;
mod rg_tags;
mod user_made;

use super::arm::ArmClient;
use super::claims::Recorded;
use super::subnet::{derived_ipv6, parse_v6_prefix};
use super::{AzureSettings, RESERVATION_TAG, cluster_tag, rg_path};
use crate::{
    AddressProvider, CloudError, ErrorKind, IpFamily, Reservation, ReservationKey, ReserveRequest,
    Scope,
};
use async_trait::async_trait;
use reqwest::Method;
use serde_json::Value;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;

pub struct AzureAddresses {
    pub(super) arm: Arc<ArmClient>,
    pub(super) settings: AzureSettings,
    /// The bootstrap host that gets a second address (None: `--bootstrap-second-address off`).
    pub(super) bootstrap: Option<super::bootstrap_host::AzureBootstrapHost>,
}

impl AzureAddresses {
    pub fn new(arm: Arc<ArmClient>, settings: &AzureSettings) -> Self {
        Self {
            bootstrap: settings.second_address_host.map(|ip| {
                super::bootstrap_host::AzureBootstrapHost::new(arm.clone(), settings, ip)
            }),
            arm,
            settings: settings.clone(),
        }
    }

    /// The bootstrap host's second address: its key, and the name of its IP configuration.
    fn second_address(&self) -> (ReservationKey, String) {
        let key = ReservationKey {
            scope: Scope::Bootstrap,
            family: IpFamily::Ipv4,
            placement: None,
        };
        let name = format!("{}-rsvd-{}", self.settings.infra_id, key.purpose());
        (key, name)
    }

    fn public_ips_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Network/publicIPAddresses",
            rg_path(&self.settings, &self.settings.resource_group)
        )
    }

    pub(super) fn vnet_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Network/virtualNetworks/{}",
            rg_path(&self.settings, &self.settings.network_resource_group),
            self.settings.virtual_network
        )
    }

    /// The prefix of the private tag names: `<infra-id>-rsvd-`.
    pub(super) fn private_tag_prefix(&self) -> String {
        format!("{}-rsvd-", self.settings.infra_id)
    }

    fn is_ours(&self, resource: &Value) -> bool {
        resource["tags"][cluster_tag(&self.settings.infra_id)] == "owned"
            && resource["tags"][RESERVATION_TAG].is_string()
    }

    /// The private IPv6 of this cluster in the compute subnet's IPv6 prefix (see
    /// [`derived_ipv6`] for why it is derived rather than found free).
    async fn private_ipv6(&self) -> Result<Ipv6Addr, CloudError> {
        let prefix = self.compute_subnet_prefix(IpFamily::Ipv6).await?;
        let (network, len) = parse_v6_prefix(&prefix)
            .ok_or_else(|| CloudError::fatal("GetSubnet", format!("bad prefix {prefix}")))?;
        Ok(derived_ipv6(network, len, &self.settings.infra_id))
    }
}

#[async_trait]
impl AddressProvider for AzureAddresses {
    async fn observe(&self) -> Result<Vec<Reservation>, CloudError> {
        let url = self
            .arm
            .url(&self.public_ips_path(), self.settings.api.network, &[])?;
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
            let recorded = value.as_str().and_then(Recorded::parse).filter(|r| {
                key.as_ref()
                    .is_some_and(|k| k.family == IpFamily::of(&r.ip()))
            });
            let ip = match recorded {
                Some(Recorded::Held(ip)) => Some(ip),
                // A claim a crash left behind: ours only if no other cluster records its
                // address (else `reserve` picks again, overwriting it).
                Some(Recorded::Claimed(ip)) => self.unrivalled_claim(&name, ip).await?,
                None => None,
            };
            match (key, ip, recorded) {
                (Some(key), Some(ip), _) => found.push(Reservation {
                    key,
                    id: format!("{rg_id}/tags/{name}"),
                    name,
                    ip,
                }),
                (_, None, Some(Recorded::Claimed(ip))) => {
                    tracing::info!(tag = %name, %ip, "an unsettled claim of ours is contested; reserve picks again")
                }
                _ => {
                    tracing::warn!(tag = %name, "resource-group tag looks like ours but does not parse; ignored")
                }
            }
        }
        if let Some(host) = &self.bootstrap {
            let (key, name) = self.second_address();
            found.extend(host.observe(key, &name).await?);
        }
        found.sort();
        Ok(found)
    }

    async fn reserve(&self, request: &ReserveRequest) -> Result<Reservation, CloudError> {
        match request.key.scope {
            Scope::Bootstrap => self.reserve_second_address(request).await,
            Scope::Public => self.reserve_public(request).await,
            Scope::Private => {
                let ip = match request.key.family {
                    IpFamily::Ipv4 => IpAddr::V4(self.settle_private_ipv4(&request.name).await?),
                    IpFamily::Ipv6 => {
                        let ip = IpAddr::V6(self.private_ipv6().await?);
                        self.patch_tag("Merge", &request.name, &ip.to_string())
                            .await?;
                        ip
                    }
                };
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

    /// A public IP a load balancer frontend uses names it in `properties.ipConfiguration`,
    /// and its DELETE is refused (`PublicIPAddressCannotBeDeleted`, 400) until
    /// cloud-provider-azure removed the frontend. A private IP is only our resource group's
    /// tag: nothing refuses its release.
    async fn in_use_by(&self, reservation: &Reservation) -> Result<Option<String>, CloudError> {
        if reservation.key.scope != Scope::Public {
            return Ok(None);
        }
        let url = self
            .arm
            .url(&reservation.id, self.settings.api.network, &[])?;
        let Some(resource) = self.arm.get_optional("GetPublicIPAddress", url).await? else {
            return Ok(None);
        };
        Ok(resource["properties"]["ipConfiguration"]["id"]
            .as_str()
            .map(|frontend| format!("used by {frontend}")))
    }

    async fn release(&self, reservation: &Reservation) -> Result<(), CloudError> {
        let result = match reservation.key.scope {
            Scope::Bootstrap => match &self.bootstrap {
                Some(host) => host.release(reservation).await,
                None => Ok(()),
            },
            Scope::Public => {
                let url = self
                    .arm
                    .url(&reservation.id, self.settings.api.network, &[])?;
                self.arm
                    .long_running("DeletePublicIPAddress", Method::DELETE, url, None)
                    .await
                    .map(|_| ())
            }
            // Whatever our tag holds (the address, or a claim of it that `observe` found
            // unrivalled): the Delete names that exact value.
            Scope::Private => match self.rg_tags().await?.get(&reservation.name) {
                Some(Value::String(value)) => {
                    self.patch_tag("Delete", &reservation.name, value).await
                }
                _ => Ok(()),
            },
        };
        match result {
            Err(e) if e.kind == ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}
