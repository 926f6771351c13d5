//! `run`: the daemon as an explicit state machine (zincati's shape). Each step is idempotent
//! and starts by observing, and the journal records where the machine is, so `kill -9` at any
//! moment followed by `run` continues at the step that was interrupted; `run` after success
//! does nothing.
//!
//! ```text
//! Reserve -> SeedDns -> SetCapabilities -> HandOver -> ApplyServices -> Gate -> RemoveBootstrap -> Done
//! ```
//!
//! SetCapabilities writes ClusterVersion `spec.capabilities` before anything filtered is
//! applied; it sits before HandOver so that the HandOver -> ApplyServices window stays tiny.

use crate::assets::ClusterSpec;
use crate::capabilities::cli::RegistryArgs;
use crate::cluster::{self, apply, gate};
use crate::context::Common;
use crate::journal::Journal;
use crate::machine::{Machine, Step};
use crate::plan::Stage;
use crate::providers::Providers;
use crate::render;
use crate::runner::Runner;
use anyhow::{Context, Result};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
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
    #[arg(long, env = "BOOTSTRAP_AGENT_GATE_TIMEOUT", default_value = "30m", allow_hyphen_values = true, value_parser = crate::validate::options::gate_timeout)]
    pub gate_timeout: Duration,
    /// Written (atomically, JSON) with `"phase": "gate-passed"` when the gate passes, and by
    /// `run` with `"phase": "complete"` once the bootstrap IP left DNS and the drain is over.
    #[arg(long, env = "BOOTSTRAP_AGENT_DONE_FILE")]
    pub done_file: Option<PathBuf>,
    /// `run`: after removing the bootstrap IP from DNS, wait before signalling `complete`, so
    /// cached answers expire while the bootstrap host still serves: `ttl` (the TTL our private
    /// records carry, read back from the zone) or a duration (0s turns the drain off).
    #[arg(long, env = "BOOTSTRAP_AGENT_DRAIN_WAIT", default_value = "ttl", value_parser = DrainWait::parse)]
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
        value_enum,
        env = "BOOTSTRAP_AGENT_DNS_SEEDING",
        default_value = "progressive"
    )]
    pub dns_seeding: DnsSeeding,
    #[command(flatten)]
    pub wire: cluster::wire::WireArgs,
    #[command(flatten)]
    pub preflight: crate::preflight::PreflightArgs,
}

/// `run`: every input checked before the first mutation, then the machine; a failure is
/// journaled and told to systemd.
pub async fn command(args: &RunArgs) -> Result<()> {
    let (common, kube) = (&args.common, &args.kube);
    // The templates are checked once the spec is settled: they render one address per AWS
    // subnet.
    let (mut ctx, ((capabilities, cvo_overrides), wire)) = crate::context::Context::open_prepared(
        common,
        &[Stage::SeedDns, Stage::RemoveBootstrap],
        |spec| check_input(args, spec),
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
        stage_timeout: common.step_timeout,
        gate_timeout: args.gate.gate_timeout,
        done_file: args.gate.done_file.clone(),
        drain_wait: args.gate.drain_wait,
        dns_seeding: args.dns_seeding,
        capabilities,
        cvo_overrides,
        wire,
    };
    let outcome = run(&ctx.spec, &mut ctx.journal, &ctx.providers, &settings).await;
    if let Err(e) = &outcome {
        ctx.journal.state.last_error = Some(crate::error::render_chain(e));
        ctx.journal.save()?;
        notify_status(&format!("failed: {}", crate::error::render_chain(e)));
    }
    outcome
}

/// Everything `run` needs besides the spec and the journal.
pub struct RunSettings {
    pub kubeconfig: PathBuf,
    pub templates: Option<PathBuf>,
    pub stage_timeout: Duration,
    pub gate_timeout: Duration,
    pub done_file: Option<PathBuf>,
    /// After the bootstrap IP left DNS, how long to wait before signalling `complete`.
    pub drain_wait: DrainWait,
    pub dns_seeding: DnsSeeding,
    /// The validated capability selection written to ClusterVersion.
    pub capabilities: crate::capabilities::selection::Selection,
    /// The installer's `manifests/cvo-overrides.yaml`, when present: ClusterVersion is
    /// created from it when it does not exist yet.
    pub cvo_overrides: Option<crate::capabilities::cluster_version::CvoOverrides>,
    /// The proof on the wire before the bootstrap IP leaves DNS (None: `--wire-proof off`).
    pub wire: Option<cluster::wire::WireProof>,
}

