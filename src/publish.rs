//! `publish --scope External|Internal`: changes the API's publishing scope on a cluster `run`
//! made, after the ingress mutable-publishing-scope enhancement
//! (openshift/enhancements enhancements/ingress/mutable-publishing-scope.md): the state of the
//! change is a condition `Progressing` (reason `ScopeChanged`, with the command that reverts
//! it) in `status` and in ConfigMap `kube-system/bootstrap-agent`, and the disruptive step
//! (deleting a Service clients may still use) waits for the admin unless `--auto-delete`.
//!
//! The planner does the work: the spec is given the target scope (and the prior one, so that
//! what was published is still observed), and the steps are the runner's, each observing
//! first, so a re-run resumes where a crash stopped and a re-run after success changes nothing.
//!
//! - Internal -> External: reserve (as `run`: names, tags, the user's adopted), apply the
//!   Services (the external one is new; the internal ones are applied unchanged), the gate
//!   (the load balancer holds the reserved IPs, a ready endpoint, the proof on the wire), and
//!   only then the public `api` record (progressive DNS: an IP joins once it serves).
//! - External -> Internal: withdraw the public `api` values, drain one TTL, delete the external
//!   Service (the admin, or `--auto-delete`), wait until the cloud lets go of the public IPs,
//!   release ours; the user's stay.
//!
//! No cloud's in-place annotation is used: the external and the internal load balancers are
//! separate Services on every cloud (the internal one keeps serving `api-int` and the private
//! `api` throughout), so the change adds or removes the external Service and never flips one.
//! Flipping one would gain nothing and cost the gate: the address changes anyway (public to
//! private), and on AWS the AWS Load Balancer Controller replaces an NLB whose scheme changed
//! by deleting it first and creating the new one after (kubernetes-sigs/aws-load-balancer-
//! controller pkg/deploy/elbv2/load_balancer_synthesizer.go: `isSDKLoadBalancerRequiresReplacement`
//! on Type or Scheme; unmatched load balancers are deleted before the unmatched resources are
//! created), so clients would meet no load balancer at all for a while.

use crate::assets::{ClusterSpec, Exposure};
use crate::cluster;
use crate::context::{Cloud, Common, Context, Reading};
use crate::error::AwaitingDeletion;
use crate::daemon::{DrainWait, GateSettings, KubeArgs};
use crate::journal::{Condition, Journal, JournalState, ScopeChange};
use crate::notify;
use crate::options;
use crate::plan::{Observed, Plan, Step};
use crate::runner::{Kubernetes, Runner};
use anyhow::{Context as _, Result, bail};
use clap::Args;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct PublishArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub kube: KubeArgs,
    /// The API's scope: External (a public load balancer and the public `api` record) or
    /// Internal (the internal load balancer and the private records only).
    #[arg(long, env = "BOOTSTRAP_AGENT_PUBLISH_SCOPE",
          value_parser = options::one_of(Exposure::External))]
    pub scope: Exposure,
    /// Going Internal: delete our external Service once the public record is gone and
    /// drained, instead of waiting for an admin to delete it (the enhancement's
    /// auto-delete-load-balancer annotation).
    #[arg(long, env = "BOOTSTRAP_AGENT_AUTO_DELETE", value_parser = options::switch())]
    pub auto_delete: bool,
    /// Print every change the scope change would make, then stop (observes the cloud).
    #[arg(long)]
    pub dry_run: bool,
    /// Deadline of the gate (External), and of the wait for an admin to delete the external
    /// Service (Internal, without --auto-delete); past it, exit 4 and a re-run resumes.
    #[arg(long, env = "BOOTSTRAP_AGENT_GATE_TIMEOUT", default_value = "30m", allow_hyphen_values = true,
          value_parser = options::checked(options::deadline, Duration::ZERO))]
    pub gate_timeout: Duration,
    /// Going Internal: after the public `api` values left DNS, wait this long before their
    /// load balancer may go, so cached answers expire while it still serves: `ttl` (the TTL
    /// the record carried) or a duration (0s: none).
    #[arg(long, env = "BOOTSTRAP_AGENT_DRAIN_WAIT", default_value = "ttl", allow_hyphen_values = true,
          value_parser = options::checked(DrainWait::parse, DrainWait::RecordTtl))]
    pub drain_wait: DrainWait,
    #[command(flatten)]
    pub wire: cluster::wire::WireArgs,
}

