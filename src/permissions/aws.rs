//! The IAM policy: one statement per scope (hosted zones by id, our ownership tag, tags on
//! create, the hostedZoneRole), in the table's order.

use crate::assets::{ClusterSpec, Platform};
use bootstrap_cloud::Scope;
use bootstrap_cloud::permissions::{self as table, AwsCondition, AwsPlan, AwsResource, Command};
use serde_json::{Value, json};

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
