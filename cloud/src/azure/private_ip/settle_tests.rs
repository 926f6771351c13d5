//! The async half of the private-IP choice (pick, claim, settle) against a small in-process
//! ARM: resource groups with their tags, the compute subnet, CheckIPAddressAvailability. Other
//! clusters act through `react`, called on every list read and tag write.
#![allow(clippy::unwrap_used)]

mod fake;

use super::*;
use crate::azure::claims::CLAIM;
use crate::azure::{AzureSettings, ClientSecret};
use fake::{Event, Fake, Groups, RG, React, TAG, World};
use std::time::Instant;

pub(crate) fn settings() -> AzureSettings {
    AzureSettings {
        subscription_id: "sub".into(),
        infra_id: "m-1".into(),
        region: "eastus".into(),
        resource_group: RG.into(),
        base_domain_resource_group: "dns-rg".into(),
        network_resource_group: "net-rg".into(),
        virtual_network: "vnet".into(),
        compute_subnet: "compute".into(),
        credential: ClientSecret {
            tenant_id: "t".into(),
            client_id: "c".into(),
            client_secret: "s".into(),
        },
        arm_endpoint: String::new(),
        authority_host: String::new(),
        token_scope: String::new(),
        api: crate::azure::ApiVersions::AZURE,
        second_address_host: None,
    }
}

/// The candidates of round `round` for this cluster's compute subnet.
fn candidate(round: u32, n: usize) -> Ipv4Addr {
    candidates(Ipv4Addr::new(10, 0, 1, 0), 24, "m-1", round)
        .nth(n)
        .unwrap()
}

/// z-1 (it ranks after us) claims `x` as soon as our claim of it is written, and yields at
/// the list read numbered `read`.
fn rival_claims_then_yields_at_read(x: Ipv4Addr, read: usize) -> React {
    Box::new(move |event, groups| match event {
        Event::TagWrite(op, tag, value)
            if op == "Merge" && tag == TAG && *value == format!("claim:{x}") =>
        {
            groups
                .entry("z-rg".into())
                .or_default()
                .insert("z-1-rsvd-private-ipv4".into(), format!("claim:{x}"));
        }
        Event::ListRead(n) if *n == read => {
            groups.remove("z-rg");
        }
        _ => {}
    })
}

fn groups(entries: &[(&str, &str, &str)]) -> Groups {
    let mut groups = Groups::new();
    for (rg, tag, value) in entries {
        groups
            .entry((*rg).to_string())
            .or_default()
            .insert((*tag).to_string(), (*value).to_string());
    }
    groups
}

/// A world in which, as our claim of `x` is written, another agent's tag `tag` = `value`
/// shows in resource group `group`.
fn when_we_claim(x: Ipv4Addr, group: &'static str, tag: &'static str, value: String) -> World {
    World {
        react: Some(Box::new(move |event, groups| {
            if *event == Event::TagWrite("Merge".into(), TAG.into(), format!("claim:{x}")) {
                groups
                    .entry(group.into())
                    .or_default()
                    .insert(tag.into(), value.clone());
            }
        })),
        ..World::default()
    }
}

fn write(op: &str, value: impl ToString) -> (String, String) {
    (op.to_string(), value.to_string())
}

/// Our tag writes when each of `claimed` is claimed in turn and the last one kept.
fn claimed_then_kept(claimed: &[Ipv4Addr]) -> Vec<(String, String)> {
    let claims = claimed
        .iter()
        .map(|ip| write("Merge", format!("claim:{ip}")));
    claims
        .chain(claimed.last().map(|ip| write("Merge", ip)))
        .collect()
}

#[tokio::test]
async fn the_pick_skips_what_other_clusters_record_and_what_azure_calls_taken_then_keeps_it() {
    let (c0, c1, c2) = (candidate(0, 0), candidate(0, 1), candidate(0, 2));
    let fake = Fake::start(World {
        // Another cluster chose c0 (no NIC holds it yet, so Azure calls it free); a NIC
        // holds c1.
        groups: groups(&[
            ("a-rg", "a-1-rsvd-private-ipv4", &c0.to_string()),
            (RG, "owner", "team"),
        ]),
        in_use: BTreeSet::from([c1]),
        ..World::default()
    })
    .await;
    assert_eq!(fake.settle().await.unwrap(), c2);
    assert_eq!(
        fake.world().checked,
        [c1, c2, c2],
        "c0 is never asked about; c2 again once settled"
    );
    assert_eq!(fake.our_writes(), claimed_then_kept(&[c2]));
    assert_eq!(fake.world().groups[RG][TAG], c2.to_string());
}

