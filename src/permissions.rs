//! `bootstrap-agent permissions`: what the agent's calls need, printed in each cloud's own
//! policy format from the one table per cloud (`bootstrap_cloud::permissions`), the table
//! preflight asks from. Per command (`run`, `teardown-all`, `publish-lb-ips`,
//! `capabilities-apply`, `publish`), scoped by the assets where the API allows it: AWS hosted zones by
//! id, ReleaseAddress and DeleteNetworkInterface on resources carrying our ownership tag,
//! CreateTags only on create, AssumeRole on the `hostedZoneRole`; GCP per project; Azure
//! assignable to the resource groups the agent touches. `--kube` prints the Kubernetes
//! ClusterRole instead.

use crate::assets::{ClusterSpec, Credentials, Platform};
use crate::output::{self, Output};
use anyhow::{Context, Result};
use bootstrap_cloud::Scope;
use bootstrap_cloud::permissions::{
    self as table, AwsCondition, AwsPlan, AwsResource, AzurePlan, Command,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// `permissions` arguments.
#[derive(Debug, clap::Args)]
pub struct PermissionsArgs {
    /// The cloud whose policy to print (the assets' platform when --assets is given).
    #[arg(long, value_parser = ["aws", "gcp", "azure"], required_unless_present_any = ["assets", "kube"])]
    pub cloud: Option<String>,
    /// Scope the policy to these assets (zones, resource groups, projects, the ownership tag).
    /// Without it: every action any plan may need, unscoped where the scope comes from assets.
    #[arg(long, env = "BOOTSTRAP_AGENT_ASSETS")]
    pub assets: Option<PathBuf>,
    /// Commands to cover, comma separated: run, teardown-all, publish-lb-ips,
    /// capabilities-apply, publish. Default: all of them.
    #[arg(long, value_delimiter = ',', value_parser = parse_command)]
    pub command: Vec<Command>,
    /// Print the Kubernetes ClusterRole the agent's cluster calls need instead.
    #[arg(long, conflicts_with = "cloud")]
    pub kube: bool,
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
    };
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

// ---------------------------------------------------------------- AWS

/// What the AWS policy is scoped by.
#[derive(Debug, Clone)]
pub struct AwsScoping {
    pub plan: AwsPlan,
    pub partition: &'static str,
    pub region: String,
    pub infra_id: String,
}

impl AwsScoping {
    /// From the assets, or (None) every action any plan may need.
    pub fn of(spec: Option<&ClusterSpec>) -> Self {
        let Some(spec) = spec else {
            return Self {
                plan: AwsPlan {
                    public_addresses: true,
                    private_addresses: true,
                    pool: true,
                    zones: vec![None],
                    zone_by_tags: true,
                    private_zone_written: true,
                    zone_role: None,
                },
                partition: "aws",
                region: "*".into(),
                infra_id: "*".into(),
            };
        };
        let reservations = crate::plan::wanted_reservations(spec);
        let scoped = |scope| reservations.iter().any(|r| r.key.scope == scope);
        let (region, pool) = match &spec.platform {
            Platform::Aws(aws) => (aws.region.clone(), aws.public_ipv4_pool.is_some()),
            _ => ("*".into(), false),
        };
        let role = spec.zones.private_zone_role.clone();
        let mut zones: Vec<bootstrap_cloud::ZoneRef> = Vec::new();
        for (zone, _) in crate::plan::records_of_interest(spec) {
            if zone.private && role.is_some() {
                continue;
            }
            if !zones.iter().any(|z| z.private == zone.private) {
                zones.push(zone);
            }
        }
        let partition = if region.starts_with("cn-") {
            "aws-cn"
        } else if region.starts_with("us-gov-") {
            "aws-us-gov"
        } else {
            "aws"
        };
        Self {
            plan: AwsPlan {
                public_addresses: scoped(Scope::Public),
                private_addresses: scoped(Scope::Private),
                pool: pool && scoped(Scope::Public),
                zone_by_tags: zones.iter().any(|z| z.id.is_none() && !z.tags.is_empty()),
                private_zone_written: zones.iter().any(|z| z.private),
                zones: zones
                    .iter()
                    .map(|z| {
                        z.id.as_ref()
                            .map(|id| id.trim_start_matches("/hostedzone/").to_string())
                    })
                    .collect(),
                zone_role: role,
            },
            partition,
            region,
            infra_id: spec.infra_id.clone(),
        }
    }
}

/// One statement of the policy being built.
struct Statement {
    sid: &'static str,
    actions: Vec<&'static str>,
    resources: Vec<String>,
    condition: Option<Value>,
}

/// PURE: the IAM policy document: one statement per scope, in table order.
pub fn aws_policy(scoping: &AwsScoping, commands: &[Command]) -> Value {
    let p = scoping.partition;
    let mut statements: Vec<Statement> = Vec::new();
    for grant in table::aws_grants(&scoping.plan, commands) {
        let (sid, resources, condition) = match (grant.resource, grant.condition) {
            (AwsResource::Any, AwsCondition::CreateAction) => (
                "TagOnCreate",
                vec!["*".to_string()],
                Some(json!({"StringEquals": {"ec2:CreateAction": table::AWS_CREATE_ACTIONS}})),
            ),
            (AwsResource::Any, _) => ("Unscoped", vec!["*".to_string()], None),
            (AwsResource::HostedZones, _) => {
                let mut ids: Vec<String> = scoping
                    .plan
                    .zones
                    .iter()
                    .map(|id| {
                        format!(
                            "arn:{p}:route53:::hostedzone/{}",
                            id.as_deref().unwrap_or("*")
                        )
                    })
                    .collect();
                ids.dedup();
                if ids.iter().any(|r| r.ends_with("/*")) {
                    ids = vec![format!("arn:{p}:route53:::hostedzone/*")];
                }
                ("HostedZones", ids, None)
            }
            (AwsResource::Changes, _) => (
                "Route53Changes",
                vec![format!("arn:{p}:route53:::change/*")],
                None,
            ),
            (AwsResource::ElasticIps, _) | (AwsResource::NetworkInterfaces, _) => {
                let kind = if grant.resource == AwsResource::ElasticIps {
                    "elastic-ip"
                } else {
                    "network-interface"
                };
                (
                    "OwnedByTheCluster",
                    vec![format!("arn:{p}:ec2:{}:*:{kind}/*", scoping.region)],
                    Some(json!({"StringEquals": {
                        format!("aws:ResourceTag/kubernetes.io/cluster/{}", scoping.infra_id): "owned"
                    }})),
                )
            }
            (AwsResource::ZoneRole, _) => (
                "HostedZoneRole",
                scoping.plan.zone_role.iter().cloned().collect(),
                None,
            ),
        };
        match statements.iter_mut().find(|s| s.sid == sid) {
            Some(s) => {
                s.actions.push(grant.action);
                for r in resources {
                    if !s.resources.contains(&r) {
                        s.resources.push(r);
                    }
                }
            }
            None => statements.push(Statement {
                sid,
                actions: vec![grant.action],
                resources,
                condition,
            }),
        }
    }
    let statements: Vec<Value> = statements
        .into_iter()
        .map(|Statement { sid, actions, resources, condition }| {
            let mut s = json!({
                "Sid": sid,
                "Effect": "Allow",
                "Action": actions,
                "Resource": if resources.len() == 1 { json!(resources[0]) } else { json!(resources) },
            });
            if let Some(c) = condition {
                s["Condition"] = c;
            }
            s
        })
        .collect();
    json!({"Version": "2012-10-17", "Statement": statements})
}

// ---------------------------------------------------------------- GCP

/// PURE: the custom role (`gcloud iam roles create --file`), the projects to bind it on in
/// its description.
pub fn gcp_role(spec: Option<&ClusterSpec>, commands: &[Command]) -> Value {
    let wanted = match spec {
        Some(spec) => {
            let (project, network_project) = match &spec.platform {
                Platform::Gcp(gcp) => (gcp.project.clone(), gcp.subnetwork_project().to_string()),
                _ => ("<project>".into(), "<project>".into()),
            };
            let scopes: BTreeSet<Scope> = crate::plan::wanted_reservations(spec)
                .iter()
                .map(|r| r.key.scope)
                .collect();
            // Each written zone's project, and whether it is found by name (not by id).
            let mut zones: Vec<(String, bool)> = Vec::new();
            for (zone, _) in crate::plan::records_of_interest(spec) {
                let p = zone
                    .id
                    .as_deref()
                    .and_then(zone_project)
                    .unwrap_or(&project)
                    .to_string();
                let looked_up = zone.id.is_none();
                match zones.iter_mut().find(|(known, _)| *known == p) {
                    Some((_, any)) => *any |= looked_up,
                    None => zones.push((p, looked_up)),
                }
            }
            let zones: Vec<(&str, bool)> = zones.iter().map(|(p, l)| (p.as_str(), *l)).collect();
            table::gcp_wanted(&project, &network_project, &scopes, &zones, commands, true)
        }
        None => table::gcp_wanted(
            "<project>",
            "<project>",
            &BTreeSet::from([Scope::Public, Scope::Private]),
            &[("<project>", true)],
            commands,
            true,
        ),
    };
    let permissions: BTreeSet<&str> = wanted.values().flatten().copied().collect();
    let bindings: Vec<String> = wanted
        .iter()
        .map(|(project, p)| format!("{project} ({} permissions)", p.len()))
        .collect();
    json!({
        "title": "bootstrap-agent",
        "description": format!("bootstrap-agent: bind on {}", bindings.join(", ")),
        "stage": "GA",
        "includedPermissions": permissions,
    })
}

/// `projects/<p>/managedZones/<z>`: p.
fn zone_project(id: &str) -> Option<&str> {
    match id.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", project, "managedZones", zone] if !project.is_empty() && !zone.is_empty() => {
            Some(project)
        }
        _ => None,
    }
}

