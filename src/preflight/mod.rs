//! Preflight: before anything is created, a checklist of whether it can work, each line pass,
//! warn or fail with the reason and the fix. `bootstrap-agent preflight` prints it; `run`
//! prints it first and refuses to change anything when a line fails (exit 2), unless the
//! person names that line in `--skip-preflight`.
//!
//! The lines: the cloud's own (credentials and identity, dry-run permissions, quota, subnets,
//! the private zone's network; see `bootstrap_cloud::<cloud>::preflight`), then the shared
//! ones: the zones can be read, our reservations can be listed, the bootstrap IP is in the
//! machine network and none of ours, and with a kubeconfig the Kubernetes checks (`kube`).
//! Reads and dry runs only.

mod kube_checks;

pub use crate::validate::preflight_names::{check_names, unknown_skips};

use crate::assets::{ClusterSpec, Platform};
use crate::providers::Providers;
use bootstrap_cloud::preflight::{Check, Needs, Verdict};
use bootstrap_cloud::{Reservation, Zone};
use serde::Serialize;
use std::path::Path;

/// `--skip-preflight` (on `run` and `preflight`).
#[derive(Debug, Clone, Default, clap::Args)]
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

/// `preflight`'s arguments.
#[derive(Debug, clap::Args)]
pub struct PreflightCommand {
    #[command(flatten)]
    pub common: crate::context::Common,
    /// Kubeconfig of the cluster (optional: without it the cluster checks are left out).
    #[arg(long, env = "BOOTSTRAP_AGENT_KUBECONFIG")]
    pub kubeconfig: Option<std::path::PathBuf>,
    #[arg(long, env = "BOOTSTRAP_AGENT_TEMPLATES")]
    pub templates: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub preflight: PreflightArgs,
}

/// `preflight`: reads only (no lock, no journal write); prints the checklist to stdout.
pub async fn command(args: &PreflightCommand) -> anyhow::Result<()> {
    let reading =
        crate::context::Reading::new(&args.common, crate::context::Cloud::Observe).await?;
    checklist(
        &Inputs {
            spec: &reading.spec,
            providers: &reading.providers,
            handed_over: &reading.recorded.handed_over,
            kubeconfig: args.kubeconfig.as_deref(),
            templates: args.templates.as_deref(),
        },
        &args.preflight,
        args.common.output,
        false,
    )
    .await
    .map(|_| ())
}

/// Runs preflight and prints the checklist (`run`: on stderr, where its log goes); a failed
/// check is an error (exit 2).
pub async fn checklist(
    inputs: &Inputs<'_>,
    args: &PreflightArgs,
    output: crate::output::Output,
    to_stderr: bool,
) -> anyhow::Result<Report> {
    use crate::output::Output;
    let mut report = run(inputs).await;
    // A line of this cloud that did not apply this time (no kubeconfig, no pool) has nothing
    // to skip; the validation pass already refused the names this cloud has no line for.
    let known = check_names(&inputs.spec.platform);
    let skips: Vec<String> = args
        .skip
        .iter()
        .filter(|name| {
            report.checks.iter().any(|c| &c.name == *name) || !known.contains(&name.as_str())
        })
        .cloned()
        .collect();
    report.skip(&skips)?;
    match (output, to_stderr) {
        (_, true) => eprint!("{}", report.to_text()),
        (Output::Text, false) => crate::output::write_stdout(&report.to_text())?,
        (Output::Json | Output::Yaml, false) => crate::output::data(output, &report)?,
    }
    let failed: Vec<String> = report.failed().iter().map(|c| c.name.clone()).collect();
    if !failed.is_empty() {
        return Err(PreflightFailed { names: failed }.into());
    }
    Ok(report)
}

/// What preflight looks at.
pub struct Inputs<'a> {
    pub spec: &'a ClusterSpec,
    pub providers: &'a Providers,
    /// Reservations handed over to their load balancer (the journal's): ours, though the
    /// cloud no longer shows them as ours.
    pub handed_over: &'a [Reservation],
    pub kubeconfig: Option<&'a Path>,
    pub templates: Option<&'a Path>,
}

/// The checklist. `status_schema`-like stability: fields are only ever added.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub platform: String,
    pub checks: Vec<Check>,
    /// No line failed (skipped ones do not count).
    pub passed: bool,
}

impl Report {
    fn new(platform: &str, checks: Vec<Check>) -> Self {
        let passed = !checks.iter().any(|c| c.verdict == Verdict::Fail);
        Self {
            platform: platform.to_string(),
            checks,
            passed,
        }
    }

