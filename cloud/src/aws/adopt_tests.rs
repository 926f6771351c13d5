//! Which user-made EIPs and ENIs fit which purpose, and the reasons for those that do not.

use super::*;

const INFRA: &str = "c-1";

fn query(text: &str) -> UserReservationQuery {
    let key = ReservationKey::parse(text).unwrap();
    let name = format!(
        "{INFRA}-rsvd-{}-{}",
        key.purpose(),
        key.placement.clone().unwrap()
    );
    UserReservationQuery {
        key,
        lookup: UserLookup::Name(name),
        adopted_before: None,
    }
}

fn eip(id: &str, name: &str, ip: &str) -> Found {
    Found {
        id: id.into(),
        name: name.into(),
        ip: ip.parse().ok(),
        kind: Kind::Eip {
            vpc: true,
            associated: None,
        },
    }
}

fn eni(id: &str, name: &str, subnet: &str, ip: &str) -> Found {
    Found {
        id: id.into(),
        name: name.into(),
        ip: ip.parse().ok(),
        kind: Kind::Eni {
            subnet: subnet.into(),
            attached_to: None,
        },
    }
}

fn queries() -> Vec<UserReservationQuery> {
    [
        "public-ipv4@pub-a",
        "public-ipv4@pub-b",
        "private-ipv4@prv-a",
        "private-ipv4@prv-b",
    ]
    .into_iter()
    .map(query)
    .collect()
}

fn fitted(out: &[UserMade]) -> BTreeMap<String, String> {
    out.iter()
        .filter_map(|m| match m {
            UserMade::Fits(r) => Some((r.key.to_string(), r.id.clone())),
            UserMade::Misfit { .. } => None,
        })
        .collect()
}

fn misfits(out: &[UserMade]) -> Vec<String> {
    out.iter()
        .filter_map(|m| match m {
            UserMade::Misfit { resource, problem } => Some(format!("{resource}: {problem}")),
            UserMade::Fits(_) => None,
        })
        .collect()
}

#[test]
fn suffixed_names_fit_their_subnet_and_plain_names_fill_in_order() {
    let found = vec![
        eip("eipalloc-2", "c-1-rsvd-public-ipv4", "203.0.113.2"),
        eip("eipalloc-1", "c-1-rsvd-public-ipv4-pub-b", "203.0.113.1"),
        eni("eni-1", "c-1-rsvd-private-ipv4", "prv-a", "10.0.1.5"),
        eni("eni-2", "c-1-rsvd-private-ipv4-prv-b", "prv-b", "10.0.2.5"),
    ];
    let out = match_queries(INFRA, &queries(), &found);
    assert!(misfits(&out).is_empty(), "{:?}", misfits(&out));
    let got = fitted(&out);
    assert_eq!(got["public-ipv4@pub-a"], "eipalloc-2");
    assert_eq!(got["public-ipv4@pub-b"], "eipalloc-1");
    assert_eq!(got["private-ipv4@prv-a"], "eni-1");
    assert_eq!(got["private-ipv4@prv-b"], "eni-2");
}

#[test]
fn a_resource_that_cannot_serve_its_purpose_is_named_with_the_reason() {
    let mut attached = eni("eni-9", "c-1-rsvd-private-ipv4-prv-b", "prv-b", "10.0.2.9");
    attached.kind = Kind::Eni {
        subnet: "prv-b".into(),
        attached_to: Some("i-1".into()),
    };
    let found = vec![
        eni("eni-1", "c-1-rsvd-private-ipv4-prv-a", "prv-b", "10.0.2.5"),
        eni("eni-2", "c-1-rsvd-private-ipv4", "pub-a", "10.0.9.5"),
        eni("eni-3", "c-1-rsvd-public-ipv4-pub-a", "pub-a", "10.0.9.6"),
        attached,
    ];
    let bad = misfits(&match_queries(INFRA, &queries(), &found));
    // Each misfit, in order: the ENI named, and what is wrong with it.
    let expected = [
        ("eni-1", "must be in subnet prv-a"),
        ("eni-2", "public subnet pub-a"),
        ("eni-3", "is an elastic IP"),
        ("eni-9", "attached to instance i-1"),
    ];
    assert_eq!(bad.len(), expected.len(), "{bad:?}");
    for (line, (eni, problem)) in bad.iter().zip(expected) {
        assert!(
            line.contains(eni) && line.contains(problem),
            "{eni}: {bad:?}"
        );
    }
}

#[test]
fn an_associated_eip_fits_only_once_it_was_adopted_with_that_ip() {
    let mut associated = eip("eipalloc-1", "c-1-rsvd-public-ipv4-pub-a", "203.0.113.1");
    associated.kind = Kind::Eip {
        vpc: true,
        associated: Some("eni-lb".into()),
    };
    let found = vec![associated];
    let bad = misfits(&match_queries(INFRA, &queries(), &found));
    assert!(bad[0].contains("associated with eni-lb"), "{bad:?}");
    let mut qs = queries();
    qs[0].adopted_before = Some("203.0.113.1".parse().unwrap());
    let out = match_queries(INFRA, &qs, &found);
    assert!(misfits(&out).is_empty());
    assert_eq!(fitted(&out)["public-ipv4@pub-a"], "eipalloc-1");
}

#[test]
fn two_for_one_purpose_and_too_many_plain_eips_are_refused() {
    let found = vec![
        eni("eni-1", "c-1-rsvd-private-ipv4-prv-a", "prv-a", "10.0.1.5"),
        eni("eni-2", "c-1-rsvd-private-ipv4", "prv-a", "10.0.1.6"),
        eip("eipalloc-1", "c-1-rsvd-public-ipv4", "203.0.113.1"),
        eip("eipalloc-2", "c-1-rsvd-public-ipv4", "203.0.113.2"),
        eip("eipalloc-3", "c-1-rsvd-public-ipv4", "203.0.113.3"),
    ];
    let out = match_queries(INFRA, &queries(), &found);
    let bad = misfits(&out);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(
        bad.iter()
            .any(|b| b.contains("eni-2") && b.contains("one per purpose"))
    );
    assert!(
        bad.iter()
            .any(|b| b.contains("eipalloc-3") && b.contains("more elastic IPs"))
    );
    assert_eq!(fitted(&out).len(), 3);
}
