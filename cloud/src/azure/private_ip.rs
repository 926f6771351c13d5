//! The private IPv4, chosen among the other clusters of the vnet.
//!
//! Several clusters may share one existing vnet, each with its own resource group, and
//! CheckIPAddressAvailability knows an address only once a NIC or a load balancer holds it: two
//! agents asking at once both hear that the same address is free. So each agent makes its
//! choice visible to the others, and settles it, before anything uses it:
//!
//! 1. Read every cluster's record: `ResourceGroups_List` (`GET /subscriptions/{sub}/resourcegroups`,
//!    paged by `nextLink`, 1000 groups a page: one request for a subscription's at most 980)
//!    returns each group's `tags`. A tag named `<infra-id>-rsvd-private-ipv4`
//!    is a record; its value is the address (held) or `claim:<address>` (being settled). Both
//!    count as taken.
//! 2. Pick the first address not taken that CheckIPAddressAvailability calls free, starting at an
//!    offset hashed from the infra id and the round ([`candidates`]), so agents that start
//!    together rarely start on the same address.
//! 3. Claim it: our tag becomes `claim:<ip>` (Tags API Merge).
//! 4. Settle ([`verdict`]), reading all records again until our claim shows in them: no other
//!    record of the address, keep it (our tag becomes `<ip>`); another cluster holds it, or
//!    claims it and ranks lower (tag name, then resource group), yield and pick again (the next
//!    claim overwrites ours); only higher-ranked claims, wait for them to yield (they see ours)
//!    and read again, and yield if one is still there after [`SETTLE_WAIT`] (it read before our
//!    claim was written, saw nothing and kept it).
//!
//! Why no two clusters keep one address: an agent keeps an address only after a read, made
//! after its claim was written, that shows no other record of it, and a claim stays until its
//! owner keeps (turning it into the address) or yields. If A and B both kept X, A's last read
//! came before B's claim was written (else A saw it) and B's before A's, while each claim was
//! written before its owner's read: a cycle. That needs a list that starts after a tag write to
//! show the write; the agent waits until its own claim shows before judging.
//!
//! A claim a crash left behind is judged the same way by `observe`: with no other record of its
//! address it is ours (a read after the claim, showing no rival, is what keeping needs), and it
//! stays a claim, which every other cluster counts as taken; with a rival, `reserve` picks
//! again and overwrites it.
//!
//! The bootstrap host's second address (GCP's alias has GCE pick; here the agent picks) is taken
//! from the same subnet without a claim: its IP configuration holds it as soon as the NIC's PUT
//! is done, which CheckIPAddressAvailability then reports. Each side checks the other after
//! making its own choice visible, so that they never end on one address: a claim that settled
//! asks CheckIPAddressAvailability once more before it keeps the address (a NIC took it since
//! the pick: pick again), and a second address, once on the NIC, reads the records again (a
//! cluster claimed or holds it: take it off and pick again). If both kept X, the claim's last
//! check came before the PUT, and the PUT before the second address's read, which came before
//! the claim was written, which came before the claim's check: a cycle.

use super::addresses::AzureAddresses;
use super::claims::{Record, Recorded, Verdict, candidates, verdict};
use super::subnet::{parse_v4_prefix, prefixes};
use crate::{CloudError, ErrorKind, IpFamily};
use reqwest::Method;
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

/// Addresses asked about (CheckIPAddressAvailability) per pick before Azure's suggestions.
const PROBES: usize = 16;
/// Picks before giving up (each after yielding to another cluster).
const ROUNDS: u32 = 8;
/// How long a claim waits for higher-ranked claims of its address to yield.
pub(super) const SETTLE_WAIT: Duration = Duration::from_secs(10);
/// The first pause between settle reads; it doubles (with jitter) up to the second.
const SETTLE_PAUSE: Duration = Duration::from_millis(200);
const SETTLE_PAUSE_MAX: Duration = Duration::from_secs(2);

impl AzureAddresses {
    /// The compute subnet's address prefixes. Azure reports `addressPrefix` for a subnet with
    /// one prefix and `addressPrefixes` for one with several (a dual-stack subnet has an IPv4
    /// and an IPv6 prefix); both are read.
    async fn compute_subnet_prefixes(&self) -> Result<Vec<String>, CloudError> {
        let subnet = format!(
            "{}/subnets/{}",
            self.vnet_path(),
            self.settings.compute_subnet
        );
        self.subnet_prefixes(&subnet, || {
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
        })
        .await
    }

    /// The address prefixes of the subnet at ARM path `subnet`; `missing` when it does not exist.
    async fn subnet_prefixes(
        &self,
        subnet: &str,
        missing: impl FnOnce() -> CloudError,
    ) -> Result<Vec<String>, CloudError> {
        let url = self.arm.url(subnet, self.settings.api.network, &[])?;
        let found = self
            .arm
            .get_optional("GetSubnet", url)
            .await?
            .ok_or_else(missing)?;
        Ok(prefixes(&found))
    }

