//! Reads an installer asset dir into one validated `ClusterSpec`. Every error names the file,
//! the field and what was expected; nothing is written anywhere before this succeeds.

mod aws_subnets;
mod azure_cloud;
mod credentials;
mod dns_zones;
mod doc;
mod endpoints;
mod network;
mod platform_spec;
mod problems;
mod publishing;
mod source;
mod spec;
mod subnet_lookup;

pub use dns_zones::DNS_CONFIG;
pub use doc::{Doc, kind, object_head_problem};
pub use source::{AssetDir, AssetSource, Document, Fetched};
pub use spec::*;

use crate::error::InputError;
use bootstrap_cloud::IpFamily;
use serde_json::Value;
use std::path::Path;

pub const CLUSTER_CONFIG: &str = "manifests/cluster-config.yaml";
pub const INFRASTRUCTURE: &str = "manifests/cluster-infrastructure-02-config.yml";
pub const CREDS_SECRET: &str = "openshift/99_cloud-creds-secret.yaml";

/// The TTL of the record sets the agent writes, unless `--dns-ttl` says otherwise: short, since
/// the agent changes them during the install (each reserved IP joins, the bootstrap IP goes)
/// and the bootstrap host may only go once every cached answer that holds it has expired.
pub const DEFAULT_TTL: u32 = 30;

/// Loads and validates the asset dir: the first problem (the one pass, `validate::check`,
/// reports them all with [`load_all`]).
pub fn load(dir: &Path) -> Result<ClusterSpec, InputError> {
    load_from(&AssetDir(dir))
}

/// [`load`] from any source of the documents (the asset dir, or the cluster).
pub fn load_from(source: &dyn AssetSource) -> Result<ClusterSpec, InputError> {
    load_all_from(source).map_err(|all| {
        all.into_iter()
            .next()
            .unwrap_or_else(|| InputError::new(source.origin(), "(dir)", "cannot be loaded"))
    })
}

/// Loads and validates the asset dir; Err holds every problem found (at least one).
pub fn load_all(dir: &Path) -> Result<ClusterSpec, Vec<InputError>> {
    load_all_from(&AssetDir(dir))
}

/// Loads and validates the documents of `source`; Err holds every problem found (at least
/// one). A part that depends on another (the platform block on the infra id and publish; the
/// zones on the names) is checked once what it depends on is sound.
pub fn load_all_from(source: &dyn AssetSource) -> Result<ClusterSpec, Vec<InputError>> {
    if let Some(problem) = source.problem() {
        return Err(vec![problem]);
    }
    let mut found = Problems::default();
    let install_config = source.read(Document::ClusterConfig).and_then(|config_map| {
        let config_map = config_map.ok_or_else(|| {
            InputError::new(source.origin(), "(document)", "cluster config is missing")
        })?;
        Doc::parse(
            &config_map.file,
            config_map.str("data.install-config")?,
            "data.install-config",
        )
    });
    let install_config = found.take(install_config);
    let infra = found.take(source.read(Document::Infrastructure).and_then(|d| {
        d.ok_or_else(|| InputError::new(source.origin(), "(document)", "Infrastructure is missing"))
    }));
    match (install_config, infra) {
        (Some(ic), Some(infra)) => from_docs(source, &ic, &infra),
        _ => Err(found.into_vec()),
    }
}

type Problems = problems::Problems<InputError>;

