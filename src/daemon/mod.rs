//! `run`: the daemon as an explicit state machine (zincati's shape). Each step is idempotent
//! and starts by observing, and the journal records where the machine is, so `kill -9` at any
//! moment followed by `run` continues at the step that was interrupted; `run` after success
//! does nothing.
//!
//! ```text
//! Reserve -> SeedDns -> SetCapabilities -> HandOver -> ApplyServices -> Gate -> RemoveBootstrap -> Done
//! ```
//!
//! Every state but Gate and Done runs its step of the plan through the runner (same deadline, retries and
//! journaled intent for the cloud's and the cluster's); Gate waits and lets the served IPs
//! join DNS (`progressive`); after RemoveBootstrap comes the drain (`drain`) and the signals
//! (`signal`). SetCapabilities writes ClusterVersion `spec.capabilities` before anything
//! filtered is applied; it sits before HandOver so that the HandOver -> ApplyServices window
//! stays tiny. `command`: the `run` and `wait` commands around it.

mod command;
mod drain;
mod progressive;
mod signal;

pub use command::{GateArgs, KubeArgs, RunArgs, command, wait_for_gate};
pub use drain::{DrainWait, drain_left};
pub use progressive::{DnsSeeding, GateSettings, choose as choose_seeding, gate, serving_ips};
pub use signal::{Phase, record_gate, signal};

