#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::assets::{self, Platform, Publish};
use bootstrap_cloud::{IpFamily, RecordSet, Scope};
use std::path::{Path, PathBuf};

const FIXTURES: [&str; 17] = [
    "aws",
    "aws-manual-creds",
    "aws-internal",
    "aws-dualstack",
    "aws-installer-vpc",
    "aws-flat-subnets",
    "aws-user-dns",
    "azure",
    "azure-dualstack",
    "azure-default-network",
    "azure-mixed-api-external",
    "azure-mixed-api-internal",
    "gcp",
    "gcp-dualstack",
    "gcp-default-network",
    "gcp-shared-vpc",
    "none",
];
const BOOTSTRAP: &str = "10.0.0.5";
const OTHER_WRITER: &str = "192.0.2.9";
const STAGE1: [Stage; 2] = [Stage::Reserve, Stage::SeedDns];

fn manifest_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
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
    use bootstrap_cloud::subnets::{RouteTableFacts, SubnetFacts};
    let subnet = |id: &str,
                  zone: &str,
                  tags: &[(&str, &str)],
                  table: Option<(&str, bool, Option<&str>)>| SubnetFacts {
        id: id.into(),
        vpc: "vpc-0a1b2c3d4e5f60000".into(),
        zone: zone.into(),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        route_table: table.map(|(id, main, igw)| RouteTableFacts {
            id: id.into(),
            main,
            internet_gateway: igw.map(str::to_string),
        }),
    };
    let zones = ["us-east-1a", "us-east-1b", "us-east-1c"];
    match name {
        "aws-installer-vpc" => {
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

// ---- golden files -------------------------------------------------------------------------

fn check_golden(name: &str) {
    let spec = spec(name);
    let observed = Observed::default();
    let plan = Plan::calculate(&spec, &observed, &STAGE1, 1);
    let actual = render(&plan, &observed);
    let path = manifest_path("tests/golden/plan").join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    assert_eq!(
        actual,
        expected,
        "plan for fixture {name} differs from {} (if the change is intended, re-run with UPDATE_GOLDEN=1 and review the diff)",
        path.display()
    );
}

#[test]
fn golden_plan_aws() {
    check_golden("aws");
}

/// credentialsMode: Manual, as the installer leaves it: no creds secret in the asset dir.
#[test]
fn golden_plan_aws_manual_creds() {
    check_golden("aws-manual-creds");
}

#[test]
fn golden_plan_aws_internal() {
    check_golden("aws-internal");
}

#[test]
fn golden_plan_aws_dualstack() {
    check_golden("aws-dualstack");
}

#[test]
fn golden_plan_aws_installer_vpc() {
    check_golden("aws-installer-vpc");
}

#[test]
fn golden_plan_aws_flat_subnets() {
    check_golden("aws-flat-subnets");
}

#[test]
fn golden_plan_aws_user_dns() {
    check_golden("aws-user-dns");
}

#[test]
fn golden_plan_azure_default_network() {
    check_golden("azure-default-network");
}

#[test]
fn golden_plan_gcp_default_network() {
    check_golden("gcp-default-network");
}

#[test]
fn golden_plan_azure() {
    check_golden("azure");
}

#[test]
fn golden_plan_azure_dualstack() {
    check_golden("azure-dualstack");
}

#[test]
fn golden_plan_azure_mixed_api_external() {
    check_golden("azure-mixed-api-external");
}

#[test]
fn golden_plan_azure_mixed_api_internal() {
    check_golden("azure-mixed-api-internal");
}

#[test]
fn golden_plan_gcp() {
    check_golden("gcp");
}

#[test]
fn golden_plan_gcp_dualstack() {
    check_golden("gcp-dualstack");
}

#[test]
fn golden_plan_gcp_shared_vpc() {
    check_golden("gcp-shared-vpc");
}

#[test]
fn golden_plan_aws_public_ipv4_pool() {
    check_golden("aws-public-ipv4-pool");
}

#[test]
fn golden_plan_aws_cross_account_zone() {
    check_golden("aws-cross-account-zone");
}

#[test]
fn golden_plan_gcp_private_zone_project() {
    check_golden("gcp-private-zone-project");
}

#[test]
fn golden_plan_none() {
    check_golden("none");
}

#[test]
fn golden_json_round_trips() {
    for name in FIXTURES {
        let plan = Plan::calculate(&spec(name), &Observed::default(), &STAGE1, 1);
        let json = serde_json::to_string(&plan).unwrap();
        let back: Plan = serde_json::from_str(&json).unwrap();
        assert_eq!(back, plan, "{name}");
    }
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

// ---- (a) re-run after success ---------------------------------------------------------------

#[test]
fn rerun_after_success_plans_nothing() {
    for name in FIXTURES {
        let spec = spec(name);
        let observed = done(&spec);
        let plan = Plan::calculate(&spec, &observed, &STAGE1, 1);
        assert!(plan.is_empty(), "{name}: {}", plan.to_text(&observed));
        assert!(
            plan.to_text(&observed)
                .contains("no changes: everything is in place"),
            "{name}"
        );
    }
}

#[test]
fn seed_dns_with_values_present_but_ttl_different_plans_nothing() {
    // Values, not TTLs, decide: a record holding our values is left alone.
    let spec = spec("aws");
    let mut observed = done(&spec);
    for r in &mut observed.records {
        r.current.as_mut().unwrap().ttl = 300;
    }
    assert!(Plan::calculate(&spec, &observed, &[Stage::SeedDns], 1).is_empty());
}

#[test]
fn new_record_sets_carry_the_ttl_setting() {
    let mut spec = spec("aws");
    spec.record_ttl = 7;
    let observed = observed_with(&spec, all_reservations(&spec), &[]);
    let fresh = Observed {
        records: Vec::new(),
        ..observed.clone()
    };
    let plan = Plan::calculate(&spec, &fresh, &[Stage::SeedDns], 1);
    let ttls: Vec<u32> = plan
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::AddRecordValues { ttl, .. } => Some(*ttl),
            _ => None,
        })
        .collect();
    assert!(!ttls.is_empty(), "{}", plan.to_text(&fresh));
    assert!(ttls.iter().all(|t| *t == 7), "{ttls:?}");
}

// ---- (b) another writer's value -------------------------------------------------------------

#[test]
fn another_writers_value_is_never_added_or_removed() {
    let spec = spec("aws");
    let other = ip(OTHER_WRITER);
    let observed = observed_with(&spec, all_reservations(&spec), &[other]);

    let seed = Plan::calculate(&spec, &observed, &[Stage::SeedDns], 1);
    assert!(seed.is_empty(), "{}", seed.to_text(&observed));

    // Stage 3: only the bootstrap IP leaves, and only from the private records.
    let teardown = Plan::calculate(&spec, &observed, &[Stage::RemoveBootstrap], 1);
    let private = ZoneRef {
        domain: "mycluster.example.com".into(),
        private: true,
        id: None,
        tags: Default::default(),
    };
    let expected: Vec<Change> = ["api", "api-int"]
        .into_iter()
        .map(|host| Change::RemoveRecordValues {
            zone: private.clone(),
            record: RecordKey {
                name: format!("{host}.mycluster.example.com"),
                rtype: bootstrap_cloud::RecordType::A,
            },
            values: vec![Value::Ip(ip(BOOTSTRAP))],
        })
        .collect();
    assert_eq!(
        teardown.changes,
        expected,
        "{}",
        teardown.to_text(&observed)
    );

    // Failed install: all our IPs leave DNS, 192.0.2.9 stays, every reservation is released.
    let all = Plan::calculate(&spec, &observed, &[Stage::TeardownAll], 1);
    let ours: BTreeSet<IpAddr> = std::iter::once(ip(BOOTSTRAP))
        .chain(observed.reservations.iter().map(|r| r.ip))
        .collect();
    let mut removed_from = Vec::new();
    for change in &all.changes {
        if let Change::RemoveRecordValues {
            zone,
            record,
            values,
        } = change
        {
            let current = &observed.record(zone, record).unwrap().values;
            let removed: BTreeSet<IpAddr> = values
                .iter()
                .map(|v| match v {
                    Value::Ip(ip) => *ip,
                    Value::Reserved(k) => panic!("removal of a symbolic value {k}"),
                })
                .collect();
            assert!(!removed.contains(&other), "{change:?}");
            let expected: BTreeSet<IpAddr> = current.intersection(&ours).copied().collect();
            assert_eq!(removed, expected, "{record}");
            removed_from.push(record.to_string());
        }
    }
    assert_eq!(
        removed_from,
        [
            "api.mycluster.example.com A",
            "api-int.mycluster.example.com A",
            "api.mycluster.example.com A",
        ]
    );
    let released: Vec<Reservation> = releases(&all).into_iter().cloned().collect();
    assert_eq!(released, observed.reservations);
    // Records first, then releases: an address is never released while DNS still points at it.
    let first_release = all
        .changes
        .iter()
        .position(|c| matches!(c, Change::ReleaseAddress { .. }))
        .unwrap();
    assert!(
        all.changes[first_release..]
            .iter()
            .all(|c| matches!(c, Change::ReleaseAddress { .. }))
    );
    assert!(!all.to_text(&observed).contains(OTHER_WRITER));
}

#[test]
fn remove_bootstrap_without_our_value_in_dns_plans_nothing() {
    // Re-running stage 3 after success (only 192.0.2.9 and reserved IPs left).
    let spec = spec("gcp");
    let mut observed = observed_with(&spec, all_reservations(&spec), &[ip(OTHER_WRITER)]);
    for r in &mut observed.records {
        r.current.as_mut().unwrap().values.remove(&ip(BOOTSTRAP));
    }
    assert!(Plan::calculate(&spec, &observed, &[Stage::RemoveBootstrap], 1).is_empty());
}

#[test]
fn teardown_all_releases_every_observed_reservation_even_when_dns_is_gone() {
    let spec = spec("azure-dualstack");
    let observed = Observed {
        reservations: all_reservations(&spec),
        ..Observed::default()
    };
    let plan = Plan::calculate(&spec, &observed, &[Stage::TeardownAll], 1);
    assert_eq!(plan.changes.len(), observed.reservations.len());
    assert_eq!(
        releases(&plan).into_iter().cloned().collect::<Vec<_>>(),
        observed.reservations
    );
}

// ---- (c) duplicates from a lost idempotency token -------------------------------------------

/// The aws cloud after stage 1, plus a second reservation for the first wanted key (a public
/// EIP) with a LOWER id than the original and an IP no record holds.
fn with_duplicate(spec: &ClusterSpec) -> (Observed, Reservation, Reservation) {
    let observed = done(spec);
    let original = observed.reservations[0].clone();
    assert_eq!(original.key.scope, Scope::Public);
    let duplicate = Reservation {
        id: "rsv-00".into(),
        ip: ip("203.0.113.99"),
        ..original.clone()
    };
    (observed, original, duplicate)
}

#[test]
fn duplicate_reservation_keeps_the_one_in_dns_and_releases_the_other() {
    let spec = spec("aws");
    let (mut observed, original, duplicate) = with_duplicate(&spec);
    for order in [false, true] {
        observed.reservations.retain(|r| r.id != duplicate.id);
        if order {
            observed.reservations.insert(0, duplicate.clone());
        } else {
            observed.reservations.push(duplicate.clone());
        }
        let plan = Plan::calculate(&spec, &observed, &[Stage::Reserve], 1);
        assert_eq!(
            plan.changes,
            vec![Change::ReleaseAddress {
                reservation: duplicate.clone(),
                reason: format!("duplicate of {}", original.id),
            }],
            "duplicate first: {order}"
        );
        assert_eq!(
            observed.resolve(&Value::Reserved(original.key.clone())),
            Some(original.ip)
        );
        assert!(Plan::calculate(&spec, &observed, &[Stage::SeedDns], 1).is_empty());
    }
}

#[test]
fn duplicate_reservation_with_neither_in_dns_keeps_the_lowest_id() {
    let spec = spec("aws");
    let (mut observed, original, duplicate) = with_duplicate(&spec);
    for r in &mut observed.records {
        r.current = None;
    }
    for order in [false, true] {
        observed.reservations.retain(|r| r.id != duplicate.id);
        if order {
            observed.reservations.insert(0, duplicate.clone());
        } else {
            observed.reservations.push(duplicate.clone());
        }
        let plan = Plan::calculate(&spec, &observed, &[Stage::Reserve], 1);
        assert_eq!(
            plan.changes,
            vec![Change::ReleaseAddress {
                reservation: original.clone(),
                reason: format!("duplicate of {}", duplicate.id),
            }],
            "duplicate first: {order}"
        );
        assert_eq!(
            observed.resolve(&Value::Reserved(original.key.clone())),
            Some(duplicate.ip)
        );
    }
}

// ---- (d) partial reserve --------------------------------------------------------------------

#[test]
fn partial_reserve_plans_exactly_the_missing_reservations() {
    let spec = spec("aws");
    let all = all_reservations(&spec);
    assert_eq!(all.len(), 6);
    let present = vec![all[0].clone(), all[4].clone()];
    assert_eq!(present[0].key.scope, Scope::Public);
    assert_eq!(present[1].key.scope, Scope::Private);
    let observed = Observed {
        reservations: present.clone(),
        ..Observed::default()
    };
    let plan = Plan::calculate(&spec, &observed, &[Stage::Reserve], 1);
    let expected: Vec<Change> = desired::reservations(&spec)
        .iter()
        .filter(|w| present.iter().all(|p| p.key != w.key))
        .map(|w| Change::ReserveAddress {
            request: desired::request(&spec, w, 1),
        })
        .collect();
    assert_eq!(expected.len(), 4);
    assert_eq!(plan.changes, expected, "{}", plan.to_text(&observed));
}

#[test]
fn partial_reserve_seeds_resolved_and_symbolic_values() {
    let spec = spec("aws");
    let all = all_reservations(&spec);
    let observed = Observed {
        reservations: vec![all[3].clone()],
        ..Observed::default()
    };
    let plan = Plan::calculate(&spec, &observed, &STAGE1, 1);
    let text = plan.to_text(&observed);
    // The observed private IP is shown with its key; the rest stay symbolic.
    assert!(
        text.contains(&format!("{} <{}>", all[3].ip, all[3].key)),
        "{text}"
    );
    assert!(text.contains(&format!("<{}>", all[4].key)), "{text}");
}

// ---- (e) generations ------------------------------------------------------------------------

#[test]
fn generation_two_changes_every_token_but_not_names() {
    for name in FIXTURES {
        let spec = spec(name);
        let g1 = Plan::calculate(&spec, &Observed::default(), &[Stage::Reserve], 1);
        let g2 = Plan::calculate(&spec, &Observed::default(), &[Stage::Reserve], 2);
        let (r1, r2) = (reserve_requests(&g1), reserve_requests(&g2));
        assert_eq!(r1.len(), r2.len(), "{name}");
        for (a, b) in r1.iter().zip(&r2) {
            assert_eq!(a.key, b.key, "{name}");
            assert_eq!(a.name, b.name, "{name}");
            assert_ne!(a.token, b.token, "{name}");
            assert!(a.token.ends_with("-g1"), "{}", a.token);
            assert!(b.token.ends_with("-g2"), "{}", b.token);
            assert!(a.token.len() <= 64 && b.token.len() <= 64);
        }
        let tokens: BTreeSet<&str> = r1.iter().map(|r| r.token.as_str()).collect();
        assert_eq!(tokens.len(), r1.len(), "{name}: tokens must be distinct");
    }
}

// ---- (f) publish Internal -------------------------------------------------------------------

#[test]
fn publish_internal_plans_no_public_record_and_no_public_reservation() {
    let mut specs = vec![("aws-internal".to_string(), spec("aws-internal"))];
    for name in ["aws", "azure", "azure-dualstack", "gcp"] {
        let mut s = spec(name);
        s.publish = Publish::Internal;
        specs.push((format!("{name} (publish Internal)"), s));
    }
    for (name, spec) in specs {
        let plan = Plan::calculate(&spec, &Observed::default(), &STAGE1, 1);
        let mut private_records = 0;
        for change in &plan.changes {
            match change {
                Change::ReserveAddress { request } => {
                    assert_eq!(request.key.scope, Scope::Private, "{name}: {change:?}");
                }
                Change::AddRecordValues { zone, .. } => {
                    assert!(zone.private, "{name}: {change:?}");
                    private_records += 1;
                }
                other => panic!("{name}: unexpected {other:?}"),
            }
        }
        // api and api-int, per family with a private reservation (Azure dual stack: A and AAAA).
        let families = if name.starts_with("azure-dualstack") {
            2
        } else {
            1
        };
        assert_eq!(private_records, 2 * families, "{name}: api and api-int");
        assert!(!reserve_requests(&plan).is_empty(), "{name}");
        assert!(
            !plan.to_text(&Observed::default()).contains("public"),
            "{name}"
        );
    }
}

/// Publish Mixed: the API side alone decides (the installer's `PublicAPI()`). The public zone
/// is the base domain's (Azure: in baseDomainResourceGroupName), not the DNS manifest's
/// publicZone, which follows ingress and is absent when ingress is Internal.
#[test]
fn publish_mixed_plans_the_public_api_exactly_when_the_apiserver_is_external() {
    for (name, public_api) in [
        ("azure-mixed-api-external", true),
        ("azure-mixed-api-internal", false),
    ] {
        let spec = spec(name);
        let plan = Plan::calculate(&spec, &Observed::default(), &STAGE1, 1);
        let public_reservations = reserve_requests(&plan)
            .iter()
            .filter(|r| r.key.scope == Scope::Public)
            .count();
        assert_eq!(public_reservations, usize::from(public_api), "{name}");
        let public_records: Vec<(&ZoneRef, &RecordKey)> = plan
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::AddRecordValues { zone, record, .. } if !zone.private => {
                    Some((zone, record))
                }
                _ => None,
            })
            .collect();
        if public_api {
            assert_eq!(public_records.len(), 1, "{name}: {public_records:?}");
            assert_eq!(public_records[0].0.domain, "example.com", "{name}");
            assert_eq!(public_records[0].1.name, "api.mycluster.example.com");
        } else {
            assert!(public_records.is_empty(), "{name}: {public_records:?}");
        }
    }
}

