//! The exact record sets (what `dns records` prints): `api` / `api-int` must hold at this point of the
//! install, from the journal (no cloud call): the bootstrap IP and the reserved IPs while the
//! bootstrap host serves, the reserved IPs alone once the bootstrap IP was removed. The values
//! come from the planner's `records_to_hold`, the one code path behind what `plan`, `dns seed`
//! and `status` print, in both DNS modes: with user-managed DNS they are the records to create
//! or change; with cloud DNS, what the agent writes.

use crate::assets::ClusterSpec;
use crate::journal::{JournalState, RecordValues};
use crate::plan::{Observed, UserRecord, Value, record_line, records_to_hold};
use serde::Serialize;
use std::fmt::Write as _;
use std::net::IpAddr;

/// What `dns records --output json` prints (schema in docs/inputs.md "User-managed DNS").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordsNow {
    /// `user`: you create and change them; `agent`: the agent writes them into the cloud's zones.
    pub written_by: &'static str,
    /// Why DNS is yours (the input that says so); absent with cloud DNS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
    pub bootstrap_ip: Option<IpAddr>,
    /// The bootstrap IP left (or must leave) `api` / `api-int`: the gate passed and the
    /// bootstrap IP was removed (`dns teardown`, `run`'s remove-bootstrap step).
    pub bootstrap_removed: bool,
    pub records: Vec<RecordSetNow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordSetNow {
    /// The zone's domain.
    pub zone: String,
    /// `private` or `public`.
    pub visibility: &'static str,
    /// The zone's id when the assets name it (DNS manifest, install-config).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
    /// Fully qualified, no trailing dot.
    pub name: String,
    /// `A` or `AAAA`.
    #[serde(rename = "type")]
    pub rtype: String,
    pub ttl: u32,
    /// Exactly the values the record set must hold.
    pub values: Vec<IpAddr>,
    /// Reservations not made yet (`reserve` makes them): their IPs join `values` then.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
}

/// What the journal knows of the reservations, as an observation: no cloud call.
pub fn journal_view(recorded: &JournalState) -> Observed {
    Observed {
        reservations: recorded.reservations.clone(),
        handed_over: recorded.handed_over.clone(),
        adopted: recorded.adopted.clone(),
        ..Observed::default()
    }
}

/// The record sets at this point of the install, per the journal.
pub fn records_now(spec: &ClusterSpec, recorded: &JournalState) -> Vec<UserRecord> {
    let observed = journal_view(recorded);
    if !recorded.bootstrap_removed {
        return records_to_hold(spec, &observed);
    }
    // Stage 3 took the bootstrap host out: its IP, and its second address, which is never
    // wanted again (the rule `context` applies when a command starts; a command that just ran
    // stage 3 started before it).
    let mut spec = spec.clone();
    spec.second_bootstrap_address = crate::assets::SecondAddress::Off;
    let removed = [spec.bootstrap_ip, recorded.bootstrap_second_address];
    records_to_hold(&spec, &observed)
        .into_iter()
        .map(|mut r| {
            r.values
                .retain(|v| !matches!(v, Value::Ip(ip) if removed.contains(&Some(*ip))));
            r
        })
        .collect()
}

/// Each record set's IPs (values not reserved yet left out), as `dns verify` compares them.
pub fn expected_values(records: &[UserRecord]) -> Vec<RecordValues> {
    RecordValues::of_records(records, &Observed::default())
}

pub fn report(spec: &ClusterSpec, recorded: &JournalState) -> RecordsNow {
    let records = records_now(spec, recorded)
        .into_iter()
        .map(|r| {
            let (values, pending) = split(&r.values);
            RecordSetNow {
                zone: r.zone.domain.clone(),
                visibility: if r.zone.private { "private" } else { "public" },
                zone_id: r.zone.id.clone(),
                name: r.record.name.clone(),
                rtype: r.record.rtype.to_string(),
                ttl: r.ttl,
                values,
                pending,
            }
        })
        .collect();
    RecordsNow {
        written_by: if spec.user_managed_dns().is_some() {
            "user"
        } else {
            "agent"
        },
        because: spec.user_managed_dns().map(str::to_string),
        bootstrap_ip: spec.bootstrap_ip,
        bootstrap_removed: recorded.bootstrap_removed,
        records,
    }
}

fn split(values: &[Value]) -> (Vec<IpAddr>, Vec<String>) {
    let mut ips = Vec::new();
    let mut pending = Vec::new();
    for v in values {
        match v {
            Value::Ip(ip) => ips.push(*ip),
            Value::Reserved(key) => pending.push(key.to_string()),
        }
    }
    (ips, pending)
}

pub fn to_text(spec: &ClusterSpec, recorded: &JournalState) -> String {
    let mut out = String::new();
    match spec.user_managed_dns() {
        Some(because) => {
            let _ = writeln!(
                out,
                "user-managed DNS ({because}): create or change these records in your DNS so they hold exactly:"
            );
        }
        None => out.push_str("cloud DNS: the agent writes these records (our values):\n"),
    }
    let observed = journal_view(recorded);
    let records = records_now(spec, recorded);
    for r in &records {
        let _ = writeln!(out, "  {}", record_line(r, &observed));
    }
    if records
        .iter()
        .flat_map(|r| &r.values)
        .any(|v| matches!(v, Value::Reserved(_)))
    {
        out.push_str("  <...>: an IP `reserve` has not reserved yet\n");
    }
    if let Some(ip) = spec.bootstrap_ip {
        let _ = writeln!(
            out,
            "  {}",
            if recorded.bootstrap_removed {
                format!("the gate passed: {ip} is out of api and api-int")
            } else {
                format!("next: {ip} leaves api and api-int once the gate passed")
            }
        );
    }
    out
}

#[cfg(test)]
#[path = "records_tests.rs"]
pub(crate) mod tests;
