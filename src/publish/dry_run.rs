//! `publish --dry-run`: the whole change planned against the cloud as it is, nothing changed.

use super::args::PublishArgs;
use super::target::{change_of, require_run_done, revert_command, stages, target_spec};
use crate::assets::Exposure;
use crate::context::{Cloud, Inputs, Reading};
use crate::plan::Plan;
use anyhow::Result;

/// `publish --dry-run`: every change of the scope change, planned against the cloud as it is.
pub(super) async fn dry_run(args: &PublishArgs, inputs: &Inputs<'_>) -> Result<()> {
    let reading = Reading::from_inputs(&args.common, inputs, Cloud::Observe).await?;
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
