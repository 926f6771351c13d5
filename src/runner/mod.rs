//! The runner: observe -> plan -> journal -> apply, one step at a time, the same way for the
//! cloud's steps and the cluster's. Every step starts by observing (the cloud; for the
//! cluster, the journal's reservations), so a re-run after success changes nothing and a
//! resume after a crash does only what is missing. Every step runs under the step deadline,
//! retries transient failures inside it, and journals each change before and after.
//!
//! `observe`: what the cloud and the journal know; `cloud`: the cloud's changes; `kube`: the
//! cluster's changes (capabilities, Services).

mod cloud;
mod kube;
mod observe;
mod replace;
mod services;

pub use kube::{kube_wants, stand_ins, unwanted_services};
pub use observe::{Observation, observe};
pub use replace::replace_where_fixed;
pub use services::{live_addresses, live_ours};

use crate::assets::ClusterSpec;
use crate::capabilities::cluster_version::CvoOverrides;
use crate::capabilities::selection::Selection;
use crate::journal::Journal;
use crate::plan::{Observed, Plan, Step};
use crate::providers::Providers;
use anyhow::{Result, anyhow, bail};
use backon::{BackoffBuilder, ExponentialBuilder};
use bootstrap_cloud::CloudError;
use std::path::Path;
use std::time::Duration;

pub struct Runner<'a> {
    pub spec: &'a ClusterSpec,
    pub journal: &'a mut Journal,
    pub providers: &'a Providers,
    /// The cluster, for the Kubernetes steps (None: a command without a kubeconfig).
    pub kube: Option<&'a Kubernetes<'a>>,
    /// Outer deadline per step; retries of transient errors happen inside it.
    pub step_timeout: Duration,
}

/// The cluster and what `run` wants of it.
pub struct Kubernetes<'a> {
    pub client: &'a ::kube::Client,
    /// None: a command that writes no capability (`teardown --all`, which deletes Services).
    pub capabilities: Option<&'a Selection>,
    /// The installer's `manifests/cvo-overrides.yaml`, when present: ClusterVersion is created
    /// from it when it does not exist yet.
    pub overrides: Option<&'a CvoOverrides>,
    pub templates: Option<&'a Path>,
    /// How long to wait for ClusterVersion `version` when it does not exist and there is no
    /// cvo-overrides.yaml.
    pub wait: Duration,
}

/// What a step did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StepReport {
    pub step: &'static str,
    pub plan: Plan,
    pub mutations: u32,
    /// The cloud after the step, to show what symbolic values resolved to.
    #[serde(skip)]
    pub after: Observed,
}