/// `wait`: the readiness gate on its own, for the Services `run` applied (per the journal), else
/// for those rendered from what the cloud holds; its report is journaled and signalled.
pub async fn wait_for_gate(
    ctx: &mut crate::context::Context,
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
    let assets = &args.common.assets;
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

/// Tells systemd (when started by it) what is happening; a no-op otherwise.
pub fn notify_status(line: &str) {
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Status(line)]);
}

pub async fn run(
    spec: &ClusterSpec,
    journal: &mut Journal,
    providers: &Providers,
    settings: &RunSettings,
) -> Result<()> {
    let mut machine = Machine::resume(journal.state.run_step);
    let mut client: Option<kube::Client> = None;
    loop {
        let step = machine.step();
        notify_status(step.status_line());
        tracing::info!(?step, "{}", step.status_line());
        journal.state.run_step = Some(step);
        journal.save()?;
        // A person may hold the agent before any step (`bootstrap-agent pause`).
        let state_dir = journal.dir().to_path_buf();
        crate::pause::wait_while_paused(&state_dir, || {
            let line = format!(
                "paused before {}: `bootstrap-agent resume` continues",
                step.name()
            );
            tracing::info!("{line}");
            notify_status(&line);
        })
        .await;
        let mut runner = Runner {
            spec,
            journal,
            providers,
            stage_timeout: settings.stage_timeout,
        };
        match step {
            Step::Reserve => {
                // The runner verifies after reserving (a duplicate from a lost answer is released).
                runner.run(Stage::Reserve).await?;
                machine.reserved()?;
            }
            Step::SeedDns => {
                // Progressive: the reserved IPs join during the gate, as they start to serve.
                // Kept across restarts; switching to all-at-once lets every IP join now.
                runner.journal.state.serving = match settings.dns_seeding {
                    DnsSeeding::Progressive => {
                        Some(runner.journal.state.serving.take().unwrap_or_default())
                    }
                    DnsSeeding::AllAtOnce => None,
                };
                runner.journal.save()?;
                runner.run(Stage::SeedDns).await?;
                machine.dns_seeded()?;
            }
            Step::SetCapabilities => {
                let kube = connect(&mut client, &settings.kubeconfig).await?;
                let request = crate::capabilities::cluster_version::Request {
                    selection: &settings.capabilities,
                    overrides: settings.cvo_overrides.as_ref(),
                    wait: settings.stage_timeout,
                };
                let applied = crate::capabilities::cluster_version::apply(kube, &request, |line| {
                    tracing::info!("{line}");
                    notify_status(&format!("stage 1: {line}"));
                })
                .await?;
                tracing::info!(
                    baseline = %settings.capabilities.baseline,
                    additional = %applied.additional.join(","),
                    kept = %crate::capabilities::list(&applied.kept),
                    mutations = applied.mutations,
                    "ClusterVersion version: spec.capabilities in place (status is the CVO's)"
                );
                machine.capabilities_set()?;
            }
            Step::HandOver => {
                runner.run(Stage::HandOver).await?;
                machine.handed_over()?;
            }
            Step::ApplyServices => {
                let kube = connect(&mut client, &settings.kubeconfig).await?;
                // From the journal, not the cloud: the hand-over window must stay tiny, and the
                // handed-over IPs are only in the journal anyway.
                let known = crate::plan::Observed {
                    reservations: journal.state.reservations.clone(),
                    handed_over: journal.state.handed_over.clone(),
                    adopted: journal.state.adopted.clone(),
                    ..Default::default()
                };
                let reservations: Vec<_> = known.kept().into_values().collect();
                let rendered =
                    render::services(spec, &reservations, settings.templates.as_deref())?;
                let applied = apply::apply_services(kube, &rendered).await?;
                journal.state.services = applied
                    .iter()
                    .filter(|a| {
                        matches!(
                            a.outcome,
                            apply::Outcome::Applied | apply::Outcome::Unchanged
                        )
                    })
                    .filter_map(|a| {
                        rendered.iter().find(|r| {
                            r.service.metadata.namespace.as_deref() == Some(&a.namespace)
                                && r.service.metadata.name.as_deref() == Some(&a.name)
                        })
                    })
                    .map(|r| {
                        render::ServiceClaim::for_service(
                            &r.service,
                            render::claimed_ips(&r.service, &reservations),
                        )
                    })
                    .collect();
                journal.save()?;
                machine.services_applied()?;
            }
            Step::Gate => {
                let kube = connect(&mut client, &settings.kubeconfig).await?;
                let targets = journal.state.services.clone();
                let mut seen: Vec<gate::ServiceGate> = Vec::new();
                let cloud = Some(providers.addresses.as_ref());
                // Resumed after a crash between journaling a join and making it: make it now.
                join_dns(spec, journal, providers, settings, Default::default(), true).await?;
                // Progressive DNS: each IP the gate proves served joins its records at once.
                let (serves, mut served) = tokio::sync::mpsc::unbounded_channel();
                let gate = gate::wait_ready(
                    kube,
                    &targets,
                    cloud,
                    settings.gate_timeout,
                    |services| {
                        for s in services.iter().filter(|s| !seen.contains(s)) {
                            tracing::info!(service = %format!("{}/{}", s.namespace, s.name), reason = %s.reason, "gate");
                        }
                        seen = services.to_vec();
                        let waiting: Vec<String> = services
                            .iter()
                            .filter(|s| !s.ready)
                            .map(|s| format!("{}: {}", s.name, s.reason))
                            .collect();
                        notify_status(&format!("stage 2: waiting for {}", waiting.join(", ")));
                        let _ = serves.send(serving_ips(&targets, services));
                    },
                );
                tokio::pin!(gate);
                let report = loop {
                    tokio::select! {
                        outcome = &mut gate => break outcome?,
                        Some(ips) = served.recv() => {
                            let ips = cluster::wire::joinable(settings.wire.as_ref(), &targets, ips, journal.state.serving.as_ref()).await;
                            join_dns(spec, journal, providers, settings, ips, false).await?;
                        }
                    }
                };
                // The last evaluation may have made the last IPs joinable; and whatever a crash
                // interrupted is made whole before the bootstrap IP may go.
                // The path a client takes must work too, before the bootstrap IP may go.
                cluster::wire::hold_until_proven(
                    settings.wire.as_ref(),
                    &targets,
                    settings.gate_timeout,
                    |line| {
                        tracing::info!("proof on the wire: {line}");
                        notify_status(&format!("stage 2: proof on the wire: {line}"));
                        journal.state.wire_proof = Some(line);
                        let _ = journal.save();
                    },
                )
                .await?;
                let all = serving_ips(&targets, &report.services);
                join_dns(spec, journal, providers, settings, all, true).await?;
                record_gate(kube, journal, &report, settings.done_file.as_deref()).await?;
                machine.gate_passed()?;
            }
            Step::RemoveBootstrap => {
                let report = runner.run(Stage::RemoveBootstrap).await?;
                drain(journal, settings.drain_wait.duration(&report.after)).await?;
                let kube = connect(&mut client, &settings.kubeconfig).await?;
                signal(
                    kube,
                    journal,
                    Phase::Complete,
                    settings.done_file.as_deref(),
                )
                .await?;
                machine.bootstrap_removed()?;
            }
            Step::Done => {
                journal.state.run_step = Some(Step::Done);
                journal.save()?;
                notify_status(Step::Done.status_line());
                // READY only now: units ordered After=bootstrap-agent.service (the installer's
                // completion report) start once the API no longer needs the bootstrap host.
                let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
                return Ok(());
            }
        }
    }
}

