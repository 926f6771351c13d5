//! The long gate of `bootstrap-sim soak --long-gate LATE`: one install whose load-balancer
//! controller is LATE late (no ingress until then), so `run` sits in its gate that long. It
//! runs in real time: the agent's clocks are its own and nothing here speeds them up, so a
//! shorter LATE is the same wait cut short, not a faster one. `run` keeps the agent's own gate
//! deadline (`--gate-timeout`, 30 min by default) and is run again as the unit runs it (after
//! any exit but 0, 2, 3 and 5): a controller as late as that deadline meets the timeout
//! (exit 4) and the restart, and the figures say what each run asked. Sampled every window
//! (LATE / 8, 2 s to 60 s): the agent's resident set (VmRSS) and the requests so far to the
//! cloud (through the proxies) and to the API server. Flat when, over the windows in which the
//! gate waits (from the agent's Services' creation until the controller comes), the second
//! half's largest resident set is within 10% of the first half's and the second half's request
//! rate is at most the first half's plus 10% (and 2 a minute, for a count that moves by one).
//! Then `dns teardown` and `teardown --all`.

use super::{Bench, Stage};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

/// Allowed growth, second half over first, of the resident set and the request rate.
const FLAT: f64 = 1.10;
/// Runs of `run` before the long gate counts as failed (each may wait its whole deadline).
const MAX_RUNS: usize = 4;

/// One sample while `run` waits.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: f64,
    cloud: usize,
    kube: usize,
    rss_kib: u64,
    /// The agent's Services exist: its gate waits from here on.
    gating: bool,
}

/// What the long gate showed.
pub struct LongGate {
    /// `run` completed and both figures stayed flat.
    pub ok: bool,
    pub json: Value,
}

pub async fn run(bench: &Bench, state: &Path, late: Duration) -> Result<LongGate> {
    complete(bench, state, [Stage::Reserve, Stage::DnsSeed]).await?;
    let knobs = bench.kube.knobs();
    bench.kube.set_knobs(crate::kube::ControllerKnobs {
        ingress_delay: late,
        ..knobs.clone()
    });
    bench.reset_calls();
    bench.kube.clear_request_log();
    let waited = wait_out(bench, state, late).await;
    bench.kube.set_knobs(knobs);
    let waited = waited?;
    complete(bench, state, [Stage::DnsTeardown, Stage::TeardownAll]).await?;
    Ok(verdict(late, &waited))
}

/// Runs `stages` in turn as the unit would; an error names the one that did not complete.
async fn complete(bench: &Bench, state: &Path, stages: [Stage; 2]) -> Result<()> {
    for stage in stages {
        let run = bench.run_stage(stage, state, 0).await?;
        if !run.completed() {
            bail!(
                "long gate: {} did not complete: {:?}",
                stage.name(),
                run.last_error
            );
        }
    }
    Ok(())
}

/// One run of `run` in the long gate.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Run {
    exit: i32,
    /// When it exited, from the first run's start.
    ended_at: f64,
    /// Requests it made to the cloud and to the API server.
    cloud: usize,
    kube: usize,
}

/// Every run of `run` and the samples taken over them.
#[derive(Debug, Clone, Default)]
struct Waited {
    runs: Vec<Run>,
    /// The last failed run's stderr.
    stderr: String,
    samples: Vec<Sample>,
    seconds: f64,
}

