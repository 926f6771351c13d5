//! The GCP vertical against the local fake of compute.v1 + dns.v1 (`bootstrap_sim::gcp`),
//! behind counting proxies that can also freeze the agent between two mutations. The behaviour
//! every cloud shares comes from `common/suite.rs`; what is GCP's own follows, with `run` end
//! to end against the local Kubernetes API server.
#![cfg(feature = "gcp")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::Hold;
use bootstrap_sim::gcp::{FakeOptions, GcpPeers, Seed};
use bootstrap_sim::kube::{ControllerKnobs, KubeSim, KubeSimOptions};
use common::gcp::*;
use common::*;

common::suite::cloud_suite!(GcpPeers);

fn calls(h: &GcpHarness) -> Vec<String> {
    h.peers.calls()
}

/// The zone with the cluster's name but public visibility is not the private zone.
/// The request the agent makes for reservation `key` of cluster `mycluster-7xk2p`, with the
/// idempotency `token` it derives.
fn reserve_request(key: &str, token: &str) -> bootstrap_cloud::ReserveRequest {
    bootstrap_cloud::ReserveRequest {
        key: bootstrap_cloud::ReservationKey::parse(key).unwrap(),
        name: format!("mycluster-7xk2p-rsvd-{key}"),
        token: token.into(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn visibility_decides_the_zone_a_same_named_public_zone_gets_no_record() {
    let h = GcpHarness::new().await;
    h.bootstrap().await;
    h.world().await.assert_seeded(&[]);
    let decoy = h.peers.fake.records("mycluster-example-com-public");
    assert!(
        decoy.keys().all(|k| !k.starts_with("api")),
        "visibility decides the zone: {decoy:?}"
    );
}

fn settings(h: &GcpHarness) -> bootstrap_cloud::gcp::GcpSettings {
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
        resource_manager_endpoint: Some(h.peers.fake.url()),
        second_address_host: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_insert_response_retried_with_the_same_token_yields_one_address() {
    // observe-first hides this path in the CLI tests: call the provider twice with one token,
    // as a retry after a lost response would. GCE (and the fake) answer the second insert with
    // the first operation, so there is one address.
    use bootstrap_cloud::AddressProvider;
    let h = GcpHarness::new().await;
    let addresses = bootstrap_cloud::gcp::GceAddresses::new(&settings(&h))
        .await
        .unwrap();
    let request = reserve_request("private-ipv4", "mycluster-7xk2p-prv4-g1");
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

/// The provider itself against the fake: the bootstrap VM's alias IP is added, found again
/// (no second one), and released: taking the last alias off nic0 must leave it without any.
/// (The client leaves an empty `aliasIpRanges` out of the PATCH, which GCE then keeps as it
/// was: the alias stayed while the update reported success.)
#[tokio::test(flavor = "multi_thread")]
async fn releasing_the_only_alias_ip_leaves_the_bootstrap_vm_without_it() {
    use bootstrap_cloud::AddressProvider;
    let h = GcpHarness::new().await;
    let addresses = bootstrap_cloud::gcp::GceAddresses::new(&bootstrap_cloud::gcp::GcpSettings {
        second_address_host: Some(BOOTSTRAP_IP.parse().unwrap()),
        ..settings(&h)
    })
    .await
    .unwrap();
    let request = reserve_request("bootstrap-ipv4", "mycluster-7xk2p-bst4-g1");
    let alias = addresses.reserve(&request).await.unwrap();
    assert_eq!(
        addresses.reserve(&request).await.unwrap(),
        alias,
        "found again"
    );
    let host = |h: &GcpHarness| -> Vec<std::net::IpAddr> {
        let addresses = h.peers.fake.instance_addresses(BOOTSTRAP_VM);
        addresses.into_iter().map(Into::into).collect()
    };
    let bootstrap: std::net::IpAddr = BOOTSTRAP_IP.parse().unwrap();
    assert_eq!(host(&h), [bootstrap, alias.ip]);
    assert_eq!(addresses.observe().await.unwrap(), vec![alias.clone()]);

    addresses.release(&alias).await.unwrap();
    assert_eq!(host(&h), [bootstrap]);
    assert_eq!(addresses.observe().await.unwrap(), vec![]);
    addresses.release(&alias).await.unwrap();
    assert_eq!(
        calls(&h),
        vec![UPDATE_NETWORK_INTERFACE; 2],
        "one update to add it, one to take it off; none when it is gone"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_write_is_a_conflict_and_the_shared_edit_keeps_the_rivals_value() {
    // The provider itself against the fake: a Change whose deletion no longer matches is
    // rejected (412 conditionNotMet) as ErrorKind::Conflict; the shared compare-and-swap then
    // re-reads and keeps the rival's value.
    use bootstrap_cloud::gcp::CloudDns;
    use bootstrap_cloud::{
        DnsEdit, DnsProvider, ErrorKind, RecordKey, RecordType, RecordWrite, ZoneRef,
    };
    let h = GcpHarness::new().await;
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
    let stale = RecordWrite {
        zone: &zone,
        key: &key,
        current: read.as_ref(),
        values: &ours,
        ttl: 60,
    };
    let err = dns.write(&stale).await.unwrap_err();
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
        h.world().await.record("private", API_INT),
        vec![BOOTSTRAP_IP, "192.0.2.1", OTHER_WRITER],
    );
}

common::suite::sigkill_suite!(GcpPeers;
    sigkill_before_the_internal_address_resumes_without_duplicates: Hold::Before(2),
    sigkill_after_an_address_was_inserted_but_not_journaled_resumes_without_leak: Hold::After(1),
    sigkill_after_the_internal_address_was_inserted_resumes_without_leak: Hold::After(2),
);

// --- `run` end to end ---------------------------------------------------------------------

struct RunWorld {
    h: GcpHarness,
    kube: KubeSim,
}

impl RunWorld {
    /// The fake, and a local API server whose internal load balancers must take their
    /// address from the fake's cloud-config subnetwork (the compute subnet).
    async fn new() -> Self {
        Self::with_options(FakeOptions::realistic()).await
    }

    async fn with_options(options: FakeOptions) -> Self {
        let mut h = GcpHarness::with_options(options).await;
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

    /// Step 3 on GCP: both addresses stay (the Services claim them through
    /// spec.loadBalancerIP; there is no hand-over), DNS holds only the reserved IPs.
    async fn assert_done(&self) {
        let status = self.h.status().await;
        assert_eq!(status["run_step"], "done", "{status:#}");
        let world = self.h.world().await;
        let public = world.ips("public-ipv4");
        let private = world.ips("private-ipv4");
        assert_eq!((public.len(), private.len()), (1, 1), "{:#}", world.0);
        assert_eq!(
            world.bootstrap_host_addresses(),
            vec![BOOTSTRAP_IP.to_string()],
            "the alias IP left the bootstrap VM with stage 3"
        );
        for name in [API, API_INT] {
            assert_eq!(
                world.record("private", name),
                private,
                "private {name}: the reserved IP only, bootstrap removed"
            );
        }
        assert_eq!(world.record("public", API), public);
        for (ns, name) in SERVICES {
            let svc = load_balancer_service(&self.kube, ns, name);
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
        // G2: the internal IP is proven by GCE's health check, never by the bootstrap VM,
        // which is one of its backends (the reused master group).
        let proof = status["wire_proof"].as_str().unwrap_or_default();
        let internal = format!(
            "{}: cloud: the load balancer's health check passes 6443 by a",
            private[0]
        );
        assert!(
            proof.contains(&internal) && proof.contains("22623 by a"),
            "{proof}"
        );
        assert!(
            // Any group's Node proves it (a later look asks one group, the next each time).
            (proof.contains("(healthy: mycluster-7xk2p-master-")
                || proof.contains("(healthy: mycluster-7xk2p-worker-"))
                && !proof.contains("bootstrap,"),
            "{proof}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn full_run_reaches_done_and_a_rerun_makes_zero_mutating_calls() {
    let w = RunWorld::new().await;
    w.h.run(&["run"]).await;
    w.assert_done().await;

    w.kube.clear_request_log();
    w.h.assert_changes_nothing(&[&["run"]], "cloud").await;
    let kube_mutations = kube_mutations(&w.kube);
    assert!(kube_mutations.is_empty(), "kube: {kube_mutations:?}");
    w.assert_done().await;
}

common::suite::run_resumes_after_kill! { RunWorld::new();
    run_resumes_after_kill_during_reserve: false, Hold::After(1);
    run_resumes_after_kill_during_dns_seed: true, Hold::After(2);
    // DNS mutations: 3 seeds, then the removal of the bootstrap IP.
    run_resumes_after_kill_during_bootstrap_removal: true, Hold::Before(4);
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_names_the_gcp_changes() {
    let h = GcpHarness::new().await;
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

/// G2: the bootstrap VM sits in the reused master instance group, a backend of the internal
/// load balancer, and GCE hands a backend's connection to its own internal load balancer back
/// to it: a dial from the bootstrap host proves nothing (here it would pass: the wire override
/// reaches the local API server). Until a backend other than the bootstrap VM passes the
/// health check, the internal IP stays out of DNS and the bootstrap IP stays in (exit 4).
#[tokio::test(flavor = "multi_thread")]
async fn an_internal_load_balancer_whose_backends_fail_the_health_check_is_not_proven() {
    let mut w = RunWorld::with_options(FakeOptions {
        health_check_interval: std::time::Duration::from_secs(3600),
        ..FakeOptions::realistic()
    })
    .await;
    let last = w.h.extra.len() - 1;
    w.h.extra[last] = "4s".into();
    let (_, stderr) = w.h.run_exits(&["run"], 4).await;
    assert!(
        stderr.contains("port 6443: no backend but the bootstrap host passes the health check yet")
            && stderr.contains("unhealthy mycluster-7xk2p-master-0, mycluster-7xk2p-bootstrap,"),
        "{stderr}"
    );
    let world = w.h.world().await;
    let private = world.ips("private-ipv4");
    let api_int = world.record("private", API_INT);
    assert!(
        api_int.contains(&BOOTSTRAP_IP.to_string()) && !api_int.contains(&private[0]),
        "the bootstrap IP stays, the unproven internal IP never joins: {api_int:?}"
    );
    // While it waits, the proof looks again on a short backoff (250 ms doubling to 800 ms)
    // without re-reading what it learnt: each forwarding rule and its backend service once,
    // and after a rule's first look (all six groups: three master
    // groups, three of the provider's own) one group per look.
    let log = w.h.peers.fake.request_log();
    let count = |what: &dyn Fn(&str, &str) -> bool| log.iter().filter(|(m, p)| what(m, p)).count();
    let rule_reads = count(&|m, p| m == "GET" && p.contains("/forwardingRules/"));
    let service_reads =
        count(&|m, p| m == "GET" && p.contains("/backendServices/") && !p.contains("getHealth"));
    let health_reads = count(&|_, p| p.contains("/getHealth"));
    assert_eq!((rule_reads, service_reads), (2, 2), "{log:#?}");
    // Looks in the 4 s: the first (6 groups per rule), then one group per rule per look.
    let looks_after_the_first = health_reads.saturating_sub(12) / 2;
    assert!(
        (12 + 2 * 4..=12 + 2 * 9).contains(&health_reads),
        "{health_reads} health reads ({looks_after_the_first} looks after the first): {log:#?}"
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
    let (_, stderr) = w.h.run_exits(&["run"], 4).await;
    assert!(stderr.contains("internal-lb: no ingress yet"), "{stderr}");
    let refused = w
        .kube
        .service_events("openshift-kube-apiserver", "internal-lb")
        .into_iter()
        .find(|e| e["reason"] == "SyncLoadBalancerFailed")
        .expect("the service controller records why");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("failed to get address by IP \"10.0.0.9\"")
            && message.contains("not in the subnetwork's usable range"),
        "{message}"
    );
}

// ---- installer-default network: the shared suite -----------------------------------------------

common::suite::cloud_suite!(installer_network GcpPeers);

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
    let h = GcpHarness::with_fixture("gcp-shared-vpc", shared_vpc()).await;
    let plan = String::from_utf8(h.run(&["plan"]).await.stdout).unwrap();
    assert!(
        plan.contains(&format!("the compute subnetwork {HOST_COMPUTE_SUBNET},")),
        "{plan}"
    );
    h.bootstrap().await;
    let mut expected = vec!["POST addresses"; 2];
    // One Change per zone (public `api`; private `api` + `api-int`).
    expected.extend(["POST changes"; 2]);
    // The bootstrap VM of the service project gets its alias IP from the host's subnetwork.
    expected.insert(0, UPDATE_NETWORK_INTERFACE);
    assert_eq!(
        calls(&h),
        expected,
        "addresses inserted in projects/example-project, records in its zones"
    );
    let world = h.world().await;
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
    let second = world.second_address().expect("the bootstrap VM's alias IP");
    let mut want = vec![ip.to_string(), BOOTSTRAP_IP.to_string(), second];
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
    use bootstrap_cloud::{AddressProvider, ErrorKind};
    let h = GcpHarness::with_fixture("gcp-shared-vpc", shared_vpc()).await;
    let request = reserve_request("private-ipv4", "mycluster-7xk2p-prv4-g1");
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
    let h =
        GcpHarness::with_fixture("gcp-private-zone-project", private_zone_in_dns_project()).await;
    let plan = String::from_utf8(h.run(&["plan", "--output", "json"]).await.stdout).unwrap();
    assert!(plan.contains(DNS_PROJECT_ZONE), "{plan}");
    h.bootstrap().await;
    let world = h.world().await;
    let mut want = world.ips("private-ipv4");
    assert_eq!(want.len(), 1, "{:#}", world.0);
    want.push(BOOTSTRAP_IP.to_string());
    want.extend(world.second_address());
    assert_eq!(want.len(), 3, "the bootstrap VM's alias IP: {:#}", world.0);
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
    let h =
        GcpHarness::with_fixture("gcp-private-zone-project", private_zone_in_dns_project()).await;
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

// ---- UPI, by hand: the docs/upi.md runbook, played by the user ---------------------------------------

/// The compute subnetwork's URL path, where the user reserves the internal VIP.
fn compute_subnetwork(fake: &bootstrap_sim::gcp::GcpFake) -> String {
    let seed = fake.seed();
    format!(
        "projects/{}/regions/{}/subnetworks/{}",
        seed.project, seed.region, seed.cloud_config_subnetwork
    )
}

/// What names the compute calls on addresses (insert, delete, setLabels).
const ADDRESS_CALLS: &[&str] = &["/addresses"];

#[tokio::test(flavor = "multi_thread")]
async fn upi_by_hand_adopts_the_users_addresses_and_teardown_all_leaves_them() {
    let mut w = RunWorld::new().await;
    let kubeconfig = w.kube.kubeconfig_path().display().to_string();
    w.h.extra.clear();
    // 1. The user reserves both addresses by the seed's names, with the official client.
    let fake = &w.h.peers.fake;
    let public = bootstrap_sim::upi::gcp_address(fake, "mycluster-7xk2p-rsvd-public-ipv4", None)
        .await
        .unwrap();
    let subnetwork = compute_subnetwork(fake);
    let private = bootstrap_sim::upi::gcp_address(
        fake,
        "mycluster-7xk2p-rsvd-private-ipv4",
        Some(("SHARED_LOADBALANCER_VIP", &subnetwork)),
    )
    .await
    .unwrap();
    let public_ip = public["ip"].as_str().unwrap().to_string();
    let private_ip = private["ip"].as_str().unwrap().to_string();
    w.h.peers.reset_counts();

    // 2. `plan` shows them adopted and reserves no address: only the bootstrap VM's alias IP
    // (the user's addresses are the load balancers'; `--adopt-only` would leave it out).
    w.h.assert_plan_adopts_both_and_reserves_only_the_second_address()
        .await;

    // 3. DNS, render, apply, wait, dns teardown: the by-hand commands.
    w.h.run(&["reserve"]).await;
    w.h.run(&["dns", "seed"]).await;
    let rendered = String::from_utf8(w.h.run(&["render"]).await.stdout).unwrap();
    assert!(
        rendered.contains(&public_ip) && rendered.contains(&private_ip),
        "{rendered}"
    );
    w.h.run(&["apply", "--kubeconfig", &kubeconfig]).await;
    w.h.run(&["wait", "--kubeconfig", &kubeconfig, "--gate-timeout", "60s"])
        .await;
    w.h.run(&["dns", "teardown"]).await;

    // The Services hold the user's addresses; DNS ends as the seed's stage 3.
    for (ns, name) in SERVICES {
        let svc = w.kube.get("", "v1", "services", Some(ns), name).unwrap();
        let wanted = if name == "external-lb" {
            &public_ip
        } else {
            &private_ip
        };
        assert_eq!(
            svc["spec"]["loadBalancerIP"],
            wanted.as_str(),
            "{ns}/{name}"
        );
        assert_eq!(
            svc["status"]["loadBalancer"]["ingress"][0]["ip"],
            wanted.as_str(),
            "{ns}/{name}"
        );
    }
    let world = w.h.world().await;
    for name in [API, API_INT] {
        assert_eq!(world.record("private", name), vec![private_ip.clone()]);
    }
    assert_eq!(
        world.bootstrap_host_addresses(),
        vec![BOOTSTRAP_IP.to_string()],
        "the alias IP left the bootstrap VM with stage 3"
    );
    assert_eq!(world.record("public", API), vec![public_ip.clone()]);
    // The agent made no address, labelled none and released none.
    assert!(world.ours().is_empty(), "{:#}", world.0);
    w.h.assert_no_mutating_call_naming(ADDRESS_CALLS);

    // `status` shows both adopted. 4. After a failed install, `teardown --all` leaves the
    // user's addresses, and says so.
    w.h.assert_user_reservations_adopted_and_left(2).await;
    let world = w.h.world().await;
    let names = string_fields(&world.0["addresses"], "name");
    for name in [
        "mycluster-7xk2p-rsvd-public-ipv4",
        "mycluster-7xk2p-rsvd-private-ipv4",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} stays: {names:?}");
    }
    w.h.assert_no_mutating_call_naming(ADDRESS_CALLS);
    assert!(
        world.record("public", API).is_empty(),
        "our values left DNS"
    );
}

/// Mixed: the user made only the public address; the agent adopts it and reserves the private
/// one as its own; `--adopt-only` instead refuses (exit 2) naming what is missing.
#[tokio::test(flavor = "multi_thread")]
async fn upi_mixed_adopts_what_exists_and_reserves_the_rest_unless_adopt_only() {
    let h = GcpHarness::new().await;
    bootstrap_sim::upi::gcp_address(&h.peers.fake, "mycluster-7xk2p-rsvd-public-ipv4", None)
        .await
        .unwrap();
    let out = h
        .command(&["reserve", "--adopt-only"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--adopt-only")
            && err.contains("private-ipv4 (name mycluster-7xk2p-rsvd-private-ipv4)"),
        "{err}"
    );
    h.assert_no_mutating_call_naming(ADDRESS_CALLS);
    h.run(&["reserve"]).await;
    let world = h.world().await;
    assert_eq!(
        world.ours().len(),
        1,
        "only the private address is ours: {:#}",
        world.0
    );
    assert_eq!(world.ours()[0]["name"], "mycluster-7xk2p-rsvd-private-ipv4");
    h.run(&["teardown", "--all"]).await;
    let world = h.world().await;
    assert!(world.ours().is_empty());
    assert_eq!(
        world.addresses().len(),
        1,
        "the user's stays: {:#}",
        world.0
    );
}

/// The user reserves the internal VIP's address by the seed's name: INTERNAL with (purpose,
/// subnetwork), or EXTERNAL (`None`).
async fn user_private_address(h: &GcpHarness, internal: Option<(&str, &str)>) {
    bootstrap_sim::upi::gcp_address(&h.peers.fake, "mycluster-7xk2p-rsvd-private-ipv4", internal)
        .await
        .unwrap();
}

/// Addresses that exist by the seed's names but cannot serve: exit 2 naming the address and
/// what is wrong, before any change.
#[tokio::test(flavor = "multi_thread")]
async fn upi_addresses_that_do_not_fit_are_refused_naming_them() {
    let h = GcpHarness::new().await;
    let seed = h.peers.fake.seed();
    let master = format!(
        "projects/{}/regions/{}/subnetworks/{}",
        seed.project,
        seed.region,
        seed.subnetworks
            .iter()
            .map(|s| s.name.clone())
            .find(|n| *n != seed.cloud_config_subnetwork)
            .unwrap()
    );
    // An internal address of the wrong subnetwork (purpose right).
    user_private_address(&h, Some(("SHARED_LOADBALANCER_VIP", &master))).await;
    for err in h.plan_and_reserve_refusals().await {
        assert!(
            err.contains("address mycluster-7xk2p-rsvd-private-ipv4")
                && err.contains("compute subnetwork"),
            "{err}"
        );
    }
    h.assert_no_mutating_call_naming(ADDRESS_CALLS);

    // The type: an EXTERNAL address named for the internal VIP.
    let h = GcpHarness::new().await;
    user_private_address(&h, None).await;
    let (_, err) = h.run_exits(&["plan"], 2).await;
    assert!(
        err.contains("is EXTERNAL; the internal API needs an INTERNAL address"),
        "{err}"
    );

    // The purpose: an internal address that cannot be shared by two forwarding rules.
    let h = GcpHarness::new().await;
    let subnetwork = compute_subnetwork(&h.peers.fake);
    user_private_address(&h, Some(("GCE_ENDPOINT", &subnetwork))).await;
    let (_, err) = h.run_exits(&["plan"], 2).await;
    assert!(
        err.contains("purpose GCE_ENDPOINT") && err.contains("SHARED_LOADBALANCER_VIP"),
        "{err}"
    );

    // The network tier: the external Service is Premium (no `cloud.google.com/network-tier`),
    // and the cloud provider refuses a static address of the Standard tier.
    let h = GcpHarness::new().await;
    let name = "mycluster-7xk2p-rsvd-public-ipv4";
    bootstrap_sim::upi::gcp_address(&h.peers.fake, name, None)
        .await
        .unwrap();
    h.peers.fake.set_network_tier(name, "STANDARD");
    for err in h.plan_and_reserve_refusals().await {
        assert!(
            err.contains(&format!("address {name}"))
                && err.contains("network tier STANDARD")
                && err.contains("PREMIUM"),
            "{err}"
        );
    }
    h.assert_no_mutating_call_naming(ADDRESS_CALLS);
}

#[tokio::test(flavor = "multi_thread")]
async fn run_with_dns_wait_waits_for_the_user_at_seed_and_at_removal() {
    let w = RunWorld::new().await;
    common::suite_user_dns::run_with_dns_wait_waits_for_the_user_at_seed_and_at_removal(&w.h).await;
}
