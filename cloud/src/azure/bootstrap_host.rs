//! The bootstrap host's second address on Azure: a secondary IP configuration, named after
//! the reservation (`<infra-id>-rsvd-bootstrap-ipv4`), on the installer's bootstrap NIC
//! `<infra-id>-bootstrap-nic` in the cluster resource group, Dynamic in the subnet of the
//! NIC's primary configuration.
//!
//! Why an IP configuration: Azure holds the address for it (nothing else can take it while it
//! exists), and it goes with the NIC when the installer destroys the bootstrap host. The name
//! is the ownership mark (IP configurations carry no tags); the installer names its own
//! differently (openshift/installer `data/data/azure/bootstrap/main.tf`,
//! `bootstrap-nic-ip-v4`; CAPZ `ipConfig<n>`).
//!
//! A NIC's IP configurations are written all together (`NetworkInterfaces_CreateOrUpdate`
//! takes the whole resource), so each change is a read-modify-write under the NIC's ETag
//! (`If-Match`); another writer in between costs one more round.
//!
//! The address is Static, picked as the private load-balancer IP is (free per
//! CheckIPAddressAvailability, recorded by no cluster of the vnet: `private_ip`), in the subnet
//! of the NIC's primary configuration.

use super::arm::ArmClient;
use super::{AzureSettings, rg_path};
use crate::{CloudError, ErrorKind, Reservation, ReservationKey, ReserveRequest};
use reqwest::Method;
use serde_json::{Value, json};
use std::net::IpAddr;
use std::sync::Arc;

pub(super) const ROUNDS: usize = 3;

/// Where adding the second address starts from.
pub enum Prepared {
    Ours(Reservation),
    Add { nic: Value, subnet: String },
}
const GET: &str = "GetNetworkInterface";
const PUT: &str = "CreateOrUpdateNetworkInterface";

pub struct AzureBootstrapHost {
    arm: Arc<ArmClient>,
    api: &'static str,
    path: String,
    /// The bootstrap IP: the NIC's primary configuration must hold it.
    ip: IpAddr,
}

impl AzureBootstrapHost {
    pub fn new(arm: Arc<ArmClient>, settings: &AzureSettings, ip: IpAddr) -> Self {
        Self {
            arm,
            api: settings.api.network,
            path: format!(
                "{}/providers/Microsoft.Network/networkInterfaces/{}-bootstrap-nic",
                rg_path(settings, &settings.resource_group),
                settings.infra_id
            ),
            ip,
        }
    }

    fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    async fn get(&self) -> Result<Option<Value>, CloudError> {
        let url = self.arm.url(&self.path, self.api, &[])?;
        self.arm.get_optional(GET, url).await
    }

    /// The IP configuration named `name` of `nic`, with its address.
    fn configuration(nic: &Value, name: &str) -> Option<(String, IpAddr)> {
        configurations(nic)
            .iter()
            .find(|c| c["name"].as_str() == Some(name))
            .and_then(|c| {
                let ip = c["properties"]["privateIPAddress"].as_str()?.parse().ok()?;
                Some((c["id"].as_str().unwrap_or_default().to_string(), ip))
            })
    }

    fn reservation(key: ReservationKey, name: &str, (id, ip): (String, IpAddr)) -> Reservation {
        Reservation {
            key,
            id,
            name: name.to_string(),
            ip,
        }
    }

    /// Ours, when the NIC exists and has it.
    pub async fn observe(
        &self,
        key: ReservationKey,
        name: &str,
    ) -> Result<Option<Reservation>, CloudError> {
        Ok(self
            .get()
            .await?
            .and_then(|nic| Self::configuration(&nic, name))
            .map(|found| Self::reservation(key, name, found)))
    }