    /// The compute subnet's prefix of one family (IPv6 prefixes contain a colon).
    pub(super) async fn compute_subnet_prefix(
        &self,
        family: IpFamily,
    ) -> Result<String, CloudError> {
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

    /// Whether `record` is one of this cluster's (on its resource group, named for its infra id).
    pub(super) fn is_own(&self, record: &Record) -> bool {
        let prefix = self.private_tag_prefix().to_ascii_lowercase();
        record
            .rg
            .eq_ignore_ascii_case(&self.settings.resource_group)
            && record.tag.to_ascii_lowercase().starts_with(&prefix)
    }

    /// Our claim `tag` of `ip`, found after a restart: ours if no other cluster records `ip`.
    pub(super) async fn unrivalled_claim(
        &self,
        tag: &str,
        ip: IpAddr,
    ) -> Result<Option<IpAddr>, CloudError> {
        let records = self.private_records().await?;
        Ok(
            (verdict(&records, tag, &self.settings.resource_group, ip) == Verdict::Keep)
                .then_some(ip),
        )
    }

    /// Picks, claims and settles the private IPv4 recorded as `tag` (see the module docs).
    pub(super) async fn settle_private_ipv4(&self, tag: &str) -> Result<Ipv4Addr, CloudError> {
        let prefix = self.compute_subnet_prefix(IpFamily::Ipv4).await?;
        let (network, len) = parse_v4_prefix(&prefix)
            .ok_or_else(|| CloudError::fatal("GetSubnet", format!("bad prefix {prefix}")))?;
        let rg = self.settings.resource_group.as_str();
        let mut claim = None;
        for round in 0..ROUNDS {
            let taken: BTreeSet<IpAddr> = self
                .private_records()
                .await?
                .iter()
                .filter(|r| !r.is(tag, rg))
                .map(|r| r.recorded.ip())
                .collect();
            let ip = self
                .free_private_ip(&prefix, (network, len), &taken, round)
                .await?;
            let claimed = Recorded::Claimed(IpAddr::V4(ip)).value();
            self.patch_tag("Merge", tag, &claimed).await?;
            claim = Some(claimed);
            let settled = match self.settle(tag, IpAddr::V4(ip)).await? {
                None if !self.still_free(ip).await? => Some(format!(
                    "a NIC of the vnet took {ip} since it was picked (another cluster's bootstrap host)"
                )),
                other => other,
            };
            match settled {
                None => {
                    self.patch_tag("Merge", tag, &ip.to_string()).await?;
                    return Ok(ip);
                }
                Some(reason) => {
                    tracing::info!(%ip, round, %reason, "private IP yielded to another cluster; picking again");
                }
            }
        }
        if let Some(claimed) = claim {
            self.patch_tag("Delete", tag, &claimed).await?;
        }
        Err(CloudError::new(
            ErrorKind::Transient,
            "ReservePrivateIp",
            format!(
                "no private IP of {} settled in {ROUNDS} picks: other clusters of {} took each one",
                self.settings.compute_subnet, self.settings.virtual_network
            ),
        ))
    }

    /// Reads the records until our claim of `ip` is settled: None to keep it, else why not.
    async fn settle(&self, tag: &str, ip: IpAddr) -> Result<Option<String>, CloudError> {
        // Our pauses between reads, not the reads: see the module docs.
        let (mut paused, mut attempt) = (Duration::ZERO, 0);
        loop {
            attempt += 1;
            let records = self.private_records().await?;
            let waiting_for = match verdict(&records, tag, &self.settings.resource_group, ip) {
                Verdict::Keep => return Ok(None),
                Verdict::Yield(reason) => return Ok(Some(reason)),
                Verdict::Wait(rival) => rival,
                Verdict::Unseen => "our own claim to show in the resource-group list".into(),
            };
            if paused >= SETTLE_WAIT {
                return Ok(Some(format!(
                    "still waiting after {SETTLE_WAIT:?} of pauses for {waiting_for}"
                )));
            }
            tracing::debug!(%ip, %waiting_for, "private IP claim not settled yet");
            // Jittered, so that agents claiming together do not read together.
            let pause = crate::retry::backoff(attempt, SETTLE_PAUSE, SETTLE_PAUSE_MAX);
            tokio::time::sleep(pause).await;
            paused += pause;
        }
    }

    /// Whether CheckIPAddressAvailability still calls `ip` free (no NIC holds it).
    pub(super) async fn still_free(&self, ip: Ipv4Addr) -> Result<bool, CloudError> {
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
        tracing::debug!(%ip, available = %answer["available"], "CheckIPAddressAvailability");
        Ok(answer["available"] == true)
    }

    /// Our second address as on the NIC, kept when no cluster of the vnet records its address;
    /// else taken off the NIC again (None: pick again).
    async fn unrivalled_second_address(
        &self,
        host: &super::bootstrap_host::AzureBootstrapHost,
        reservation: crate::Reservation,
        round: u32,
    ) -> Result<Option<crate::Reservation>, CloudError> {
        let records = self.private_records().await?;
        let Some(rival) = records.iter().find(|r| r.recorded.ip() == reservation.ip) else {
            return Ok(Some(reservation));
        };
        tracing::info!(
            ip = %reservation.ip,
            round,
            rival = %format!("tag {}={} on {}", rival.tag, rival.recorded.value(), rival.rg),
            "the bootstrap host's second address yielded to another cluster's private IP; picking again"
        );
        host.release(&reservation).await?;
        Ok(None)
    }

    /// The bootstrap host's second address: a Static IP configuration on its NIC, with an
    /// address of the NIC's subnet that is free and that no cluster of the vnet records; once
    /// on the NIC, no cluster may record it (see the module docs), else it is taken off and
    /// picked again.
    pub(super) async fn reserve_second_address(
        &self,
        request: &crate::ReserveRequest,
    ) -> Result<crate::Reservation, CloudError> {
        use super::bootstrap_host::{Prepared, ROUNDS};
        const OP: &str = "CreateOrUpdateNetworkInterface";
        let host = self
            .bootstrap
            .as_ref()
            .ok_or_else(|| CloudError::fatal(OP, "the bootstrap host's second address is off"))?;
        for round in 0..ROUNDS {
            let (nic, subnet) = match host.prepare(request).await? {
                // Found after a crash, a lost answer, or added below: kept unless a cluster of
                // the vnet records its address.
                Prepared::Ours(found) => {
                    let round = u32::try_from(round).unwrap_or(0);
                    match self.unrivalled_second_address(host, found, round).await? {
                        Some(kept) => return Ok(kept),
                        None => continue,
                    }
                }
                Prepared::Add { nic, subnet } => (nic, subnet),
            };
            let prefix = self
                .subnet_prefixes(&subnet, || {
                    CloudError::fatal(
                        "GetSubnet",
                        format!("the bootstrap NIC's subnet {subnet} does not exist"),
                    )
                })
                .await?
                .into_iter()
                .find(|p| !p.contains(':'))
                .ok_or_else(|| {
                    CloudError::fatal("GetSubnet", format!("{subnet} has no IPv4 prefix"))
                })?;
            let network = parse_v4_prefix(&prefix)
                .ok_or_else(|| CloudError::fatal("GetSubnet", format!("bad prefix {prefix}")))?;
            let taken: BTreeSet<IpAddr> = self
                .private_records()
                .await?
                .iter()
                .map(|r| r.recorded.ip())
                .collect();
            let round = u32::try_from(round).unwrap_or(0);
            let ip = self
                .free_private_ip(&prefix, network, &taken, round)
                .await?;
            match host.add(request, &nic, &subnet, IpAddr::V4(ip)).await {
                // The NIC changed since it was read, or the address went meanwhile: again.
                Err(e) if e.kind == ErrorKind::Conflict => continue,
                Err(e) if e.message.starts_with("PrivateIPAddressIsAllocated") => continue,
                Err(e) => return Err(e),
                Ok(added) => {
                    if let Some(kept) = self.unrivalled_second_address(host, added, round).await? {
                        return Ok(kept);
                    }
                }
            }
        }
        Err(CloudError::new(
            ErrorKind::Transient,
            OP,
            "the bootstrap NIC or its subnet kept changing under us",
        ))
    }

    /// A free address of the compute subnet that no record in `taken` names.
    async fn free_private_ip(
        &self,
        prefix: &str,
        (network, len): (Ipv4Addr, u32),
        taken: &BTreeSet<IpAddr>,
        round: u32,
    ) -> Result<Ipv4Addr, CloudError> {
        let op = "CheckIPAddressAvailability";
        let check_url = format!("{}/CheckIPAddressAvailability", self.vnet_path());
        let free = |ip: &Ipv4Addr| !taken.contains(&IpAddr::V4(*ip));
        let mut suggestions: Vec<Ipv4Addr> = Vec::new();
        for candidate in candidates(network, len, &self.settings.infra_id, round)
            .filter(free)
            .take(PROBES)
        {
            let url = self.arm.url(
                &check_url,
                self.settings.api.network,
                &[("ipAddress", &candidate.to_string())],
            )?;
            let answer = self.arm.send(op, Method::GET, url, &[], None).await?.body;
            if answer["available"] == true {
                return Ok(candidate);
            }
            suggestions.extend(
                answer["availableIPAddresses"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str()?.parse::<Ipv4Addr>().ok()),
            );
        }
        suggestions.into_iter().find(free).ok_or_else(|| {
            CloudError::fatal(
                op,
                format!(
                    "no free address in {prefix} ({}) that no other cluster records",
                    self.settings.compute_subnet
                ),
            )
        })
    }
}

mod records;
#[cfg(test)]
pub(crate) mod settle_tests;
