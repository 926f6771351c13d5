//! `dns records`: the record sets at this point of the install, from the journal.

use super::*;
use crate::assets::DnsManagement;
use crate::plan::{Plan, Step};
use bootstrap_cloud::{Reservation, Scope};

pub(crate) const BOOTSTRAP: &str = "10.0.0.5";
pub(crate) const PRIVATE: &str = "10.0.1.20";
pub(crate) const PUBLIC: &str = "203.0.113.10";

pub(crate) fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The GCP fixture (one public, one private reservation), DNS the user's.
pub(crate) fn spec() -> ClusterSpec {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets/gcp");
    let mut spec = crate::assets::load(&dir).unwrap();
    spec.bootstrap_ip = Some(ip(BOOTSTRAP));
    spec.dns = DnsManagement::UserManaged {
        because: "--dns manual".into(),
    };
    spec
}

/// The journal after `reserve`: every wanted reservation, public PUBLIC, private PRIVATE.
pub(crate) fn reserved(spec: &ClusterSpec) -> JournalState {
    let reservations = crate::plan::wanted_reservations(spec)
        .into_iter()
        .map(|w| Reservation {
            ip: ip(match w.key.scope {
                Scope::Public => PUBLIC,
                Scope::Private => PRIVATE,
                Scope::Bootstrap => "10.0.1.11",
            }),
            id: w.name.clone(),
            name: w.name.clone(),
            key: w.key,
        })
        .collect();
    JournalState {
        bootstrap_ip: Some(ip(BOOTSTRAP)),
        reservations,
        ..JournalState::default()
    }
}

/// The values of the record set `name_prefix...` of the `visibility` zone.
fn values_of(report: &RecordsNow, visibility: &str, name_prefix: &str) -> Vec<IpAddr> {
    report
        .records
        .iter()
        .find(|r| r.visibility == visibility && r.name.starts_with(name_prefix))
        .map(|r| r.values.clone())
        .unwrap_or_default()
}

#[test]
fn records_are_the_ones_plan_prints_to_create_with_the_journals_ips() {
    let spec = spec();
    let recorded = reserved(&spec);
    let plan = Plan::calculate(&spec, &journal_view(&recorded), &[Step::SeedDns], 1);
    let user = plan.user_dns.expect("user-managed DNS");
    assert_eq!(records_now(&spec, &recorded), user.records, "one code path");
    let report = report(&spec, &recorded);
    assert_eq!(report.written_by, "user");
    assert_eq!(
        values_of(&report, "private", "api-int."),
        [ip(BOOTSTRAP), ip(PRIVATE)]
    );
    assert_eq!(values_of(&report, "public", "api."), [ip(PUBLIC)]);
    assert!(report.records.iter().all(|r| r.pending.is_empty()));
}

#[test]
fn once_the_bootstrap_ip_was_removed_the_records_hold_the_reserved_ips_alone() {
    let spec = spec();
    let mut recorded = reserved(&spec);
    recorded.bootstrap_removed = true;
    let report = report(&spec, &recorded);
    assert_eq!(values_of(&report, "private", "api-int."), [ip(PRIVATE)]);
    assert!(
        report
            .records
            .iter()
            .all(|r| !r.values.contains(&ip(BOOTSTRAP))),
        "{report:?}"
    );
    let text = to_text(&spec, &recorded);
    assert!(
        text.contains("the gate passed: 10.0.0.5 is out of api and api-int"),
        "{text}"
    );
    assert!(!text.contains("= 10.0.0.5"), "{text}");
}

#[test]
fn before_reserve_the_records_name_the_pending_reservations() {
    let spec = spec();
    let recorded = JournalState::default();
    let report = report(&spec, &recorded);
    let api_int = report
        .records
        .iter()
        .find(|r| r.name.starts_with("api-int."))
        .unwrap();
    assert_eq!(api_int.values, [ip(BOOTSTRAP)]);
    assert_eq!(api_int.pending, ["private-ipv4"]);
    assert!(to_text(&spec, &recorded).contains("<private-ipv4>"));
    // The wait cannot compare a value that does not exist yet: it is left out.
    let expected = expected_values(&records_now(&spec, &recorded));
    assert!(expected.iter().all(|r| r.values.len() <= 1), "{expected:?}");
}

#[test]
fn with_cloud_dns_the_same_records_are_what_the_agent_writes() {
    let mut spec = spec();
    spec.dns = DnsManagement::Cloud;
    let recorded = reserved(&spec);
    let report = report(&spec, &recorded);
    assert_eq!(report.written_by, "agent");
    assert_eq!(report.because, None);
    assert_eq!(
        values_of(&report, "private", "api-int."),
        [ip(BOOTSTRAP), ip(PRIVATE)]
    );
    assert!(to_text(&spec, &recorded).starts_with("cloud DNS: the agent writes"));
}

#[test]
fn the_json_schema_is_the_documented_one() {
    let spec = spec();
    let json = serde_json::to_value(report(&spec, &reserved(&spec))).unwrap();
    assert_eq!(json["written_by"], "user");
    assert_eq!(json["because"], "--dns manual");
    assert_eq!(json["bootstrap_ip"], BOOTSTRAP);
    assert_eq!(json["bootstrap_removed"], false);
    let api_int = json["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "api-int.mycluster.example.com")
        .unwrap();
    let mut keys: Vec<&str> = api_int
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["name", "ttl", "type", "values", "visibility", "zone"],
        "{api_int}"
    );
    assert_eq!(api_int["type"], "A");
    assert_eq!(api_int["visibility"], "private");
    assert_eq!(api_int["zone"], "mycluster.example.com");
    assert_eq!(api_int["ttl"], spec.record_ttl);
    assert_eq!(api_int["values"], serde_json::json!([BOOTSTRAP, PRIVATE]));
}

/// After the hand-over the journal keeps the reservations under `handed_over`; addresses the
/// user made are under `adopted`. Both are still what the records hold, never "pending".
#[test]
fn handed_over_and_adopted_reservations_are_values_not_pending() {
    let spec = spec();
    let reserved = reserved(&spec).reservations;
    let (public, private): (Vec<_>, Vec<_>) = reserved
        .into_iter()
        .partition(|r| r.key.scope == Scope::Public);
    let recorded = JournalState {
        bootstrap_ip: Some(ip(BOOTSTRAP)),
        handed_over: private,
        adopted: public,
        ..JournalState::default()
    };
    let report = report(&spec, &recorded);
    assert_eq!(
        values_of(&report, "private", "api-int."),
        [ip(BOOTSTRAP), ip(PRIVATE)],
        "{report:?}"
    );
    assert_eq!(values_of(&report, "public", "api."), [ip(PUBLIC)]);
    assert!(
        report.records.iter().all(|r| r.pending.is_empty()),
        "{report:?}"
    );
}
