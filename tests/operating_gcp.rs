//! Preflight on GCP (the compute.v1 + dns.v1 fake, the local API server): each GCP line
//! (`credentials`, `quota-addresses`, `subnets`, `private-zone-network`) failing for its own
//! reason, and `run` refusing with no mutating call.
#![cfg(feature = "gcp")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::gcp::{AddressQuotas, FakeOptions, Seed};
use bootstrap_sim::kube::KubeSim;
use common::gcp::*;
use serde_json::Value;

struct World {
    h: GcpHarness,
    kube: KubeSim,
}

impl World {
    async fn new(options: FakeOptions) -> Self {
        let mut h = GcpHarness::with_options(options).await;
        let cloud = h.peers.lb_cloud();
        let kube = h.local_api(cloud).await;
        Self { h, kube }
    }

    /// `preflight --output json` (no kubeconfig: the cloud's lines): (exit code, report).
    async fn preflight(&mut self) -> (Option<i32>, Value) {
        let run_flags = std::mem::take(&mut self.h.extra);
        let out = self
            .h
            .command(&["preflight", "--output", "json"])
            .output()
            .await
            .unwrap();
        self.h.extra = run_flags;
        let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
        });
        (out.status.code(), report)
    }

    /// `run` stops at the checklist: exit 2, `name` failed, no mutating call, no journal.
    async fn assert_run_refused(&self, name: &str) {
        self.h.peers.reset_counts();
        let out = self.h.command(&["run"]).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&format!("FAIL  {name}")), "{stderr}");
        assert!(
            self.h.peers.mutating_calls().is_empty(),
            "{:?}",
            self.h.peers.mutating_calls()
        );
        assert!(
            !self.h.state.join("journal.json").exists(),
            "nothing written"
        );
        let _ = &self.kube;
    }
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    common::preflight_line(report, name)
}

fn reason(report: &Value, name: &str) -> String {
    check(report, name)["reason"].as_str().unwrap().to_string()
}

/// Exactly `failing` failed; every other GCP line passed (permissions: "not checked").
fn assert_only_failure(report: &Value, failing: &str) {
    for name in [
        "credentials",
        "quota-addresses",
        "subnets",
        "private-zone-network",
        "dns-zones",
        "reservations",
        "bootstrap-ip",
    ] {
        let want = if name == failing { "fail" } else { "pass" };
        assert_eq!(check(report, name)["verdict"], want, "{name}: {report}");
    }
    assert_eq!(check(report, "permissions")["verdict"], "warn");
    assert!(reason(report, "permissions").starts_with("not checked"));
}

#[tokio::test(flavor = "multi_thread")]
async fn gcp_preflight_passes_on_a_good_world_shows_the_project_and_changes_nothing() {
    let mut w = World::new(FakeOptions::realistic()).await;
    w.h.peers.reset_counts();
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(0), "{report}");
    assert_only_failure(&report, "");
    assert!(
        reason(&report, "credentials").contains("project example-project"),
        "{report}"
    );
    let quota = reason(&report, "quota-addresses");
    assert!(
        quota.contains("STATIC_ADDRESSES limit 100, used 0, free 100, needed 1"),
        "{quota}"
    );
    assert!(quota.contains("INTERNAL_ADDRESSES"), "{quota}");
    assert!(
        reason(&report, "subnets").contains("mycluster-worker-subnet 10.0.128.0/17"),
        "{report}"
    );
    assert!(w.h.peers.mutating_calls().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_static_address_quota_fails_preflight_and_run_changes_nothing() {
    let mut options = FakeOptions::realistic();
    options.seed.quotas = AddressQuotas {
        static_addresses: 0,
        ..AddressQuotas::default()
    };
    let mut w = World::new(options).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report}");
    assert_only_failure(&report, "quota-addresses");
    assert!(
        check(&report, "quota-addresses")["fix"]
            .as_str()
            .unwrap()
            .contains("STATIC_ADDRESSES"),
        "{report}"
    );
    w.assert_run_refused("quota-addresses").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_caller_without_compute_projects_get_fails_credentials() {
    let mut options = FakeOptions::realistic();
    options.denied = vec!["compute.projects.get".into()];
    let mut w = World::new(options).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report}");
    assert_only_failure(&report, "credentials");
    assert!(
        reason(&report, "credentials")
            .contains("Required 'compute.projects.get' permission for 'projects/example-project'"),
        "{report}"
    );
    w.assert_run_refused("credentials").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subnetwork_missing_or_in_another_network_fails_subnets() {
    let mut options = FakeOptions::realistic();
    options
        .seed
        .subnetworks
        .retain(|s| s.name != "mycluster-master-subnet");
    let mut w = World::new(options).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report}");
    assert_only_failure(&report, "subnets");
    assert!(
        reason(&report, "subnets").contains("subnetwork mycluster-master-subnet not found"),
        "{report}"
    );

    let mut options = FakeOptions::realistic();
    options.seed.subnetworks[0].network = "another-network".into();
    let mut w = World::new(options).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report}");
    assert_only_failure(&report, "subnets");
    assert!(
        reason(&report, "subnets").contains("global/networks/another-network"),
        "{report}"
    );
    w.assert_run_refused("subnets").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_private_zone_not_visible_to_the_network_fails_private_zone_network() {
    // The zone is bound to the seed's network; the subnetworks stay in the cluster's.
    let options = FakeOptions {
        seed: Seed {
            network: "another-network".into(),
            ..Seed::default()
        },
        ..FakeOptions::realistic()
    };
    let mut w = World::new(options).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report}");
    assert_only_failure(&report, "private-zone-network");
    let why = reason(&report, "private-zone-network");
    assert!(why.contains("another-network"), "{why}");
    assert!(
        why.contains("not to the cluster's network mycluster-network"),
        "{why}"
    );
    w.assert_run_refused("private-zone-network").await;
}