// ---- user-managed DNS -------------------------------------------------------------------------

fn is_reservation(change: &Change) -> bool {
    matches!(
        change,
        Change::ReserveAddress { .. } | Change::ReleaseAddress { .. }
    )
}

/// Each cloud fixture as if its install-config said userProvisionedDNS: Enabled.
fn user_managed(name: &str) -> ClusterSpec {
    let mut spec = spec(name);
    spec.dns = crate::assets::DnsManagement::UserManaged {
        because: "test".into(),
    };
    spec
}

const CLOUDS: [&str; 6] = [
    "aws",
    "aws-internal",
    "azure",
    "azure-dualstack",
    "azure-mixed-api-external",
    "gcp",
];

/// User-managed DNS: the same reservations as with cloud DNS, no record change and no record
/// to read in any stage, and the records the user must create are exactly the records the
/// agent would have seeded, with the same values.
#[test]
fn user_managed_dns_reserves_the_same_ips_and_plans_and_reads_no_record() {
    for name in CLOUDS {
        let cloud = spec(name);
        let user = user_managed(name);
        assert!(
            records_of_interest(&user).is_empty(),
            "{name}: no zone lookup"
        );
        let cloud_plan = Plan::calculate(&cloud, &Observed::default(), &STAGE1, 1);
        let user_plan = Plan::calculate(&user, &Observed::default(), &STAGE1, 1);
        let reservations = |p: &Plan| -> Vec<Change> {
            p.changes
                .iter()
                .filter(|c| is_reservation(c))
                .cloned()
                .collect()
        };
        assert_eq!(
            reservations(&user_plan),
            reservations(&cloud_plan),
            "{name}"
        );
        assert!(user_plan.changes.iter().all(is_reservation), "{name}");
        assert!(cloud_plan.user_dns.is_none(), "{name}");
        let user_dns = user_plan.user_dns.as_ref().expect("records for the user");
        assert_eq!(user_dns.because, "test");
        assert_eq!(user_dns.bootstrap_ip, Some(ip(BOOTSTRAP)));
        let seeded: Vec<(ZoneRef, RecordKey, Vec<Value>)> = cloud_plan
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::AddRecordValues {
                    zone,
                    record,
                    values,
                    ..
                } => Some((zone.clone(), record.clone(), values.clone())),
                _ => None,
            })
            .collect();
        let for_user: Vec<(ZoneRef, RecordKey, Vec<Value>)> = user_dns
            .records
            .iter()
            .map(|r| (r.zone.clone(), r.record.clone(), r.values.clone()))
            .collect();
        assert_eq!(for_user, seeded, "{name}");

        // Stage 3 and a failed install's teardown: no DNS change even where records with
        // our values are visible (they are not ours to edit).
        let done = done(&user);
        for stage in [Stage::RemoveBootstrap, Stage::TeardownAll] {
            let plan = Plan::calculate(&user, &done, &[stage], 1);
            assert!(plan.changes.iter().all(is_reservation), "{name} {stage:?}");
        }
        let teardown = Plan::calculate(&user, &done, &[Stage::TeardownAll], 1);
        assert_eq!(
            releases(&teardown).len(),
            done.reservations.len(),
            "{name}: teardown --all releases every reservation"
        );
    }
}

