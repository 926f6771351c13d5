//! Several clusters in one Azure vnet: the private IPv4 each agent picks is settled among the
//! others' records (resource-group tags `<infra-id>-rsvd-private-ipv4`), which
//! CheckIPAddressAvailability does not know about. Two real agents start at once on the same
//! address; rivals played by the fake (`RivalClaim`) claim the agent's address in the same
//! instant it does, ranked lower or higher, claiming or already holding; a SIGKILL between the
//! claim and the keep resumes safely. Twenty at once: `tests/many_clusters.rs`.
#![cfg(feature = "azure")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::Hold;
use bootstrap_sim::azure::{CLUSTER_RG, RivalClaim};
use common::azure::*;
use common::*;
use std::time::{Duration, Instant};

/// A second cluster in the same vnet whose hashed start is the same address as
/// `mycluster-7xk2p`'s (10.0.1.215): the two must settle it between them.
const OTHER_INFRA: &str = "other171-7xk2p";
const OTHER_TAG: &str = "other171-7xk2p-rsvd-private-ipv4";

/// The value of tag `tag` on resource group `rg`, as the fake has it.
fn tag(world: &AzureWorld, rg: &str, tag: &str) -> Option<String> {
    world.0["resource_group_tags"][rg][tag]
        .as_str()
        .map(str::to_string)
}

fn tag_patches(h: &AzureHarness) -> usize {
    h.calls().iter().filter(|c| *c == TAGS).count()
}

/// A rival cluster ranked above ours: its resource group and its record's tag.
const HIGHER: (&str, &str) = ("zzz-rg", "zzz-99999-rsvd-private-ipv4");
/// A rival cluster ranked below ours.
const LOWER: (&str, &str) = ("aaa-rg", "aaa-00000-rsvd-private-ipv4");

/// `reserve` on a fresh world with the rival `(rg, tag)` armed, `held` (else claiming) and
/// yielding after that many lists (never: `None`): the harness, how long `reserve` took, and
/// the world after it.
async fn reserve_against(
    (rg, tag): (&str, &str),
    held: bool,
    yields_after_lists: Option<usize>,
) -> (AzureHarness, Duration, AzureWorld) {
    let h = AzureHarness::new("azure").await;
    h.peers.sim.race_private_claims(vec![RivalClaim {
        rg: rg.into(),
        tag: tag.into(),
        held,
        yields_after_lists,
    }]);
    h.peers.reset_counts();
    let started = Instant::now();
    h.run(&["reserve"]).await;
    let took = started.elapsed();
    let world = h.world().await;
    (h, took, world)
}

