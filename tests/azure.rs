//! The Azure vertical against the local ARM fake (`bootstrap_sim::azure`): public IPs, the
//! private-IP record, Azure DNS and Private DNS with ETags, behind a counting proxy that can
//! also freeze the agent between two mutations. The behaviour every cloud shares comes from
//! `common/suite.rs`; what is Azure's own follows, with `run` end to end against the local
//! Kubernetes API server.
#![cfg(feature = "azure")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::azure::{AzurePeers, AzureSimOptions};
use bootstrap_sim::{Fault, Faults, Hold};
use common::azure::*;
use common::*;
use serde_json::Value;
use std::time::Duration;

common::suite::cloud_suite!(AzurePeers);

fn sorted(list: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rival_write_between_read_and_write_is_retried_through_the_etag() {
    // A rival writes right before each of our next two record writes: the fake answers 412
    // to our If-None-Match / If-Match, and the agent re-reads and keeps the rival's values.
    let h = AzureHarness::new("azure").await;
    h.run(&["reserve"]).await;
    h.peers.reset_counts();
    let rivals = ["192.0.2.7", "192.0.2.8"];
    h.peers
        .sim
        .race_record_writes(&rivals.map(|s| s.parse().unwrap()));
    h.run(&["dns", "seed"]).await;
    let world = h.world().await;
    let mut all: Vec<String> = [("private", API), ("private", API_INT), ("public", API)]
        .iter()
        .flat_map(|(z, n)| world.record(z, n))
        .filter(|ip| rivals.contains(&ip.as_str()))
        .collect();
    all.sort();
    assert_eq!(all, sorted(&rivals), "both rival values survived");
    for (zone, name) in [("private", API), ("private", API_INT)] {
        let got = world.record(zone, name);
        assert!(
            got.contains(&EXPECTED_PRIVATE_IP.to_string()),
            "{name}: {got:?}"
        );
        // Azure's api-int holds the second address in the bootstrap IP's stead (issue 42).
        let bootstrap = world.bootstrap_host_values(BOOTSTRAP_IP, name);
        assert!(bootstrap.iter().all(|v| got.contains(v)), "{name}: {got:?}");
    }
    assert_eq!(
        h.calls().len(),
        5,
        "3 writes + 2 lost races: {:?}",
        h.calls()
    );
}

/// SIGKILL at `hold`, then the stage again: `resume_calls` are exactly the mutations the
/// re-run makes (what was missing, nothing twice), and the end state is the seeded picture.
/// Provisioning takes 1.5 s here, so a re-run right after a killed PUT finds the public IP
/// still `Updating` and must wait for it instead of creating or re-PUTting one.
async fn crash_and_resume(in_seed: bool, hold: Hold, resume_calls: &[&str]) {
    let h = AzureHarness::with(
        "azure",
        AzureSimOptions {
            provisioning_delay: Duration::from_millis(1500),
            ..Default::default()
        },
    )
    .await;
    if in_seed {
        h.run(&["reserve"]).await;
        h.kill_at(&["dns", "seed"], hold).await;
    } else {
        h.kill_at(&["reserve"], hold).await;
    }
    h.assert_killed_mutation_journaled().await;

    h.peers.reset_counts();
    if in_seed {
        h.run(&["dns", "seed"]).await;
    } else {
        h.run(&["reserve"]).await;
    }
    let calls = h.calls();
    if in_seed {
        // The seed writes the zones' record sets at once: which of the others landed before
        // the kill is a race. The re-run writes only record sets, each at most once, and at
        // least the one the kill held back before it reached Azure (one held after it landed
        // may leave nothing to do, when the others landed too); the end state is checked
        // below.
        let record_sets = [PRIVATE_API, PRIVATE_API_INT, PUBLIC_API];
        let held_back = matches!(hold, Hold::Before(_));
        assert!(
            (!held_back || !calls.is_empty())
                && calls.iter().all(|c| record_sets.contains(&c.as_str()))
                && calls.windows(2).all(|w| w[0] != w[1])
                && calls.len() <= resume_calls.len(),
            "the re-run does only what is missing: {calls:?}"
        );
    } else {
        assert_eq!(
            calls,
            sorted(resume_calls),
            "the re-run does only what is missing"
        );
    }
    h.bootstrap().await;
    let world = h.world().await;
    world.assert_seeded(false, &[]);
    assert_eq!(world.public_ips().len(), 1, "no leaked public IP");
    h.assert_changes_nothing(BOOTSTRAP, "bootstrap again changes nothing")
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_before_the_public_ip_put_resumes_without_duplicates() {
    crash_and_resume(
        false,
        Hold::Before(1),
        &[PIP, TAGS, TAGS, BOOTSTRAP_NIC_PUT],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_after_the_public_ip_put_but_before_it_finished_resumes_without_leak() {
    crash_and_resume(false, Hold::After(1), &[TAGS, TAGS, BOOTSTRAP_NIC_PUT]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_after_the_private_ip_was_recorded_but_not_journaled_resumes_without_leak() {
    // Mutation 2 is the claim, 3 the keep; 4, the bootstrap NIC's IP configuration, is left.
    crash_and_resume(false, Hold::After(3), &[BOOTSTRAP_NIC_PUT]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_after_a_record_change_resumes_without_duplicate_values() {
    // Plan order: private api, private api-int, public api; the first one landed.
    crash_and_resume(true, Hold::After(1), &[PRIVATE_API_INT, PUBLIC_API]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_before_a_record_change_resumes() {
    crash_and_resume(true, Hold::Before(2), &[PRIVATE_API_INT, PUBLIC_API]).await;
}

/// Dual stack (fixture `azure-dualstack`, the fake's subnets with an IPv6 /64 each): a public
/// IPv6, a private IPv6 of the compute subnet recorded as `<infra-id>-rsvd-private-ipv6`, and
/// AAAA records for api (public and private) and api-int. A re-run makes no mutating call.
#[tokio::test(flavor = "multi_thread")]
async fn dual_stack_reserves_the_private_ipv6_and_seeds_aaaa_for_api_and_api_int() {
    let h = AzureHarness::new("azure-dualstack").await;
    let plan: Value = serde_json::from_slice(
        &h.run(&["plan", "--stage", "reserve,seed-dns", "--output", "json"])
            .await
            .stdout,
    )
    .unwrap();
    // 2 public IPs, 2 private IPs, the bootstrap host's second address (IPv4: the bootstrap
    // IP's family), 6 record sets.
    assert_eq!(plan["changes"].as_array().unwrap().len(), 11, "{plan:#}");
    h.bootstrap().await;
    let world = h.world().await;
    world.assert_seeded(true, &[]);
    let v6: std::net::Ipv6Addr = world.public_ip("IPv6")[0].parse().unwrap();
    assert_eq!(v6.segments()[0], 0x2603);
    assert_eq!(
        world.rg_tags().get(PRIVATE_TAG_V6),
        Some(&Value::from(EXPECTED_PRIVATE_IPV6)),
        "recorded like the IPv4 one"
    );
    assert_eq!(
        h.calls(),
        sorted(&[
            PIP,
            PIP6,
            TAGS,
            TAGS,
            TAGS,
            BOOTSTRAP_NIC_PUT,
            PRIVATE_API,
            PRIVATE_API_INT,
            PRIVATE_API_AAAA,
            PRIVATE_API_INT_AAAA,
            PUBLIC_API,
            PUBLIC_API_AAAA
        ]),
        "two public IPs, two private-IP records (Tags Merge; the IPv4 claimed, then kept), the bootstrap NIC, six record sets"
    );
    h.assert_bootstrap_converged().await;
    let status = h.status().await;
    assert!(
        status.to_string().contains(EXPECTED_PRIVATE_IPV6),
        "status shows the IPv6 reservation: {status:#}"
    );
}

/// teardown --all after a failed dual-stack install: the IPv6 tag and the AAAA values we
/// wrote go; another writer's AAAA value and other resource-group tags stay.
#[tokio::test(flavor = "multi_thread")]
async fn dual_stack_teardown_all_removes_the_ipv6_tag_and_only_our_aaaa_values() {
    let h = AzureHarness::new("azure-dualstack").await;
    h.peers.sim.create_foreign();
    let theirs = "fd00:10:0:2::77";
    h.peers
        .sim
        .write_record(true, "api.mycluster.example.com", &[theirs])
        .unwrap();
    h.bootstrap().await;
    let world = h.world().await;
    assert_eq!(
        world.record("private", API_AAAA),
        sorted(&[EXPECTED_PRIVATE_IPV6, theirs])
    );

    h.peers.reset_counts();
    h.run(&["teardown", "--all"]).await;
    let world = h.world().await;
    assert!(world.private_ips().is_empty(), "{:#}", world.0);
    assert!(world.ours().is_empty(), "both public IPs released");
    assert_eq!(
        world.record("private", API_AAAA),
        vec![theirs.to_string()],
        "the other writer's IPv6 stays"
    );
    assert!(world.record("private", API_INT_AAAA).is_empty());
    assert!(world.record("public", API_AAAA).is_empty());
    assert_eq!(
        world.rg_tags().get("owner"),
        Some(&Value::from("platform-team"))
    );
    assert_eq!(world.public_ips().len(), 3, "foreign public IPs stay");
    // The private IPv6 went by exactly its name and value: one more tag Delete than single stack.
    let tag_patches = h.calls().iter().filter(|c| **c == TAGS).count();
    assert_eq!(tag_patches, 2, "{:?}", h.calls());
    h.assert_changes_nothing(&[&["teardown", "--all"]], "teardown --all again")
        .await;
}

/// A dual-stack machine network on a compute subnet without an IPv6 prefix cannot get its
/// private IPv6: `reserve` says so, and records no IPv6.
#[tokio::test(flavor = "multi_thread")]
async fn dual_stack_on_a_single_stack_subnet_fails_naming_the_subnet() {
    let h = AzureHarness::with("azure-dualstack", AzureSimOptions::default()).await;
    let (_, stderr) = h.run_exits(&["reserve"], 1).await;
    assert!(
        stderr.contains("mycluster-worker-subnet") && stderr.contains("no ipv6 prefix"),
        "{stderr}"
    );
    assert!(!h.world().await.rg_tags().contains_key(PRIVATE_TAG_V6));
}

/// `run` on dual stack: the internal Services claim the private IPv6 too, the simulated
/// cloud-provider-azure gives them a frontend per family from the compute subnet, the gate
/// waits for both, and the bootstrap IP leaves api/api-int. A second `run` changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn dual_stack_run_reaches_done_with_both_families_on_the_internal_load_balancer() {
    let mut h = AzureHarness::new("azure-dualstack").await;
    let kube = h.run_to_done().await;
    assert_gate_passed(&kube);
    for (ns, name) in [
        ("openshift-kube-apiserver", "internal-lb"),
        (
            "openshift-machine-config-operator",
            "internal-lb-machine-config-server",
        ),
    ] {
        let svc = kube.get("", "v1", "services", Some(ns), name).unwrap();
        let ingress: Vec<&str> = svc["status"]["loadBalancer"]["ingress"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["ip"].as_str().unwrap())
            .collect();
        assert_eq!(
            ingress,
            [EXPECTED_PRIVATE_IP, EXPECTED_PRIVATE_IPV6],
            "{name}"
        );
    }
    let world = h.world().await;
    for name in [API, API_INT] {
        assert_eq!(
            world.record("private", name),
            vec![EXPECTED_PRIVATE_IP.to_string()],
            "{name}: the bootstrap IP left"
        );
    }
    for name in [API_AAAA, API_INT_AAAA] {
        assert_eq!(
            world.record("private", name),
            vec![EXPECTED_PRIVATE_IPV6.to_string()],
            "{name}"
        );
    }

    h.peers.reset_counts();
    kube.clear_request_log();
    h.run(&["run"]).await;
    assert!(h.calls().is_empty(), "cloud: {:?}", h.calls());
    let kube_mutations = kube_mutations(&kube);
    assert!(kube_mutations.is_empty(), "kube: {kube_mutations:?}");
}

/// The lines of the Service templates that ask for both IP families.
const BOTH_FAMILIES: &str = "  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv4, IPv6]\n";

/// Control for the test above: internal Services that carry the IPv6 annotation but stay
/// single stack get no IPv6 frontend (cloud-provider-azure follows `spec.ipFamilies`), so the
/// gate never sees the IPv6 DNS points at and times out.
#[tokio::test(flavor = "multi_thread")]
async fn dual_stack_internal_services_without_ip_families_fail_the_gate() {
    let mut h = AzureHarness::new("azure-dualstack").await;
    let _kube = h.local_api_failing_fast().await;
    let single_stack = replace_in("internal-lb", BOTH_FAMILIES, "");
    let stderr = h
        .run_into_the_gate_with_templates("azure", single_stack)
        .await;
    assert!(
        stderr.contains(&format!(
            "the load balancer holds {EXPECTED_PRIVATE_IP} but DNS points at the reserved {EXPECTED_PRIVATE_IP}, {EXPECTED_PRIVATE_IPV6}"
        )),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn full_run_reaches_done_and_a_rerun_makes_zero_mutating_calls() {
    let mut h = AzureHarness::new("azure").await;
    let cloud = h.peers.lb_cloud();
    let kube = h.local_api(cloud).await;
    let done = h.done_file();
    h.run(&["run"]).await;
    let check = |status: Value, world: &AzureWorld| {
        assert_eq!(status["run_step"], "done", "{status:#}");
        world.assert_handed_over();
    };
    let status = h.status().await;
    check(status, &h.world().await);
    let internal = apiserver_service(&kube, "internal-lb");
    assert_eq!(
        internal["metadata"]["annotations"]["service.beta.kubernetes.io/azure-load-balancer-ipv4"],
        EXPECTED_PRIVATE_IP
    );
    let external = apiserver_service(&kube, "external-lb");
    assert_eq!(
        external["metadata"]["annotations"]["service.beta.kubernetes.io/azure-load-balancer-ipv4"],
        Value::from(h.world().await.public_ip("IPv4")[0].clone())
    );
    let done: Value = serde_json::from_slice(&std::fs::read(&done).unwrap()).unwrap();
    assert_eq!(done["phase"], "complete");
    assert_eq!(done["gate"]["passed"], true);

    h.peers.reset_counts();
    let run_flags = std::mem::take(&mut h.extra);
    let plan = h.run(&["plan"]).await;
    h.extra = run_flags;
    assert!(
        String::from_utf8_lossy(&plan.stdout).contains("no changes"),
        "{}",
        String::from_utf8_lossy(&plan.stdout)
    );
    kube.clear_request_log();
    h.run(&["run"]).await;
    assert!(h.calls().is_empty(), "cloud: {:?}", h.calls());
    let kube_mutations = kube_mutations(&kube);
    assert!(kube_mutations.is_empty(), "kube: {kube_mutations:?}");
    let status = h.status().await;
    check(status, &h.world().await);
}

#[tokio::test(flavor = "multi_thread")]
async fn run_resumes_after_sigkill_during_reserve() {
    let mut h = AzureHarness::new("azure").await;
    // Run flags without the default one-TTL drain: this test is about resuming, not the drain.
    let cloud = h.peers.lb_cloud();
    let _kube = h.local_api(cloud).await;
    h.kill_at(&["run"], Hold::After(1)).await;
    h.run(&["run"]).await;
    let status = h.status().await;
    assert_eq!(status["run_step"], "done");
    let world = h.world().await;
    assert_eq!(world.public_ips().len(), 1);
    assert_eq!(world.private_ips(), vec![EXPECTED_PRIVATE_IP.to_string()]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_client_secret_fails_without_mutating_and_is_never_echoed() {
    let mut h = AzureHarness::new("azure").await;
    // A copy of the fixture whose creds secret holds a wrong client secret.
    let assets = h.dir.path().join("assets");
    agent::fixtures::copy_dir(&h.assets, &assets);
    h.assets = assets;
    // base64("wrong-secret-XYZZY-0123456") instead of the fixture's secret.
    h.edit_asset(
        "openshift/99_cloud-creds-secret.yaml",
        "Zml4dHVyZS1zZWNyZXQtRE8tTk9ULUxPRw==",
        "d3Jvbmctc2VjcmV0LVhZWlpZLTAxMjM0NTY=",
    );
    h.env.push(("BOOTSTRAP_AGENT_LOG".into(), "trace".into()));
    let (_, stderr) = h.run_exits(&["reserve"], 1).await;
    assert!(
        stderr.contains("AADSTS7000215"),
        "the authority's reason: {stderr}"
    );
    assert!(
        !stderr.contains("wrong-secret-XYZZY"),
        "secret echoed: {stderr}"
    );
    assert!(h.calls().is_empty(), "{:?}", h.calls());
}

/// A Standard load balancer does not fail open: with no backend passing its probe (every
/// node's service proxy down) its frontends forward nothing, so the proof on the wire never
/// passes and `run` stops with the bootstrap IP in DNS (exit 4); once one node's proxy
/// answers, a re-run completes. Each IP is dialled through its own front door (forwarding only
/// while the local API server's controller says the load balancer serves it).
#[tokio::test(flavor = "multi_thread")]
async fn with_no_healthy_backend_the_proof_keeps_the_bootstrap_ip_until_one_answers() {
    let mut h = AzureHarness::new("azure").await;
    let cloud = h.peers.lb_cloud();
    let kube = h.local_api_with_gate(cloud, "5s").await;
    let run_flags = std::mem::take(&mut h.extra);
    h.run(&["reserve"]).await;
    h.extra = run_flags;
    let mut ips = vec![EXPECTED_PRIVATE_IP.to_string()];
    ips.extend(h.world().await.public_ip("IPv4"));
    let mut doors = Vec::new();
    for ip in &ips {
        for port in [6443, 22623] {
            let door = kube.front_door(ip.parse().unwrap(), port).await.unwrap();
            doors.push(format!("{ip}:{port}={door}"));
        }
    }
    // Before `--gate-timeout`, which stays last: per-IP dials win over `*`.
    let at = h.extra.len() - 2;
    h.extra.splice(
        at..at,
        ["--wire-dial-override".to_string(), doors.join(",")],
    );
    for node in ["master-0", "master-1", "master-2"] {
        kube.set_service_proxy(node, false);
    }
    let (_, stderr) = h.run_exits(&["run"], 4).await;
    assert!(
        stderr.contains("proof on the wire did not pass"),
        "{stderr}"
    );
    let world = h.world().await;
    assert!(
        world
            .record("private", API)
            .contains(&BOOTSTRAP_IP.to_string()),
        "the bootstrap IP stays: {:#}",
        world.0
    );
    // api-int holds the bootstrap host's second address in its stead (issue 42).
    let second = world.second_address().expect("the second address");
    assert!(
        world.record("private", API_INT).contains(&second),
        "the second address stays: {:#}",
        world.0
    );
    kube.set_service_proxy("master-1", true);
    h.run(&["run"]).await;
    assert_eq!(h.status().await["run_step"], "done");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_internal_services_on_one_ip_and_port_fail_the_gate() {
    let mut h = AzureHarness::new("azure").await;
    let kube = h.local_api_failing_fast().await;
    // machine-config-server on the API's port: one frontend IP cannot carry both rules.
    let same_port = replace_in(
        "internal-lb-machine-config-server.yaml",
        "port: 22623",
        "port: 6443",
    );
    let stderr = h.run_into_the_gate_with_templates("azure", same_port).await;
    let refused: Vec<Value> = [
        ("openshift-kube-apiserver", "internal-lb"),
        (
            "openshift-machine-config-operator",
            "internal-lb-machine-config-server",
        ),
    ]
    .iter()
    .flat_map(|(ns, name)| kube.service_events(ns, name))
    .filter(|e| e["reason"] == "SyncLoadBalancerFailed")
    .collect();
    assert!(!refused.is_empty(), "{stderr}");
    assert!(
        refused[0]["message"]
            .as_str()
            .unwrap()
            .contains("is trying to consume the port 6443"),
        "{refused:?}"
    );
}

// ---- installer-default network ---------------------------------------------------------------

/// The bootstrap makes exactly the single-stack picture with the single-stack calls (those of
/// the shared suite), and a second one changes nothing.
async fn assert_single_stack_bootstrap(h: &AzureHarness) {
    h.bootstrap().await;
    h.world().await.assert_seeded(false, &[]);
    assert_eq!(h.calls(), sorted(AzurePeers::BOOTSTRAP_CALLS));
    h.assert_bootstrap_converged().await;
}

common::suite::cloud_suite!(installer_network AzurePeers);

// ---- publish Mixed -----------------------------------------------------------------------------

/// apiserver External, ingress Internal: the DNS manifest has no publicZone, yet the public IP
/// is reserved and `api` written into the base-domain zone of baseDomainResourceGroupName.
#[tokio::test(flavor = "multi_thread")]
async fn mixed_with_a_public_api_reserves_the_public_ip_and_writes_the_base_domain_record() {
    let h = AzurePeers::start_on_installer_network("azure-mixed-api-external").await;
    assert_single_stack_bootstrap(&h).await;
}

/// apiserver Internal, ingress External: the DNS manifest has a publicZone (for ingress), but
/// no public IP is reserved and no public `api` record written.
#[tokio::test(flavor = "multi_thread")]
async fn mixed_with_an_internal_api_reserves_no_public_ip_and_writes_no_public_record() {
    let h = AzurePeers::start_on_installer_network("azure-mixed-api-internal").await;
    h.bootstrap().await;
    assert_eq!(
        h.calls(),
        sorted(&[TAGS, TAGS, BOOTSTRAP_NIC_PUT, PRIVATE_API, PRIVATE_API_INT])
    );
    let world = h.world().await;
    assert!(world.ours().is_empty(), "no public IP: {:#}", world.0);
    assert!(world.record("public", API).is_empty(), "{:#}", world.0);
    assert_eq!(world.private_ips(), vec![EXPECTED_PRIVATE_IP.to_string()]);
    let second = world.assert_second_address();
    assert_eq!(
        world.record("private", API),
        sorted(&[EXPECTED_PRIVATE_IP, BOOTSTRAP_IP, &second]),
        "private api"
    );
    assert_eq!(
        world.record("private", API_INT),
        sorted(&[EXPECTED_PRIVATE_IP, &second]),
        "private api-int: the second address in the bootstrap IP's stead (issue 42)"
    );
    h.assert_bootstrap_converged().await;
}

// ---- faults: throttling (429 + Retry-After) ---------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn arm_throttling_is_waited_out_as_retry_after_says() {
    let h = AzureHarness::new("azure").await;
    h.peers.inject_faults(&Faults::next(1, Fault::Throttle));
    let out = h
        .command(&["reserve"])
        .env("BOOTSTRAP_AGENT_LOG", "bootstrap_cloud=debug")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(h.peers.fault_stats().throttled, 1);
    // The fake's 429 says Retry-After: 1; our own first backoff would be under 0.4 s.
    let retry = stderr
        .lines()
        .find(|l| l.contains("retrying the call"))
        .unwrap_or_else(|| panic!("no retry logged: {stderr}"));
    let delay = retry
        .split_whitespace()
        .find_map(|w| w.strip_prefix("delay="))
        .unwrap();
    // Duration's Debug: "1.05s" or "400ms".
    let delay = match delay.strip_suffix("ms") {
        Some(ms) => Duration::from_secs_f64(ms.parse::<f64>().unwrap() / 1000.0),
        None => Duration::from_secs_f64(delay.strip_suffix('s').unwrap().parse().unwrap()),
    };
    assert!(
        delay >= Duration::from_secs(1) && delay <= Duration::from_millis(1100),
        "waited as Retry-After said: {retry}"
    );
    let world = h.world().await;
    assert_eq!(world.ours().len(), 1, "{:#}", world.0);
    assert_eq!(world.private_ips(), vec![EXPECTED_PRIVATE_IP.to_string()]);
}

// ---- UPI, by hand: the docs/upi.md runbook, played by the user ---------------------------------------

const USER_PUBLIC_IP: &str = "mycluster-7xk2p-rsvd-public-ipv4";
const USER_PRIVATE_IP: &str = "10.0.1.200";

/// What names the calls on public IPs and on the resource group's tags (where the agent
/// records its own private IP).
const ADDRESS_CALLS: &[&str] = &["publicIPAddresses", "tags/default"];

/// `--reservations` naming the private IP the user chose (Azure has no private-IP resource).
fn reservations_file(h: &AzureHarness, ip: &str) -> String {
    let path = h.dir.path().join("reservations.yaml");
    std::fs::write(&path, format!("private-ipv4: {{ip: {ip}}}\n")).unwrap();
    path.display().to_string()
}

/// The Azure fake on the main fixture and the local API server that knows it: (harness, API
/// server, kubeconfig path), for the by-hand commands.
async fn by_hand_world() -> (AzureHarness, bootstrap_sim::kube::KubeSim, String) {
    let mut h = AzureHarness::new("azure").await;
    let cloud = h.peers.lb_cloud();
    let kube = h.local_api(cloud).await;
    let kubeconfig = kube.kubeconfig_path().display().to_string();
    (h, kube, kubeconfig)
}

/// A Standard static public IP the user made in `rg` with the official client: its address.
async fn user_public_ip(h: &AzureHarness, rg: &str, name: &str) -> String {
    let public = bootstrap_sim::upi::azure_public_ip(
        &h.peers.sim,
        rg,
        name,
        bootstrap_sim::azure::LOCATION,
        "Standard",
        "Static",
    )
    .await
    .unwrap();
    public["ip"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn upi_by_hand_adopts_the_users_public_ip_and_private_ip_and_teardown_all_leaves_them() {
    let (mut h, kube, kubeconfig) = by_hand_world().await;
    // 1. The user makes the public IP by the seed's name with the official client, and picks
    //    a free private IP of the compute subnet.
    let public_ip = user_public_ip(&h, bootstrap_sim::azure::CLUSTER_RG, USER_PUBLIC_IP).await;
    let file = reservations_file(&h, USER_PRIVATE_IP);
    h.extra = vec!["--reservations".into(), file];
    h.peers.reset_counts();

    // 2. `plan` shows both adopted and reserves no address: only the bootstrap NIC's second
    // IP configuration (the user's addresses are the load balancers').
    h.assert_plan_adopts_both_and_reserves_only_the_second_address()
        .await;

    // 3. The by-hand commands.
    h.run(&["reserve"]).await;
    h.run(&["dns", "seed"]).await;
    let rendered = String::from_utf8(h.run(&["render"]).await.stdout).unwrap();
    assert!(
        rendered.contains(&public_ip) && rendered.contains(USER_PRIVATE_IP),
        "{rendered}"
    );
    h.run(&["apply", "--kubeconfig", &kubeconfig]).await;
    h.run(&["wait", "--kubeconfig", &kubeconfig, "--gate-timeout", "60s"])
        .await;
    h.run(&["dns", "teardown"]).await;

    let internal = apiserver_service(&kube, "internal-lb");
    assert_eq!(
        internal["status"]["loadBalancer"]["ingress"][0]["ip"],
        USER_PRIVATE_IP
    );
    let external = apiserver_service(&kube, "external-lb");
    assert_eq!(
        external["status"]["loadBalancer"]["ingress"][0]["ip"],
        public_ip.as_str()
    );
    let world = h.world().await;
    for name in [API, API_INT] {
        assert_eq!(
            world.record("private", name),
            vec![USER_PRIVATE_IP.to_string()]
        );
    }
    assert_eq!(world.record("public", API), vec![public_ip.clone()]);
    assert_eq!(
        world.bootstrap_ipconfigs().len(),
        1,
        "the second address left the bootstrap NIC with stage 3: {:#}",
        world.0
    );
    // No public IP, tag or private-IP record of the agent's own.
    assert!(world.ours().is_empty(), "{:#}", world.0);
    assert!(world.private_ips().is_empty(), "{:#}", world.0);
    h.assert_no_mutating_call_naming(ADDRESS_CALLS);

    // 4. `status` shows both adopted; `teardown --all` leaves both, and says so.
    h.assert_user_reservations_adopted_and_left(2).await;
    let world = h.world().await;
    assert!(
        world
            .public_ips()
            .iter()
            .any(|p| p["name"] == USER_PUBLIC_IP),
        "{:#}",
        world.0
    );
    h.assert_no_mutating_call_naming(ADDRESS_CALLS);
}

/// The user's public IP lives in another resource group: cloud-provider-azure finds it only
/// in the group `azure-load-balancer-resource-group` names (else it looks in the cluster's:
/// "cannot find public IP with IP address ... in resource group ..."). The agent renders the
/// annotation, and the local controller, which looks where the real one looks, serves it.
#[tokio::test(flavor = "multi_thread")]
async fn upi_public_ip_of_another_resource_group_is_named_on_the_external_service() {
    const SHARED_RG: &str = "shared-ips-rg";
    let (mut h, kube, kubeconfig) = by_hand_world().await;
    h.peers.sim.create_cluster_resource_group(SHARED_RG, None);
    let public_ip = user_public_ip(&h, SHARED_RG, "shared-api-ip").await;
    let id = format!(
        "/subscriptions/{}/resourceGroups/{SHARED_RG}/providers/Microsoft.Network/publicIPAddresses/shared-api-ip",
        bootstrap_sim::azure::SUBSCRIPTION
    );
    let path = h.dir.path().join("reservations.yaml");
    std::fs::write(
        &path,
        format!("public-ipv4: {{id: {id}}}\nprivate-ipv4: {{ip: {USER_PRIVATE_IP}}}\n"),
    )
    .unwrap();
    h.extra = vec!["--reservations".into(), path.display().to_string()];

    let rendered = String::from_utf8(h.run(&["render"]).await.stdout).unwrap();
    assert!(
        rendered.contains(&format!(
            "service.beta.kubernetes.io/azure-load-balancer-resource-group: {SHARED_RG}"
        )),
        "{rendered}"
    );
    // The runbook's: the bootstrap host's second address, then DNS.
    h.run(&["reserve"]).await;
    h.run(&["dns", "seed"]).await;
    h.run(&["apply", "--kubeconfig", &kubeconfig]).await;
    h.run(&["wait", "--kubeconfig", &kubeconfig, "--gate-timeout", "60s"])
        .await;
    let external = apiserver_service(&kube, "external-lb");
    assert_eq!(
        external["status"]["loadBalancer"]["ingress"][0]["ip"],
        public_ip.as_str()
    );
}

/// Public IPs that exist by the seed's name but cannot serve, and private IPs that are taken,
/// recorded by another cluster or outside the compute subnet: exit 2 naming them, nothing
/// changed.
#[tokio::test(flavor = "multi_thread")]
async fn upi_reservations_that_do_not_fit_are_refused_naming_them() {
    for (location, sku, allocation, expected) in [
        (
            "westeurope",
            "Standard",
            "Static",
            "is in region westeurope",
        ),
        (
            bootstrap_sim::azure::LOCATION,
            "Basic",
            "Static",
            "has SKU Basic",
        ),
        (
            bootstrap_sim::azure::LOCATION,
            "Basic",
            "Dynamic",
            "has SKU Basic",
        ),
    ] {
        let h = AzureHarness::new("azure").await;
        bootstrap_sim::upi::azure_public_ip(
            &h.peers.sim,
            bootstrap_sim::azure::CLUSTER_RG,
            USER_PUBLIC_IP,
            location,
            sku,
            allocation,
        )
        .await
        .unwrap();
        for err in h.plan_and_reserve_refusals().await {
            assert!(
                err.contains(USER_PUBLIC_IP) && err.contains(expected),
                "{err}"
            );
        }
        h.assert_no_mutating_call_naming(ADDRESS_CALLS);
    }
    let mut h = AzureHarness::new("azure").await;
    h.peers.sim.mark_in_use("10.0.1.201".parse().unwrap());
    // Another cluster of the vnet recorded .202; no load balancer holds it yet.
    h.peers
        .sim
        .set_resource_group_tag("other-rg", "other-x1y2z-rsvd-private-ipv4", "10.0.1.202");
    for (ip, expected) in [
        ("10.0.1.201", "is not free in the compute subnet"),
        ("10.0.9.9", "is outside the compute subnet"),
        (
            "10.0.1.202",
            "is recorded by another cluster (tag other-x1y2z-rsvd-private-ipv4 on resource group other-rg)",
        ),
    ] {
        h.extra = vec!["--reservations".into(), reservations_file(&h, ip)];
        let out = h.command(&["reserve"]).output().await.unwrap();
        assert_eq!(out.status.code(), Some(2), "{ip}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("private IP {ip}")) && err.contains(expected),
            "{err}"
        );
    }
    h.assert_no_mutating_call_naming(ADDRESS_CALLS);
}