/// Once reserved, the records carry the IPs themselves, in text and in JSON.
#[test]
fn user_managed_dns_prints_the_reserved_ips_once_they_exist() {
    let spec = user_managed("gcp");
    let observed = Observed {
        reservations: all_reservations(&spec),
        ..Observed::default()
    };
    let plan = Plan::calculate(&spec, &observed, &STAGE1, 1);
    assert!(plan.is_empty(), "{}", plan.to_text(&observed));
    let public = observed.reservations[0].ip;
    let private = observed.reservations[1].ip;
    let records = &plan.user_dns.as_ref().unwrap().records;
    let values: Vec<&Vec<Value>> = records.iter().map(|r| &r.values).collect();
    assert_eq!(
        values,
        [
            &vec![Value::Ip(ip(BOOTSTRAP)), Value::Ip(private)],
            &vec![Value::Ip(ip(BOOTSTRAP)), Value::Ip(private)],
            &vec![Value::Ip(public)],
        ]
    );
    let text = plan.to_text(&observed);
    assert!(
        text.contains(&format!(
            "  private zone mycluster.example.com: api-int.mycluster.example.com A ttl 30 = {BOOTSTRAP}, {private}\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  public zone example.com: api.mycluster.example.com A ttl 30 = {public}\n"
        )),
        "{text}"
    );
    assert!(!text.contains("not reserved yet"), "{text}");
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(
        json["user_dns"]["records"][2]["values"],
        serde_json::json!([{"ip": public.to_string()}])
    );
}

