//! Route53 record sets. A write is one atomic ChangeBatch: DELETE the exact set we read plus
//! CREATE the new one; Route53 rejects the whole batch (InvalidChangeBatch) if the set changed
//! meanwhile, which is our compare-and-swap. After a write we wait until the change is INSYNC.

mod record_sets;

use super::{RedactingCredentials, classify};
use crate::patient_dns::{Backoff, PATIENCE, READ_BACKOFF, WRITE_BACKOFF, patiently};
use crate::poll::Poll;
use crate::{CloudError, DnsProvider, RecordKey, RecordSet, RecordWrite, Zone, ZoneRef};
use async_trait::async_trait;
use aws_config::retry::RetryConfig;
use aws_credential_types::provider::SharedCredentialsProvider;
use aws_sdk_route53::Client;
use aws_sdk_route53::types::{ChangeAction, ChangeBatch, ChangeStatus, TagResourceType};
use record_sets::{
    ZONE_LISTING, change, common_parent, descends_from, listed, normalize, record_set, rr_type,
};
use std::collections::BTreeMap;
use std::time::Duration;

pub struct Route53Dns {
    client: Client,
    /// For the private zone when it is another account's (`hostedZoneRole`): a client whose
    /// credentials come from `sts:AssumeRole` of that role.
    private_client: Option<Client>,
}

/// The SDK's retries of a throttled Route53 call at the cadence of [`crate::patient_dns`]:
/// reads at [`READ_BACKOFF`], a compare-and-swap write at [`WRITE_BACKOFF`] (per call, see
/// `write_zone`). With the SDK's own 200 ms start for every call, the readers of a saturated
/// account ask as often as the writers and take the tokens a write needs before its read
/// ages.
fn retry_at(backoff: Backoff) -> RetryConfig {
    super::retry_config_backing_off(backoff.first, backoff.cap)
}

fn client(config: &aws_config::SdkConfig) -> Client {
    let config = aws_sdk_route53::config::Builder::from(config)
        .retry_config(retry_at(READ_BACKOFF))
        .build();
    Client::from_conf(config)
}

impl Route53Dns {
    pub fn new(config: &aws_config::SdkConfig) -> Self {
        Self {
            client: client(config),
            private_client: None,
        }
    }

    /// Private-zone calls go through `sts:AssumeRole` of `role` (assumed at the first call,
    /// refreshed before it expires); public-zone calls keep `config`'s credentials, as the
    /// installer's do (openshift/installer pkg/infrastructure/aws/clusterapi/aws.go: "we dont
    /// want to assume role here" for the public zone).
    /// `sts_config`: the same credentials, with the STS endpoint to call.
    pub async fn with_private_zone_role(
        config: &aws_config::SdkConfig,
        sts_config: &aws_config::SdkConfig,
        role: &str,
    ) -> Self {
        let assumed = aws_config::sts::AssumeRoleProvider::builder(role)
            .session_name("bootstrap-agent")
            .configure(sts_config)
            .build()
            .await;
        let private_config = config
            .to_builder()
            .credentials_provider(SharedCredentialsProvider::new(RedactingCredentials(
                SharedCredentialsProvider::new(assumed),
            )))
            .build();
        Self {
            client: client(config),
            private_client: Some(client(&private_config)),
        }
    }

    fn client_for(&self, zone: &ZoneRef) -> &Client {
        match &self.private_client {
            Some(assumed) if zone.private => assumed,
            _ => &self.client,
        }
    }

    /// Whether the hosted zone `id` (`/hostedzone/<id>` or bare) carries every tag of `wanted`.
    async fn has_tags(
        client: &Client,
        id: &str,
        wanted: &BTreeMap<String, String>,
    ) -> Result<bool, CloudError> {
        let out = client
            .list_tags_for_resource()
            .resource_type(TagResourceType::Hostedzone)
            .resource_id(id.trim_start_matches("/hostedzone/"))
            .send()
            .await
            .map_err(|e| classify("ListTagsForResource", e))?;
        let tags: BTreeMap<&str, &str> = out
            .resource_tag_set()
            .map(|set| {
                set.tags()
                    .iter()
                    .filter_map(|t| Some((t.key()?, t.value()?)))
                    .collect()
            })
            .unwrap_or_default();
        Ok(wanted
            .iter()
            .all(|(k, v)| tags.get(k.as_str()) == Some(&v.as_str())))
    }

