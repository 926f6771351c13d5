//! Preflight on Azure (the ARM fake, the local API server): each Azure line (`credentials`,
//! `permissions`, `quota-public-ips`, `subnets`, `private-zone-vnet`) failing for its own
//! reason, `run` refusing with no mutating call, and the fake refusing the call itself when
//! preflight is skipped.
#![cfg(feature = "azure")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::azure::{
    AzureSimOptions, CLIENT_ID, CLUSTER_RG, COMPUTE_SUBNET, DNS_RG, PublicIpQuota, RoleAssignment,
    TENANT,
};
use bootstrap_sim::kube::KubeSim;
use common::azure::*;
use serde_json::Value;

const LINES: [&str; 8] = [
    "credentials",
    "permissions",
    "quota-public-ips",
    "subnets",
    "private-zone-vnet",
    "dns-zones",
    "reservations",
    "bootstrap-ip",
];

struct World {
    h: AzureHarness,
    kube: KubeSim,
}

impl World {
    async fn new() -> Self {
        Self::on("azure", AzureSimOptions::default()).await
    }

    async fn on(fixture: &str, options: AzureSimOptions) -> Self {
        let mut h = AzureHarness::with(fixture, options).await;
        let cloud = h.peers.lb_cloud();
        let kube = h.local_api(cloud).await;
        Self { h, kube }
    }

    /// `preflight --output json` (no kubeconfig: the cloud's lines): (exit code, report).
    async fn preflight(&mut self) -> (Option<i32>, Value) {
        self.preflight_with(&[]).await
    }

    async fn preflight_with(&mut self, flags: &[&str]) -> (Option<i32>, Value) {
        let (code, report, stderr) = self.h.preflight_json(flags).await;
        assert!(!stderr.contains(CLIENT_SECRET_TEXT), "secret in {stderr}");
        assert!(!report.to_string().contains(CLIENT_SECRET_TEXT));
        (code, report)
    }

    /// `run` stops at the checklist: exit 2, `name` failed, no mutating call, no journal.
    async fn assert_run_refused(&self, name: &str) {
        self.h.assert_run_refused_by_preflight(&[name]).await;
        let _ = &self.kube;
    }
}

const CLIENT_SECRET_TEXT: &str = bootstrap_sim::azure::CLIENT_SECRET;

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    common::preflight_line(report, name)
}

fn reason(report: &Value, name: &str) -> String {
    check(report, name)["reason"].as_str().unwrap().to_string()
}

