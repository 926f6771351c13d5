//! Another writer of the fake's DNS zones, for tests: record sets and CNAMEs written (and read)
//! straight into the world, not through ARM, as a user or another cluster would. Apart from
//! `dns`, which is what the agent's requests meet.

use super::dns::{DnsZone, RecordSet};
use super::lock;
use super::world::{CLUSTER_RG, DNS_RG, PRIVATE_ZONE, PUBLIC_ZONE, World};
use anyhow::{Context, Result};
use serde_json::json;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// The zone `zone` of resource group `rg` and `fqdn`'s name relative to it.
fn zone_and_name<'a>(
    w: &'a mut World,
    private: bool,
    rg: &str,
    zone: &str,
    fqdn: &'a str,
) -> Result<(&'a mut DnsZone, &'a str)> {
    let name = fqdn
        .strip_suffix(&format!(".{zone}"))
        .context("name not in zone")?;
    let z = w
        .zones
        .get_mut(&(private, rg.to_ascii_lowercase(), zone.to_string()))
        .context("zone")?;
    Ok((z, name))
}

impl super::AzureSim {
    /// Another writer sets a record set (fqdn, A or AAAA by the values) to exactly `values`
    /// (empty: deletes it). A new ETag, as any write.
    pub fn write_record(&self, private: bool, fqdn: &str, values: &[&str]) -> Result<()> {
        let (rg, zone) = if private {
            (CLUSTER_RG, PRIVATE_ZONE)
        } else {
            (DNS_RG, PUBLIC_ZONE)
        };
        self.write_record_in(private, rg, zone, fqdn, values)
    }

    /// [`Self::write_record`] in the zone `zone` of resource group `rg`.
    pub fn write_record_in(
        &self,
        private: bool,
        rg: &str,
        zone: &str,
        fqdn: &str,
        values: &[&str],
    ) -> Result<()> {
        let ips: Vec<IpAddr> = values
            .iter()
            .map(|v| v.parse().context("not an IP"))
            .collect::<Result<_>>()?;
        let rtype = if ips.first().is_some_and(IpAddr::is_ipv6) {
            "AAAA"
        } else {
            "A"
        };
        let mut w = lock(&self.world);
        let (z, name) = zone_and_name(&mut w, private, rg, zone, fqdn)?;
        let key = (rtype.to_string(), name.to_string());
        if ips.is_empty() {
            z.records.remove(&key);
        } else {
            let ttl = z.records.get(&key).map_or(300, |s| s.ttl);
            z.records.insert(
                key,
                RecordSet {
                    ttl,
                    values: ips,
                    etag: uuid::Uuid::new_v4().to_string(),
                    metadata: json!({}),
                },
            );
        }
        Ok(())
    }

    /// Another writer creates a CNAME record set `fqdn` -> `target` in the cluster's private
    /// zone (`private`) or the public one.
    pub fn write_cname(&self, private: bool, fqdn: &str, target: &str) -> Result<()> {
        let (rg, zone) = if private {
            (CLUSTER_RG, PRIVATE_ZONE)
        } else {
            (DNS_RG, PUBLIC_ZONE)
        };
        let mut w = lock(&self.world);
        let (z, name) = zone_and_name(&mut w, private, rg, zone, fqdn)?;
        let name = name.to_ascii_lowercase();
        if z.records.keys().any(|(_, n)| *n == name) {
            anyhow::bail!("{fqdn} holds other record sets: a CNAME cannot go next to them");
        }
        z.cnames.insert(name, target.to_string());
        Ok(())
    }

    /// The record sets of zone `zone` in resource group `rg`: `"<fqdn> <TYPE>"` -> values.
    pub fn records_in(&self, private: bool, rg: &str, zone: &str) -> BTreeMap<String, Vec<String>> {
        let w = lock(&self.world);
        let Some(z) = w
            .zones
            .get(&(private, rg.to_ascii_lowercase(), zone.to_string()))
        else {
            return BTreeMap::new();
        };
        z.records
            .iter()
            .map(|((rtype, name), set)| set.shown(zone, rtype, name))
            .collect()
    }
}
