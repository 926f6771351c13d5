//! The planner's tests, by topic; the fixtures and the hand-built cloud they share live here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::assets::{self, Platform, Publish};
use bootstrap_cloud::{IpFamily, RecordSet, Scope};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const BOOTSTRAP: &str = "10.0.0.5";
const OTHER_WRITER: &str = "192.0.2.9";
const STAGE1: [Step; 2] = [Step::Reserve, Step::SeedDns];

fn manifest_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Every asset-dir fixture, by name: a new fixture is covered by the loops below without
/// being listed again.
fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(manifest_path("tests/fixtures/assets"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The fixture's spec with the bootstrap IP set, as the golden tests use it. AWS subnets the
/// fixture leaves to EC2 are settled from [`ec2_facts`], as the provider settles them.
fn spec(name: &str) -> ClusterSpec {
    let mut spec = assets::load(&manifest_path("tests/fixtures/assets").join(name))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    spec.bootstrap_ip = Some(ip(BOOTSTRAP));
    if let Some(lookup) = spec.pending_subnets().cloned()
        && let Platform::Aws(aws) = &mut spec.platform
    {
        aws.subnets = lookup
            .resolve(&spec.infra_id, &aws.region, spec.publish, &ec2_facts(name))
            .unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    }
    spec
}

/// What EC2 reports for the subnets of the AWS fixtures without roles: for the installer's
/// VPC, three public and three private subnets carrying their role tags, plus one tagged for
/// the cluster without a role (not used); for the flat list, the fixture's subnets, private
/// by the VPC's main table (one by an explicit table without a way out) and public by a table
/// routing 0.0.0.0/0 to an internet gateway.
fn ec2_facts(name: &str) -> Vec<bootstrap_cloud::subnets::SubnetFacts> {
    let subnet = |id: &str, zone: &str, tags: &[(&str, &str)], table| {
        crate::assets::tests::subnet_facts(id, "vpc-0a1b2c3d4e5f60000", zone, tags, table)
    };
    let zones = ["us-east-1a", "us-east-1b", "us-east-1c"];
    match name {
        "aws-installer-vpc" | "aws-installer-vpc-one-zone-masters" => {
            let owned = ("kubernetes.io/cluster/mycluster-7xk2p", "owned");
            let mut found = Vec::new();
            for (i, zone) in zones.iter().enumerate() {
                found.push(subnet(
                    &format!("subnet-0c1b2c3d4e5f6000{}", i + 1),
                    zone,
                    &[owned, ("kubernetes.io/role/internal-elb", "1")],
                    None,
                ));
                found.push(subnet(
                    &format!("subnet-0c1b2c3d4e5f6001{}", i + 1),
                    zone,
                    &[owned, ("kubernetes.io/role/elb", "1")],
                    None,
                ));
            }
            found.push(subnet(
                "subnet-0c1b2c3d4e5f60099",
                "us-east-1-bos-1a",
                &[owned],
                None,
            ));
            found
        }
        "aws-flat-subnets" => (1..=3)
            .flat_map(|i| {
                let private_table = if i == 1 {
                    ("rtb-0a1b2c3d4e5f60001", false, None)
                } else {
                    ("rtb-0a1b2c3d4e5f60000", true, None)
                };
                [
                    subnet(
                        &format!("subnet-0a1b2c3d4e5f6000{i}"),
                        zones[i - 1],
                        &[],
                        Some(private_table),
                    ),
                    subnet(
                        &format!("subnet-0a1b2c3d4e5f6001{i}"),
                        zones[i - 1],
                        &[],
                        Some((
                            "rtb-0a1b2c3d4e5f60011",
                            false,
                            Some("igw-0a1b2c3d4e5f60000"),
                        )),
                    ),
                ]
            })
            .collect(),
        other => panic!("no EC2 facts for fixture {other}"),
    }
}

fn render(plan: &Plan, observed: &Observed) -> String {
    format!(
        "{}\n---\n{}",
        plan.to_text(observed),
        serde_json::to_string_pretty(plan).unwrap()
    )
}

// ---- a hand-built cloud ---------------------------------------------------------------------

/// A made-up address for the n-th wanted reservation of this scope/family.
fn fake_ip(key: &ReservationKey, n: usize) -> IpAddr {
    let n = u8::try_from(10 + n).unwrap();
    match (key.scope, key.family) {
        (Scope::Public, IpFamily::Ipv4) => ip(&format!("203.0.113.{n}")),
        (Scope::Private, IpFamily::Ipv4) => ip(&format!("10.0.1.{n}")),
        (Scope::Public, IpFamily::Ipv6) => ip(&format!("2001:db8::{n}")),
        (Scope::Private, IpFamily::Ipv6) => ip(&format!("fd00:10::{n}")),
        (Scope::Bootstrap, IpFamily::Ipv4) => ip(&format!("10.0.2.{n}")),
        (Scope::Bootstrap, IpFamily::Ipv6) => ip(&format!("fd00:20::{n}")),
    }
}

/// Every wanted reservation, as the cloud would report it. Ids are `rsv-10`, `rsv-11`, ...
fn all_reservations(spec: &ClusterSpec) -> Vec<Reservation> {
    desired::reservations(spec)
        .into_iter()
        .enumerate()
        .map(|(n, w)| Reservation {
            ip: fake_ip(&w.key, n),
            id: format!("rsv-{}", 10 + n),
            name: w.name,
            key: w.key,
        })
        .collect()
}

/// The cloud with every wanted reservation and no record (none written yet, or all gone).
fn reserved_only(spec: &ClusterSpec) -> Observed {
    Observed {
        reservations: all_reservations(spec),
        ..Observed::default()
    }
}

/// The given reservations, and every wanted record set holding exactly our values plus `extra`
/// (of the record's family).
fn observed_with(spec: &ClusterSpec, reservations: Vec<Reservation>, extra: &[IpAddr]) -> Observed {
    let mut observed = Observed {
        reservations,
        ..Observed::default()
    };
    let records = desired::records(spec)
        .into_iter()
        .map(|w| {
            let mut values: BTreeSet<IpAddr> = w
                .values
                .iter()
                .map(|v| observed.resolve(v).unwrap())
                .collect();
            values.extend(
                extra
                    .iter()
                    .filter(|ip| IpFamily::of(ip).record_type() == w.key.rtype),
            );
            ObservedRecord {
                zone: w.zone,
                key: w.key,
                current: Some(RecordSet {
                    ttl: DEFAULT_TTL,
                    values,
                    version: None,
                }),
            }
        })
        .collect();
    observed.records = records;
    observed
}

/// The cloud after a successful stage 1.
fn done(spec: &ClusterSpec) -> Observed {
    observed_with(spec, all_reservations(spec), &[])
}

/// One of the plan's notes says `text` (`case` names the case in the failure).
fn assert_noted(plan: &Plan, text: &str, case: &str) {
    assert!(
        plan.notes.iter().any(|n| n.contains(text)),
        "{case}: no note says {text:?}: {:?}",
        plan.notes
    );
}

fn releases(plan: &Plan) -> Vec<&Reservation> {
    plan.changes
        .iter()
        .filter_map(|c| match c {
            Change::ReleaseAddress { reservation, .. } => Some(reservation),
            _ => None,
        })
        .collect()
}

fn reserve_requests(plan: &Plan) -> Vec<&ReserveRequest> {
    plan.changes
        .iter()
        .filter_map(|c| match c {
            Change::ReserveAddress { request } => Some(request),
            _ => None,
        })
        .collect()
}

fn is_reservation(change: &Change) -> bool {
    matches!(
        change,
        Change::ReserveAddress { .. } | Change::ReleaseAddress { .. }
    )
}

mod adopted;
mod bootstrap_ip;
mod dns_reads;
mod dual_stack;
mod golden;
mod rerun_and_ownership;
mod reserve_and_publish;
mod scope;
mod second_address;
mod user_dns;
