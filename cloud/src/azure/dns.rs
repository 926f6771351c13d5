//! Azure DNS (public zone, `Microsoft.Network/dnsZones`, api 2018-05-01; 2016-04-01 on Azure
//! Stack Hub) and Azure Private DNS (`Microsoft.Network/privateDnsZones`, api 2020-06-01) record
//! sets. The compare-and-swap is
//! the record set's ETag: an update or delete sends `If-Match: <etag as read>`, a create sends
//! `If-None-Match: *`; a rival write in between makes the service answer 412
//! PreconditionFailed, which maps to `ErrorKind::Conflict` so the shared edit re-reads and
//! retries. Record-set writes are synchronous in both APIs.

use super::arm::ArmClient;
use super::{AzureSettings, rg_path};
use crate::{
    CloudError, DnsProvider, ErrorKind, RecordKey, RecordSet, RecordType, RecordWrite, Zone,
    ZoneRef,
};
use async_trait::async_trait;
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;

pub struct AzureDns {
    arm: Arc<ArmClient>,
    settings: AzureSettings,
}

/// Where a zone lives and how its API spells things.
struct Flavor {
    provider: &'static str,
    ttl: &'static str,
    a: &'static str,
    aaaa: &'static str,
}

const PUBLIC: Flavor = Flavor {
    provider: "dnsZones",
    ttl: "TTL",
    a: "ARecords",
    aaaa: "AAAARecords",
};

const PRIVATE: Flavor = Flavor {
    provider: "privateDnsZones",
    ttl: "ttl",
    a: "aRecords",
    aaaa: "aaaaRecords",
};

fn flavor(zone: &ZoneRef) -> &'static Flavor {
    if zone.private { &PRIVATE } else { &PUBLIC }
}

impl AzureDns {
    pub fn new(arm: Arc<ArmClient>, settings: &AzureSettings) -> Self {
        Self {
            arm,
            settings: settings.clone(),
        }
    }

    /// The zone's api-version on this cloud (see `ApiVersions`).
    fn api(&self, zone: &ZoneRef) -> &'static str {
        if zone.private {
            self.settings.api.private_dns
        } else {
            self.settings.api.dns
        }
    }

    /// Public zone: base domain's resource group; private zone: the cluster's.
    fn zone_path(&self, zone: &ZoneRef) -> String {
        let rg = if zone.private {
            &self.settings.resource_group
        } else {
            &self.settings.base_domain_resource_group
        };
        format!(
            "{}/providers/Microsoft.Network/{}/{}",
            rg_path(&self.settings, rg),
            flavor(zone).provider,
            zone.domain
        )
    }

    fn record_url(&self, zone: &Zone, key: &RecordKey) -> Result<url::Url, CloudError> {
        let domain = zone.reference.domain.to_ascii_lowercase();
        let name = key.name.to_ascii_lowercase();
        let relative = if name == domain {
            "@".to_string()
        } else {
            name.strip_suffix(&format!(".{domain}"))
                .ok_or_else(|| {
                    CloudError::fatal("dns", format!("{} is not in {}", key.name, zone.reference))
                })?
                .to_string()
        };
        let path = format!("{}/{}/{relative}", zone.id, key.rtype);
        self.arm.url(&path, self.api(&zone.reference), &[])
    }

    fn values_field(zone: &ZoneRef, rtype: RecordType) -> (&'static str, &'static str) {
        let f = flavor(zone);
        match rtype {
            RecordType::A => (f.a, "ipv4Address"),
            RecordType::Aaaa => (f.aaaa, "ipv6Address"),
        }
    }
}

#[async_trait]
impl DnsProvider for AzureDns {
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
        let path = self.zone_path(zone);
        let op = if zone.private {
            "GetPrivateZone"
        } else {
            "GetZone"
        };
        let url = self.arm.url(&path, self.api(zone), &[])?;
        match self.arm.get_optional(op, url).await? {
            Some(found) if !zone.private && found["properties"]["zoneType"] == "Private" => {
                Err(CloudError::fatal(
                    op,
                    format!("{zone} is a legacy private Azure DNS zone; expected a public zone"),
                ))
            }
            Some(_) => Ok(zone.with_id(path)),
            None => Err(CloudError::new(
                ErrorKind::NotFound,
                op,
                format!("no {zone} at {path}"),
            )),
        }
    }

    async fn read(&self, zone: &Zone, key: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        let f = flavor(&zone.reference);
        let url = self.record_url(zone, key)?;
        let Some(set) = self.arm.get_optional("GetRecordSet", url).await? else {
            return Ok(None);
        };
        let props = &set["properties"];
        if props["targetResource"]["id"].is_string() {
            return Err(CloudError::fatal(
                "GetRecordSet",
                format!(
                    "{key} in {} is an alias record set; round-robin values cannot be added to it",
                    zone.reference
                ),
            ));
        }
        let (field, value_field) = Self::values_field(&zone.reference, key.rtype);
        let values = crate::parse_values(
            "GetRecordSet",
            key,
            props[field]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| r[value_field].as_str().unwrap_or_default()),
        )?;
        let ttl = props[f.ttl]
            .as_u64()
            .and_then(|t| u32::try_from(t).ok())
            .unwrap_or(60);
        Ok(Some(RecordSet {
            ttl,
            values,
            version: set["etag"].as_str().map(str::to_string),
        }))
    }

    async fn write(&self, write: &RecordWrite<'_>) -> Result<(), CloudError> {
        let RecordWrite {
            zone,
            key,
            current,
            values,
            ttl,
        } = *write;
        let f = flavor(&zone.reference);
        let url = self.record_url(zone, key)?;
        let etag = current.and_then(|c| c.version.clone());
        let condition: (&str, String) = match (current, &etag) {
            (Some(_), Some(etag)) => ("If-Match", etag.clone()),
            (Some(_), None) => {
                return Err(CloudError::fatal(
                    "SetRecordSet",
                    format!("{key}: record set read without an ETag"),
                ));
            }
            (None, _) => ("If-None-Match", "*".to_string()),
        };
        if values.is_empty() {
            if current.is_none() {
                return Ok(());
            }
            let result = self
                .arm
                .send(
                    "DeleteRecordSet",
                    Method::DELETE,
                    url,
                    &[(condition.0, &condition.1)],
                    None,
                )
                .await;
            return match result {
                // Gone already: a re-read decides whether anything is left to do.
                Err(e) if e.kind == ErrorKind::NotFound => Err(CloudError::new(
                    ErrorKind::Conflict,
                    "DeleteRecordSet",
                    e.message,
                )),
                other => other.map(|_| ()),
            };
        }
        let (field, value_field) = Self::values_field(&zone.reference, key.rtype);
        let records: Vec<Value> = values
            .iter()
            .map(|ip| json!({ value_field: ip.to_string() }))
            .collect();
        let body = json!({"properties": {f.ttl: ttl, field: records}});
        self.arm
            .send(
                "SetRecordSet",
                Method::PUT,
                url,
                &[(condition.0, &condition.1)],
                Some(&body),
            )
            .await
            .map(|_| ())
            .map_err(|e| {
                // Azure DNS refuses an address record next to a CNAME: 409 `Conflict`, "The
                // record could not be created because a CNAME record with the same name
                // already exists in this zone." (kubernetes-sigs/external-dns#5358,
                // CannotCreateRecordDueToCNameNamingRestriction).
                if e.message.starts_with("Conflict") && e.message.contains("CNAME") {
                    crate::dns::cname_in_the_way(&e.operation, &zone.reference, key, &e.message)
                } else {
                    e
                }
            })
    }
}