/// ARM's pages may hold fewer groups than `$top` asks (it drops what the caller may not read
/// after paging): records on every page count, and the settle read follows every page too.
#[tokio::test]
async fn records_on_every_page_of_the_list_count() {
    let (c0, c1, c2) = (candidate(0, 0), candidate(0, 1), candidate(0, 2));
    let fake = Fake::start(World {
        groups: groups(&[
            ("a-rg", "a-1-rsvd-private-ipv4", &c0.to_string()),
            ("b-rg", "b-1-rsvd-private-ipv4", &format!("claim:{c1}")),
        ]),
        page_size: Some(1),
        ..World::default()
    })
    .await;
    assert_eq!(fake.settle().await.unwrap(), c2, "c0 and c1 are recorded");
    assert_eq!(fake.world().checked, [c2, c2]);
    assert_eq!(fake.world().list_reads(), 2, "one to pick, one to settle");
    assert_eq!(
        fake.world().list_requests,
        6,
        "three pages each (a-rg, b-rg, m-rg)"
    );
    assert_eq!(fake.our_writes(), claimed_then_kept(&[c2]));
}

/// A NIC takes the address between our pick and our keeping it (another cluster's bootstrap
/// host got it as its second address, which no record shows): the settled claim asks
/// CheckIPAddressAvailability once more, yields, and picks again. (Old code kept it: one
/// address for a load balancer and a NIC.)
#[tokio::test]
async fn an_address_a_nic_took_after_the_pick_is_given_up_before_it_is_kept() {
    let (x, y) = (candidate(0, 0), candidate(1, 0));
    let fake = Fake::start(World {
        taken_on_claim: BTreeSet::from([x]),
        ..World::default()
    })
    .await;
    let kept = fake.settle().await.unwrap();
    assert_ne!(kept, x);
    assert_eq!(kept, y, "round 1's first candidate");
    assert_eq!(
        fake.world().checked,
        [x, x, y, y],
        "each asked again once settled"
    );
    assert_eq!(fake.our_writes(), claimed_then_kept(&[x, y]));
}

#[tokio::test]
async fn a_holder_that_shows_with_our_claim_wins_and_the_pick_starts_again() {
    let x = candidate(0, 0);
    // Another agent kept x, having read before our claim was written.
    let fake = Fake::start(when_we_claim(
        x,
        "a-rg",
        "a-1-rsvd-private-ipv4",
        x.to_string(),
    ))
    .await;
    let kept = fake.settle().await.unwrap();
    assert_ne!(kept, x);
    assert_eq!(fake.our_writes(), claimed_then_kept(&[x, kept]));
}

#[tokio::test]
async fn a_claim_waits_for_a_higher_ranked_claim_to_yield_then_keeps_the_address() {
    let x = candidate(0, 0);
    let fake = Fake::start(World {
        // z-1 claimed x too (it ranks after us): it sees our claim and yields two reads later.
        react: Some(rival_claims_then_yields_at_read(x, 4)),
        ..World::default()
    })
    .await;
    assert_eq!(fake.settle().await.unwrap(), x);
    assert_eq!(fake.our_writes(), claimed_then_kept(&[x]));
    assert_eq!(fake.world().list_reads(), 4, "one to pick, three to settle");
}

/// The claim that read before ours and kept its address never yields: after SETTLE_WAIT ours
/// does, having read the records with a growing delay (not a busy loop).
#[tokio::test]
async fn a_higher_ranked_claim_that_stays_past_the_settle_wait_wins() {
    let x = candidate(0, 0);
    let claim = format!("claim:{x}");
    let fake = Fake::start(when_we_claim(x, "z-rg", "z-1-rsvd-private-ipv4", claim)).await;
    let started = Instant::now();
    let kept = fake
        .settle_within(SETTLE_WAIT + Duration::from_secs(10))
        .await
        .unwrap();
    assert!(started.elapsed() >= SETTLE_WAIT, "{:?}", started.elapsed());
    assert_ne!(kept, x);
    let reads = fake.world().list_reads();
    // 1 to pick, ~9 while waiting (0.2 s doubling up to 2 s, jittered), 1 to pick again, 1 to
    // settle.
    assert!((8..=18).contains(&reads), "{reads} reads of the records");
}

/// ARM throttles the list more times in a row than one call retries (5 attempts): the read
/// waits out `Retry-After` and the claim settles, rather than the pass failing (its retry
/// would read everything again). (Old code: a transient error after 5 attempts.)
#[tokio::test]
async fn a_list_throttled_past_the_calls_retries_waits_and_the_claim_settles() {
    let fake = Fake::start(World {
        throttled_lists: (1..=7).collect(),
        throttle_seconds: 1,
        ..World::default()
    })
    .await;
    let kept = fake.settle_within(Duration::from_secs(30)).await.unwrap();
    assert_eq!(fake.our_writes(), claimed_then_kept(&[kept]));
    assert_eq!(fake.world().list_reads(), 2, "one to pick, one to settle");
}