    async fn wait_insync(client: &Client, change_id: &str) -> Result<(), CloudError> {
        // Route53 offers no watch; GetChange with backoff is the documented way.
        let mut poll = Poll::change("GetChange", Duration::from_millis(100));
        loop {
            let asked = client
                .get_change()
                .id(change_id)
                .send()
                .await
                .map_err(|e| classify("GetChange", e));
            match asked {
                Ok(out) if out.change_info().map(|c| c.status()) == Some(&ChangeStatus::Insync) => {
                    return Ok(());
                }
                Ok(_) => poll.wait(None).await?,
                // The change is made; a throttled look at it is only a later look. Failing
                // here would make the step re-observe and write again under the same limit.
                Err(e) if e.is_throttled() => poll.wait(e.retry_after).await?,
                Err(e) => return Err(e),
            }
        }
    }
}

#[async_trait]
impl DnsProvider for Route53Dns {
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
        if let Some(named) = zone.named() {
            return Ok(named);
        }
        let client = self.client_for(zone);
        let out = client
            .list_hosted_zones_by_name()
            .dns_name(&zone.domain)
            .max_items(100)
            .send()
            .await
            .map_err(|e| classify("ListHostedZonesByName", e))?;
        let by_name: Vec<&str> = out
            .hosted_zones()
            .iter()
            .filter(|z| normalize(z.name()) == normalize(&zone.domain))
            .filter(|z| z.config().map(|c| c.private_zone()).unwrap_or(false) == zone.private)
            .map(|z| z.id())
            .collect();
        // The installer's private zone is named by the DNS manifest's tags: the same name can
        // exist once per VPC, so the name alone does not identify it.
        let mut matches = Vec::new();
        for id in by_name {
            if zone.tags.is_empty() || Self::has_tags(client, id, &zone.tags).await? {
                matches.push(id);
            }
        }
        let tagged = if zone.tags.is_empty() {
            String::new()
        } else {
            let tags: Vec<String> = zone.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!(" tagged {}", tags.join(", "))
        };
        crate::dns::the_one_zone(
            "ListHostedZonesByName",
            zone,
            &matches,
            || format!("no {zone}{tagged} in Route53"),
            |count, ids| {
                format!(
                    "{count} hosted zones match {zone}{tagged} ({ids}); name the zone in the \
                     install-config (platform.aws.hostedZone)"
                )
            },
        )
    }

    async fn read(&self, zone: &Zone, key: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        let out = self
            .client_for(&zone.reference)
            .list_resource_record_sets()
            .hosted_zone_id(&zone.id)
            .start_record_name(format!("{}.", key.name))
            .start_record_type(rr_type(key.rtype))
            .max_items(1)
            .send()
            .await
            .map_err(|e| classify("ListResourceRecordSets", e))?;
        listed(out.resource_record_sets(), zone, key)
    }

    /// One ListResourceRecordSets from the keys' closest common parent name. Route53 sorts
    /// names as text with their labels reversed (`com.example.mycluster.api.`), so a name's
    /// descendants are the block of text that starts with its own: right after it, together.
    /// Which of the keys comes first is not relied on (Route53 sorts `api-int.` before `api.`,
    /// as its ASCII order of `-` and `.` makes it). A key missing from a listing that holds
    /// the whole block (it reached the end of the zone, or a name past the block) is absent;
    /// missing from one cut short inside the block, it is read alone.
    async fn read_zone(
        &self,
        zone: &Zone,
        keys: &[RecordKey],
    ) -> Result<BTreeMap<RecordKey, Option<RecordSet>>, CloudError> {
        let parent = common_parent(keys.iter().map(|key| key.name.as_str()));
        let (Some(parent), [_, _, ..]) = (parent, keys) else {
            return crate::dns::read_each(self, zone, keys).await;
        };
        let out = self
            .client_for(&zone.reference)
            .list_resource_record_sets()
            .hosted_zone_id(&zone.id)
            .start_record_name(format!("{parent}."))
            .max_items(ZONE_LISTING)
            .send()
            .await
            .map_err(|e| classify("ListResourceRecordSets", e))?;
        let sets = out.resource_record_sets();
        let whole_block = !out.is_truncated()
            || sets
                .iter()
                .any(|set| !descends_from(&normalize(set.name()), &parent));
        let mut read = BTreeMap::new();
        for key in keys {
            let set = match listed(sets, zone, key)? {
                None if !whole_block => self.read(zone, key).await?,
                set => set,
            };
            read.insert(key.clone(), set);
        }
        Ok(read)
    }

    async fn write(&self, write: &RecordWrite<'_>) -> Result<(), CloudError> {
        self.write_zone(std::slice::from_ref(write)).await
    }

    /// One ChangeBatch for the zone: per record set, DELETE it exactly as read and CREATE it
    /// anew. Route53 applies the batch whole or not at all, so one rival write anywhere in it
    /// rejects all of it (a conflict: the shared edit re-reads and retries the batch), and
    /// one GetChange wait covers every record set in it.
    async fn write_zone(&self, writes: &[RecordWrite<'_>]) -> Result<(), CloudError> {
        let Some(first) = writes.first() else {
            return Ok(());
        };
        let mut batch = ChangeBatch::builder().comment("bootstrap-agent");
        let mut any = false;
        for write in writes {
            if let Some(old) = write.current {
                batch = batch.changes(change(
                    ChangeAction::Delete,
                    record_set(write.key, old.ttl, &old.values)?,
                )?);
                any = true;
            }
            if !write.values.is_empty() {
                let created = record_set(write.key, write.ttl, write.values)?;
                batch = batch.changes(change(ChangeAction::Create, created)?);
                any = true;
            }
        }
        if !any {
            return Ok(());
        }
        let batch = batch
            .build()
            .map_err(|e| CloudError::fatal("ChangeResourceRecordSets", e.to_string()))?;
        let zone = first.zone;
        let client = self.client_for(&zone.reference);
        // Throttled, Route53 made no change: the same batch may be sent again (a rival's
        // write meanwhile still fails its compare-and-swap).
        let out = patiently(
            "ChangeResourceRecordSets",
            PATIENCE,
            WRITE_BACKOFF,
            || async {
                client
                    .change_resource_record_sets()
                    .hosted_zone_id(&zone.id)
                    .change_batch(batch.clone())
                    .customize()
                    .config_override(
                        aws_sdk_route53::config::Builder::default()
                            .retry_config(retry_at(WRITE_BACKOFF)),
                    )
                    .send()
                    .await
                    .map_err(|e| cname_or(classify("ChangeResourceRecordSets", e), writes))
            },
        )
        .await?;
        match out.change_info() {
            Some(info) if *info.status() != ChangeStatus::Insync => {
                Self::wait_insync(client, info.id()).await
            }
            _ => Ok(()),
        }
    }
}

