//! Every field of the asset dir the agent reads, checked in one pass: the manifests' kinds,
//! names and domains, the cloud ids, the URI, duplicates, the address family against the
//! platform, and the creds secret. Each problem is collected; none stops the pass.

use super::files::{self, MAX_INPUT_BYTES};
use super::names;
use crate::assets::{CLUSTER_CONFIG, CREDS_SECRET, INFRASTRUCTURE, kind};
use crate::error::InputError;
use base64::Engine;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod platforms;

use platforms::{aws, azure, gcp};

pub const DNS_CONFIG: &str = "manifests/cluster-dns-02-config.yml";

/// The problems of one file, its fields prefixed (the install-config is embedded).
struct FileCheck<'a> {
    file: PathBuf,
    prefix: &'static str,
    errors: &'a mut Vec<InputError>,
}

impl FileCheck<'_> {
    fn bad(&mut self, field: &str, problem: impl Into<String>) {
        self.errors.push(InputError::new(
            &self.file,
            format!("{}{field}", self.prefix),
            problem,
        ));
    }

    /// Runs `check` on the string at `field` when it is there; a non-string is a problem.
    fn opt_str(&mut self, root: &Value, field: &str, check: impl Fn(&str) -> Result<(), String>) {
        match at(root, field) {
            None => {}
            Some(Value::String(s)) => {
                if let Err(p) = check(s) {
                    self.bad(field, p);
                }
            }
            Some(other) => self.bad(field, format!("expected a string, found {}", kind(other))),
        }
    }

    fn kind_is(&mut self, root: &Value, api_version: &str, kind_name: &str) {
        for (field, want) in [("apiVersion", api_version), ("kind", kind_name)] {
            match at(root, field) {
                Some(Value::String(s)) if s == want => {}
                Some(Value::String(s)) => self.bad(field, format!("expected {want}, found {s:?}")),
                Some(other) => self.bad(field, format!("expected {want}, found {}", kind(other))),
                None => self.bad(field, format!("missing; expected {want}")),
            }
        }
    }
}

/// The value at a dotted path (keys without dots), or None when missing or null.
fn at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(root, |v, part| v.get(part))
        .filter(|v| !v.is_null())
}

/// YAML text to a mapping; the parser's message carries no snippet (the file may hold keys).
fn parse(file: &Path, text: &str, field: &str, errors: &mut Vec<InputError>) -> Option<Value> {
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    match serde_saphyr::from_str_with_options::<Value>(text, options) {
        Ok(v) if v.is_object() => Some(v),
        Ok(v) => {
            errors.push(InputError::new(
                file,
                field,
                format!("expected a YAML mapping, found {}", kind(&v)),
            ));
            None
        }
        Err(e) => {
            errors.push(InputError::new(file, field, format!("invalid YAML: {e}")));
            None
        }
    }
}

fn read(path: &Path, errors: &mut Vec<InputError>) -> Option<Value> {
    match files::read_required(path, MAX_INPUT_BYTES) {
        Ok(text) => parse(path, &text, "(document)", errors),
        Err(e) => {
            errors.push(e);
            None
        }
    }
}