impl Runner<'_> {
    /// Runs one step under its deadline, journaling the step, retrying transient failures
    /// (each retry re-observes, so it is safe).
    pub async fn run(&mut self, step: Step) -> Result<StepReport> {
        self.journal.begin_step(step.name())?;
        let deadline = self.step_timeout;
        let outcome = tokio::time::timeout(deadline, self.run_with_retries(step))
            .await
            .unwrap_or_else(|_| {
                Err(anyhow!(
                    "step {} did not finish within {}",
                    step.name(),
                    humantime::format_duration(deadline)
                ))
            });
        let recorded = outcome
            .as_ref()
            .map(|_| ())
            .map_err(crate::error::render_chain);
        self.journal.finish_step(step.name(), recorded)?;
        outcome
    }

    async fn run_with_retries(&mut self, step: Step) -> Result<StepReport> {
        let mut delays = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(500))
            .with_max_delay(Duration::from_secs(30))
            .with_jitter()
            .with_max_times(5)
            .build();
        // Retries of throttled passes so far (they have their own backoff, and no count).
        let mut throttled = 0;
        // The first pass that changed something; its plan is what the step did.
        let mut done: Option<StepReport> = None;
        let mut changing_passes = 0;
        loop {
            match self.execute(step).await {
                Ok(report) if step == Step::Reserve && report.mutations > 0 => {
                    // Verify, whichever command reserved: a lost AllocateAddress answer retried
                    // (the call has no idempotency token) may have left a duplicate; the next
                    // look plans its release, and nothing else. It is retried like any pass,
                    // so a transient error while verifying never leaves a duplicate behind.
                    match &mut done {
                        Some(first) => {
                            first.mutations += report.mutations;
                            changing_passes += 1;
                            if changing_passes > MAX_VERIFY_PASSES {
                                bail!(
                                    "step {} still finds changes to make after {} passes; \
                                     the cloud does not show what was reserved (see `status`)",
                                    step.name(),
                                    changing_passes + 1
                                );
                            }
                        }
                        None => done = Some(report),
                    }
                }
                Ok(report) => {
                    return Ok(match done {
                        Some(first) => StepReport {
                            mutations: first.mutations + report.mutations,
                            after: report.after,
                            ..first
                        },
                        None => report,
                    });
                }
                Err(e) if is_transient(&e) => {
                    let cause = retry_cause(&e);
                    // Throttled: the service asks us to slow down, not to give up. Under a
                    // per-account rate limit shared with other installs (Route53: 5 requests
                    // per second per account) that can outlast any count of retries, so these
                    // are bounded by the step deadline alone, backing off up to 30 s.
                    let next = if cause == "throttled" {
                        throttled += 1;
                        Some(bootstrap_cloud::retry::backoff(
                            throttled,
                            THROTTLED_BACKOFF.0,
                            THROTTLED_BACKOFF.1,
                        ))
                    } else {
                        delays.next()
                    };
                    let Some(delay) = next else {
                        return Err(e);
                    };
                    // A service that said how long to wait (Retry-After) is waited for at least
                    // that long.
                    let delay = retry_after(&e).map_or(delay, |wait| delay.max(wait));
                    self.journal.record_retry(step.name(), cause)?;
                    tracing::warn!(step = step.name(), error = %crate::error::render_chain(&e), ?delay, "transient failure, retrying");
                    tokio::time::sleep(delay).await;
                }
                other => return other,
            }
        }
    }

    async fn execute(&mut self, step: Step) -> Result<StepReport> {
        if step.is_kubernetes() {
            self.execute_kube(step).await
        } else {
            self.execute_cloud(step).await
        }
    }
}

/// The backoff of a step retried because the service throttled it: from 1 s, doubling, at
/// most 30 s, with jitter so throttled installs of one account come back apart.
const THROTTLED_BACKOFF: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(30));

/// How many verifying passes of `reserve` may still change something (release a duplicate
/// of a lost answer, redo what a fault undid) before the step gives up rather than loop.
const MAX_VERIFY_PASSES: u32 = 3;

fn retry_after(err: &anyhow::Error) -> Option<Duration> {
    err.chain()
        .filter_map(|c| c.downcast_ref::<CloudError>())
        .find_map(|c| c.retry_after)
}

/// Why a transient failure happened, for the retry counts `status` shows: the service asked
/// us to slow down (a Retry-After, or its throttling code), a DNS compare-and-swap was lost,
/// or anything else transient (a 5xx, a dropped connection, a timeout).
fn retry_cause(err: &anyhow::Error) -> &'static str {
    let Some(cloud) = err.chain().find_map(|c| c.downcast_ref::<CloudError>()) else {
        return "server-or-network";
    };
    if cloud.kind == bootstrap_cloud::ErrorKind::Conflict {
        "conflict"
    } else if cloud.is_throttled() {
        "throttled"
    } else {
        "server-or-network"
    }
}

/// Whether a failure may pass by itself: a cloud error of the transient kind, or a Kubernetes
/// API answer that says so (429, 5xx) or no answer at all (connection).
fn is_transient(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<CloudError>()
            .is_some_and(CloudError::is_transient)
            || c.downcast_ref::<::kube::Error>()
                .is_some_and(kube_transient)
    })
}

fn kube_transient(err: &::kube::Error) -> bool {
    match err {
        ::kube::Error::Api(status) => status.code == 429 || status.code >= 500,
        ::kube::Error::HyperError(_) | ::kube::Error::Service(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod observe_tests;
#[cfg(test)]
mod tests;
