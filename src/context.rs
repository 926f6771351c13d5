//! The command context: what every command that touches the cloud starts from, settled once
//! and in this order, so a bad input stops a command before anything is written:
//!
//! 1. load and validate the asset dir into a `ClusterSpec`;
//! 2. settle the bootstrap IP (`bootstrap_ip`: all its rules) and check it against the stages
//!    the command runs;
//! 3. take the state dir's lock (a second agent stops before any cloud call);
//! 4. build the providers, which settle what the spec leaves to the cloud (AWS subnets; only
//!    reads, and can still reject the input); platform none gets `Providers::none()`;
//! 5. command-specific checks on the settled spec (e.g. `run`'s templates, then its preflight
//!    checklist, which reads the cloud and the cluster);
//! 6. bind the journal to the cluster: only now is the journal written.
//!
//! Commands that only read (`plan`, `render`, `apply`, `gather`) take steps 1, 2 and 4 and
//! read the journal without the lock. Observation (`observe`) merges what only the journal
//! knows into what the cloud shows, in one place (`runner::observe`).

use crate::assets::{self, ClusterSpec};
use crate::journal::{self, Journal, JournalState};
use crate::options;
use crate::output::Output;
use crate::plan::{Observed, Step};
use crate::providers::{self, Providers};
use crate::render::{self, Rendered};
use crate::runner::{self, Runner};
use anyhow::Result;
use bootstrap_cloud::Reservation;
use clap::Args;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct StateDir {
    /// Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2
    /// command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]
    #[arg(long, env = "BOOTSTRAP_AGENT_STATE_DIR")]
    pub state_dir: Option<PathBuf>,
}

/// The bootstrap host's state dir, unless `--state-dir` says otherwise.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/bootstrap-agent";

/// The installer's asset dir on the bootstrap host, unless `--assets` says otherwise.
pub const DEFAULT_ASSETS: &str = "/opt/openshift";

impl StateDir {
    /// `--state-dir`, else the bootstrap host's.
    pub fn dir(&self) -> &Path {
        self.state_dir
            .as_deref()
            .unwrap_or(Path::new(DEFAULT_STATE_DIR))
    }
}

/// The arguments every cloud command shares: the context's inputs.
#[derive(Debug, Args)]
pub struct Common {
    /// Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and
    /// `gather` without it, where /opt/openshift does not exist, read the same documents from
    /// the cluster (--kubeconfig).
    #[arg(long, env = "BOOTSTRAP_AGENT_ASSETS")]
    pub assets: Option<PathBuf>,
    #[command(flatten)]
    pub state: StateDir,
    /// The bootstrap host's private IP (default: recorded in the journal, else detected).
    #[arg(long, env = "BOOTSTRAP_AGENT_BOOTSTRAP_IP", allow_hyphen_values = true,
          value_parser = options::checked(options::bootstrap_ip, IpAddr::from([0, 0, 0, 0])))]
    pub bootstrap_ip: Option<IpAddr>,
    /// GCP and Azure: give the bootstrap host a second private address in `api-int` until
    /// stage 3 (what the masters' apiserver-watcher makes of it: docs/clouds.md, "OpenShift's
    /// own nodes on GCP and Azure"): `host` (the cloud's alias IP / IP configuration, added to this host with iproute2),
    /// `cloud` (the host's own network agent brings it up), `off` (the bootstrap IP alone).
    #[arg(long, env = "BOOTSTRAP_AGENT_BOOTSTRAP_SECOND_ADDRESS", default_value = "host",
          value_parser = options::one_of(assets::SecondAddress::Host))]
    pub bootstrap_second_address: assets::SecondAddress,
    /// Deadline for each step; its retries happen inside it.
    #[arg(long, env = "BOOTSTRAP_AGENT_STEP_TIMEOUT", default_value = "10m", allow_hyphen_values = true,
          value_parser = options::checked(options::deadline, Duration::ZERO))]
    pub step_timeout: Duration,
    /// TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host
    /// must outlive it after it leaves DNS: `run` waits that long before `complete`.
    #[arg(long, env = "BOOTSTRAP_AGENT_DNS_TTL", default_value = "30s", allow_hyphen_values = true,
          value_parser = options::checked(parse_ttl, assets::DEFAULT_TTL))]
    pub dns_ttl: u32,
    #[arg(long, default_value = "text", value_parser = options::one_of(Output::Text))]
    pub output: Output,
    /// UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`;
    /// `id`, or on Azure private `ip`), where they do not carry the seed's names.
    #[arg(long, env = "BOOTSTRAP_AGENT_RESERVATIONS")]
    pub reservations: Option<PathBuf>,
    /// UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing).
    #[arg(long, env = "BOOTSTRAP_AGENT_ADOPT_ONLY", value_parser = options::switch())]
    pub adopt_only: bool,
    /// `manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no
    /// record and looks up no zone, and prints the records to create (the user-managed mode).
    #[arg(long, env = "BOOTSTRAP_AGENT_DNS", value_parser = options::one_of(DnsMode::Auto))]
    pub dns: Option<DnsMode>,
}

