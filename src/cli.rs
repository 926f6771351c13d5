//! Subcommands. Each one: load and validate input (nothing written before that succeeds),
//! take the state-dir lock, then run stages through the Runner.

use crate::assets::{self, ClusterSpec};
pub use crate::capabilities::cli::{CapabilitiesCommand, RegistryArgs, SelectionArgs};
use crate::journal::{self, Journal};
pub use crate::output::Output;
use crate::plan::{Plan, Stage};
use crate::runner::{self, Runner, StageReport};
use crate::{providers, status};
use anyhow::Result;
use clap::{Args, Parser, Subcommand};
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

#[derive(Debug, Args)]
pub struct KubeArgs {
    /// Kubeconfig of the (bootstrap) API server.
    #[arg(
        long,
        env = "BOOTSTRAP_AGENT_KUBECONFIG",
        default_value = "/opt/openshift/auth/kubeconfig"
    )]
    pub kubeconfig: PathBuf,
    /// Directory overriding the embedded templates (same layout: services/<cloud>/<file>).
    #[arg(long, env = "BOOTSTRAP_AGENT_TEMPLATES")]
    pub templates: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// Overall deadline of the readiness gate.
    #[arg(long, env = "BOOTSTRAP_AGENT_GATE_TIMEOUT", default_value = "30m", value_parser = humantime::parse_duration)]
    pub gate_timeout: Duration,
    /// Written (atomically, JSON) with `"phase": "gate-passed"` when the gate passes, and by
    /// `run` with `"phase": "complete"` once the bootstrap IP left DNS and the drain is over.
    #[arg(long, env = "BOOTSTRAP_AGENT_DONE_FILE")]
    pub done_file: Option<PathBuf>,
    /// `run`: after removing the bootstrap IP from DNS, wait before signalling `complete`, so
    /// cached answers expire while the bootstrap host still serves: `ttl` (the TTL our private
    /// records carry, read back from the zone) or a duration (0s turns the drain off).
    #[arg(long, env = "BOOTSTRAP_AGENT_DRAIN_WAIT", default_value = "ttl", value_parser = crate::daemon::DrainWait::parse)]
    pub drain_wait: crate::daemon::DrainWait,
    /// `run`: before the bootstrap IP leaves DNS (and, progressive, before an IP joins), dial
    /// every load-balancer IP DNS keeps: TLS to 6443 verified with the kubeconfig's CA and
    /// GET /readyz == ok, a TLS handshake on 22623 where it serves the machine-config server.
    /// `off` for networks where the bootstrap host cannot reach the load balancers.
    #[arg(long, env = "BOOTSTRAP_AGENT_WIRE_PROOF", default_value = "on", value_parser = ["on", "off"])]
    pub wire_proof: String,
    /// Dial another address instead, for the proof on the wire: `IP:PORT=HOST:PORT` or
    /// `*:PORT=HOST:PORT` (a NAT between the bootstrap host and the load balancer; tests on
    /// loopback). Only where the connection goes changes, never what is verified. Repeatable.
    #[arg(long = "wire-dial-override", env = "BOOTSTRAP_AGENT_WIRE_DIAL_OVERRIDES", value_delimiter = ',', value_parser = crate::cluster::wire::DialOverride::parse)]
    pub wire_dial_overrides: Vec<crate::cluster::wire::DialOverride>,
}

