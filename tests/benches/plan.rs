//! `cargo bench --bench plan`: how fast the planner answers, in-process and as a cold process.
//! Target: `plan --offline` cold start <= 50 ms (p99). Numbers, not asserts: read them.

use bootstrap_agent::assets;
use bootstrap_agent::plan::{Observed, Plan, Stage};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn report(name: &str, mut samples: Vec<Duration>) {
    let p50 = percentile(&mut samples, 0.50);
    let p99 = percentile(&mut samples, 0.99);
    println!(
        "{name:<40} n={:<5} p50={p50:>10.3?} p99={p99:>10.3?}",
        samples.len()
    );
}

fn main() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets");
    let aws = fixtures.join("aws");

    let samples = (0..2000)
        .map(|_| {
            let start = Instant::now();
            let mut spec = assets::load(&aws).unwrap_or_else(|e| panic!("{e}"));
            spec.bootstrap_ip = Some("10.0.0.5".parse().unwrap_or_else(|e| panic!("{e}")));
            let plan = Plan::calculate(
                &spec,
                &Observed::default(),
                &[Stage::Reserve, Stage::SeedDns],
                1,
            );
            std::hint::black_box(plan.to_text(&Observed::default()));
            start.elapsed()
        })
        .collect();
    report("load assets + plan + render (in-process)", samples);

    let state = std::env::temp_dir().join(format!("bootstrap-agent-bench-{}", std::process::id()));
    let samples = (0..200)
        .map(|_| {
            let start = Instant::now();
            let out = Command::new(env!("CARGO_BIN_EXE_bootstrap-agent"))
                .args([
                    "plan",
                    "--offline",
                    "--bootstrap-ip",
                    "10.0.0.5",
                    "--assets",
                ])
                .arg(&aws)
                .arg("--state-dir")
                .arg(&state)
                .output()
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(out.status.success());
            start.elapsed()
        })
        .collect();
    report("`plan --offline` cold process", samples);
}
