//! The network values of each platform and where they come from. The installer writes network
//! fields into the install-config only for bring-your-own networks; for the networks it makes
//! itself, the agent uses the installer's default names (Azure, GCP) or finds the subnets in
//! EC2 (AWS). Each value keeps its [`Source`], which `plan` prints.

use super::FieldError;
use super::doc::Doc;
use super::spec::*;
use crate::error::InputError;
use bootstrap_cloud::subnets::{ROLE_ELB_TAG, ROLE_INTERNAL_ELB_TAG, SubnetFacts, SubnetQuery};
use serde_json::Value;

fn field_err(field: &str, problem: impl Into<String>) -> FieldError {
    (field.to_string(), problem.into())
}

fn opt_string(ic: &Doc, field: &str) -> Result<Option<(String, String)>, FieldError> {
    ic.opt_str(field)
        .map(|v| v.map(|v| (v.to_string(), field.to_string())))
        .map_err(|e| (e.field, e.problem))
}

/// Records one value: the install-config's (value, field) when given, else the default.
fn value(
    sources: &mut Vec<NetworkValue>,
    name: &str,
    given: Option<(String, String)>,
    default: String,
    rule: &str,
) -> String {
    let (value, source) = match given {
        Some((value, field)) => (value, Source::InstallConfig { field }),
        None => (
            default,
            Source::DefaultName {
                rule: rule.to_string(),
            },
        ),
    };
    sources.push(NetworkValue {
        name: name.to_string(),
        value: value.clone(),
        source,
        classified_by: None,
    });
    value
}

// ---- GCP ------------------------------------------------------------------------------------

/// `network`, `controlPlaneSubnet` and `computeSubnet` go together (the installer's rule);
/// without them the installer makes `<infra-id>-network` with `<infra-id>-master-subnet` and
/// `<infra-id>-worker-subnet`.
pub(super) fn gcp(ic: &Doc, infra_id: &str) -> Result<GcpSpec, FieldError> {
    let s = |f: &str| {
        ic.str(&format!("platform.gcp.{f}"))
            .map(str::to_string)
            .map_err(|e| (e.field, e.problem))
    };
    let network = opt_string(ic, "platform.gcp.network")?;
    let control_plane = opt_string(ic, "platform.gcp.controlPlaneSubnet")?;
    let compute = opt_string(ic, "platform.gcp.computeSubnet")?;
    let network_project = opt_string(ic, "platform.gcp.networkProjectID")?;
    // Shared VPC (the installer's rules, pkg/types/gcp/validation/platform.go): the shared
    // network must be named, and credentials go to Manual or Passthrough.
    if let Some((host, _)) = &network_project {
        if network.is_none() {
            return Err(field_err(
                "platform.gcp.network",
                format!(
                    "missing; networkProjectID {host} (Shared VPC) needs the name of the network it shares"
                ),
            ));
        }
        match ic.get("credentialsMode").and_then(Value::as_str) {
            Some("Manual" | "Passthrough") => {}
            other => {
                return Err(field_err(
                    "credentialsMode",
                    format!(
                        "{}; platform.gcp.networkProjectID (Shared VPC) needs Manual or Passthrough",
                        other.map_or("missing".to_string(), |m| format!("is {m:?}"))
                    ),
                ));
            }
        }
    }
    match &network {
        Some((name, _)) => {
            for (given, field) in [
                (&control_plane, "platform.gcp.controlPlaneSubnet"),
                (&compute, "platform.gcp.computeSubnet"),
            ] {
                if given.is_none() {
                    return Err(field_err(
                        field,
                        format!(
                            "missing; expected the name of a subnet of network {name} (network, controlPlaneSubnet and computeSubnet go together)"
                        ),
                    ));
                }
            }
        }
        None => {
            if let Some((_, field)) = control_plane.as_ref().or(compute.as_ref()) {
                return Err(field_err(
                    field,
                    format!(
                        "set without platform.gcp.network; expected network, controlPlaneSubnet and computeSubnet together, or none of them (the installer then makes {infra_id}-network)"
                    ),
                ));
            }
        }
    }
    let mut sources = Vec::new();
    let network = value(
        &mut sources,
        "network",
        network,
        format!("{infra_id}-network"),
        "<infra-id>-network",
    );
    let control_plane_subnet = value(
        &mut sources,
        "control-plane subnet",
        control_plane,
        format!("{infra_id}-master-subnet"),
        "<infra-id>-master-subnet",
    );
    let compute_subnet = value(
        &mut sources,
        "compute subnet",
        compute,
        format!("{infra_id}-worker-subnet"),
        "<infra-id>-worker-subnet",
    );
    if let Some((host, field)) = &network_project {
        sources.push(NetworkValue {
            name: "network project (Shared VPC host)".into(),
            value: host.clone(),
            source: Source::InstallConfig {
                field: field.clone(),
            },
            classified_by: None,
        });
    }
    Ok(GcpSpec {
        project: s("projectID")?,
        region: s("region")?,
        network_project: network_project.map(|(host, _)| host),
        network,
        control_plane_subnet,
        compute_subnet,
        sources,
    })
}