/// Exactly `failing` failed; every other Azure line passed.
fn assert_only_failure(report: &Value, failing: &str) {
    for name in LINES {
        let want = if name == failing { "fail" } else { "pass" };
        assert_eq!(check(report, name)["verdict"], want, "{name}: {report:#}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn azure_preflight_passes_on_a_good_world_shows_the_identity_and_changes_nothing() {
    let mut w = World::new().await;
    w.h.peers.reset_counts();
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(0), "{report:#}");
    assert_only_failure(&report, "");
    let credentials = reason(&report, "credentials");
    assert!(
        credentials.contains("subscription bootstrap-agent fake subscription")
            && credentials.contains("state Enabled")
            && credentials.contains(&format!("client {CLIENT_ID} of tenant {TENANT}")),
        "{credentials}"
    );
    let permissions = reason(&report, "permissions");
    for action in [
        "Microsoft.Network/publicIPAddresses/write",
        "Microsoft.Resources/tags/write",
        "Microsoft.Network/virtualNetworks/checkIpAddressAvailability/read",
        "Microsoft.Network/privateDnsZones/A/write",
        "on dns-rg: Microsoft.Network/dnszones/A/write",
    ] {
        assert!(permissions.contains(action), "{action}: {permissions}");
    }
    let quota = reason(&report, "quota-public-ips");
    assert!(
        quota.contains("StandardSkuPublicIpAddresses limit 1000, used 0, free 1000, needed 1"),
        "{quota}"
    );
    let subnets = reason(&report, "subnets");
    assert!(
        subnets.contains("mycluster-master-subnet 10.0.0.0/24")
            && subnets.contains("mycluster-worker-subnet has free addresses (10.0.1.6)"),
        "{subnets}"
    );
    assert!(
        reason(&report, "private-zone-vnet")
            .contains("mycluster.example.com is linked to vnet mycluster-vnet"),
        "{report:#}"
    );
    assert!(w.h.peers.mutating_calls().is_empty());

    // Every line's name is one the validation pass knows for Azure (it refuses the others).
    let names = common::agent::preflight_line_names(&report);
    let (code, report) = w.preflight_with(&["--skip-preflight", &names]).await;
    assert_eq!(code, Some(0), "{report:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_client_secret_fails_credentials_without_showing_it() {
    let mut w = World::new().await;
    // A copy of the fixture whose creds secret holds a wrong client secret.
    let assets = w.h.dir.path().join("assets");
    for sub in ["manifests", "openshift"] {
        std::fs::create_dir_all(assets.join(sub)).unwrap();
        for entry in std::fs::read_dir(w.h.assets.join(sub)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), assets.join(sub).join(entry.file_name())).unwrap();
        }
    }
    let secret = assets.join("openshift/99_cloud-creds-secret.yaml");
    let text = std::fs::read_to_string(&secret).unwrap();
    // base64("wrong-secret-XYZZY-0123456") instead of the fixture's secret.
    let text = text.replace(
        "Zml4dHVyZS1zZWNyZXQtRE8tTk9ULUxPRw==",
        "d3Jvbmctc2VjcmV0LVhZWlpZLTAxMjM0NTY=",
    );
    std::fs::write(&secret, text).unwrap();
    w.h.assets = assets;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report:#}");
    let line = check(&report, "credentials");
    assert_eq!(line["verdict"], "fail", "{report:#}");
    let why = line["reason"].as_str().unwrap();
    assert!(
        why.contains("AADSTS7000215"),
        "the authority's reason: {why}"
    );
    assert!(!report.to_string().contains("wrong-secret-XYZZY"));
    w.assert_run_refused("credentials").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_role_without_public_ip_write_fails_permissions_and_arm_refuses_the_put() {
    let mut w = World::new().await;
    // Read everywhere; tags and the private zone on the cluster group, the public zone on its
    // own; nothing grants publicIPAddresses/write or delete.
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
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report:#}");
    assert_only_failure(&report, "permissions");
    assert!(
        reason(&report, "permissions").contains(&format!(
            "client {CLIENT_ID}) lacks, on {CLUSTER_RG}: Microsoft.Network/publicIPAddresses/write, Microsoft.Network/publicIPAddresses/delete"
        )),
        "{report:#}"
    );
    w.assert_run_refused("permissions").await;

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
    let mut w = World::new().await;
    // Everything the agent does, but no Microsoft.Authorization/permissions/read.
    w.h.peers.sim.set_roles(vec![RoleAssignment::custom(
        None,
        &["Microsoft.Network/*", "Microsoft.Resources/*"],
    )]);
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(0), "a warning does not stop the run: {report:#}");
    let line = check(&report, "permissions");
    assert_eq!(line["verdict"], "warn", "{report:#}");
    let why = line["reason"].as_str().unwrap();
    assert!(
        why.starts_with("not checked: Microsoft.Authorization/permissions could not be read")
            && why.contains("AuthorizationFailed"),
        "{why}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_standard_public_ip_quota_fails_preflight_and_arm_refuses_the_put() {
    let mut w = World::new().await;
    w.h.peers.sim.set_public_ip_quota(PublicIpQuota {
        total: 1000,
        standard: 0,
    });
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report:#}");
    assert_only_failure(&report, "quota-public-ips");
    let line = check(&report, "quota-public-ips");
    assert!(
        line["reason"]
            .as_str()
            .unwrap()
            .contains("StandardSkuPublicIpAddresses limit 0, used 0, free 0, needed 1"),
        "{report:#}"
    );
    assert!(
        line["fix"]
            .as_str()
            .unwrap()
            .contains("more StandardSkuPublicIpAddresses quota"),
        "{report:#}"
    );
    w.assert_run_refused("quota-public-ips").await;

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
    let mut w = World::new().await;
    w.h.peers.sim.remove_subnet("mycluster-master-subnet");
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report:#}");
    assert_only_failure(&report, "subnets");
    assert!(
        reason(&report, "subnets").contains(
            "subnet mycluster-master-subnet not found in vnet mycluster-vnet of resource group network-rg"
        ),
        "{report:#}"
    );

    let mut w = World::new().await;
    w.h.peers.sim.fill_subnet(COMPUTE_SUBNET);
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report:#}");
    assert_only_failure(&report, "subnets");
    assert!(
        reason(&report, "subnets").contains(
            "the compute subnet mycluster-worker-subnet has no free address (CheckIPAddressAvailability of 10.0.1.254 names none)"
        ),
        "{report:#}"
    );
    w.assert_run_refused("subnets").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_private_zone_not_linked_to_the_vnet_fails_private_zone_vnet() {
    let mut w = World::new().await;
    let other = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/other-rg/providers/Microsoft.Network/virtualNetworks/other-vnet";
    w.h.peers.sim.set_private_zone_links(&[other]);
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report:#}");
    assert_only_failure(&report, "private-zone-vnet");
    let why = reason(&report, "private-zone-vnet");
    assert!(
        why.contains(other) && why.contains("not to the cluster's vnet mycluster-vnet"),
        "{why}"
    );
    assert!(
        check(&report, "private-zone-vnet")["fix"]
            .as_str()
            .unwrap()
            .starts_with("az network private-dns link vnet create -g mycluster-7xk2p-rg -z mycluster.example.com"),
        "{report:#}"
    );
    w.assert_run_refused("private-zone-vnet").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lines_follow_the_plan_user_dns_and_an_internal_api() {
    // The user's DNS: no record to write, so no DNS action is asked for and no zone checked.
    let mut w = World::on("azure-user-dns", AzureSimOptions::default()).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(0), "{report:#}");
    let permissions = reason(&report, "permissions");
    assert!(
        !permissions.contains("dnszones") && !permissions.contains("privateDnsZones"),
        "{permissions}"
    );
    assert!(permissions.contains("Microsoft.Network/publicIPAddresses/write"));
    let zone = check(&report, "private-zone-vnet");
    assert_eq!(zone["verdict"], "warn", "{report:#}");
    assert!(zone["reason"].as_str().unwrap().starts_with("not checked"));

    // An internal API (in the network the installer makes): no public IP, so neither its
    // actions nor its quota.
    let installer_network = AzureSimOptions {
        installer_network: true,
        ..Default::default()
    };
    let mut w = World::on("azure-mixed-api-internal", installer_network).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(0), "{report:#}");
    assert!(
        !reason(&report, "permissions").contains("publicIPAddresses"),
        "{report:#}"
    );
    assert_eq!(
        reason(&report, "quota-public-ips"),
        "no public IP to create"
    );
}
