//! The one place where DNS values are added and removed: read, compute, compare-and-swap,
//! retry on conflict. Every provider only supplies `read` and an atomic `write`, so the rule
//! "touch only our values" is implemented once for all clouds.

use crate::{CloudError, DnsProvider, ErrorKind, RecordKey, RecordSet, Zone, ZoneRef};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::time::Duration;

/// Values to add and remove in one record set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DnsEdit {
    pub add: BTreeSet<IpAddr>,
    pub remove: BTreeSet<IpAddr>,
    /// TTL used when the record set is created; an existing set keeps its TTL.
    pub ttl: u32,
}

/// One compare-and-swap of a record set, as [`DnsProvider::write`] takes it: replace
/// `current` (exactly as read; None = absent) by `values` (empty = delete), created with
/// `ttl`. One value rather than five arguments, so every provider's `write` reads the same.
#[derive(Debug, Clone, Copy)]
pub struct RecordWrite<'a> {
    pub zone: &'a Zone,
    pub key: &'a RecordKey,
    pub current: Option<&'a RecordSet>,
    pub values: &'a BTreeSet<IpAddr>,
    pub ttl: u32,
}

/// How often a lost compare-and-swap is retried before giving up. Each retry re-reads, so
/// this only bounds a writer that keeps racing us.
const MAX_CONFLICT_RETRIES: u32 = 8;

/// Backoff after a lost compare-and-swap: from 100 ms, doubling, at most 3 s, with jitter.
/// Without it, writers that lost to each other re-read and write again in lockstep, and on
/// Route53 (which rate-limits change batches per account) that turns into throttling.
const CONFLICT_BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(3));

/// The edits of one zone's record sets that one phase makes together (the seed, the joins
/// of one gate pass, the removal): written as one change per zone.
pub type ZoneEdit = BTreeMap<RecordKey, DnsEdit>;

/// Each of `keys` read on its own, all at once ([`DnsProvider::read_zone`] where the cloud
/// has no listing that keeps them together).
pub async fn read_each<D: DnsProvider + ?Sized>(
    dns: &D,
    zone: &Zone,
    keys: &[RecordKey],
) -> Result<BTreeMap<RecordKey, Option<RecordSet>>, CloudError> {
    let read = futures::future::join_all(keys.iter().map(|key| dns.read(zone, key))).await;
    keys.iter()
        .cloned()
        .zip(read)
        .map(|(key, set)| Ok((key, set?)))
        .collect()
}

/// Applies `edit` to one record set. Returns the values written, or None when nothing
/// needed changing (zero mutating calls).
pub async fn edit_record_values(
    dns: &dyn DnsProvider,
    zone: &Zone,
    key: &RecordKey,
    edit: &DnsEdit,
) -> Result<Option<BTreeSet<IpAddr>>, CloudError> {
    let edits = ZoneEdit::from([(key.clone(), edit.clone())]);
    Ok(edit_zone(dns, zone, &edits, &BTreeMap::new())
        .await?
        .remove(key))
}