/// The change `scope` makes from what the journal recorded: (from, to). A change to the same
/// scope that is under way resumes with its `from`; anything else starts from where the
/// cluster is now (the last change's target, else the install-config's), so asking for the
/// previous scope mid-change reverts it.
pub fn change_of(
    spec: &ClusterSpec,
    recorded: &JournalState,
    scope: Exposure,
) -> (Exposure, Exposure) {
    match &recorded.scope_change {
        Some(c) if c.to == scope && c.phase != DONE => (c.from, c.to),
        // The context gave the spec the last change's target (`context::load`).
        _ => (spec.publish.api(), scope),
    }
}

/// The spec planned for: the target scope, the prior one observed too, no bootstrap host.
fn target_spec(spec: &ClusterSpec, from: Exposure, to: Exposure) -> ClusterSpec {
    let mut spec = spec.clone();
    let base = spec.prior_publish.unwrap_or(spec.publish);
    spec.prior_publish = Some(base.with_api(from));
    spec.publish = base.with_api(to);
    // A cluster `run` completed: the bootstrap host has left DNS for good.
    spec.bootstrap_ip = None;
    spec
}

const DONE: &str = "done";

/// The steps of a change to `to`, in order (the gate and the drain sit between them).
fn stages(to: Exposure) -> &'static [Step] {
    match to {
        Exposure::External => &[Step::Reserve, Step::ApplyServices, Step::SeedDns],
        Exposure::Internal => &[Step::Withdraw, Step::Unpublish, Step::SeedDns],
    }
}

/// The command that reverts a change to `to` (the enhancement's "Alternatively, you can revert").
pub fn revert_command(from: Exposure) -> String {
    format!("bootstrap-agent publish --scope {from}")
}

