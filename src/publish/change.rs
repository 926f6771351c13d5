//! The steps of a scope change in order, each through the runner (observe, plan, journal,
//! apply), with the gate (External) or the drain and the admin's deletion (Internal) between
//! them.

use super::args::PublishArgs;
use super::scope::{Scope, live_unwanted, progressing};
use super::target::{DONE, change_of, require_run_done, target_spec};
use crate::assets::{ClusterSpec, Exposure};
use crate::cluster;
use crate::context::Context;
use crate::daemon::{DrainWait, GateSettings};
use crate::journal::{Journal, ScopeChange};
use crate::plan::{Observed, Plan, Step};
use crate::runner::{Kubernetes, Runner};
use anyhow::Result;
use std::time::Duration;

pub(super) async fn change(
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
    scope.done().await?;
    // What day 2 starts from next time, wherever it runs: the new scope, our reservations.
    let record = crate::day2::record::RunRecord::of(&ctx.journal.state, &ctx.spec.infra_id, to);
    crate::day2::record::write(&client, &record).await
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
