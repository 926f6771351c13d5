//! Service manifests from minijinja templates, parsed back into typed objects before anything
//! is applied. Templates are embedded; `--templates DIR` overrides them (air-gapped installs,
//! custom annotations). A template that renders to nothing (the external LB with publish
//! Internal; machine-config-server on AWS, where it is a listener of the one internal NLB)
//! yields no object; one that renders to an invalid Service is an error naming it.

mod claims;
mod context;

pub use claims::{ServiceClaim, claimed_ips, fixed_addresses};

use crate::assets::{ClusterSpec, Platform};
use anyhow::{Context, Result};
use bootstrap_cloud::Reservation;
use context::context;
use k8s_openapi::api::core::v1::Service;
use minijinja::{Environment, UndefinedBehavior};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The Services, by the template file that renders each (namespace/name fixed in the templates).
pub const SERVICE_TEMPLATES: [&str; 3] = [
    "external-lb.yaml",
    "internal-lb.yaml",
    "internal-lb-machine-config-server.yaml",
];

/// Label on everything the agent applies.
pub const INFRA_LABEL: &str = "bootstrap-agent.openshift.io/infra-id";

/// The labels on everything the agent applies for the cluster `infra_id`.
pub fn our_labels(infra_id: &str) -> std::collections::BTreeMap<String, String> {
    std::collections::BTreeMap::from([
        (
            "app.kubernetes.io/managed-by".to_string(),
            "bootstrap-agent".to_string(),
        ),
        (INFRA_LABEL.to_string(), infra_id.to_string()),
    ])
}

/// Whether an object carrying `labels` is the agent's, for the cluster `infra_id`: the one
/// ownership check of what the agent deletes in the cluster (`teardown --all`).
pub fn is_ours(
    labels: Option<&std::collections::BTreeMap<String, String>>,
    infra_id: &str,
) -> bool {
    our_labels(infra_id)
        .iter()
        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
}

macro_rules! embedded {
    ($cloud:literal) => {
        [
            include_str!(concat!(
                "../../templates/services/",
                $cloud,
                "/external-lb.yaml"
            )),
            include_str!(concat!(
                "../../templates/services/",
                $cloud,
                "/internal-lb.yaml"
            )),
            include_str!(concat!(
                "../../templates/services/",
                $cloud,
                "/internal-lb-machine-config-server.yaml"
            )),
        ]
    };
}

const AWS: [&str; 3] = embedded!("aws");
const AZURE: [&str; 3] = embedded!("azure");
const GCP: [&str; 3] = embedded!("gcp");

/// One rendered Service and where it came from.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// `services/<cloud>/<file>`, as named in errors.
    pub template: String,
    pub service: Service,
}

/// Renders the Services for the spec's platform from the kept reservations.
pub fn services(
    spec: &ClusterSpec,
    reservations: &[Reservation],
    overrides: Option<&Path>,
) -> Result<Vec<Rendered>> {
    let (cloud, embedded) = match &spec.platform {
        Platform::Aws(_) => ("aws", AWS),
        Platform::Azure(_) => ("azure", AZURE),
        Platform::Gcp(_) => ("gcp", GCP),
        Platform::None => return Ok(Vec::new()),
    };
    // cloud-provider-azure looks for all of a Service's public IPs in one resource group.
    if let [first, second, ..] = context::foreign_public_ip_groups(spec, reservations).as_slice() {
        anyhow::bail!(
            "the public IPs are in resource groups {first} and {second}: the external Service names one (service.beta.kubernetes.io/azure-load-balancer-resource-group), where cloud-provider-azure looks for all of them; use public IPs of one resource group"
        );
    }
    let ctx = context(spec, reservations);
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // A reservation that does not exist is None in the context. Printing it must fail rather
    // than write "None" into an annotation or `loadBalancerIP`, which no later check catches.
    env.set_formatter(|out, state, value| {
        if value.is_none() {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                "prints a missing value (a reservation is missing?)",
            ));
        }
        minijinja::escape_formatter(out, state, value)
    });
    let mut out = Vec::new();
    for (file, builtin) in SERVICE_TEMPLATES.iter().zip(embedded) {
        let name = format!("services/{cloud}/{file}");
        let source = match overrides {
            Some(dir) => {
                let path: PathBuf = dir.join(&name);
                std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read template {}", path.display()))?
            }
            None => builtin.to_string(),
        };
        let text = env
            .render_str(
                &source,
                minijinja::Value::from(minijinja::value::Serde(&ctx)),
            )
            .map_err(|e| anyhow::anyhow!("template {name}: {e:#}"))?;
        if text.trim().is_empty() {
            continue;
        }
        let service: Service = serde_saphyr::from_str(&text).map_err(|e| {
            // A field of the wrong type: named by its path, not by a line and column.
            let named = serde_saphyr::from_str::<serde_json::Value>(&text)
                .ok()
                .as_ref()
                .and_then(crate::assets::object_head_problem)
                .map_or_else(
                    || e.to_string(),
                    |(field, problem)| format!("{field}: {problem}"),
                );
            anyhow::anyhow!("template {name} does not render a valid Service: {named}")
        })?;
        validate(&service).map_err(|problem| {
            anyhow::anyhow!("template {name} renders an invalid Service: {problem}")
        })?;
        out.push(Rendered {
            template: name,
            service,
        });
    }
    Ok(out)
}

fn validate(service: &Service) -> std::result::Result<(), String> {
    let meta = &service.metadata;
    let name = meta.name.as_deref().ok_or("metadata.name is missing")?;
    if !is_dns1123_label(name) {
        return Err(format!("metadata.name {name:?} is not a DNS-1123 label"));
    }
    let ns = meta
        .namespace
        .as_deref()
        .ok_or("metadata.namespace is missing")?;
    if !is_dns1123_label(ns) {
        return Err(format!("metadata.namespace {ns:?} is not a DNS-1123 label"));
    }
    let spec = service.spec.as_ref().ok_or("spec is missing")?;
    if spec.type_.as_deref() != Some("LoadBalancer") {
        return Err(format!(
            "spec.type is {:?}, expected LoadBalancer",
            spec.type_
        ));
    }
    if spec.ports.as_ref().is_none_or(Vec::is_empty) {
        return Err("spec.ports is empty".into());
    }
    if spec.selector.as_ref().is_none_or(BTreeMap::is_empty) {
        return Err("spec.selector is empty: the Service would never get endpoints".into());
    }
    for (key, value) in meta.annotations.iter().flatten() {
        if value.trim().is_empty() || value.split(',').any(|v| v.trim().is_empty()) {
            return Err(format!(
                "annotation {key} has an empty value (a reservation is missing?)"
            ));
        }
    }
    Ok(())
}

fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Multi-document YAML of the rendered Services (for `render --output yaml`).
pub fn to_yaml(rendered: &[Rendered]) -> Result<String> {
    let mut out = String::new();
    for r in rendered {
        out.push_str(&format!("---\n# from template {}\n", r.template));
        out.push_str(&serde_saphyr::to_string(&r.service).context("cannot encode Service")?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