/// The agent holds one private IP, not the address it started at.
fn assert_picked_another(world: &AzureWorld) {
    let ours = world.private_ips();
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert_ne!(ours[0], EXPECTED_PRIVATE_IP, "both never keep one address");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_agents_starting_at_once_on_the_same_address_end_with_different_private_ips() {
    let h = AzureHarness::new("azure").await;
    let other_rg = format!("{OTHER_INFRA}-rg");
    h.peers
        .sim
        .create_cluster_resource_group(&other_rg, Some("mycluster.example.com"));
    // Its bootstrap VM, where its second address goes.
    h.peers
        .sim
        .add_bootstrap_nic(&other_rg, OTHER_INFRA, "10.0.1.11".parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let assets = dir.path().join("assets");
    fixtures::copy_dir(&fixture("azure"), &assets);
    replace_in_dir(&assets, INFRA, OTHER_INFRA);
    let mut other = Agent::new(dir, assets, "10.0.1.11", h.peers.agent_env());
    other.env_remove.push("AZURE_CLIENT_SECRET");

    tokio::join!(h.run(&["reserve"]), other.run(&["reserve"]));

    let world = h.world().await;
    let ours = tag(&world, CLUSTER_RG, PRIVATE_TAG).unwrap();
    let theirs = tag(&world, &other_rg, OTHER_TAG).unwrap();
    assert_ne!(ours, theirs, "{:#}", world.0["resource_group_tags"]);
    for ip in [&ours, &theirs] {
        let ip: std::net::Ipv4Addr = ip.parse().unwrap_or_else(|_| panic!("held, not {ip}"));
        assert_eq!(ip.octets()[..3], [10, 0, 1], "{ip} in the compute subnet");
    }
    assert!(
        [&ours, &theirs].contains(&&EXPECTED_PRIVATE_IP.to_string()),
        "one of them keeps the address both started at"
    );
    // Their bootstrap hosts' second addresses: one each, on no other's address.
    let mut held = vec![ours.clone(), theirs.clone()];
    for nic in world.0["nics"].as_array().unwrap() {
        let configs = nic["ip_configurations"].as_array().unwrap();
        assert_eq!(configs.len(), 2, "the primary and the second: {nic}");
        held.extend(
            configs
                .iter()
                .map(|c| c["ip"].as_str().unwrap().to_string()),
        );
    }
    let distinct: std::collections::BTreeSet<&String> = held.iter().collect();
    assert_eq!(
        distinct.len(),
        held.len(),
        "an address held twice: {held:?}"
    );
    // Each agent sees its own, and a second reserve of either changes nothing.
    h.peers.reset_counts();
    h.run(&["reserve"]).await;
    other.run(&["reserve"]).await;
    assert!(h.peers.mutating_calls().is_empty(), "{:?}", h.calls());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lower_ranked_rival_claiming_the_same_address_wins_and_the_agent_picks_again() {
    let (h, took, world) = reserve_against(LOWER, false, None).await;
    let ours = tag(&world, CLUSTER_RG, PRIVATE_TAG).unwrap();
    assert_eq!(
        tag(&world, LOWER.0, LOWER.1).as_deref(),
        Some(format!("claim:{EXPECTED_PRIVATE_IP}").as_str()),
        "the rival claimed the agent's first pick and keeps its claim"
    );
    assert_ne!(ours, EXPECTED_PRIVATE_IP, "the agent yielded it");
    assert!(ours.parse::<std::net::Ipv4Addr>().is_ok(), "held: {ours}");
    assert_eq!(
        tag_patches(&h),
        3,
        "claim, claim again, keep: {:?}",
        h.calls()
    );
    assert!(took < Duration::from_secs(8), "no waiting: {took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_higher_ranked_rival_claim_yields_and_the_agent_keeps_its_address() {
    let (h, _, world) = reserve_against(HIGHER, false, Some(1)).await;
    assert_eq!(world.private_ips(), vec![EXPECTED_PRIVATE_IP.to_string()]);
    assert_eq!(tag(&world, HIGHER.0, HIGHER.1), None, "the rival withdrew");
    assert_eq!(tag_patches(&h), 2, "claim, keep: {:?}", h.calls());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rival_already_holding_the_address_wins_at_once_whatever_its_rank() {
    let (_, took, world) = reserve_against(HIGHER, true, None).await;
    assert_eq!(
        tag(&world, HIGHER.0, HIGHER.1).as_deref(),
        Some(EXPECTED_PRIVATE_IP)
    );
    assert_picked_another(&world);
    assert!(took < Duration::from_secs(8), "no waiting: {took:?}");
}

/// A higher-ranked rival that read before the agent's claim was written saw nothing and kept
/// the address: it never yields. The agent waits for it (10 s), then yields itself.
#[tokio::test(flavor = "multi_thread")]
async fn a_higher_ranked_rival_that_never_yields_is_waited_for_then_left_the_address() {
    let (_, took, world) = reserve_against(HIGHER, false, None).await;
    assert_picked_another(&world);
    assert!(took >= Duration::from_secs(10), "waited first: {took:?}");
}

/// SIGKILL right after the claim (mutation 2, after the public IP): with no rival, the re-run
/// finds the claim, keeps it as it is (no mutating call), seeds DNS with it and `teardown
/// --all` removes it; with another cluster holding the address meanwhile, the re-run picks
/// again.
#[tokio::test(flavor = "multi_thread")]
async fn sigkill_between_claim_and_keep_resumes_with_the_claim_unless_another_cluster_holds_it() {
    let claim = format!("claim:{EXPECTED_PRIVATE_IP}");
    let h = AzureHarness::new("azure").await;
    h.kill_at(&["reserve"], Hold::After(2)).await;
    let world = h.world().await;
    assert_eq!(tag(&world, CLUSTER_RG, PRIVATE_TAG), Some(claim.clone()));
    h.peers.reset_counts();
    h.run(&["reserve"]).await;
    assert_eq!(
        h.calls(),
        [BOOTSTRAP_NIC_PUT],
        "the claim kept as it is; only the second address the kill left undone"
    );
    h.run(&["dns", "seed"]).await;
    let world = h.world().await;
    assert_eq!(tag(&world, CLUSTER_RG, PRIVATE_TAG), Some(claim.clone()));
    assert!(
        world
            .record("private", API)
            .contains(&EXPECTED_PRIVATE_IP.to_string())
    );
    h.run(&["teardown", "--all"]).await;
    assert_eq!(tag(&h.world().await, CLUSTER_RG, PRIVATE_TAG), None);

    let h = AzureHarness::new("azure").await;
    h.kill_at(&["reserve"], Hold::After(2)).await;
    h.peers
        .sim
        .set_resource_group_tag(HIGHER.0, HIGHER.1, EXPECTED_PRIVATE_IP);
    h.peers.reset_counts();
    h.run(&["reserve"]).await;
    assert_eq!(tag_patches(&h), 2, "claim, keep: {:?}", h.calls());
    assert_picked_another(&h.world().await);
}

/// Another cluster records, for its load balancer, the very address the bootstrap NIC's new IP
/// configuration was just given (its claim written after the agent read the records, before
/// Azure counted the NIC's address): the second address yields (taken off the NIC, another
/// picked); the rival keeps its claim and no address is held twice. (Old code kept it: one
/// cluster's load balancer and another's bootstrap host on one address.)
#[tokio::test(flavor = "multi_thread")]
async fn a_second_address_another_cluster_recorded_meanwhile_is_given_up_and_picked_again() {
    let h = AzureHarness::new("azure").await;
    h.peers.sim.race_second_addresses(vec![RivalClaim {
        rg: LOWER.0.into(),
        tag: LOWER.1.into(),
        held: false,
        yields_after_lists: None,
    }]);
    h.peers.reset_counts();
    h.run(&["reserve"]).await;
    let world = h.world().await;
    let second = world.assert_second_address();
    let rival = tag(&world, LOWER.0, LOWER.1).unwrap();
    let rival = rival.strip_prefix("claim:").unwrap();
    assert_ne!(second, rival, "the rival's, not the bootstrap host's");
    assert_eq!(world.private_ips(), vec![EXPECTED_PRIVATE_IP.to_string()]);
    let nic_puts = h.calls().iter().filter(|c| *c == BOOTSTRAP_NIC_PUT).count();
    assert_eq!(
        nic_puts,
        3,
        "added, taken off, added again: {:?}",
        h.calls()
    );
    h.peers.reset_counts();
    h.run(&["reserve"]).await;
    assert!(h.peers.mutating_calls().is_empty(), "{:?}", h.calls());
}

/// Every resource group of the subscription is read (in one page: the agent asks for 1000 a
/// page; `settle_tests` has records spread over pages), held and claimed records alike count
/// as taken.
#[tokio::test(flavor = "multi_thread")]
async fn records_of_other_clusters_are_read_from_every_resource_group_of_the_subscription() {
    let h = AzureHarness::new("azure").await;
    // Ten other clusters recorded the ten addresses from ours down: the agent goes past them.
    for i in 0..10u8 {
        let value = if i % 2 == 0 {
            format!("10.0.1.{}", 215 - i)
        } else {
            format!("claim:10.0.1.{}", 215 - i)
        };
        h.peers.sim.set_resource_group_tag(
            &format!("c{i}-rg"),
            &format!("c{i}-abcde-rsvd-private-ipv4"),
            &value,
        );
    }
    h.run(&["reserve"]).await;
    let ours = h.world().await.private_ips();
    assert_eq!(
        ours,
        vec!["10.0.1.205".to_string()],
        "the first not recorded"
    );
}

/// Without the permission to list the subscription's resource groups, `reserve` fails naming
/// it, and claims nothing.
#[tokio::test(flavor = "multi_thread")]
async fn without_the_resource_group_read_permission_reserve_fails_naming_it() {
    let h = AzureHarness::new("azure").await;
    h.peers.sim.deny_resource_group_list();
    let out = h.command(&["reserve"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("AuthorizationFailed")
            && stderr.contains(
                "Microsoft.Resources/subscriptions/resourceGroups/read on the subscription"
            ),
        "{stderr}"
    );
    assert_eq!(tag_patches(&h), 0, "{:?}", h.calls());
    assert!(h.world().await.private_ips().is_empty());
}

/// Replaces `from` by `to` in every file under `dir`.
fn replace_in_dir(dir: &std::path::Path, from: &str, to: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            replace_in_dir(&path, from, to);
        } else {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, text.replace(from, to)).unwrap();
        }
    }
}