use crate::assets::ClusterSpec;
use crate::cluster;
use crate::journal::Journal;
use crate::machine::{Machine, State};
use crate::notify;
use crate::providers::Providers;
use crate::runner::{Kubernetes, Runner};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything `run` needs besides the spec and the journal.
pub struct RunSettings {
    pub kubeconfig: PathBuf,
    pub templates: Option<PathBuf>,
    pub step_timeout: Duration,
    pub gate_timeout: Duration,
    pub done_file: Option<PathBuf>,
    /// After the bootstrap IP left DNS, how long to wait before signalling `complete`.
    pub drain_wait: DrainWait,
    pub dns_seeding: DnsSeeding,
    /// User-managed DNS with `--dns-wait`: after seeding and after removing the bootstrap IP,
    /// wait until the user's DNS answers the records (read as this view says).
    pub dns_wait: Option<crate::dns_answers::wait::DnsCheck>,
    /// The validated capability selection written to ClusterVersion.
    pub capabilities: crate::capabilities::selection::Selection,
    /// The installer's `manifests/cvo-overrides.yaml`, when present: ClusterVersion is
    /// created from it when it does not exist yet.
    pub cvo_overrides: Option<crate::capabilities::cluster_version::CvoOverrides>,
    /// The proof on the wire before the bootstrap IP leaves DNS (None: `--wire-proof off`).
    pub wire: Option<cluster::wire::WireProof>,
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
        let state = machine.state();
        notify::status(state.status_line());
        tracing::info!(?state, "{}", state.status_line());
        journal.state.run_step = Some(state);
        journal.save()?;
        // A person may hold the agent before any step (`bootstrap-agent pause`).
        let state_dir = journal.dir().to_path_buf();
        crate::pause::wait_while_paused(&state_dir, || {
            let line = format!(
                "paused before {}: `bootstrap-agent resume` continues",
                state.name()
            );
            tracing::info!("{line}");
            notify::status(&line);
        })
        .await;
        match (state, state.step()) {
            (State::Done, _) => {
                notify::status(State::Done.status_line());
                // READY only now: units ordered After=bootstrap-agent.service (the installer's
                // completion report) start once the API no longer needs the bootstrap host.
                notify::ready();
                return Ok(());
            }
            (State::Gate, _) => {
                let kube = connect(&mut client, &settings.kubeconfig).await?;
                let gate_settings = GateSettings {
                    step_timeout: settings.step_timeout,
                    gate_timeout: settings.gate_timeout,
                    wire: settings.wire.as_ref(),
                };
                let report =
                    progressive::gate(spec, journal, providers, &gate_settings, kube).await?;
                record_gate(kube, journal, &report, settings.done_file.as_deref()).await?;
            }
            (_, Some(step)) => {
                if state == State::SeedDns {
                    progressive::choose(journal, settings.dns_seeding)?;
                }
                if state == State::HandOver
                    && hand_over_needs_the_controller(spec, journal, settings)?
                {
                    let kube = connect(&mut client, &settings.kubeconfig).await?;
                    let proof = cluster::lb_controller::wait_serving(
                        kube,
                        &cluster::lb_controller::LOCATIONS,
                        settings.gate_timeout,
                        |line| {
                            tracing::info!("{line}");
                            notify::status(line);
                        },
                    )
                    .await?;
                    tracing::info!(%proof, "the AWS Load Balancer Controller serves: handing over");
                    notify::status(state.status_line());
                }
                let kube = match step.is_kubernetes() {
                    true => Some(connect(&mut client, &settings.kubeconfig).await?.clone()),
                    false => None,
                };
                let kube = kube.as_ref().map(|client| Kubernetes {
                    client,
                    capabilities: Some(&settings.capabilities),
                    overrides: settings.cvo_overrides.as_ref(),
                    templates: settings.templates.as_deref(),
                    wait: settings.step_timeout,
                });
                let report = Runner {
                    spec,
                    journal,
                    providers,
                    kube: kube.as_ref(),
                    step_timeout: settings.step_timeout,
                }
                .run(step)
                .await?;
                if let Some(check) = settings.dns_wait
                    && matches!(state, State::SeedDns | State::RemoveBootstrap)
                {
                    // The user's DNS must answer before the next step (before the drain after
                    // the bootstrap IP's removal: the drain counts from its real removal).
                    let view = crate::dns_answers::wait::view(check, providers.dns.as_ref());
                    crate::dns_answers::wait::until_answered(
                        spec,
                        &journal.state,
                        view.as_ref(),
                        report.step,
                        settings.step_timeout,
                        crate::dns_answers::wait::Pace::DEFAULT,
                        notify::status,
                    )
                    .await?;
                }
                if state == State::RemoveBootstrap {
                    drain::drain(journal, settings.drain_wait.duration(&report.after)).await?;
                    let kube = connect(&mut client, &settings.kubeconfig).await?;
                    signal(
                        kube,
                        journal,
                        Phase::Complete,
                        settings.done_file.as_deref(),
                    )
                    .await?;
                    // What day 2 needs once this host is gone (`day2::record`).
                    let record = crate::day2::record::RunRecord::of(
                        &journal.state,
                        &spec.infra_id,
                        spec.publish.api(),
                    );
                    crate::day2::record::write(kube, &record).await?;
                }
            }
            (_, None) => anyhow::bail!("state {state:?} runs no step"),
        }
        machine.step_done()?;
    }
}

/// Whether the hand-over must first see the AWS Load Balancer Controller serve: there are
/// private IPs left to hand over (AWS ENIs), and a Service that claims them is one only that
/// controller serves (`aws-load-balancer-type: external`).
fn hand_over_needs_the_controller(
    spec: &ClusterSpec,
    journal: &Journal,
    settings: &RunSettings,
) -> Result<bool> {
    let private_left = journal
        .state
        .reservations
        .iter()
        .any(|r| r.key.scope == bootstrap_cloud::Scope::Private);
    if !private_left || !matches!(spec.platform, crate::assets::Platform::Aws(_)) {
        return Ok(false);
    }
    let observed = crate::plan::Observed::default();
    let reservations = crate::runner::stand_ins(spec, &observed);
    let rendered = crate::render::services(spec, &reservations, settings.templates.as_deref())?;
    Ok(rendered.iter().any(|r| {
        crate::render::ServiceClaim::for_service(&r.service, vec![]).needs_aws_lb_controller
    }))
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
