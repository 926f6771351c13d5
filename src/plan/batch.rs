//! PURE: the plan's record changes grouped as the runner writes them. A phase (the seed, the
//! joins of one gate pass, the removal) changes a few record sets in one or two zones; each
//! zone's share goes in one change, so the phase waits for one propagation per zone, and the
//! zones are written at once (issue 27: 3 waits on AWS's critical path instead of 7).

use super::Change;
use bootstrap_cloud::ZoneRef;

fn zone_of(change: &Change) -> Option<&ZoneRef> {
    match change {
        Change::AddRecordValues { zone, .. } | Change::RemoveRecordValues { zone, .. } => {
            Some(zone)
        }
        _ => None,
    }
}

/// `changes` with every run of consecutive record changes replaced by one
/// [`Change::EditZone`] per zone (zones in the order they first appear, records in plan
/// order). Other changes keep their place: a release planned after the record removals
/// still comes after them.
pub fn batched(changes: &[Change]) -> Vec<Change> {
    let mut out: Vec<Change> = Vec::new();
    // Where the current run of record changes started in `out`.
    let mut run_start: Option<usize> = None;
    for change in changes {
        let Some(zone) = zone_of(change) else {
            run_start = None;
            out.push(change.clone());
            continue;
        };
        let start = *run_start.get_or_insert(out.len());
        let batch = out[start..].iter_mut().find_map(|c| match c {
            Change::EditZone { zone: z, records } if z == zone => Some(records),
            _ => None,
        });
        match batch {
            Some(records) => records.push(change.clone()),
            None => out.push(Change::EditZone {
                zone: zone.clone(),
                records: vec![change.clone()],
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Value;
    use bootstrap_cloud::{IpFamily, RecordKey, RecordType, Reservation, ReservationKey, Scope};

    fn zone(private: bool) -> ZoneRef {
        ZoneRef {
            domain: "example.com".into(),
            private,
            id: None,
            tags: Default::default(),
        }
    }

    fn add(private: bool, name: &str) -> Change {
        Change::AddRecordValues {
            zone: zone(private),
            record: RecordKey {
                name: name.into(),
                rtype: RecordType::A,
            },
            values: vec![Value::Ip("10.0.0.5".parse().unwrap())],
            ttl: 60,
        }
    }

    fn remove(private: bool, name: &str) -> Change {
        Change::RemoveRecordValues {
            zone: zone(private),
            record: RecordKey {
                name: name.into(),
                rtype: RecordType::A,
            },
            values: vec![Value::Ip("10.0.0.9".parse().unwrap())],
        }
    }

    fn release() -> Change {
        let reservation = Reservation {
            key: ReservationKey {
                scope: Scope::Private,
                family: IpFamily::Ipv4,
                placement: None,
            },
            id: "eipalloc-1".into(),
            name: "rsvd".into(),
            ip: "10.0.0.5".parse().unwrap(),
        };
        Change::ReleaseAddress {
            reservation,
            reason: "teardown --all".into(),
        }
    }

    #[test]
    fn the_records_of_one_zone_go_in_one_change_per_zone_in_order() {
        let plan = [
            add(true, "api-int.example.com"),
            add(false, "api.example.com"),
            add(true, "api.example.com"),
        ];
        assert_eq!(
            batched(&plan),
            vec![
                Change::EditZone {
                    zone: zone(true),
                    records: vec![plan[0].clone(), plan[2].clone()],
                },
                Change::EditZone {
                    zone: zone(false),
                    records: vec![plan[1].clone()],
                },
            ]
        );
    }

    #[test]
    fn other_changes_keep_their_place_and_end_a_batch() {
        let plan = [
            remove(true, "api.example.com"),
            remove(true, "api-int.example.com"),
            release(),
            remove(true, "x.example.com"),
        ];
        let out = batched(&plan);
        assert_eq!(out.len(), 3, "{out:#?}");
        assert_eq!(
            out[0],
            Change::EditZone {
                zone: zone(true),
                records: plan[..2].to_vec(),
            }
        );
        assert_eq!(out[1], plan[2], "the release stays after the removals");
        assert_eq!(
            out[2],
            Change::EditZone {
                zone: zone(true),
                records: vec![plan[3].clone()],
            }
        );
        assert!(batched(&[]).is_empty());
    }
}
