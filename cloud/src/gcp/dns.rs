//! Cloud DNS record sets. A write is one Change: `deletions` hold the record set exactly as
//! read (name, type, ttl, rrdatas) and `additions` the new one. Cloud DNS applies a Change
//! atomically and rejects it when a deletion does not match what exists (412
//! `conditionNotMet`), an addition already exists (409 `alreadyExists`) or a deleted set is gone
//! (404): all three mean "changed since we read it" and map to `ErrorKind::Conflict`, so the
//! shared compare-and-swap in `crate::dns` re-reads and retries.

use super::{GcpSettings, classify};
use crate::patient_dns::{PATIENCE, WRITE_BACKOFF};
use crate::poll::Poll;
use crate::{CloudError, DnsProvider, ErrorKind, RecordKey, RecordSet, RecordWrite, Zone, ZoneRef};
use async_trait::async_trait;
use google_cloud_dns_v1::client::{Changes, ManagedZones, ResourceRecordSets};
use google_cloud_dns_v1::model::{Change, ResourceRecordSet, change, managed_zone};
use google_cloud_gax::options::RequestOptionsBuilder;
use google_cloud_gax::paginator::ItemPaginator;
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::Duration;

pub struct CloudDns {
    zones: ManagedZones,
    rrsets: ResourceRecordSets,
    changes: Changes,
    project: String,
}

impl CloudDns {
    pub async fn new(settings: &GcpSettings) -> Result<Self, CloudError> {
        Ok(Self {
            zones: build_client!(
                ManagedZones,
                settings,
                settings.dns_endpoint.as_deref(),
                "dns"
            ),
            rrsets: build_client!(
                ResourceRecordSets,
                settings,
                settings.dns_endpoint.as_deref(),
                "dns"
            ),
            changes: build_client!(Changes, settings, settings.dns_endpoint.as_deref(), "dns"),
            project: settings.project.clone(),
        })
    }

