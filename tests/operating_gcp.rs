//! Preflight on GCP (the compute.v1 + dns.v1 + Resource Manager fake, the local API server):
//! each GCP line (`credentials`, `permissions`, `quota-addresses`, `subnets`,
//! `instance-groups`, `private-zone-network`) failing for its own reason, and `run` refusing with no mutating call.
#![cfg(feature = "gcp")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::gcp::{AddressQuotas, FakeOptions, GcpPeers, Seed};
use common::gcp::*;
use common::operating::{PreflightWorld, assert_line, line_text};

type World = PreflightWorld<GcpPeers>;

/// The GCP fake with `options`, the agent on the main fixture.
async fn world(options: FakeOptions) -> World {
    world_on("gcp", options).await
}

async fn world_on(fixture: &str, options: FakeOptions) -> World {
    let h = GcpHarness::with_fixture(fixture, options).await;
    let cloud = h.peers.lb_cloud();
    World::new(h, cloud, &LINES).await
}

/// The GCP lines.
const LINES: [&str; 6] = [
    "credentials",
    "permissions",
    "quota-addresses",
    "subnets",
    "instance-groups",
    "private-zone-network",
];

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
    let mut w = world(FakeOptions::realistic()).await;
    w.assert_preflight_passes(&[
        ("credentials", &["project example-project"][..]),
        (
            "quota-addresses",
            &[
                "STATIC_ADDRESSES limit 100, used 0, free 100, needed 1",
                "INTERNAL_ADDRESSES",
            ],
        ),
        ("subnets", &["mycluster-worker-subnet 10.0.128.0/17"]),
        ("permissions", &["held (projects example-project)"]),
        (
            "instance-groups",
            &["mycluster-7xk2p-master-us-central1-a, mycluster-7xk2p-master-us-central1-b"],
        ),
    ])
    .await;
}

/// OpenShift's cloud provider builds the internal load balancers on the installer's
/// per-zone instance groups: without any, preflight fails naming the group it looked for, and
/// `run` changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn missing_installer_instance_groups_fail_instance_groups() {
    let mut options = FakeOptions::realistic();
    options.seed.instance_groups.clear();
    let mut w = world(options).await;
    w.assert_refused_for(
        "instance-groups",
        &["mycluster-7xk2p-master-us-central1-a", "wrongSubnetwork"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_permission_fails_permissions_naming_it_and_its_project() {
    // Shared VPC: the host project grants only the subnetworks' read (no
    // compute.subnetworks.use for the internal address); the service project everything but
    // the Cloud DNS writes. Both could come from a grant on the subnetwork or the zone, which
    // testIamPermissions does not see: a warning, and preflight passes.
    let mut options = FakeOptions::realistic();
    options.seed = Seed::shared_vpc();
    options.granted.insert(
        "example-host-project".into(),
        vec!["compute.subnetworks.get".into()],
    );
    options
        .granted
        .insert("example-project".into(), all_but(&["dns.changes.create"]));
    let mut w = world_on("gcp-shared-vpc", options.clone()).await;
    let report = w.preflight_exits(0).await;
    assert_line(&report, "permissions", "warn", &["at project level"]);
    // The internal address's own permission is a project grant only: that fails.
    options.granted.insert(
        "example-project".into(),
        all_but(&["dns.changes.create", "compute.addresses.createInternal"]),
    );
    let mut w = world_on("gcp-shared-vpc", options).await;
    let report = w
        .assert_refused_for(
            "permissions",
            &[
                "project example-host-project lacks compute.subnetworks.use",
                "project example-project lacks compute.addresses.createInternal",
                "dns.changes.create",
            ],
        )
        .await;
    let fix = line_text(&report, "permissions", "fix");
    assert!(
        fix.contains("compute.subnetworks.use on project example-host-project"),
        "{fix}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_the_users_dns_no_dns_permission_is_asked() {
    // A caller with no Cloud DNS write on the project (the zones' reads only): asked (and
    // warned: a grant on the zone itself is not seen) where the agent writes DNS...
    let mut options = FakeOptions::realistic();
    options.granted.insert(
        "example-project".into(),
        all_but(&["dns.changes.", "dns.resourceRecordSets."]),
    );
    let mut w = world(options.clone()).await;
    let report = w.preflight_exits(0).await;
    assert_line(
        &report,
        "permissions",
        "warn",
        &["dns.resourceRecordSets.create"],
    );
    // ...and passes where DNS is the user's: no dns.* permission is asked.
    let mut w = world_on("gcp-user-dns", options).await;
    let report = w.preflight_exits(0).await;
    assert_line(&report, "permissions", "pass", &[]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_static_address_quota_fails_preflight_and_run_changes_nothing() {
    let mut options = FakeOptions::realistic();
    options.seed.quotas = AddressQuotas {
        static_addresses: 0,
        ..AddressQuotas::default()
    };
    let mut w = world(options).await;
    let report = w.assert_refused_for("quota-addresses", &[]).await;
    assert!(
        line_text(&report, "quota-addresses", "fix").contains("STATIC_ADDRESSES"),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_caller_without_compute_projects_get_fails_credentials() {
    let mut options = FakeOptions::realistic();
    options.denied = vec!["compute.projects.get".into()];
    let mut w = world(options).await;
    w.assert_refused_for(
        "credentials",
        &["Required 'compute.projects.get' permission for 'projects/example-project'"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subnetwork_missing_or_in_another_network_fails_subnets() {
    let mut options = FakeOptions::realistic();
    options
        .seed
        .subnetworks
        .retain(|s| s.name != "mycluster-master-subnet");
    // The VMs of that subnetwork go with it (the bootstrap VM and the control plane).
    options
        .seed
        .instances
        .retain(|vm| vm.subnetwork != "mycluster-master-subnet");
    let mut w = world(options).await;
    w.preflight_fails_only("subnets", &["subnetwork mycluster-master-subnet not found"])
        .await;

    let mut options = FakeOptions::realistic();
    options.seed.subnetworks[0].network = "another-network".into();
    let mut w = world(options).await;
    w.assert_refused_for("subnets", &["global/networks/another-network"])
        .await;
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
    let mut w = world(options).await;
    w.assert_refused_for(
        "private-zone-network",
        &[
            "another-network",
            "not to the cluster's network mycluster-network",
        ],
    )
    .await;
}

// ---- least privilege: the printed role, the fake enforcing it (common/suite_permissions.rs)

common::suite_permissions::permissions_suite!(GcpPeers);