// ---- Azure ----------------------------------------------------------------------------------

/// Resource group `<infra-id>-rg` unless named. An existing vnet (`virtualNetwork`) needs its
/// resource group and both subnets, from `subnets[]` (role `node` / `control-plane`) or the
/// deprecated `computeSubnet` / `controlPlaneSubnet` that the installer converts into it (and
/// keeps); without a vnet the installer makes `<infra-id>-vnet` in the cluster resource group
/// with `<infra-id>-master-subnet` and `<infra-id>-worker-subnet`.
pub(super) fn azure(ic: &Doc, infra_id: &str) -> Result<AzureSpec, FieldError> {
    let s = |f: &str| {
        ic.str(&format!("platform.azure.{f}"))
            .map(str::to_string)
            .map_err(|e| (e.field, e.problem))
    };
    let resource_group = opt_string(ic, "platform.azure.resourceGroupName")?;
    let network_resource_group = opt_string(ic, "platform.azure.networkResourceGroupName")?;
    let virtual_network = opt_string(ic, "platform.azure.virtualNetwork")?;
    let (listed_compute, listed_control_plane) = azure_subnets(ic)?;
    let compute = match listed_compute {
        Some(given) => Some(given),
        None => opt_string(ic, "platform.azure.computeSubnet")?,
    };
    let control_plane = match listed_control_plane {
        Some(given) => Some(given),
        None => opt_string(ic, "platform.azure.controlPlaneSubnet")?,
    };
    match &virtual_network {
        Some((vnet, _)) => {
            if network_resource_group.is_none() {
                return Err(field_err(
                    "platform.azure.networkResourceGroupName",
                    format!("missing; expected the resource group of virtualNetwork {vnet}"),
                ));
            }
            for (given, field, role) in [
                (
                    &control_plane,
                    "platform.azure.controlPlaneSubnet",
                    "control-plane",
                ),
                (&compute, "platform.azure.computeSubnet", "node"),
            ] {
                if given.is_none() {
                    return Err(field_err(
                        field,
                        format!(
                            "missing; with virtualNetwork {vnet} expected a subnet with role {role} in platform.azure.subnets, or this field"
                        ),
                    ));
                }
            }
        }
        None => {
            if let Some((_, field)) = control_plane.as_ref().or(compute.as_ref()) {
                return Err(field_err(
                    field,
                    format!(
                        "set without platform.azure.virtualNetwork; expected a subnet of an existing vnet named there, or no subnets (the installer then makes {infra_id}-vnet)"
                    ),
                ));
            }
        }
    }
    let mut sources = Vec::new();
    let resource_group = value(
        &mut sources,
        "resource group",
        resource_group,
        format!("{infra_id}-rg"),
        "<infra-id>-rg",
    );
    let network_resource_group = value(
        &mut sources,
        "network resource group",
        network_resource_group,
        resource_group.clone(),
        "the resource group",
    );
    let virtual_network = value(
        &mut sources,
        "virtual network",
        virtual_network,
        format!("{infra_id}-vnet"),
        "<infra-id>-vnet",
    );
    let control_plane_subnet = value(
        &mut sources,
        "control-plane subnet",
        control_plane,
        format!("{infra_id}-master-subnet"),
        "<infra-id>-master-subnet",
    );
    let compute_subnet = value(
        &mut sources,
        "compute subnet",
        compute,
        format!("{infra_id}-worker-subnet"),
        "<infra-id>-worker-subnet",
    );
    Ok(AzureSpec {
        region: s("region")?,
        resource_group,
        base_domain_resource_group: s("baseDomainResourceGroupName")?,
        network_resource_group,
        virtual_network,
        compute_subnet,
        control_plane_subnet,
        sources,
    })
}