/// Runs `run` with the agent's own gate deadline until it completes, as the unit would (again
/// after any exit but 2, 3 and 5), sampling every window until the last run exits.
async fn wait_out(bench: &Bench, state: &Path, late: Duration) -> Result<Waited> {
    // The harness's own limit: past the agent's default deadline and the controller's lateness.
    let limit = late * 2 + Duration::from_secs(30 * 60 + 300);
    let window = (late / 8).clamp(Duration::from_secs(2), Duration::from_secs(60));
    let started = Instant::now();
    let mut waited = Waited::default();
    while waited.runs.len() < MAX_RUNS {
        let (cloud_before, kube_before) = (bench.calls().len(), bench.kube.request_log().len());
        let mut child = bench
            .command(Stage::HandOver, state)
            .spawn()
            .context("cannot start the agent")?;
        let pid = child.id().context("the agent exited at once")?;
        let mut stderr_pipe = child.stderr.take().context("no stderr")?;
        let stderr = tokio::spawn(async move {
            let mut text = String::new();
            let _ = stderr_pipe.read_to_string(&mut text).await;
            text
        });
        let status = loop {
            tokio::select! {
                status = child.wait() => break status?,
                () = tokio::time::sleep(window) => {
                    if started.elapsed() > limit {
                        bail!("long gate: run still going {limit:?} after the first started");
                    }
                    waited.samples.push(Sample {
                        at: started.elapsed().as_secs_f64(),
                        cloud: bench.calls().len(),
                        kube: bench.kube.request_log().len(),
                        rss_kib: resident_kib(pid).unwrap_or(0),
                        gating: ours_applied(bench),
                    });
                }
            }
        };
        let exit = status.code().unwrap_or(-1);
        waited.runs.push(Run {
            exit,
            ended_at: started.elapsed().as_secs_f64(),
            cloud: bench.calls().len() - cloud_before,
            kube: bench.kube.request_log().len() - kube_before,
        });
        if exit != 0 {
            waited.stderr = stderr.await.unwrap_or_default();
        }
        if matches!(exit, 0 | 2 | 3 | 5) {
            break;
        }
    }
    waited.seconds = started.elapsed().as_secs_f64();
    Ok(waited)
}

