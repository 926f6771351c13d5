//! Promises of the planner that resume and idempotency lean on, each pinned by a test that a
//! one-line change would break (found missing by cargo-mutants).

use super::desired::{idempotency_token, records};
use super::*;
use crate::assets::{self, ClusterSpec};
use bootstrap_cloud::{IpFamily, ReservationKey, Scope};
use std::path::Path;

fn fixture(name: &str) -> ClusterSpec {
    assets::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/assets")
            .join(name),
    )
    .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

fn key(scope: Scope, placement: Option<&str>) -> ReservationKey {
    ReservationKey {
        scope,
        family: IpFamily::Ipv4,
        placement: placement.map(str::to_string),
    }
}

#[test]
fn long_infra_ids_get_a_bounded_stable_fnv1a_token_per_reservation() {
    // Longer than 64 characters once scoped: the hashed form. The expected values are FNV-1a
    // 64 of the long token, computed independently.
    let infra_id = "a".repeat(60);
    let private = idempotency_token(&infra_id, &key(Scope::Private, Some("subnet-0123")), 1);
    let public = idempotency_token(&infra_id, &key(Scope::Public, None), 2);
    assert_eq!(private, "fc579de2ed4cacf4-g1");
    assert_eq!(public, "9ac4a411d3f6d285-g2");
    assert_ne!(
        idempotency_token(&infra_id, &key(Scope::Private, Some("subnet-0124")), 1),
        private,
        "each subnet's reservation has its own token, or EC2 replays one allocation for all"
    );
    assert!(private.len() <= 64 && public.len() <= 64);
}

#[test]
fn short_infra_ids_keep_the_readable_token() {
    assert_eq!(
        idempotency_token(
            "mycluster-x7k2p",
            &key(Scope::Private, Some("subnet-0a")),
            3
        ),
        "mycluster-x7k2p-prv4-subnet-0a-g3"
    );
    assert_eq!(
        idempotency_token("mycluster-x7k2p", &key(Scope::Public, None), 1),
        "mycluster-x7k2p-pub4-g1"
    );
}

#[test]
fn the_private_zone_id_is_where_the_private_records_go() {
    let mut spec = fixture("aws");
    // What assets::load makes of platform.aws.hostedZone (or a DNS manifest's privateZone.id).
    spec.zones.private.id = Some("Z0123456789ABCDEFGHIJ".into());
    let wanted = records(&spec);
    let private: Vec<_> = wanted.iter().filter(|r| r.zone.private).collect();
    assert!(!private.is_empty());
    assert!(
        private
            .iter()
            .all(|r| r.zone.id.as_deref() == Some("Z0123456789ABCDEFGHIJ")),
        "{private:?}"
    );
    assert!(
        wanted
            .iter()
            .filter(|r| !r.zone.private)
            .all(|r| r.zone.id.is_none()),
        "the public zone is found by name"
    );
}

/// Step names are the journal's keys and what `status` shows: renaming one orphans the record
/// of a half-done step in existing journals.
#[test]
fn step_names_are_part_of_the_journal_contract() {
    let names: Vec<&str> = [
        Step::Reserve,
        Step::SeedDns,
        Step::HandOver,
        Step::RemoveBootstrap,
        Step::TeardownAll,
    ]
    .into_iter()
    .map(Step::name)
    .collect();
    assert_eq!(
        names,
        [
            "reserve",
            "seed-dns",
            "hand-over",
            "remove-bootstrap",
            "teardown-all"
        ]
    );
}

#[test]
fn a_plan_is_empty_only_without_changes() {
    let spec = fixture("aws");
    let fresh = Plan::calculate(&spec, &Observed::default(), &[Step::Reserve], 1);
    assert!(
        !fresh.is_empty(),
        "a fresh cluster has reservations to make"
    );
    let nothing = Plan::calculate(&spec, &Observed::default(), &[Step::TeardownAll], 1);
    assert!(nothing.is_empty(), "nothing of ours exists: {nothing:?}");
}

fn reservation(scope: Scope, placement: &str, id: &str, ip: &str) -> bootstrap_cloud::Reservation {
    bootstrap_cloud::Reservation {
        key: key(scope, Some(placement)),
        name: format!("r-{id}"),
        id: id.into(),
        ip: ip.parse().unwrap(),
    }
}

