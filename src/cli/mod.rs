//! The command line: argument types and one thin handler per command. Every handler starts
//! from the command context (`context`: spec, bootstrap IP, lock, journal, providers), then
//! hands over to the module that does the work and prints through `output`.

pub use crate::capabilities::cli::{CapabilitiesCommand, RegistryArgs, SelectionArgs};
use crate::context::Context;
pub use crate::context::{Common, StateDir};
pub use crate::daemon::{GateArgs, KubeArgs, RunArgs};
use crate::dns_answers::{DnsWaitArgs, Pace};
use crate::gather::GatherArgs;
use crate::options;
pub use crate::output::Output;
use crate::plan::Step;
use crate::runner::StepReport;
use crate::{output, status};
use anyhow::Result;

mod dns;
mod inputs;
mod plan;
mod services;
use clap::{Parser, Subcommand};
pub use dns::DnsCommand;

#[derive(Debug, Parser)]
#[command(
    name = "bootstrap-agent",
    version,
    about = "Reserves the API load-balancer IPs, seeds round-robin DNS and hands the API over to in-cluster LoadBalancer Services"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Malformed option values (`Cli::parse_checked`), for the one pass to report with every
    /// other problem.
    #[arg(skip)]
    pub malformed_options: Vec<crate::error::InputError>,
}

/// The whole command line as clap sees it: the one source of `--help`, and of the man pages
/// and shell completions (`cargo run -p xtask -- gen-docs`) and the docs check
/// (`tests/docs.rs`). The same with or without cloud features: none of them changes an
/// argument.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