async fn connect<'a>(
    client: &'a mut Option<kube::Client>,
    kubeconfig: &Path,
) -> Result<&'a kube::Client> {
    if client.is_none() {
        *client = Some(cluster::client(kubeconfig).await?);
    }
    client.as_ref().context("no Kubernetes client")
}

/// The signals the installer waits on, in order. `gate-passed`: every Service is Ready, the
/// bootstrap IP is still in DNS. `complete`: the bootstrap IP left DNS and the drain is over;
/// only now may the bootstrap host go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    GatePassed,
    Complete,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::GatePassed => "gate-passed",
            Phase::Complete => "complete",
        }
    }
}

/// Records the gate's report in the journal, then signals `gate-passed`.
pub async fn record_gate(
    kube: &kube::Client,
    journal: &mut Journal,
    report: &gate::GateReport,
    done_file: Option<&Path>,
) -> Result<()> {
    journal.state.gate = Some(serde_json::to_value(report)?);
    journal.save()?;
    signal(kube, journal, Phase::GatePassed, done_file).await
}

/// Writes `phase` to the done-file (atomically) and the ConfigMap, from what the journal holds.
pub async fn signal(
    kube: &kube::Client,
    journal: &Journal,
    phase: Phase,
    done_file: Option<&Path>,
) -> Result<()> {
    let doc = serde_json::json!({
        "phase": phase,
        "bootstrapIpRemoved": journal.state.bootstrap_removed,
        "gate": journal.state.gate,
        "at": crate::journal::now(),
    });
    if let Some(path) = done_file {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .context("--done-file has no file name")?;
        crate::journal::write_atomically(
            dir,
            name,
            serde_json::to_string_pretty(&doc)?.as_bytes(),
        )?;
    }
    cluster::publish_signal(kube, phase.as_str(), &doc).await
}

