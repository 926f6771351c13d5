//! `plan`: every change the rest of `run` (or the named steps) would make, cloud and cluster.

use super::{Common, Output, RegistryArgs};
use crate::context::{Cloud, Reading};
use crate::output;
use crate::plan::{Plan, Step};
use anyhow::Result;

pub(super) async fn command(
    common: &Common,
    offline: bool,
    steps: &[Step],
    (templates, kubeconfig): (Option<&std::path::Path>, Option<&std::path::Path>),
    registry: &RegistryArgs,
    dns_seeding: crate::daemon::DnsSeeding,
) -> Result<()> {
    let cloud = if offline {
        Cloud::Offline
    } else {
        Cloud::Observe
    };
    let cloud_observed = !offline;
    let reading = Reading::new(common, cloud).await?;
    let (spec, recorded) = (&reading.spec, &reading.recorded);
    let (reg, gates) = registry.load()?;
    let selection = crate::capabilities::selection_for_spec(
        &reg,
        &gates,
        common.assets(),
        spec.capabilities.as_ref(),
    )?;
    let mut observed = reading.observe().await?;
    if cloud_observed {
        observed.address_pool = reading.providers.addresses.address_pool().await?;
    }
    let (mut kube, _) = crate::runner::kube_wants(spec, &observed, Some(&selection), templates)?;
    let planning_run = steps.is_empty();
    let steps = if planning_run {
        crate::machine::remaining_steps(recorded.run_step)
    } else {
        steps.to_vec()
    };
    // `run` has yet to seed: plan its seeding as it will do it (the step commands seed all
    // at once, as the seed describes).
    let seeding_note = (planning_run && steps.contains(&Step::SeedDns))
        .then(|| dns_seeding.plan_as_run(&mut observed));
    if cloud_observed && steps.contains(&Step::Reserve) {
        crate::adopt::require_complete(spec, &observed)?;
    }
    if let Some(kubeconfig) = kubeconfig.filter(|_| steps.contains(&Step::ApplyServices)) {
        let client = crate::cluster::client(kubeconfig).await?;
        kube.live_addresses = Some(crate::runner::live_addresses(&client, spec, &kube).await?);
        kube.replacing = recorded.replacing.clone();
    }
    let mut plan = Plan::calculate_with(spec, &observed, &kube, &steps, recorded.generation);
    plan.notes.extend(seeding_note);
    if let Some(step) = recorded.run_step {
        plan.notes.push(format!(
            "`run` is at step {step:?}; planning {:?}",
            steps.iter().map(|s| s.name()).collect::<Vec<_>>()
        ));
    }
    match common.output {
        Output::Text => output::write_stdout(&plan.to_text(&observed))?,
        other => output::data(other, &plan)?,
    }
    // Printed first, so the plan shows what the pool lacks; then refused as the input it is.
    match plan.public_ipv4_pool.as_ref().and_then(|p| p.shortage()) {
        Some(problem) => Err(crate::error::InputError::new(
            common.assets().join(crate::assets::CLUSTER_CONFIG),
            "data.install-config: platform.aws.publicIpv4Pool",
            problem,
        )
        .into()),
        None => Ok(()),
    }
}

/// `--step` values: the steps' kebab-case names.
pub(super) fn parse_step(name: &str) -> Result<Step, String> {
    Step::parse(name).ok_or_else(|| {
        let names: Vec<String> = Step::ALL
            .iter()
            .map(|s| {
                serde_json::to_value(s)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            })
            .collect();
        format!("expected one of {}", names.join(", "))
    })
}
