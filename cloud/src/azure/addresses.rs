//! Public IPs (Standard SKU, static, one per family) and the private IPs recorded as tags on
//! the cluster resource group (see the module docs of `azure` for why; the IPv4 is chosen
//! among the other clusters of the vnet in `private_ip`, the IPv6 derived in `subnet`).

use super::arm::ArmClient;
use super::claims::Recorded;
use super::subnet::{derived_ipv6, parse_v4_prefix, parse_v6_prefix};
use super::{AzureSettings, RESERVATION_TAG, cluster_tag, rg_path};
use crate::poll::Poll;
use crate::{
    AddressProvider, CloudError, ErrorKind, IpFamily, Reservation, ReservationKey, ReserveRequest,
    Scope,
};
use async_trait::async_trait;
use reqwest::Method;
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;
use std::time::Duration;

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

    fn tags_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Resources/tags/default",
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

    /// A public IP of ours as a Reservation; waits while it is still being provisioned.
    async fn public_reservation(
        &self,
        resource: &Value,
    ) -> Result<Option<Reservation>, CloudError> {
        let mut resource = resource.clone();
        let mut poll = Poll::change("GetPublicIPAddress", Duration::from_millis(250));
        loop {
            match resource["properties"]["provisioningState"].as_str() {
                Some("Updating" | "Creating") => {
                    poll.wait(None).await?;
                    let Some(id) = resource["id"].as_str() else {
                        return Ok(None);
                    };
                    let url = self.arm.url(id, self.settings.api.network, &[])?;
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
        let url = self.arm.url(&path, self.settings.api.network, &[])?;
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

    /// The cluster resource group itself (`ResourceGroups_Get` / `_Update`).
    fn resource_group_url(&self) -> Result<url::Url, CloudError> {
        self.arm.url(
            &rg_path(&self.settings, &self.settings.resource_group),
            self.settings.api.resources,
            &[],
        )
    }

    /// The cluster resource group's tags: the Tags API at its scope, or (Azure Stack Hub, which
    /// has no Tags API) the group itself (`ResourceGroups_Get`).
    pub(super) async fn rg_tags(&self) -> Result<serde_json::Map<String, Value>, CloudError> {
        let body = match self.settings.api.tags {
            Some(api) => {
                let url = self.arm.url(&self.tags_path(), api, &[])?;
                self.arm
                    .get_optional("GetTagsAtScope", url)
                    .await?
                    .map(|b| b["properties"]["tags"].clone())
            }
            None => {
                let url = self.resource_group_url()?;
                self.arm
                    .get_optional("GetResourceGroup", url)
                    .await?
                    .map(|b| b["tags"].clone())
            }
        };
        Ok(body
            .and_then(|tags| tags.as_object().cloned())
            .unwrap_or_default())
    }

    /// One tag of the cluster resource group: `Merge` (sets it, never touching other tags) or
    /// `Delete` (removes it only while it still has exactly this value).
    ///
    /// With the Tags API that is one `PATCH .../tags/default` of that tag alone. Azure Stack
    /// Hub has no Tags API (Resources 2018-05-01): there the group's tags are read and the
    /// whole map is written back with `ResourceGroups_Update` (`PATCH` of the group, whose
    /// `tags` replaces the group's). Resource groups carry no ETag, so a tag another writer
    /// sets between the read and the write is lost: on Stack the private-IP record is not safe
    /// against a concurrent writer of the same group's tags.
    pub(super) async fn patch_tag(
        &self,
        operation: &str,
        name: &str,
        value: &str,
    ) -> Result<(), CloudError> {
        let Some(api) = self.settings.api.tags else {
            return self.rewrite_rg_tags(operation, name, value).await;
        };
        let url = self.arm.url(&self.tags_path(), api, &[])?;
        let body = json!({
            "operation": operation,
            "properties": {"tags": {name: value}},
        });
        self.arm
            .long_running("UpdateTagsAtScope", Method::PATCH, url, Some(&body))
            .await
            .map(|_| ())
    }

    /// `patch_tag` without the Tags API: read the group's tags, change the one, write them all.
    async fn rewrite_rg_tags(
        &self,
        operation: &str,
        name: &str,
        value: &str,
    ) -> Result<(), CloudError> {
        const OP: &str = "UpdateResourceGroup";
        let mut tags = self.rg_tags().await?;
        match operation {
            "Merge" if tags.get(name).and_then(Value::as_str) == Some(value) => return Ok(()),
            "Merge" => {
                tags.insert(name.to_string(), json!(value));
            }
            "Delete" if tags.get(name).and_then(Value::as_str) == Some(value) => {
                tags.remove(name);
            }
            "Delete" => return Ok(()),
            other => {
                return Err(CloudError::fatal(
                    OP,
                    format!("unknown tag operation {other}"),
                ));
            }
        }
        let url = self.resource_group_url()?;
        self.arm
            .send(OP, Method::PATCH, url, &[], Some(&json!({"tags": tags})))
            .await
            .map(|_| ())
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
        let url = self.arm.url(path, self.settings.api.network, &[])?;
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
                self.settings.api.network,
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
            // Another cluster's choice is invisible to CheckIPAddressAvailability until its
            // load balancer holds it.
            if let Some(other) = self
                .private_records()
                .await?
                .into_iter()
                .find(|r| r.recorded.ip() == ip && !self.is_own(r))
            {
                return Ok(misfit(format!(
                    "is recorded by another cluster (tag {} on resource group {}); pick another",
                    other.tag, other.rg
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