fn from_docs(
    source: &dyn AssetSource,
    ic: &Doc,
    infra: &Doc,
) -> Result<ClusterSpec, Vec<InputError>> {
    // Fields of the embedded install-config are reported as `data.install-config: <path>`.
    let ic_field = |f: &str| format!("data.install-config: {f}");
    let ic_err = |(f, p): FieldError| InputError::new(&ic.file, ic_field(&f), p);
    let ic_str = |f: &str| {
        ic.str(f)
            .map_err(|e| InputError::new(&ic.file, ic_field(f), e.problem))
    };
    let mut found = Problems::default();

    let infra_id = found.take(infra.str("status.infrastructureName").and_then(|id| {
        validate_infra_id(id)
            .map(|()| id.to_string())
            .map_err(|p| infra.error("status.infrastructureName", p))
    }));
    let cluster_name = found.take(ic_str("metadata.name").map(str::to_string));
    let base_domain = found.take(ic_str("baseDomain").map(|b| b.trim_end_matches('.').to_string()));
    let api_server_internal_uri =
        found.take(infra.str("status.apiServerInternalURI").map(str::to_string));
    let publish = found.take(publishing::publish(ic).map_err(ic_err));
    let families = found
        .take_all(ip_families(ic).map_err(|all| all.into_iter().map(ic_err).collect::<Vec<_>>()));
    let control_plane_replicas = found.take(match ic.get("controlPlane.replicas") {
        None => Ok(3),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                InputError::new(
                    &ic.file,
                    ic_field("controlPlane.replicas"),
                    "expected a positive integer",
                )
            }),
    });
    let capabilities = found
        .take_all(capabilities(ic).map_err(|all| all.into_iter().map(ic_err).collect::<Vec<_>>()));
    let infra_type = found.take(infra.str("status.platformStatus.type"));

    // The platform block names its defaults after the infra id and picks subnet roles by
    // publish. A malformed infra id (already reported) stands in for itself: the block's
    // own rules are checked all the same.
    let id_for_names = infra_id
        .clone()
        .or_else(|| {
            infra
                .get("status.infrastructureName")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default();
    let platform = match publish {
        Some(publish) => found.take_all(
            platform(ic, &id_for_names, publish)
                .map_err(|all| all.into_iter().map(ic_err).collect::<Vec<_>>()),
        ),
        None => None,
    };
    let settled = platform.and_then(|mut platform| {
        let expected_type = match platform {
            Platform::Aws(_) => "AWS",
            Platform::Azure(_) => "Azure",
            Platform::Gcp(_) => "GCP",
            Platform::None => "None",
        };
        let type_agrees = found.take(match infra_type {
            Some(t) if t != expected_type => Err(infra.error(
                "status.platformStatus.type",
                format!(
                    "is {t}, but the install-config's platform is {}; expected {expected_type}",
                    platform.name()
                ),
            )),
            _ => Ok(()),
        });
        let cloud = found.take(match &mut platform {
            Platform::Aws(aws) => endpoints::aws(ic, infra).map(|e| aws.service_endpoints = e),
            // Read here, not with the network: the Infrastructure manifest may carry it.
            Platform::Azure(azure) => azure_cloud::read(ic, infra).map(|c| azure.cloud = c),
            _ => Ok(()),
        });
        let dns = found.take(publishing::dns_management(ic, infra, &platform));
        let credentials = found.take_all(
            source
                .read(Document::CredsSecret)
                .map_err(|e| vec![e])
                .and_then(|secret| credentials::read(secret, &platform)),
        );
        let zones =
            match (&cluster_name, &base_domain) {
                (Some(name), Some(base)) => found.take(source.read(Document::Dns).and_then(|m| {
                    dns_zones::zones(m, ic, &platform, &format!("{name}.{base}"), base)
                })),
                _ => None,
            };
        Some((platform, type_agrees?, cloud?, dns?, credentials?, zones?))
    });

    let (
        Some(infra_id),
        Some(cluster_name),
        Some(base_domain),
        Some(api_server_internal_uri),
        Some(publish),
        Some((ip_families, machine_networks)),
        Some(control_plane_replicas),
        Some(capabilities),
        Some((platform, (), (), dns, credentials, zones)),
    ) = (
        infra_id,
        cluster_name,
        base_domain,
        api_server_internal_uri,
        publish,
        families,
        control_plane_replicas,
        capabilities,
        settled,
    )
    else {
        return Err(found.into_vec());
    };
    Ok(ClusterSpec {
        infra_id,
        cluster_name,
        base_domain,
        platform,
        publish,
        prior_publish: None,
        dns,
        zones,
        ip_families,
        machine_networks,
        control_plane_replicas,
        capabilities,
        api_server_internal_uri,
        bootstrap_ip: None,
        second_bootstrap_address: SecondAddress::Off,
        adoption: Default::default(),
        record_ttl: DEFAULT_TTL,
        credentials,
    })
}

/// Infra ids become resource names and tag keys: keep them to what every cloud accepts.
fn validate_infra_id(id: &str) -> Result<(), String> {
    let ok = id.len() <= 32
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && id.starts_with(|c: char| c.is_ascii_lowercase());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "expected at most 32 characters of a-z, 0-9 and '-', starting with a letter; found {id:?}"
        ))
    }
}

/// (field, problem) of the embedded install-config; the caller names the file.
type FieldError = (String, String);