#[derive(Debug, Args)]
pub struct PreflightArgs {
    /// A preflight check (by name) whose failure does not stop `run`; repeatable.
    #[arg(
        long = "skip-preflight",
        value_name = "NAME",
        env = "BOOTSTRAP_AGENT_SKIP_PREFLIGHT",
        value_delimiter = ','
    )]
    pub skip: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The daemon: reserve, seed DNS, set capabilities, apply the Services, gate, remove the bootstrap IP. Resumable.
    Run {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        kube: KubeArgs,
        #[command(flatten)]
        gate: GateArgs,
        #[command(flatten)]
        registry: RegistryArgs,
        /// progressive: the private records hold the bootstrap IP first, and each reserved IP
        /// joins once its load balancer serves it; all-at-once: as the seed (every IP at once).
        #[arg(
            long,
            value_enum,
            env = "BOOTSTRAP_AGENT_DNS_SEEDING",
            default_value = "progressive"
        )]
        dns_seeding: crate::daemon::DnsSeeding,
        #[command(flatten)]
        preflight: PreflightArgs,
    },
    /// Check, before anything is created, whether it can work: credentials, permissions,
    /// quota, subnets, zones, the bootstrap IP and (with a kubeconfig) the cluster. Exit 2 when
    /// a check fails. Reads and dry runs only.
    Preflight {
        #[command(flatten)]
        common: Common,
        /// Kubeconfig of the cluster (optional: without it the cluster checks are left out).
        #[arg(long, env = "BOOTSTRAP_AGENT_KUBECONFIG")]
        kubeconfig: Option<PathBuf>,
        #[arg(long, env = "BOOTSTRAP_AGENT_TEMPLATES")]
        templates: Option<PathBuf>,
        #[command(flatten)]
        preflight: PreflightArgs,
    },
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
        templates: Option<PathBuf>,
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
        /// Stages to plan, comma separated.
        /// Default: what is left of `run` per the journal, else reserve,seed-dns.
        #[arg(long, value_delimiter = ',', value_parser = parse_stage)]
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
    /// Write a support bundle (.tar.gz): journal, status, plan, rendered Services, gate report,
    /// the cloud's view of ours and, with a kubeconfig, our Services, slices and Events.
    Gather {
        #[command(flatten)]
        common: Common,
        /// Kubeconfig of the cluster (optional: without it the cluster part is left out).
        #[arg(long, env = "BOOTSTRAP_AGENT_KUBECONFIG")]
        kubeconfig: Option<PathBuf>,
        #[arg(long, env = "BOOTSTRAP_AGENT_TEMPLATES")]
        templates: Option<PathBuf>,
        /// Where to write the bundle.
        #[arg(long, default_value = "bootstrap-agent-gather.tar.gz")]
        out: PathBuf,
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
        Command::Pause { state } => crate::pause::pause(&state.state_dir),
        Command::Gather {
            common,
            kubeconfig,
            templates,
            out,
        } => gather(&common, kubeconfig.as_deref(), templates.as_deref(), &out).await,
        Command::Resume { state } => crate::pause::resume(&state.state_dir),
        Command::Run {
            common,
            kube,
            gate,
            registry,
            dns_seeding,
            preflight,
        } => run_daemon(&common, &kube, &gate, &registry, dns_seeding, &preflight).await,
        Command::Preflight {
            common,
            kubeconfig,
            templates,
            preflight,
        } => {
            preflight_command(
                &common,
                kubeconfig.as_deref(),
                templates.as_deref(),
                &preflight,
            )
            .await
        }
        Command::Capabilities { command } => crate::capabilities::cli::run(command).await,
        Command::Render { common, templates } => render(&common, templates.as_deref()).await,
        Command::Apply { common, kube } => apply(&common, &kube).await,
        Command::Wait { common, kube, gate } => wait(&common, &kube, &gate).await,
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
    let mut spec = load_spec(common)?;
    // Subnets found at run time cannot be planned without the cloud: say so rather than print
    // a plan without them.
    if offline && let Some(lookup) = spec.pending_subnets() {
        return Err(lookup.offline_error(&spec.infra_id).into());
    }
    let recorded = journal::read_state(&common.state.state_dir)?.unwrap_or_default();
    let mut observed = if offline {
        crate::plan::Observed::default()
    } else {
        let providers = providers::for_spec(&mut spec).await?;
        runner::observe(&spec, providers.as_ref()).await?.observed
    };
    observed.handed_over = recorded.handed_over.clone();
    let stages = if stages.is_empty() {
        crate::machine::remaining_stages(recorded.run_step)
    } else {
        stages.to_vec()
    };
    let mut plan = Plan::calculate(&spec, &observed, &stages, recorded.generation);
    if let Some(step) = recorded.run_step {
        plan.notes.push(format!(
            "`run` is at step {step:?}; planning {:?}",
            stages.iter().map(|s| s.name()).collect::<Vec<_>>()
        ));
    }
    match common.output {
        Output::Text => print!("{}", plan.to_text(&observed)),
        Output::Json | Output::Yaml => crate::output::data(common.output, &plan)?,
    }
    Ok(())
}