/// How the reserved IPs get into DNS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DnsSeeding {
    /// The bootstrap IP first; each reserved IP once its load balancer serves it (the gate's
    /// proof for every Service that claims it).
    Progressive,
    /// Every reserved IP with the bootstrap IP at once, as the seed does: clients meet dead
    /// addresses until the load balancers exist.
    AllAtOnce,
}

/// PURE: the claimed IPs whose every claiming Service is ready (its load balancer holds them
/// and it has a ready endpoint).
pub fn serving_ips(
    targets: &[render::ServiceClaim],
    services: &[gate::ServiceGate],
) -> std::collections::BTreeSet<std::net::IpAddr> {
    let ready = |t: &render::ServiceClaim| {
        services
            .iter()
            .any(|s| s.namespace == t.namespace && s.name == t.name && s.ready)
    };
    targets
        .iter()
        .flat_map(|t| t.claims.iter())
        .filter(|ip| targets.iter().filter(|t| t.claims.contains(ip)).all(&ready))
        .copied()
        .collect()
}

/// Progressive DNS: records `ips` as served (journaled first) and runs the seed again, which
/// adds what the records lack: exactly the newly served IPs, or after a crash whatever the
/// journal says serves but DNS does not hold yet. Without new IPs it runs only when `whole`
/// (the seed observes first, so it changes nothing when all is in place). A no-op in
/// all-at-once mode.
async fn join_dns(
    spec: &ClusterSpec,
    journal: &mut Journal,
    providers: &Providers,
    settings: &RunSettings,
    ips: std::collections::BTreeSet<std::net::IpAddr>,
    whole: bool,
) -> Result<()> {
    let Some(serving) = journal.state.serving.as_mut() else {
        return Ok(());
    };
    let new: Vec<String> = ips.difference(serving).map(ToString::to_string).collect();
    if new.is_empty() && !whole {
        return Ok(());
    }
    if !new.is_empty() {
        serving.extend(ips.iter().copied());
        journal.save()?;
        tracing::info!(ips = ?new, "load balancer serves: joining DNS");
        notify_status(&format!(
            "stage 2: adding {} to DNS (its load balancer serves it)",
            new.join(", ")
        ));
    }
    Runner {
        spec,
        journal,
        providers,
        stage_timeout: settings.stage_timeout,
    }
    .run(Stage::SeedDns)
    .await?;
    Ok(())
}

/// How long the drain after removing the bootstrap IP lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrainWait {
    /// The TTL our private records actually carry, read back from the zone: cached answers
    /// naming the bootstrap host expire within it.
    RecordTtl,
    Fixed(Duration),
}

impl DrainWait {
    /// `ttl` or a duration (`0s` turns the drain off).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "ttl" => Ok(DrainWait::RecordTtl),
            other => humantime::parse_duration(other)
                .map(DrainWait::Fixed)
                .map_err(|e| {
                    format!(
                        "expected `ttl` or a duration like 60s: {e} (flag --drain-wait, environment variable BOOTSTRAP_AGENT_DRAIN_WAIT)"
                    )
                }),
        }
    }

    /// PURE: the drain after a RemoveBootstrap that left the records as `after` shows them.
    pub fn duration(self, after: &crate::plan::Observed) -> Duration {
        match self {
            DrainWait::Fixed(d) => d,
            DrainWait::RecordTtl => Duration::from_secs(u64::from(
                after
                    .records
                    .iter()
                    .filter(|r| r.zone.private)
                    .filter_map(|r| r.current.as_ref().map(|c| c.ttl))
                    .max()
                    .unwrap_or(crate::plan::DEFAULT_TTL),
            )),
        }
    }
}

/// PURE: how much of the drain is left at `now`, given the recorded end (None: not started).
pub fn drain_left(until: Option<std::time::SystemTime>, now: std::time::SystemTime) -> Duration {
    until
        .and_then(|u| u.duration_since(now).ok())
        .unwrap_or(Duration::ZERO)
}

