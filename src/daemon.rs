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

use crate::agent::Runner;
use crate::assets::ClusterSpec;
use crate::cluster::{self, apply, gate};
use crate::journal::Journal;
use crate::plan::Stage;
use crate::providers::Providers;
use crate::render;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    Reserve,
    SeedDns,
    SetCapabilities,
    HandOver,
    ApplyServices,
    Gate,
    RemoveBootstrap,
    Done,
}

impl Step {
    pub const ALL: [Step; 8] = [
        Step::Reserve,
        Step::SeedDns,
        Step::SetCapabilities,
        Step::HandOver,
        Step::ApplyServices,
        Step::Gate,
        Step::RemoveBootstrap,
        Step::Done,
    ];

    /// The `STATUS=` line systemd shows while this step runs.
    pub fn status_line(self) -> &'static str {
        match self {
            Step::Reserve => "stage 1: reserving load-balancer IPs",
            Step::SeedDns => {
                "stage 1: seeding api/api-int DNS with the bootstrap IP and the reserved IPs"
            }
            Step::SetCapabilities => {
                "stage 1: writing the capabilities into ClusterVersion version"
            }
            Step::HandOver => {
                "stage 1: handing the reserved private IPs over to the load balancers"
            }
            Step::ApplyServices => "stage 1: applying the LoadBalancer Services",
            Step::Gate => "stage 2: waiting for the Services (ingress + a ready endpoint)",
            Step::RemoveBootstrap => "stage 3: removing the bootstrap IP from DNS",
            Step::Done => "done: the API is served by the cluster's load balancers",
        }
    }
}

/// The cloud stages `run` still has ahead of it from `step` (what `plan` shows by default).
/// Without a recorded step: the stage-1 stages a person runs by hand.
pub fn remaining_stages(step: Option<Step>) -> Vec<Stage> {
    match step {
        None | Some(Step::Reserve) => vec![Stage::Reserve, Stage::SeedDns],
        Some(Step::SeedDns) => vec![Stage::SeedDns, Stage::HandOver],
        Some(Step::SetCapabilities | Step::HandOver) => vec![Stage::HandOver],
        Some(Step::ApplyServices | Step::Gate | Step::RemoveBootstrap) => {
            vec![Stage::RemoveBootstrap]
        }
        Some(Step::Done) => Vec::new(),
    }
}

/// The machine: where it is, and the one legal way forward from each step.
#[derive(Debug)]
pub struct Machine {
    step: Step,
}

impl Machine {
    pub fn resume(recorded: Option<Step>) -> Self {
        Self {
            step: recorded.unwrap_or(Step::Reserve),
        }
    }

    pub fn step(&self) -> Step {
        self.step
    }

    fn advance(&mut self, from: Step, to: Step) -> Result<Step> {
        if self.step != from {
            bail!(
                "illegal transition {from:?} -> {to:?}: the machine is at {:?}",
                self.step
            );
        }
        self.step = to;
        Ok(to)
    }

    pub fn reserved(&mut self) -> Result<Step> {
        self.advance(Step::Reserve, Step::SeedDns)
    }
    pub fn dns_seeded(&mut self) -> Result<Step> {
        self.advance(Step::SeedDns, Step::SetCapabilities)
    }
    pub fn capabilities_set(&mut self) -> Result<Step> {
        self.advance(Step::SetCapabilities, Step::HandOver)
    }
    pub fn handed_over(&mut self) -> Result<Step> {
        self.advance(Step::HandOver, Step::ApplyServices)
    }
    pub fn services_applied(&mut self) -> Result<Step> {
        self.advance(Step::ApplyServices, Step::Gate)
    }
    pub fn gate_passed(&mut self) -> Result<Step> {
        self.advance(Step::Gate, Step::RemoveBootstrap)
    }
    pub fn bootstrap_removed(&mut self) -> Result<Step> {
        self.advance(Step::RemoveBootstrap, Step::Done)
    }
}

/// Everything `run` needs besides the spec and the journal.
pub struct RunSettings {
    pub kubeconfig: PathBuf,
    pub templates: Option<PathBuf>,
    pub stage_timeout: Duration,
    pub gate_timeout: Duration,
    pub done_file: Option<PathBuf>,
    /// The validated capability selection written to ClusterVersion.
    pub capabilities: crate::capabilities::selection::Selection,
    /// The installer's `manifests/cvo-overrides.yaml`, when present: ClusterVersion is
    /// created from it when it does not exist yet.
    pub cvo_overrides: Option<crate::capabilities::cluster_version::CvoOverrides>,
}

