//! The bootstrap host's second address on GCP: an alias IP (one address, `/32`, from the
//! primary range of its subnetwork) on nic0 of the installer's bootstrap VM
//! `<infra-id>-bootstrap`, through `instances.updateNetworkInterface`.
//!
//! Why an alias and not a reserved address: the alias lives and dies with the VM, so when the
//! installer destroys the bootstrap host nothing of ours is left behind, whatever happened to
//! the agent. GCE picks a free address when the range is the netmask `/32` (compute v1
//! `AliasIpRange.ipCidrRange`: "a single IP address, a netmask (such as /24) or a
//! CIDR-formatted string").
//!
//! Ownership: an alias range carries no label. The installer gives the bootstrap VM none
//! (openshift/installer `pkg/asset/machines/gcp`, CAPG `GCPMachine` has no alias ranges), so a
//! single-address alias on nic0 of `<infra-id>-bootstrap` is taken as ours; anything else there
//! (a range, a secondary range's alias) is left alone.
//!
//! The VM's zone is not in the install assets: each zone of the region is asked once, and the
//! answer kept for the process.
//!
//! Taking the last alias off is `"aliasIpRanges": []` said outright, over plain REST
//! ([`RestCompute`]): the client leaves an empty list out of the body, and the method "follows
//! PATCH semantics" (a field left out keeps its value), so through the client the alias would
//! stay while the update reports success.

use super::{GcpSettings, classify, request_id};
use crate::{CloudError, ErrorKind, Reservation, ReservationKey, ReserveRequest};
use google_cloud_compute_v1::client::{Instances, Regions, ZoneOperations};
use google_cloud_compute_v1::model::{AliasIpRange, Instance, NetworkInterface, Operation};
use std::net::IpAddr;
use tokio::sync::OnceCell;

/// The one interface the installer gives its VMs.
const NIC: &str = "nic0";

/// Read-modify-write of the interface is guarded by its fingerprint; another writer in
/// between costs one more round.
const FINGERPRINT_ROUNDS: usize = 3;

const UPDATE: &str = "instances.updateNetworkInterface";

/// The compute endpoint the clients use when no override is set.
const DEFAULT_COMPUTE_ENDPOINT: &str = "https://compute.googleapis.com";

pub struct GceBootstrapHost {
    instances: Instances,
    operations: ZoneOperations,
    regions: Regions,
    rest: RestCompute,
    project: String,
    region: String,
    name: String,
    /// The bootstrap IP: nic0 of the VM must hold it, or the VM is not this host.
    ip: IpAddr,
    zone: OnceCell<Option<String>>,
}

/// The VM as found: its zone and nic0.
struct Found {
    zone: String,
    nic: NetworkInterface,
}

impl GceBootstrapHost {
    pub async fn new(settings: &GcpSettings, ip: IpAddr) -> Result<Self, CloudError> {
        let endpoint = settings.compute_endpoint.as_deref();
        Ok(Self {
            instances: build_client!(Instances, settings, endpoint, "compute"),
            operations: build_client!(ZoneOperations, settings, endpoint, "compute"),
            regions: build_client!(Regions, settings, endpoint, "compute"),
            rest: RestCompute::new(settings)?,
            project: settings.project.clone(),
            region: settings.region.clone(),
            name: format!("{}-bootstrap", settings.infra_id),
            ip,
            zone: OnceCell::new(),
        })
    }

    async fn get(&self, zone: &str) -> Result<Option<Instance>, CloudError> {
        match self
            .instances
            .get()
            .set_project(&self.project)
            .set_zone(zone)
            .set_instance(&self.name)
            .send()
            .await
        {
            Ok(instance) => Ok(Some(instance)),
            Err(e) => match classify("instances.get", e) {
                e if e.kind == ErrorKind::NotFound => Ok(None),
                e => Err(e),
            },
        }
    }

    /// The zone holding the VM, asked once per zone of the region (None: no such VM).
    async fn zone(&self) -> Result<Option<String>, CloudError> {
        self.zone
            .get_or_try_init(|| async {
                let region = self
                    .regions
                    .get()
                    .set_project(&self.project)
                    .set_region(&self.region)
                    .send()
                    .await
                    .map_err(|e| classify("regions.get", e))?;
                for url in &region.zones {
                    let zone = url.rsplit('/').next().unwrap_or(url);
                    if self.get(zone).await?.is_some() {
                        return Ok(Some(zone.to_string()));
                    }
                }
                Ok(None)
            })
            .await
            .cloned()
    }

    /// The VM and its nic0 now; None when it does not exist (destroyed, or never made).
    async fn find(&self) -> Result<Option<Found>, CloudError> {
        let Some(zone) = self.zone().await? else {
            return Ok(None);
        };
        let Some(instance) = self.get(&zone).await? else {
            return Ok(None);
        };
        let nic = instance
            .network_interfaces
            .into_iter()
            .find(|n| n.name.as_deref() == Some(NIC))
            .ok_or_else(|| {
                CloudError::fatal("instances.get", format!("{} has no {NIC}", self.name))
            })?;
        Ok(Some(Found { zone, nic }))
    }

