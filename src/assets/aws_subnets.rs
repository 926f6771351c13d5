//! The AWS load-balancer subnets as the install-config gives them: `platform.aws.vpc.subnets`
//! with roles (known now), without roles or the deprecated `platform.aws.subnets` (classified
//! in EC2 at run time, `subnet_lookup`), or none (installer-made VPC: found by tag).

use super::FieldError;
use super::doc::Doc;
use super::network::{FieldProblems, field_err, string};
use super::spec::*;
use serde_json::Value;

/// Where the AWS subnets come from, in the installer's precedence: `platform.aws.vpc.subnets`
/// with roles (known now); the same list without roles, or the deprecated
/// `platform.aws.subnets` (classified at run time); nothing (installer-made VPC: found by the
/// cluster tag at run time).
pub(super) fn aws(ic: &Doc, publish: Publish) -> Result<AwsSpec, Vec<FieldError>> {
    let mut found = FieldProblems::default();
    let region = found.take(string(ic, "platform.aws.region"));
    let hosted_zone = found.take(
        ic.opt_str("platform.aws.hostedZone")
            .map(|z| z.map(str::to_string))
            .map_err(|e| (e.field, e.problem)),
    );
    // The installer allows a pool only with publish External
    // (pkg/asset/installconfig/aws/validation.go): without a public API there is no EIP.
    let public_ipv4_pool = found.take(
        ic.opt_str("platform.aws.publicIpv4Pool")
            .map_err(|e| (e.field, e.problem))
            .and_then(|pool| match pool {
                Some(_) if publish != Publish::External => Err(field_err(
                    "platform.aws.publicIpv4Pool",
                    "is allowed only with publish External (the installer refuses it otherwise); expected no pool",
                )),
                pool => Ok(pool.map(str::to_string)),
            }),
    );
    let subnets = found.take_all(subnets(ic, publish));
    found.or_build(|| {
        Some(AwsSpec {
            region: region?,
            subnets: subnets?,
            hosted_zone: hosted_zone?,
            public_ipv4_pool: public_ipv4_pool?,
            // Read next to the Infrastructure manifest (`endpoints::aws`).
            service_endpoints: Default::default(),
        })
    })
}

fn subnets(ic: &Doc, publish: Publish) -> Result<AwsSubnets, Vec<FieldError>> {
    let one = |e: crate::error::InputError| vec![(e.field, e.problem)];
    let vpc_list = ic.opt_list("platform.aws.vpc.subnets").map_err(one);
    let flat_list = ic.opt_list("platform.aws.subnets").map_err(one);
    let (vpc_list, flat_list) = match (vpc_list, flat_list) {
        (Ok(vpc), Ok(flat)) => (vpc, flat),
        (vpc, flat) => {
            return Err([vpc.err(), flat.err()]
                .into_iter()
                .flatten()
                .flatten()
                .collect());
        }
    };
    let lookup = |how| {
        AwsSubnets::Pending(SubnetLookup {
            file: ic.file.clone(),
            how,
        })
    };
    if vpc_list.is_empty() {
        return Ok(if flat_list.is_empty() {
            lookup(LookupKind::ClusterTag)
        } else {
            lookup(LookupKind::Listed(flat_ids(flat_list)?))
        });
    }
    // The roles are checked even where an entry's id was refused.
    let mut found = FieldProblems::default();
    let entries = vpc_entries(vpc_list, &mut found);
    if entries.iter().all(|e| e.roles.is_some()) {
        let subnets = found.take_all(by_role(&entries));
        if found.is_empty()
            && let Some(subnets) = &subnets
        {
            found.take(require_lb_subnets(subnets, publish));
        }
        found.or_build(|| {
            Some(AwsSubnets::Known {
                subnets: subnets?,
                ignored: Vec::new(),
            })
        })
    } else if let Some(with_roles) = entries.iter().find(|e| e.roles.is_some()) {
        let without = entries
            .iter()
            .find(|e| e.roles.is_none())
            .map_or(0, |e| e.index);
        found.push(field_err(
            &format!("platform.aws.vpc.subnets[{without}].roles"),
            format!(
                "missing, but platform.aws.vpc.subnets[{}] has roles; expected roles on every subnet or on none",
                with_roles.index
            ),
        ));
        found.or_build(|| None)
    } else if !found.is_empty() {
        found.or_build(|| None)
    } else {
        let listed: Vec<ListedSubnet> = entries
            .iter()
            .map(|e| ListedSubnet {
                id: e.id.clone(),
                field: format!("platform.aws.vpc.subnets[{}].id", e.index),
            })
            .collect();
        if !flat_list.is_empty() {
            same_as_converted(&flat_ids(flat_list)?, &listed).map_err(|e| vec![e])?;
        }
        Ok(lookup(LookupKind::Listed(listed)))
    }
}

struct VpcEntry<'a> {
    index: usize,
    id: String,
    /// None when the entry has no roles (or an empty list).
    roles: Option<&'a [Value]>,
}

/// The entries whose roles can be read (one whose id was refused keeps an empty id: only its
/// roles are checked further); every problem goes to `found`.
fn vpc_entries<'a>(list: &'a [Value], found: &mut FieldProblems) -> Vec<VpcEntry<'a>> {
    let mut entries = Vec::new();
    for (index, subnet) in list.iter().enumerate() {
        let field = format!("platform.aws.vpc.subnets[{index}]");
        let id = found
            .take(subnet_id(subnet.get("id"), &format!("{field}.id")))
            .unwrap_or_default();
        let roles = found.take(match subnet.get("roles") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(roles)) if roles.is_empty() => Ok(None),
            Some(Value::Array(roles)) => Ok(Some(roles.as_slice())),
            Some(_) => Err(field_err(
                &format!("{field}.roles"),
                "expected a list of roles",
            )),
        });
        if let Some(roles) = roles {
            entries.push(VpcEntry { index, id, roles });
        }
    }
    entries
}

