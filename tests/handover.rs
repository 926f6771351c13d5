//! The hand-over as API clients see it (`bootstrap_sim::handover`): a client population
//! through a whole `run` on each cloud's local peers, the bootstrap host destroyed at the
//! agent's `complete` signal. With progressive DNS no request fails, for any client policy,
//! in any stage; the seed's all-at-once seeding fails clients before the gate (the contrast
//! that shows the measurement can see a failure).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::handover::openshift::{NodeDesign, WatcherHost};
use bootstrap_sim::handover::{self, Options, Report, clients::Policy};
use std::path::PathBuf;
use std::time::Duration;

/// A short TTL keeps the test short; the figures in docs/design.md use the default 30 s.
const TTL: Duration = Duration::from_secs(5);

fn options(cloud: &str, seeding: &str, work: &tempfile::TempDir) -> Options {
    let mut opts = Options::new(
        cloud,
        PathBuf::from(env!("CARGO_BIN_EXE_bootstrap-agent")),
        work.path().join("world"),
    );
    opts.dns_seeding = seeding.into();
    opts.ttl = TTL;
    opts.linger = TTL + Duration::from_secs(3);
    opts
}

async fn simulate(cloud: &str, seeding: &str) -> Report {
    simulate_with(cloud, seeding, false).await
}

/// [`simulate`]; `scope_round_trip`: then `publish --scope Internal` and `External`.
async fn simulate_with(cloud: &str, seeding: &str, scope_round_trip: bool) -> Report {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let work = tempfile::tempdir().unwrap();
    let mut opts = options(cloud, seeding, &work);
    opts.scope_round_trip = scope_round_trip;
    handover::run(opts)
        .await
        .unwrap_or_else(|e| panic!("{cloud} {seeding}: {e:#}"))
}

fn no_client_fails(report: &Report) {
    let text = report.to_text();
    for row in &report.rows {
        assert_eq!(row.failures, 0, "{text}");
        if row.stage != 2 {
            assert!(
                row.requests > 0,
                "stage {} had no requests:\n{text}",
                row.stage
            );
        }
        if row.policy == Policy::EveryAddress {
            assert!(
                row.p99 < report.options.connect_timeout,
                "try-every-address waited on a dead address:\n{text}"
            );
        }
    }
    let t = &report.timeline;
    let (gate, removed, complete) = (
        t.gate_passed.expect("gate"),
        t.removed.expect("removed"),
        t.complete.expect("complete"),
    );
    assert!(
        removed <= gate + Duration::from_secs(2),
        "the bootstrap IP leaves DNS right after the gate:\n{text}"
    );
    assert!(
        complete + Duration::from_millis(500) >= removed + TTL,
        "`complete` only once the TTL has passed:\n{text}"
    );
    assert!(
        complete <= removed + TTL + Duration::from_secs(5),
        "`complete` within TTL + 5 s of the removal:\n{text}"
    );
    // Every load-balancer IP joined DNS before the bootstrap IP left it.
    assert!(!t.joined.is_empty(), "{text}");
    assert!(t.joined.iter().all(|(_, at)| *at <= removed), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn progressive_dns_on_aws_fails_no_client() {
    no_client_fails(&simulate("aws", "progressive").await);
}

/// [`simulate`] with OpenShift's nodes as clients and backends (`--openshift-nodes true`),
/// under the node-side `design`.
async fn simulate_with_nodes(cloud: &str, design: NodeDesign) -> Report {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let work = tempfile::tempdir().unwrap();
    let mut opts = options(cloud, "progressive", &work);
    opts.openshift_nodes = true;
    opts.node_design = design;
    let report = handover::run(opts)
        .await
        .unwrap_or_else(|e| panic!("{cloud} with nodes: {e:#}"));
    println!("{}", report.to_text());
    report
}

fn class(report: &Report, class: &str, stage: u8) -> handover::ClassRow {
    report
        .class_rows
        .iter()
        .find(|r| r.class == class && r.stage == stage)
        .cloned()
        .unwrap_or_else(|| panic!("no row {class} {stage}:\n{}", report.to_text()))
}

/// Every request of `class` in every stage succeeded, and there were some.
fn class_never_fails(report: &Report, class_name: &str) {
    let text = report.to_text();
    let rows: Vec<handover::ClassRow> = (1..=3).map(|s| class(report, class_name, s)).collect();
    assert!(
        rows.iter().map(|r| r.requests).sum::<usize>() > 0,
        "{class_name}:\n{text}"
    );
    for row in rows {
        assert_eq!(row.failures, 0, "{class_name} stage {}:\n{text}", row.stage);
    }
}

/// GCP with OpenShift's nodes and the agent's default (the bootstrap host's two addresses in
/// api-int until the VIP serves), by today's apiserver-watcher (MCO 7ff337a4): it takes both
/// bootstrap addresses for its VIPs at boot and never learns ours, so nothing marks our VIP
/// down and gcp-routes keeps redirecting it to a master whose kube-apiserver restarts (G1,
/// stage 3, where api-int holds the VIP alone). The bootstrap VM's own dial is no proof (G2:
/// the agent asks GCE's health check), and a rebooted worker gets its own connection back
/// when GCE returns a backend's packets (G3).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn progressive_dns_on_gcp_leaves_g1_to_the_watcher_that_never_learns_the_vip() {
    let report = simulate_with_nodes("gcp", NodeDesign::default()).await;
    no_client_fails(&report);
    let text = report.to_text();
    for stage in [1, 2] {
        assert_eq!(
            class(&report, "master-kubelet", stage).failures,
            0,
            "{text}"
        );
    }
    let g1 = class(&report, "master-kubelet", 3);
    assert!(
        g1.failures > 0,
        "G1: the rollout in stage 3 is refused:\n{text}"
    );
    class_never_fails(&report, "master-to-bootstrap");
    class_never_fails(&report, "bootstrap-proof");
    assert!(
        class(&report, "worker-kubelet", 3).failures > 0,
        "G3 (hairpin returns): the rebooted worker's own connection comes back to it:\n{text}"
    );
}

/// GCP with the watcher's health-check URL on the VIP as an IP literal: every master's
/// watcher marks our VIP down while its kube-apiserver restarts, so G1 is gone; G3 is not
/// the watcher's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gcp_masters_keep_the_api_when_their_watcher_watches_the_vip() {
    let design = NodeDesign {
        watcher_host: WatcherHost::Vip,
        ..NodeDesign::default()
    };
    let report = simulate_with_nodes("gcp", design).await;
    no_client_fails(&report);
    for class_name in ["master-kubelet", "master-to-bootstrap", "bootstrap-proof"] {
        class_never_fails(&report, class_name);
    }
}

