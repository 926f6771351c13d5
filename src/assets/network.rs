//! The network values of each platform and where they come from. The installer writes network
//! fields into the install-config only for bring-your-own networks; for the networks it makes
//! itself, the agent uses the installer's default names (Azure, GCP) or finds the subnets in
//! EC2 (AWS). Each value keeps its [`Source`], which `plan` prints.

use super::FieldError;
use super::doc::Doc;
use super::spec::*;
use serde_json::Value;

pub(super) use super::aws_subnets::aws;

pub(super) fn field_err(field: &str, problem: impl Into<String>) -> FieldError {
    (field.to_string(), problem.into())
}

/// The problems of one platform block: every rule's, not only the first.
pub(super) type FieldProblems = super::problems::Problems<FieldError>;

/// A string the install-config must give.
pub(super) fn string(ic: &Doc, field: &str) -> Result<String, FieldError> {
    ic.str(field)
        .map(str::to_string)
        .map_err(|e| (e.field, e.problem))
}

pub(super) fn opt_string(ic: &Doc, field: &str) -> Result<Option<(String, String)>, FieldError> {
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

/// Records one value whose installer default is `<infra-id>-<suffix>`.
fn by_infra_id(
    sources: &mut Vec<NetworkValue>,
    name: &str,
    given: Option<(String, String)>,
    infra_id: &str,
    suffix: &str,
) -> String {
    let rule = format!("<infra-id>-{suffix}");
    value(sources, name, given, format!("{infra_id}-{suffix}"), &rule)
}

/// The control-plane and compute subnets, given or by the installer's default names (the
/// same on GCP and Azure).
fn installer_subnets(
    sources: &mut Vec<NetworkValue>,
    infra_id: &str,
    control_plane: Option<(String, String)>,
    compute: Option<(String, String)>,
) -> (String, String) {
    let control_plane = by_infra_id(
        sources,
        "control-plane subnet",
        control_plane,
        infra_id,
        "master-subnet",
    );
    let compute = by_infra_id(
        sources,
        "compute subnet",
        compute,
        infra_id,
        "worker-subnet",
    );
    (control_plane, compute)
}

// ---- GCP ------------------------------------------------------------------------------------

/// `network`, `controlPlaneSubnet` and `computeSubnet` go together (the installer's rule);
/// without them the installer makes `<infra-id>-network` with `<infra-id>-master-subnet` and
/// `<infra-id>-worker-subnet`.
pub(super) fn gcp(ic: &Doc, infra_id: &str) -> Result<GcpSpec, Vec<FieldError>> {
    let mut found = FieldProblems::default();
    let project = found.take(string(ic, "platform.gcp.projectID"));
    let region = found.take(string(ic, "platform.gcp.region"));
    let network = found.take(opt_string(ic, "platform.gcp.network"));
    let control_plane = found.take(opt_string(ic, "platform.gcp.controlPlaneSubnet"));
    let compute = found.take(opt_string(ic, "platform.gcp.computeSubnet"));
    let network_project = found.take(opt_string(ic, "platform.gcp.networkProjectID"));
    // Shared VPC (the installer's rules, pkg/types/gcp/validation/platform.go): the shared
    // network must be named, and credentials go to Manual or Passthrough.
    if let Some(Some((host, _))) = &network_project {
        if let Some(None) = &network {
            found.push(field_err(
                "platform.gcp.network",
                format!(
                    "missing; networkProjectID {host} (Shared VPC) needs the name of the network it shares"
                ),
            ));
        }
        match ic.get("credentialsMode").and_then(Value::as_str) {
            Some("Manual" | "Passthrough") => {}
            other => found.push(field_err(
                "credentialsMode",
                format!(
                    "{}; platform.gcp.networkProjectID (Shared VPC) needs Manual or Passthrough",
                    other.map_or("missing".to_string(), |m| format!("is {m:?}"))
                ),
            )),
        }
    }
    if let (Some(network), Some(control_plane), Some(compute)) =
        (&network, &control_plane, &compute)
    {
        match network {
            Some((name, _)) => {
                for (given, field) in [
                    (control_plane, "platform.gcp.controlPlaneSubnet"),
                    (compute, "platform.gcp.computeSubnet"),
                ] {
                    if given.is_none() {
                        found.push(field_err(
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
                    found.push(field_err(
                        field,
                        format!(
                            "set without platform.gcp.network; expected network, controlPlaneSubnet and computeSubnet together, or none of them (the installer then makes {infra_id}-network)"
                        ),
                    ));
                }
            }
        }
    }
    found.or_build(|| {
        let mut sources = Vec::new();
        let network = by_infra_id(&mut sources, "network", network?, infra_id, "network");
        let (control_plane_subnet, compute_subnet) =
            installer_subnets(&mut sources, infra_id, control_plane?, compute?);
        let network_project = network_project?;
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
        Some(GcpSpec {
            project: project?,
            region: region?,
            network_project: network_project.map(|(host, _)| host),
            network,
            control_plane_subnet,
            compute_subnet,
            sources,
        })
    })
}

// ---- Azure ----------------------------------------------------------------------------------

/// Resource group `<infra-id>-rg` unless named. An existing vnet (`virtualNetwork`) needs its
/// resource group and both subnets, from `subnets[]` (role `node` / `control-plane`) or the
/// deprecated `computeSubnet` / `controlPlaneSubnet` that the installer converts into it (and
/// keeps); without a vnet the installer makes `<infra-id>-vnet` in the cluster resource group
/// with `<infra-id>-master-subnet` and `<infra-id>-worker-subnet`.
pub(super) fn azure(ic: &Doc, infra_id: &str) -> Result<AzureSpec, Vec<FieldError>> {
    let mut found = FieldProblems::default();
    let region = found.take(string(ic, "platform.azure.region"));
    let base_domain_resource_group =
        found.take(string(ic, "platform.azure.baseDomainResourceGroupName"));
    let resource_group = found.take(opt_string(ic, "platform.azure.resourceGroupName"));
    let network_resource_group =
        found.take(opt_string(ic, "platform.azure.networkResourceGroupName"));
    let virtual_network = found.take(opt_string(ic, "platform.azure.virtualNetwork"));
    let (listed_compute, listed_control_plane) = found
        .take_all(azure_subnets(ic))
        .map_or((None, None), |(compute, control_plane)| {
            (Some(compute), Some(control_plane))
        });
    let compute = match listed_compute {
        Some(Some(given)) => Some(Some(given)),
        Some(None) => found.take(opt_string(ic, "platform.azure.computeSubnet")),
        None => None,
    };
    let control_plane = match listed_control_plane {
        Some(Some(given)) => Some(Some(given)),
        Some(None) => found.take(opt_string(ic, "platform.azure.controlPlaneSubnet")),
        None => None,
    };
    match &virtual_network {
        Some(Some((vnet, _))) => {
            if let Some(None) = &network_resource_group {
                found.push(field_err(
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
                if let Some(None) = given {
                    found.push(field_err(
                        field,
                        format!(
                            "missing; with virtualNetwork {vnet} expected a subnet with role {role} in platform.azure.subnets, or this field"
                        ),
                    ));
                }
            }
        }
        Some(None) => {
            let given = [&control_plane, &compute]
                .into_iter()
                .find_map(|g| g.as_ref().and_then(Option::as_ref));
            if let Some((_, field)) = given {
                found.push(field_err(
                    field,
                    format!(
                        "set without platform.azure.virtualNetwork; expected a subnet of an existing vnet named there, or no subnets (the installer then makes {infra_id}-vnet)"
                    ),
                ));
            }
        }
        None => {}
    }
    found.or_build(|| {
        let mut sources = Vec::new();
        let resource_group = by_infra_id(
            &mut sources,
            "resource group",
            resource_group?,
            infra_id,
            "rg",
        );
        let network_resource_group = value(
            &mut sources,
            "network resource group",
            network_resource_group?,
            resource_group.clone(),
            "the resource group",
        );
        let virtual_network = by_infra_id(
            &mut sources,
            "virtual network",
            virtual_network?,
            infra_id,
            "vnet",
        );
        let (control_plane_subnet, compute_subnet) =
            installer_subnets(&mut sources, infra_id, control_plane?, compute?);
        Some(AzureSpec {
            region: region?,
            resource_group,
            base_domain_resource_group: base_domain_resource_group?,
            network_resource_group,
            virtual_network,
            compute_subnet,
            control_plane_subnet,
            sources,
            // Set from the install-config or the Infrastructure manifest by `azure_cloud::read`.
            cloud: bootstrap_cloud::azure_cloud::AzureCloud::AzurePublicCloud,
        })
    })
}

type Given = Option<(String, String)>;

/// `platform.azure.subnets[]`: the first `node` subnet and the one `control-plane` subnet.
fn azure_subnets(ic: &Doc) -> Result<(Given, Given), Vec<FieldError>> {
    let list = ic
        .opt_list("platform.azure.subnets")
        .map_err(|e| vec![(e.field, e.problem)])?;
    let mut found = FieldProblems::default();
    let (mut compute, mut control_plane): (Given, Given) = (None, None);
    for (i, entry) in list.iter().enumerate() {
        let field = format!("platform.azure.subnets[{i}]");
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| field_err(&format!("{field}.name"), "expected a subnet name"));
        let given = found
            .take(name)
            .map(|name| (name.to_string(), format!("{field}.name")));
        match entry.get("role").and_then(Value::as_str) {
            Some("node") => {
                if compute.is_none() {
                    compute = given;
                }
            }
            Some("control-plane") => {
                if let Some((first, _)) = &control_plane {
                    found.push(field_err(
                        &format!("{field}.role"),
                        format!(
                            "a second control-plane subnet ({first} is the first); expected exactly one"
                        ),
                    ));
                } else {
                    control_plane = given;
                }
            }
            _ => found.push(field_err(
                &format!("{field}.role"),
                "expected node or control-plane",
            )),
        }
    }
    found.or_build(|| Some((compute, control_plane)))
}
