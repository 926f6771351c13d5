//! Preflight on Azure (the ARM fake, the local API server): each Azure line (`credentials`,
//! `permissions`, `quota-public-ips`, `subnets`, `private-zone-vnet`) failing for its own
//! reason, `run` refusing with no mutating call, and the fake refusing the call itself when
//! preflight is skipped.
#![cfg(feature = "azure")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::azure::{
    AzurePeers, AzureSimOptions, CLIENT_ID, CLIENT_SECRET, CLUSTER_RG, COMPUTE_SUBNET, DNS_RG,
    PublicIpQuota, RoleAssignment, TENANT,
};
use common::azure::*;
use common::fixtures;
use common::operating::{PreflightWorld, assert_line, line_text, reason};

/// The Azure lines.
const LINES: [&str; 5] = [
    "credentials",
    "permissions",
    "quota-public-ips",
    "subnets",
    "private-zone-vnet",
];

type World = PreflightWorld<AzurePeers>;

/// The ARM fake, the agent on the main fixture.
async fn world() -> World {
    world_on("azure", AzureSimOptions::default()).await
}

/// No preflight may show the client secret.
async fn world_on(fixture: &str, options: AzureSimOptions) -> World {
    let h = AzureHarness::with(fixture, options).await;
    let cloud = h.peers.lb_cloud();
    let mut w = World::new(h, cloud, &LINES).await;
    w.never_shown.push(CLIENT_SECRET.into());
    w
}

