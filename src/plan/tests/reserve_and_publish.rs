//! Partial reserves, generations, and what publish Internal/Mixed reserve.

use super::*;

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
    let plan = Plan::calculate(&spec, &observed, &[Step::Reserve], 1);
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
    for name in &fixtures() {
        let spec = spec(name);
        let g1 = Plan::calculate(&spec, &Observed::default(), &[Step::Reserve], 1);
        let g2 = Plan::calculate(&spec, &Observed::default(), &[Step::Reserve], 2);
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