type Given = Option<(String, String)>;

/// `platform.azure.subnets[]`: the first `node` subnet and the one `control-plane` subnet.
fn azure_subnets(ic: &Doc) -> Result<(Given, Given), FieldError> {
    let list = ic
        .opt_list("platform.azure.subnets")
        .map_err(|e| (e.field, e.problem))?;
    let (mut compute, mut control_plane): (Given, Given) = (None, None);
    for (i, entry) in list.iter().enumerate() {
        let field = format!("platform.azure.subnets[{i}]");
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| field_err(&format!("{field}.name"), "expected a subnet name"))?;
        let given = Some((name.to_string(), format!("{field}.name")));
        match entry.get("role").and_then(Value::as_str) {
            Some("node") => {
                if compute.is_none() {
                    compute = given;
                }
            }
            Some("control-plane") => {
                if let Some((first, _)) = &control_plane {
                    return Err(field_err(
                        &format!("{field}.role"),
                        format!(
                            "a second control-plane subnet ({first} is the first); expected exactly one"
                        ),
                    ));
                }
                control_plane = given;
            }
            _ => {
                return Err(field_err(
                    &format!("{field}.role"),
                    "expected node or control-plane",
                ));
            }
        }
    }
    Ok((compute, control_plane))
}

// ---- AWS ------------------------------------------------------------------------------------

/// Where the AWS subnets come from, in the installer's precedence: `platform.aws.vpc.subnets`
/// with roles (known now); the same list without roles, or the deprecated
/// `platform.aws.subnets` (classified at run time); nothing (installer-made VPC: found by the
/// cluster tag at run time).
pub(super) fn aws(ic: &Doc, publish: Publish) -> Result<AwsSpec, FieldError> {
    let region = ic
        .str("platform.aws.region")
        .map_err(|e| (e.field, e.problem))?
        .to_string();
    let hosted_zone = ic
        .opt_str("platform.aws.hostedZone")
        .map_err(|e| (e.field, e.problem))?
        .map(str::to_string);
    let vpc_list = ic
        .opt_list("platform.aws.vpc.subnets")
        .map_err(|e| (e.field, e.problem))?;
    let flat_list = ic
        .opt_list("platform.aws.subnets")
        .map_err(|e| (e.field, e.problem))?;
    let lookup = |how| {
        AwsSubnets::Pending(SubnetLookup {
            file: ic.file.clone(),
            how,
        })
    };
    let subnets = if !vpc_list.is_empty() {
        let entries = vpc_entries(vpc_list)?;
        if entries.iter().all(|e| e.roles.is_some()) {
            let subnets = by_role(&entries)?;
            require_lb_subnets(&subnets, publish)?;
            AwsSubnets::Known {
                subnets,
                ignored: Vec::new(),
            }
        } else if let Some(with_roles) = entries.iter().find(|e| e.roles.is_some()) {
            let without = entries
                .iter()
                .find(|e| e.roles.is_none())
                .map_or(0, |e| e.index);
            return Err(field_err(
                &format!("platform.aws.vpc.subnets[{without}].roles"),
                format!(
                    "missing, but platform.aws.vpc.subnets[{}] has roles; expected roles on every subnet or on none",
                    with_roles.index
                ),
            ));
        } else {
            let listed: Vec<ListedSubnet> = entries
                .iter()
                .map(|e| ListedSubnet {
                    id: e.id.clone(),
                    field: format!("platform.aws.vpc.subnets[{}].id", e.index),
                })
                .collect();
            if !flat_list.is_empty() {
                same_as_converted(&flat_ids(flat_list)?, &listed)?;
            }
            lookup(LookupKind::Listed(listed))
        }
    } else if !flat_list.is_empty() {
        lookup(LookupKind::Listed(flat_ids(flat_list)?))
    } else {
        lookup(LookupKind::ClusterTag)
    };
    Ok(AwsSpec {
        region,
        subnets,
        hosted_zone,
    })
}

struct VpcEntry<'a> {
    index: usize,
    id: String,
    /// None when the entry has no roles (or an empty list).
    roles: Option<&'a [Value]>,
}