async fn stages(common: &Common, stages: &[Stage]) -> Result<()> {
    let mut spec = load_spec(common)?;
    if stages.contains(&Stage::SeedDns) || stages.contains(&Stage::RemoveBootstrap) {
        runner::require_bootstrap_ip(&spec)?;
    }
    let (mut journal, providers) = open(common, &mut spec).await?;
    if stages.contains(&Stage::SeedDns) {
        refuse_other_bootstrap_ip(&journal, &spec)?;
    }
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
        Output::Json | Output::Yaml => crate::output::data(common.output, &reports)?,
    }
    Ok(())
}

/// A seeded bootstrap IP is ours to remove later: seeding a different one would orphan it.
fn refuse_other_bootstrap_ip(journal: &Journal, spec: &ClusterSpec) -> Result<()> {
    match (journal.state.bootstrap_ip, spec.bootstrap_ip) {
        (Some(seeded), Some(now)) if seeded != now && !journal.state.bootstrap_removed => {
            Err(crate::error::InputError::new(
                "--bootstrap-ip",
                "bootstrap IP",
                format!("{now} differs from {seeded}, which is seeded in DNS (journal); run `dns teardown --bootstrap-ip {seeded}` first"),
            )
            .into())
        }
        _ => Ok(()),
    }
}

/// The locked journal bound to this cluster, and the providers (after the input is valid).
/// The lock comes first, so a second agent stops before any cloud call. The providers then
/// settle the spec (finding AWS subnets only reads, and can still reject the input), and only
/// then is the journal written.
async fn open(
    common: &Common,
    spec: &mut ClusterSpec,
) -> Result<(Journal, Option<providers::Providers>)> {
    let mut journal = Journal::open(&common.state.state_dir)?;
    let providers = providers::for_spec(spec).await?;
    journal.bind_cluster(&spec.infra_id)?;
    Ok((journal, providers))
}

async fn run_daemon(
    common: &Common,
    kube: &KubeArgs,
    gate: &GateArgs,
    registry: &RegistryArgs,
    dns_seeding: crate::daemon::DnsSeeding,
    preflight: &PreflightArgs,
) -> Result<()> {
    let mut spec = load_spec(common)?;
    runner::require_bootstrap_ip(&spec)?;
    let (reg, gates) = registry.load()?;
    let capabilities = crate::capabilities::selection_for_spec(
        &reg,
        &gates,
        &common.assets,
        spec.capabilities.as_ref(),
    )?;
    let cvo_overrides =
        crate::capabilities::cluster_version::overrides_from_assets(&common.assets)?;
    // Fail before any mutation on input that cannot work: kubeconfig, templates, done-file.
    crate::cluster::read_kubeconfig(&kube.kubeconfig)?;
    if let Some(done) = &gate.done_file
        && done.file_name().is_none()
    {
        return Err(
            crate::error::InputError::new(done, "--done-file", "expected a file path").into(),
        );
    }
    // As `open`, with the templates checked once the spec is settled: they render one
    // address per AWS subnet.
    let mut journal = Journal::open(&common.state.state_dir)?;
    let providers = providers::for_spec(&mut spec).await?;
    crate::daemon::validate_templates(&spec, kube.templates.as_deref())?;
    // The proof on the wire verifies the API certificate with the kubeconfig's CA.
    let wire = match gate.wire_proof.as_str() {
        "off" => None,
        _ => Some(
            crate::cluster::wire::WireProof::from_kubeconfig(
                &kube.kubeconfig,
                gate.wire_dial_overrides.clone(),
            )
            .await
            .map_err(|e| {
                crate::error::InputError::new(
                    &kube.kubeconfig,
                    "certificate-authority / server (for --wire-proof)",
                    crate::error::render_chain(&e),
                )
            })?,
        ),
    };
    // Before the journal is bound: a failed check leaves nothing written.
    checklist(
        &crate::preflight::Inputs {
            spec: &spec,
            providers: providers.as_ref(),
            handed_over: &journal.state.handed_over,
            kubeconfig: Some(&kube.kubeconfig),
            templates: kube.templates.as_deref(),
        },
        preflight,
        Output::Text,
        true,
    )
    .await?;
    journal.bind_cluster(&spec.infra_id)?;
    refuse_other_bootstrap_ip(&journal, &spec)?;
    let settings = crate::daemon::RunSettings {
        wire,
        kubeconfig: kube.kubeconfig.clone(),
        templates: kube.templates.clone(),
        stage_timeout: common.step_timeout,
        gate_timeout: gate.gate_timeout,
        done_file: gate.done_file.clone(),
        drain_wait: gate.drain_wait,
        dns_seeding,
        capabilities,
        cvo_overrides,
    };
    let outcome = crate::daemon::run(&spec, &mut journal, providers.as_ref(), &settings).await;
    if let Err(e) = &outcome {
        journal.state.last_error = Some(crate::error::render_chain(e));
        journal.save()?;
        crate::daemon::notify_status(&format!("failed: {}", crate::error::render_chain(e)));
    }
    outcome
}