// ---- (g) bootstrap IP unknown ---------------------------------------------------------------

#[test]
fn unknown_bootstrap_ip_adds_a_note_and_seeds_only_reserved_ips() {
    for name in FIXTURES {
        let mut spec = spec(name);
        spec.bootstrap_ip = None;
        let plan = Plan::calculate(&spec, &Observed::default(), &STAGE1, 1);
        let note = plan
            .notes
            .iter()
            .any(|n| n.contains("bootstrap IP unknown"));
        if matches!(spec.platform, Platform::None) {
            assert!(!note, "{name}: platform none needs no bootstrap IP");
            assert!(plan.is_empty(), "{name}");
            continue;
        }
        assert!(note, "{name}: {:?}", plan.notes);
        if spec.user_managed_dns().is_some() {
            assert!(plan.changes.iter().all(is_reservation), "{name}");
            continue;
        }
        let mut private_records = 0;
        for change in &plan.changes {
            if let Change::AddRecordValues { zone, values, .. } = change
                && zone.private
            {
                private_records += 1;
                assert!(!values.is_empty(), "{name}");
                for v in values {
                    assert!(
                        matches!(v, Value::Reserved(k) if k.scope == Scope::Private),
                        "{name}: {v}"
                    );
                }
            }
        }
        assert!(private_records >= 2, "{name}");
        // Same records as with a bootstrap IP, one value fewer in each private record.
        let with = Plan::calculate(&self::spec(name), &Observed::default(), &STAGE1, 1);
        assert_eq!(with.changes.len(), plan.changes.len(), "{name}");
    }
}

