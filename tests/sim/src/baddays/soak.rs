//! `bootstrap-sim soak aws|gcp|azure --cycles N`: install/teardown cycles in a row on one
//! account, each cloud's published limits on (`crate::limits`), no injected faults. Per cycle
//! (one state dir for all: installs retried on one bootstrap host): its time, the agent's peak resident set
//! over its commands, the state dir's size at the end, the requests it made, and what it left
//! (leaks) or touched of the planted world. The figures that must stay flat: first against
//! last cycle. With `--long-gate LATE`, one more install whose controller is LATE late
//! ([`super::long_gate`]): the agent's memory and requests per minute over its gate. The first
//! cycle is fault-free, so [`run_on`] can keep the shape of the world after each of its stages:
//! the reference a faults run on the same bench compares against ([`super::faults::run_on`]).

use super::{Bench, Hosts, Stage, check, dir_size, long_gate, state_dir};
use anyhow::{Result, bail};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct Options {
    pub cloud: String,
    pub cycles: usize,
    /// How late the controller is in the long gate (None: no long gate).
    pub long_gate: Option<std::time::Duration>,
    pub agent: PathBuf,
    pub work: PathBuf,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub cycles: usize,
    /// Cycles that completed with nothing left and nothing touched.
    pub clean: usize,
    /// Peak RSS of the last cycle over the first's.
    pub rss_ratio: f64,
    /// The state dir's size after the last cycle over after the first.
    pub state_dir_ratio: f64,
    /// The long gate completed with flat memory and requests per minute (None: not run).
    pub long_gate_ok: Option<bool>,
    /// The first cycle as a faults run's reference: its report and the world's shape after
    /// each of its stages (empty unless asked for).
    pub reference: super::faults::Reference,
    pub json: Value,
}

pub async fn run(opts: Options) -> Result<Report> {
    let bench = Bench::start(&opts.cloud, opts.agent.clone(), &opts.work).await?;
    run_on(&bench, &opts, false).await
}

/// The cycles (and the long gate) on `bench`; `reference`: keep the first cycle's shapes.
pub async fn run_on(bench: &Bench, opts: &Options, reference: bool) -> Result<Report> {
    if opts.cycles == 0 {
        bail!("--cycles: at least 1");
    }
    bench.limits_on();
    let mut shapes = Vec::new();
    // What one cycle asks of the cloud, by action: what a quota that binds is spent on.
    let mut first_by_action = std::collections::BTreeMap::<String, usize>::new();
    let mut per_cycle = Vec::new();
    let mut clean = 0;
    for n in 1..=opts.cycles {
        bench.reset_calls();
        let state = state_dir(&bench.work, Hosts::One, n)?;
        let started = Instant::now();
        let (mut rss, mut runs, mut completed) = (0, 0, true);
        for stage in Stage::ALL {
            let run = bench.run_stage(stage, &state, n).await?;
            if reference && n == 1 {
                shapes.push(check::shape(&bench.world().await?));
            }
            rss = rss.max(run.peak_rss_kib);
            runs += run.exits.len();
            if !run.completed() {
                completed = false;
                break;
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        let world = bench.world().await?;
        let leaks = check::missing(&world, &bench.base);
        let touched = check::missing(&bench.base, &world);
        let ok = completed && leaks.is_empty() && touched.is_empty();
        clean += usize::from(ok);
        let calls = bench.calls();
        if n == 1 {
            for call in &calls {
                *first_by_action.entry(call.action.clone()).or_insert(0) += 1;
            }
        }
        let calls = calls.len();
        per_cycle.push(json!({
            "cycle": n,
            "clean": ok,
            "seconds": (seconds * 100.0).round() / 100.0,
            "peak_rss_kib": rss,
            "state_dir_bytes": dir_size(&state),
            "runs": runs,
            "requests": calls,
            "requests_per_minute": (calls as f64 / seconds * 60.0).round(),
            "leaks": leaks,
            "touched": touched,
        }));
    }
    let figure = |i: usize, key: &str| per_cycle[i][key].as_f64().unwrap_or(0.0);
    let last = per_cycle.len() - 1;
    let ratio = |key: &str| {
        let first = figure(0, key);
        if first > 0.0 {
            (figure(last, key) / first * 1000.0).round() / 1000.0
        } else {
            0.0
        }
    };
    let rss_ratio = ratio("peak_rss_kib");
    let state_dir_ratio = ratio("state_dir_bytes");
    let long_gate = match opts.long_gate {
        Some(late) => Some(long_gate_on(bench, late).await?),
        None => None,
    };
    let json = json!({
        "cloud": opts.cloud,
        "cycles": opts.cycles,
        "clean_cycles": clean,
        "last_over_first": {
            "peak_rss": rss_ratio,
            "seconds": ratio("seconds"),
            "state_dir_bytes": state_dir_ratio,
            "requests": ratio("requests"),
        },
        "max_state_dir_bytes": per_cycle.iter().filter_map(|c| c["state_dir_bytes"].as_u64()).max(),
        "long_gate": long_gate.as_ref().map(|(_, json)| json),
        "limits": bench.quota_use(),
        "first_cycle_requests_by_action": first_by_action,
        "per_cycle": per_cycle,
    });
    let first_clean = json["per_cycle"][0]["clean"] == true;
    let reference = super::faults::Reference {
        clean: first_clean && shapes.len() == Stage::ALL.len(),
        json: json["per_cycle"][0].clone(),
        shapes,
    };
    Ok(Report {
        cycles: opts.cycles,
        clean,
        rss_ratio,
        state_dir_ratio,
        long_gate_ok: long_gate.map(|(ok, _)| ok),
        reference,
        json,
    })
}

/// The long gate on `bench`'s state dir (limits on): whether it stayed flat and left nothing
/// behind, and its figures.
pub async fn long_gate_on(bench: &Bench, late: std::time::Duration) -> Result<(bool, Value)> {
    bench.limits_on();
    let state = state_dir(&bench.work, Hosts::One, 0)?;
    let gate = long_gate::run(bench, &state, late).await?;
    let world = bench.world().await?;
    let leaks = check::missing(&world, &bench.base);
    let touched = check::missing(&bench.base, &world);
    let ok = gate.ok && leaks.is_empty() && touched.is_empty();
    let mut json = gate.json;
    json["leaks"] = json!(leaks);
    json["touched"] = json!(touched);
    json["ok"] = json!(ok);
    Ok((ok, json))
}

/// `bootstrap-sim soak <cloud> [--cycles 50] [--long-gate 30m] [--output text|json]`.
pub async fn command(cloud: &str, args: &[&str], agent: PathBuf) -> Result<Report> {
    use super::args::{self, Flag};
    let cloud = crate::args::cloud_arg(cloud)?.to_string();
    let given = args::parse(args, &[Flag::Cycles, Flag::LongGate, Flag::Output])?;
    let report = run(Options {
        work: crate::venv::target_dir().join(format!("soak-{cloud}")),
        cloud,
        cycles: given.cycles.unwrap_or(50),
        long_gate: given.long_gate,
        agent,
    })
    .await?;
    args::print(given.json, &report.json, || {
        format!(
            "{}: {} of {} cycles clean; last/first {}; long gate {}",
            report.json["cloud"].as_str().unwrap_or(""),
            report.clean,
            report.cycles,
            report.json["last_over_first"],
            report.json["long_gate"]
        )
    })?;
    if report.long_gate_ok == Some(false) {
        bail!(
            "the long gate did not stay flat: {}",
            report.json["long_gate"]
        );
    }
    Ok(report)
}