/// ControlPlaneExternalLB subnets get an EIP each, ControlPlaneInternalLB subnets a private IP.
fn by_role(entries: &[VpcEntry]) -> Result<Vec<AwsSubnet>, Vec<FieldError>> {
    let mut found = FieldProblems::default();
    let mut subnets = Vec::new();
    for entry in entries {
        let field = format!("platform.aws.vpc.subnets[{}]", entry.index);
        for (j, role) in entry.roles.unwrap_or_default().iter().enumerate() {
            let role_field = format!("{field}.roles[{j}].type");
            let (role, name) = match role.get("type").and_then(Value::as_str) {
                Some(name @ "ControlPlaneExternalLB") => (SubnetRole::Public, name),
                Some(name @ "ControlPlaneInternalLB") => (SubnetRole::Private, name),
                Some("ClusterNode" | "EdgeNode" | "BootstrapNode" | "IngressControllerLB") => {
                    continue;
                }
                _ => {
                    found.push(field_err(
                        &role_field,
                        "expected one of ClusterNode, EdgeNode, BootstrapNode, IngressControllerLB, ControlPlaneExternalLB, ControlPlaneInternalLB",
                    ));
                    continue;
                }
            };
            subnets.push(AwsSubnet {
                id: entry.id.clone(),
                role,
                source: Source::InstallConfig {
                    field: format!("{field}.id"),
                },
                classified_by: Classification::Role {
                    field: role_field,
                    role: name.to_string(),
                },
            });
        }
    }
    found.or_build(|| Some(sorted(subnets)))
}

/// One entry per (role, subnet), in role then id order: what the planner reserves in.
pub(super) fn sorted(mut subnets: Vec<AwsSubnet>) -> Vec<AwsSubnet> {
    subnets.sort_by(|a, b| (a.role, &a.id).cmp(&(b.role, &b.id)));
    subnets.dedup_by(|a, b| a.role == b.role && a.id == b.id);
    subnets
}

fn flat_ids(list: &[Value]) -> Result<Vec<ListedSubnet>, Vec<FieldError>> {
    let mut found = FieldProblems::default();
    let mut listed = Vec::new();
    for (i, v) in list.iter().enumerate() {
        let field = format!("platform.aws.subnets[{i}]");
        if let Some(id) = found.take(subnet_id(Some(v), &field)) {
            listed.push(ListedSubnet { id, field });
        }
    }
    found.or_build(|| Some(listed))
}

/// The installer copies `platform.aws.subnets` into `vpc.subnets` (without roles) and keeps
/// the old key; both must then name the same subnets.
fn same_as_converted(flat: &[ListedSubnet], listed: &[ListedSubnet]) -> Result<(), FieldError> {
    let ids = |l: &[ListedSubnet]| {
        let mut ids: Vec<String> = l.iter().map(|s| s.id.clone()).collect();
        ids.sort();
        ids.dedup();
        ids
    };
    if ids(flat) != ids(listed) {
        return Err(field_err(
            "platform.aws.subnets",
            format!(
                "names {}, but platform.aws.vpc.subnets names {}; expected the same subnets (the installer copies the first into the second)",
                ids(flat).join(", "),
                ids(listed).join(", ")
            ),
        ));
    }
    Ok(())
}

/// `subnet-` and letters/digits, at most 24 characters (the installer's pattern).
fn subnet_id(value: Option<&Value>, field: &str) -> Result<String, FieldError> {
    let expected = "expected a subnet id like subnet-0123456789abcdef0";
    let id = value.and_then(Value::as_str).ok_or_else(|| {
        field_err(
            field,
            match value {
                None => format!("missing; {expected}"),
                Some(other) => format!("{expected}, found {}", super::doc::kind(other)),
            },
        )
    })?;
    let valid = id.len() <= 24
        && id.strip_prefix("subnet-").is_some_and(|rest| {
            !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric())
        });
    if valid {
        Ok(id.to_string())
    } else {
        Err(field_err(field, format!("{expected}, found {id:?}")))
    }
}

/// The role the subnets lack: the internal API load balancer needs a private subnet, and an
/// external API a public one.
pub(super) fn missing_role(subnets: &[AwsSubnet], publish: Publish) -> Option<SubnetRole> {
    let has = |role| subnets.iter().any(|s: &AwsSubnet| s.role == role);
    if !has(SubnetRole::Private) {
        Some(SubnetRole::Private)
    } else if publish.public_api() && !has(SubnetRole::Public) {
        Some(SubnetRole::Public)
    } else {
        None
    }
}

/// Why a subnet of `role` is needed.
pub(super) fn needed_for(role: SubnetRole) -> &'static str {
    match role {
        SubnetRole::Private => "the internal API load balancer needs at least one",
        SubnetRole::Public => {
            "publish External needs at least one for the public API load balancer"
        }
    }
}

fn require_lb_subnets(subnets: &[AwsSubnet], publish: Publish) -> Result<(), FieldError> {
    let Some(role) = missing_role(subnets, publish) else {
        return Ok(());
    };
    let name = match role {
        SubnetRole::Private => "ControlPlaneInternalLB",
        SubnetRole::Public => "ControlPlaneExternalLB",
    };
    Err(field_err(
        "platform.aws.vpc.subnets",
        format!("no subnet has the role {name}; {}", needed_for(role)),
    ))
}
