//! A DNS provider as many installs in one account need it (issue 27): DNS APIs are rate
//! limited per account (Route53: 5 requests per second, GetChange included), and a CI farm
//! runs hundreds of installs at once. Two things keep an agent's share of that rate:
//!
//! - **Zones are looked up once per process.** A zone's id does not change while the agent
//!   runs; a step's retry, the verifying pass and the later steps reuse it instead of asking
//!   again. An answer that says the zone is not what we took it for (anything but a transient
//!   failure or a lost compare-and-swap) forgets it, so the next attempt looks it up anew.
//! - **A throttled read waits its turn.** Throttling means the service did nothing; failing
//!   the step instead would re-observe everything (more requests under the very limit that
//!   refused us) and lose the agent's place to the agents that did not fail. So a read the
//!   service throttled beyond the client's own retries is asked again, with jittered backoff,
//!   for up to [`PATIENCE`]. Writes are the providers' own business: only they know whether a
//!   throttled answer came before the change (Route53's ChangeResourceRecordSets) or after it
//!   (a throttled poll of a change already made).

use crate::{CloudError, DnsProvider, RecordKey, RecordSet, RecordWrite, Zone, ZoneRef};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// How long one throttled call keeps asking before its error goes to the step (which has its
/// own deadline, 10 min by default): a fleet of a hundred installs in one Route53 account
/// needs about five minutes for all of its requests.
pub const PATIENCE: Duration = Duration::from_secs(300);

/// Backoff between the asks of a throttled read: from 1 s, doubling, at most 10 s, jittered
/// (so a hundred agents throttled together do not come back together). While the limit is
/// saturated the readers' asks are what the writers compete with (see [`WRITE_BACKOFF`]);
/// the cap stays short enough that a read is asked again well within the time a fair share
/// of the rate would give it (a hundred agents at 5 requests per second: one each 20 s).
pub const READ_BACKOFF: Backoff = Backoff {
    first: Duration::from_secs(1),
    cap: Duration::from_secs(10),
};

/// Backoff between the asks of a throttled compare-and-swap write: from 50 ms, at most
/// 250 ms. A write carries what was read, and that ages: every rival write that lands
/// meanwhile makes it lose, and it must read and ask again. The service's tokens go to
/// whoever asks when one is free, so the time a write waits for one is about the readers'
/// asks per second over its own; a write asking many times as often as a read gets the next
/// free token soon after its read (issue 27: with a hundred agents on one record set, writes
/// asking as often as reads lost about six compare-and-swaps each). A write waits so only
/// for as long as the limit is saturated, and Route53 makes no change for a throttled call.
pub const WRITE_BACKOFF: Backoff = Backoff {
    first: Duration::from_millis(50),
    cap: Duration::from_millis(250),
};

/// An exponential backoff: from `first`, doubling, at most `cap`, jittered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub cap: Duration,
}

/// Calls `call` until it is not throttled, for up to `patience`, waiting `backoff` between.
/// Each wait is logged, so a stuck install shows why it waits.
pub async fn patiently<T, F, Fut>(
    operation: &str,
    patience: Duration,
    backoff: Backoff,
    mut call: F,
) -> Result<T, CloudError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, CloudError>>,
{
    let until = Instant::now() + patience;
    let mut attempt = 0;
    loop {
        match call().await {
            Err(e) if e.is_throttled() => {
                attempt += 1;
                let delay = e
                    .retry_after
                    .unwrap_or_else(|| crate::retry::backoff(attempt, backoff.first, backoff.cap));
                if Instant::now() + delay > until {
                    return Err(e);
                }
                tracing::info!(operation, attempt, ?delay, error = %e, "throttled, waiting our turn");
                tokio::time::sleep(delay).await;
            }
            other => return other,
        }
    }
}

/// `inner` with zones remembered and throttled reads retried (see the module's comment).
pub struct PatientDns<D> {
    inner: D,
    zones: Mutex<BTreeMap<ZoneRef, Zone>>,
    patience: Duration,
}

impl<D: DnsProvider> PatientDns<D> {
    pub fn new(inner: D) -> Self {
        Self::with_patience(inner, PATIENCE)
    }

    pub fn with_patience(inner: D, patience: Duration) -> Self {
        Self {
            inner,
            zones: Mutex::new(BTreeMap::new()),
            patience,
        }
    }

    fn remembered(&self, zone: &ZoneRef) -> Option<Zone> {
        self.zones.lock().ok()?.get(zone).cloned()
    }

    fn remember(&self, zone: &Zone) {
        if let Ok(mut zones) = self.zones.lock() {
            zones.insert(zone.reference.clone(), zone.clone());
        }
    }

    /// Forgets `zone` when `result` says it may not be the zone we took it for.
    fn check<T>(&self, zone: &Zone, result: Result<T, CloudError>) -> Result<T, CloudError> {
        if let Err(e) = &result
            && !e.is_transient()
            && let Ok(mut zones) = self.zones.lock()
        {
            zones.remove(&zone.reference);
        }
        result
    }
}

#[async_trait]
impl<D: DnsProvider> DnsProvider for PatientDns<D> {
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
        if let Some(found) = self.remembered(zone) {
            return Ok(found);
        }
        let found = patiently("find zone", self.patience, READ_BACKOFF, || {
            self.inner.find_zone(zone)
        })
        .await?;
        self.remember(&found);
        Ok(found)
    }

    async fn read(&self, zone: &Zone, key: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        let read = patiently("read record set", self.patience, READ_BACKOFF, || {
            self.inner.read(zone, key)
        })
        .await;
        self.check(zone, read)
    }

    async fn read_zone(
        &self,
        zone: &Zone,
        keys: &[RecordKey],
    ) -> Result<BTreeMap<RecordKey, Option<RecordSet>>, CloudError> {
        let read = patiently("read record sets", self.patience, READ_BACKOFF, || {
            self.inner.read_zone(zone, keys)
        })
        .await;
        self.check(zone, read)
    }

    async fn write(&self, write: &RecordWrite<'_>) -> Result<(), CloudError> {
        let written = self.inner.write(write).await;
        self.check(write.zone, written)
    }

    async fn write_zone(&self, writes: &[RecordWrite<'_>]) -> Result<(), CloudError> {
        let written = self.inner.write_zone(writes).await;
        match writes.first() {
            Some(first) => self.check(first.zone, written),
            None => written,
        }
    }
}

#[cfg(test)]
mod tests;