/// The condition while the change is under way: `Progressing=True`, reason `ScopeChanged`.
fn progressing(from: Exposure, to: Exposure, doing: &str) -> Condition {
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

/// `publish`: the change, journaled and resumable; `--dry-run` prints it.
pub async fn command(args: &PublishArgs) -> Result<()> {
    if args.dry_run {
        return dry_run(args).await;
    }
    let kube_args = &args.kube;
    let (mut ctx, ((), wire)) = Context::open_prepared(
        &args.common,
        &[],
        |_| {
            cluster::read_kubeconfig(&kube_args.kubeconfig)?;
            Ok(())
        },
        |spec| crate::validate::templates_render(spec, kube_args.templates.as_deref()),
        async |_, _, _| args.wire.proof(&kube_args.kubeconfig).await,
    )
    .await?;
    let outcome = change(&mut ctx, args, wire.as_ref()).await;
    if let Err(e) = &outcome {
        ctx.journal.state.last_error = Some(crate::error::render_chain(e));
        ctx.journal.save()?;
        notify::status(&format!(
            "publish failed: {}",
            crate::error::render_chain(e)
        ));
    }
    outcome
}

fn require_run_done(state: &JournalState) -> Result<()> {
    if state.run_step != Some(crate::machine::State::Done) {
        bail!(crate::error::InputError::new(
            std::path::Path::new("--state-dir"),
            "run_step",
            format!(
                "is {}; expected done: `publish` changes the scope of a cluster `run` completed (finish `run` first)",
                state.run_step.map_or("not started", |s| s.name())
            ),
        ));
    }
    Ok(())
}

async fn change(
    ctx: &mut Context,
    args: &PublishArgs,
    wire: Option<&cluster::wire::WireProof>,
) -> Result<()> {
    require_run_done(&ctx.journal.state)?;
    let (from, to) = change_of(&ctx.spec, &ctx.journal.state, args.scope);
    let spec = target_spec(&ctx.spec, from, to);
    let resumed = ctx
        .journal
        .state
        .scope_change
        .as_ref()
        .is_some_and(|c| c.from == from && c.to == to && c.phase != DONE);
    if from == to {
        println!("the API is published {to} already: only what is missing is done");
    }
    let client = cluster::client(&args.kube.kubeconfig).await?;
    if !resumed && from != to {
        ctx.journal.state.scope_change = Some(ScopeChange {
            from,
            to,
            phase: "started".into(),
            drain_until: None,
            condition: progressing(from, to, "started"),
        });
        ctx.journal.save()?;
    }
    let cloud = (&ctx.providers, ctx.step_timeout);
    let mut scope = Scope {
        active: from != to,
        journal: &mut ctx.journal,
        client: &client,
        from,
        to,
    };
    let kube = Kubernetes {
        client: &client,
        capabilities: None,
        overrides: None,
        templates: args.kube.templates.as_deref(),
        wait: args.common.step_timeout,
    };
    match to {
        Exposure::External => {
            scope.phase("reserve", "reserving the public IP(s)").await?;
            // Progressive DNS: the public IPs join the public `api` record once they serve.
            crate::daemon::choose_seeding(scope.journal, crate::daemon::DnsSeeding::Progressive)?;
            step(&spec, scope.journal, cloud, None, Step::Reserve).await?;
            scope
                .phase("apply-services", "applying the external Service")
                .await?;
            step(
                &spec,
                scope.journal,
                cloud,
                Some(&kube),
                Step::ApplyServices,
            )
            .await?;
            scope
                .phase(
                    "gate",
                    "waiting until the external load balancer holds the reserved IP(s), has a ready endpoint and passes the proof on the wire; only then does the public `api` record get them",
                )
                .await?;
            // A served IP not in DNS must prove itself again (its load balancer may be gone
            // since: a scope change to Internal and back).
            let now = crate::runner::observe(&spec, cloud.0, &scope.journal.state)
                .await?
                .observed;
            let in_dns: std::collections::BTreeSet<std::net::IpAddr> = now
                .records
                .iter()
                .filter_map(|r| r.current.as_ref())
                .flat_map(|c| c.values.iter().copied())
                .collect();
            if let Some(serving) = scope.journal.state.serving.as_mut() {
                serving.retain(|ip| in_dns.contains(ip));
                scope.journal.save()?;
            }
            let settings = GateSettings {
                step_timeout: args.common.step_timeout,
                gate_timeout: args.gate_timeout,
                wire,
            };
            let report =
                crate::daemon::gate(&spec, scope.journal, cloud.0, &settings, &client).await?;
            tracing::info!(elapsed_ms = %report.elapsed_ms, "publish: the gate passed");
            step(&spec, scope.journal, cloud, None, Step::SeedDns).await?;
        }
        Exposure::Internal => {
            scope
                .phase("withdraw", "removing the public `api` record")
                .await?;
            let before = crate::runner::observe(&spec, cloud.0, &scope.journal.state)
                .await?
                .observed;
            let ttl = withdrawn_ttl(&spec, &before);
            step(&spec, scope.journal, cloud, None, Step::Withdraw).await?;
            let wait = match args.drain_wait {
                DrainWait::Fixed(d) => d,
                DrainWait::RecordTtl => ttl,
            };
            scope
                .phase(
                    "drain",
                    "draining cached answers of the public `api` record",
                )
                .await?;
            scope.drain(wait).await?;
            let doomed = live_unwanted(&spec, &kube, &before).await?;
            if !doomed.is_empty() && !args.auto_delete {
                scope
                    .await_deletion(&spec, &kube, &before, &doomed, args.gate_timeout)
                    .await?;
            }
            scope
                .phase(
                    "unpublish",
                    "deleting the external Service and releasing the public IP(s) once the cloud lets go of them",
                )
                .await?;
            let report = step(&spec, scope.journal, cloud, Some(&kube), Step::Unpublish).await?;
            for note in report
                .plan
                .notes
                .iter()
                .filter(|n| n.starts_with("unpublish:"))
            {
                println!("note: {note}");
            }
            step(&spec, scope.journal, cloud, None, Step::SeedDns).await?;
        }
    }
    scope.done().await
}

/// The TTL of the records the withdrawal changes (the drain), else the TTL we write.
fn withdrawn_ttl(spec: &ClusterSpec, before: &Observed) -> Duration {
    let plan = Plan::calculate(spec, before, &[Step::Withdraw], 0);
    let ttl = before
        .records
        .iter()
        .filter(|r| {
            plan.changes.iter().any(|c| {
                matches!(c, crate::plan::Change::RemoveRecordValues { zone, record, .. }
                    if *zone == r.zone && *record == r.key)
            })
        })
        .filter_map(|r| r.current.as_ref().map(|c| c.ttl))
        .max()
        .unwrap_or(spec.record_ttl);
    Duration::from_secs(u64::from(ttl))
}

/// Our Services the target scope no longer wants, as the cluster holds them: `ns/name`.
async fn live_unwanted(
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

/// Runs one step of the change through the runner, printing its plan as the stage commands do.
async fn step(
    spec: &ClusterSpec,
    journal: &mut Journal,
    (providers, step_timeout): (&crate::providers::Providers, Duration),
    kube: Option<&Kubernetes<'_>>,
    step: Step,
) -> Result<crate::runner::StepReport> {
    let report = Runner {
        spec,
        journal,
        providers,
        kube,
        step_timeout,
    }
    .run(step)
    .await?;
    let text = report.plan.to_text(&report.after);
    let text: String = text
        .lines()
        .filter(|l| !l.starts_with("note: ") && !l.starts_with("network: "))
        .map(|l| format!("{l}\n"))
        .collect();
    print!("{text}");
    println!(
        "publish {}: done, {} mutating change(s)",
        report.step, report.mutations
    );
    std::io::Write::flush(&mut std::io::stdout())?;
    Ok(report)
}

/// The change under way, told to the journal, systemd and the cluster as it goes.
struct Scope<'a> {
    /// Whether there is a change to tell (a re-run for the scope the cluster has tells none).
    active: bool,
    journal: &'a mut Journal,
    client: &'a kube::Client,
    from: Exposure,
    to: Exposure,
}

impl Scope<'_> {
    /// Records the phase and its condition (journal first, then the ConfigMap).
    async fn phase(&mut self, phase: &str, doing: &str) -> Result<()> {
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
    async fn drain(&mut self, wait: Duration) -> Result<()> {
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
    async fn await_deletion(
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

    async fn done(&mut self) -> Result<()> {
        if !self.active {
            return Ok(());
        }
        self.journal.state.last_error = None;
        self.set(DONE, settled(self.to)).await?;
        println!("publish: the API is published {}", self.to);
        Ok(())
    }
}

/// `publish --dry-run`: every change of the scope change, planned against the cloud as it is.
async fn dry_run(args: &PublishArgs) -> Result<()> {
    let reading = Reading::new(&args.common, Cloud::Observe).await?;
    require_run_done(&reading.recorded)?;
    let (from, to) = change_of(&reading.spec, &reading.recorded, args.scope);
    let spec = target_spec(&reading.spec, from, to);
    let mut observed = crate::runner::observe(&spec, &reading.providers, &reading.recorded)
        .await?
        .observed;
    observed.serving.get_or_insert_with(Default::default);
    let (mut wants, _) =
        crate::runner::kube_wants(&spec, &observed, None, args.kube.templates.as_deref())?;
    let unwanted =
        crate::runner::unwanted_services(&spec, &observed, args.kube.templates.as_deref())?;
    let generation = reading.recorded.generation;
    let mut plan = Plan::calculate_with(&spec, &observed, &wants, &stages(to)[..1], generation);
    wants = match to {
        Exposure::External => wants,
        Exposure::Internal => unwanted,
    };
    let rest = Plan::calculate_with(&spec, &observed, &wants, &stages(to)[1..], generation);
    plan.changes.extend(rest.changes);
    plan.notes.extend(
        rest.notes
            .into_iter()
            .filter(|n| n.starts_with("unpublish:")),
    );
    plan.notes.push(match to {
        Exposure::External => "publish External: the public `api` record gets the reserved public IP(s) only once the gate proves their load balancer serves them (ingress holds them, a ready endpoint, the proof on the wire)".to_string(),
        Exposure::Internal => format!(
            "publish Internal: after the public `api` values leave DNS, one TTL of drain; then the external Service is deleted by you ({}), or by the agent with --auto-delete, and each public IP of ours is released once the cloud lets go of it",
            "`oc -n openshift-kube-apiserver delete svc/external-lb`"
        ),
    });
    if from == to {
        plan.notes.push(format!(
            "the API is published {to} already: nothing to change but what is missing"
        ));
    }
    print!("{}", plan.to_text(&observed));
    println!(
        "publish --scope {to} (from {from}): {} change(s); revert with `{}`",
        plan.changes.len(),
        revert_command(from)
    );
    Ok(())
}