#[test]
fn known_bootstrap_ip_leads_the_private_records() {
    for name in ["aws", "aws-dualstack", "azure", "azure-dualstack", "gcp"] {
        let spec = spec(name);
        for w in desired::records(&spec) {
            let has_bootstrap = w.values.first() == Some(&Value::Ip(ip(BOOTSTRAP)));
            let ipv4_private = w.zone.private && w.key.rtype == bootstrap_cloud::RecordType::A;
            assert_eq!(has_bootstrap, ipv4_private, "{name}: {w:?}");
        }
    }
}

#[test]
fn records_of_interest_are_the_records_stage1_writes() {
    for name in FIXTURES {
        let spec = spec(name);
        let plan = Plan::calculate(&spec, &Observed::default(), &[Stage::SeedDns], 1);
        let written: Vec<(ZoneRef, RecordKey)> = plan
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::AddRecordValues { zone, record, .. } => {
                    Some((zone.clone(), record.clone()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(records_of_interest(&spec), written, "{name}");
    }
}

#[test]
fn a_reservation_holding_the_bootstrap_ip_is_a_conflict() {
    let mut spec = crate::assets::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets/gcp"),
    )
    .unwrap();
    spec.bootstrap_ip = Some("10.0.0.5".parse().unwrap());
    let reservation = |ip: &str| bootstrap_cloud::Reservation {
        key: bootstrap_cloud::ReservationKey::parse("private-ipv4").unwrap(),
        id: "r-1".into(),
        name: "mycluster-7xk2p-rsvd-private-ipv4".into(),
        ip: ip.parse().unwrap(),
    };
    let mut observed = Observed {
        reservations: vec![reservation("10.0.0.9")],
        ..Default::default()
    };
    assert_eq!(bootstrap_ip_conflict(&spec, &observed), None);
    observed.reservations = vec![reservation("10.0.0.5")];
    let conflict = bootstrap_ip_conflict(&spec, &observed).unwrap();
    assert!(
        conflict.contains("10.0.0.5") && conflict.contains("private-ipv4"),
        "{conflict}"
    );
    // Handed-over IPs count too: the load balancer holds them now.
    observed.handed_over = std::mem::take(&mut observed.reservations);
    assert!(bootstrap_ip_conflict(&spec, &observed).is_some());
}

// ---- (h) dual stack --------------------------------------------------------------------------

fn private_v6() -> ReservationKey {
    ReservationKey::parse("private-ipv6").unwrap()
}

fn record<'a>(
    plan: &'a Plan,
    host: &str,
    rtype: bootstrap_cloud::RecordType,
) -> Option<&'a [Value]> {
    plan.changes.iter().find_map(|c| match c {
        Change::AddRecordValues {
            zone,
            record,
            values,
            ..
        } if zone.private
            && record.rtype == rtype
            && record.name == format!("{host}.mycluster.example.com") =>
        {
            Some(values.as_slice())
        }
        _ => None,
    })
}