// ---------------------------------------------------------------- Azure

/// PURE: the custom role definition (`az role definition create --role-definition`).
pub fn azure_role(spec: Option<&ClusterSpec>, commands: &[Command]) -> Value {
    let any_cloud = commands.iter().any(|c| *c != Command::CapabilitiesApply);
    let (plan, subscription) = match spec {
        Some(spec) => (
            azure_plan(spec),
            match &spec.credentials {
                Credentials::AzureClientSecret {
                    subscription_id, ..
                } => subscription_id.clone(),
                _ => "<subscription-id>".into(),
            },
        ),
        None => (
            AzurePlan {
                resource_group: "<cluster-resource-group>".into(),
                network_resource_group: "<network-resource-group>".into(),
                base_domain_resource_group: "<base-domain-resource-group>".into(),
                public_ips: true,
                private_ips: true,
                tags_api: true,
                public_record_types: vec![bootstrap_cloud::RecordType::A],
                private_record_types: vec![bootstrap_cloud::RecordType::A],
            },
            "<subscription-id>".into(),
        ),
    };
    let mut wanted = if any_cloud {
        table::azure_wanted(&plan, commands)
    } else {
        Vec::new()
    };
    // Preflight's own reads (only `run` runs preflight).
    if commands.contains(&Command::Run) {
        for (rg, list) in wanted.iter_mut() {
            list.push(table::AZURE_PERMISSIONS_READ.to_string());
            if rg.eq_ignore_ascii_case(&plan.resource_group)
                && !plan.private_record_types.is_empty()
            {
                list.push(table::AZURE_ZONE_LINKS_READ.to_string());
            }
        }
    }
    let mut actions: Vec<&str> = Vec::new();
    for (_, list) in &wanted {
        for a in list {
            if !actions.contains(&a.as_str()) {
                actions.push(a);
            }
        }
    }
    let mut scopes: Vec<String> = wanted
        .iter()
        .map(|(rg, _)| format!("/subscriptions/{subscription}/resourceGroups/{rg}"))
        .collect();
    // The subscription-wide reads: `reserve` lists the groups, preflight reads the usages.
    if commands
        .iter()
        .any(|c| matches!(c, Command::Run | Command::PublishLbIps))
        && plan.private_ips
    {
        actions.extend(table::AZURE_SUBSCRIPTION);
        scopes.push(format!("/subscriptions/{subscription}"));
    }
    json!({
        "Name": "bootstrap-agent",
        "IsCustom": true,
        "Description": "What bootstrap-agent's calls need (bootstrap-agent permissions --cloud azure): assign it on each resource group in AssignableScopes, and on the subscription for the subscription-wide reads (resourceGroups/read, locations/usages/read) when that scope is listed",
        "Actions": actions,
        "NotActions": [],
        "DataActions": [],
        "NotDataActions": [],
        "AssignableScopes": scopes,
    })
}