    /// The alias of ours on nic0, if any.
    fn ours(nic: &NetworkInterface) -> Option<IpAddr> {
        nic.alias_ip_ranges
            .iter()
            .filter(|r| {
                r.subnetwork_range_name
                    .as_deref()
                    .unwrap_or_default()
                    .is_empty()
            })
            .find_map(|r| single_address(r.ip_cidr_range.as_deref()?))
    }

    fn reservation(&self, key: ReservationKey, zone: &str, ip: IpAddr) -> Reservation {
        Reservation {
            key,
            id: format!(
                "projects/{}/zones/{zone}/instances/{}/{NIC}/{ip}",
                self.project, self.name
            ),
            name: self.name.clone(),
            ip,
        }
    }

    /// The second address as a reservation, when the VM exists and has one.
    pub async fn observe(&self, key: ReservationKey) -> Result<Option<Reservation>, CloudError> {
        Ok(self.find().await?.and_then(|found| {
            Self::ours(&found.nic).map(|ip| self.reservation(key, &found.zone, ip))
        }))
    }

    /// Gives nic0 an alias GCE picks, unless it has ours already (a retry, or a resume after a
    /// crash between the call and the journal).
    pub async fn reserve(&self, request: &ReserveRequest) -> Result<Reservation, CloudError> {
        const WHAT: &str = UPDATE;
        for _ in 0..FINGERPRINT_ROUNDS {
            let found = self.find().await?.ok_or_else(|| {
                CloudError::fatal(
                    WHAT,
                    format!(
                        "no VM {} in the zones of {}: the bootstrap host's second address goes on the installer's bootstrap VM (for another bootstrap host, --bootstrap-second-address off)",
                        self.name, self.region
                    ),
                )
            })?;
            let primary = found.nic.network_ip.as_deref().and_then(|s| s.parse().ok());
            if primary != Some(self.ip) {
                return Err(CloudError::fatal(
                    WHAT,
                    format!(
                        "{} has {} on {NIC}, not the bootstrap IP {}: it is not this bootstrap host",
                        self.name,
                        found.nic.network_ip.as_deref().unwrap_or("no address"),
                        self.ip
                    ),
                ));
            }
            if let Some(ip) = Self::ours(&found.nic) {
                return Ok(self.reservation(request.key.clone(), &found.zone, ip));
            }
            let mut ranges = found.nic.alias_ip_ranges.clone();
            ranges.push(AliasIpRange::new().set_ip_cidr_range("/32"));
            match self
                .update(&found, ranges, Some(request_id(&request.token)))
                .await
            {
                Err(e) if e.kind == ErrorKind::Conflict => continue,
                other => other?,
            }
        }
        let found = self.find().await?;
        match found.as_ref().and_then(|f| Some((f, Self::ours(&f.nic)?))) {
            Some((f, ip)) => Ok(self.reservation(request.key.clone(), &f.zone, ip)),
            None => Err(CloudError::new(
                ErrorKind::Transient,
                WHAT,
                format!("{} has no alias of ours yet", self.name),
            )),
        }
    }

    /// Takes our alias off nic0; gone already (or the VM gone) is done.
    pub async fn release(&self, reservation: &Reservation) -> Result<(), CloudError> {
        for _ in 0..FINGERPRINT_ROUNDS {
            let Some(found) = self.find().await? else {
                return Ok(());
            };
            let ranges: Vec<AliasIpRange> = found
                .nic
                .alias_ip_ranges
                .iter()
                .filter(|r| {
                    r.ip_cidr_range.as_deref().and_then(single_address) != Some(reservation.ip)
                })
                .cloned()
                .collect();
            if ranges.len() == found.nic.alias_ip_ranges.len() {
                return Ok(());
            }
            // One id per interface state: a retry after a lost answer (in this process or the
            // next, which reads the same fingerprint while the update runs) gets the first
            // operation back instead of a refusal to update a NIC that is being updated.
            let id = request_id(&format!(
                "release {} {:?}",
                reservation.id, found.nic.fingerprint
            ));
            let done = if ranges.is_empty() {
                let sent = self
                    .rest
                    .clear_aliases(&self.project, &found.zone, &self.name, &found.nic, &id)
                    .await;
                self.until_done(UPDATE, &found.zone, sent).await
            } else {
                self.update(&found, ranges, Some(id)).await
            };
            match done {
                Err(e) if e.kind == ErrorKind::Conflict => continue,
                Err(e) if e.kind == ErrorKind::NotFound => return Ok(()),
                other => return other,
            }
        }
        Err(CloudError::new(
            ErrorKind::Transient,
            "instances.updateNetworkInterface",
            format!("{}'s {NIC} kept changing under us", self.name),
        ))
    }