/// Azure can hold a private IPv6 for its internal load balancer: it is reserved next to the
/// IPv4 one, and api/api-int get AAAA records with it (plus the bootstrap IPv6, if any).
#[test]
fn azure_dual_stack_reserves_a_private_ipv6_and_seeds_aaaa_for_api_and_api_int() {
    let spec = spec("azure-dualstack");
    let plan = Plan::calculate(&spec, &Observed::default(), &STAGE1, 1);
    let names: Vec<&str> = reserve_requests(&plan)
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "mycluster-7xk2p-rsvd-public-ipv4",
            "mycluster-7xk2p-rsvd-public-ipv6",
            "mycluster-7xk2p-rsvd-private-ipv4",
            "mycluster-7xk2p-rsvd-private-ipv6",
        ]
    );
    let aaaa = bootstrap_cloud::RecordType::Aaaa;
    for host in ["api", "api-int"] {
        // The bootstrap IP is IPv4 here: the AAAA record holds only the reserved IPv6.
        assert_eq!(
            record(&plan, host, aaaa),
            Some(&[Value::Reserved(private_v6())][..]),
            "{host}"
        );
    }
    assert!(
        plan.notes
            .iter()
            .any(|n| n.starts_with("azure dual stack:")),
        "{:?}",
        plan.notes
    );

    // A bootstrap host with an IPv6 leads the AAAA records instead of the A records.
    let mut v6_host = spec.clone();
    v6_host.bootstrap_ip = Some(ip("fd00:10:0:1::5"));
    let plan = Plan::calculate(&v6_host, &Observed::default(), &STAGE1, 1);
    for host in ["api", "api-int"] {
        assert_eq!(
            record(&plan, host, aaaa),
            Some(
                &[
                    Value::Ip(ip("fd00:10:0:1::5")),
                    Value::Reserved(private_v6())
                ][..]
            ),
            "{host}"
        );
        let a = record(&plan, host, bootstrap_cloud::RecordType::A).unwrap();
        assert!(
            a.iter().all(|v| matches!(v, Value::Reserved(_))),
            "{host}: {a:?}"
        );
    }

    // Single stack wants no IPv6 at all.
    let plan = Plan::calculate(&self::spec("azure"), &Observed::default(), &STAGE1, 1);
    assert!(!plan.to_text(&Observed::default()).contains("ipv6"));
    assert!(record(&plan, "api", aaaa).is_none());
}

