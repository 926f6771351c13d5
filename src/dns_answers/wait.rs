//! Waiting for DNS the user manages (`--dns-wait`): after a stage printed the records to create
//! or change, the agent reads them back until they answer, then moves on. It reads the zone as
//! the cloud's API answers (the same zone lookup as cloud DNS: "Where the records go"), or the
//! host's resolver (`--dns-check resolver`) when the user's DNS is elsewhere. It writes nothing
//! and journals nothing: a wait is not a mutation. Polled with a growing delay that starts
//! again short whenever the answers change (someone is at work), bounded by the step deadline.

use super::records::{expected_values, records_now};
use super::verdict::{Removed, Verdict, compare_with, verdict_line};
use crate::assets::ClusterSpec;
use crate::error::InputError;
use crate::journal::{JournalState, RecordValues};
use crate::plan::{UserRecord, Value};
use anyhow::{Result, bail};
use async_trait::async_trait;
use bootstrap_cloud::{CloudError, DnsProvider, ErrorKind, RecordKey, RecordType, Zone, ZoneRef};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;
use tokio::sync::Mutex;

/// The delays between two reads: `first` after a change, doubling up to `max` while nothing
/// changes.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub first: Duration,
    pub max: Duration,
}

impl Pace {
    pub const DEFAULT: Pace = Pace {
        first: Duration::from_secs(1),
        max: Duration::from_secs(10),
    };
}

/// `--dns-check`: whose view of the records counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DnsCheck {
    /// The zone as the cloud's DNS API answers (Route53 ListResourceRecordSets, Cloud DNS
    /// rrsets, Azure DNS record sets).
    #[default]
    Zone,
    /// The host's resolver (getaddrinfo): for DNS outside the cloud; sees what clients see,
    /// caches included.
    Resolver,
}

/// `--dns-wait` and `--dns-check` of `dns seed`, `dns teardown` and `run`.
#[derive(Debug, Clone, clap::Args)]
pub struct DnsWaitArgs {
    /// User-managed DNS: after printing the records of a stage, wait (up to the step deadline)
    /// until they answer before moving on. Without it the records are printed and the command
    /// goes on (exit 0, for scripting).
    #[arg(long, env = "BOOTSTRAP_AGENT_DNS_WAIT", value_parser = crate::options::switch())]
    pub dns_wait: bool,
    /// Where the wait reads the records: the cloud's zone (found as in cloud DNS) or the
    /// host's resolver.
    #[arg(
        long,
        env = "BOOTSTRAP_AGENT_DNS_CHECK",
        default_value = "zone",
        value_parser = crate::options::one_of(DnsCheck::Zone)
    )]
    pub dns_check: DnsCheck,
}

impl DnsWaitArgs {
    /// `--dns-wait` waits for the user's DNS only: with cloud DNS it is bad input.
    pub fn check(&self, assets: &Path, spec: &ClusterSpec) -> Result<Option<DnsCheck>, InputError> {
        match (self.dns_wait, spec.user_managed_dns()) {
            (false, _) => Ok(None),
            (true, Some(_)) => Ok(Some(self.dns_check)),
            (true, None) => Err(InputError::new(
                assets,
                "--dns-wait",
                "is for user-managed DNS (--dns manual, or userProvisionedDNS: Enabled); with cloud DNS the agent writes the records itself",
            )),
        }
    }
}

/// What one record set answers now.
#[async_trait]
pub trait Answers: Send + Sync {
    async fn answers(
        &self,
        zone: &ZoneRef,
        key: &RecordKey,
    ) -> Result<BTreeSet<IpAddr>, CloudError>;
}

/// The zone's view, through the cloud's DNS provider (reads only). Zones found once.
pub struct ZoneAnswers<'a> {
    dns: &'a dyn DnsProvider,
    zones: Mutex<BTreeMap<ZoneRef, Zone>>,
}

impl<'a> ZoneAnswers<'a> {
    pub fn new(dns: &'a dyn DnsProvider) -> Self {
        Self {
            dns,
            zones: Mutex::new(BTreeMap::new()),
        }
    }
}

#[async_trait]
impl Answers for ZoneAnswers<'_> {
    async fn answers(
        &self,
        zone: &ZoneRef,
        key: &RecordKey,
    ) -> Result<BTreeSet<IpAddr>, CloudError> {
        let mut zones = self.zones.lock().await;
        if !zones.contains_key(zone) {
            let found = self.dns.find_zone(zone).await?;
            zones.insert(zone.clone(), found);
        }
        let set = self.dns.read(&zones[zone], key).await?;
        Ok(set.map(|s| s.values).unwrap_or_default())
    }
}

/// The host resolver's view: what `getaddrinfo` answers for the name, of the record's family.
/// A name that does not resolve answers nothing.
pub struct ResolverAnswers;

