//! `run` and `wait` as commands: their arguments, every input checked before the first
//! mutation, then the machine (or the gate alone).

use super::{DnsSeeding, DrainWait, RunSettings, record_gate};
use crate::assets::ClusterSpec;
use crate::capabilities::cli::RegistryArgs;
use crate::cluster::{self, gate};
use crate::context::{Common, Context};
use crate::notify;
use crate::options;
use crate::plan::Step;
use crate::render;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

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
    #[arg(long, env = "BOOTSTRAP_AGENT_GATE_TIMEOUT", default_value = "30m", allow_hyphen_values = true,
          value_parser = options::checked(options::deadline, Duration::ZERO))]
    pub gate_timeout: Duration,
    /// Written (atomically, JSON) with `"phase": "gate-passed"` when the gate passes, and by
    /// `run` with `"phase": "complete"` once the bootstrap IP left DNS and the drain is over.
    #[arg(long, env = "BOOTSTRAP_AGENT_DONE_FILE")]
    pub done_file: Option<PathBuf>,
    /// `run`: after removing the bootstrap IP from DNS, wait before signalling `complete`, so
    /// cached answers expire while the bootstrap host still serves: `ttl` (the TTL our private
    /// records carry, read back from the zone) or a duration (0s turns the drain off).
    #[arg(long, env = "BOOTSTRAP_AGENT_DRAIN_WAIT", default_value = "ttl", allow_hyphen_values = true,
          value_parser = options::checked(DrainWait::parse, DrainWait::RecordTtl))]
    pub drain_wait: DrainWait,
}

/// `run`'s arguments.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub kube: KubeArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// progressive: the private records hold the bootstrap IP first, and each reserved IP
    /// joins once its load balancer serves it; all-at-once: as the seed (every IP at once).
    #[arg(
        long,
        env = "BOOTSTRAP_AGENT_DNS_SEEDING",
        default_value = "progressive",
        value_parser = options::one_of(DnsSeeding::Progressive)
    )]
    pub dns_seeding: DnsSeeding,
    #[command(flatten)]
    pub wire: cluster::wire::WireArgs,
    #[command(flatten)]
    pub preflight: crate::preflight::PreflightArgs,
    #[command(flatten)]
    pub dns_wait: crate::dns_answers::wait::DnsWaitArgs,
}

/// `run`: every input checked before the first mutation, then the machine; a failure is
/// journaled and told to systemd.
pub async fn command(args: &RunArgs) -> Result<()> {
    let (common, kube) = (&args.common, &args.kube);
    // The templates are checked once the spec is settled: they render one address per AWS
    // subnet.
    let (mut ctx, (((capabilities, cvo_overrides), dns_wait), wire)) = Context::open_prepared(
        common,
        &[Step::SeedDns, Step::RemoveBootstrap],
        |spec| {
            let checked = check_input(args, spec)?;
            let wait = args.dns_wait.check(common.assets(), spec)?;
            Ok((checked, wait))
        },
        |spec| crate::validate::templates_render(spec, kube.templates.as_deref()),
        async |spec, providers, recorded| {
            let wire = args.wire.proof(&kube.kubeconfig).await?;
            let inputs = crate::preflight::Inputs {
                spec,
                providers,
                handed_over: &recorded.handed_over,
                kubeconfig: Some(&kube.kubeconfig),
                templates: kube.templates.as_deref(),
            };
            crate::preflight::checklist(
                &inputs,
                &args.preflight,
                crate::output::Output::Text,
                true,
            )
            .await?;
            Ok(wire)
        },
    )
    .await?;
    let settings = RunSettings {
        kubeconfig: kube.kubeconfig.clone(),
        templates: kube.templates.clone(),
        step_timeout: common.step_timeout,
        gate_timeout: args.gate.gate_timeout,
        done_file: args.gate.done_file.clone(),
        drain_wait: args.gate.drain_wait,
        dns_seeding: args.dns_seeding,
        dns_wait,
        capabilities,
        cvo_overrides,
        wire,
    };
    let outcome = super::run(&ctx.spec, &mut ctx.journal, &ctx.providers, &settings).await;
    if let Err(e) = &outcome {
        ctx.journal.state.last_error = Some(crate::error::render_chain(e));
        ctx.journal.save()?;
        notify::status(&format!("failed: {}", crate::error::render_chain(e)));
    }
    outcome
}

/// `wait`: the readiness gate on its own, for the Services `run` applied (per the journal), else
/// for those rendered from what the cloud holds; its report is journaled and signalled.
pub async fn wait_for_gate(
    ctx: &mut Context,
    kube: &KubeArgs,
    args: &GateArgs,
) -> Result<gate::GateReport> {
    let targets = if ctx.journal.state.services.is_empty() {
        let observed = ctx.observe().await?;
        let (services, reservations) =
            crate::context::rendered_for(&ctx.spec, &observed, kube.templates.as_deref())?;
        services
            .iter()
            .map(|r| {
                render::ServiceClaim::for_service(
                    &r.service,
                    render::claimed_ips(&r.service, &reservations),
                )
            })
            .collect()
    } else {
        ctx.journal.state.services.clone()
    };
    let client = cluster::client(&kube.kubeconfig).await?;
    // The cloud proves who holds the reserved IPs where the ingress is only a hostname (AWS).
    let cloud = Some(ctx.providers.addresses.as_ref());
    let report = gate::wait_ready(&client, &targets, cloud, args.gate_timeout, |services| {
        for s in services {
            eprintln!("{}/{}: {}", s.namespace, s.name, s.reason);
        }
    })
    .await?;
    record_gate(
        &client,
        &mut ctx.journal,
        &report,
        args.done_file.as_deref(),
    )
    .await?;
    Ok(report)
}

/// Fails before any mutation on input that cannot work: capabilities, kubeconfig, done-file.
fn check_input(
    args: &RunArgs,
    spec: &ClusterSpec,
) -> Result<(
    crate::capabilities::selection::Selection,
    Option<crate::capabilities::cluster_version::CvoOverrides>,
)> {
    let assets = args.common.assets();
    let (reg, gates) = args.registry.load()?;
    let capabilities =
        crate::capabilities::selection_for_spec(&reg, &gates, assets, spec.capabilities.as_ref())?;
    let cvo_overrides = crate::capabilities::cluster_version::overrides_from_assets(assets)?;
    cluster::read_kubeconfig(&args.kube.kubeconfig)?;
    if let Some(done) = &args.gate.done_file
        && done.file_name().is_none()
    {
        return Err(
            crate::error::InputError::new(done, "--done-file", "expected a file path").into(),
        );
    }
    Ok((capabilities, cvo_overrides))
}
