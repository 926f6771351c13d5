//! `dns verify`: the zones as their providers answer now, against what the journal says we
//! wrote. Another writer's values are reported, never a difference; a value of ours that is
//! missing, or the bootstrap IP still answering after its removal, is.

use super::{Common, Output};
use crate::context::{Cloud, Reading};
use crate::journal::JournalState;
use crate::output;
use crate::plan::Observed;
use anyhow::{Result, bail};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::net::IpAddr;

/// One record set: what we expect of it and what it answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub zone: String,
    pub record: String,
    /// Our values, per the journal.
    pub expected: Vec<IpAddr>,
    /// What the record set holds now (empty: it does not exist).
    pub answers: Vec<IpAddr>,
    /// Ours, not answered.
    pub missing: Vec<IpAddr>,
    /// The bootstrap IP, answered although the journal says it was removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_still_answers: Option<IpAddr>,
    /// Another writer's values (left alone, not a difference).
    pub others: Vec<IpAddr>,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.missing.is_empty() && self.bootstrap_still_answers.is_none()
    }
}

/// PURE: each record set the journal says we wrote, against what the zone holds.
pub fn compare(recorded: &JournalState, observed: &Observed) -> Vec<Verdict> {
    let removed_bootstrap = recorded
        .bootstrap_removed
        .then_some(recorded.bootstrap_ip)
        .flatten();
    recorded
        .records
        .iter()
        .map(|ours| {
            let answers: BTreeSet<IpAddr> = observed
                .records
                .iter()
                .find(|r| r.zone.to_string() == ours.zone && r.key.to_string() == ours.record)
                .and_then(|r| r.current.as_ref())
                .map(|set| set.values.clone())
                .unwrap_or_default();
            let expected: BTreeSet<IpAddr> = ours.values.iter().copied().collect();
            Verdict {
                zone: ours.zone.clone(),
                record: ours.record.clone(),
                missing: expected.difference(&answers).copied().collect(),
                bootstrap_still_answers: removed_bootstrap.filter(|ip| answers.contains(ip)),
                others: answers
                    .iter()
                    .filter(|ip| !expected.contains(ip) && Some(**ip) != removed_bootstrap)
                    .copied()
                    .collect(),
                expected: expected.into_iter().collect(),
                answers: answers.into_iter().collect(),
            }
        })
        .collect()
}

fn list(ips: &[IpAddr]) -> String {
    ips.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn to_text(verdicts: &[Verdict]) -> String {
    let mut out = String::new();
    for v in verdicts {
        let _ = write!(out, "{}: {}: ", v.zone, v.record);
        if v.ok() {
            let _ = write!(out, "ok ({})", list(&v.expected));
        } else {
            let mut problems = Vec::new();
            if !v.missing.is_empty() {
                problems.push(format!("MISSING {}", list(&v.missing)));
            }
            if let Some(ip) = v.bootstrap_still_answers {
                problems.push(format!(
                    "the bootstrap IP {ip} still answers (removed per the journal)"
                ));
            }
            let _ = write!(
                out,
                "{}; answers [{}]",
                problems.join("; "),
                list(&v.answers)
            );
        }
        if !v.others.is_empty() {
            let _ = write!(out, "; also answers (another writer's) {}", list(&v.others));
        }
        out.push('\n');
    }
    out
}

pub async fn command(common: &Common) -> Result<()> {
    let reading = Reading::new(common, Cloud::Observe).await?;
    if let Some(because) = reading.spec.user_managed_dns() {
        bail!(
            "DNS is yours ({because}): the agent reads no zone; `plan` and `status` print the records to create"
        );
    }
    if reading.recorded.records.is_empty() {
        return output::write_stdout(
            "nothing to verify: the journal holds no record values of ours\n",
        );
    }
    let verdicts = compare(&reading.recorded, &reading.observe().await?);
    match common.output {
        Output::Text => output::write_stdout(&to_text(&verdicts))?,
        other => output::data(other, &verdicts)?,
    }
    let differing = verdicts.iter().filter(|v| !v.ok()).count();
    if differing > 0 {
        bail!("{differing} record set(s) differ from the journal");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::RecordValues;
    use crate::plan::ObservedRecord;
    use bootstrap_cloud::{RecordKey, RecordSet, RecordType, ZoneRef};

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn zone() -> ZoneRef {
        ZoneRef {
            domain: "c.example.com".into(),
            private: true,
            ..Default::default()
        }
    }

    fn key() -> RecordKey {
        RecordKey {
            name: "api-int.c.example.com".into(),
            rtype: RecordType::A,
        }
    }

    fn world(ours: &[&str], answers: Option<&[&str]>, removed: bool) -> (JournalState, Observed) {
        let mut recorded = JournalState {
            bootstrap_ip: Some(ip("10.0.0.5")),
            bootstrap_removed: removed,
            ..JournalState::default()
        };
        recorded.records = vec![RecordValues {
            zone: zone().to_string(),
            record: key().to_string(),
            values: ours.iter().map(|s| ip(s)).collect(),
        }];
        let observed = Observed {
            records: vec![ObservedRecord {
                zone: zone(),
                key: key(),
                current: answers.map(|a| RecordSet {
                    ttl: 30,
                    values: a.iter().map(|s| ip(s)).collect(),
                    version: None,
                }),
            }],
            ..Observed::default()
        };
        (recorded, observed)
    }

    #[test]
    fn the_zone_holding_our_values_and_others_is_ok() {
        let (recorded, observed) = world(
            &["10.0.0.5", "10.0.1.7"],
            Some(&["10.0.0.5", "10.0.1.7", "10.9.9.9"]),
            false,
        );
        let v = &compare(&recorded, &observed)[0];
        assert!(v.ok(), "{v:?}");
        assert_eq!(v.others, [ip("10.9.9.9")]);
        assert_eq!(
            to_text(std::slice::from_ref(v)),
            "private zone c.example.com: api-int.c.example.com A: ok (10.0.0.5, 10.0.1.7); also answers (another writer's) 10.9.9.9\n"
        );
    }

    #[test]
    fn a_missing_value_of_ours_or_a_missing_set_is_a_difference() {
        let (recorded, observed) = world(&["10.0.0.5", "10.0.1.7"], Some(&["10.0.0.5"]), false);
        let v = &compare(&recorded, &observed)[0];
        assert!(!v.ok());
        assert_eq!(v.missing, [ip("10.0.1.7")]);
        assert!(to_text(std::slice::from_ref(v)).contains("MISSING 10.0.1.7; answers [10.0.0.5]"));
        let (recorded, observed) = world(&["10.0.1.7"], None, false);
        assert_eq!(compare(&recorded, &observed)[0].missing, [ip("10.0.1.7")]);
    }

    #[test]
    fn the_bootstrap_ip_answering_after_its_removal_is_a_difference() {
        let (recorded, observed) = world(&["10.0.1.7"], Some(&["10.0.0.5", "10.0.1.7"]), true);
        let v = &compare(&recorded, &observed)[0];
        assert_eq!(v.bootstrap_still_answers, Some(ip("10.0.0.5")));
        assert!(
            v.others.is_empty(),
            "the bootstrap IP is not another writer's: {v:?}"
        );
        assert!(!v.ok());
        // Before the removal it is one of our values like any other.
        let (recorded, observed) = world(
            &["10.0.0.5", "10.0.1.7"],
            Some(&["10.0.0.5", "10.0.1.7"]),
            false,
        );
        assert!(compare(&recorded, &observed)[0].ok());
    }
}
