//! The GCP vertical against the local fake of compute.v1 + dns.v1 (`bootstrap_sim::gcp`),
//! behind counting proxies that can also freeze the agent between two mutations: the same
//! suite as `tests/aws.rs`, plus `run` end to end with the local Kubernetes API server.
#![cfg(feature = "gcp")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/gcp.rs"]
mod gcp_harness;

use bootstrap_sim::gcp::{FakeOptions, Seed};
use bootstrap_sim::kube::{ControllerKnobs, KubeSim, KubeSimOptions};
use bootstrap_sim::{Faults, Hold};
use gcp_harness::*;
use serde_json::Value;

const PRIVATE_ZONE: &str = "mycluster-7xk2p-private-zone";

/// Operations and zones carry names; tests compare the operation only.
fn normalize_call(call: &str) -> String {
    if let Some(rest) = call.strip_prefix("POST /dns/v1/projects/example-project/managedZones/")
        && rest.ends_with("/changes")
    {
        return "POST changes".to_string();
    }
    match call {
        "POST /compute/v1/projects/example-project/regions/us-central1/addresses" => {
            "POST addresses".to_string()
        }
        other if other.starts_with("DELETE /compute/v1/") => "DELETE address".to_string(),
        other => other.to_string(),
    }
}

fn calls(h: &Harness) -> Vec<String> {
    let mut calls: Vec<String> = h
        .peers
        .mutating_calls()
        .iter()
        .map(|c| normalize_call(c))
        .collect();
    calls.sort();
    calls
}