    /// The project and managed-zone name of `zone`. Its id is `projects/<p>/managedZones/<z>`
    /// as the installer writes it in the DNS manifest (since the private zone may live in
    /// another project, `platform.gcp.dns.privateZone.projectID`), or a bare zone name as
    /// older installers wrote and as `find_zone` returns: then the settings' project.
    fn locate<'a>(&'a self, zone: &'a Zone) -> (&'a str, &'a str) {
        zone_in_project(&zone.id).unwrap_or((&self.project, &zone.id))
    }

    /// Changes are usually applied at once; a pending one is polled with GET until done.
    async fn wait_done(&self, zone: &Zone, mut done: Change) -> Result<(), CloudError> {
        let mut poll = Poll::change("changes.get", Duration::from_millis(100));
        loop {
            if done.status != Some(change::Status::Pending) {
                return Ok(());
            }
            let id = done
                .id
                .clone()
                .ok_or_else(|| CloudError::fatal("changes.get", "pending change without an id"))?;
            poll.wait(None).await?;
            let (project, name) = self.locate(zone);
            let asked = self
                .changes
                .get()
                .set_project(project)
                .set_managed_zone(name)
                .set_change_id(id)
                .send()
                .await
                .map_err(|e| classify("changes.get", e));
            match asked {
                Ok(change) => done = change,
                // The change is made; a throttled look at it is only a later look.
                Err(e) if e.is_throttled() => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// `projects/<p>/managedZones/<z>` split into its project and zone; None for any other form.
pub(crate) fn zone_in_project(id: &str) -> Option<(&str, &str)> {
    match id.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", project, "managedZones", zone] if !project.is_empty() && !zone.is_empty() => {
            Some((project, zone))
        }
        _ => None,
    }
}

fn fqdn(name: &str) -> String {
    format!("{}.", name.trim_end_matches('.'))
}

fn normalize(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

fn rrset(key: &RecordKey, ttl: u32, values: &BTreeSet<IpAddr>) -> ResourceRecordSet {
    ResourceRecordSet::new()
        .set_name(fqdn(&key.name))
        .set_type(key.rtype.to_string())
        .set_ttl(i32::try_from(ttl).unwrap_or(i32::MAX))
        .set_rrdatas(values.iter().map(IpAddr::to_string))
}

#[async_trait]
impl DnsProvider for CloudDns {
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
        if let Some(named) = zone.named() {
            return Ok(named);
        }
        let mut items = self
            .zones
            .list()
            .set_project(&self.project)
            .set_dns_name(fqdn(&zone.domain))
            .by_item();
        let mut matches = Vec::new();
        while let Some(item) = items.next().await {
            let z = item.map_err(|e| classify("managedZones.list", e))?;
            let private = z.visibility == Some(managed_zone::Visibility::Private);
            let same_name = z
                .dns_name
                .as_deref()
                .is_some_and(|n| normalize(n) == normalize(&zone.domain));
            if same_name && private == zone.private {
                matches.extend(z.name.clone());
            }
        }
        crate::dns::the_one_zone(
            "managedZones.list",
            zone,
            &matches,
            || format!("no {zone} in Cloud DNS project {}", self.project),
            |count, ids| format!("{count} managed zones match {zone} ({ids})"),
        )
    }

    async fn read(&self, zone: &Zone, key: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        let (project, name) = self.locate(zone);
        let mut items = self
            .rrsets
            .list()
            .set_project(project)
            .set_managed_zone(name)
            .set_name(fqdn(&key.name))
            .set_type(key.rtype.to_string())
            .by_item();
        let mut found = None;
        while let Some(item) = items.next().await {
            let set = item.map_err(|e| classify("resourceRecordSets.list", e))?;
            let same = set
                .name
                .as_deref()
                .is_some_and(|n| normalize(n) == normalize(&key.name))
                && set.r#type.as_deref() == Some(&key.rtype.to_string());
            if same {
                found = Some(set);
            }
        }
        let Some(set) = found else {
            return Ok(None);
        };
        if set.routing_policy.is_some() {
            return Err(CloudError::fatal(
                "resourceRecordSets.list",
                format!(
                    "{key} in {} has a routing policy; round-robin values cannot be added to it",
                    zone.reference
                ),
            ));
        }
        let ttl = set.ttl.and_then(|t| u32::try_from(t).ok()).unwrap_or(300);
        let values = set.rrdatas.iter().map(String::as_str);
        crate::dns::set_compared_by_value("resourceRecordSets.list", key, values, ttl).map(Some)
    }

    async fn write(&self, write: &RecordWrite<'_>) -> Result<(), CloudError> {
        self.write_zone(std::slice::from_ref(write)).await
    }

    /// One Change for the zone: `deletions` hold every record set exactly as read,
    /// `additions` the new ones. Cloud DNS applies it whole or not at all; one wait for it.
    async fn write_zone(&self, writes: &[RecordWrite<'_>]) -> Result<(), CloudError> {
        let Some(first) = writes.first() else {
            return Ok(());
        };
        let deletions: Vec<ResourceRecordSet> = writes
            .iter()
            .filter_map(|w| w.current.map(|old| rrset(w.key, old.ttl, &old.values)))
            .collect();
        let added: Vec<&RecordWrite<'_>> = writes.iter().filter(|w| !w.values.is_empty()).collect();
        if deletions.is_empty() && added.is_empty() {
            return Ok(());
        }
        let additions = added.iter().map(|w| rrset(w.key, w.ttl, w.values));
        let body = Change::new()
            .set_deletions(deletions)
            .set_additions(additions);
        let (project, name) = self.locate(first.zone);
        // Throttled, Cloud DNS made no change: the same change may be sent again (a rival's
        // write meanwhile still fails its deletions' match).
        let created =
            crate::patient_dns::patiently("changes.create", PATIENCE, WRITE_BACKOFF, || async {
                self.changes
                    .create()
                    .set_project(project)
                    .set_managed_zone(name)
                    .set_body(body.clone())
                    .with_idempotency(super::IDEMPOTENT)
                    .send()
                    .await
                    .map_err(|e| {
                        let reason = super::reason(&e);
                        let mut err = classify("changes.create", e);
                        if reason.as_deref() == Some(CNAME_CONFLICT)
                            && !err.message.contains(CNAME_CONFLICT)
                        {
                            err.message = format!("{CNAME_CONFLICT}: {}", err.message);
                        }
                        // A 404 naming a deletion means the set we read is gone: someone changed it.
                        if err.kind == ErrorKind::NotFound && err.message.contains("deletions") {
                            err.kind = ErrorKind::Conflict;
                        }
                        cname_or(err, &added)
                    })
            })
            .await?;
        self.wait_done(first.zone, created).await
    }
}

const CNAME_CONFLICT: &str = "cnameResourceRecordSetConflict";

/// Cloud DNS's refusal of an address record where a CNAME is: reason
/// `cnameResourceRecordSetConflict`, "The resource record set 'entity.change.additions[N]' is
/// invalid because the DNS name ... may have either one CNAME resource record set or resource
/// record sets of other types, but not both." (cloud.google.com/dns/docs/error-messages),
/// reported as such for the addition it names, whatever the HTTP status (a 409 must not pass
/// for a lost compare-and-swap).
fn cname_or(err: CloudError, added: &[&RecordWrite<'_>]) -> CloudError {
    let cname = err.message.contains(CNAME_CONFLICT)
        || err
            .message
            .contains("CNAME resource record set or resource record sets of other types");
    if !cname {
        return err;
    }
    let index = err
        .message
        .split_once("additions[")
        .and_then(|(_, rest)| rest.split(']').next())
        .and_then(|n| n.parse::<usize>().ok());
    let write = index.and_then(|i| added.get(i)).or(added.first());
    crate::dns::cname_refusal(err, write.copied())
}

#[cfg(test)]
mod tests {
    use super::zone_in_project;

    #[test]
    fn a_zone_id_names_its_project_in_the_manifest_form_only() {
        assert_eq!(
            zone_in_project("projects/dns-project/managedZones/xpn-private-zone"),
            Some(("dns-project", "xpn-private-zone"))
        );
        for other in [
            "xpn-private-zone",
            "projects//managedZones/z",
            "projects/p/managedZones/",
            "projects/p/zones/z",
            "projects/p/managedZones/z/rrsets",
        ] {
            assert_eq!(zone_in_project(other), None, "{other}");
        }
    }
}