#[tokio::test(flavor = "multi_thread")]
async fn azure_preflight_passes_on_a_good_world_shows_the_identity_and_changes_nothing() {
    let mut w = world().await;
    let client = format!("client {CLIENT_ID} of tenant {TENANT}");
    w.assert_preflight_passes(&[
        (
            "credentials",
            &[
                "subscription bootstrap-agent fake subscription",
                "state Enabled",
                &client,
            ][..],
        ),
        (
            "permissions",
            &[
                "Microsoft.Network/publicIPAddresses/write",
                "Microsoft.Resources/tags/write",
                "Microsoft.Network/virtualNetworks/checkIpAddressAvailability/read",
                "Microsoft.Network/privateDnsZones/A/write",
                "Microsoft.Network/publicIPAddresses/read",
                "Microsoft.Network/privateDnsZones/read",
                "on dns-rg: Microsoft.Network/dnszones/read, Microsoft.Network/dnszones/A/read, Microsoft.Network/dnszones/A/write (",
            ],
        ),
        (
            "quota-public-ips",
            &["StandardSkuPublicIpAddresses limit 1000, used 0, free 1000, needed 1"],
        ),
        (
            "subnets",
            &[
                "mycluster-master-subnet 10.0.0.0/24",
                "mycluster-worker-subnet has free addresses (10.0.1.6)",
            ],
        ),
        (
            "private-zone-vnet",
            &["mycluster.example.com is linked to vnet mycluster-vnet"],
        ),
    ])
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_client_secret_fails_credentials_without_showing_it() {
    let mut w = world().await;
    // A copy of the fixture whose creds secret holds a wrong client secret:
    // base64("wrong-secret-XYZZY-0123456") instead of the fixture's.
    let assets = fixtures::edited(
        "azure",
        "openshift/99_cloud-creds-secret.yaml",
        "Zml4dHVyZS1zZWNyZXQtRE8tTk9ULUxPRw==",
        "d3Jvbmctc2VjcmV0LVhZWlpZLTAxMjM0NTY=",
    );
    w.h.assets = assets.path().to_path_buf();
    let report = w.preflight_exits(2).await;
    // The authority's reason.
    assert_line(&report, "credentials", "fail", &["AADSTS7000215"]);
    assert!(!report.to_string().contains("wrong-secret-XYZZY"));
    w.assert_run_refused("credentials").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_role_without_public_ip_write_fails_permissions_and_arm_refuses_the_put() {
    let mut w = world().await;
    // Read everywhere; tags and the private zone on the cluster group, the public zone on its
    // own; nothing grants publicIPAddresses/write (nor delete, which only `teardown --all`
    // needs: not asked).
    w.h.peers.sim.set_roles(vec![
        RoleAssignment::custom(None, &["*/read"]),
        RoleAssignment::custom(
            Some(CLUSTER_RG),
            &[
                "Microsoft.Resources/tags/*",
                "Microsoft.Network/privateDnsZones/*",
            ],
        ),
        RoleAssignment::custom(Some(DNS_RG), &["Microsoft.Network/dnszones/*"]),
    ]);
    let lacks = format!(
        "client {CLIENT_ID}) lacks, on {CLUSTER_RG}: Microsoft.Network/publicIPAddresses/write"
    );
    w.assert_refused_for("permissions", &[&lacks]).await;

    // Skipped, the run meets ARM's own refusal at the first PUT.
    let out =
        w.h.command(&["run", "--skip-preflight", "permissions"])
            .output()
            .await
            .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("skip  permissions"), "{stderr}");
    assert!(
        stderr.contains("AuthorizationFailed")
            && stderr.contains("'Microsoft.Network/publicIPAddresses/write'"),
        "{stderr}"
    );
    assert!(w.h.world().await.ours().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn permissions_that_cannot_be_read_are_not_checked() {
    let mut w = world().await;
    // Everything the agent does, but no Microsoft.Authorization/permissions/read.
    w.h.peers.sim.set_roles(vec![RoleAssignment::custom(
        None,
        &["Microsoft.Network/*", "Microsoft.Resources/*"],
    )]);
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(0), "a warning does not stop the run: {report:#}");
    let why = reason(&report, "permissions");
    assert_line(&report, "permissions", "warn", &["AuthorizationFailed"]);
    assert!(
        why.starts_with("not checked: Microsoft.Authorization/permissions could not be read"),
        "{why}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_standard_public_ip_quota_fails_preflight_and_arm_refuses_the_put() {
    let mut w = world().await;
    w.h.peers.sim.set_public_ip_quota(PublicIpQuota {
        total: 1000,
        standard: 0,
    });
    let report = w
        .assert_refused_for(
            "quota-public-ips",
            &["StandardSkuPublicIpAddresses limit 0, used 0, free 0, needed 1"],
        )
        .await;
    assert!(
        line_text(&report, "quota-public-ips", "fix")
            .contains("more StandardSkuPublicIpAddresses quota"),
        "{report:#}"
    );

    // `reserve` does not run preflight: the fake refuses the PUT as ARM does.
    let run_flags = std::mem::take(&mut w.h.extra);
    let out = w.h.command(&["reserve"]).output().await.unwrap();
    w.h.extra = run_flags;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("PublicIPCountLimitReached"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_subnet_or_a_full_compute_subnet_fails_subnets() {
    let mut w = world().await;
    w.h.peers.sim.remove_subnet("mycluster-master-subnet");
    w.preflight_fails_only(
        "subnets",
        &["subnet mycluster-master-subnet not found in vnet mycluster-vnet of resource group network-rg"],
    )
    .await;

    let mut w = world().await;
    w.h.peers.sim.fill_subnet(COMPUTE_SUBNET);
    w.assert_refused_for(
        "subnets",
        &["the compute subnet mycluster-worker-subnet has no free address (CheckIPAddressAvailability of 10.0.1.254 names none)"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_private_zone_not_linked_to_the_vnet_fails_private_zone_vnet() {
    let mut w = world().await;
    let other = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/other-rg/providers/Microsoft.Network/virtualNetworks/other-vnet";
    w.h.peers.sim.set_private_zone_links(&[other]);
    let report = w
        .assert_refused_for(
            "private-zone-vnet",
            &[other, "not to the cluster's vnet mycluster-vnet"],
        )
        .await;
    assert!(
        line_text(&report, "private-zone-vnet", "fix").starts_with(
            "az network private-dns link vnet create -g mycluster-7xk2p-rg -z mycluster.example.com"
        ),
        "{report:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lines_follow_the_plan_user_dns_and_an_internal_api() {
    // The user's DNS: no record to write, so no DNS action is asked for and no zone checked.
    let mut w = world_on("azure-user-dns", AzureSimOptions::default()).await;
    let report = w.preflight_exits(0).await;
    let permissions = reason(&report, "permissions");
    assert!(
        !permissions.contains("dnszones") && !permissions.contains("privateDnsZones"),
        "{permissions}"
    );
    assert!(permissions.contains("Microsoft.Network/publicIPAddresses/write"));
    assert_line(&report, "private-zone-vnet", "warn", &[]);
    assert!(reason(&report, "private-zone-vnet").starts_with("not checked"));

    // An internal API (in the network the installer makes): no public IP, so neither its
    // actions nor its quota.
    let installer_network = AzureSimOptions {
        installer_network: true,
        ..Default::default()
    };
    let mut w = world_on("azure-mixed-api-internal", installer_network).await;
    let report = w.preflight_exits(0).await;
    assert!(
        !reason(&report, "permissions").contains("publicIPAddresses"),
        "{report:#}"
    );
    assert_eq!(
        reason(&report, "quota-public-ips"),
        "no public IP to create"
    );
}

// ---- least privilege: the printed role, the fake enforcing it (common/suite_permissions.rs)

common::suite_permissions::permissions_suite!(AzurePeers);