/// Applies every edit of `edits` to the record sets of `zone` in one write
/// ([`DnsProvider::write_zone`]): read them all, compute each one's values, and write those
/// that change, each replacing exactly what was read. A lost compare-and-swap re-reads them
/// all and writes again (with backoff), so a rival's values are kept. Returns the values
/// written per record set (none: zero mutating calls).
///
/// `known`: record sets as the caller just read them (the step's observation); the first
/// attempt starts from them instead of reading again (under a per-account rate limit every
/// request counts). Stale is safe: the write then fails its compare-and-swap, and the retry
/// reads.
pub async fn edit_zone(
    dns: &dyn DnsProvider,
    zone: &Zone,
    edits: &ZoneEdit,
    known: &BTreeMap<RecordKey, Option<RecordSet>>,
) -> Result<BTreeMap<RecordKey, BTreeSet<IpAddr>>, CloudError> {
    let mut attempt = 0;
    loop {
        // One read of all the record sets not known (a retry knows none): they are written in
        // one compare-and-swap, so they are best read at one moment.
        let unknown: Vec<RecordKey> = edits
            .keys()
            .filter(|key| attempt > 0 || !known.contains_key(*key))
            .cloned()
            .collect();
        let mut read = if unknown.is_empty() {
            BTreeMap::new()
        } else {
            dns.read_zone(zone, &unknown).await?
        };
        let current: Vec<Option<RecordSet>> = edits
            .keys()
            .map(|key| match known.get(key) {
                Some(set) if attempt == 0 => set.clone(),
                _ => read.remove(key).flatten(),
            })
            .collect();
        let mut wanted = BTreeMap::new();
        for ((key, edit), current) in edits.iter().zip(&current) {
            if let Some(values) = next_values(current.as_ref(), edit) {
                let ttl = current.as_ref().map_or(edit.ttl, |c| c.ttl);
                wanted.insert(key, (current.as_ref(), values, ttl));
            }
        }
        if wanted.is_empty() {
            return Ok(BTreeMap::new());
        }
        let writes: Vec<RecordWrite<'_>> = wanted
            .iter()
            .map(|(key, (current, values, ttl))| RecordWrite {
                zone,
                key,
                current: *current,
                values,
                ttl: *ttl,
            })
            .collect();
        match dns.write_zone(&writes).await {
            Ok(()) => {
                return Ok(wanted
                    .into_iter()
                    .map(|(key, (_, values, _))| (key.clone(), values))
                    .collect());
            }
            Err(e) if e.kind == ErrorKind::Conflict && attempt < MAX_CONFLICT_RETRIES => {
                attempt += 1;
                let delay = crate::retry::backoff(attempt, CONFLICT_BACKOFF.0, CONFLICT_BACKOFF.1);
                let records: Vec<String> = wanted.keys().map(ToString::to_string).collect();
                tracing::info!(records = ?records, zone = %zone.reference, attempt, ?delay, "record sets changed under us, re-reading");
                tokio::time::sleep(delay).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// The one error to report of writes made at once: anything that is not a lost
/// compare-and-swap first (retrying would not help it), else a conflict, else success.
pub(crate) fn worst(results: Vec<Result<(), CloudError>>) -> Result<(), CloudError> {
    let mut conflict = None;
    for result in results {
        match result {
            Ok(()) => {}
            Err(e) if e.kind == ErrorKind::Conflict => conflict = Some(e),
            Err(e) => return Err(e),
        }
    }
    conflict.map_or(Ok(()), Err)
}

/// A CNAME holds the name where our address record goes: the cloud refuses the record
/// (Route53 InvalidChangeBatch "...conflicting RRSet of type CNAME...", Cloud DNS
/// `cnameResourceRecordSetConflict`, Azure 409 "...a CNAME record with the same name already
/// exists..."). Not a lost compare-and-swap: fatal, naming the record and the CNAME, since
/// only the zone's owner can decide which of the two goes.
// Only the cloud providers call it: a build without any has no caller.
#[cfg_attr(
    not(any(feature = "aws", feature = "gcp", feature = "azure")),
    allow(dead_code)
)]
pub fn cname_in_the_way(
    operation: &str,
    zone: &ZoneRef,
    key: &RecordKey,
    said: &str,
) -> CloudError {
    CloudError::fatal(
        operation,
        format!(
            "{key} cannot be written in {zone}: a CNAME record {} exists there, and DNS allows \
             no other record next to a CNAME; remove the CNAME (or use a name without one) and \
             run again ({said})",
            key.name
        ),
    )
}

/// A cloud's refusal `err` that names a CNAME at the written name, as [`cname_in_the_way`] of
/// `write` (the write it names, else the batch's first); `err` itself without one. Used by
/// the Route53 and Cloud DNS clients.
#[cfg(any(feature = "aws", feature = "gcp", test))]
pub fn cname_refusal(err: CloudError, write: Option<&RecordWrite<'_>>) -> CloudError {
    match write {
        Some(w) => cname_in_the_way(&err.operation, &w.zone.reference, w.key, &err.message),
        None => err,
    }
}

/// Parses the values of a record set as read; a value that is not an IP (someone put a name
/// in an A set) is an error naming the record, never silently dropped, since the exact-match
/// replace must write back what it read.
pub fn parse_values<'a>(
    operation: &str,
    key: &RecordKey,
    values: impl IntoIterator<Item = &'a str>,
) -> Result<BTreeSet<IpAddr>, CloudError> {
    values
        .into_iter()
        .map(|text| {
            text.parse::<IpAddr>().map_err(|_| {
                CloudError::fatal(
                    operation,
                    format!("{key} holds a value that is not an IP address: {text}"),
                )
            })
        })
        .collect()
}

/// The one zone among `matches` (the ids of the provider's zones that fit `zone`): none is
/// NotFound, more than one is fatal, since which of them to write is the user's choice.
/// `many` words the error from the count and the ids joined.
#[cfg(any(feature = "aws", feature = "gcp"))]
pub(crate) fn the_one_zone<S: AsRef<str>>(
    operation: &str,
    zone: &crate::ZoneRef,
    matches: &[S],
    none: impl FnOnce() -> String,
    many: impl FnOnce(usize, String) -> String,
) -> Result<Zone, CloudError> {
    match matches {
        [id] => Ok(zone.with_id(id.as_ref())),
        [] => Err(CloudError::new(ErrorKind::NotFound, operation, none())),
        all => {
            let ids: Vec<&str> = all.iter().map(AsRef::as_ref).collect();
            Err(CloudError::fatal(
                operation,
                many(all.len(), ids.join(", ")),
            ))
        }
    }
}

/// A record set as read from a cloud that compares values instead of a version token
/// (Route53, Cloud DNS): the values parsed by [`parse_values`], with no version.
#[cfg(any(feature = "aws", feature = "gcp"))]
pub(crate) fn set_compared_by_value<'a>(
    operation: &str,
    key: &RecordKey,
    values: impl IntoIterator<Item = &'a str>,
    ttl: u32,
) -> Result<RecordSet, CloudError> {
    Ok(RecordSet {
        ttl,
        values: parse_values(operation, key, values)?,
        version: None,
    })
}

/// The values the record set should hold after the edit, or None if it already does.
pub fn next_values(current: Option<&RecordSet>, edit: &DnsEdit) -> Option<BTreeSet<IpAddr>> {
    let before = current.map(|c| c.values.clone()).unwrap_or_default();
    let mut after = before.clone();
    after.extend(edit.add.iter().copied());
    after.retain(|v| !edit.remove.contains(v));
    (after != before).then_some(after)
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