/// AWS and GCP cannot give their internal load balancers a reserved IPv6: nothing IPv6 is
/// planned there, and the plan says why, per cloud.
#[test]
fn aws_and_gcp_dual_stack_plan_no_ipv6_and_say_why() {
    for (name, why) in [
        (
            "aws-dualstack",
            "aws dual stack: EIPs and NLB private addresses are IPv4",
        ),
        (
            "gcp-dualstack",
            "gcp dual stack: the cloud provider's Service load balancers take one IPv4 each",
        ),
    ] {
        let spec = spec(name);
        let plan = Plan::calculate(&spec, &Observed::default(), &STAGE1, 1);
        let note = plan.notes.iter().find(|n| n.starts_with(why));
        assert!(
            note.is_some_and(|n| n.contains("no IPv6 is reserved and no AAAA record is seeded")),
            "{name}: {:?}",
            plan.notes
        );
        for change in &plan.changes {
            match change {
                Change::ReserveAddress { request } => {
                    assert_eq!(request.key.family, IpFamily::Ipv4, "{name}: {change:?}")
                }
                Change::AddRecordValues { record, .. } => assert_eq!(
                    record.rtype,
                    bootstrap_cloud::RecordType::A,
                    "{name}: {change:?}"
                ),
                other => panic!("{name}: unexpected {other:?}"),
            }
        }
        // The same cloud single stack says nothing about IPv6.
        let single = name.trim_end_matches("-dualstack");
        let plan = Plan::calculate(&self::spec(single), &Observed::default(), &STAGE1, 1);
        assert!(
            !plan.notes.iter().any(|n| n.contains("dual stack")),
            "{single}: {:?}",
            plan.notes
        );
    }
}