fn field_err(field: &str, problem: impl Into<String>) -> FieldError {
    (field.to_string(), problem.into())
}

/// The machine-network families (IPv4 first) and the CIDRs themselves; every bad entry.
fn ip_families(ic: &Doc) -> Result<(Vec<IpFamily>, Vec<Cidr>), Vec<FieldError>> {
    let entries = ic
        .opt_list("networking.machineNetwork")
        .map_err(|e| vec![(e.field, e.problem)])?;
    let mut networks = Vec::new();
    let mut errors = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        match machine_network(entry, &format!("networking.machineNetwork[{i}].cidr")) {
            Ok(cidr) => networks.push(cidr),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut families: Vec<IpFamily> = Vec::new();
    for cidr in &networks {
        let family = IpFamily::of(&cidr.network);
        if !families.contains(&family) {
            families.push(family);
        }
    }
    if families.is_empty() {
        families.push(IpFamily::Ipv4);
    }
    families.sort();
    Ok((families, networks))
}

fn machine_network(entry: &Value, field: &str) -> Result<Cidr, FieldError> {
    let cidr = entry
        .get("cidr")
        .and_then(Value::as_str)
        .ok_or_else(|| field_err(field, "expected a CIDR string"))?;
    let (addr, len) = cidr.split_once('/').ok_or_else(|| {
        field_err(
            field,
            format!("expected a CIDR like 10.0.0.0/16, found {cidr:?}"),
        )
    })?;
    let ip: std::net::IpAddr = addr
        .parse()
        .map_err(|_| field_err(field, format!("{addr:?} is not an IP address")))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    match len.parse::<u8>() {
        Ok(n) if n <= max => Ok(Cidr {
            network: ip,
            prefix: n,
        }),
        _ => Err(field_err(
            field,
            format!("prefix length {len:?} is not 0..={max}"),
        )),
    }
}

/// The install-config's `capabilities`; every problem of both fields.
fn capabilities(ic: &Doc) -> Result<Option<CapabilitiesSpec>, Vec<FieldError>> {
    let Some(block) = ic.get("capabilities") else {
        return Ok(None);
    };
    if !block.is_object() {
        return Err(vec![field_err("capabilities", "expected a mapping")]);
    }
    let mut errors = Vec::new();
    let baseline = match block.get("baselineCapabilitySet") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            errors.push(field_err(
                "capabilities.baselineCapabilitySet",
                format!("expected a string, found {}", doc::kind(other)),
            ));
            None
        }
    };
    let mut additional = Vec::new();
    match block.get("additionalEnabledCapabilities") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                match v.as_str() {
                    Some(name) => additional.push(name.to_string()),
                    None => errors.push(field_err(
                        &format!("capabilities.additionalEnabledCapabilities[{i}]"),
                        format!("expected a string, found {}", doc::kind(v)),
                    )),
                }
            }
        }
        Some(other) => errors.push(field_err(
            "capabilities.additionalEnabledCapabilities",
            format!("expected a list of strings, found {}", doc::kind(other)),
        )),
    }
    if errors.is_empty() {
        Ok(Some(CapabilitiesSpec {
            baseline,
            additional,
        }))
    } else {
        Err(errors)
    }
}

/// The one key of the install-config's `platform` block.
fn platform_name(ic: &Doc) -> Result<&str, FieldError> {
    let block = ic
        .get("platform")
        .and_then(Value::as_object)
        .ok_or_else(|| field_err("platform", "missing; expected one of aws, azure, gcp, none"))?;
    let names: Vec<&String> = block.keys().collect();
    let [name] = names.as_slice() else {
        return Err(field_err(
            "platform",
            format!("expected exactly one of aws, azure, gcp, none; found {names:?}"),
        ));
    };
    Ok(name.as_str())
}

fn platform(ic: &Doc, infra_id: &str, publish: Publish) -> Result<Platform, Vec<FieldError>> {
    let name = platform_name(ic).map_err(|e| vec![e])?;
    match name {
        "aws" => network::aws(ic, publish).map(Platform::Aws),
        "azure" => network::azure(ic, infra_id).map(Platform::Azure),
        "gcp" => network::gcp(ic, infra_id).map(Platform::Gcp),
        "none" => Ok(Platform::None),
        other => Err(vec![field_err(
            "platform",
            format!("unknown platform {other:?}; expected one of aws, azure, gcp, none"),
        )]),
    }
}

#[cfg(test)]
pub(crate) mod tests;