/// Runs preflight and prints the checklist (`run`: on stderr, where its log goes); a failed
/// check is an error (exit 2).
async fn checklist(
    inputs: &crate::preflight::Inputs<'_>,
    args: &PreflightArgs,
    output: Output,
    to_stderr: bool,
) -> Result<crate::preflight::Report> {
    let mut report = crate::preflight::run(inputs).await;
    report.skip(&args.skip)?;
    match (output, to_stderr) {
        (_, true) => eprint!("{}", report.to_text()),
        (Output::Text, false) => crate::output::write_stdout(&report.to_text())?,
        (Output::Json | Output::Yaml, false) => crate::output::data(output, &report)?,
    }
    let failed: Vec<String> = report.failed().iter().map(|c| c.name.clone()).collect();
    if !failed.is_empty() {
        return Err(crate::preflight::PreflightFailed { names: failed }.into());
    }
    Ok(report)
}

/// `preflight`: reads only (no lock, no journal write).
async fn preflight_command(
    common: &Common,
    kubeconfig: Option<&std::path::Path>,
    templates: Option<&std::path::Path>,
    args: &PreflightArgs,
) -> Result<()> {
    let mut spec = load_spec(common)?;
    let providers = providers::for_spec(&mut spec).await?;
    let handed_over = journal::read_state(&common.state.state_dir)?
        .map(|s| s.handed_over)
        .unwrap_or_default();
    checklist(
        &crate::preflight::Inputs {
            spec: &spec,
            providers: providers.as_ref(),
            handed_over: &handed_over,
            kubeconfig,
            templates,
        },
        args,
        common.output,
        false,
    )
    .await
    .map(|_| ())
}

/// The Services for the reservations that exist (observed, or handed over per the journal).
async fn rendered(
    common: &Common,
    templates: Option<&std::path::Path>,
) -> Result<Vec<crate::render::Rendered>> {
    let mut spec = load_spec(common)?;
    let providers = providers::for_spec(&mut spec).await?;
    Ok(rendered_for(common, &spec, providers.as_ref(), templates)
        .await?
        .0)
}

/// The rendered Services and the reservations they were rendered from.
async fn rendered_for(
    common: &Common,
    spec: &ClusterSpec,
    providers: Option<&providers::Providers>,
    templates: Option<&std::path::Path>,
) -> Result<(
    Vec<crate::render::Rendered>,
    Vec<bootstrap_cloud::Reservation>,
)> {
    let mut observed = runner::observe(spec, providers).await?.observed;
    if let Some(state) = journal::read_state(&common.state.state_dir)? {
        observed.handed_over = state.handed_over;
    }
    let kept = observed.kept();
    let missing: Vec<String> = crate::plan::wanted_reservations(spec)
        .into_iter()
        .filter(|w| !kept.contains_key(&w.key))
        .map(|w| w.key.to_string())
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "reservations missing: {}; run `bootstrap-agent reserve` first",
            missing.join(", ")
        );
    }
    let reservations: Vec<_> = kept.into_values().collect();
    let rendered = crate::render::services(spec, &reservations, templates)?;
    Ok((rendered, reservations))
}

