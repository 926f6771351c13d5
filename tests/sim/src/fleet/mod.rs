//! `bootstrap-sim fleet aws|gcp|azure --agents N [--shared-record-set]`: N agents at once in
//! ONE account / project / subscription (one moto + one ministack, one GCP fake, one Azure
//! fake), each its own cluster (infra id, bootstrap host, state dir) in the same network,
//! all sharing the zones ([`world`]); with `--shared-record-set` all write one record set.
//! Each cloud's published limits are on ([`crate::limits`]) in front of every API.
//!
//! Each agent runs the install's and teardown's cloud stages as the unit runs them (a
//! command that fails with exit 1 is run again, as the unit restarts it): `reserve`,
//! `dns seed`, `dns teardown`, `teardown --all`. The hand-over (`run` with its gate) is not
//! part of it: the simulated load-balancer controllers serve one cluster per fake. A lone
//! agent (one more cluster of the same world) runs the same stages first, alone, for the
//! reference time; then the N run at once, the limits' meters fresh. After the fleet the
//! world must be what it was before: nothing left ([`crate::baddays::check::missing`]),
//! nothing of the other writer touched.
//!
//! Figures ([`figures`]): failed agents, throttled calls per quota and what they caused
//! (retries inside a step, commands run again, commands failed), calls per agent by kind, each
//! quota's peak use against its limit, and the slowest agent's time over the lone agent's.

pub mod figures;
pub mod world;

use crate::baddays::check;
use crate::peers::Peers;
use anyhow::{Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use world::Cluster;

/// The stages each agent runs, in order.
pub const STAGES: [&[&str]; 4] = [
    &["reserve"],
    &["dns", "seed"],
    &["dns", "teardown"],
    &["teardown", "--all"],
];
/// Runs of one command before the agent counts as failed (the unit would go on restarting).
const MAX_RUNS: usize = 25;
/// One run's limit, past which the agent counts as failed (a GCP `reserve` of 100 agents
/// waited its turn at Cloud DNS for over 600 s).
const RUN_TIMEOUT: Duration = Duration::from_secs(1800);

#[derive(Debug, Clone)]
pub struct Options {
    pub cloud: String,
    pub agents: usize,
    pub shared_record_set: bool,
    pub agent: PathBuf,
    pub work: PathBuf,
}

/// How one agent's stages went.
#[derive(Debug, Clone, Default)]
pub struct AgentRun {
    pub cluster: usize,
    /// Per stage: the exit code of every run (the last 0 when it completed).
    pub exits: Vec<Vec<i32>>,
    pub stage_seconds: Vec<f64>,
    pub seconds: f64,
    /// Retries the agent logged inside its steps (`transient failure, retrying`).
    pub step_retries: usize,
    /// The last failed run's last stderr line.
    pub last_error: Option<String>,
}

impl AgentRun {
    pub fn completed(&self) -> bool {
        self.exits.len() == STAGES.len() && self.exits.iter().all(|e| e.last() == Some(&0))
    }

    /// Commands run again after a failed run.
    pub fn reruns(&self) -> usize {
        self.exits.iter().map(|e| e.len().saturating_sub(1)).sum()
    }
}

/// What the fleet showed.
#[derive(Debug, Clone)]
pub struct Report {
    pub failed_agents: usize,
    /// The slowest agent's time over the lone agent's.
    pub slowest_over_lone: f64,
    /// Every quota's peak within what it allows.
    pub limits_held: bool,
    /// Leaks and touched values of the other writer after the fleet.
    pub world_diff: Vec<String>,
    pub json: Value,
}

/// Runs `cluster`'s stages in order, each until it completes (again after exit 1), stopping
/// at the first stage that does not.
async fn run_agent(
    agent: &Path,
    env: &[(String, String)],
    index: usize,
    cluster: &Cluster,
    logs: &Path,
) -> Result<AgentRun> {
    let started = Instant::now();
    let mut run = AgentRun {
        cluster: index,
        ..Default::default()
    };
    for args in STAGES {
        let stage_started = Instant::now();
        let mut exits = Vec::new();
        while exits.len() < MAX_RUNS {
            let mut cmd = tokio::process::Command::new(agent);
            cmd.args(args)
                .arg("--state-dir")
                .arg(&cluster.state)
                .arg("--assets")
                .arg(&cluster.assets)
                .args(["--bootstrap-ip", &cluster.bootstrap_ip])
                .envs(env.iter().map(|(k, v)| (k, v)))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true);
            let child = cmd.spawn().context("cannot start the agent")?;
            // A run past the limit is killed (kill_on_drop) and counts as this agent failing.
            let Ok(output) = tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output()).await
            else {
                exits.push(-1);
                run.last_error = Some(format!("ran longer than {RUN_TIMEOUT:?}, killed"));
                break;
            };
            let output = output?;
            let code = output.status.code().unwrap_or(-1);
            let stderr = String::from_utf8_lossy(&output.stderr);
            exits.push(code);
            run.step_retries += stderr.matches("transient failure, retrying").count();
            let log = logs.join(format!("{index:03}-{}-{}.log", args.join("-"), exits.len()));
            let _ = std::fs::write(log, stderr.as_bytes());
            if code == 0 {
                break;
            }
            run.last_error = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string);
            if code != 1 {
                break; // 2, 3, 5: the unit does not restart them
            }
        }
        run.stage_seconds
            .push(stage_started.elapsed().as_secs_f64());
        let completed = exits.last() == Some(&0);
        run.exits.push(exits);
        if !completed {
            break;
        }
    }
    run.seconds = started.elapsed().as_secs_f64();
    Ok(run)
}

