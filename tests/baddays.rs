//! A bad day, small (the CI size of `bootstrap-sim faults` and `bootstrap-sim soak`, the same
//! code): on each cloud, install/teardown cycles through every kind of fault at 40% end clean
//! (no leak, no duplicate, nothing of another cluster or writer touched); and cycles in a row
//! under the cloud's published rate limits leave nothing behind, with the agent's peak
//! resident set flat. `BADDAYS_CYCLES=n` runs n fault cycles (default 2) and n soak cycles.
#![cfg(all(feature = "aws", feature = "gcp", feature = "azure"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::baddays::{faults, soak};
use std::path::PathBuf;

fn cycles() -> usize {
    std::env::var("BADDAYS_CYCLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2)
}

fn agent() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bootstrap-agent"))
}

async fn faults_end_clean(cloud: &str) {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let work = tempfile::tempdir().unwrap();
    let report = faults::run(faults::Options {
        cloud: cloud.into(),
        p: 0.4,
        cycles: cycles(),
        seed: 4,
        agent: agent(),
        work: work.path().join("faults"),
    })
    .await
    .unwrap_or_else(|e| panic!("{cloud}: {e:#}"));
    eprintln!(
        "{cloud} faults: {}",
        serde_json::json!({"clean": report.clean, "reruns": report.json["reruns"],
                           "requests": report.json["requests"], "faults": report.json["faults"]})
    );
    assert_eq!(report.clean, report.cycles, "{:#}", report.json);
    let injected = report.json["faults"].as_object().unwrap();
    let total: u64 = injected.values().filter_map(|v| v.as_u64()).sum();
    assert!(total > 0, "faults were injected: {injected:?}");
}

async fn soak_stays_flat(cloud: &str) {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let work = tempfile::tempdir().unwrap();
    let report = soak::run(soak::Options {
        cloud: cloud.into(),
        cycles: cycles(),
        agent: agent(),
        work: work.path().join("soak"),
    })
    .await
    .unwrap_or_else(|e| panic!("{cloud}: {e:#}"));
    eprintln!("{cloud} soak: {}", report.json["last_over_first"]);
    assert_eq!(report.clean, report.cycles, "{:#}", report.json);
    // Flat: within 10% (the agent's peak RSS is measured per process; its commands are
    // short-lived, so it can only grow with what a cycle asks of it).
    assert!(
        report.rss_ratio > 0.0 && report.rss_ratio <= 1.10,
        "{:#}",
        report.json
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_fault_cycles_at_40_percent_end_clean() {
    faults_end_clean("aws").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcp_fault_cycles_at_40_percent_end_clean() {
    faults_end_clean("gcp").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_fault_cycles_at_40_percent_end_clean() {
    faults_end_clean("azure").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cycles_under_published_limits_leave_nothing_and_stay_flat() {
    soak_stays_flat("aws").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcp_cycles_under_published_limits_leave_nothing_and_stay_flat() {
    soak_stays_flat("gcp").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_cycles_under_published_limits_leave_nothing_and_stay_flat() {
    soak_stays_flat("azure").await;
}
