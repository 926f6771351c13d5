//! Preflight on GCP (the compute.v1 + dns.v1 + Resource Manager fake, the local API server):
//! each GCP line (`credentials`, `permissions`, `quota-addresses`, `subnets`,
//! `private-zone-network`) failing for its own reason, and `run` refusing with no mutating call.
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
        Self::on_fixture("gcp", options).await
    }

    async fn on_fixture(fixture: &str, options: FakeOptions) -> Self {
        let mut h = GcpHarness::with_fixture(fixture, options).await;
        let cloud = h.peers.lb_cloud();
        let kube = h.local_api(cloud).await;
        Self { h, kube }
    }

    /// `preflight --output json` (no kubeconfig: the cloud's lines): (exit code, report).
    async fn preflight(&mut self) -> (Option<i32>, Value) {
        self.preflight_with(&[]).await
    }

    async fn preflight_with(&mut self, flags: &[&str]) -> (Option<i32>, Value) {
        let (code, report, _) = self.h.preflight_json(flags).await;
        (code, report)
    }

    /// `run` stops at the checklist: exit 2, `name` failed, no mutating call, no journal.
    async fn assert_run_refused(&self, name: &str) {
        self.h.assert_run_refused_by_preflight(&[name]).await;
        let _ = &self.kube;
    }
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    common::preflight_line(report, name)
}

fn reason(report: &Value, name: &str) -> String {
    check(report, name)["reason"].as_str().unwrap().to_string()
}

/// Exactly `failing` failed; every other GCP line passed.
fn assert_only_failure(report: &Value, failing: &str) {
    for name in [
        "credentials",
        "permissions",
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
}

/// Every permission the fake knows but those starting with one of `left_out`.
fn all_but(left_out: &[&str]) -> Vec<String> {
    bootstrap_sim::gcp::KNOWN_PERMISSIONS
        .iter()
        .filter(|p| !left_out.iter().any(|s| p.starts_with(s)))
        .map(|p| p.to_string())
        .collect()
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
    assert!(
        reason(&report, "permissions").contains("held (projects example-project)"),
        "{report}"
    );
    assert!(w.h.peers.mutating_calls().is_empty());

    // Every line's name is one the validation pass knows for GCP (it refuses the others).
    let names = common::agent::preflight_line_names(&report);
    let (code, report) = w.preflight_with(&["--skip-preflight", &names]).await;
    assert_eq!(code, Some(0), "{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_permission_fails_permissions_naming_it_and_its_project() {
    // Shared VPC: the host project grants nothing (no compute.subnetworks.use for the
    // internal address); the service project everything but the Cloud DNS writes. Both could
    // come from a grant on the subnetwork or the zone, which testIamPermissions does not see:
    // a warning, and preflight passes.
    let mut options = FakeOptions::realistic();
    options.seed = Seed::shared_vpc();
    options
        .granted
        .insert("example-host-project".into(), Vec::new());
    options
        .granted
        .insert("example-project".into(), all_but(&["dns.changes.create"]));
    let mut w = World::on_fixture("gcp-shared-vpc", options.clone()).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(check(&report, "permissions")["verdict"], "warn", "{report}");
    assert!(
        reason(&report, "permissions").contains("at project level"),
        "{report}"
    );
    // The internal address's own permission is a project grant only: that fails.
    options.granted.insert(
        "example-project".into(),
        all_but(&["dns.changes.create", "compute.addresses.createInternal"]),
    );
    let mut w = World::on_fixture("gcp-shared-vpc", options).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(2), "{report}");
    assert_only_failure(&report, "permissions");
    let why = reason(&report, "permissions");
    assert!(
        why.contains("project example-host-project lacks compute.subnetworks.use"),
        "{why}"
    );
    assert!(
        why.contains("project example-project lacks compute.addresses.createInternal"),
        "{why}"
    );
    assert!(why.contains("dns.changes.create"), "{why}");
    let fix = check(&report, "permissions")["fix"].as_str().unwrap();
    assert!(
        fix.contains("compute.subnetworks.use on project example-host-project"),
        "{fix}"
    );
    w.assert_run_refused("permissions").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn with_the_users_dns_no_dns_permission_is_asked() {
    // A caller with no Cloud DNS permission on the project: asked (and warned: a grant on the
    // zone itself is not seen) where the agent writes DNS...
    let mut options = FakeOptions::realistic();
    options
        .granted
        .insert("example-project".into(), all_but(&["dns."]));
    let mut w = World::new(options.clone()).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(check(&report, "permissions")["verdict"], "warn", "{report}");
    assert!(
        reason(&report, "permissions").contains("dns.resourceRecordSets.create"),
        "{report}"
    );
    // ...and passes where DNS is the user's: no dns.* permission is asked.
    let mut w = World::on_fixture("gcp-user-dns", options).await;
    let (code, report) = w.preflight().await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(check(&report, "permissions")["verdict"], "pass", "{report}");
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
