//! `publish-lb-ips`: cluster-hosted DNS (`userProvisionedDNS: Enabled`, Infrastructure
//! `cloudLoadBalancerConfig.dnsType: ClusterHosted`) answers `api` / `api-int` from the IPs in
//! the Infrastructure manifest and the lb-config ConfigMap, and bootkube reads those manifests
//! when it starts. The installer fills them once its own load balancers exist; with the agent,
//! the load balancers come later (in-cluster Services, which need the cluster bootkube brings
//! up), so this step reserves the IPs first (the Reserve stage of `run`, journaled and
//! resumable) and writes them into both manifests before bootkube starts. `run` then finds the
//! reservations made and goes on.
//!
//! With cloud DNS the installer writes neither (it fills `clusterHosted` only when dnsType is
//! ClusterHosted), and neither does this: it does nothing. `--dns manual` alone does not make
//! DNS cluster-hosted either.

mod manifests;
#[cfg(test)]
mod tests;

pub use manifests::{LB_CONFIG, LbIps, MAX_IPS, existing_lb_config, lb_config, with_lb_ips};

use crate::assets::{self, ClusterSpec, Doc, INFRASTRUCTURE, Platform};
use crate::context::{Common, Context};
use crate::error::InputError;
use crate::output::{self, Output};
use crate::plan::Step;
use anyhow::{Result, bail};
use bootstrap_cloud::Scope;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// What the step did, for `--output json|yaml`.
#[derive(Debug, Serialize)]
pub struct Published {
    /// Why nothing was published (cloud DNS); None when the manifests hold the IPs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub api_int_load_balancer_ips: Vec<std::net::IpAddr>,
    pub api_load_balancer_ips: Vec<std::net::IpAddr>,
    /// The reservations made by this run (0 when they existed).
    pub reserved: u32,
    /// The files rewritten (none when they already held these IPs).
    pub written: Vec<String>,
}

pub async fn command(common: &Common) -> Result<()> {
    let published = publish(common).await?;
    match common.output {
        Output::Text => output::write_stdout(&text(&published)),
        other => output::data(other, &published),
    }
}

fn text(p: &Published) -> String {
    if let Some(why) = &p.skipped {
        return format!("publish-lb-ips: nothing to publish: {why}\n");
    }
    let list = |ips: &[std::net::IpAddr]| {
        ips.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let files = if p.written.is_empty() {
        "both manifests already held them, nothing written".to_string()
    } else {
        format!("wrote {}", p.written.join(", "))
    };
    format!(
        "publish-lb-ips: apiIntLoadBalancerIPs {}; apiLoadBalancerIPs {}; {} reservation(s) made; {files}\n",
        list(&p.api_int_load_balancer_ips),
        list(&p.api_load_balancer_ips),
        p.reserved
    )
}

/// The cloud's key under `status.platformStatus` (None: platform none, no cloud DNS at all).
fn cloud_key(spec: &ClusterSpec) -> Option<&'static str> {
    match spec.platform {
        Platform::Aws(_) => Some("aws"),
        Platform::Gcp(_) => Some("gcp"),
        Platform::Azure(_) => Some("azure"),
        Platform::None => None,
    }
}

/// Reserve, then write both manifests; every input checked before the lock and the cloud.
pub async fn publish(common: &Common) -> Result<Published> {
    // The installer's own inputs decide, not `--dns manual`: only they make DNS cluster-hosted.
    let installer = assets::load(common.assets())?;
    let (Some(cloud), Some(_)) = (cloud_key(&installer), installer.user_managed_dns()) else {
        return Ok(Published {
            skipped: Some("DNS is not cluster-hosted (no userProvisionedDNS: Enabled, no dnsType: ClusterHosted); the installer publishes no IPs then, and `run` writes the cloud's records".into()),
            api_int_load_balancer_ips: Vec::new(),
            api_load_balancer_ips: Vec::new(),
            reserved: 0,
            written: Vec::new(),
        });
    };
    let infra_path = common.assets().join(INFRASTRUCTURE);
    let lb_path = common.assets().join(LB_CONFIG);
    // Bad shapes and too many IPs are refused before anything is reserved: the edit is
    // tried on placeholders as many as the reservations will be.
    let infra = Doc::read(&infra_path)?;
    let existing_lb = existing_lb_config(&lb_path)?;
    with_lb_ips(&infra, cloud, &placeholders(&installer))?;

    let mut ctx = Context::open(common, &[Step::Reserve]).await?;
    let report = ctx.runner().run(Step::Reserve).await?;
    let kept = report.after.kept();
    let missing = report.after.missing_reservations(&ctx.spec);
    if !missing.is_empty() {
        bail!(
            "reservations missing after the reserve stage: {}; nothing was written",
            missing.join(", ")
        );
    }
    let ips = LbIps::of(&ctx.spec, &kept);
    let mut written = Vec::new();
    let infra_now = with_lb_ips(&infra, cloud, &ips)?;
    if write_if_changed(&infra_path, &infra.root, &infra_now)? {
        written.push(INFRASTRUCTURE.to_string());
    }
    let current_lb = existing_lb.map(|d| d.root).unwrap_or(Value::Null);
    if write_if_changed(&lb_path, &current_lb, &lb_config(&ips))? {
        written.push(LB_CONFIG.to_string());
    }
    Ok(Published {
        skipped: None,
        api_int_load_balancer_ips: ips.api_int,
        api_load_balancer_ips: ips.api,
        reserved: report.mutations,
        written,
    })
}

/// As many distinct documentation addresses (RFC 5737) per list as there will be IPs: the
/// manifest edit checked before anything is reserved.
fn placeholders(spec: &ClusterSpec) -> LbIps {
    let wanted = crate::plan::wanted_reservations(spec);
    let count = |scope: Scope| wanted.iter().filter(|w| w.key.scope == scope).count();
    let fake = |n: usize| {
        (0..n)
            .map(|i| std::net::IpAddr::from([192, 0, 2, u8::try_from(i % 256).unwrap_or(0)]))
            .collect::<Vec<_>>()
    };
    let api_int = fake(count(Scope::Private));
    let api = if spec.publish.public_api() {
        fake(count(Scope::Public))
    } else {
        api_int.clone()
    };
    LbIps { api_int, api }
}

/// Writes `wanted` as YAML over `path` (temp file + rename) unless the file already holds it.
fn write_if_changed(path: &Path, current: &Value, wanted: &Value) -> Result<bool> {
    if current == wanted {
        return Ok(false);
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        bail!(InputError::new(
            path,
            "(file)",
            "expected a file inside the asset dir"
        ));
    };
    std::fs::create_dir_all(dir)?;
    crate::journal::write_atomically(dir, name, serde_saphyr::to_string(wanted)?.as_bytes())?;
    // The temp file was private; the manifests are not secret, and bootkube reads them.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))?;
    Ok(true)
}
