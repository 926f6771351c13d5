//! `bootstrap-agent permissions`: what the agent's calls need, printed in each cloud's own
//! policy format from the one table per cloud (`bootstrap_cloud::permissions`), the table
//! preflight asks from. Per command (`run`, `teardown-all`, `publish-lb-ips`,
//! `capabilities-apply`, `publish`), scoped by the assets where the API allows it: AWS hosted zones by
//! id, ReleaseAddress and DeleteNetworkInterface on resources carrying our ownership tag,
//! CreateTags only on create, AssumeRole on the `hostedZoneRole`; GCP per project; Azure
//! assignable to the resource groups the agent touches. `--kube` prints the Kubernetes
//! ClusterRole instead; `--for` the IAM policy of the aws-load-balancer-operator or of the
//! AWS Load Balancer Controller it runs (`olm`: their own CredentialsRequests, as data).
//!
//! One file per cloud (`aws`, `gcp`, `azure`) turns its table into that cloud's document;
//! `cluster_role`: the ClusterRole. Here: the command, the choice of the cloud, and the
//! generated `docs/permissions.md`.

mod aws;
mod azure;
mod cluster_role;
mod gcp;
pub mod olm;

pub use aws::{AwsScoping, aws_policy};
pub use azure::{azure_role, azure_writes, written_record_types};
pub use cluster_role::kube_cluster_role;
pub use gcp::gcp_role;

use crate::assets::ClusterSpec;
use crate::output::{self, Output};
use anyhow::{Context, Result};
use bootstrap_cloud::permissions::{self as table, AwsCondition, AwsResource, Command};
use serde_json::Value;
use std::path::PathBuf;

/// `permissions` arguments.
#[derive(Debug, clap::Args)]
pub struct PermissionsArgs {
    /// The cloud whose policy to print (the assets' platform when --assets is given).
    #[arg(long, value_parser = ["aws", "gcp", "azure"], required_unless_present_any = ["assets", "kube", "for_"])]
    pub cloud: Option<String>,
    /// Scope the policy to these assets (zones, resource groups, projects, the ownership tag).
    /// Without it: every action any plan may need, unscoped where the scope comes from assets.
    #[arg(long, env = "BOOTSTRAP_AGENT_ASSETS")]
    pub assets: Option<PathBuf>,
    /// Commands to cover, comma separated: run, teardown-all, publish-lb-ips,
    /// capabilities-apply, publish. Default: all of them.
    #[arg(long, value_delimiter = ',', value_parser = parse_command)]
    pub command: Vec<Command>,
    /// GCP and Azure: as `run --bootstrap-second-address` (`off` leaves out what the bootstrap
    /// host's second address needs).
    #[arg(long, default_value = "host",
          value_parser = crate::options::one_of(crate::assets::SecondAddress::Host))]
    pub bootstrap_second_address: crate::assets::SecondAddress,
    /// Print the Kubernetes ClusterRole the agent's cluster calls need instead.
    #[arg(long, conflicts_with = "cloud")]
    pub kube: bool,
    /// AWS: print the IAM policy of what `manifests aws-load-balancer-controller` brings
    /// instead of the agent's: the operator's, or the controller's it runs (from the
    /// operator's own CredentialsRequests).
    #[arg(long = "for", conflicts_with_all = ["kube", "command", "assets"],
          value_parser = crate::options::one_of(olm::Whose::AwsLoadBalancerController))]
    pub for_: Option<olm::Whose>,
    #[arg(long, default_value = "json", value_parser = crate::options::one_of(Output::Json))]
    pub output: Output,
}

fn parse_command(text: &str) -> Result<Command, String> {
    Command::parse(text).ok_or_else(|| {
        format!(
            "expected one of run, teardown-all, publish-lb-ips, capabilities-apply, publish; got {text:?}"
        )
    })
}

/// The handler.
pub fn command(args: &PermissionsArgs) -> Result<()> {
    let commands = if args.command.is_empty() {
        Command::ALL.to_vec()
    } else {
        args.command.clone()
    };
    let spec = match &args.assets {
        Some(dir) => Some(crate::assets::load(dir)?),
        None => None,
    }
    .map(|mut spec| {
        spec.second_bootstrap_address = args.bootstrap_second_address;
        spec
    });
    if let Some(whose) = args.for_ {
        if let Some(cloud) = args.cloud.as_deref().filter(|c| *c != "aws") {
            return Err(crate::error::InputError::new(
                "--for (no environment variable)",
                format!("--cloud {cloud}"),
                "the aws-load-balancer-operator and its controller run on AWS only; expected --cloud aws",
            )
            .into());
        }
        return output::data(args.output, &olm::policy(whose)?);
    }
    let document = if args.kube {
        kube_cluster_role(&commands)
    } else {
        let cloud = match (&args.cloud, &spec) {
            (Some(cloud), _) => cloud.clone(),
            (None, Some(spec)) => spec.platform.name().to_string(),
            (None, None) => anyhow::bail!("--cloud or --assets is required"),
        };
        document(&cloud, spec.as_ref(), &commands)?
    };
    output::data(args.output, &document)
}

