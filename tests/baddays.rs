//! A bad day, small (the CI size of `bootstrap-sim soak` and `bootstrap-sim faults`, the same
//! code), one bench per cloud: cycles in a row under the cloud's published limits on one state
//! dir leave nothing behind, with the agent's peak resident set flat, the state dir bounded,
//! and a short long gate flat in memory and requests per minute; then, on the same bench and
//! the same state dir, install/teardown cycles through every kind of fault at 40% end clean
//! (no leak, no duplicate, nothing of another cluster or writer touched), the first on the
//! state dir of the soak's installs and the second on a new one for the same cluster. The
//! soak's first cycle, fault-free, is the faults' reference (the shape of the world after each
//! stage): `bootstrap-sim faults` runs one of its own. `BADDAYS_CYCLES=n` runs n fault cycles
//! (default 1) and n + 1 soak cycles, `BADDAYS_LONG_GATE=30m` a longer long gate (default
//! 16s), and `BADDAYS_REPORT=DIR` writes each report as `DIR/<faults|soak>-<cloud>.json` (the
//! JSON `bootstrap-sim` prints).
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

/// The soak, then the faulted cycles on the same bench against the soak's first cycle.
async fn a_bad_day(cloud: &str) {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let work = tempfile::tempdir().unwrap();
    let bench = Bench::start(cloud, agent(), &work.path().join("bad-day"))
        .await
        .unwrap_or_else(|e| panic!("{cloud}: {e:#}"));
    let reference = soak_stays_flat(&bench, cloud).await;
    faults_end_clean(&bench, cloud, reference).await;
}

async fn soak_stays_flat(bench: &Bench, cloud: &str) -> faults::Reference {
    let opts = soak::Options {
        cloud: cloud.into(),
        cycles: cycles() + 1,
        long_gate: Some(long_gate()),
        agent: agent(),
        work: bench.work.clone(),
    };
    let report = soak::run_on(bench, &opts, true)
        .await
        .unwrap_or_else(|e| panic!("{cloud}: {e:#}"));
    keep("soak", cloud, &report.json);
    eprintln!(
        "{cloud} soak: {} long gate {}",
        report.json["last_over_first"], report.json["long_gate"]
    );
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
    assert_eq!(
        report.long_gate_ok,
        Some(true),
        "{:#}",
        report.json["long_gate"]
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_a_bad_day_soak_then_faults_at_40_percent_ends_clean_and_flat() {
    a_bad_day("aws").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcp_a_bad_day_soak_then_faults_at_40_percent_ends_clean_and_flat() {
    a_bad_day("gcp").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_a_bad_day_soak_then_faults_at_40_percent_ends_clean_and_flat() {
    a_bad_day("azure").await;
}