/// Waits one record TTL (by default) after the bootstrap IP left DNS, so resolvers' cached
/// answers that still name the bootstrap host expire while it still serves the API. The end
/// is journaled first, so a restart waits only for the rest.
async fn drain(journal: &mut Journal, wait: Duration) -> Result<()> {
    let until = match journal.state.drain_until.as_deref() {
        Some(t) => humantime::parse_rfc3339(t)
            .with_context(|| format!("journal: drain_until is not an RFC 3339 time: {t}"))?,
        None => {
            let until = std::time::SystemTime::now() + wait;
            journal.state.drain_until = Some(humantime::format_rfc3339_seconds(until).to_string());
            journal.save()?;
            until
        }
    };
    let left = drain_left(Some(until), std::time::SystemTime::now());
    if !left.is_zero() {
        let line = format!(
            "stage 3: bootstrap IP removed from DNS; draining cached answers for {}",
            humantime::format_duration(Duration::from_secs(left.as_secs()))
        );
        tracing::info!("{line}");
        notify_status(&line);
        tokio::time::sleep(left).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    #[test]
    fn the_drain_waits_only_for_what_is_left() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        assert_eq!(drain_left(None, now), Duration::ZERO);
        assert_eq!(
            drain_left(Some(now + Duration::from_secs(45)), now),
            Duration::from_secs(45)
        );
        assert_eq!(
            drain_left(Some(now - Duration::from_secs(5)), now),
            Duration::ZERO
        );
    }

    #[test]
    fn phases_are_named_for_the_installer() {
        assert_eq!(
            serde_json::to_value(Phase::GatePassed).unwrap(),
            "gate-passed"
        );
        assert_eq!(serde_json::to_value(Phase::Complete).unwrap(), "complete");
        assert_eq!(Phase::Complete.as_str(), "complete");
        assert_eq!(Phase::GatePassed.as_str(), "gate-passed");
    }

    #[test]
    fn the_drain_lasts_the_ttl_our_private_records_carry_or_the_fixed_setting() {
        use bootstrap_cloud::{RecordKey, RecordSet, RecordType, ZoneRef};
        let record = |private: bool, ttl: u32| crate::plan::ObservedRecord {
            zone: ZoneRef {
                domain: "d".into(),
                private,
                id: None,
                tags: Default::default(),
            },
            key: RecordKey {
                name: "api.d".into(),
                rtype: RecordType::A,
            },
            current: Some(RecordSet {
                ttl,
                values: Default::default(),
                version: None,
            }),
        };
        let after = crate::plan::Observed {
            records: vec![record(true, 30), record(true, 45), record(false, 300)],
            ..Default::default()
        };
        assert_eq!(
            DrainWait::RecordTtl.duration(&after),
            Duration::from_secs(45)
        );
        assert_eq!(
            DrainWait::RecordTtl.duration(&crate::plan::Observed::default()),
            Duration::from_secs(u64::from(crate::plan::DEFAULT_TTL))
        );
        assert_eq!(
            DrainWait::Fixed(Duration::ZERO).duration(&after),
            Duration::ZERO
        );
        assert_eq!(DrainWait::parse("ttl"), Ok(DrainWait::RecordTtl));
        assert_eq!(
            DrainWait::parse("5s"),
            Ok(DrainWait::Fixed(Duration::from_secs(5)))
        );
        assert!(DrainWait::parse("soon").is_err());
    }

    #[test]
    fn an_ip_serves_once_every_service_that_claims_it_is_ready() {
        let ip = |s: &str| -> std::net::IpAddr { s.parse().unwrap() };
        let claim = |name: &str, ips: &[&str]| render::ServiceClaim {
            namespace: "ns".into(),
            name: name.into(),
            claims: ips.iter().map(|s| ip(s)).collect(),
            needs_aws_lb_controller: false,
            ports: Vec::new(),
        };
        let gate = |name: &str, ready: bool| gate::ServiceGate {
            namespace: "ns".into(),
            name: name.into(),
            ready,
            reason: String::new(),
            ingress: Vec::new(),
            ready_endpoints: 0,
            endpoints: 0,
            proof: String::new(),
            needs_cloud_proof: false,
        };
        // The internal IP is shared by the API and MCS Services (Azure, GCP).
        let targets = [
            claim("external-lb", &["203.0.113.1"]),
            claim("internal-lb", &["10.0.1.5"]),
            claim("internal-lb-mcs", &["10.0.1.5"]),
        ];
        let serving = |ready: &[&str]| {
            let services: Vec<_> = ["external-lb", "internal-lb", "internal-lb-mcs"]
                .iter()
                .map(|n| gate(n, ready.contains(n)))
                .collect();
            serving_ips(&targets, &services)
        };
        assert!(serving(&[]).is_empty());
        assert_eq!(serving(&["external-lb"]), [ip("203.0.113.1")].into());
        assert!(
            serving(&["internal-lb"]).is_empty(),
            "MCS does not serve the shared IP yet"
        );
        assert_eq!(
            serving(&["internal-lb", "internal-lb-mcs"]),
            [ip("10.0.1.5")].into()
        );
    }
}