fn azure_plan(spec: &ClusterSpec) -> AzurePlan {
    let Platform::Azure(azure) = &spec.platform else {
        return AzurePlan::default();
    };
    let reservations = crate::plan::wanted_reservations(spec);
    let scoped = |scope| reservations.iter().any(|r| r.key.scope == scope);
    let mut plan = AzurePlan {
        resource_group: azure.resource_group.clone(),
        network_resource_group: azure.network_resource_group.clone(),
        base_domain_resource_group: azure.base_domain_resource_group.clone(),
        public_ips: scoped(Scope::Public),
        private_ips: scoped(Scope::Private),
        // Azure Stack Hub has no Tags API: the group itself is read and updated.
        tags_api: !matches!(
            azure.cloud,
            bootstrap_cloud::azure_cloud::AzureCloud::AzureStackCloud { .. }
        ),
        ..AzurePlan::default()
    };
    (plan.public_record_types, plan.private_record_types) = written_record_types(spec);
    plan
}

/// PURE: the record types the plan writes in the public zone and in the private zone.
pub fn written_record_types(
    spec: &ClusterSpec,
) -> (
    Vec<bootstrap_cloud::RecordType>,
    Vec<bootstrap_cloud::RecordType>,
) {
    let (mut public, mut private) = (Vec::new(), Vec::new());
    for (zone, key) in crate::plan::records_of_interest(spec) {
        let types = if zone.private {
            &mut private
        } else {
            &mut public
        };
        if !types.contains(&key.rtype) {
            types.push(key.rtype);
        }
    }
    (public, private)
}