impl Common {
    /// The asset dir: `--assets`, else the bootstrap host's.
    pub fn assets(&self) -> &Path {
        self.assets.as_deref().unwrap_or(Path::new(DEFAULT_ASSETS))
    }

    /// Where a day-2 command (`publish`, `gather`) reads its inputs: the asset dir when
    /// `--assets` is given or the bootstrap host's exists (on the bootstrap host, or for a
    /// cluster whose API does not answer), else the cluster.
    pub fn asset_dir_if_any(&self) -> Option<&Path> {
        match &self.assets {
            Some(dir) => Some(dir),
            None => Some(Path::new(DEFAULT_ASSETS)).filter(|d| d.exists()),
        }
    }
}

/// `--dns`: who writes the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DnsMode {
    /// As the install-config says (cloud DNS unless userProvisionedDNS is Enabled).
    Auto,
    /// The user: the one user-managed DNS mode of the spec.
    Manual,
}

/// `--dns-ttl`: a duration of whole seconds, from 1 s to 1 h.
fn parse_ttl(text: &str) -> Result<u32, String> {
    let d = humantime::parse_duration(text)
        .map_err(|e| format!("expected a duration like 30s: {e}"))?;
    if d.subsec_nanos() != 0 || d < Duration::from_secs(1) || d > Duration::from_secs(3600) {
        return Err(
            "expected whole seconds from 1s to 1h (DNS TTLs are whole seconds)".to_string(),
        );
    }
    u32::try_from(d.as_secs()).map_err(|e| e.to_string())
}

/// Where the cloud view comes from for a reading command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    /// Build the providers; failing to is an error.
    Observe,
    /// `plan --offline`: assume nothing exists and call nothing.
    Offline,
    /// `gather`: a failure to build the providers is reported and the rest goes on.
    BestEffort,
}

/// Where a command's documents and journal are: the asset dir and `--state-dir` (the
/// bootstrap host), or the cluster's documents and the admin's state dir (day 2).
pub struct Inputs<'a> {
    pub source: &'a dyn assets::AssetSource,
    pub state_dir: &'a Path,
    /// The journal to read when the state dir has none (day 2: what `run` left in the cluster).
    pub fallback: Option<&'a JournalState>,
}

impl Inputs<'_> {
    fn recorded(&self) -> Result<Option<JournalState>> {
        Ok(journal::read_state(self.state_dir)?.or_else(|| self.fallback.cloned()))
    }
}

/// A command's settled inputs, read without the lock.
pub struct Reading {
    pub spec: ClusterSpec,
    /// The journal as last written (empty when there is none).
    pub recorded: JournalState,
    pub providers: Providers,
    /// Why there is no cloud view (`Cloud::BestEffort` only).
    pub no_cloud: Option<String>,
}

/// A command that changes something: its spec, the locked journal bound to the cluster, and
/// the providers.
pub struct Context {
    pub spec: ClusterSpec,
    pub journal: Journal,
    pub providers: Providers,
    pub step_timeout: Duration,
}