impl Cli {
    /// Parses the command line and environment; a malformed option value does not stop the
    /// parse but is kept for the one pass (`validate::check`), which refuses the command with
    /// it and every other problem of the input.
    pub fn parse_checked() -> Self {
        let (mut cli, malformed) = options::collecting(<Self as Parser>::parse);
        cli.malformed_options = malformed;
        cli
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The daemon: reserve, seed DNS, set capabilities, apply the Services, gate, remove the bootstrap IP. Resumable.
    Run(RunArgs),
    /// Change the API's publishing scope (External <-> Internal) of a cluster `run` made, from
    /// an admin's machine with only --kubeconfig (the inputs and what `run` left are read from
    /// the cluster; one change at a time under a Lease): journaled and resumable; `--dry-run`
    /// prints every change first. Its state is the condition Progressing (reason
    /// ScopeChanged) in `status` and ConfigMap kube-system/bootstrap-agent.
    Publish(crate::publish::PublishArgs),
    /// Check, before anything is created, whether it can work: credentials, permissions,
    /// quota, subnets, zones, the bootstrap IP and (with a kubeconfig) the cluster. Exit 2 when
    /// a check fails. Reads and dry runs only.
    Preflight(crate::preflight::PreflightCommand),
    /// Capabilities: validate, write to ClusterVersion, filter manifests, updates.
    Capabilities {
        #[command(subcommand)]
        command: CapabilitiesCommand,
    },
    /// Print the LoadBalancer Services for the reserved IPs (for a UPI install by hand).
    Render {
        #[command(flatten)]
        common: Common,
        /// Directory overriding the embedded templates.
        #[arg(long, env = "BOOTSTRAP_AGENT_TEMPLATES")]
        templates: Option<std::path::PathBuf>,
    },
    /// Render and server-side apply the Services.
    Apply {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        kube: KubeArgs,
    },
    /// The readiness gate: wait until every Service has ingress and a ready endpoint.
    Wait {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        kube: KubeArgs,
        #[command(flatten)]
        gate: GateArgs,
    },
    /// Print every change the agent would make (observes the cloud unless --offline).
    Plan {
        #[command(flatten)]
        common: Common,
        /// Assume nothing exists; make no cloud calls.
        #[arg(long)]
        offline: bool,
        /// Steps to plan, comma separated.
        /// Default: what is left of `run` per the journal, else all of it.
        #[arg(long, alias = "stage", value_delimiter = ',', value_parser = options::checked(plan::parse_step, Step::Reserve))]
        step: Vec<Step>,
        /// Directory overriding the embedded templates (the Services `run` would apply).
        #[arg(long, env = "BOOTSTRAP_AGENT_TEMPLATES")]
        templates: Option<std::path::PathBuf>,
        /// The cluster, read only: our Services as it holds them, so that the plan shows a
        /// Service `apply-services` must replace (delete, wait, apply) because its load
        /// balancer never changes its addresses (AWS). Without it, every Service is planned
        /// as an apply.
        #[arg(long)]
        kubeconfig: Option<std::path::PathBuf>,
        #[command(flatten)]
        registry: RegistryArgs,
        /// How `run` seeds DNS (as `run --dns-seeding`): planned the way `run` will do it.
        #[arg(
            long,
            env = "BOOTSTRAP_AGENT_DNS_SEEDING",
            default_value = "progressive",
            value_parser = options::one_of(crate::daemon::DnsSeeding::Progressive)
        )]
        dns_seeding: crate::daemon::DnsSeeding,
    },
    /// Reserve the static IPs for the API load balancers.
    Reserve {
        #[command(flatten)]
        common: Common,
    },
    /// Cluster-hosted DNS only: reserve (as `reserve`), then write the IPs into the
    /// Infrastructure manifest's `cloudLoadBalancerConfig.clusterHosted` and the lb-config
    /// ConfigMap, for bootkube to read. Run it before bootkube; with cloud DNS it does nothing.
    PublishLbIps {
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
        /// With --all: the cluster whose Services (ours: rendered by the agent, with its
        /// labels) are deleted first, so their load balancers let go of the reserved
        /// addresses. Without it, an address a load balancer still holds is waited for
        /// (bounded by --step-timeout), as no cloud releases an address in use.
        /// (Ignored without --all; the unit's environment file sets it for every command.)
        #[arg(long, env = "BOOTSTRAP_AGENT_KUBECONFIG")]
        kubeconfig: Option<std::path::PathBuf>,
        /// Directory overriding the embedded templates (the Services that were applied).
        #[arg(long, env = "BOOTSTRAP_AGENT_TEMPLATES")]
        templates: Option<std::path::PathBuf>,
    },
    /// Show steps, reservations, records and the last error from the journal.
    Status {
        #[command(flatten)]
        state: StateDir,
        #[arg(long, default_value = "text", value_parser = options::one_of(Output::Text))]
        output: Output,
        /// Print it again whenever it changes (redrawn in place on a terminal) until `run` is
        /// done; reads the journal without the lock, so it works beside a running daemon.
        #[arg(long)]
        watch: bool,
        /// Day 2, on an admin's machine: without --state-dir, and with no journal in the
        /// bootstrap host's state dir, the day-2 journal of this cluster
        /// ($XDG_STATE_HOME/bootstrap-agent/<infra-id>), else what `run` left in the cluster.
        #[arg(long)]
        kubeconfig: Option<std::path::PathBuf>,
    },
    /// Make a running `run` stop before its next step (it keeps its lock) until `resume`.
    Pause {
        #[command(flatten)]
        state: StateDir,
    },
    /// Let a paused `run` continue.
    Resume {
        #[command(flatten)]
        state: StateDir,
    },
    /// Print the cloud permissions (AWS IAM policy, GCP custom role, Azure role definition)
    /// or the Kubernetes ClusterRole the agent's calls need, per command, scoped by the
    /// assets. The same table preflight asks from.
    Permissions(crate::permissions::PermissionsArgs),
    /// Print manifests for the installer's `openshift/` dir that make the cluster bring what
    /// the agent relies on (the AWS Load Balancer Controller, through OLM).
    Manifests {
        #[command(subcommand)]
        command: crate::manifests::ManifestsCommand,
    },
    /// Write a support bundle (.tar.gz): journal, status, plan, rendered Services, gate report,
    /// the cloud's view of ours and, with a kubeconfig, our Services, slices and Events.
    Gather(GatherArgs),
}

/// Whether `dir` holds a journal (a corrupt one counts: `status` reports it).
fn has_journal(dir: &std::path::Path) -> Result<bool> {
    Ok(dir.join(crate::journal::JOURNAL_FILE).exists())
}