/// The scopes of the reservations the plan may make. The bootstrap host's second address
/// counts whenever the spec wants it, even where no bootstrap IP is known (a role is printed
/// before the host exists).
fn planned_scopes(spec: &ClusterSpec) -> std::collections::BTreeSet<bootstrap_cloud::Scope> {
    let mut spec = spec.clone();
    spec.bootstrap_ip
        .get_or_insert(std::net::IpAddr::from([0, 0, 0, 0]));
    crate::plan::wanted_reservations(&spec)
        .iter()
        .map(|r| r.key.scope)
        .collect()
}

/// PURE: the policy document of `cloud` for `spec` (None: any plan) and `commands`.
pub fn document(cloud: &str, spec: Option<&ClusterSpec>, commands: &[Command]) -> Result<Value> {
    if let Some(spec) = spec
        && spec.platform.name() != cloud
    {
        anyhow::bail!(
            "the assets are for platform {}, not {cloud}",
            spec.platform.name()
        );
    }
    match cloud {
        "aws" => Ok(aws_policy(&AwsScoping::of(spec), commands)),
        "gcp" => Ok(gcp_role(spec, commands)),
        "azure" => Ok(azure_role(spec, commands)),
        other => anyhow::bail!("no such cloud {other:?}; expected aws, gcp or azure"),
    }
}

/// `docs/permissions.md`: the AWS table, then each cloud's document for its example asset dir
/// (all commands, and `teardown --all` alone) and the ClusterRole. Written by
/// `cargo run -p xtask -- gen-docs`, checked by `gen-docs --check`.
pub fn markdown(fixtures: &std::path::Path) -> Result<String> {
    let mut out = String::from(
        "# Permissions\n\n\
<!-- Generated by `cargo run -p xtask -- gen-docs` from the tables in cloud/src/permissions.rs and src/permissions/; do not edit. -->\n\n\
What the agent's calls need, per cloud, from the one table per cloud that preflight also asks\n\
from. `bootstrap-agent permissions --cloud aws|gcp|azure --assets DIR [--command ...]` prints\n\
them for your assets; `--kube` prints the Kubernetes ClusterRole. Below: the documents for\n\
the example asset dirs in `tests/fixtures/assets`.\n\n\
## AWS: every action, the calls that need it and how a missing one shows\n\n\
| action | commands | needed when | scope | calls | a missing one |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for g in table::AWS {
        let commands: Vec<&str> = g.commands.iter().map(|c| c.as_str()).collect();
        let scope = match (g.resource, g.condition) {
            (_, AwsCondition::OwnedTag) => "our ownership tag (aws:ResourceTag)",
            (_, AwsCondition::CreateAction) => "ec2:CreateAction (on create only)",
            (AwsResource::HostedZones, _) => "the written hosted zones, by id",
            (AwsResource::Changes, _) => "change/*",
            (AwsResource::ZoneRole, _) => "the hostedZoneRole",
            _ => "*",
        };
        let shows = match g.proof {
            table::Proof::Preflight(line) => format!("preflight `{line}` fails"),
            table::Proof::Step(Some(line)) => {
                format!("the step fails naming it (preflight `{line}` says it cannot ask)")
            }
            table::Proof::Step(None) => "the step fails naming it".to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {} | {:?} | {scope} | {} | {shows} |\n",
            g.action,
            commands.join(", "),
            g.when,
            g.calls
        ));
    }
    for (title, command, json) in generated_docs(fixtures)? {
        out.push_str(&format!(
            "\n## {title}\n\n`{command}`\n\n```json\n{json}\n```\n"
        ));
    }
    Ok(out)
}

/// The documents `docs/permissions.md` shows: each cloud's for its example asset dir, and the
/// ClusterRole, as (title, command line, JSON).
pub fn generated_docs(fixtures: &std::path::Path) -> Result<Vec<(String, String, String)>> {
    let mut out = Vec::new();
    for cloud in ["aws", "gcp", "azure"] {
        let dir = fixtures.join(cloud);
        let mut spec = crate::assets::load(&dir)
            .with_context(|| format!("loading the example assets {}", dir.display()))?;
        spec.second_bootstrap_address = crate::assets::SecondAddress::Host;
        for (label, commands) in [
            ("all commands", Command::ALL.to_vec()),
            ("`teardown --all` only", vec![Command::TeardownAll]),
        ] {
            let doc = document(cloud, Some(&spec), &commands)?;
            let flag = if commands.len() == 1 {
                " --command teardown-all"
            } else {
                ""
            };
            out.push((
                format!("{cloud}, {label}"),
                format!(
                    "bootstrap-agent permissions --cloud {cloud} --assets tests/fixtures/assets/{cloud}{flag}"
                ),
                serde_json::to_string_pretty(&doc)?,
            ));
        }
    }
    out.push((
        "Kubernetes".into(),
        "bootstrap-agent permissions --kube".into(),
        serde_json::to_string_pretty(&kube_cluster_role(&Command::ALL))?,
    ));
    // Beside ours: what `manifests aws-load-balancer-controller` brings needs these.
    for (title, flag, whose) in [
        (
            "AWS Load Balancer Controller (the operator's CredentialsRequest for it)",
            "aws-load-balancer-controller",
            olm::Whose::AwsLoadBalancerController,
        ),
        (
            "aws-load-balancer-operator (its own CredentialsRequest)",
            "aws-load-balancer-operator",
            olm::Whose::AwsLoadBalancerOperator,
        ),
    ] {
        out.push((
            title.into(),
            format!("bootstrap-agent permissions --for {flag}"),
            serde_json::to_string_pretty(&olm::policy(whose)?)?,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