#[tokio::test(flavor = "multi_thread")]
async fn fresh_reserve_and_seed_create_exactly_the_planned_addresses_and_records() {
    let h = Harness::new().await;
    let plan: Value =
        serde_json::from_slice(&h.run(&["plan", "--output", "json"]).await.stdout).unwrap();
    assert_eq!(plan["changes"].as_array().unwrap().len(), 5, "{plan:#}");
    assert!(
        h.peers.mutating_calls().is_empty(),
        "plan must not mutate: {:?}",
        h.peers.mutating_calls()
    );

    h.bootstrap().await;
    h.world().assert_seeded(&[]);
    let mut expected = vec!["POST addresses"; 2];
    expected.extend(["POST changes"; 3]);
    assert_eq!(
        calls(&h),
        expected,
        "fresh GCP bootstrap: 2 addresses, 3 record-set changes"
    );
    // The zone with the cluster's name but public visibility is not the private zone.
    let decoy = h.peers.fake.records("mycluster-example-com-public");
    assert!(
        decoy.keys().all(|k| !k.starts_with("api")),
        "visibility decides the zone: {decoy:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn second_run_after_success_makes_zero_mutating_calls() {
    let h = Harness::new().await;
    h.bootstrap().await;
    h.assert_bootstrap_converged().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn another_writers_value_survives_seed_and_teardown() {
    let h = Harness::new().await;
    h.peers
        .fake
        .write_record(
            PRIVATE_ZONE,
            "api.mycluster.example.com",
            "A",
            &[OTHER_WRITER],
        )
        .unwrap();
    h.bootstrap().await;
    let world = h.world();
    let api = world.record("private", API);
    assert!(api.contains(&OTHER_WRITER.to_string()), "{api:?}");
    assert_eq!(api.len(), 3, "other + bootstrap + the reserved private IP");
    assert_eq!(world.record("private", API_INT).len(), 2);

    h.run(&["dns", "teardown"]).await;
    let world = h.world();
    let mut expected = world.ips("private-ipv4");
    expected.push(OTHER_WRITER.to_string());
    expected.sort();
    assert_eq!(
        world.record("private", API),
        expected,
        "only the bootstrap IP is removed"
    );

    h.run(&["teardown", "--all"]).await;
    let world = h.world();
    assert_eq!(world.record("private", API), vec![OTHER_WRITER.to_string()]);
    assert!(
        world.record("private", API_INT).is_empty(),
        "a set holding only our values is deleted"
    );
}

fn settings(h: &Harness) -> bootstrap_cloud::gcp::GcpSettings {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    bootstrap_cloud::gcp::GcpSettings {
        project: "example-project".into(),
        region: "us-central1".into(),
        subnetwork: "mycluster-worker-subnet".into(),
        network_project: None,
        infra_id: "mycluster-7xk2p".into(),
        credentials: bootstrap_cloud::gcp::GcpCredentials::Default,
        compute_endpoint: Some(h.peers.compute_proxy.url()),
        dns_endpoint: Some(h.peers.dns_proxy.url()),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_insert_response_retried_with_the_same_token_yields_one_address() {
    // observe-first hides this path in the CLI tests: call the provider twice with one token,
    // as a retry after a lost response would. GCE (and the fake) answer the second insert with
    // the first operation, so there is one address.
    use bootstrap_cloud::{AddressProvider, ReservationKey, ReserveRequest};
    let h = Harness::new().await;
    let addresses = bootstrap_cloud::gcp::GceAddresses::new(&settings(&h))
        .await
        .unwrap();
    let request = ReserveRequest {
        key: ReservationKey::parse("private-ipv4").unwrap(),
        name: "mycluster-7xk2p-rsvd-private-ipv4".into(),
        token: "mycluster-7xk2p-prv4-g1".into(),
    };
    let first = addresses.reserve(&request).await.unwrap();
    let second = addresses.reserve(&request).await.unwrap();
    assert_eq!(first, second);
    assert_eq!(calls(&h), vec!["POST addresses"; 2], "two inserts sent");
    assert_eq!(h.peers.fake.addresses().len(), 1, "one address exists");
    assert_eq!(addresses.observe().await.unwrap(), vec![first.clone()]);
    addresses.release(&first).await.unwrap();
    addresses.release(&first).await.unwrap();
    assert!(
        h.peers.fake.addresses().is_empty(),
        "released; twice is fine"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_write_is_a_conflict_and_the_shared_edit_keeps_the_rivals_value() {
    // The provider itself against the fake: a Change whose deletion no longer matches is
    // rejected (412 conditionNotMet) as ErrorKind::Conflict; the shared compare-and-swap then
    // re-reads and keeps the rival's value.
    use bootstrap_cloud::gcp::CloudDns;
    use bootstrap_cloud::{DnsEdit, DnsProvider, ErrorKind, RecordKey, RecordType, ZoneRef};
    let h = Harness::new().await;
    let dns = CloudDns::new(&settings(&h)).await.unwrap();
    let zone = dns
        .find_zone(&ZoneRef {
            domain: "mycluster.example.com".into(),
            private: true,
            id: None,
            tags: Default::default(),
        })
        .await
        .unwrap();
    assert_eq!(zone.id, PRIVATE_ZONE, "visibility picks the private zone");
    let key = RecordKey {
        name: "api-int.mycluster.example.com".into(),
        rtype: RecordType::A,
    };
    h.peers
        .fake
        .write_record(PRIVATE_ZONE, &key.name, "A", &["192.0.2.1"])
        .unwrap();
    let read = dns.read(&zone, &key).await.unwrap();
    h.peers
        .fake
        .write_record(PRIVATE_ZONE, &key.name, "A", &["192.0.2.1", OTHER_WRITER])
        .unwrap();
    let ours = [BOOTSTRAP_IP.parse().unwrap()].into_iter().collect();
    let err = dns
        .write(&zone, &key, read.as_ref(), &ours, 60)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict, "{err}");
    assert!(err.message.contains("Precondition not met"), "{err}");

    let edit = DnsEdit {
        add: ours,
        ttl: 60,
        ..Default::default()
    };
    bootstrap_cloud::edit_record_values(&dns, &zone, &key, &edit)
        .await
        .unwrap();
    assert_eq!(
        h.world().record("private", API_INT),
        vec![BOOTSTRAP_IP, "192.0.2.1", OTHER_WRITER],
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn dns_teardown_removes_only_the_bootstrap_ip() {
    let h = Harness::new().await;
    h.bootstrap().await;
    let before = h.world();
    h.peers.reset_counts();
    h.run(&["dns", "teardown"]).await;
    let after = h.world();
    for name in [API, API_INT] {
        let expected: Vec<String> = before
            .record("private", name)
            .into_iter()
            .filter(|ip| ip != BOOTSTRAP_IP)
            .collect();
        assert_eq!(after.record("private", name), expected);
    }
    assert_eq!(after.record("public", API), before.record("public", API));
    assert_eq!(after.ips("public-ipv4"), before.ips("public-ipv4"));
    assert_eq!(after.ips("private-ipv4"), before.ips("private-ipv4"));
    assert_eq!(
        calls(&h),
        vec!["POST changes"; 2],
        "one change per private record"
    );
    h.assert_changes_nothing(&[&["dns", "teardown"]], "teardown again changes nothing")
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn teardown_all_leaves_nothing_of_ours_and_nothing_else_is_touched() {
    let h = Harness::new().await;
    let fake = &h.peers.fake;
    // Not ours: unlabelled, another cluster's, ours by cluster label only (like the
    // installer's own addresses), and a reservation label without the cluster label.
    fake.create_address("unlabelled", false, &[]).unwrap();
    fake.create_address(
        "other-cluster-rsvd-public-ipv4",
        false,
        &[
            ("kubernetes-io-cluster-other-abcde", "owned"),
            (RESERVATION_LABEL, "public-ipv4"),
        ],
    )
    .unwrap();
    fake.create_address(
        "mycluster-7xk2p-cluster-ip",
        true,
        &[(CLUSTER_LABEL, "owned")],
    )
    .unwrap();
    fake.create_address(
        "reservation-label-only",
        true,
        &[(RESERVATION_LABEL, "private-ipv4")],
    )
    .unwrap();
    fake.create_address(
        "shared-not-owned",
        false,
        &[
            (CLUSTER_LABEL, "shared"),
            (RESERVATION_LABEL, "public-ipv4"),
        ],
    )
    .unwrap();
    let foreign_before: Vec<Value> = h.world().addresses().into_iter().cloned().collect();
    assert_eq!(foreign_before.len(), 5);

    h.bootstrap().await;
    h.world().assert_seeded(&[]);
    h.run(&["teardown", "--all"]).await;
    let world = h.world();
    assert!(world.ours().is_empty(), "ours released: {:#}", world.0);
    let after: Vec<Value> = world.addresses().into_iter().cloned().collect();
    assert_eq!(after, foreign_before, "foreign addresses untouched");
    assert!(world.record("private", API).is_empty() && world.record("public", API).is_empty());
    assert!(world.record("private", API_INT).is_empty());

    h.assert_changes_nothing(
        &[&["teardown", "--all"]],
        "teardown --all again changes nothing",
    )
    .await;

    // A new install on the same state dir starts a new requestId generation and works.
    h.bootstrap().await;
    h.world().assert_seeded(&[]);
}

async fn crash_and_resume(dns: bool, hold: Hold) {
    let h = Harness::new().await;
    if dns {
        h.run(&["reserve"]).await;
        h.kill_at(&["dns", "seed"], true, hold).await;
    } else {
        h.kill_at(&["reserve"], false, hold).await;
    }
    h.assert_killed_mutation_journaled().await;

    h.bootstrap().await;
    h.world().assert_seeded(&[]);
    assert_eq!(
        h.peers.fake.addresses().len(),
        2,
        "no duplicate, no leaked address"
    );
    h.assert_changes_nothing(BOOTSTRAP, "bootstrap again changes nothing")
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_before_the_second_address_resumes_without_duplicates() {
    crash_and_resume(false, Hold::Before(2)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_after_an_address_was_inserted_but_not_journaled_resumes_without_leak() {
    crash_and_resume(false, Hold::After(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_after_the_internal_address_was_inserted_resumes_without_leak() {
    crash_and_resume(false, Hold::After(2)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_after_a_record_change_resumes_without_duplicate_values() {
    crash_and_resume(true, Hold::After(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_before_a_record_change_resumes() {
    crash_and_resume(true, Hold::Before(2)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_service_account_key_is_never_printed_even_at_trace() {
    let h = Harness::new().await;
    h.assert_reserve_never_leaks(&[("fixture-secret-DO-NOT-LOG", "secret")])
        .await;
}

// --- `run` end to end ---------------------------------------------------------------------

struct RunWorld {
    h: Harness,
    kube: KubeSim,
}

impl RunWorld {
    /// The fake, and a local API server whose internal load balancers must take their
    /// address from the fake's cloud-config subnetwork (the compute subnet).
    async fn new() -> Self {
        let mut h = Harness::new().await;
        let kube = KubeSim::start(KubeSimOptions {
            controller: ControllerKnobs::default(),
            cloud: h.peers.lb_cloud(),
            ..Default::default()
        })
        .await
        .unwrap();
        h.run_flags(kube.kubeconfig_path(), "60s");
        Self { h, kube }
    }

    /// Stage 3 on GCP: both addresses stay (the Services claim them through
    /// spec.loadBalancerIP; there is no hand-over), DNS holds only the reserved IPs.
    async fn assert_done(&self) {
        let status = self.h.status().await;
        assert_eq!(status["run_step"], "done", "{status:#}");
        let world = self.h.world();
        let public = world.ips("public-ipv4");
        let private = world.ips("private-ipv4");
        assert_eq!((public.len(), private.len()), (1, 1), "{:#}", world.0);
        for name in [API, API_INT] {
            assert_eq!(
                world.record("private", name),
                private,
                "private {name}: the reserved IP only, bootstrap removed"
            );
        }
        assert_eq!(world.record("public", API), public);
        for (ns, name) in SERVICES {
            let svc = self
                .kube
                .get("", "v1", "services", Some(ns), name)
                .unwrap_or_else(|| panic!("{ns}/{name} missing"));
            assert_eq!(svc["spec"]["type"], "LoadBalancer");
            let wanted = if name == "external-lb" {
                &public[0]
            } else {
                &private[0]
            };
            assert_eq!(
                svc["spec"]["loadBalancerIP"], **wanted,
                "{ns}/{name} claims the reserved address"
            );
            assert_eq!(
                svc["status"]["loadBalancer"]["ingress"][0]["ip"], **wanted,
                "{ns}/{name} has ingress on it"
            );
        }
        agent::assert_gate_passed(&self.kube);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn full_run_reaches_done_and_a_rerun_makes_zero_mutating_calls() {
    let w = RunWorld::new().await;
    w.h.run(&["run"]).await;
    w.assert_done().await;

    w.kube.clear_request_log();
    w.h.assert_changes_nothing(&[&["run"]], "cloud").await;
    let kube_mutations: Vec<(String, String)> = w
        .kube
        .request_log()
        .into_iter()
        // A SelfSubjectAccessReview (preflight) asks; it creates nothing.
        .filter(|(m, p)| m != "GET" && !p.contains("selfsubjectaccessreviews"))
        .collect();
    assert!(kube_mutations.is_empty(), "kube: {kube_mutations:?}");
    w.assert_done().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn run_resumes_after_kill_during_reserve() {
    let w = RunWorld::new().await;
    w.h.kill_at(&["run"], false, Hold::After(1)).await;
    w.h.run(&["run"]).await;
    w.assert_done().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn run_resumes_after_kill_during_dns_seed() {
    let w = RunWorld::new().await;
    w.h.kill_at(&["run"], true, Hold::After(2)).await;
    w.h.run(&["run"]).await;
    w.assert_done().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn run_resumes_after_kill_during_bootstrap_removal() {
    // DNS mutations: 3 seeds, then the removal of the bootstrap IP.
    let w = RunWorld::new().await;
    w.h.kill_at(&["run"], true, Hold::Before(4)).await;
    w.h.run(&["run"]).await;
    w.assert_done().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_names_the_gcp_changes() {
    let h = Harness::new().await;
    let plan = h.run(&["plan"]).await;
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(
        text.contains("reserve public-ipv4 mycluster-7xk2p-rsvd-public-ipv4"),
        "{text}"
    );
    assert!(
        text.contains("reserve private-ipv4 mycluster-7xk2p-rsvd-private-ipv4"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_internal_address_outside_the_compute_subnet_fails_the_gate() {
    let mut w = RunWorld::new().await;
    // As the agent reserved it before: an address of the control-plane subnet.
    let templates = w.h.templates_with("gcp", |_, text| {
        text.replace(
            "loadBalancerIP: \"{{ private_ip.ipv4 }}\"",
            "loadBalancerIP: \"10.0.0.9\"",
        )
    });
    let last = w.h.extra.len() - 1;
    w.h.extra[last] = "3s".into();
    w.h.extra.extend(templates);
    let out = w.h.command(&["run"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("internal-lb: no ingress yet"), "{stderr}");
    let refused = w
        .kube
        .service_events("openshift-kube-apiserver", "internal-lb")
        .into_iter()
        .find(|e| e["reason"] == "SyncLoadBalancerFailed")
        .expect("the service controller records why");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("10.0.0.9") && message.contains("10.0.128.0/17"),
        "{message}"
    );
}

// ---- installer-default network ---------------------------------------------------------------

/// The network the installer makes when the install-config names none.
fn installer_network() -> FakeOptions {
    FakeOptions {
        seed: Seed::installer_network(),
        ..FakeOptions::realistic()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn installer_default_network_is_used_by_its_default_names() {
    let h = Harness::with_fixture("gcp-default-network", installer_network()).await;
    let plan = String::from_utf8(h.run(&["plan"]).await.stdout).unwrap();
    for line in [
        "network mycluster-7xk2p-network: default name (<infra-id>-network)",
        "control-plane subnet mycluster-7xk2p-master-subnet: default name (<infra-id>-master-subnet)",
        "compute subnet mycluster-7xk2p-worker-subnet: default name (<infra-id>-worker-subnet)",
    ] {
        assert!(plan.contains(line), "{line}\n{plan}");
    }
    // The fake knows only the installer's subnetworks, so the internal address came from one.
    h.bootstrap().await;
    h.world().assert_seeded(&[]);
    h.assert_bootstrap_converged().await;
}

/// Control for the test above: the installer's network has none of the bring-your-own names,
/// so an agent that ignored the defaults would fail there.
#[tokio::test(flavor = "multi_thread")]
async fn the_installer_network_refuses_the_bring_your_own_names() {
    let h = Harness::with_options(installer_network()).await;
    let out = h.command(&["reserve"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("The referenced subnetwork resource cannot be found"),
        "{stderr}"
    );
}

// ---- Shared VPC (networkProjectID) -------------------------------------------------------------

fn shared_vpc() -> FakeOptions {
    FakeOptions {
        seed: Seed::shared_vpc(),
        ..FakeOptions::realistic()
    }
}

const HOST_COMPUTE_SUBNET: &str =
    "projects/example-host-project/regions/us-central1/subnetworks/ocp-compute";

/// The installer's Shared VPC: both addresses in the service project (the only project the
/// calls name), the INTERNAL one in the host project's compute subnetwork, which `plan`
/// shows.
#[tokio::test(flavor = "multi_thread")]
async fn shared_vpc_reserves_in_the_service_project_from_the_host_projects_subnetwork() {
    let h = Harness::with_fixture("gcp-shared-vpc", shared_vpc()).await;
    let plan = String::from_utf8(h.run(&["plan"]).await.stdout).unwrap();
    assert!(
        plan.contains(&format!("the compute subnetwork {HOST_COMPUTE_SUBNET},")),
        "{plan}"
    );
    h.bootstrap().await;
    let mut expected = vec!["POST addresses"; 2];
    expected.extend(["POST changes"; 3]);
    assert_eq!(
        calls(&h),
        expected,
        "addresses inserted in projects/example-project, records in its zones"
    );
    let world = h.world();
    let private = world.ours_of("private-ipv4");
    assert_eq!(private.len(), 1, "{:#}", world.0);
    assert_eq!(
        private[0]["subnetwork"],
        format!("https://www.googleapis.com/compute/v1/{HOST_COMPUTE_SUBNET}")
    );
    let ip: std::net::Ipv4Addr = private[0]["ip"].as_str().unwrap().parse().unwrap();
    assert!(
        ip.octets()[..2] == [10, 0] && ip.octets()[2] >= 128,
        "from ocp-compute's range 10.0.128.0/17: {ip}"
    );
    assert_eq!(world.ours_of("public-ipv4").len(), 1);
    let mut want = vec![ip.to_string(), BOOTSTRAP_IP.to_string()];
    want.sort();
    for name in [API, API_INT] {
        assert_eq!(world.record("private", name), want, "private {name}");
    }
    assert_eq!(world.record("public", API), world.ips("public-ipv4"));
    h.assert_bootstrap_converged().await;
}

/// What the agent sent before it read networkProjectID: the host's subnetwork named under
/// the service project. The fake refuses it as GCE does, and creates nothing.
#[tokio::test(flavor = "multi_thread")]
async fn the_shared_vpc_subnetwork_named_under_the_service_project_is_refused() {
    use bootstrap_cloud::{AddressProvider, ErrorKind, ReservationKey, ReserveRequest};
    let h = Harness::with_fixture("gcp-shared-vpc", shared_vpc()).await;
    let request = ReserveRequest {
        key: ReservationKey::parse("private-ipv4").unwrap(),
        name: "mycluster-7xk2p-rsvd-private-ipv4".into(),
        token: "mycluster-7xk2p-prv4-g1".into(),
    };
    let mut wrong = settings(&h);
    wrong.subnetwork = "ocp-compute".into();
    let addresses = bootstrap_cloud::gcp::GceAddresses::new(&wrong)
        .await
        .unwrap();
    let err = addresses.reserve(&request).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Fatal, "{err}");
    assert!(
        err.to_string().contains(
            "Invalid value for field 'resource.subnetwork': 'projects/example-project/regions/us-central1/subnetworks/ocp-compute'. The referenced subnetwork resource cannot be found."
        ),
        "{err}"
    );
    assert!(h.peers.fake.addresses().is_empty(), "nothing created");

    let right = bootstrap_cloud::gcp::GcpSettings {
        network_project: Some("example-host-project".into()),
        ..wrong
    };
    let addresses = bootstrap_cloud::gcp::GceAddresses::new(&right)
        .await
        .unwrap();
    let reserved = addresses.reserve(&request).await.unwrap();
    assert_eq!(h.peers.fake.addresses().len(), 1, "{reserved:?}");
}

// ---- the private zone in a third project (platform.gcp.dns.privateZone) -----------------------

fn private_zone_in_dns_project() -> FakeOptions {
    FakeOptions {
        seed: Seed::private_zone_in_dns_project(),
        ..FakeOptions::realistic()
    }
}

const DNS_PROJECT_ZONE: &str = "projects/example-dns-project/managedZones/mycluster-private-zone";

/// The DNS manifest names the private zone `projects/example-dns-project/managedZones/...`:
/// `api` and `api-int` go there, the public `api` into the service project's public zone,
/// and the addresses stay in the service project.
#[tokio::test(flavor = "multi_thread")]
async fn the_private_records_go_into_the_zone_of_the_dns_project() {
    let h = Harness::with_fixture("gcp-private-zone-project", private_zone_in_dns_project()).await;
    let plan = String::from_utf8(h.run(&["plan", "--output", "json"]).await.stdout).unwrap();
    assert!(plan.contains(DNS_PROJECT_ZONE), "{plan}");
    h.bootstrap().await;
    let world = h.world();
    let mut want = world.ips("private-ipv4");
    assert_eq!(want.len(), 1, "{:#}", world.0);
    want.push(BOOTSTRAP_IP.to_string());
    want.sort();
    for name in [API, API_INT] {
        assert_eq!(
            world.record("private_in_dns_project", name),
            want,
            "private {name}"
        );
    }
    assert_eq!(world.record("public", API), world.ips("public-ipv4"));
    h.assert_bootstrap_converged().await;
}

/// Cloud DNS finds a zone only under its own project: the same zone named under the service
/// project (what an agent that ignored the project would ask for) is not found.
#[tokio::test(flavor = "multi_thread")]
async fn the_dns_projects_zone_asked_for_under_the_service_project_is_not_found() {
    use bootstrap_cloud::gcp::CloudDns;
    use bootstrap_cloud::{DnsProvider, ErrorKind, RecordKey, RecordType, Zone, ZoneRef};
    let h = Harness::with_fixture("gcp-private-zone-project", private_zone_in_dns_project()).await;
    let dns = CloudDns::new(&settings(&h)).await.unwrap();
    let reference = ZoneRef {
        domain: "mycluster.example.com".into(),
        private: true,
        ..ZoneRef::default()
    };
    let key = RecordKey {
        name: API.into(),
        rtype: RecordType::A,
    };
    let bare = Zone {
        reference: reference.clone(),
        id: "mycluster-private-zone".into(),
    };
    let err = dns.read(&bare, &key).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound, "{err}");
    let err = dns.find_zone(&reference).await.unwrap_err();
    assert_eq!(
        err.kind,
        ErrorKind::NotFound,
        "no private zone in the service project: {err}"
    );
    let located = Zone {
        reference,
        id: DNS_PROJECT_ZONE.into(),
    };
    assert_eq!(dns.read(&located, &key).await.unwrap(), None);
}

// ---- faults: throttling (429/503 rateLimitExceeded), 500s and lost answers -----------------

fn plant_other_writer(h: &Harness) {
    for name in ["api.mycluster.example.com", "api-int.mycluster.example.com"] {
        h.peers
            .fake
            .write_record(PRIVATE_ZONE, name, "A", &[OTHER_WRITER])
            .unwrap();
    }
}

fn assert_torn_down(h: &Harness) {
    let world = h.world();
    assert!(world.ours().is_empty(), "nothing of ours: {:#}", world.0);
    for name in [API, API_INT] {
        assert_eq!(world.record("private", name), vec![OTHER_WRITER], "{name}");
    }
    assert!(world.record("public", API).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn at_20_percent_faults_bootstrap_and_teardown_complete_with_nothing_leaked_or_duplicated() {
    let h = Harness::new().await;
    plant_other_writer(&h);
    h.peers.inject_faults(&Faults::new(0.2, fault_seed()));
    h.run_all(BOOTSTRAP).await;
    let stats = h.peers.fault_stats();
    eprintln!("gcp bootstrap at 20%: {stats:?}");
    assert!(
        stats.throttled > 0 && stats.server_errors > 0 && stats.lost_answers > 0,
        "every kind of fault was injected: {stats:?}"
    );
    h.peers.stop_faults();
    h.world().assert_seeded(&[OTHER_WRITER]);
    h.assert_changes_nothing(BOOTSTRAP, "converged despite the faults")
        .await;

    h.peers.inject_faults(&Faults::new(0.2, fault_seed() + 1));
    h.run_all(&[&["teardown", "--all"]]).await;
    eprintln!("gcp teardown --all at 20%: {:?}", h.peers.fault_stats());
    h.peers.stop_faults();
    assert_torn_down(&h);
}

#[tokio::test(flavor = "multi_thread")]
async fn at_40_percent_faults_commands_complete_or_stop_resumably_and_never_leak() {
    let h = Harness::new().await;
    plant_other_writer(&h);
    h.peers.inject_faults(&Faults::new(0.4, fault_seed()));
    let completed = h.run_all_or_stop_resumably(BOOTSTRAP).await;
    eprintln!(
        "gcp bootstrap at 40%: completed={completed} {:?}",
        h.peers.fault_stats()
    );
    h.peers.stop_faults();
    assert!(h.world().ours().len() <= 2, "{:#}", h.world().0);
    h.run_all(BOOTSTRAP).await;
    h.world().assert_seeded(&[OTHER_WRITER]);

    h.peers.inject_faults(&Faults::new(0.4, fault_seed() + 1));
    let completed = h.run_all_or_stop_resumably(&[&["teardown", "--all"]]).await;
    eprintln!(
        "gcp teardown --all at 40%: completed={completed} {:?}",
        h.peers.fault_stats()
    );
    h.peers.stop_faults();
    h.run_all(&[&["teardown", "--all"]]).await;
    assert_torn_down(&h);
}