    pub fn failed(&self) -> Vec<&Check> {
        self.checks
            .iter()
            .filter(|c| c.verdict == Verdict::Fail)
            .collect()
    }

    /// Marks the named lines skipped. A name that matches no line is bad input: a typo
    /// would otherwise skip nothing while the person believes it skipped something. (The one
    /// validation pass refuses names this cloud has no line for first: [`unknown_skips`].)
    pub fn skip(&mut self, names: &[String]) -> Result<(), crate::error::InputError> {
        for name in names {
            let mut found = false;
            for check in self.checks.iter_mut().filter(|c| &c.name == name) {
                found = true;
                if check.verdict != Verdict::Pass {
                    check.reason = format!(
                        "{} (was {}; skipped by --skip-preflight)",
                        check.reason,
                        verdict_word(check.verdict)
                    );
                    check.verdict = Verdict::Skipped;
                }
            }
            if !found {
                let known: Vec<&str> = self.checks.iter().map(|c| c.name.as_str()).collect();
                return Err(crate::validate::preflight_names::unknown(
                    &self.platform,
                    name,
                    &known,
                ));
            }
        }
        self.passed = !self.checks.iter().any(|c| c.verdict == Verdict::Fail);
        Ok(())
    }

    pub fn to_text(&self) -> String {
        let width = self.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        let mut out = format!("preflight ({}):\n", self.platform);
        for c in &self.checks {
            out.push_str(&format!(
                "  {:<5} {:<width$}  {}\n",
                verdict_word(c.verdict),
                c.name,
                c.reason
            ));
            if let Some(fix) = &c.fix
                && c.verdict != Verdict::Pass
            {
                out.push_str(&format!("  {:<5} {:<width$}  fix: {fix}\n", "", ""));
            }
        }
        let count = |v: Verdict| self.checks.iter().filter(|c| c.verdict == v).count();
        out.push_str(&format!(
            "preflight: {} passed, {} warnings, {} failed, {} skipped\n",
            count(Verdict::Pass),
            count(Verdict::Warn),
            count(Verdict::Fail),
            count(Verdict::Skipped)
        ));
        out
    }
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Warn => "warn",
        Verdict::Fail => "FAIL",
        Verdict::Skipped => "skip",
    }
}

/// `run` stops before any change: these checks failed.
#[derive(Debug, thiserror::Error)]
#[error(
    "preflight failed: {}; nothing was changed (the checklist above says why and how to fix it; `--skip-preflight NAME` goes on regardless)",
    .names.join(", ")
)]
pub struct PreflightFailed {
    pub names: Vec<String>,
}

/// Runs every check and returns the checklist (never an error: a check that cannot run is a
/// line that says so).
pub async fn run(inputs: &Inputs<'_>) -> Report {
    let spec = inputs.spec;
    let mut checks = Vec::new();
    let providers = inputs.providers;
    if matches!(spec.platform, Platform::None) {
        checks.push(Check::pass(
            "cloud",
            "platform none: nothing to reserve, no zone to write",
        ));
        checks.extend(bootstrap_ip(spec, &[]));
        checks.extend(kube_checks::run(inputs).await);
        return Report::new(spec.platform_name(), checks);
    }
    let (zones_check, found_zones) = zones(spec, providers).await;
    let (reservations_check, ours) = reservations(providers, inputs.handed_over).await;
    let needs = needs(spec, &ours, found_zones);
    match &providers.preflight {
        Some(cloud) => checks.extend(cloud.checks(&needs).await),
        None => checks.push(Check::not_checked(
            "cloud",
            format!(
                "this build has no {} preflight checks (credentials, permissions, quota)",
                spec.platform_name()
            ),
        )),
    }
    checks.push(zones_check);
    checks.push(reservations_check);
    checks.extend(bootstrap_ip(spec, &ours));
    checks.extend(kube_checks::run(inputs).await);
    Report::new(spec.platform_name(), checks)
}

