//! Subcommands. Each one: load and validate input (nothing written before that succeeds),
//! take the state-dir lock, then run stages through the Runner.

use crate::agent::{self, Runner, StageReport};
use crate::assets::{self, ClusterSpec};
use crate::journal::{self, Journal};
use crate::plan::{Plan, Stage};
use crate::{providers, status};
use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::net::{IpAddr, UdpSocket};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    name = "bootstrap-agent",
    version,
    about = "Reserves the API load-balancer IPs, seeds round-robin DNS and hands the API over to in-cluster LoadBalancer Services"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct StateDir {
    /// Where the journal and its lock live.
    #[arg(
        long,
        env = "BOOTSTRAP_AGENT_STATE_DIR",
        default_value = "/var/lib/bootstrap-agent"
    )]
    pub state_dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct Common {
    /// Installer asset dir (manifests/, openshift/).
    #[arg(long, env = "BOOTSTRAP_AGENT_ASSETS", default_value = "/opt/openshift")]
    pub assets: PathBuf,
    #[command(flatten)]
    pub state: StateDir,
    /// The bootstrap host's private IP (default: recorded in the journal, else detected).
    #[arg(long, env = "BOOTSTRAP_AGENT_BOOTSTRAP_IP")]
    pub bootstrap_ip: Option<IpAddr>,
    /// Deadline for each stage; cloud retries happen inside it.
    #[arg(long, env = "BOOTSTRAP_AGENT_STEP_TIMEOUT", default_value = "10m", value_parser = humantime::parse_duration)]
    pub step_timeout: Duration,
    #[arg(long, value_enum, default_value = "text")]
    pub output: Output,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print every change the agent would make (observes the cloud unless --offline).
    Plan {
        #[command(flatten)]
        common: Common,
        /// Assume nothing exists; make no cloud calls.
        #[arg(long)]
        offline: bool,
        /// Stages to plan, comma separated.
        #[arg(
            long,
            value_enum,
            value_delimiter = ',',
            default_value = "reserve,seed-dns"
        )]
        stage: Vec<Stage>,
    },
    /// Reserve the static IPs for the API load balancers.
    Reserve {
        #[command(flatten)]
        common: Common,
    },
    /// Seed or tear down the round-robin DNS records.
    Dns {
        #[command(subcommand)]
        command: DnsCommand,
    },
    /// Remove the bootstrap entries; with --all (failed install) release everything we own.
    Teardown {
        #[command(flatten)]
        common: Common,
        /// Also remove our reserved IPs from DNS and release every owned reservation.
        #[arg(long)]
        all: bool,
    },
    /// Show steps, reservations, records and the last error from the journal.
    Status {
        #[command(flatten)]
        state: StateDir,
        #[arg(long, value_enum, default_value = "text")]
        output: Output,
    },
}

#[derive(Debug, Subcommand)]
pub enum DnsCommand {
    /// api (public) -> reserved public IPs; api, api-int (private) -> bootstrap IP + reserved private IPs.
    Seed {
        #[command(flatten)]
        common: Common,
    },
    /// Remove only the bootstrap IP from api / api-int.
    Teardown {
        #[command(flatten)]
        common: Common,
    },
}

pub async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Plan {
            common,
            offline,
            stage,
        } => plan(&common, offline, &stage).await,
        Command::Reserve { common } => stages(&common, &[Stage::Reserve]).await,
        Command::Dns {
            command: DnsCommand::Seed { common },
        } => stages(&common, &[Stage::SeedDns]).await,
        Command::Dns {
            command: DnsCommand::Teardown { common },
        } => stages(&common, &[Stage::RemoveBootstrap]).await,
        Command::Teardown { common, all: false } => {
            stages(&common, &[Stage::RemoveBootstrap]).await
        }
        Command::Teardown { common, all: true } => stages(&common, &[Stage::TeardownAll]).await,
        Command::Status { state, output } => status::show(&state.state_dir, output),
    }
}

/// Loads the asset dir and settles the bootstrap IP: flag, else journal, else detected.
fn load_spec(common: &Common) -> Result<ClusterSpec> {
    let mut spec = assets::load(&common.assets)?;
    let recorded = journal::read_state(&common.state.state_dir)
        .ok()
        .flatten()
        .and_then(|s| s.bootstrap_ip);
    spec.bootstrap_ip = common.bootstrap_ip.or(recorded).or_else(detect_host_ip);
    Ok(spec)
}

/// The source address the kernel would use for an outside destination. A UDP `connect` sends
/// no packet; it only asks the routing table.
fn detect_host_ip() -> Option<IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

async fn plan(common: &Common, offline: bool, stages: &[Stage]) -> Result<()> {
    let spec = load_spec(common)?;
    let generation = journal::read_state(&common.state.state_dir)
        .ok()
        .flatten()
        .map_or(1, |s| s.generation);
    let observed = if offline {
        Default::default()
    } else {
        let providers = providers::for_spec(&spec).await?;
        agent::observe(&spec, providers.as_ref()).await?.observed
    };
    let plan = Plan::calculate(&spec, &observed, stages, generation);
    match common.output {
        Output::Text => print!("{}", plan.to_text(&observed)),
        Output::Json => println!("{}", serde_json::to_string_pretty(&plan)?),
    }
    Ok(())
}

async fn stages(common: &Common, stages: &[Stage]) -> Result<()> {
    let spec = load_spec(common)?;
    if stages.contains(&Stage::SeedDns) || stages.contains(&Stage::RemoveBootstrap) {
        agent::require_bootstrap_ip(&spec)?;
    }
    let mut journal = Journal::open(&common.state.state_dir)?;
    journal.bind_cluster(&spec.infra_id)?;
    let providers = providers::for_spec(&spec).await?;
    let mut runner = Runner {
        spec: &spec,
        journal: &mut journal,
        providers: providers.as_ref(),
        stage_timeout: common.step_timeout,
    };
    let mut reports: Vec<StageReport> = Vec::new();
    for stage in stages {
        reports.push(runner.run(*stage).await?);
    }
    match common.output {
        Output::Text => {
            for r in &reports {
                print!("{}", r.plan.to_text(&r.after));
                println!("{}: done, {} mutating change(s)", r.stage, r.mutations);
            }
        }
        Output::Json => println!("{}", serde_json::to_string_pretty(&reports)?),
    }
    Ok(())
}
