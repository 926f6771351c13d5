use super::*;
use bootstrap_cloud::{Reservation, ReservationKey};
use std::collections::BTreeMap;

fn reservation(key: &str, id: &str, ip: &str) -> Reservation {
    Reservation {
        key: ReservationKey::parse(key).unwrap(),
        id: id.into(),
        name: format!("name-{id}"),
        ip: ip.parse().unwrap(),
    }
}

fn record(scope: Exposure) -> RunRecord {
    let state = JournalState {
        generation: 3,
        reservations: vec![reservation(
            "public-ipv4@subnet-a",
            "eipalloc-1",
            "203.0.113.7",
        )],
        adopted: vec![reservation(
            "public-ipv4@subnet-b",
            "eipalloc-9",
            "203.0.113.9",
        )],
        records: vec![RecordValues {
            zone: "example.com".into(),
            record: "api.mycluster.example.com A".into(),
            values: vec!["203.0.113.7".parse().unwrap()],
        }],
        ..JournalState::default()
    };
    RunRecord::of(&state, "mycluster-7xk2p", scope)
}

#[test]
fn a_journal_started_from_the_record_is_a_completed_run_with_its_reservations_and_scope() {
    let journal = record(Exposure::External).journal(Exposure::External);
    assert_eq!(journal.run_step, Some(crate::machine::State::Done));
    assert!(journal.bootstrap_removed);
    assert_eq!(journal.infra_id.as_deref(), Some("mycluster-7xk2p"));
    assert_eq!(journal.generation, 3);
    assert_eq!(journal.reservations.len(), 1);
    assert_eq!(journal.adopted.len(), 1, "the user's stay the user's");
    assert_eq!(journal.records.len(), 1);
    assert!(journal.scope_change.is_none(), "the install-config's scope");

    let journal = record(Exposure::Internal).journal(Exposure::External);
    let change = journal.scope_change.expect("a change done");
    assert_eq!(
        (change.from, change.to),
        (Exposure::External, Exposure::Internal)
    );
    assert_eq!(change.phase, "done");
}

#[test]
fn the_record_round_trips_through_the_config_map_and_names_its_cluster() {
    let written = record(Exposure::External);
    let data = BTreeMap::from([(KEY.to_string(), serde_json::to_string(&written).unwrap())]);
    assert_eq!(
        RunRecord::parse(Some(&data), "mycluster-7xk2p").unwrap(),
        written
    );
    let other = RunRecord::parse(Some(&data), "other-1").unwrap_err();
    assert!(
        other.problem.contains("names cluster mycluster-7xk2p"),
        "{other}"
    );
    let missing = RunRecord::parse(Some(&BTreeMap::new()), "mycluster-7xk2p").unwrap_err();
    assert_eq!(
        missing.to_string().split(": ").take(2).collect::<Vec<_>>(),
        ["ConfigMap kube-system/bootstrap-agent", KEY]
    );
    assert!(
        missing.problem.contains("did not complete an install"),
        "{missing}"
    );
}

#[test]
fn a_reservation_the_cloud_no_longer_shows_as_ours_is_left_out() {
    let mut journal = record(Exposure::External).journal(Exposure::External);
    let dropped = confirm(&mut journal, &[]);
    assert_eq!(dropped, ["public-ipv4@subnet-a eipalloc-1 203.0.113.7"]);
    assert!(journal.reservations.is_empty());
    assert_eq!(
        journal.adopted.len(),
        1,
        "the user's are not ours to confirm"
    );
    let mut journal = record(Exposure::External).journal(Exposure::External);
    let shown = [reservation(
        "public-ipv4@subnet-a",
        "eipalloc-1",
        "203.0.113.7",
    )];
    assert!(confirm(&mut journal, &shown).is_empty());
    assert_eq!(journal.reservations.len(), 1);
}
