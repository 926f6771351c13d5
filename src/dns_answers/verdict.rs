//! `dns verify`: the zones as their providers answer now, against what the journal says we
//! wrote. Another writer's values are reported, never a difference; a value of ours that is
//! missing, or the bootstrap IP still answering after its removal, is.

use crate::journal::{JournalState, RecordValues};
use crate::plan::Observed;
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
    /// The bootstrap host's second address (GCP, Azure), answered although the journal says
    /// it was removed with the bootstrap IP (and released).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub second_address_still_answers: Option<IpAddr>,
    /// Another writer's values (left alone, not a difference).
    pub others: Vec<IpAddr>,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.missing.is_empty()
            && self.bootstrap_still_answers.is_none()
            && self.second_address_still_answers.is_none()
    }
}

/// The bootstrap host's addresses that must no longer answer: none until stage 3 removed them
/// from DNS, then its IP and the second address it was seeded with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    pub bootstrap_ip: Option<IpAddr>,
    pub second_address: Option<IpAddr>,
}

impl Removed {
    /// Per the journal; `bootstrap_ip` is the command's (the journal's, or `--bootstrap-ip`).
    pub fn of(recorded: &JournalState, bootstrap_ip: Option<IpAddr>) -> Self {
        if !recorded.bootstrap_removed {
            return Self::default();
        }
        Self {
            bootstrap_ip,
            second_address: recorded.bootstrap_second_address,
        }
    }

    fn contains(&self, ip: IpAddr) -> bool {
        self.bootstrap_ip == Some(ip) || self.second_address == Some(ip)
    }
}

/// PURE: each record set the journal says we wrote, against what the zone holds.
pub fn compare(recorded: &JournalState, observed: &Observed) -> Vec<Verdict> {
    let removed = Removed::of(recorded, recorded.bootstrap_ip);
    compare_with(&recorded.records, &removed, |zone, record| {
        observed
            .records
            .iter()
            .find(|r| r.zone.to_string() == zone && r.key.to_string() == record)
            .and_then(|r| r.current.as_ref())
            .map(|set| set.values.clone())
            .unwrap_or_default()
    })
}

/// PURE: each expected record set against what `answers(zone, record)` says it holds now
/// (empty: it does not exist). The one comparison of `dns verify` and of waiting for the
/// user's DNS: every expected value answers, and the bootstrap host's `removed` addresses
/// (once stage 3 removed them) do not.
pub fn compare_with(
    expected: &[RecordValues],
    removed: &Removed,
    answers: impl Fn(&str, &str) -> BTreeSet<IpAddr>,
) -> Vec<Verdict> {
    expected
        .iter()
        .map(|ours| {
            let answers = answers(&ours.zone, &ours.record);
            let expected: BTreeSet<IpAddr> = ours.values.iter().copied().collect();
            Verdict {
                zone: ours.zone.clone(),
                record: ours.record.clone(),
                missing: expected.difference(&answers).copied().collect(),
                bootstrap_still_answers: removed.bootstrap_ip.filter(|ip| answers.contains(ip)),
                second_address_still_answers: removed
                    .second_address
                    .filter(|ip| answers.contains(ip)),
                others: answers
                    .iter()
                    .filter(|ip| !expected.contains(ip) && !removed.contains(**ip))
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
        out.push_str(&verdict_line(v));
        out.push('\n');
    }
    out
}

/// One record set's verdict: `<zone>: <record>: ok (...)` or what differs.
pub fn verdict_line(v: &Verdict) -> String {
    let mut out = String::new();
    {
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
            if let Some(ip) = v.second_address_still_answers {
                problems.push(format!(
                    "the bootstrap host's second address {ip} still answers (removed and released per the journal)"
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
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// Each record set is read from its own zone and name: another record of the same zone
    /// (or the same name in the other zone) answers nothing for it.
    #[test]
    fn each_record_set_is_compared_with_the_one_of_its_zone_and_name() {
        let (mut recorded, mut observed) = world(&["10.0.1.7"], Some(&["10.0.1.7"]), false);
        let api = RecordKey {
            name: "api.c.example.com".into(),
            rtype: RecordType::A,
        };
        let public = ZoneRef {
            domain: "c.example.com".into(),
            private: false,
            ..Default::default()
        };
        recorded.records.push(RecordValues {
            zone: zone().to_string(),
            record: api.to_string(),
            values: vec![ip("10.0.1.8")],
        });
        // Not there yet: only the same name in the public zone holds that value.
        observed.records.push(ObservedRecord {
            zone: public,
            key: api.clone(),
            current: Some(RecordSet {
                ttl: 30,
                values: BTreeSet::from([ip("10.0.1.8")]),
                version: None,
            }),
        });
        let verdicts = compare(&recorded, &observed);
        assert!(verdicts[0].ok(), "{verdicts:?}");
        assert_eq!(verdicts[1].record, api.to_string());
        assert!(verdicts[1].answers.is_empty(), "{verdicts:?}");
        assert_eq!(verdicts[1].missing, [ip("10.0.1.8")]);
    }
}
