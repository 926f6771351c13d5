//! Re-runs plan nothing; another writer's values are never touched; duplicates from a
//! lost idempotency token are settled.

use super::*;

// ---- (a) re-run after success ---------------------------------------------------------------

#[test]
fn rerun_after_success_plans_nothing() {
    for name in &fixtures() {
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
    assert!(Plan::calculate(&spec, &observed, &[Step::SeedDns], 1).is_empty());
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
    let plan = Plan::calculate(&spec, &fresh, &[Step::SeedDns], 1);
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

    let seed = Plan::calculate(&spec, &observed, &[Step::SeedDns], 1);
    assert!(seed.is_empty(), "{}", seed.to_text(&observed));

    // Step 3: only the bootstrap IP leaves, and only from the private records.
    let teardown = Plan::calculate(&spec, &observed, &[Step::RemoveBootstrap], 1);
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
    let all = Plan::calculate(&spec, &observed, &[Step::TeardownAll], 1);
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
    assert!(Plan::calculate(&spec, &observed, &[Step::RemoveBootstrap], 1).is_empty());
}

#[test]
fn teardown_all_releases_every_observed_reservation_even_when_dns_is_gone() {
    let spec = spec("azure-dualstack");
    let observed = reserved_only(&spec);
    let plan = Plan::calculate(&spec, &observed, &[Step::TeardownAll], 1);
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

/// With `duplicate` listed first and then last next to the original, a Reserve plan releases
/// exactly `released` as a duplicate of `kept`, and the wanted key resolves to `kept`'s IP.
/// Returns the cloud as observed in each order.
fn assert_duplicate_settled(
    spec: &ClusterSpec,
    observed: &Observed,
    duplicate: &Reservation,
    kept: &Reservation,
    released: &Reservation,
) -> Vec<Observed> {
    let mut seen = Vec::new();
    for duplicate_first in [false, true] {
        let mut observed = observed.clone();
        observed.reservations.retain(|r| r.id != duplicate.id);
        if duplicate_first {
            observed.reservations.insert(0, duplicate.clone());
        } else {
            observed.reservations.push(duplicate.clone());
        }
        let plan = Plan::calculate(spec, &observed, &[Step::Reserve], 1);
        assert_eq!(
            plan.changes,
            vec![Change::ReleaseAddress {
                reservation: released.clone(),
                reason: format!("duplicate of {}", kept.id),
            }],
            "duplicate first: {duplicate_first}"
        );
        assert_eq!(
            observed.resolve(&Value::Reserved(kept.key.clone())),
            Some(kept.ip)
        );
        seen.push(observed);
    }
    seen
}

#[test]
fn duplicate_reservation_keeps_the_one_in_dns_and_releases_the_other() {
    let spec = spec("aws");
    let (observed, original, duplicate) = with_duplicate(&spec);
    for observed in assert_duplicate_settled(&spec, &observed, &duplicate, &original, &duplicate) {
        assert!(Plan::calculate(&spec, &observed, &[Step::SeedDns], 1).is_empty());
    }
}

#[test]
fn duplicate_reservation_with_neither_in_dns_keeps_the_lowest_id() {
    let spec = spec("aws");
    let (mut observed, original, duplicate) = with_duplicate(&spec);
    for r in &mut observed.records {
        r.current = None;
    }
    assert_eq!(duplicate.key, original.key);
    assert_duplicate_settled(&spec, &observed, &duplicate, &duplicate, &original);
}