fn vpc_entries(list: &[Value]) -> Result<Vec<VpcEntry<'_>>, FieldError> {
    list.iter()
        .enumerate()
        .map(|(index, subnet)| {
            let field = format!("platform.aws.vpc.subnets[{index}]");
            let id = subnet_id(subnet.get("id"), &format!("{field}.id"))?;
            let roles = match subnet.get("roles") {
                None | Some(Value::Null) => None,
                Some(Value::Array(roles)) if roles.is_empty() => None,
                Some(Value::Array(roles)) => Some(roles.as_slice()),
                Some(_) => {
                    return Err(field_err(
                        &format!("{field}.roles"),
                        "expected a list of roles",
                    ));
                }
            };
            Ok(VpcEntry { index, id, roles })
        })
        .collect()
}

/// ControlPlaneExternalLB subnets get an EIP each, ControlPlaneInternalLB subnets a private IP.
fn by_role(entries: &[VpcEntry]) -> Result<Vec<AwsSubnet>, FieldError> {
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
                    return Err(field_err(
                        &role_field,
                        "expected one of ClusterNode, EdgeNode, BootstrapNode, IngressControllerLB, ControlPlaneExternalLB, ControlPlaneInternalLB",
                    ));
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
    Ok(sorted(subnets))
}

/// One entry per (role, subnet), in role then id order: what the planner reserves in.
fn sorted(mut subnets: Vec<AwsSubnet>) -> Vec<AwsSubnet> {
    subnets.sort_by(|a, b| (a.role, &a.id).cmp(&(b.role, &b.id)));
    subnets.dedup_by(|a, b| a.role == b.role && a.id == b.id);
    subnets
}

