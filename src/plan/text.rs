//! The plan as a person reads it: one line per change, grouped as they will be applied.

use super::{Change, Observed, Plan, UserRecord, Value};
use std::fmt::Write;

/// One record set to hold, as `plan`, `dns seed` and `dns records` print it:
/// `<zone>: <name> <type> ttl <ttl> = <values>`.
pub fn record_line(r: &UserRecord, observed: &Observed) -> String {
    format!(
        "{}: {} ttl {} = {}",
        r.zone,
        r.record,
        r.ttl,
        join(r.values.iter().map(|v| resolved(v, observed)))
    )
}

impl Plan {
    /// Renders the plan; `observed` fills in what a symbolic value resolves to today.
    pub fn to_text(&self, observed: &Observed) -> String {
        let mut out = String::new();
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        if !self.network.is_empty() {
            out.push_str("network:\n");
            for v in &self.network {
                let _ = match &v.classified_by {
                    Some(by) => writeln!(out, "  {} {}: {}; by {by}", v.name, v.value, v.source),
                    None => writeln!(out, "  {} {}: {}", v.name, v.value, v.source),
                };
            }
        }
        if let Some(pool) = &self.public_ipv4_pool {
            let _ = writeln!(out, "{}", pool.line());
        }
        if !self.adopted.is_empty() {
            out.push_str("reservations you made (never released or changed by the agent):\n");
            for r in &self.adopted {
                let _ = writeln!(
                    out,
                    "  = {} {} {} {}: adopted (yours)",
                    r.key, r.name, r.id, r.ip
                );
            }
        }
        if let Some(user) = &self.user_dns {
            let _ = writeln!(
                out,
                "user-managed DNS ({}): the agent writes no DNS record and looks up no zone; create these records in your DNS:",
                user.because
            );
            for r in &user.records {
                let _ = writeln!(out, "  {}", record_line(r, observed));
            }
            if user
                .records
                .iter()
                .flat_map(|r| &r.values)
                .any(|v| observed.resolve(v).is_none())
            {
                out.push_str("  <...>: an IP `reserve` has not reserved yet; `plan` prints it once it exists\n");
            }
            if let Some(ip) = user.bootstrap_ip {
                let _ = writeln!(
                    out,
                    "  then remove {ip} from {} once the gate passed (phase gate-passed), as `dns teardown` does in cloud DNS",
                    holding(
                        user.records
                            .iter()
                            .map(|r| (r.record.name.as_str(), r.values.contains(&Value::Ip(ip))))
                    )
                );
            }
            out.push_str("  after a failed install (`teardown --all`), delete these records\n");
        }
        if self.changes.is_empty() {
            out.push_str("no changes: everything is in place\n");
            return out;
        }
        let _ = writeln!(out, "{} change(s):", self.changes.len());
        for change in &self.changes {
            let _ = match change {
                Change::ReserveAddress { request } => {
                    let place = request
                        .key
                        .placement
                        .as_ref()
                        .and_then(|p| observed.placements.get(p))
                        .map(|p| format!(" ({}, {})", p.zone, p.network))
                        .unwrap_or_default();
                    writeln!(out, "  + reserve {} {}{place}", request.key, request.name)
                }
                Change::ReleaseAddress {
                    reservation,
                    reason,
                } => writeln!(
                    out,
                    "  - release {} {} {} [{}]",
                    reservation.key, reservation.id, reservation.ip, reason
                ),
                Change::HandOverAddress { reservation } => writeln!(
                    out,
                    "  ~ hand over {} {} {} to its load balancer",
                    reservation.key, reservation.id, reservation.ip
                ),
                Change::AddRecordValues {
                    zone,
                    record,
                    values,
                    ttl,
                } => writeln!(
                    out,
                    "  + dns {zone}: {record} ttl {ttl} add {}",
                    join(values.iter().map(|v| resolved(v, observed)))
                ),
                Change::RemoveRecordValues {
                    zone,
                    record,
                    values,
                } => writeln!(
                    out,
                    "  - dns {zone}: {record} remove {}",
                    join(values.iter().map(|v| resolved(v, observed)))
                ),
                Change::EditZone { zone, records } => writeln!(
                    out,
                    "  ~ dns {zone}: one change of {} record set(s)",
                    records.len()
                ),
                Change::SetCapabilities { capabilities } => writeln!(
                    out,
                    "  ~ capabilities ClusterVersion version: baseline {}, additional [{}]",
                    capabilities.baseline,
                    capabilities.additional.join(",")
                ),
                Change::DeleteService { service } => writeln!(
                    out,
                    "  - service {}/{} (ours, from {}): {}",
                    service.namespace,
                    service.name,
                    service.template,
                    match service.deleting {
                        true => "being deleted already: waited out until its load balancer is gone",
                        false => "deleted so its load balancer lets go of the addresses",
                    }
                ),
                Change::ReplaceService {
                    service,
                    changed,
                    deleting,
                    ..
                } => writeln!(
                    out,
                    "  -/+ service {}/{} from {}: replaced, as its load balancer never changes its addresses{}: {}, its load balancer waited out, applied anew",
                    service.namespace,
                    service.name,
                    service.template,
                    match changed.is_empty() {
                        true => " (a replacement interrupted)".to_string(),
                        false => format!(" ({} changed)", changed.join(", ")),
                    },
                    match deleting {
                        true => "being deleted already",
                        false => "deleted",
                    }
                ),
                Change::ApplyService { service } if service.delete => writeln!(
                    out,
                    "  - service {}/{} (deleted, as {} asks)",
                    service.namespace, service.name, service.template
                ),
                Change::ApplyService { service } => writeln!(
                    out,
                    "  + service {}/{} from {}{}",
                    service.namespace,
                    service.name,
                    service.template,
                    if service.claims.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " claims {}",
                            join(service.claims.iter().map(|v| resolved(v, observed)))
                        )
                    }
                ),
            };
        }
        out
    }
}

fn resolved(value: &super::Value, observed: &Observed) -> String {
    match (value, observed.resolve(value)) {
        (super::Value::Reserved(key), Some(ip)) => format!("{ip} <{key}>"),
        _ => value.to_string(),
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

/// Of `records` (a record's name, whether it holds the IP), the short names of those that
/// hold it: `api and api-int` (not Azure's api-int beside the bootstrap host's second address).
pub(crate) fn holding<'a>(records: impl IntoIterator<Item = (&'a str, bool)>) -> String {
    let mut names: Vec<&str> = Vec::new();
    for (name, holds) in records {
        let host = name.split('.').next().unwrap_or_default();
        if holds && !names.contains(&host) {
            names.push(host);
        }
    }
    names.join(" and ")
}