/// Renders the templates with stand-in addresses and checks their annotations, so a broken
/// `--templates` dir stops `run` with exit 2 before anything is reserved or released.
pub fn validate_templates(spec: &ClusterSpec, templates: Option<&Path>) -> Result<()> {
    let source = templates.map_or_else(|| PathBuf::from("(embedded templates)"), Path::to_path_buf);
    let invalid =
        |e: anyhow::Error| crate::error::InputError::new(&source, "services", format!("{e:#}"));
    let stand_ins: Vec<bootstrap_cloud::Reservation> = crate::plan::wanted_reservations(spec)
        .into_iter()
        .enumerate()
        .map(|(i, w)| bootstrap_cloud::Reservation {
            id: format!("stand-in-{i}"),
            ip: match w.key.family {
                bootstrap_cloud::IpFamily::Ipv4 => {
                    std::net::IpAddr::from([192, 0, 2, (i % 250) as u8 + 1])
                }
                bootstrap_cloud::IpFamily::Ipv6 => {
                    std::net::IpAddr::from([0x2001, 0xdb8, 0, 0, 0, 0, 0, i as u16 + 1])
                }
            },
            name: w.name,
            key: w.key,
        })
        .collect();
    let rendered = render::services(spec, &stand_ins, templates).map_err(invalid)?;
    for r in &rendered {
        apply::wants_delete(r.service.metadata.annotations.as_ref(), &r.template)
            .map_err(invalid)?;
    }
    Ok(())
}

/// Tells systemd (when started by it) what is happening; a no-op otherwise.
pub fn notify_status(line: &str) {
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Status(line)]);
}

pub async fn run(
    spec: &ClusterSpec,
    journal: &mut Journal,
    providers: Option<&Providers>,
    settings: &RunSettings,
) -> Result<()> {
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
    let mut machine = Machine::resume(journal.state.run_step);
    let mut client: Option<kube::Client> = None;
    loop {
        let step = machine.step();
        notify_status(step.status_line());
        tracing::info!(?step, "{}", step.status_line());
        journal.state.run_step = Some(step);
        journal.save()?;
        let mut runner = Runner {
            spec,
            journal,
            providers,
            stage_timeout: settings.stage_timeout,
        };
        match step {
            Step::Reserve => {
                let report = runner.run(Stage::Reserve).await?;
                if report.mutations > 0 {
                    // Verify: a retried AllocateAddress (no idempotency token) may have left a
                    // duplicate; this second look plans its release, and nothing else.
                    runner.run(Stage::Reserve).await?;
                }
                machine.reserved()?;
            }
            Step::SeedDns => {
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
                let applied =
                    crate::capabilities::cluster_version::apply(kube, &request, |line| {
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
                    .map(|a| gate::Target {
                        namespace: a.namespace.clone(),
                        name: a.name.clone(),
                    })
                    .collect();
                journal.save()?;
                machine.services_applied()?;
            }
            Step::Gate => {
                let kube = connect(&mut client, &settings.kubeconfig).await?;
                let targets = journal.state.services.clone();
                let mut seen: Vec<gate::ServiceGate> = Vec::new();
                let report = gate::wait_ready(kube, &targets, settings.gate_timeout, |services| {
                    for s in services.iter().filter(|s| !seen.contains(s)) {
                        tracing::info!(service = %format!("{}/{}", s.namespace, s.name), reason = %s.reason, "gate");
                    }
                    seen = services.to_vec();
                    let waiting: Vec<String> = services.iter().filter(|s| !s.ready).map(|s| format!("{}: {}", s.name, s.reason)).collect();
                    notify_status(&format!("stage 2: waiting for {}", waiting.join(", ")));
                })
                .await?;
                record_gate(kube, journal, &report, settings.done_file.as_deref()).await?;
                machine.gate_passed()?;
            }
            Step::RemoveBootstrap => {
                runner.run(Stage::RemoveBootstrap).await?;
                machine.bootstrap_removed()?;
            }
            Step::Done => {
                journal.state.run_step = Some(Step::Done);
                journal.save()?;
                notify_status(Step::Done.status_line());
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

/// Where the installer can see the result: the journal, the done-file, and a ConfigMap.
pub async fn record_gate(
    kube: &kube::Client,
    journal: &mut Journal,
    report: &gate::GateReport,
    done_file: Option<&Path>,
) -> Result<()> {
    let json = serde_json::to_value(report)?;
    journal.state.gate = Some(json.clone());
    journal.save()?;
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
            serde_json::to_string_pretty(&json)?.as_bytes(),
        )?;
    }
    cluster::publish_gate(kube, &json).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_are_set_between_seed_dns_and_hand_over() {
        let mut m = Machine::resume(Some(Step::SeedDns));
        assert_eq!(m.dns_seeded().unwrap(), Step::SetCapabilities);
        assert!(
            m.handed_over().is_err(),
            "HandOver cannot skip SetCapabilities"
        );
        assert_eq!(m.capabilities_set().unwrap(), Step::HandOver);
        assert!(m.capabilities_set().is_err());
        assert_eq!(m.handed_over().unwrap(), Step::ApplyServices);
    }

    #[test]
    fn every_step_has_a_status_line_and_resuming_at_set_capabilities_plans_the_hand_over() {
        assert!(Step::ALL.windows(2).all(|w| w[0] < w[1]));
        assert!(Step::ALL.iter().all(|s| !s.status_line().is_empty()));
        assert_eq!(
            remaining_stages(Some(Step::SetCapabilities)),
            vec![Stage::HandOver]
        );
        assert_eq!(
            serde_json::to_value(Step::SetCapabilities).unwrap(),
            "set-capabilities"
        );
    }
}