/// Route53's refusal of an address record where a CNAME is ("RRSet of type A with DNS name
/// api.example.com. is not permitted because a conflicting RRSet of type CNAME with the same
/// DNS name already exists in zone example.com.", as quoted in presslabs/zinc#178 and
/// RJPearson94/terraform-aws-open-next#24) reported as such, for the record it names.
fn cname_or(err: CloudError, writes: &[RecordWrite<'_>]) -> CloudError {
    if !(err.message.contains("conflicting RRSet of type") && err.message.contains("CNAME")) {
        return err;
    }
    let named = err
        .message
        .split_once("with DNS name ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .map(normalize);
    let write = writes
        .iter()
        .find(|w| Some(normalize(&w.key.name)) == named)
        .or(writes.first());
    crate::dns::cname_refusal(err, write)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Route53 reads retry throttling at the read cadence; a compare-and-swap write, whose read
    /// ages while it waits, at the shorter write cadence (set per call in `write_zone`).
    #[test]
    fn reads_and_writes_retry_at_their_own_cadence() {
        let config = aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build();
        let read = client(&config).config().retry_config().cloned().unwrap();
        assert_eq!(read.initial_backoff(), READ_BACKOFF.first);
        assert_eq!(read.max_backoff(), READ_BACKOFF.cap);
        assert_eq!(read.max_attempts(), crate::retry::PER_CALL.max_attempts);
        let write = retry_at(WRITE_BACKOFF);
        assert_eq!(write.initial_backoff(), Duration::from_millis(50));
        assert_eq!(write.max_backoff(), Duration::from_millis(250));
    }
}