/// Checks the asset dir; problems go to `errors`.
pub fn check(dir: &Path, errors: &mut Vec<InputError>) {
    if !dir.is_dir() {
        errors.push(InputError::new(
            dir,
            "(dir)",
            "asset dir does not exist or is not a directory",
        ));
        return;
    }
    let config_path = dir.join(CLUSTER_CONFIG);
    let install_config = read(&config_path, errors).and_then(|cm| {
        let mut c = FileCheck {
            file: config_path.clone(),
            prefix: "",
            errors,
        };
        c.kind_is(&cm, "v1", "ConfigMap");
        match at(&cm, "data.install-config") {
            Some(Value::String(text)) => parse(&config_path, text, "data.install-config", errors),
            // The loader says what is wrong with a missing or mistyped one.
            _ => None,
        }
    });
    let platform = install_config.as_ref().and_then(|ic| {
        let mut c = FileCheck {
            file: config_path.clone(),
            prefix: "data.install-config: ",
            errors,
        };
        install_config_fields(&mut c, ic)
    });

    let infra_path = dir.join(INFRASTRUCTURE);
    if let Some(infra) = read(&infra_path, errors) {
        let mut c = FileCheck {
            file: infra_path,
            prefix: "",
            errors,
        };
        c.kind_is(&infra, "config.openshift.io/v1", "Infrastructure");
        let domain = install_config.as_ref().and_then(cluster_domain);
        c.opt_str(&infra, "status.apiServerInternalURI", |uri| {
            let (host, _) = names::https_host_port(uri)?;
            match &domain {
                Some(d) if host != format!("api-int.{d}") => Err(format!(
                    "names host {host}; expected api-int.{d} (the install-config's metadata.name and baseDomain)"
                )),
                _ => Ok(()),
            }
        });
    }

    // Not read for any value, but an asset dir whose DNS manifest is something else is not an
    // installer's asset dir.
    let dns_path = dir.join(DNS_CONFIG);
    match files::read_optional(&dns_path, MAX_INPUT_BYTES) {
        Ok(None) => {}
        Ok(Some(text)) => {
            if let Some(dns) = parse(&dns_path, &text, "(document)", errors) {
                FileCheck {
                    file: dns_path,
                    prefix: "",
                    errors,
                }
                .kind_is(&dns, "config.openshift.io/v1", "DNS");
            }
        }
        Err(e) => errors.push(e),
    }

    if let Some(platform) = platform {
        creds(&dir.join(CREDS_SECRET), &platform, errors);
    }
}

fn cluster_domain(ic: &Value) -> Option<String> {
    let name = at(ic, "metadata.name")?.as_str()?;
    let base = at(ic, "baseDomain")?.as_str()?.trim_end_matches('.');
    Some(format!("{name}.{base}"))
}

/// The install-config fields; returns the platform name when there is exactly one.
fn install_config_fields(c: &mut FileCheck, ic: &Value) -> Option<String> {
    c.opt_str(ic, "metadata.name", names::dns_label);
    c.opt_str(ic, "baseDomain", names::dns_domain);
    if let Some(domain) = cluster_domain(ic) {
        // The longest name the agent writes; DNS allows 253 characters.
        if domain.len() + "api-int.".len() > 253 {
            c.bad(
                "metadata.name",
                format!("api-int.{domain} is longer than the 253 characters of a DNS name; expected a shorter name or baseDomain"),
            );
        }
    }
    let platform = at(ic, "platform")
        .and_then(Value::as_object)
        .filter(|p| p.len() == 1)
        .and_then(|p| p.keys().next().cloned());
    machine_network(c, ic, platform.as_deref());
    match platform.as_deref() {
        Some("aws") => aws(c, ic),
        Some("azure") => azure(c, ic),
        Some("gcp") => gcp(c, ic),
        _ => {}
    }
    platform
}

/// Single-stack IPv6 on aws, azure or gcp: the installer refuses it ("single-stack IPv6 is
/// not supported for this platform", openshift/installer pkg/types/validation/installconfig.go),
/// and the agent would plan IPv4 addresses the cluster has no network for.
fn machine_network(c: &mut FileCheck, ic: &Value, platform: Option<&str>) {
    let Some(Value::Array(entries)) = at(ic, "networking.machineNetwork") else {
        return;
    };
    let mut seen = BTreeMap::new();
    let (mut v4, mut v6) = (false, false);
    for (i, e) in entries.iter().enumerate() {
        let Some(cidr) = e.get("cidr").and_then(Value::as_str) else {
            continue;
        };
        if let Some(first) = seen.insert(cidr.to_string(), i) {
            c.bad(
                &format!("networking.machineNetwork[{i}].cidr"),
                format!("{cidr} is listed twice (also networking.machineNetwork[{first}]); expected each network once"),
            );
        }
        match cidr
            .split_once('/')
            .map(|(a, _)| a.parse::<std::net::IpAddr>())
        {
            Some(Ok(ip)) if ip.is_ipv4() => v4 = true,
            Some(Ok(_)) => v6 = true,
            _ => {}
        }
    }
    if let Some(p @ ("aws" | "azure" | "gcp")) = platform
        && v6
        && !v4
    {
        c.bad(
            "networking.machineNetwork",
            format!("is IPv6 only, which the installer does not support on {p}; expected an IPv4 network (with an IPv6 one for dual stack where supported)"),
        );
    }
}