/// Steps 1 and 2: the spec with the bootstrap IP settled, and the journal as last written.
fn load(args: &Common, inputs: &Inputs<'_>) -> Result<(ClusterSpec, JournalState)> {
    let mut spec = assets::load_from(inputs.source)?;
    // An unreadable journal is reported by the commands that need it; here it only lends the
    // seeded bootstrap IP.
    let recorded = inputs.recorded().ok().flatten().unwrap_or_default();
    spec.bootstrap_ip = crate::bootstrap_ip::settle(args.bootstrap_ip, Some(&recorded));
    // Once stage 3 removed the bootstrap host from DNS, its second address is never wanted;
    // nor with the installer's cluster-hosted DNS (the assets' user-managed DNS): there every
    // node resolves api-int to the load balancers' IPs from the Infrastructure (publish-lb-ips),
    // never to the bootstrap host, so no apiserver-watcher can take it for the VIP.
    let cluster_hosted = spec.user_managed_dns().is_some();
    spec.second_bootstrap_address = if recorded.bootstrap_removed || cluster_hosted {
        assets::SecondAddress::Off
    } else {
        args.bootstrap_second_address
    };
    // After `publish --scope`, the API's scope is the one it chose, not the install-config's.
    if let Some(change) = &recorded.scope_change {
        spec.prior_publish = Some(spec.publish.with_api(change.from));
        spec.publish = spec.publish.with_api(change.to);
    }
    spec.record_ttl = args.dns_ttl;
    spec.adoption = crate::adopt::load(args.reservations.as_deref(), args.adopt_only, &spec)?;
    if args.dns == Some(DnsMode::Manual) && spec.user_managed_dns().is_none() {
        spec.dns = crate::assets::DnsManagement::UserManaged {
            because: "--dns manual".into(),
        };
    }
    Ok((spec, recorded))
}

impl Reading {
    pub async fn new(args: &Common, cloud: Cloud) -> Result<Self> {
        let dir = assets::AssetDir(args.assets());
        let inputs = Inputs {
            source: &dir,
            state_dir: args.state.dir(),
            fallback: None,
        };
        Self::from_inputs(args, &inputs, cloud).await
    }

    /// As `new`, from `inputs` (day 2: the cluster's documents).
    pub async fn from_inputs(args: &Common, inputs: &Inputs<'_>, cloud: Cloud) -> Result<Self> {
        let (mut spec, _) = load(args, inputs)?;
        let recorded = match inputs.recorded() {
            Ok(state) => state.unwrap_or_default(),
            // `gather` collects what it can, the journal's own error included.
            Err(_) if cloud == Cloud::BestEffort => JournalState::default(),
            Err(e) => return Err(e),
        };
        let (providers, no_cloud) = match cloud {
            Cloud::Observe => (providers::for_spec(&mut spec).await?, None),
            Cloud::Offline => {
                // Subnets found at run time cannot be planned without the cloud: say so rather
                // than print a plan without them.
                if let Some(lookup) = spec.pending_subnets() {
                    return Err(lookup.offline_error(&spec.infra_id).into());
                }
                (Providers::none(), None)
            }
            Cloud::BestEffort => match providers::for_spec(&mut spec).await {
                Ok(p) => (p, None),
                Err(e) => (Providers::none(), Some(crate::error::render_chain(&e))),
            },
        };
        Ok(Self {
            spec,
            recorded,
            providers,
            no_cloud,
        })
    }

    /// The cloud as observed, with what only the journal knows.
    pub async fn observe(&self) -> Result<Observed> {
        Ok(runner::observe(&self.spec, &self.providers, &self.recorded)
            .await?
            .observed)
    }

    /// The Services for the reservations that exist (observed, or handed over per the journal).
    pub async fn rendered(&self, templates: Option<&Path>) -> Result<Vec<Rendered>> {
        Ok(rendered_for(&self.spec, &self.observe().await?, templates)?.0)
    }
}

impl Context {
    /// Steps 1 to 6 for a command that runs `stages` (its bootstrap-IP needs follow from them).
    pub async fn open(args: &Common, stages: &[Step]) -> Result<Self> {
        Ok(Self::open_checked(args, stages, |_| Ok(()), |_| Ok(()))
            .await?
            .0)
    }

    /// As `open`, with the command's own checks of its input: `input` on the spec as loaded
    /// (before the lock: a bad input leaves no trace), `settled` as step 5.
    pub async fn open_checked<T>(
        args: &Common,
        stages: &[Step],
        input: impl FnOnce(&ClusterSpec) -> Result<T>,
        settled: impl FnOnce(&ClusterSpec) -> Result<()>,
    ) -> Result<(Self, T)> {
        let (ctx, (checked, ())) =
            Self::open_prepared(args, stages, input, settled, async |_, _, _| Ok(())).await?;
        Ok((ctx, checked))
    }