    /// What adding ours starts from: ours already (a retry, or a resume after a crash between
    /// the call and the journal), or the NIC as read and the subnet of its primary
    /// configuration, where the new one goes.
    pub async fn prepare(&self, request: &ReserveRequest) -> Result<Prepared, CloudError> {
        let nic = self.get().await?.ok_or_else(|| {
            CloudError::fatal(
                PUT,
                format!(
                    "no NIC {} in the cluster resource group: the bootstrap host's second address goes on the installer's bootstrap NIC (for another bootstrap host, --bootstrap-second-address off)",
                    self.name()
                ),
            )
        })?;
        if let Some(found) = Self::configuration(&nic, &request.name) {
            return Ok(Prepared::Ours(Self::reservation(
                request.key.clone(),
                &request.name,
                found,
            )));
        }
        let primary = configurations(&nic)
            .iter()
            .find(|c| c["properties"]["primary"] == true)
            .cloned()
            .ok_or_else(|| {
                CloudError::fatal(
                    GET,
                    format!("{} has no primary IP configuration", self.name()),
                )
            })?;
        let held = primary["properties"]["privateIPAddress"].as_str();
        if held.and_then(|s| s.parse::<IpAddr>().ok()) != Some(self.ip) {
            return Err(CloudError::fatal(
                PUT,
                format!(
                    "{} has {} in its primary IP configuration, not the bootstrap IP {}: it is not this bootstrap host",
                    self.name(),
                    held.unwrap_or("no address"),
                    self.ip
                ),
            ));
        }
        let subnet = primary["properties"]["subnet"]["id"]
            .as_str()
            .ok_or_else(|| {
                CloudError::fatal(
                    GET,
                    format!("{}'s primary IP configuration has no subnet", self.name()),
                )
            })?
            .to_string();
        Ok(Prepared::Add { nic, subnet })
    }

    /// Adds ours with `ip` (Static: a Dynamic one could take an address another cluster's
    /// agent recorded for its load balancer, which Azure does not know of) under the ETag of
    /// `nic` as `prepare` read it; Conflict when the NIC changed since.
    pub async fn add(
        &self,
        request: &ReserveRequest,
        nic: &Value,
        subnet: &str,
        ip: IpAddr,
    ) -> Result<Reservation, CloudError> {
        let added = json!({
            "name": request.name,
            "properties": {
                "primary": false,
                "privateIPAllocationMethod": "Static",
                "privateIPAddress": ip.to_string(),
                "privateIPAddressVersion": "IPv4",
                "subnet": {"id": subnet},
            },
        });
        let mut all = configurations(nic).to_vec();
        all.push(added);
        let after = self.put(nic, all).await?;
        Self::configuration(&after, &request.name)
            .map(|found| Self::reservation(request.key.clone(), &request.name, found))
            .ok_or_else(|| {
                CloudError::new(
                    ErrorKind::Transient,
                    PUT,
                    format!(
                        "{} has no IP configuration {} yet",
                        self.name(),
                        request.name
                    ),
                )
            })
    }

    /// Takes our IP configuration off the NIC; gone already (or the NIC gone) is done.
    pub async fn release(&self, reservation: &Reservation) -> Result<(), CloudError> {
        for _ in 0..ROUNDS {
            let Some(nic) = self.get().await? else {
                return Ok(());
            };
            let rest: Vec<Value> = configurations(&nic)
                .iter()
                .filter(|c| c["name"].as_str() != Some(reservation.name.as_str()))
                .cloned()
                .collect();
            if rest.len() == configurations(&nic).len() {
                return Ok(());
            }
            match self.put(&nic, rest).await {
                Err(e) if e.kind == ErrorKind::Conflict => continue,
                Err(e) if e.kind == ErrorKind::NotFound => return Ok(()),
                other => return other.map(|_| ()),
            }
        }
        Err(CloudError::new(
            ErrorKind::Transient,
            PUT,
            format!("{} kept changing under us", self.name()),
        ))
    }

    /// The NIC as read, with `configurations`, written under its ETag and waited for.
    async fn put(&self, nic: &Value, configurations: Vec<Value>) -> Result<Value, CloudError> {
        let mut body = nic.clone();
        body["properties"]["ipConfigurations"] = Value::Array(configurations);
        let etag = nic["etag"].as_str().unwrap_or("*").to_string();
        let url = self.arm.url(&self.path, self.api, &[])?;
        self.arm
            .long_running_with(PUT, Method::PUT, url, &[("If-Match", &etag)], Some(&body))
            .await?
            .ok_or_else(|| CloudError::fatal(PUT, "no resource after the PUT"))
    }
}

fn configurations(nic: &Value) -> &[Value] {
    nic["properties"]["ipConfigurations"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}