#[test]
fn the_hand_over_frees_every_private_placeholder_on_aws_only() {
    let observed = Observed {
        reservations: vec![
            reservation(Scope::Public, "subnet-p", "eipalloc-1", "203.0.113.1"),
            reservation(Scope::Private, "subnet-a", "eni-1", "10.0.1.5"),
            reservation(Scope::Private, "subnet-b", "eni-2", "10.0.2.5"),
        ],
        ..Default::default()
    };
    let plan = Plan::calculate(&fixture("aws"), &observed, &[Step::HandOver], 1);
    let handed: Vec<&str> = plan
        .changes
        .iter()
        .map(|c| match c {
            Change::HandOverAddress { reservation } => reservation.id.as_str(),
            other => panic!("only hand-overs are planned: {other:?}"),
        })
        .collect();
    assert_eq!(handed, ["eni-1", "eni-2"], "never the EIP");
    let gcp = Plan::calculate(&fixture("gcp"), &observed, &[Step::HandOver], 1);
    assert!(gcp.is_empty(), "GCP addresses need no hand-over: {gcp:?}");
}

#[test]
fn progressive_dns_adds_a_reserved_ip_only_once_its_load_balancer_serves_it() {
    let mut spec = fixture("aws");
    spec.bootstrap_ip = Some("10.0.1.10".parse().unwrap());
    let reserved = Plan::calculate(&spec, &Observed::default(), &[Step::Reserve], 1);
    let observed_with = |serving: Option<Vec<&str>>| {
        let mut reservations = Vec::new();
        for (i, c) in reserved.changes.iter().enumerate() {
            if let Change::ReserveAddress { request } = c {
                let ip = match request.key.scope {
                    Scope::Public => format!("203.0.113.{}", i + 1),
                    Scope::Private => format!("10.0.{}.5", i + 1),
                    Scope::Bootstrap => format!("10.0.{}.6", i + 1),
                };
                reservations.push(bootstrap_cloud::Reservation {
                    key: request.key.clone(),
                    name: request.name.clone(),
                    id: format!("id-{i}"),
                    ip: ip.parse().unwrap(),
                });
            }
        }
        Observed {
            reservations,
            serving: serving.map(|s| s.iter().map(|ip| ip.parse().unwrap()).collect()),
            ..Default::default()
        }
    };
    let values = |plan: &Plan| -> Vec<String> {
        let mut v: Vec<String> = plan
            .changes
            .iter()
            .flat_map(|c| match c {
                Change::AddRecordValues { record, values, .. } => values
                    .iter()
                    .map(|v| format!("{} {v:?}", record.name))
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        v.sort();
        v
    };
    let all = Plan::calculate(&spec, &observed_with(None), &[Step::SeedDns], 1);
    let nothing_serves = Plan::calculate(&spec, &observed_with(Some(vec![])), &[Step::SeedDns], 1);
    // Progressive: the private records get the bootstrap IP only, no public record yet.
    assert!(
        values(&nothing_serves)
            .iter()
            .all(|v| v.contains("10.0.1.10")),
        "{:?}",
        values(&nothing_serves)
    );
    assert_eq!(
        values(&nothing_serves).len(),
        2,
        "api and api-int: {:?}",
        values(&nothing_serves)
    );
    assert!(values(&all).len() > values(&nothing_serves).len());
    // One IP serves: it (and only it) joins.
    let one = observed_with(Some(vec!["10.0.4.5"]));
    let plan = Plan::calculate(&spec, &one, &[Step::SeedDns], 1);
    let joined: Vec<String> = values(&plan)
        .into_iter()
        .filter(|v| !v.contains("10.0.1.10"))
        .collect();
    assert!(!joined.is_empty(), "{:?}", values(&plan));
    let resolved: Vec<_> = plan
        .changes
        .iter()
        .flat_map(|c| match c {
            Change::AddRecordValues { values, .. } => {
                values.iter().filter_map(|v| one.resolve(v)).collect()
            }
            _ => Vec::new(),
        })
        .filter(|ip| ip.to_string() != "10.0.1.10")
        .collect();
    assert!(
        resolved.iter().all(|ip| ip.to_string() == "10.0.4.5"),
        "{resolved:?}"
    );
}

#[test]
fn every_step_parses_from_its_kebab_case_name_which_the_machine_shares() {
    for step in Step::ALL {
        let name = serde_json::to_value(step).unwrap();
        assert_eq!(name.as_str(), Some(step.name()), "one spelling per step");
        assert_eq!(Step::parse(step.name()), Some(step));
    }
    for state in crate::machine::State::ALL {
        if let Some(step) = state.step() {
            assert_eq!(
                state.name(),
                step.name(),
                "the machine spells {step:?} alike"
            );
        }
    }
    assert_eq!(
        Step::parse("dns-seed"),
        Some(Step::SeedDns),
        "legacy journal key"
    );
    assert_eq!(Step::parse("dns-teardown"), Some(Step::RemoveBootstrap));
    assert_eq!(Step::parse("seed"), None);
}
