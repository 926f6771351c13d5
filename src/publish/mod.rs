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
//!
//! `target`: the change asked for (from, to), the spec planned for, what reverts it;
//! `change`: its steps in order, through the runner; `scope`: the change under way as the
//! journal, systemd and the cluster are told it; `dry_run`: `--dry-run`; `args`: the flags.

mod args;
mod change;
mod dry_run;
mod scope;
mod target;

pub use args::PublishArgs;
pub use target::{change_of, revert_command};

use crate::cluster;
use crate::context::{Context, Inputs};
use crate::day2;
use crate::notify;
use anyhow::Result;

/// `publish`: the change, journaled and resumable; `--dry-run` prints it. Its inputs come
/// from the asset dir, else from the cluster (see `day2`).
pub async fn command(args: &PublishArgs) -> Result<()> {
    let Some(dir) = args.common.asset_dir_if_any() else {
        return from_cluster(args).await;
    };
    let dir = crate::assets::AssetDir(dir);
    let inputs = Inputs {
        source: &dir,
        state_dir: args.common.state.dir(),
        fallback: None,
    };
    if args.dry_run {
        return dry_run::dry_run(args, &inputs).await;
    }
    let (mut ctx, wire) = open(args, &inputs).await?;
    change(&mut ctx, args, wire.as_ref()).await
}

/// Day 2 from an admin's machine: the inputs and what `run` left read from the cluster, the
/// journal in the admin's state dir, the change under the cluster's Lease.
async fn from_cluster(args: &PublishArgs) -> Result<()> {
    let cluster = day2::read(
        &args.kube.kubeconfig,
        args.common.state.state_dir.as_deref(),
    )
    .await?;
    let started = cluster.record.journal(cluster.spec.publish.api());
    let inputs = Inputs {
        source: &cluster.docs,
        state_dir: &cluster.state_dir,
        fallback: Some(&started),
    };
    if args.dry_run {
        return dry_run::dry_run(args, &inputs).await;
    }
    crate::validate::templates_render(&cluster.spec, args.kube.templates.as_deref())?;
    let holder = day2::lease::holder_identity(&cluster.state_dir);
    let lease = day2::lease::acquire(&cluster.client, &holder).await?;
    let outcome = async {
        let seeded = cluster.seed_journal()?;
        println!(
            "publish: inputs from the cluster, journal in {}{}",
            cluster.state_dir.display(),
            if seeded {
                " (started from what `run` left)"
            } else {
                ""
            }
        );
        let (mut ctx, wire) = open(args, &inputs).await?;
        if seeded {
            day2::FromCluster::confirm(&mut ctx).await?;
        }
        change(&mut ctx, args, wire.as_ref()).await
    }
    .await;
    let released = lease.release().await;
    outcome?;
    released
}

async fn open(
    args: &PublishArgs,
    inputs: &Inputs<'_>,
) -> Result<(Context, Option<cluster::wire::WireProof>)> {
    let kube_args = &args.kube;
    let (ctx, ((), wire)) = Context::open_from(
        &args.common,
        inputs,
        &[],
        |_| {
            cluster::read_kubeconfig(&kube_args.kubeconfig)?;
            Ok(())
        },
        |spec| crate::validate::templates_render(spec, kube_args.templates.as_deref()),
        async |_, _, _| args.wire.proof(&kube_args.kubeconfig).await,
    )
    .await?;
    Ok((ctx, wire))
}

/// The change, its failure journaled and told to systemd.
async fn change(
    ctx: &mut Context,
    args: &PublishArgs,
    wire: Option<&cluster::wire::WireProof>,
) -> Result<()> {
    let outcome = change::change(ctx, args, wire).await;
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