/// The creds secret: absent is fine (the SDK's chain), anything else must be a readable
/// Secret with every key of the platform, non-empty and well-formed. Values are never quoted.
fn creds(path: &Path, platform: &str, errors: &mut Vec<InputError>) {
    let keys: &[&str] = match platform {
        "aws" => &["aws_access_key_id", "aws_secret_access_key"],
        "azure" => &[
            "azure_subscription_id",
            "azure_tenant_id",
            "azure_client_id",
            "azure_client_secret",
        ],
        "gcp" => &["service_account.json"],
        _ => return,
    };
    let text = match files::read_optional(path, MAX_INPUT_BYTES) {
        Ok(None) => return,
        Ok(Some(text)) => text,
        Err(e) => {
            errors.push(e);
            return;
        }
    };
    let Some(secret) = parse(path, &text, "(document)", errors) else {
        return;
    };
    let mut c = FileCheck {
        file: path.to_path_buf(),
        prefix: "",
        errors,
    };
    c.kind_is(&secret, "v1", "Secret");
    // A `stringData` or `data` that is not a mapping hides every key: said once, for itself.
    let mut sections_ok = true;
    for section in ["stringData", "data"] {
        if let Some(other) = at(&secret, section).filter(|v| !v.is_object()) {
            c.bad(
                section,
                format!(
                    "expected a mapping of key names to values, found {}",
                    kind(other)
                ),
            );
            sections_ok = false;
        }
    }
    if !sections_ok {
        return;
    }
    for key in keys {
        let value = match (
            secret.get("stringData").and_then(|d| d.get(*key)),
            secret.get("data").and_then(|d| d.get(*key)),
        ) {
            (Some(Value::String(s)), _) => s.clone(),
            (Some(other), _) => {
                c.bad(
                    &format!("stringData.{key}"),
                    format!("expected a string, found {}", kind(other)),
                );
                continue;
            }
            (None, Some(Value::String(encoded))) => {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(encoded.trim())
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok());
                match decoded {
                    Some(s) => s,
                    None => {
                        c.bad(&format!("data.{key}"), "expected base64 of UTF-8 text");
                        continue;
                    }
                }
            }
            (None, Some(other)) => {
                c.bad(
                    &format!("data.{key}"),
                    format!("expected a base64 string, found {}", kind(other)),
                );
                continue;
            }
            (None, None) => {
                c.bad(
                    &format!("data.{key}"),
                    "missing; expected a base64 string (or stringData.{key})",
                );
                continue;
            }
        };
        let field = format!("data.{key}");
        if value.trim().is_empty() {
            c.bad(&field, "is empty; expected a value");
            continue;
        }
        let verdict = match *key {
            "aws_access_key_id" => names::aws_access_key_id(value.trim()),
            "azure_subscription_id" | "azure_tenant_id" | "azure_client_id" => {
                names::guid(value.trim())
            }
            "service_account.json" => service_account(&value),
            _ => Ok(()),
        };
        if let Err(p) = verdict {
            c.bad(&field, p);
        }
    }
}

/// A GCP service account key: a JSON object naming its `type`, with the `private_key` a
/// service account signs with.
fn service_account(json: &str) -> Result<(), String> {
    let v: Value = serde_json::from_str(json)
        .map_err(|_| "expected a service account key (JSON object); it is not JSON".to_string())?;
    let field = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    match field("type") {
        None => Err("expected a service account key (JSON object with a type)".to_string()),
        Some("service_account") if field("private_key").is_none() => {
            Err("expected a service account key with a private_key".to_string())
        }
        Some(_) => Ok(()),
    }
}
