//! The pure parts of the private-IP settling: records, verdicts, candidates.

use super::*;
use crate::azure::subnet::parse_v4_prefix;
use serde_json::json;
use std::collections::BTreeSet;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn group(name: &str, tags: Value) -> Value {
    json!({"id": format!("/subscriptions/s/resourceGroups/{name}"), "name": name,
           "type": "Microsoft.Resources/resourceGroups", "location": "eastus",
           "properties": {"provisioningState": "Succeeded"}, "tags": tags})
}

#[test]
fn records_are_the_private_ipv4_tags_of_every_group_held_or_claimed() {
    let groups = [
        group(
            "a-rg",
            json!({"a-1-rsvd-private-ipv4": "10.0.1.200", "owner": "team",
                   "a-1-rsvd-private-ipv6": "fd00::1"}),
        ),
        group("b-rg", json!({"B-2-RSVD-PRIVATE-IPV4": "claim:10.0.1.201"})),
        group("c-rg", json!({"c-3-rsvd-private-ipv4": "not an ip"})),
        json!({"name": "untagged-rg", "location": "eastus"}),
    ];
    assert_eq!(
        records_of(&groups),
        vec![
            Record {
                rg: "a-rg".into(),
                tag: "a-1-rsvd-private-ipv4".into(),
                recorded: Recorded::Held(ip("10.0.1.200")),
            },
            Record {
                rg: "b-rg".into(),
                tag: "B-2-RSVD-PRIVATE-IPV4".into(),
                recorded: Recorded::Claimed(ip("10.0.1.201")),
            },
        ]
    );
}

fn record(tag: &str, rg: &str, value: &str) -> Record {
    Record {
        rg: rg.into(),
        tag: tag.into(),
        recorded: Recorded::parse(value).unwrap(),
    }
}

#[test]
fn a_claim_is_kept_alone_yields_to_a_holder_or_a_lower_claim_and_waits_for_higher_ones() {
    let x = ip("10.0.1.200");
    let me = record("m-1-rsvd-private-ipv4", "m-rg", "claim:10.0.1.200");
    let judge = |others: &[Record]| {
        let mut all = vec![me.clone()];
        all.extend_from_slice(others);
        verdict(&all, "m-1-rsvd-private-ipv4", "M-RG", x)
    };
    assert_eq!(judge(&[]), Verdict::Keep);
    // Another address, or our own older value elsewhere, is no rival.
    assert_eq!(
        judge(&[record("a-1-rsvd-private-ipv4", "a-rg", "10.0.1.201")]),
        Verdict::Keep
    );
    // A holder wins, whatever its rank.
    assert!(matches!(
        judge(&[record("z-1-rsvd-private-ipv4", "z-rg", "10.0.1.200")]),
        Verdict::Yield(why) if why.contains("holds it")
    ));
    // Claims: the lower-ranked one goes first; we wait for a higher one.
    assert!(matches!(
        judge(&[record("a-1-rsvd-private-ipv4", "a-rg", "claim:10.0.1.200")]),
        Verdict::Yield(why) if why.contains("ranks first")
    ));
    assert!(matches!(
        judge(&[record("z-1-rsvd-private-ipv4", "z-rg", "claim:10.0.1.200")]),
        Verdict::Wait(_)
    ));
    // The same infra id in another resource group ranks by the group.
    assert!(matches!(
        judge(&[record("m-1-rsvd-private-ipv4", "a-rg", "claim:10.0.1.200")]),
        Verdict::Yield(_)
    ));
    // Until our claim shows, nothing is judged.
    assert_eq!(
        verdict(&[], "m-1-rsvd-private-ipv4", "m-rg", x),
        Verdict::Unseen
    );
    let held = record("m-1-rsvd-private-ipv4", "m-rg", "10.0.1.200");
    assert_eq!(
        verdict(&[held], "m-1-rsvd-private-ipv4", "m-rg", x),
        Verdict::Unseen
    );
}

#[test]
fn candidates_start_in_the_upper_half_at_a_hashed_offset_and_cover_every_usable_address() {
    let (net, len) = parse_v4_prefix("10.0.1.0/24").unwrap();
    let all: Vec<Ipv4Addr> = candidates(net, len, "mycluster-7xk2p", 0).collect();
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 251, "each of .4 to .254 once");
    assert_eq!(sorted[0], Ipv4Addr::new(10, 0, 1, 4));
    assert_eq!(sorted[250], Ipv4Addr::new(10, 0, 1, 254));
    assert!(
        all[..127].iter().all(|a| a.octets()[3] >= 128),
        "upper half first"
    );
    assert_eq!(
        all[127],
        Ipv4Addr::new(10, 0, 1, 127),
        "then the lower half, top down"
    );
    // Deterministic, and apart for other clusters and other rounds.
    let first = |id: &str, round| candidates(net, len, id, round).next().unwrap();
    assert_eq!(first("mycluster-7xk2p", 0), all[0]);
    let starts: BTreeSet<Ipv4Addr> = (0..20)
        .map(|i| first(&format!("clu{i:02}-7xk2p"), 0))
        .collect();
    assert!(starts.len() >= 15, "20 clusters start apart: {starts:?}");
    assert_ne!(first("mycluster-7xk2p", 0), first("mycluster-7xk2p", 1));
    // A /29 has three usable addresses.
    let (net, len) = parse_v4_prefix("10.0.1.0/29").unwrap();
    let mut small: Vec<Ipv4Addr> = candidates(net, len, "x", 0).collect();
    small.sort();
    assert_eq!(
        small,
        vec![
            Ipv4Addr::new(10, 0, 1, 4),
            Ipv4Addr::new(10, 0, 1, 5),
            Ipv4Addr::new(10, 0, 1, 6)
        ]
    );
}

#[test]
fn claims_and_held_values_round_trip() {
    for value in ["10.0.1.200", "claim:10.0.1.200", "fd00::1"] {
        assert_eq!(Recorded::parse(value).unwrap().value(), value);
    }
    assert_eq!(Recorded::parse("claim:nope"), None);
    assert_eq!(Recorded::parse(""), None);
}

#[test]
fn candidates_go_down_from_the_hashed_start_and_wrap_to_the_top_of_the_upper_half() {
    let (net, len) = parse_v4_prefix("10.0.1.0/24").unwrap();
    let host = |a: &Ipv4Addr| a.octets()[3];
    let upper: Vec<u8> = candidates(net, len, "mycluster-7xk2p", 0)
        .take(127)
        .map(|a| host(&a))
        .collect();
    for pair in upper.windows(2) {
        let next = if pair[0] == 128 { 254 } else { pair[0] - 1 };
        assert_eq!(pair[1], next, "down and around: {upper:?}");
    }
}