// ---------------------------------------------------------------- Kubernetes

mod cluster_role;
pub use cluster_role::kube_cluster_role;

/// `docs/permissions.md`: the AWS table, then each cloud's document for its example asset dir
/// (all commands, and `teardown --all` alone) and the ClusterRole. Written by
/// `cargo run -p xtask -- gen-docs`, checked by `gen-docs --check`.
pub fn markdown(fixtures: &std::path::Path) -> Result<String> {
    let mut out = String::from(
        "# Permissions\n\n\
<!-- Generated by `cargo run -p xtask -- gen-docs` from the tables in cloud/src/permissions.rs and src/permissions.rs; do not edit. -->\n\n\
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
        let spec = crate::assets::load(&dir)
            .with_context(|| format!("loading the example assets {}", dir.display()))?;
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
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(name: &str) -> ClusterSpec {
        crate::assets::load(&Path::new("tests/fixtures/assets").join(name)).unwrap()
    }

    fn statement<'a>(policy: &'a Value, sid: &str) -> &'a Value {
        policy["Statement"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["Sid"] == sid)
            .unwrap_or_else(|| panic!("no {sid}: {policy}"))
    }

    /// A zone named by id is the only zone the Route53 writes may touch; the private zone of
    /// another account is written through the role, so the cluster's identity gets AssumeRole
    /// on that role and no Route53 write of it; ReleaseAddress only on what carries our tag.
    #[test]
    fn the_aws_policy_is_scoped_by_the_assets() {
        let pool = document("aws", Some(&fixture("aws-public-ipv4-pool")), &Command::ALL).unwrap();
        // The private zone is found by its tags (its id is known only after the lookup).
        let zones = statement(&pool, "HostedZones");
        assert_eq!(
            zones["Resource"],
            json!("arn:aws:route53:::hostedzone/*"),
            "{pool}"
        );
        assert!(
            pool.to_string().contains("route53:ListTagsForResource"),
            "{pool}"
        );
        let mut named = AwsScoping::of(Some(&fixture("aws-public-ipv4-pool")));
        named.plan.zones = vec![Some("Z0PUBLIC".into()), Some("Z0PRIVATE".into())];
        named.plan.zone_by_tags = false;
        let named = aws_policy(&named, &Command::ALL);
        assert_eq!(
            statement(&named, "HostedZones")["Resource"],
            json!([
                "arn:aws:route53:::hostedzone/Z0PUBLIC",
                "arn:aws:route53:::hostedzone/Z0PRIVATE"
            ]),
            "{named}"
        );
        assert!(
            !named.to_string().contains("ListHostedZonesByName"),
            "{named}"
        );
        let owned = statement(&pool, "OwnedByTheCluster");
        assert_eq!(
            owned["Condition"]["StringEquals"]["aws:ResourceTag/kubernetes.io/cluster/mycluster-7xk2p"],
            "owned",
            "{pool}"
        );
        assert!(
            pool.to_string().contains("ec2:DescribePublicIpv4Pools"),
            "{pool}"
        );
        let tag = statement(&pool, "TagOnCreate");
        assert_eq!(
            tag["Condition"]["StringEquals"]["ec2:CreateAction"],
            json!(["AllocateAddress", "CreateNetworkInterface"])
        );

        let cross = document(
            "aws",
            Some(&fixture("aws-cross-account-zone")),
            &Command::ALL,
        )
        .unwrap();
        assert_eq!(
            statement(&cross, "HostedZoneRole")["Action"],
            json!(["sts:AssumeRole"])
        );
        assert_eq!(
            statement(&cross, "HostedZoneRole")["Resource"],
            "arn:aws:iam::111122223333:role/ocp-shared-vpc-dns"
        );
        assert!(!cross.to_string().contains("route53:"), "{cross}");

        let user_dns = document("aws", Some(&fixture("aws-user-dns")), &Command::ALL).unwrap();
        assert!(!user_dns.to_string().contains("route53:"), "{user_dns}");
        // Only the cluster: no cloud action.
        let none = aws_policy(&AwsScoping::of(None), &[Command::CapabilitiesApply]);
        assert_eq!(none["Statement"], json!([]));
        assert!(document("gcp", Some(&fixture("aws")), &Command::ALL).is_err());
    }

    /// GCP's role holds each project's permissions (the Shared VPC host's subnetwork use);
    /// Azure's role is assignable to exactly the groups it needs.
    #[test]
    fn the_gcp_and_azure_roles_follow_the_assets() {
        let gcp = document("gcp", Some(&fixture("gcp-shared-vpc")), &Command::ALL).unwrap();
        let held = gcp["includedPermissions"].as_array().unwrap();
        assert!(held.contains(&json!("compute.subnetworks.use")), "{gcp}");
        assert!(
            gcp["description"]
                .as_str()
                .unwrap()
                .contains("example-host-project"),
            "{gcp}"
        );
        let user_dns = document("gcp", Some(&fixture("gcp-user-dns")), &Command::ALL).unwrap();
        assert!(!user_dns.to_string().contains("dns."), "{user_dns}");
        let azure = document("azure", Some(&fixture("azure")), &Command::ALL).unwrap();
        let scopes = azure["AssignableScopes"].as_array().unwrap();
        assert_eq!(scopes.len(), 4, "{azure}");
        assert!(
            scopes.contains(&json!(
                "/subscriptions/00000000-0000-0000-0000-000000000001"
            )),
            "{azure}"
        );
        assert!(
            azure["Actions"]
                .as_array()
                .unwrap()
                .contains(&json!("Microsoft.Network/publicIPAddresses/delete")),
            "{azure}"
        );
        let only_kube = document(
            "azure",
            Some(&fixture("azure")),
            &[Command::CapabilitiesApply],
        );
        assert_eq!(only_kube.unwrap()["Actions"], json!([]));
    }

    #[test]
    fn the_cluster_role_differs_per_command() {
        let apply = kube_cluster_role(&[Command::CapabilitiesApply]);
        assert_eq!(apply["rules"].as_array().unwrap().len(), 1, "{apply}");
        let all = kube_cluster_role(&Command::ALL);
        assert!(all.to_string().contains("services"), "{all}");
    }
}
