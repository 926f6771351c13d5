//! Which steps observe the record sets: only those that change a record, and `reserve` and
//! `hand-over` when they must choose among duplicates (the one in DNS is kept).

use super::*;

#[test]
fn reserve_and_hand_over_read_no_record_without_duplicates() {
    let spec = spec("aws");
    let none: Vec<Reservation> = Vec::new();
    let all = all_reservations(&spec);
    for reservations in [&none, &all] {
        for step in Step::ALL {
            let dns_free = matches!(step, Step::Reserve | Step::HandOver);
            assert_eq!(
                reads_records(step, reservations),
                !dns_free,
                "{} with {} reservations",
                step.name(),
                reservations.len()
            );
        }
    }
}

#[test]
fn with_a_duplicate_every_step_reads_the_records_to_keep_the_one_in_dns() {
    let spec = spec("aws");
    let mut reservations = all_reservations(&spec);
    let duplicate = Reservation {
        id: "rsv-00".into(),
        ip: ip("203.0.113.99"),
        ..reservations[0].clone()
    };
    reservations.push(duplicate);
    for step in Step::ALL {
        assert!(reads_records(step, &reservations), "{}", step.name());
    }
}

/// Without duplicates, `reserve` plans the same with the records observed or not: nothing it
/// decides depends on them then.
#[test]
fn without_duplicates_reserve_plans_the_same_with_or_without_the_records() {
    for name in fixtures() {
        let spec = spec(&name);
        for observed in [done(&spec), reserved_only(&spec), Observed::default()] {
            assert!(!reads_records(Step::Reserve, &observed.reservations));
            let without = Observed {
                records: Vec::new(),
                ..observed.clone()
            };
            let with = Plan::calculate(&spec, &observed, &[Step::Reserve], 1);
            let alone = Plan::calculate(&spec, &without, &[Step::Reserve], 1);
            assert_eq!(
                serde_json::to_value(&with).unwrap(),
                serde_json::to_value(&alone).unwrap(),
                "{name}"
            );
        }
    }
}
