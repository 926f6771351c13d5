//! Reads an installer asset dir into one validated `ClusterSpec`. Every error names the file,
//! the field and what was expected; nothing is written anywhere before this succeeds.

mod aws_subnets;
mod dns_zones;
mod doc;
mod endpoints;
mod network;
mod platform_spec;
mod publishing;
mod spec;
mod subnet_lookup;

pub use dns_zones::DNS_CONFIG;
pub use doc::{Doc, kind};
pub use spec::*;

use crate::error::InputError;
use base64::Engine;
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

/// Loads and validates the asset dir.
pub fn load(dir: &Path) -> Result<ClusterSpec, InputError> {
    if !dir.is_dir() {
        return Err(InputError::new(
            dir,
            "(dir)",
            "asset dir does not exist or is not a directory",
        ));
    }
    let config_map = Doc::read(&dir.join(CLUSTER_CONFIG))?;
    let install_config = Doc::parse(
        &dir.join(CLUSTER_CONFIG),
        config_map.str("data.install-config")?,
        "data.install-config",
    )?;
    let infra = Doc::read(&dir.join(INFRASTRUCTURE))?;
    from_docs(dir, &install_config, &infra)
}

fn from_docs(dir: &Path, ic: &Doc, infra: &Doc) -> Result<ClusterSpec, InputError> {
    // Fields of the embedded install-config are reported as `data.install-config: <path>`.
    let ic_field = |f: &str| format!("data.install-config: {f}");
    let ic_str = |f: &str| {
        ic.str(f)
            .map_err(|e| InputError::new(&ic.file, ic_field(f), e.problem))
    };

    let infra_id = infra.str("status.infrastructureName")?.to_string();
    validate_infra_id(&infra_id).map_err(|p| infra.error("status.infrastructureName", p))?;
    let cluster_name = ic_str("metadata.name")?.to_string();
    let base_domain = ic_str("baseDomain")?.trim_end_matches('.').to_string();
    let api_server_internal_uri = infra.str("status.apiServerInternalURI")?.to_string();

    let publish =
        publishing::publish(ic).map_err(|(f, p)| InputError::new(&ic.file, ic_field(&f), p))?;

    let (ip_families, machine_networks) =
        ip_families(ic).map_err(|(f, p)| InputError::new(&ic.file, ic_field(&f), p))?;
    let control_plane_replicas = match ic.get("controlPlane.replicas") {
        None => 3,
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
            })?,
    };
    let capabilities =
        capabilities(ic).map_err(|(f, p)| InputError::new(&ic.file, ic_field(&f), p))?;

    let infra_type = infra.str("status.platformStatus.type")?;
    let platform = platform(ic, &infra_id, publish)
        .map_err(|(f, p)| InputError::new(&ic.file, ic_field(&f), p))?;
    let expected_type = match platform {
        Platform::Aws(_) => "AWS",
        Platform::Azure(_) => "Azure",
        Platform::Gcp(_) => "GCP",
        Platform::None => "None",
    };
    if infra_type != expected_type {
        return Err(infra.error(
            "status.platformStatus.type",
            format!("is {infra_type}, but the install-config's platform is {}; expected {expected_type}", platform.name()),
        ));
    }
    let mut platform = platform;
    if let Platform::Aws(aws) = &mut platform {
        aws.service_endpoints = endpoints::aws(ic, infra)?;
    }
    let dns = publishing::dns_management(ic, infra, &platform)?;
    let credentials = credentials(dir, &platform)?;
    let zones = dns_zones::zones(
        dir,
        ic,
        &platform,
        &format!("{cluster_name}.{base_domain}"),
        &base_domain,
    )?;

    Ok(ClusterSpec {
        infra_id,
        cluster_name,
        base_domain,
        platform,
        publish,
        dns,
        zones,
        ip_families,
        machine_networks,
        control_plane_replicas,
        capabilities,
        api_server_internal_uri,
        bootstrap_ip: None,
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

/// The machine-network families (IPv4 first) and the CIDRs themselves.
fn ip_families(ic: &Doc) -> Result<(Vec<IpFamily>, Vec<Cidr>), FieldError> {
    let mut families = Vec::new();
    let mut networks = Vec::new();
    for (i, entry) in ic
        .opt_list("networking.machineNetwork")
        .map_err(|e| (e.field, e.problem))?
        .iter()
        .enumerate()
    {
        let field = format!("networking.machineNetwork[{i}].cidr");
        let cidr = entry
            .get("cidr")
            .and_then(Value::as_str)
            .ok_or_else(|| field_err(&field, "expected a CIDR string"))?;
        let (addr, len) = cidr.split_once('/').ok_or_else(|| {
            field_err(
                &field,
                format!("expected a CIDR like 10.0.0.0/16, found {cidr:?}"),
            )
        })?;
        let ip: std::net::IpAddr = addr
            .parse()
            .map_err(|_| field_err(&field, format!("{addr:?} is not an IP address")))?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        match len.parse::<u8>() {
            Ok(n) if n <= max => networks.push(Cidr {
                network: ip,
                prefix: n,
            }),
            _ => {
                return Err(field_err(
                    &field,
                    format!("prefix length {len:?} is not 0..={max}"),
                ));
            }
        }
        let family = IpFamily::of(&ip);
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

fn capabilities(ic: &Doc) -> Result<Option<CapabilitiesSpec>, FieldError> {
    let Some(block) = ic.get("capabilities") else {
        return Ok(None);
    };
    if !block.is_object() {
        return Err(field_err("capabilities", "expected a mapping"));
    }
    let baseline = match block.get("baselineCapabilitySet") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(field_err(
                "capabilities.baselineCapabilitySet",
                "expected a string",
            ));
        }
    };
    let additional = match block.get("additionalEnabledCapabilities") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    field_err(
                        &format!("capabilities.additionalEnabledCapabilities[{i}]"),
                        "expected a string",
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(field_err(
                "capabilities.additionalEnabledCapabilities",
                "expected a list of strings",
            ));
        }
    };
    Ok(Some(CapabilitiesSpec {
        baseline,
        additional,
    }))
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

fn platform(ic: &Doc, infra_id: &str, publish: Publish) -> Result<Platform, FieldError> {
    let name = platform_name(ic)?;
    match name {
        "aws" => network::aws(ic, publish).map(Platform::Aws),
        "azure" => network::azure(ic, infra_id).map(Platform::Azure),
        "gcp" => network::gcp(ic, infra_id).map(Platform::Gcp),
        "none" => Ok(Platform::None),
        other => Err(field_err(
            "platform",
            format!("unknown platform {other:?}; expected one of aws, azure, gcp, none"),
        )),
    }
}

/// Credentials from the creds secret, when it exists; else the SDK's standard chain.
fn credentials(dir: &Path, platform: &Platform) -> Result<Credentials, InputError> {
    let path = dir.join(CREDS_SECRET);
    if matches!(platform, Platform::None) || !path.exists() {
        return Ok(Credentials::Environment);
    }
    let secret = Doc::read(&path)?;
    let field = |key: &str| -> Result<String, InputError> {
        if let Some(v) = secret.get_in(&["stringData", key]).and_then(Value::as_str) {
            return Ok(v.to_string());
        }
        let field = format!("data.{key}");
        let encoded = match secret.get_in(&["data", key]) {
            Some(Value::String(s)) => s,
            Some(_) => return Err(secret.error(&field, "expected a base64 string")),
            None => return Err(secret.error(&field, "missing; expected a base64 string")),
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map_err(|_| secret.error(&field, "expected base64"))?;
        String::from_utf8(bytes).map_err(|_| secret.error(&field, "expected base64 of UTF-8 text"))
    };
    Ok(match platform {
        Platform::Aws(_) => Credentials::AwsKeys {
            access_key_id: field("aws_access_key_id")?,
            secret_access_key: field("aws_secret_access_key")?,
        },
        Platform::Azure(_) => Credentials::AzureClientSecret {
            subscription_id: field("azure_subscription_id")?,
            tenant_id: field("azure_tenant_id")?,
            client_id: field("azure_client_id")?,
            client_secret: field("azure_client_secret")?,
        },
        Platform::Gcp(_) => {
            let json = field("service_account.json")?;
            if !serde_json::from_str::<Value>(&json).is_ok_and(|v| v.is_object()) {
                return Err(secret.error(
                    "data.service_account.json",
                    "expected a service account key (JSON object)",
                ));
            }
            Credentials::GcpServiceAccount { json }
        }
        Platform::None => Credentials::Environment,
    })
}

#[cfg(test)]
mod tests;
