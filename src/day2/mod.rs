//! Day 2 from an admin's machine: after the installer destroyed the bootstrap host, the
//! cluster and the cloud are the record, not the bootstrap host's asset dir and journal.
//!
//! - `inputs`: the loader's four documents from the cluster (the same loader validates them);
//! - `record`: what `run` left at `complete` (ConfigMap kube-system/bootstrap-agent
//!   `record.json`), from which a day-2 journal starts, confirmed by the cloud's tags;
//! - `lease`: a Lease in kube-system, so two admins cannot change the cluster at once.
//!
//! Where inputs come from (`Common::asset_dir_if_any`): `--assets` given, or the bootstrap
//! host's /opt/openshift exists: the asset dir, as on the bootstrap host (and for a cluster
//! whose API does not answer). Else the cluster, through `--kubeconfig`.
//!
//! The day-2 journal lives on the admin's machine, by default in
//! `$XDG_STATE_HOME/bootstrap-agent/<infra-id>` (`~/.local/state/...`): per user (their
//! kubeconfig and cloud credentials), kept across reboots (a crash resumes), one per cluster.
//! Not in the cluster: every cloud mutation is journaled before and after the call, and that
//! must not wait on the API server; the cluster gets the outcome (`record.json`) and the Lease.

pub mod inputs;
pub mod lease;
pub mod record;

use crate::assets::{self, ClusterSpec, Document, Fetched, Platform};
use crate::error::InputError;
use anyhow::{Context as _, Result};
use std::path::{Path, PathBuf};

/// A day-2 command's inputs, read from the cluster and checked: nothing written yet.
pub struct FromCluster {
    pub client: kube::Client,
    pub docs: Fetched,
    /// The spec as loaded (the install-config's scope; the record's is applied by the journal).
    pub spec: ClusterSpec,
    pub record: record::RunRecord,
    pub state_dir: PathBuf,
}

/// A request the API server refused (401, 403): the kubeconfig's user lacks a right, an input
/// error naming `object` (exit 2) with kube-apiserver's message, which names the verb and
/// resource; anything else stays an operational error.
pub fn refused(e: kube::Error, object: &str) -> anyhow::Error {
    match e {
        kube::Error::Api(s) if s.code == 401 || s.code == 403 => InputError::new(
            object,
            "(object)",
            format!(
                "the kubeconfig's user may not do this (`bootstrap-agent permissions --kube --command publish` prints the role): {}",
                s.message
            ),
        )
        .into(),
        other => anyhow::Error::new(other).context(format!("{object}: the cluster did not answer")),
    }
}

/// The default day-2 state dir of cluster `infra_id`.
pub fn default_state_dir(infra_id: &str) -> Result<PathBuf, InputError> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| Path::new(&h).join(".local/state"))
        })
        .ok_or_else(|| {
            InputError::new(
                crate::options::flag("state-dir", "BOOTSTRAP_AGENT_STATE_DIR"),
                "(default)",
                "neither XDG_STATE_HOME nor HOME is set; expected --state-dir",
            )
        })?;
    Ok(base.join("bootstrap-agent").join(infra_id))
}

/// Reads and checks a day-2 command's inputs from the cluster in `kubeconfig`: the four
/// documents through the asset loader, a cloud platform, credentials, and what `run` left.
/// `state_dir`: `--state-dir`, else the default for the cluster.
pub async fn read(kubeconfig: &Path, state_dir: Option<&Path>) -> Result<FromCluster> {
    read_checked(kubeconfig, state_dir, true).await
}

/// `status` on an admin's machine: the day-2 state dir of the cluster and the journal `run`
/// left in it (no cloud credentials needed: `status` calls no cloud).
pub async fn read_for_status(kubeconfig: &Path) -> Result<(PathBuf, crate::journal::JournalState)> {
    let cluster = read_checked(kubeconfig, None, false).await?;
    let started = cluster.record.journal(cluster.spec.publish.api());
    Ok((cluster.state_dir, started))
}

async fn read_checked(
    kubeconfig: &Path,
    state_dir: Option<&Path>,
    needs_cloud: bool,
) -> Result<FromCluster> {
    let client = crate::cluster::client(kubeconfig).await.with_context(|| {
        format!(
            "no asset dir (--assets, or {} on the bootstrap host): reading the inputs from the cluster",
            crate::context::DEFAULT_ASSETS
        )
    })?;
    let docs = inputs::fetch(&client, needs_cloud).await?;
    let platform_type = docs
        .object(Document::Infrastructure)
        .and_then(|i| i.pointer("/status/platformStatus/type"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_string);
    if let Some(t) = &platform_type
        && inputs::creds_secret_name(t).is_none()
    {
        return Err(InputError::new(
            inputs::INFRASTRUCTURE,
            "status.platformStatus.type",
            format!("is {t}; expected AWS, GCP or Azure (day 2 changes the API's load balancers in one of these clouds)"),
        )
        .into());
    }
    let spec =
        assets::load_all_from(&docs).map_err(|errors| crate::validate::InputErrors { errors })?;
    if needs_cloud
        && matches!(spec.credentials, assets::Credentials::Environment)
        && let Some(t) = &platform_type
        && let Some(expected) = inputs::missing_environment_credentials(t)
    {
        let secret = inputs::creds_secret_name(t).unwrap_or("(creds secret)");
        return Err(InputError::new(
            format!("Secret kube-system/{secret}"),
            "(object)",
            format!(
                "not found (the cluster's credentials are in manual or STS mode), and the environment gives none; expected {expected}"
            ),
        )
        .into());
    }
    if matches!(spec.platform, Platform::None) {
        return Err(InputError::new(
            inputs::INFRASTRUCTURE,
            "status.platformStatus.type",
            "is None; expected AWS, GCP or Azure",
        )
        .into());
    }
    let record = record::read(&client, &spec.infra_id).await?;
    let state_dir = match state_dir {
        Some(d) => d.to_path_buf(),
        None => default_state_dir(&spec.infra_id)?,
    };
    Ok(FromCluster {
        client,
        docs,
        spec,
        record,
        state_dir,
    })
}

impl FromCluster {
    /// Starts the day-2 journal from the record, unless the state dir holds one of this
    /// cluster already (a change under way resumes from it). True when it started one.
    pub fn seed_journal(&self) -> Result<bool> {
        let mut journal = crate::journal::Journal::open(&self.state_dir)?;
        if journal.state.infra_id.is_some() {
            journal.bind_cluster(&self.spec.infra_id)?;
            return Ok(false);
        }
        journal.state = self.record.journal(self.spec.publish.api());
        journal.save()?;
        Ok(true)
    }

    /// Confirms a journal started from the record with the cloud's tags: a reservation of ours
    /// the cloud does not show was released since, and is dropped (said on stdout).
    pub async fn confirm(ctx: &mut crate::context::Context) -> Result<()> {
        let ours = ctx.providers.addresses.observe().await?;
        let dropped = record::confirm(&mut ctx.journal.state, &ours);
        for d in &dropped {
            println!(
                "note: {} names reservation {d} as ours, but the cloud does not show it with our tags: left out",
                record::KEY
            );
        }
        if !dropped.is_empty() {
            ctx.journal.save()?;
        }
        Ok(())
    }
}