    /// As `open_checked`, with `prepare` between steps 5 and 6 (`run`: the preflight checklist
    /// and what needs the network to check), so that its failure leaves nothing written.
    pub async fn open_prepared<T, U>(
        args: &Common,
        stages: &[Step],
        input: impl FnOnce(&ClusterSpec) -> Result<T>,
        settled: impl FnOnce(&ClusterSpec) -> Result<()>,
        prepare: impl AsyncFnOnce(&ClusterSpec, &Providers, &JournalState) -> Result<U>,
    ) -> Result<(Self, (T, U))> {
        let dir = assets::AssetDir(args.assets());
        let inputs = Inputs {
            source: &dir,
            state_dir: args.state.dir(),
            fallback: None,
        };
        Self::open_from(args, &inputs, stages, input, settled, prepare).await
    }

    /// As `open_prepared`, from `inputs` (day 2: the cluster's documents, the admin's state dir).
    pub async fn open_from<T, U>(
        args: &Common,
        inputs: &Inputs<'_>,
        stages: &[Step],
        input: impl FnOnce(&ClusterSpec) -> Result<T>,
        settled: impl FnOnce(&ClusterSpec) -> Result<()>,
        prepare: impl AsyncFnOnce(&ClusterSpec, &Providers, &JournalState) -> Result<U>,
    ) -> Result<(Self, (T, U))> {
        let (mut spec, recorded) = load(args, inputs)?;
        crate::bootstrap_ip::check(&spec, stages, &recorded)?;
        let checked = input(&spec)?;
        let mut journal = Journal::open(inputs.state_dir)?;
        let providers = providers::for_spec(&mut spec).await?;
        settled(&spec)?;
        // The user's reservations that do not fit are bad input: refused before the journal.
        // Under the step deadline, like every cloud call of a step. A cloud that does not
        // answer now is no verdict: the step looks again when it observes, journaled, with
        // its retries counted.
        match tokio::time::timeout(
            args.step_timeout,
            crate::adopt::precheck(&spec, &providers, &journal.state.adopted),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(e)) if e.chain().any(|c| c.is::<crate::error::InputError>()) => return Err(e),
            Ok(Err(e)) => tracing::warn!(
                error = %crate::error::render_chain(&e),
                "could not look for reservations of yours yet; the step looks again"
            ),
            Err(_) => tracing::warn!(
                "looking for reservations of yours did not finish within {}; the step looks again",
                humantime::format_duration(args.step_timeout)
            ),
        }
        let prepared = prepare(&spec, &providers, &journal.state).await?;
        journal.bind_cluster(&spec.infra_id)?;
        // Again under the lock: another agent may have seeded since the first read.
        crate::bootstrap_ip::check(&spec, stages, &journal.state)?;
        let ctx = Self {
            spec,
            journal,
            providers,
            step_timeout: args.step_timeout,
        };
        Ok((ctx, (checked, prepared)))
    }

    /// The runner for this context's cloud steps.
    pub fn runner(&mut self) -> Runner<'_> {
        Runner {
            spec: &self.spec,
            journal: &mut self.journal,
            providers: &self.providers,
            kube: None,
            step_timeout: self.step_timeout,
        }
    }

    /// The cloud as observed, with what only the journal knows.
    pub async fn observe(&self) -> Result<Observed> {
        Ok(
            runner::observe(&self.spec, &self.providers, &self.journal.state)
                .await?
                .observed,
        )
    }
}

/// The rendered Services and the reservations they were rendered from; every reservation a
/// load balancer claims must exist.
pub fn rendered_for(
    spec: &ClusterSpec,
    observed: &Observed,
    templates: Option<&Path>,
) -> Result<(Vec<Rendered>, Vec<Reservation>)> {
    let kept = observed.kept();
    let missing = observed.missing_claimed_reservations(spec);
    if !missing.is_empty() {
        anyhow::bail!(
            "reservations missing: {}; run `bootstrap-agent reserve` first",
            missing.join(", ")
        );
    }
    let reservations: Vec<_> = kept.into_values().collect();
    let rendered = render::services(spec, &reservations, templates)?;
    Ok((rendered, reservations))
}

#[cfg(test)]
mod ttl_tests {
    use super::parse_ttl;

    #[test]
    fn a_dns_ttl_is_whole_seconds_from_one_second_to_an_hour() {
        assert_eq!(parse_ttl("30s"), Ok(30));
        assert_eq!(parse_ttl("1s"), Ok(1));
        assert_eq!(parse_ttl("1h"), Ok(3600));
        assert_eq!(parse_ttl("2m"), Ok(120));
        for bad in ["0s", "500ms", "1.5s", "61m", "soon", "-5s"] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
    }
}