/// Azure with the agent's default: api-int holds the bootstrap host's second address without
/// the bootstrap IP until the VIP serves. The masters' watcher takes that address for its VIP
/// and azure-routes redirects it to the master itself, but nothing else dials it there: no
/// master loses the bootstrap host (A1 gone); every class is served in every stage.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn progressive_dns_on_azure_keeps_the_masters_bootstrap_connections() {
    let report = simulate_with_nodes("azure", NodeDesign::default()).await;
    no_client_fails(&report);
    for class_name in [
        "master-kubelet",
        "master-to-bootstrap",
        "worker-kubelet",
        "bootstrap-proof",
    ] {
        class_never_fails(&report, class_name);
    }
}

/// Azure with the bootstrap IP in api-int (here the bootstrap IP alone,
/// `--bootstrap-second-address off`; the agent's default before issue 42 held it with the
/// second address): the watcher takes it for a VIP and marks it up once the master's own
/// kube-apiserver is healthy, and azure-routes redirects every connection to it, all ports,
/// to the master itself: the masters lose the bootstrap host (etcd 2379/2380, its apiserver,
/// MCS). A1, the contrast that shows the default's 0 can fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn azure_masters_lose_the_bootstrap_host_when_api_int_holds_the_bootstrap_ip() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let work = tempfile::tempdir().unwrap();
    let mut opts = options("azure", "progressive", &work);
    opts.openshift_nodes = true;
    opts.second_address = Some("off".into());
    let report = handover::run(opts)
        .await
        .unwrap_or_else(|e| panic!("azure off with nodes: {e:#}"));
    let text = report.to_text();
    println!("{text}");
    no_client_fails(&report);
    assert!(
        class(&report, "master-to-bootstrap", 1).failures > 0,
        "A1 in stage 1:\n{text}"
    );
    for class_name in ["master-kubelet", "worker-kubelet", "bootstrap-proof"] {
        class_never_fails(&report, class_name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn all_at_once_seeding_fails_clients_before_the_gate() {
    let report = simulate("aws", "all-at-once").await;
    let text = report.to_text();
    let stage1 = |p: Policy| {
        report
            .rows
            .iter()
            .find(|r| r.policy == p && r.stage == 1)
            .cloned()
            .unwrap()
    };
    // Dead addresses in the answers before the load balancers exist: single-address clients
    // fail, and the try-every-address client waits out connect timeouts.
    assert!(stage1(Policy::FirstAddress).failures > 0, "{text}");
    assert!(stage1(Policy::RandomAddress).failures > 0, "{text}");
    assert!(
        stage1(Policy::EveryAddress).p99 >= report.options.connect_timeout,
        "{text}"
    );
    // After the gate it is as good as progressive.
    assert!(
        report
            .rows
            .iter()
            .filter(|r| r.stage == 3)
            .all(|r| r.failures == 0),
        "{text}"
    );
}

/// After `run`, `publish --scope Internal --auto-delete` then `publish --scope External`, the
/// clients going on throughout (`Options::scope_round_trip`).
async fn simulate_scope_round_trip(cloud: &str) -> Report {
    simulate_with(cloud, "progressive", true).await
}

/// In-VPC clients (the private `api-int`) never fail through the scope change. Public clients
/// never fail before the public record is gone; after, only for want of a record: no client
/// ever calls an address that does not answer (the load balancer serves through the drain,
/// and the record comes back only once it serves), and none fails once it is back. Printed,
/// for the figures in the docs.
fn scope_change_fails_only_public_clients_after_the_record_and_its_ttl(report: &Report) {
    let text = report.to_text();
    println!("{text}");
    let row = |public: bool, window: &str| {
        report
            .scope_rows
            .iter()
            .find(|r| r.public == public && r.window == window)
            .cloned()
            .unwrap_or_else(|| panic!("no row {public} {window}:\n{text}"))
    };
    for window in [
        "to-internal",
        "draining",
        "internal",
        "to-external",
        "external",
    ] {
        let private = row(false, window);
        assert_eq!(private.failures, 0, "in-VPC clients, {window}:\n{text}");
        // `to-internal` ends when the public record is gone: on Azure one PUT, often sooner
        // (0.1 s) than the clients' next request (every 200 ms), so it may hold none.
        assert!(
            private.requests > 0 || window == "to-internal",
            "in-VPC clients, {window}:\n{text}"
        );
        let public = row(true, window);
        assert_eq!(public.unanswered, 0, "public clients, {window}:\n{text}");
    }
    for window in ["to-internal", "external"] {
        let public = row(true, window);
        assert_eq!(public.failures, 0, "public clients, {window}:\n{text}");
        assert!(public.requests > 0, "public clients, {window}:\n{text}");
    }
    assert!(
        row(true, "internal").failures > 0,
        "the public API is gone while private (the measurement sees it):\n{text}"
    );
    let t = &report.timeline;
    let (to_internal, withdrawn, internal_done) = (
        t.to_internal.expect("publish Internal"),
        t.withdrawn.expect("public record gone"),
        t.internal_done.expect("publish Internal done"),
    );
    assert!(
        to_internal <= withdrawn && withdrawn + TTL <= internal_done,
        "the external load balancer goes one TTL after the record at the earliest:\n{text}"
    );
    let (to_external, rejoined, external_done) = (
        t.to_external.expect("publish External"),
        t.rejoined.expect("public record back"),
        t.external_done.expect("publish External done"),
    );
    assert!(
        to_external <= rejoined && rejoined <= external_done + Duration::from_secs(1),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn publish_round_trip_on_aws_fails_no_in_vpc_client() {
    scope_change_fails_only_public_clients_after_the_record_and_its_ttl(
        &simulate_scope_round_trip("aws").await,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn publish_round_trip_on_gcp_fails_no_in_vpc_client() {
    scope_change_fails_only_public_clients_after_the_record_and_its_ttl(
        &simulate_scope_round_trip("gcp").await,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn publish_round_trip_on_azure_fails_no_in_vpc_client() {
    scope_change_fails_only_public_clients_after_the_record_and_its_ttl(
        &simulate_scope_round_trip("azure").await,
    );
}