/// After a failed dual-stack install, teardown --all takes back the private IPv6 and its AAAA
/// values like the IPv4 ones, and leaves another writer's IPv6 alone.
#[test]
fn teardown_all_removes_the_private_ipv6_and_only_our_aaaa_values() {
    let spec = spec("azure-dualstack");
    let theirs = ip("fd00:10:0:2::77");
    let observed = observed_with(&spec, all_reservations(&spec), &[theirs]);
    let plan = Plan::calculate(&spec, &observed, &[Stage::TeardownAll], 1);
    let ours_v6 = observed.kept()[&private_v6()].ip;
    assert!(
        releases(&plan).iter().any(|r| r.key == private_v6()),
        "{}",
        plan.to_text(&observed)
    );
    for host in ["api", "api-int"] {
        let removed = plan.changes.iter().find_map(|c| match c {
            Change::RemoveRecordValues { record, values, .. }
                if record.rtype == bootstrap_cloud::RecordType::Aaaa
                    && record.name == format!("{host}.mycluster.example.com") =>
            {
                Some(values.clone())
            }
            _ => None,
        });
        assert_eq!(removed, Some(vec![Value::Ip(ours_v6)]), "{host}");
    }
    assert!(!plan.to_text(&observed).contains(&theirs.to_string()));
}

// ---- UPI: the user's own reservations ----------------------------------------------------------

/// The cloud with every reservation the user's (none ours), and the records seeded.
fn all_adopted(spec: &ClusterSpec) -> Observed {
    let mut observed = observed_with(spec, all_reservations(spec), &[]);
    observed.adopted = std::mem::take(&mut observed.reservations);
    observed
}

#[test]
fn the_users_reservations_are_used_and_never_reserved_again() {
    for name in ["aws", "gcp", "azure"] {
        let spec = spec(name);
        let mut observed = all_adopted(&spec);
        observed.records.clear();
        let plan = Plan::calculate(&spec, &observed, &STAGE1, 1);
        assert!(
            reserve_requests(&plan).is_empty(),
            "{name}: {:?}",
            plan.changes
        );
        assert_eq!(plan.adopted.len(), desired::reservations(&spec).len());
        // DNS gets the user's IPs, as it would get ours.
        let added: BTreeSet<IpAddr> = plan
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::AddRecordValues { values, .. } => Some(values),
                _ => None,
            })
            .flatten()
            .filter_map(|v| observed.resolve(v))
            .collect();
        for r in &observed.adopted {
            assert!(added.contains(&r.ip), "{name}: {} joins DNS", r.ip);
        }
        assert!(plan.to_text(&observed).contains("adopted (yours)"));
    }
}

#[test]
fn mixed_adopts_what_exists_and_reserves_the_rest_unless_adopt_only() {
    let mut spec = spec("gcp");
    let mut observed = Observed::default();
    let public = all_reservations(&spec)
        .into_iter()
        .find(|r| r.key.scope == Scope::Public)
        .unwrap();
    observed.adopted.push(public);
    let plan = Plan::calculate(&spec, &observed, &[Stage::Reserve], 1);
    let reserved: Vec<String> = reserve_requests(&plan)
        .iter()
        .map(|r| r.key.to_string())
        .collect();
    assert_eq!(reserved, ["private-ipv4"]);
    spec.adoption.adopt_only = true;
    let plan = Plan::calculate(&spec, &observed, &[Stage::Reserve], 1);
    assert!(
        plan.is_empty(),
        "--adopt-only reserves nothing: {:?}",
        plan.changes
    );
}

#[test]
fn teardown_all_takes_the_users_ips_out_of_dns_but_never_releases_them() {
    for name in ["aws", "gcp", "azure"] {
        let spec = spec(name);
        let observed = all_adopted(&spec);
        let plan = Plan::calculate(&spec, &observed, &[Stage::TeardownAll], 1);
        assert!(releases(&plan).is_empty(), "{name}: {:?}", plan.changes);
        assert!(
            plan.changes
                .iter()
                .any(|c| matches!(c, Change::RemoveRecordValues { .. })),
            "{name}: our values leave DNS"
        );
        assert!(
            plan.notes.iter().any(|n| n.contains("leaves the")),
            "{name}: says so: {:?}",
            plan.notes
        );
        // The hand-over never deletes an ENI of the user's either.
        let plan = Plan::calculate(&spec, &observed, &[Stage::HandOver], 1);
        assert!(plan.is_empty(), "{name}: {:?}", plan.changes);
    }
}