/// Whether the agent applied its Services (labelled managed-by bootstrap-agent).
fn ours_applied(bench: &Bench) -> bool {
    bench
        .kube
        .list("", "v1", "services", None)
        .iter()
        .any(|s| s["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "bootstrap-agent")
}

/// The process's resident set now (VmRSS), in KiB.
fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// PURE: the figures and whether they stayed flat over the samples taken while the gate
/// waited for the late controller.
fn verdict(late: Duration, waited: &Waited) -> LongGate {
    let samples = &waited.samples;
    let code = waited.runs.last().map_or(-1, |r| r.exit);
    // The controller's lateness counts from the Services' creation.
    let gate_from = samples.iter().find(|s| s.gating).map_or(0.0, |s| s.at);
    let waiting: Vec<Sample> = samples
        .iter()
        .copied()
        .filter(|s| s.gating && s.at <= gate_from + late.as_secs_f64() && s.rss_kib > 0)
        .collect();
    // Requests per minute in each window, from one sample to the next.
    let rates: Vec<(f64, f64)> = waiting
        .windows(2)
        .map(|w| {
            let minutes = (w[1].at - w[0].at) / 60.0;
            (
                (w[1].cloud - w[0].cloud) as f64 / minutes,
                (w[1].kube - w[0].kube) as f64 / minutes,
            )
        })
        .collect();
    let halves = |n: usize| n / 2;
    let (rss_first, rss_second) = waiting.split_at(halves(waiting.len()));
    let max_rss = |s: &[Sample]| s.iter().map(|s| s.rss_kib).max().unwrap_or(0);
    let (rate_first, rate_second) = rates.split_at(halves(rates.len()));
    let mean = |r: &[(f64, f64)]| {
        let n = r.len().max(1) as f64;
        r.iter().map(|(c, k)| c + k).sum::<f64>() / n
    };
    let enough = rates.len() >= 2;
    let rss_flat = enough && max_rss(rss_second) as f64 <= max_rss(rss_first) as f64 * FLAT;
    let calls_flat = enough && mean(rate_second) <= mean(rate_first) * FLAT + 2.0;
    let round = |x: f64| (x * 10.0).round() / 10.0;
    let peak = |pick: fn(&(f64, f64)) -> f64| round(rates.iter().map(pick).fold(0.0, f64::max));
    LongGate {
        ok: code == 0 && rss_flat && calls_flat,
        json: json!({
            "late_s": late.as_secs_f64(),
            "run_exit": code,
            "run_s": round(waited.seconds),
            "runs": waited.runs.iter().map(|r| json!({
                "exit": r.exit, "ended_at_s": round(r.ended_at),
                "requests_cloud": r.cloud, "requests_api_server": r.kube,
            })).collect::<Vec<_>>(),
            "last_error": waited.stderr.lines().rev().find(|l| !l.trim().is_empty()),
            "windows": rates.len(),
            "rss_kib": {"first_half_max": max_rss(rss_first), "second_half_max": max_rss(rss_second),
                        "flat": rss_flat},
            "calls_per_minute": {
                "first_half_mean": round(mean(rate_first)),
                "second_half_mean": round(mean(rate_second)),
                "peak_cloud": peak(|r| r.0),
                "peak_api_server": peak(|r| r.1),
                "flat": calls_flat,
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn samples(rss: &[u64], calls: &[usize]) -> Vec<Sample> {
        rss.iter()
            .zip(calls)
            .enumerate()
            .map(|(i, (&rss_kib, &cloud))| Sample {
                at: (i + 1) as f64 * 10.0,
                cloud,
                kube: 0,
                rss_kib,
                gating: true,
            })
            .collect()
    }

    /// `samples` over runs that exited with `exits`, the last failed one saying `stderr`.
    fn waited(samples: Vec<Sample>, exits: &[i32], stderr: &str) -> Waited {
        let runs = exits
            .iter()
            .enumerate()
            .map(|(i, &exit)| Run {
                exit,
                ended_at: 70.0 * (i + 1) as f64,
                cloud: 1,
                kube: 2,
            })
            .collect();
        Waited {
            runs,
            stderr: stderr.into(),
            samples,
            seconds: 70.0,
        }
    }

    #[test]
    fn flat_memory_and_a_steady_request_rate_pass() {
        let s = samples(&[60_000, 61_000, 61_000, 62_000], &[10, 20, 30, 40]);
        let v = verdict(Duration::from_secs(60), &waited(s, &[0], ""));
        assert!(v.ok, "{:#}", v.json);
        assert_eq!(v.json["calls_per_minute"]["peak_cloud"], 60.0);
    }

    #[test]
    fn growing_memory_or_a_growing_rate_or_a_failed_run_fail() {
        let late = Duration::from_secs(60);
        for (rss, calls, figure) in [
            (
                &[60_000, 60_000, 70_000, 80_000][..],
                &[1, 2, 3, 4][..],
                "rss_kib",
            ),
            (&[60_000; 5], &[0, 10, 20, 60, 120], "calls_per_minute"),
        ] {
            let v = verdict(late, &waited(samples(rss, calls), &[0], ""));
            assert!(!v.ok && v.json[figure]["flat"] == false, "{:#}", v.json);
        }
        let flat = || samples(&[60_000; 4], &[1, 2, 3, 4]);
        let failed = verdict(late, &waited(flat(), &[4, 4, 4, 4], "gate timed out\n"));
        assert!(!failed.ok);
        assert_eq!(failed.json["last_error"], "gate timed out");
        let too_few = verdict(late, &waited(samples(&[60_000; 2], &[1, 2]), &[0], ""));
        assert!(!too_few.ok, "one window proves nothing");
        let mut before_the_gate = samples(&[60_000; 5], &[0, 500, 501, 502, 503]);
        before_the_gate[0].gating = false;
        let v = verdict(late, &waited(before_the_gate, &[0], ""));
        assert!(v.ok, "{:#}", v.json);
        assert_eq!(
            v.json["calls_per_minute"]["first_half_mean"], 6.0,
            "the burst before the Services is not the gate's"
        );
    }

    #[test]
    fn a_gate_timeout_the_unit_restarts_from_passes_and_is_reported() {
        let late = Duration::from_secs(60);
        let flat = samples(&[60_000; 4], &[1, 2, 3, 4]);
        let v = verdict(
            late,
            &waited(flat, &[4, 0], "readiness gate timed out after 30m\n"),
        );
        assert!(v.ok, "the restarted run completed: {:#}", v.json);
        assert_eq!(v.json["runs"].as_array().unwrap().len(), 2);
        assert_eq!(v.json["runs"][0]["exit"], 4);
        assert_eq!(v.json["runs"][1]["requests_api_server"], 2);
        assert_eq!(
            v.json["last_error"], "readiness gate timed out after 30m",
            "why the first run gave up"
        );
    }
}
