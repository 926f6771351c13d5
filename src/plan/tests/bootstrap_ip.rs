//! The bootstrap IP: unknown, leading the private records, or held by a reservation.

use super::*;

// ---- (g) bootstrap IP unknown ---------------------------------------------------------------

#[test]
fn unknown_bootstrap_ip_adds_a_note_and_seeds_only_reserved_ips() {
    for name in &fixtures() {
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
            // Azure Stack Hub has no private zone: its api-int is in the public one.
            let private_values = |values: &[Value]| {
                values
                    .iter()
                    .any(|v| matches!(v, Value::Reserved(k) if k.scope == Scope::Private))
            };
            if let Change::AddRecordValues { zone, values, .. } = change
                && (zone.private || private_values(values))
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
        let stack = matches!(&spec.platform, Platform::Azure(a) if !a.cloud.has_private_dns());
        assert!(private_records >= if stack { 1 } else { 2 }, "{name}");
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
    for name in &fixtures() {
        let spec = spec(name);
        let plan = Plan::calculate(&spec, &Observed::default(), &[Step::SeedDns], 1);
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