fn flat_ids(list: &[Value]) -> Result<Vec<ListedSubnet>, FieldError> {
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            let field = format!("platform.aws.subnets[{i}]");
            Ok(ListedSubnet {
                id: subnet_id(Some(v), &field)?,
                field,
            })
        })
        .collect()
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
fn missing_role(subnets: &[AwsSubnet], publish: Publish) -> Option<SubnetRole> {
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
fn needed_for(role: SubnetRole) -> &'static str {
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

impl SubnetLookup {
    /// What to ask EC2.
    pub fn query(&self) -> SubnetQuery {
        match &self.how {
            LookupKind::Listed(listed) => {
                SubnetQuery::Ids(listed.iter().map(|s| s.id.clone()).collect())
            }
            LookupKind::ClusterTag => SubnetQuery::ClusterTag,
        }
    }

    /// Says, for `plan --offline`, why nothing can be planned without EC2.
    pub fn offline_error(&self, infra_id: &str) -> InputError {
        let (field, problem) = match &self.how {
            LookupKind::Listed(listed) => (
                list_field(listed),
                "lists subnets without roles; each is classified at run time (role tag, else route table), so `plan --offline`, which makes no cloud calls, cannot plan their reservations; run `plan` without --offline, or give the subnets roles".to_string(),
            ),
            LookupKind::ClusterTag => (
                "platform.aws.vpc.subnets".to_string(),
                format!("absent (installer-made VPC): the subnets are discovered at run time by tag kubernetes.io/cluster/{infra_id}, so `plan --offline`, which makes no cloud calls, cannot plan their reservations; run `plan` without --offline"),
            ),
        };
        InputError::new(&self.file, ic_field(&field), problem)
    }

    /// Settles the subnets from what EC2 returned for [`SubnetLookup::query`]. Pure.
    pub fn resolve(
        &self,
        infra_id: &str,
        region: &str,
        publish: Publish,
        found: &[SubnetFacts],
    ) -> Result<AwsSubnets, InputError> {
        let err =
            |field: &str, problem: String| InputError::new(&self.file, ic_field(field), problem);
        match &self.how {
            LookupKind::ClusterTag => {
                let field = "platform.aws.vpc.subnets";
                let cluster_tag = format!("kubernetes.io/cluster/{infra_id}");
                if found.is_empty() {
                    return Err(err(
                        field,
                        format!(
                            "absent, so the installer made the VPC; but no subnet in {region} has the tag {cluster_tag} (owned or shared); expected the installer's subnets, or name them in platform.aws.vpc.subnets with roles"
                        ),
                    ));
                }
                let mut subnets = Vec::new();
                let mut ignored = Vec::new();
                for facts in found {
                    let source = Source::DiscoveredByTag {
                        tag: format!(
                            "{cluster_tag}={}",
                            facts.tags.get(&cluster_tag).map_or("", String::as_str)
                        ),
                    };
                    let before = subnets.len();
                    subnets.extend(by_role_tag(facts, &source));
                    if subnets.len() == before {
                        ignored.push(facts.id.clone());
                    }
                }
                let subnets = sorted(subnets);
                if let Some(role) = missing_role(&subnets, publish) {
                    let all: Vec<&str> = found.iter().map(|s| s.id.as_str()).collect();
                    return Err(err(
                        field,
                        format!(
                            "absent; of the subnets tagged {cluster_tag} in {region} ({}), none has the tag {}; {}",
                            all.join(", "),
                            role_tag(role),
                            needed_for(role)
                        ),
                    ));
                }
                Ok(AwsSubnets::Known { subnets, ignored })
            }
            LookupKind::Listed(listed) => {
                let mut subnets = Vec::new();
                for entry in listed {
                    let facts = found.iter().find(|f| f.id == entry.id).ok_or_else(|| {
                        err(
                            &entry.field,
                            format!(
                                "{} not found in {region}; expected an existing subnet",
                                entry.id
                            ),
                        )
                    })?;
                    let source = Source::InstallConfig {
                        field: entry.field.clone(),
                    };
                    if facts.has_role_tag() {
                        subnets.extend(by_role_tag(facts, &source));
                        continue;
                    }
                    let table = facts.route_table.as_ref().ok_or_else(|| {
                        err(
                            &entry.field,
                            format!("{} has no role tag, and no route table applies to it (no explicit association, and {} has no main route table); expected one, or the tag {ROLE_ELB_TAG} or {ROLE_INTERNAL_ELB_TAG}", entry.id, facts.vpc),
                        )
                    })?;
                    subnets.push(AwsSubnet {
                        id: facts.id.clone(),
                        role: if table.internet_gateway.is_some() {
                            SubnetRole::Public
                        } else {
                            SubnetRole::Private
                        },
                        source,
                        classified_by: Classification::RouteTable {
                            route_table: table.id.clone(),
                            main: table.main,
                            internet_gateway: table.internet_gateway.clone(),
                        },
                    });
                }
                let subnets = sorted(subnets);
                if let Some(role) = missing_role(&subnets, publish) {
                    let ids: Vec<&str> = listed.iter().map(|s| s.id.as_str()).collect();
                    let how = match role {
                        SubnetRole::Private => "no 0.0.0.0/0 route to an internet gateway",
                        SubnetRole::Public => "a 0.0.0.0/0 route to an internet gateway",
                    };
                    return Err(err(
                        &list_field(listed),
                        format!(
                            "none of the listed subnets ({}) is {role} (tag {}, or without role tags {how}); {}",
                            ids.join(", "),
                            role_tag(role),
                            needed_for(role)
                        ),
                    ));
                }
                Ok(AwsSubnets::Known {
                    subnets,
                    ignored: Vec::new(),
                })
            }
        }
    }
}

fn ic_field(field: &str) -> String {
    format!("data.install-config: {field}")
}

/// `platform.aws.subnets` or `platform.aws.vpc.subnets`, from an entry's field.
fn list_field(listed: &[ListedSubnet]) -> String {
    listed
        .first()
        .and_then(|s| s.field.split('[').next())
        .unwrap_or("platform.aws.subnets")
        .to_string()
}

fn role_tag(role: SubnetRole) -> &'static str {
    match role {
        SubnetRole::Public => ROLE_ELB_TAG,
        SubnetRole::Private => ROLE_INTERNAL_ELB_TAG,
    }
}

/// The roles a subnet's role tags give it (none, one, or both).
fn by_role_tag(facts: &SubnetFacts, source: &Source) -> Vec<AwsSubnet> {
    [
        (facts.tagged_public(), SubnetRole::Public, ROLE_ELB_TAG),
        (
            facts.tagged_private(),
            SubnetRole::Private,
            ROLE_INTERNAL_ELB_TAG,
        ),
    ]
    .into_iter()
    .filter(|(tagged, _, _)| *tagged)
    .map(|(_, role, key)| AwsSubnet {
        id: facts.id.clone(),
        role,
        source: source.clone(),
        classified_by: Classification::Tag {
            tag: format!("{key}={}", facts.tags.get(key).map_or("", String::as_str)),
        },
    })
    .collect()
}
