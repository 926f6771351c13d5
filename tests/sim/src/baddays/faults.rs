//! `bootstrap-sim faults aws|gcp|azure --p 0.4 --cycles N --seed S`: install/teardown cycles
//! (reserve, dns seed, run with its hand-over, dns teardown, teardown --all) through the
//! fault-injecting proxies, every kind of fault at rate p ([`crate::Fault::BAD_DAY`]: the
//! cloud's own throttling and 500 and 503, an answer lost after the peer did the change, a
//! connection reset before it), each failed command run again as the unit would. A fault-free
//! reference cycle first gives the shape of the world after each stage. A cycle is clean when
//! every stage completed, nothing of the planted world was touched, the shape matched the
//! reference after every stage, and `teardown --all` left exactly the planted world. Each
//! second install runs on the state dir of the one before it (after its `teardown --all`),
//! and the next on a new state dir for the same infra id ([`super::Hosts::OnePerTwoCycles`]).
//! [`run_on`] takes the reference from elsewhere: a soak's first cycle on the same bench
//! (fault-free too), whose state dir is the first host's, so cycle 1 continues it.

use super::{Bench, Hosts, Stage, check, state_dir};
use anyhow::Result;
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Options {
    pub cloud: String,
    pub p: f64,
    pub cycles: usize,
    pub seed: u64,
    pub agent: PathBuf,
    pub work: PathBuf,
}

/// What the cycles showed.
#[derive(Debug, Clone)]
pub struct Report {
    pub cycles: usize,
    pub clean: usize,
    pub json: Value,
}

/// A fault-free cycle: whether it was clean, its report, and the shape of the world after
/// each of its stages.
#[derive(Debug, Clone, Default)]
pub struct Reference {
    pub clean: bool,
    pub json: Value,
    pub shapes: Vec<Value>,
}

/// One cycle: every stage, its checks, and the leaks at the end. `shapes`: the reference's
/// shapes per stage (None: this is the reference, record them).
async fn cycle(
    bench: &Bench,
    n: usize,
    faults: Option<&crate::Faults>,
    shapes: &mut Vec<Value>,
) -> Result<(bool, Value)> {
    let state = state_dir(&bench.work, Hosts::OnePerTwoCycles, n)?;
    let recording = shapes.is_empty();
    let mut stages = Vec::new();
    let mut clean = true;
    for (i, stage) in Stage::ALL.into_iter().enumerate() {
        if let Some(f) = faults {
            // Each stage its own verdicts, reproducible from the seed.
            bench.inject(&crate::Faults {
                seed: f.seed.wrapping_add((n * 100 + i * 10) as u64),
                ..f.clone()
            });
        }
        let run = bench.run_stage(stage, &state, n).await?;
        let stats = bench.fault_stats();
        bench.stop_faults();
        let world = bench.world().await?;
        let touched = check::missing(&bench.base, &world);
        let shape = check::shape(&world);
        let shape_diff = if recording {
            shapes.push(shape);
            Vec::new()
        } else {
            check::shape_diff(&shapes[i], &shape)
        };
        clean &= run.completed() && touched.is_empty() && shape_diff.is_empty();
        stages.push(json!({
            "stage": stage.name(),
            "completed": run.completed(),
            "runs": run.exits.len(),
            "exits": run.exits,
            "seconds": round(run.seconds),
            "peak_rss_kib": run.peak_rss_kib,
            "last_error": run.last_error,
            "requests": stats.requests,
            "faults": {
                "throttled": stats.throttled,
                "server_errors": stats.server_errors,
                "unavailable": stats.unavailable,
                "lost_answers": stats.lost_answers,
                "resets": stats.resets,
            },
            "touched": touched,
            "shape_diff": shape_diff,
        }));
        if !run.completed() {
            break;
        }
    }
    let leaks = check::missing(&bench.world().await?, &bench.base);
    clean &= leaks.is_empty();
    Ok((
        clean,
        json!({"cycle": n, "clean": clean, "stages": stages, "leaks": leaks}),
    ))
}

pub async fn run(opts: Options) -> Result<Report> {
    let bench = Bench::start(&opts.cloud, opts.agent.clone(), &opts.work).await?;
    let mut shapes = Vec::new();
    let (clean, json) = cycle(&bench, 0, None, &mut shapes).await?;
    run_on(
        &bench,
        &opts,
        Reference {
            clean,
            json,
            shapes,
        },
    )
    .await
}

/// The faulted cycles on `bench` (its limits off), compared against `reference`.
pub async fn run_on(bench: &Bench, opts: &Options, reference: Reference) -> Result<Report> {
    if !reference.clean || reference.shapes.len() != Stage::ALL.len() {
        anyhow::bail!(
            "the fault-free reference cycle is not clean on {}: {:#}",
            opts.cloud,
            reference.json
        );
    }
    bench.limits_off();
    let mut shapes = reference.shapes;
    let faults = crate::Faults {
        kinds: crate::Fault::BAD_DAY.to_vec(),
        ..crate::Faults::new(opts.p, opts.seed)
    };
    let mut cycles = Vec::new();
    let (mut clean, mut reruns, mut requests) = (0, 0, 0);
    let mut injected = std::collections::BTreeMap::<String, u64>::new();
    for n in 1..=opts.cycles {
        let (ok, report) = cycle(bench, n, Some(&faults), &mut shapes).await?;
        clean += usize::from(ok);
        for stage in report["stages"].as_array().into_iter().flatten() {
            reruns += stage["runs"].as_u64().unwrap_or(1).saturating_sub(1);
            requests += stage["requests"].as_u64().unwrap_or(0);
            for (kind, count) in stage["faults"].as_object().into_iter().flatten() {
                *injected.entry(kind.clone()).or_default() += count.as_u64().unwrap_or(0);
            }
        }
        cycles.push(report);
    }
    let json = json!({
        "cloud": opts.cloud,
        "p": opts.p,
        "seed": opts.seed,
        "cycles": opts.cycles,
        "clean_cycles": clean,
        "reruns": reruns,
        "requests": requests,
        "faults": injected,
        "reference": reference.json,
        "per_cycle": cycles,
    });
    Ok(Report {
        cycles: opts.cycles,
        clean,
        json,
    })
}

fn round(seconds: f64) -> f64 {
    (seconds * 100.0).round() / 100.0
}

/// `bootstrap-sim faults <cloud> [--p 0.4] [--cycles 10] [--seed 4] [--output text|json]`.
pub async fn command(cloud: &str, args: &[&str], agent: PathBuf) -> Result<Report> {
    use super::args::{self, Flag};
    let cloud = crate::args::cloud_arg(cloud)?.to_string();
    let given = args::parse(args, &[Flag::P, Flag::Cycles, Flag::Seed, Flag::Output])?;
    let report = run(Options {
        work: crate::venv::target_dir().join(format!("faults-{cloud}")),
        cloud,
        p: given.p.unwrap_or(0.4),
        cycles: given.cycles.unwrap_or(10),
        seed: given.seed.unwrap_or(4),
        agent,
    })
    .await?;
    args::print(given.json, &report.json, || {
        format!(
            "{}: {} of {} cycles clean at p = {} (seed {}); {} re-runs; faults {}",
            report.json["cloud"].as_str().unwrap_or(""),
            report.clean,
            report.cycles,
            report.json["p"],
            report.json["seed"],
            report.json["reruns"],
            report.json["faults"]
        )
    })?;
    Ok(report)
}
