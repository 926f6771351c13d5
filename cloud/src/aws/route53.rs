//! Route53 record sets. A write is one atomic ChangeBatch: DELETE the exact set we read plus
//! CREATE the new one; Route53 rejects the whole batch (InvalidChangeBatch) if the set changed
//! meanwhile, which is our compare-and-swap. After a write we wait until the change is INSYNC.

use super::classify;
use crate::{CloudError, DnsProvider, ErrorKind, RecordKey, RecordSet, RecordType, Zone, ZoneRef};
use async_trait::async_trait;
use aws_sdk_route53::Client;
use aws_sdk_route53::types::{
    Change, ChangeAction, ChangeBatch, ChangeStatus, ResourceRecord, ResourceRecordSet, RrType,
};
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::Duration;

pub struct Route53Dns {
    client: Client,
}

impl Route53Dns {
    pub fn new(config: &aws_config::SdkConfig) -> Self {
        Self {
            client: Client::new(config),
        }
    }

    async fn wait_insync(&self, change_id: &str) -> Result<(), CloudError> {
        // Route53 offers no watch; GetChange with backoff is the documented way.
        let mut delay = Duration::from_millis(100);
        for _ in 0..40 {
            let out = self
                .client
                .get_change()
                .id(change_id)
                .send()
                .await
                .map_err(|e| classify("GetChange", e))?;
            if out.change_info().map(|c| c.status()) == Some(&ChangeStatus::Insync) {
                return Ok(());
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(5));
        }
        Err(CloudError::new(
            ErrorKind::Transient,
            "GetChange",
            format!("change {change_id} not INSYNC yet"),
        ))
    }
}

/// Route53 names end with a dot and may use escapes; compare lowercase without the dot.
fn normalize(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

fn rr_type(t: RecordType) -> RrType {
    match t {
        RecordType::A => RrType::A,
        RecordType::Aaaa => RrType::Aaaa,
    }
}

fn record_set(
    key: &RecordKey,
    ttl: u32,
    values: &BTreeSet<IpAddr>,
) -> Result<ResourceRecordSet, CloudError> {
    let invalid = |e: aws_sdk_route53::error::BuildError| {
        CloudError::fatal("ChangeResourceRecordSets", e.to_string())
    };
    let mut builder = ResourceRecordSet::builder()
        .name(format!("{}.", key.name))
        .r#type(rr_type(key.rtype))
        .ttl(i64::from(ttl));
    for value in values {
        builder = builder.resource_records(
            ResourceRecord::builder()
                .value(value.to_string())
                .build()
                .map_err(invalid)?,
        );
    }
    builder.build().map_err(invalid)
}

fn change(action: ChangeAction, set: ResourceRecordSet) -> Result<Change, CloudError> {
    Change::builder()
        .action(action)
        .resource_record_set(set)
        .build()
        .map_err(|e| CloudError::fatal("ChangeResourceRecordSets", e.to_string()))
}

#[async_trait]
impl DnsProvider for Route53Dns {
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
        if let Some(id) = &zone.id {
            return Ok(Zone {
                reference: zone.clone(),
                id: id.clone(),
            });
        }
        let out = self
            .client
            .list_hosted_zones_by_name()
            .dns_name(&zone.domain)
            .max_items(100)
            .send()
            .await
            .map_err(|e| classify("ListHostedZonesByName", e))?;
        let matches: Vec<&str> = out
            .hosted_zones()
            .iter()
            .filter(|z| normalize(z.name()) == normalize(&zone.domain))
            .filter(|z| z.config().map(|c| c.private_zone()).unwrap_or(false) == zone.private)
            .map(|z| z.id())
            .collect();
        match matches.as_slice() {
            [id] => Ok(Zone {
                reference: zone.clone(),
                id: id.to_string(),
            }),
            [] => Err(CloudError::new(
                ErrorKind::NotFound,
                "ListHostedZonesByName",
                format!("no {zone} in Route53"),
            )),
            many => Err(CloudError::fatal(
                "ListHostedZonesByName",
                format!(
                    "{} hosted zones match {zone} ({}); name the zone in the install-config \
                     (platform.aws.hostedZone)",
                    many.len(),
                    many.join(", ")
                ),
            )),
        }
    }

    async fn read(&self, zone: &Zone, key: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        let out = self
            .client
            .list_resource_record_sets()
            .hosted_zone_id(&zone.id)
            .start_record_name(format!("{}.", key.name))
            .start_record_type(rr_type(key.rtype))
            .max_items(1)
            .send()
            .await
            .map_err(|e| classify("ListResourceRecordSets", e))?;
        let Some(set) = out.resource_record_sets().iter().find(|s| {
            normalize(s.name()) == normalize(&key.name) && *s.r#type() == rr_type(key.rtype)
        }) else {
            return Ok(None);
        };
        if set.alias_target().is_some() || set.set_identifier().is_some() {
            return Err(CloudError::fatal(
                "ListResourceRecordSets",
                format!(
                    "{key} in {} is an alias or routing-policy record; round-robin values cannot be added to it",
                    zone.reference
                ),
            ));
        }
        let values = crate::parse_values(
            "ListResourceRecordSets",
            key,
            set.resource_records().iter().map(|r| r.value()),
        )?;
        let ttl = set.ttl().and_then(|t| u32::try_from(t).ok()).unwrap_or(60);
        Ok(Some(RecordSet {
            ttl,
            values,
            version: None,
        }))
    }

    async fn write(
        &self,
        zone: &Zone,
        key: &RecordKey,
        current: Option<&RecordSet>,
        values: &BTreeSet<IpAddr>,
        ttl: u32,
    ) -> Result<(), CloudError> {
        let mut batch = ChangeBatch::builder().comment("bootstrap-agent");
        if let Some(old) = current {
            batch = batch.changes(change(
                ChangeAction::Delete,
                record_set(key, old.ttl, &old.values)?,
            )?);
        }
        if !values.is_empty() {
            batch = batch.changes(change(ChangeAction::Create, record_set(key, ttl, values)?)?);
        }
        let batch = batch
            .build()
            .map_err(|e| CloudError::fatal("ChangeResourceRecordSets", e.to_string()))?;
        let out = self
            .client
            .change_resource_record_sets()
            .hosted_zone_id(&zone.id)
            .change_batch(batch)
            .send()
            .await
            .map_err(|e| classify("ChangeResourceRecordSets", e))?;
        match out.change_info() {
            Some(info) if *info.status() != ChangeStatus::Insync => {
                self.wait_insync(info.id()).await
            }
            _ => Ok(()),
        }
    }
}