/// Every zone the agent writes can be found (read access to the zones); the zones found.
async fn zones(spec: &ClusterSpec, providers: &Providers) -> (Check, Vec<Zone>) {
    const NAME: &str = "dns-zones";
    if let Some(why) = spec.user_managed_dns() {
        return (
            Check::pass(NAME, format!("DNS is the user's ({why}): no zone to read")),
            Vec::new(),
        );
    }
    let mut refs: Vec<bootstrap_cloud::ZoneRef> = crate::plan::records_of_interest(spec)
        .into_iter()
        .map(|(zone, _)| zone)
        .collect();
    refs.sort();
    refs.dedup();
    let mut found = Vec::new();
    let mut zones = Vec::new();
    for zone_ref in refs {
        match providers.dns.find_zone(&zone_ref).await {
            Ok(zone) => {
                found.push(format!("{zone_ref}: {}", zone.id));
                zones.push(zone);
            }
            Err(e) => {
                return (
                    Check::from_error(
                        NAME,
                        &e,
                        "create the zone, or give the agent read access to it (Route53 ListHostedZonesByName / Cloud DNS managedZones.list / Azure DNS zones read)",
                    ),
                    zones,
                );
            }
        }
    }
    (Check::pass(NAME, found.join("; ")), zones)
}

/// Our reservations can be listed; they are what the later checks count as ours.
async fn reservations(
    providers: &Providers,
    handed_over: &[Reservation],
) -> (Check, Vec<Reservation>) {
    const NAME: &str = "reservations";
    match providers.addresses.observe().await {
        Ok(mut ours) => {
            let line = format!(
                "{} of ours in the cloud, {} handed over to their load balancer",
                ours.len(),
                handed_over.len()
            );
            ours.extend(handed_over.iter().cloned());
            (Check::pass(NAME, line), ours)
        }
        Err(e) => (
            Check::from_error(
                NAME,
                &e,
                "give the agent permission to list addresses (ec2:DescribeAddresses and ec2:DescribeNetworkInterfaces / compute.addresses.list / Microsoft.Network/publicIPAddresses/read)",
            ),
            handed_over.to_vec(),
        ),
    }
}

/// What is still to be created, for the cloud's quota and subnet checks.
fn needs(spec: &ClusterSpec, ours: &[Reservation], zones: Vec<Zone>) -> Needs {
    let mut needs = Needs {
        zones,
        ..Needs::default()
    };
    for wanted in crate::plan::wanted_reservations(spec) {
        needs.address_scopes.insert(wanted.key.scope);
        if ours.iter().any(|r| r.key == wanted.key) {
            continue;
        }
        needs
            .to_reserve
            .push((wanted.key.clone(), wanted.name.clone()));
        match wanted.key.scope {
            bootstrap_cloud::Scope::Public => needs.public_addresses += 1,
            bootstrap_cloud::Scope::Private => {
                *needs
                    .private_addresses
                    .entry(wanted.key.placement.clone().unwrap_or_default())
                    .or_default() += 1;
            }
            // An alias IP or an IP configuration: no address quota of the region.
            bootstrap_cloud::Scope::Bootstrap => {}
        }
    }
    if let Platform::Aws(aws) = &spec.platform {
        let mut ids: Vec<String> = aws
            .public_subnets()
            .filter(|_| spec.publish.public_api())
            .chain(aws.private_subnets())
            .cloned()
            .collect();
        ids.sort();
        ids.dedup();
        needs.subnets = ids;
    }
    needs
}

/// PURE: the bootstrap IP is known, inside the machine network, and none of our reservations
/// holds it (DNS would otherwise send API clients to a load balancer as if to the bootstrap
/// host, and removing the bootstrap IP later would remove the load balancer's).
pub fn bootstrap_ip(spec: &ClusterSpec, ours: &[Reservation]) -> Vec<Check> {
    const NAME: &str = "bootstrap-ip";
    let Some(ip) = spec.bootstrap_ip else {
        return vec![Check::fail(
            NAME,
            "unknown: not given, not in the journal, and not detected",
            "pass --bootstrap-ip with the bootstrap host's private IP",
        )];
    };
    if let Some(r) = ours.iter().find(|r| r.ip == ip) {
        return vec![Check::fail(
            NAME,
            format!(
                "{ip} is the IP of our reservation {} ({}); the bootstrap host cannot have it",
                r.key, r.id
            ),
            "pass the bootstrap host's own private IP with --bootstrap-ip",
        )];
    }
    if spec.machine_networks.is_empty() {
        return vec![Check::warn(
            NAME,
            format!("{ip}: the install-config lists no machineNetwork to check it against"),
            None,
        )];
    }
    match spec.machine_networks.iter().find(|n| n.contains(ip)) {
        Some(net) => vec![Check::pass(
            NAME,
            format!("{ip} is in the machine network {net} and held by none of our reservations"),
        )],
        None => vec![Check::fail(
            NAME,
            format!(
                "{ip} is outside the machine network ({})",
                spec.machine_networks
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "pass the bootstrap host's private IP (in networking.machineNetwork) with --bootstrap-ip",
        )],
    }
}

#[cfg(test)]
mod tests;