pub async fn run(cli: Cli) -> Result<()> {
    // Every input, all problems at once, before any lock, journal write or network call.
    let inputs = crate::validate::Inputs {
        options: &cli.malformed_options,
        ..inputs::inputs_of(&cli.command)
    };
    crate::validate::check(&inputs).await?;
    match cli.command {
        Command::Plan {
            common,
            offline,
            step,
            templates,
            kubeconfig,
            registry,
            dns_seeding,
        } => {
            let cluster = (templates.as_deref(), kubeconfig.as_deref());
            plan::command(&common, offline, &step, cluster, &registry, dns_seeding).await
        }
        Command::Reserve { common } => steps(&common, &[Step::Reserve], None, None).await,
        Command::PublishLbIps { common } => crate::cluster_hosted::command(&common).await,
        Command::Dns { command } => dns::command(command).await,
        Command::Teardown {
            common, all: false, ..
        } => steps(&common, &[Step::RemoveBootstrap], None, None).await,
        Command::Teardown {
            common,
            all: true,
            kubeconfig,
            templates,
        } => {
            let cluster = kubeconfig.map(|kubeconfig| KubeArgs {
                kubeconfig,
                templates,
            });
            steps(&common, &[Step::TeardownAll], None, cluster.as_ref()).await
        }
        Command::Status {
            state,
            output,
            watch,
            kubeconfig,
        } => {
            let day2 = match kubeconfig {
                Some(k) if state.state_dir.is_none() && !has_journal(state.dir())? => {
                    Some(crate::day2::read_for_status(&k).await?)
                }
                _ => None,
            };
            let (dir, fallback) = match &day2 {
                Some((dir, started)) => (dir.as_path(), Some(started)),
                None => (state.dir(), None),
            };
            if watch {
                let every = std::time::Duration::from_millis(500);
                status::watch(dir, fallback, output, every).await
            } else {
                status::show_from(dir, fallback, output)
            }
        }
        Command::Pause { state } => crate::pause::pause(state.dir()),
        Command::Resume { state } => crate::pause::resume(state.dir()),
        Command::Gather(args) => crate::gather::command(&args).await,
        Command::Permissions(args) => crate::permissions::command(&args),
        Command::Manifests { command } => crate::manifests::command(&command),
        Command::Run(args) => crate::daemon::command(&args).await,
        Command::Publish(args) => crate::publish::command(&args).await,
        Command::Preflight(args) => crate::preflight::command(&args).await,
        Command::Capabilities { command } => crate::capabilities::cli::run(command).await,
        Command::Render { common, templates } => {
            services::render(&common, templates.as_deref()).await
        }
        Command::Apply { common, kube } => services::apply(&common, &kube).await,
        Command::Wait { common, kube, gate } => services::wait(&common, &kube, &gate).await,
    }
}

/// Runs `steps`; with `--dns-wait` (user-managed DNS), after each DNS step waits until the
/// records it printed answer. `cluster`: the cluster the steps may change (`teardown --all`
/// deletes our Services there).
pub(crate) async fn steps(
    common: &Common,
    steps: &[Step],
    wait: Option<&DnsWaitArgs>,
    cluster: Option<&KubeArgs>,
) -> Result<()> {
    let (mut ctx, check) = Context::open_checked(
        common,
        steps,
        |spec| {
            Ok(wait
                .map(|w| w.check(common.assets(), spec))
                .transpose()?
                .flatten())
        },
        |_| Ok(()),
    )
    .await?;
    let client = match cluster {
        Some(c) => Some(crate::cluster::client(&c.kubeconfig).await?),
        None => None,
    };
    let kube = client.as_ref().map(|client| crate::runner::Kubernetes {
        client,
        capabilities: None,
        overrides: None,
        templates: cluster.and_then(|c| c.templates.as_deref()),
        wait: common.step_timeout,
    });
    let mut reports: Vec<StepReport> = Vec::new();
    for step in steps {
        let mut runner = ctx.runner();
        runner.kube = kube.as_ref();
        let report = runner.run(*step).await?;
        if common.output == Output::Text {
            // Before any wait: the records to create are what the user acts on.
            print!("{}", report.plan.to_text(&report.after));
            println!(
                "{}: done, {} mutating change(s)",
                report.step, report.mutations
            );
            std::io::Write::flush(&mut std::io::stdout())?;
        }
        if let Some(check) = check {
            if common.output == Output::Text {
                print!(
                    "{}",
                    crate::dns_answers::records::to_text(&ctx.spec, &ctx.journal.state)
                );
                std::io::Write::flush(&mut std::io::stdout())?;
            }
            let view = crate::dns_answers::wait::view(check, ctx.providers.dns.as_ref());
            crate::dns_answers::wait::until_answered(
                &ctx.spec,
                &ctx.journal.state,
                view.as_ref(),
                report.step,
                ctx.step_timeout,
                Pace::DEFAULT,
                crate::notify::status,
            )
            .await?;
            if common.output == Output::Text {
                println!("{}: your DNS answers the records", report.step);
            }
        }
        reports.push(report);
    }
    match common.output {
        Output::Text => Ok(()),
        other => output::data(other, &reports),
    }
}