/// Turns each proxy's service's published limits on, fresh; Cloud DNS's own on GCP's DNS
/// proxy (as `bootstrap-sim soak` has them).
fn limits_on(peers: &Peers) {
    for proxy in peers.proxies() {
        let cloud_dns = matches!(peers, Peers::Gcp(_)) && std::ptr::eq(proxy, peers.dns_proxy());
        let limits = if cloud_dns {
            crate::Limits::cloud_dns()
        } else {
            crate::Limits::of(proxy.service)
        };
        proxy.limit(Some(limits));
        proxy.reset();
    }
}

pub async fn run(opts: Options) -> Result<Report> {
    // One cluster more for the lone agent.
    let most = world::max_clusters(&opts.cloud) - 1;
    if opts.agents == 0 || opts.agents > most {
        anyhow::bail!(
            "--agents: expected 1 to {most} on {}, found {}",
            opts.cloud,
            opts.agents
        );
    }
    let (peers, mut clusters) = world::start(
        &opts.cloud,
        opts.agents + 1,
        opts.shared_record_set,
        &opts.work,
    )
    .await?;
    let lone_cluster = clusters.pop().context("no cluster for the lone agent")?;
    let env = peers.agent_env();
    let logs = opts.work.join("logs");
    std::fs::create_dir_all(&logs)?;
    let before = check::comparable(&peers.inspect().await?);

    // The reference: one agent alone, under the same limits.
    limits_on(&peers);
    let lone = run_agent(&opts.agent, &env, opts.agents, &lone_cluster, &logs).await?;
    if !lone.completed() {
        anyhow::bail!(
            "the lone agent did not complete on {}: {:?}",
            opts.cloud,
            lone.last_error
        );
    }
    let lone_calls = figures::calls_by_kind(&peers, 1);
    let lone_actions = figures::calls_by_action(&peers, 1);

    limits_on(&peers);
    let started = Instant::now();
    let mut fleet = tokio::task::JoinSet::new();
    for (i, cluster) in clusters.into_iter().enumerate() {
        let (agent, env, logs) = (opts.agent.clone(), env.clone(), logs.clone());
        fleet.spawn(async move { run_agent(&agent, &env, i, &cluster, &logs).await });
    }
    let mut runs = Vec::new();
    while let Some(run) = fleet.join_next().await {
        runs.push(run.context("an agent's task panicked")??);
    }
    runs.sort_by_key(|r| r.cluster);
    let makespan = started.elapsed().as_secs_f64();

    let after = check::comparable(&peers.inspect().await?);
    let mut world_diff: Vec<String> = check::missing(&after, &before)
        .into_iter()
        .map(|l| format!("left: {l}"))
        .collect();
    world_diff.extend(
        check::missing(&before, &after)
            .into_iter()
            .map(|l| format!("touched: {l}")),
    );
    let mut report = figures::report(
        &opts, &peers, &lone, lone_calls, &runs, makespan, world_diff,
    );
    report.json["lone_calls_by_action"] = lone_actions;
    Ok(report)
}

/// `bootstrap-sim fleet <cloud> [--agents 100] [--shared-record-set] [--output text|json]`.
pub async fn command(cloud: &str, args: &[&str], agent: PathBuf) -> Result<Report> {
    let cloud = crate::args::cloud_arg(cloud)?.to_string();
    let mut opts = Options {
        work: crate::venv::target_dir().join(format!("fleet-{cloud}")),
        cloud,
        agents: 100,
        shared_record_set: false,
        agent,
    };
    let mut json = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match *flag {
            "--shared-record-set" => opts.shared_record_set = true,
            "--agents" | "--output" => {
                let value = it
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("{flag} needs a value"))?;
                if *flag == "--output" {
                    json = crate::args::output_arg(value)?;
                } else {
                    opts.agents = value.parse().map_err(|_| {
                        anyhow::anyhow!("--agents: expected a number, found {value:?}")
                    })?;
                }
            }
            other => anyhow::bail!("unknown option {other:?}"),
        }
    }
    let report = run(opts).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report.json)?);
    } else {
        println!("{}", figures::summary(&report.json));
    }
    Ok(report)
}
