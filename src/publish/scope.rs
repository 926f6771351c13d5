//! The change under way, told as it goes: the phase and its condition `Progressing` in the
//! journal first, then systemd's status line and ConfigMap `kube-system/bootstrap-agent`; the
//! drain after the withdrawal, and the admin's deletion of the external Service.

use super::target::{DONE, revert_command};
use crate::assets::{ClusterSpec, Exposure};
use crate::cluster;
use crate::error::AwaitingDeletion;
use crate::journal::{Condition, Journal, ScopeChange};
use crate::notify;
use crate::plan::Observed;
use crate::runner::Kubernetes;
use anyhow::{Context as _, Result};
use std::time::Duration;

/// The condition while the change is under way: `Progressing=True`, reason `ScopeChanged`.
pub(super) fn progressing(from: Exposure, to: Exposure, doing: &str) -> Condition {
    Condition {
        type_: "Progressing".into(),
        status: "True".into(),
        reason: "ScopeChanged".into(),
        message: format!(
            "The API scope was changed from \"{from}\" to \"{to}\": {doing}. Alternatively, you can revert the change: `{}`",
            revert_command(from)
        ),
        last_transition_time: crate::journal::now(),
    }
}

fn settled(to: Exposure) -> Condition {
    Condition {
        type_: "Progressing".into(),
        status: "False".into(),
        reason: "AsExpected".into(),
        message: format!("The API is published {to}"),
        last_transition_time: crate::journal::now(),
    }
}

/// Our Services the target scope no longer wants, as the cluster holds them: `ns/name`.
pub(super) async fn live_unwanted(
    spec: &ClusterSpec,
    kube: &Kubernetes<'_>,
    observed: &Observed,
) -> Result<Vec<String>> {
    let wants = crate::runner::unwanted_services(spec, observed, kube.templates)?;
    Ok(crate::runner::live_ours(kube, spec, &wants)
        .await?
        .into_iter()
        .map(|l| format!("{}/{}", l.namespace, l.name))
        .collect())
}

/// The change under way, told to the journal, systemd and the cluster as it goes.
pub(super) struct Scope<'a> {
    /// Whether there is a change to tell (a re-run for the scope the cluster has tells none).
    pub(super) active: bool,
    pub(super) journal: &'a mut Journal,
    pub(super) client: &'a kube::Client,
    pub(super) from: Exposure,
    pub(super) to: Exposure,
}

impl Scope<'_> {
    /// Records the phase and its condition (journal first, then the ConfigMap).
    pub(super) async fn phase(&mut self, phase: &str, doing: &str) -> Result<()> {
        if !self.active {
            return Ok(());
        }
        self.set(phase, progressing(self.from, self.to, doing))
            .await
    }

    async fn set(&mut self, phase: &str, condition: Condition) -> Result<()> {
        let line = format!("publish {}: {}", self.to, condition.message);
        tracing::info!("{line}");
        notify::status(&line);
        let change = self
            .journal
            .state
            .scope_change
            .get_or_insert_with(|| ScopeChange {
                from: self.from,
                to: self.to,
                phase: String::new(),
                drain_until: None,
                condition: condition.clone(),
            });
        let same = change.phase == phase && change.condition.message == condition.message;
        change.phase = phase.to_string();
        if !same {
            change.condition = condition;
        }
        let published = serde_json::json!([change.condition]);
        self.journal.save()?;
        cluster::publish_scope(self.client, &self.to.to_string(), &published).await
    }

    /// Waits `wait` after the withdrawal (its end journaled once: a restart waits the rest).
    pub(super) async fn drain(&mut self, wait: Duration) -> Result<()> {
        let Some(change) = self.journal.state.scope_change.as_mut() else {
            return Ok(());
        };
        let until = match change.drain_until.as_deref() {
            Some(t) => humantime::parse_rfc3339(t).with_context(|| {
                format!("journal: scope_change.drain_until is not an RFC 3339 time: {t}")
            })?,
            None => {
                let until = std::time::SystemTime::now() + wait;
                change.drain_until = Some(humantime::format_rfc3339_millis(until).to_string());
                self.journal.save()?;
                until
            }
        };
        let left = crate::daemon::drain_left(Some(until), std::time::SystemTime::now());
        if !left.is_zero() {
            let line = format!(
                "publish: the public `api` record is withdrawn; draining cached answers for {}",
                humantime::format_duration(Duration::from_millis(
                    u64::try_from(left.as_millis()).unwrap_or(u64::MAX)
                ))
            );
            tracing::info!("{line}");
            notify::status(&line);
            tokio::time::sleep(left).await;
        }
        Ok(())
    }

    /// The disruptive step is the admin's: says what to delete (and how to revert instead)
    /// and waits until our unwanted Services are gone, up to `deadline`.
    pub(super) async fn await_deletion(
        &mut self,
        spec: &ClusterSpec,
        kube: &Kubernetes<'_>,
        observed: &Observed,
        doomed: &[String],
        deadline: Duration,
    ) -> Result<()> {
        let deletes: Vec<String> = doomed
            .iter()
            .filter_map(|s| s.split_once('/'))
            .map(|(ns, name)| format!("`oc -n {ns} delete svc/{name}`"))
            .collect();
        let message = format!(
            "The API scope was changed from \"{}\" to \"{}\". The public `api` record is gone and its TTL has passed. To effectuate this change, you must delete the service: {}; its load balancer is then deprovisioned and the public IP released if the agent reserved it (`bootstrap-agent publish --scope {} --auto-delete` deletes it for you). Alternatively, you can revert the change: `{}`",
            self.from,
            self.to,
            deletes.join(", "),
            self.to,
            revert_command(self.from)
        );
        let condition = Condition {
            type_: "Progressing".into(),
            status: "True".into(),
            reason: "ScopeChanged".into(),
            message: message.clone(),
            last_transition_time: crate::journal::now(),
        };
        self.set("awaiting-deletion", condition).await?;
        eprintln!("{message}");
        let started = tokio::time::Instant::now();
        loop {
            if live_unwanted(spec, kube, observed).await?.is_empty() {
                return Ok(());
            }
            if started.elapsed() >= deadline {
                return Err(AwaitingDeletion {
                    after: deadline,
                    message,
                }
                .into());
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    pub(super) async fn done(&mut self) -> Result<()> {
        if !self.active {
            return Ok(());
        }
        self.journal.state.last_error = None;
        self.set(DONE, settled(self.to)).await?;
        println!("publish: the API is published {}", self.to);
        Ok(())
    }
}