async fn render(common: &Common, templates: Option<&std::path::Path>) -> Result<()> {
    let rendered = rendered(common, templates).await?;
    match common.output {
        Output::Json => crate::output::data(
            common.output,
            &rendered.iter().map(|r| &r.service).collect::<Vec<_>>(),
        )?,
        Output::Text | Output::Yaml => {
            crate::output::write_stdout(&crate::render::to_yaml(&rendered)?)?
        }
    }
    Ok(())
}

async fn apply(common: &Common, kube: &KubeArgs) -> Result<()> {
    let rendered = rendered(common, kube.templates.as_deref()).await?;
    let client = crate::cluster::client(&kube.kubeconfig).await?;
    let applied = crate::cluster::apply::apply_services(&client, &rendered).await?;
    match common.output {
        Output::Text => {
            for a in &applied {
                println!(
                    "{}/{}: {:?} (template {})",
                    a.namespace, a.name, a.outcome, a.template
                );
            }
        }
        Output::Json | Output::Yaml => crate::output::data(common.output, &applied)?,
    }
    Ok(())
}

async fn wait(common: &Common, kube: &KubeArgs, gate: &GateArgs) -> Result<()> {
    // Lock first: the result goes into the journal, and waiting 30 min to learn that another
    // agent holds it would be no use.
    let mut spec = load_spec(common)?;
    let mut journal = Journal::open(&common.state.state_dir)?;
    journal.bind_cluster(&spec.infra_id)?;
    let recorded = journal.state.services.clone();
    // The cloud proves who holds the reserved IPs where the ingress is only a hostname (AWS).
    let providers = providers::for_spec(&mut spec).await?;
    let targets = if recorded.is_empty() {
        let (services, reservations) =
            rendered_for(common, &spec, providers.as_ref(), kube.templates.as_deref()).await?;
        services
            .iter()
            .map(|r| {
                crate::render::ServiceClaim::for_service(
                    &r.service,
                    crate::render::claimed_ips(&r.service, &reservations),
                )
            })
            .collect()
    } else {
        recorded
    };
    let client = crate::cluster::client(&kube.kubeconfig).await?;
    let cloud = providers.as_ref().map(|p| p.addresses.as_ref());
    let report =
        crate::cluster::gate::wait_ready(&client, &targets, cloud, gate.gate_timeout, |services| {
            for s in services {
                eprintln!("{}/{}: {}", s.namespace, s.name, s.reason);
            }
        })
        .await?;
    crate::daemon::record_gate(&client, &mut journal, &report, gate.done_file.as_deref()).await?;
    match common.output {
        Output::Text => println!("gate passed in {} ms", report.elapsed_ms),
        Output::Json | Output::Yaml => crate::output::data(common.output, &report)?,
    }
    Ok(())
}

/// `--stage` values: the stages' kebab-case names.
fn parse_stage(name: &str) -> Result<Stage, String> {
    Stage::parse(name).ok_or_else(|| {
        let names: Vec<String> = Stage::ALL
            .iter()
            .map(|s| {
                serde_json::to_value(s)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            })
            .collect();
        format!("expected one of {}", names.join(", "))
    })
}

/// `gather`: reads only (no lock, no journal write), collects what it can, says what it could not.
async fn gather(
    common: &Common,
    kubeconfig: Option<&std::path::Path>,
    templates: Option<&std::path::Path>,
    out: &std::path::Path,
) -> Result<()> {
    let mut spec = load_spec(common)?;
    let providers = match providers::for_spec(&mut spec).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("gather: no cloud view: {}", crate::error::render_chain(&e));
            None
        }
    };
    let bundle = crate::gather::collect(
        &spec,
        &common.state.state_dir,
        providers.as_ref(),
        kubeconfig,
        templates,
    )
    .await;
    for e in &bundle.errors {
        eprintln!("gather: not collected: {e}");
    }
    let files = bundle.files.len() + 1;
    bundle.write(out)?;
    println!("wrote {} ({files} files)", out.display());
    Ok(())
}