#[async_trait]
impl Answers for ResolverAnswers {
    async fn answers(
        &self,
        _zone: &ZoneRef,
        key: &RecordKey,
    ) -> Result<BTreeSet<IpAddr>, CloudError> {
        let found = match tokio::net::lookup_host((key.name.as_str(), 0)).await {
            Ok(addrs) => addrs.map(|a| a.ip()).collect::<Vec<_>>(),
            Err(e) => {
                tracing::debug!(name = %key.name, error = %e, "the resolver has no answer");
                Vec::new()
            }
        };
        Ok(found
            .into_iter()
            .filter(|ip| match key.rtype {
                RecordType::A => ip.is_ipv4(),
                RecordType::Aaaa => ip.is_ipv6(),
            })
            .collect())
    }
}

/// The view `check` names.
pub fn view<'a>(check: DnsCheck, dns: &'a dyn DnsProvider) -> Box<dyn Answers + 'a> {
    match check {
        DnsCheck::Zone => Box::new(ZoneAnswers::new(dns)),
        DnsCheck::Resolver => Box::new(ResolverAnswers),
    }
}

/// Reads every record set once; a record set that cannot be read is an error per record.
pub async fn read(
    records: &[UserRecord],
    view: &dyn Answers,
) -> BTreeMap<(String, String), Result<BTreeSet<IpAddr>, CloudError>> {
    let mut out = BTreeMap::new();
    for r in records {
        let answers = view.answers(&r.zone, &r.record).await;
        out.insert((r.zone.to_string(), r.record.to_string()), answers);
    }
    out
}

/// The verdicts on what `read` found: a record set that could not be read answers nothing.
pub fn verdicts(
    expected: &[RecordValues],
    removed: &Removed,
    read: &BTreeMap<(String, String), Result<BTreeSet<IpAddr>, CloudError>>,
) -> Vec<Verdict> {
    compare_with(expected, removed, |zone, record| {
        match read.get(&(zone.to_string(), record.to_string())) {
            Some(Ok(set)) => set.clone(),
            _ => BTreeSet::new(),
        }
    })
}

/// What the wait is waiting for, in one line (STATUS= and the log).
fn waiting_line(
    stage: &str,
    verdicts: &[Verdict],
    read: &BTreeMap<(String, String), Result<BTreeSet<IpAddr>, CloudError>>,
) -> String {
    let mut parts: Vec<String> = verdicts
        .iter()
        .filter(|v| !v.ok())
        .map(verdict_line)
        .collect();
    parts.extend(
        read.values()
            .filter_map(|r| r.as_ref().err())
            .map(|e| e.to_string()),
    );
    format!("waiting for your DNS ({stage}): {}", parts.join("; "))
}

/// After `stage` ran: waits until the records as they must be now (per the journal) answer,
/// telling `status` what it waits for; an error at `deadline`, or at once when a read fails for
/// a reason waiting cannot fix (permissions).
pub async fn until_answered(
    spec: &ClusterSpec,
    recorded: &JournalState,
    view: &dyn Answers,
    stage: &str,
    deadline: Duration,
    pace: Pace,
    status: impl Fn(&str),
) -> Result<()> {
    let records = records_now(spec, recorded);
    let pending: Vec<String> = records
        .iter()
        .flat_map(|r| &r.values)
        .filter_map(|v| match v {
            Value::Reserved(key) => Some(key.to_string()),
            Value::Ip(_) => None,
        })
        .collect();
    if !pending.is_empty() {
        bail!(
            "cannot wait for your DNS: {} not reserved yet; run `bootstrap-agent reserve` first",
            pending.join(", ")
        );
    }
    // `run` prints nothing else: the records to create go to its log first.
    tracing::info!("{}", super::records::to_text(spec, recorded).trim_end());
    let removed = Removed::of(recorded, spec.bootstrap_ip);
    let expected = expected_values(&records);
    let mut last = String::new();
    let waited = tokio::time::timeout(deadline, async {
        let mut delay = pace.first;
        let mut seen: Option<Vec<Verdict>> = None;
        loop {
            let read = read(&records, view).await;
            if let Some(fatal) = read
                .values()
                .filter_map(|r| r.as_ref().err())
                .find(|e| e.kind == ErrorKind::Fatal)
            {
                return Err(anyhow::Error::new(fatal.clone())
                    .context(format!("waiting for your DNS ({stage})")));
            }
            let verdicts = verdicts(&expected, &removed, &read);
            if read.values().all(Result::is_ok) && verdicts.iter().all(Verdict::ok) {
                return Ok(());
            }
            let line = waiting_line(stage, &verdicts, &read);
            if line != last {
                tracing::info!("{line}");
                status(&line);
                last = line;
            }
            // Something changed since the last read: someone is at work, look again soon.
            delay = match &seen {
                Some(before) if *before == verdicts => (delay * 2).min(pace.max),
                _ => pace.first,
            };
            seen = Some(verdicts);
            tokio::time::sleep(delay).await;
        }
    })
    .await;
    match waited {
        Ok(done) => done,
        Err(_) => bail!(
            "your DNS did not answer within the step deadline ({}); last seen: {last}",
            humantime::format_duration(deadline)
        ),
    }
}

#[cfg(test)]
#[path = "wait_tests.rs"]
mod tests;