/// Every read is throttled once (2 s), so a higher-ranked rival, throttled as we are, yields
/// only after ours has read 6 times, past SETTLE_WAIT of wall clock: the wait counts our
/// pauses, not the reads, and the claim keeps its address. (Old code yielded after ~10 s
/// of reads, one more claim for everyone to wait on.)
#[tokio::test]
async fn the_settle_wait_counts_pauses_not_throttled_reads() {
    let x = candidate(0, 0);
    let fake = Fake::start(World {
        react: Some(rival_claims_then_yields_at_read(x, 7)),
        throttled_lists: (1..=40).filter(|n| n % 2 == 1).collect(),
        throttle_seconds: 2,
        ..World::default()
    })
    .await;
    let started = Instant::now();
    let kept = fake.settle_within(Duration::from_secs(40)).await.unwrap();
    assert!(started.elapsed() > SETTLE_WAIT, "{:?}", started.elapsed());
    assert_eq!(kept, x, "kept after the rival yielded");
    assert_eq!(fake.our_writes(), claimed_then_kept(&[x]));
}

/// Only throttling is waited out: a list refused for want of the permission fails at once,
/// naming it, without asking again.
#[tokio::test]
async fn a_list_refused_for_want_of_permission_fails_at_once_naming_it() {
    let fake = Fake::start(World {
        lists_forbidden: true,
        ..World::default()
    })
    .await;
    let e = fake.settle().await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Fatal, "{e:?}");
    assert!(
        e.message
            .contains("Microsoft.Resources/subscriptions/resourceGroups/read on the subscription"),
        "{}",
        e.message
    );
    assert_eq!(fake.world().list_requests, 1, "asked once");
    assert!(fake.our_writes().is_empty());
}

#[tokio::test]
async fn after_eight_lost_picks_the_claim_is_withdrawn_and_the_error_says_why() {
    let fake = Fake::start(World {
        // Whatever we claim, another cluster holds it by then.
        react: Some(Box::new(move |event, groups| {
            if let Event::TagWrite(op, tag, value) = event
                && op == "Merge"
                && tag == TAG
                && let Some(ip) = value.strip_prefix(CLAIM)
            {
                groups
                    .entry(format!("other-{ip}"))
                    .or_default()
                    .insert("o-1-rsvd-private-ipv4".into(), ip.to_string());
            }
        })),
        ..World::default()
    })
    .await;
    let e = fake.settle().await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Transient);
    assert!(e.message.contains("in 8 picks"), "{}", e.message);
    let writes = fake.our_writes();
    assert_eq!(writes.len(), 9, "{writes:?}");
    assert_eq!(writes[8].0, "Delete");
    assert!(!fake.world().groups[RG].contains_key(TAG));
}

#[tokio::test]
async fn a_claim_found_after_a_restart_is_ours_only_while_no_other_cluster_records_it() {
    let x: IpAddr = candidate(0, 0).into();
    let alone = Fake::start(World {
        groups: groups(&[(RG, TAG, &format!("claim:{x}"))]),
        ..World::default()
    })
    .await;
    assert_eq!(
        alone.addresses.unrivalled_claim(TAG, x).await.unwrap(),
        Some(x)
    );
    let rivalled = Fake::start(World {
        groups: groups(&[
            (RG, TAG, &format!("claim:{x}")),
            ("a-rg", "a-1-rsvd-private-ipv4", &x.to_string()),
        ]),
        ..World::default()
    })
    .await;
    assert_eq!(
        rivalled.addresses.unrivalled_claim(TAG, x).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn own_records_are_on_our_resource_group_and_named_for_our_infra_id() {
    let fake = Fake::start(World::default()).await;
    let own = |rg: &str, tag: &str| {
        fake.addresses.is_own(&Record {
            rg: rg.into(),
            tag: tag.into(),
            recorded: Recorded::Held(IpAddr::V4(Ipv4Addr::new(10, 0, 1, 9))),
        })
    };
    assert!(
        own("M-RG", "M-1-rsvd-private-ipv4"),
        "ARM names ignore case"
    );
    assert!(!own("a-rg", TAG), "another resource group");
    assert!(!own(RG, "m-10-rsvd-private-ipv4"), "another infra id");
}

/// A list without the cluster's own group (ARM filters out what the caller may not read) is
/// told apart from one showing it, whatever the case of the name.
#[test]
fn a_list_without_the_clusters_group_is_seen() {
    let groups = [
        serde_json::json!({"name": "other-rg"}),
        serde_json::json!({"name": "MyCluster-RG"}),
    ];
    assert!(super::records::lists_group(&groups, "mycluster-rg"));
    assert!(!super::records::lists_group(&groups[..1], "mycluster-rg"));
    assert!(!super::records::lists_group(&[], "mycluster-rg"));
}
