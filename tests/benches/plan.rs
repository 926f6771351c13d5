//! `cargo bench --bench plan`: how fast the planner answers, in-process and as a cold process.
//! Target: `plan --offline` cold start <= 50 ms (p99). Numbers, not asserts: read them.

#[path = "report.rs"]
mod report;

use bootstrap_agent::assets;
use bootstrap_agent::plan::{Observed, Plan, Step};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// This bench's report line: names up to 40 wide.
fn report(name: &str, samples: Vec<Duration>) {
    report::report(name, samples, 40, 5);
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
                &[Step::Reserve, Step::SeedDns],
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
