//! A bad day, small (the CI size of `bootstrap-sim soak` and `bootstrap-sim faults`, the same
//! code). Per cloud, on one bench: cycles in a row under the cloud's published limits on one
//! state dir leave nothing behind, with the agent's peak resident set flat and the state dir
//! bounded; then, on the same bench and state dir, install/teardown cycles through every kind
//! of fault at 40% end clean (no leak, no duplicate, nothing of another cluster or writer
//! touched), the first on the state dir of the soak's installs and the second on a new one for
//! the same cluster. The soak's first cycle, fault-free, is the faults' reference (the shape of
//! the world after each stage; `bootstrap-sim faults` runs one of its own). Beside it, on a
//! bench of its own so that the two wait at once: a short long gate, flat in memory and
//! requests per minute. `BADDAYS_CYCLES=n` runs n fault cycles (default 1) and n + 1 soak
//! cycles, `BADDAYS_LONG_GATE=30m` a longer long gate (default 16s), and `BADDAYS_REPORT=DIR`
//! writes each report as `DIR/<faults|soak|long-gate>-<cloud>.json` (the JSON `bootstrap-sim`
//! prints).
#![cfg(all(feature = "aws", feature = "gcp", feature = "azure"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::baddays::{Bench, faults, soak};
use std::path::PathBuf;
use std::time::Duration;

/// Within this of the first cycle: the agent's peak resident set, and the state dir's size.
const FLAT: f64 = 1.10;

fn cycles() -> usize {
    std::env::var("BADDAYS_CYCLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

fn long_gate() -> Duration {
    std::env::var("BADDAYS_LONG_GATE")
        .ok()
        .and_then(|d| humantime::parse_duration(&d).ok())
        .unwrap_or(Duration::from_secs(16))
}

/// Keeps the whole report where `BADDAYS_REPORT` says (the figures of docs/testing.md).
fn keep(kind: &str, cloud: &str, json: &serde_json::Value) {
    if let Ok(dir) = std::env::var("BADDAYS_REPORT") {
        std::fs::create_dir_all(&dir).unwrap();
        let path = PathBuf::from(dir).join(format!("{kind}-{cloud}.json"));
        std::fs::write(path, serde_json::to_vec_pretty(json).unwrap()).unwrap();
    }
}

fn agent() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bootstrap-agent"))
}

async fn bench(cloud: &str, work: &tempfile::TempDir) -> Bench {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    Bench::start(cloud, agent(), &work.path().join("bad-day"))
        .await
        .unwrap_or_else(|e| panic!("{cloud}: {e:#}"))
}

/// The soak, then the faulted cycles on the same bench against the soak's first cycle.
async fn a_bad_day(cloud: &str) {
    let work = tempfile::tempdir().unwrap();
    let bench = bench(cloud, &work).await;
    let reference = soak_stays_flat(&bench, cloud).await;
    faults_end_clean(&bench, cloud, reference).await;
}

/// One install whose controller is late: the agent's memory and requests per minute stay flat
/// over its gate, and it leaves nothing behind.
async fn long_gate_stays_flat(cloud: &str) {
    let work = tempfile::tempdir().unwrap();
    let bench = bench(cloud, &work).await;
    let (ok, json) = soak::long_gate_on(&bench, long_gate())
        .await
        .unwrap_or_else(|e| panic!("{cloud}: {e:#}"));
    keep("long-gate", cloud, &json);
    eprintln!("{cloud} long gate: {json}");
    assert!(ok, "{json:#}");
    assert_eq!(json["runs"].as_array().map(Vec::len), Some(1), "{json:#}");
}

async fn soak_stays_flat(bench: &Bench, cloud: &str) -> faults::Reference {
    let opts = soak::Options {
        cloud: cloud.into(),
        cycles: cycles() + 1,
        long_gate: None,
        agent: agent(),
        work: bench.work.clone(),
    };
    let report = soak::run_on(bench, &opts, true)
        .await
        .unwrap_or_else(|e| panic!("{cloud}: {e:#}"));
    keep("soak", cloud, &report.json);
    eprintln!("{cloud} soak: {}", report.json["last_over_first"]);
    assert_eq!(report.clean, report.cycles, "{:#}", report.json);
    // Flat: the agent's commands are short-lived, so its peak can only grow with what a cycle
    // asks of it; the journal forgets each install at `teardown --all`.
    assert!(
        report.rss_ratio > 0.0 && report.rss_ratio <= FLAT,
        "peak RSS: {:#}",
        report.json
    );
    assert!(
        report.state_dir_ratio > 0.0 && report.state_dir_ratio <= FLAT,
        "state dir: {:#}",
        report.json
    );
    report.reference
}

async fn faults_end_clean(bench: &Bench, cloud: &str, reference: faults::Reference) {
    let opts = faults::Options {
        cloud: cloud.into(),
        p: 0.4,
        cycles: cycles(),
        seed: 4,
        agent: agent(),
        work: bench.work.clone(),
    };
    let report = faults::run_on(bench, &opts, reference)
        .await
        .unwrap_or_else(|e| panic!("{cloud}: {e:#}"));
    keep("faults", cloud, &report.json);
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

// Named so that the long chains (soak, then faults) sort first and start first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_day_on_aws_soak_then_faults_at_40_percent_end_clean_and_flat() {
    a_bad_day("aws").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_day_on_gcp_soak_then_faults_at_40_percent_end_clean_and_flat() {
    a_bad_day("gcp").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_day_on_azure_soak_then_faults_at_40_percent_end_clean_and_flat() {
    a_bad_day("azure").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_gate_on_aws_stays_flat_in_memory_and_requests() {
    long_gate_stays_flat("aws").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_gate_on_gcp_stays_flat_in_memory_and_requests() {
    long_gate_stays_flat("gcp").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_gate_on_azure_stays_flat_in_memory_and_requests() {
    long_gate_stays_flat("azure").await;
}