    /// One fingerprinted update of nic0's alias ranges, waited for.
    async fn update(
        &self,
        found: &Found,
        ranges: Vec<AliasIpRange>,
        request_id: Option<String>,
    ) -> Result<(), CloudError> {
        const WHAT: &str = UPDATE;
        let mut body = NetworkInterface::new().set_alias_ip_ranges(ranges);
        body.fingerprint = found.nic.fingerprint.clone();
        let sent = self
            .instances
            .update_network_interface()
            .set_project(&self.project)
            .set_zone(&found.zone)
            .set_instance(&self.name)
            .set_network_interface(NIC)
            .set_or_clear_request_id(request_id)
            .set_body(body)
            .send()
            .await
            .map_err(|e| classify(WHAT, e));
        self.until_done(WHAT, &found.zone, sent).await
    }

    /// Waits for a zonal operation (bounded: `poll::OPERATION_BUDGET`).
    async fn until_done(
        &self,
        what: &str,
        zone: &str,
        sent: Result<Operation, CloudError>,
    ) -> Result<(), CloudError> {
        super::until_done(what, sent?, |name| async move {
            self.operations
                .get()
                .set_project(&self.project)
                .set_zone(zone)
                .set_operation(name)
                .send()
                .await
                .map_err(|e| classify("zoneOperations.get", e))
        })
        .await
    }
}

/// `instances.updateNetworkInterface` with `"aliasIpRanges": []` over plain REST
/// ([`super::rest`]): the one update the client cannot send (see the module doc; gcloud says
/// the empty list outright with `IncludeFields(['aliasIpRanges'])`, terraform-provider-google
/// with `ForceSendFields`). Same permission (`compute.instances.updateNetworkInterface`); the
/// answer is the zonal Operation the client would return.
struct RestCompute {
    rest: super::rest::GoogleRest,
}

impl RestCompute {
    fn new(settings: &GcpSettings) -> Result<Self, CloudError> {
        Ok(Self {
            rest: super::rest::GoogleRest::new(
                settings,
                settings.compute_endpoint.as_deref(),
                DEFAULT_COMPUTE_ENDPOINT,
                UPDATE,
                rest_error,
            )?,
        })
    }

    /// Leaves `nic` (as read: its fingerprint) of `instance` without alias IP ranges, under
    /// one `request_id`.
    async fn clear_aliases(
        &self,
        project: &str,
        zone: &str,
        instance: &str,
        nic: &NetworkInterface,
        request_id: &str,
    ) -> Result<Operation, CloudError> {
        let mut fingerprint = NetworkInterface::new();
        fingerprint.fingerprint = nic.fingerprint.clone();
        let mut body = serde_json::to_value(&fingerprint)
            .map_err(|e| CloudError::fatal(UPDATE, format!("cannot write the body: {e}")))?;
        body["aliasIpRanges"] = serde_json::json!([]);
        let path = format!(
            "/compute/v1/projects/{project}/zones/{zone}/instances/{instance}/updateNetworkInterface"
        );
        let query = [("networkInterface", NIC), ("requestId", request_id)];
        let answer = self
            .rest
            .call(reqwest::Method::PATCH, &path, &query, &body)
            .await?;
        serde_json::from_value(answer)
            .map_err(|e| CloudError::fatal(UPDATE, format!("the answer is not an Operation: {e}")))
    }
}

/// An error answer of compute over REST, classified as [`classify`] classifies the clients'.
fn rest_error(status: u16, body: &serde_json::Value) -> CloudError {
    let kind = match status {
        _ if super::is_throttling(status, body) => ErrorKind::Transient,
        500..=599 => ErrorKind::Transient,
        404 => ErrorKind::NotFound,
        409 | 412 => ErrorKind::Conflict,
        _ => ErrorKind::Fatal,
    };
    let message = body["error"]["message"].as_str().unwrap_or_default();
    let text = match body["error"]["errors"][0]["reason"].as_str() {
        Some(reason) => format!("{reason}: {message}"),
        None => format!("HTTP {status}: {message}"),
    };
    CloudError::new(
        kind,
        UPDATE,
        super::with_permissions(UPDATE, Some(status), text),
    )
}

/// The address of a one-address range (`10.0.1.11`, `10.0.1.11/32`); None for a wider range.
fn single_address(range: &str) -> Option<IpAddr> {
    let (ip, len) = match range.split_once('/') {
        Some((ip, len)) => (ip, Some(len)),
        None => (range, None),
    };
    let ip: IpAddr = ip.parse().ok()?;
    let full = match ip {
        IpAddr::V4(_) => "32",
        IpAddr::V6(_) => "128",
    };
    (len.is_none() || len == Some(full)).then_some(ip)
}

#[cfg(test)]
mod tests {
    use super::single_address;

    #[test]
    fn only_a_single_address_is_ours() {
        assert_eq!(
            single_address("10.0.1.11"),
            Some("10.0.1.11".parse().unwrap())
        );
        assert_eq!(
            single_address("10.0.1.11/32"),
            Some("10.0.1.11".parse().unwrap())
        );
        assert_eq!(single_address("10.0.1.8/29"), None);
        assert_eq!(single_address("/32"), None);
        assert_eq!(single_address("x"), None);
    }
}
