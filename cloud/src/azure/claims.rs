//! The pure rules of choosing the private IPv4 among the clusters of one vnet (see
//! `private_ip` for the protocol): what a record says, the verdict on a claim, and the order
//! in which addresses are tried.

use super::subnet::fnv1a;
use serde_json::Value;
use std::net::{IpAddr, Ipv4Addr};

/// The value of a record whose address is still being settled: `claim:<ip>`.
pub(super) const CLAIM: &str = "claim:";
/// The tag names that record a cluster's private IPv4: `<infra-id>-rsvd-private-ipv4`.
const RECORD_SUFFIX: &str = "-rsvd-private-ipv4";

/// What a private-IP record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Recorded {
    Held(IpAddr),
    Claimed(IpAddr),
}

impl Recorded {
    pub(super) fn parse(value: &str) -> Option<Self> {
        match value.strip_prefix(CLAIM) {
            Some(ip) => ip.parse().ok().map(Self::Claimed),
            None => value.parse().ok().map(Self::Held),
        }
    }

    pub(super) fn ip(self) -> IpAddr {
        match self {
            Self::Held(ip) | Self::Claimed(ip) => ip,
        }
    }

    pub(super) fn value(self) -> String {
        match self {
            Self::Held(ip) => ip.to_string(),
            Self::Claimed(ip) => format!("{CLAIM}{ip}"),
        }
    }
}

/// One cluster's private-IPv4 record: a tag on a resource group of the subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Record {
    pub(super) rg: String,
    pub(super) tag: String,
    pub(super) recorded: Recorded,
}

impl Record {
    /// Whether this is the tag `tag` on resource group `rg` (ARM names ignore case).
    pub(super) fn is(&self, tag: &str, rg: &str) -> bool {
        self.tag.eq_ignore_ascii_case(tag) && self.rg.eq_ignore_ascii_case(rg)
    }

    /// The tie-break order: lower goes first.
    fn rank(&self) -> (String, String) {
        rank(&self.tag, &self.rg)
    }
}

fn rank(tag: &str, rg: &str) -> (String, String) {
    (tag.to_ascii_lowercase(), rg.to_ascii_lowercase())
}

/// The private-IPv4 records in a `ResourceGroups_List` answer (`value[].name`, `value[].tags`).
pub(super) fn records_of(groups: &[Value]) -> Vec<Record> {
    let mut records = Vec::new();
    for group in groups {
        let rg = group["name"].as_str().unwrap_or_default();
        for (tag, value) in group["tags"].as_object().into_iter().flatten() {
            if !tag.to_ascii_lowercase().ends_with(RECORD_SUFFIX) {
                continue;
            }
            if let Some(recorded) = value.as_str().and_then(Recorded::parse) {
                records.push(Record {
                    rg: rg.to_string(),
                    tag: tag.clone(),
                    recorded,
                });
            }
        }
    }
    records
}

/// What our claim of `ip` (tag `tag` on resource group `rg`) should do, given every record.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Keep,
    /// Another cluster goes first (why).
    Yield(String),
    /// Only higher-ranked claims (the first of them): they should yield.
    Wait(String),
    /// Our claim is not in the records yet: read again.
    Unseen,
}

pub(super) fn verdict(records: &[Record], tag: &str, rg: &str, ip: IpAddr) -> Verdict {
    if !records
        .iter()
        .any(|r| r.is(tag, rg) && r.recorded == Recorded::Claimed(ip))
    {
        return Verdict::Unseen;
    }
    let rivals: Vec<&Record> = records
        .iter()
        .filter(|r| !r.is(tag, rg) && r.recorded.ip() == ip)
        .collect();
    let describe = |r: &Record| format!("tag {}={} on {}", r.tag, r.recorded.value(), r.rg);
    if let Some(holder) = rivals
        .iter()
        .find(|r| matches!(r.recorded, Recorded::Held(_)))
    {
        return Verdict::Yield(format!("{} holds it", describe(holder)));
    }
    let ours = rank(tag, rg);
    if let Some(first) = rivals.iter().find(|r| r.rank() < ours) {
        return Verdict::Yield(format!("{} claims it too and ranks first", describe(first)));
    }
    match rivals.first() {
        None => Verdict::Keep,
        Some(r) => Verdict::Wait(describe(r)),
    }
}

/// The order in which the addresses of `network/len` are tried in `round`: the upper half of
/// the usable range (Azure keeps the first four and the last address), away from the low
/// addresses Azure hands to new NICs, from an offset hashed from the infra id and the round,
/// down and around; then the lower half from the top down.
pub(super) fn candidates(
    network: Ipv4Addr,
    len: u32,
    infra_id: &str,
    round: u32,
) -> impl Iterator<Item = Ipv4Addr> {
    let base = u32::from(network);
    let size = 1u32 << (32 - len.clamp(2, 29));
    let (low, high) = ((size / 2).max(4), size - 2);
    let span = high - low + 1;
    let mut seed = infra_id.as_bytes().to_vec();
    seed.extend_from_slice(&round.to_be_bytes());
    let start = u32::try_from(fnv1a(&seed) % u64::from(span)).unwrap_or(0);
    let upper = (0..span).map(move |i| low + (start + span - i) % span);
    upper
        .chain((4..low).rev())
        .map(move |offset| Ipv4Addr::from(base + offset))
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
