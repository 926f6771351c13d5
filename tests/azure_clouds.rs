//! Azure's clouds: the agent derives ARM, the authority and the token audience from the
//! assets' `cloudName` (Azure Stack Hub: from `armEndpoint`'s metadata). No test here gives an
//! endpoint: every cloud's real host names are pinned to the local fake
//! (`BOOTSTRAP_AGENT_AZURE_RESOLVE`, the fake's CA), and the fake, started as one cloud,
//! refuses a token asked for another cloud's audience as real ARM does. So a run that passes
//! proves the endpoints were derived right, and one that derives them wrong is refused.
#![cfg(feature = "azure")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::azure::{AzurePeers, AzureSimOptions, SimCloud};
use common::agent::{self, API, API_INT, Agent};
use common::azure::*;
use serde_json::Value;

/// The agent against the fake started as `cloud`, with no endpoint override at all.
async fn derived(fixture: &str, cloud: SimCloud) -> AzureHarness {
    let peers = AzurePeers::start_with(AzureSimOptions {
        cloud,
        ..Default::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut env = peers.derived_env();
    env.push(("BOOTSTRAP_AGENT_LOG".into(), "info".into()));
    let mut agent = Agent::new(dir, agent::fixture(fixture), BOOTSTRAP_IP, env);
    agent.env_remove.extend([
        "AZURE_CLIENT_SECRET",
        "BOOTSTRAP_AGENT_AZURE_ARM_ENDPOINT",
        "BOOTSTRAP_AGENT_AZURE_AUTHORITY_HOST",
    ]);
    AzureHarness { peers, agent }
}

#[tokio::test(flavor = "multi_thread")]
async fn us_government_run_reaches_done_through_the_derived_endpoints() {
    let mut h = derived("azure-usgov", SimCloud::UsGovernment).await;
    let _kube = h.run_to_done().await;
    h.world().await.assert_handed_over();
    let run_flags = std::mem::take(&mut h.agent.extra);
    let plan = h.run(&["plan"]).await;
    h.agent.extra = run_flags;
    assert!(
        String::from_utf8_lossy(&plan.stdout).contains("no changes"),
        "{}",
        String::from_utf8_lossy(&plan.stdout)
    );
}

/// Public-cloud assets against a US Government ARM: the token is asked for
/// management.azure.com, which that ARM refuses; nothing is created.
#[tokio::test(flavor = "multi_thread")]
async fn another_clouds_token_is_refused_by_arm_and_nothing_is_created() {
    let h = derived("azure", SimCloud::UsGovernment).await;
    let out = h.try_run(&["reserve"]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("InvalidAuthenticationTokenAudience"),
        "{stderr}"
    );
    let world = h.world().await;
    assert!(world.ours().is_empty(), "{:#}", world.0);
    assert!(world.private_ips().is_empty(), "{:#}", world.0);
}

/// Azure Stack Hub: the authority and audience come from the stamp's metadata; there is no
/// private DNS (the fake refuses privateDnsZones as the stamp would), so `api-int` goes into
/// the base-domain zone and `api` there holds the public IP.
#[tokio::test(flavor = "multi_thread")]
async fn stack_seeds_every_record_into_the_base_domain_zone() {
    let h = derived("azure-stack", SimCloud::Stack).await;
    h.bootstrap().await;
    let world = h.world().await;
    let public_ip = world.public_ip("IPv4");
    assert_eq!(public_ip.len(), 1, "{:#}", world.0);
    assert_eq!(world.record("public", API), public_ip);
    let second = world.assert_second_address();
    // On Azure api-int holds the second address, not the bootstrap IP (issue 42: the masters'
    // apiserver-watcher takes every api-int address for a VIP).
    let mut api_int = vec![second, EXPECTED_PRIVATE_IP.to_string()];
    api_int.sort();
    assert_eq!(
        world.record("public", API_INT),
        api_int,
        "the bootstrap host's second address and the private IP"
    );
    assert!(!api_int.contains(&BOOTSTRAP_IP.to_string()));
    let private: &Value = &world.0["zones"]["private"];
    assert_eq!(private, &serde_json::json!({}), "no private record");
}

/// Azure Stack Hub serves only its profiles' api-versions (Network 2018-11-01, DNS 2016-04-01,
/// Resources 2018-05-01, Authorization 2015-07-01; the fake refuses any other with
/// `NoRegisteredProviderFound`, as the stamp does) and has no Tags API: the whole `run`,
/// preflight included, reaches done with the private IP recorded on the cluster's resource
/// group by a resource-group update, and a second `plan` changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn stack_run_reaches_done_with_the_stamps_api_versions() {
    let mut h = derived("azure-stack", SimCloud::Stack).await;
    let _kube = h.run_to_done().await;
    let world = h.world().await;
    assert_eq!(world.private_ips(), vec![EXPECTED_PRIVATE_IP.to_string()]);
    assert_eq!(world.public_ip("IPv4").len(), 1, "{:#}", world.0);
    let run_flags = std::mem::take(&mut h.agent.extra);
    let plan = h.run(&["plan"]).await;
    assert!(
        String::from_utf8_lossy(&plan.stdout).contains("no changes"),
        "{}",
        String::from_utf8_lossy(&plan.stdout)
    );
    h.agent.extra = run_flags;
}

/// The vnet lives in `networkResourceGroupName`, apart from the cluster's group: the free IP
/// is found there, the public IP and the private-IP record stay in the cluster's group.
#[tokio::test(flavor = "multi_thread")]
async fn a_vnet_in_another_resource_group_is_read_there_and_reservations_stay_in_the_clusters() {
    let h = AzureHarness::new("azure-vnet-other-rg").await;
    h.bootstrap().await;
    let world = h.world().await;
    world.assert_seeded(false, &[]);
    for ip in world.ours() {
        assert_eq!(ip["rg"], "mycluster-7xk2p-rg", "{ip:#}");
    }
    assert_eq!(world.private_ips(), vec![EXPECTED_PRIVATE_IP.to_string()]);
    assert!(
        h.calls().iter().all(|c| !c.contains("network-rg")),
        "only reads go to the vnet's group: {:?}",
        h.calls()
    );
}
