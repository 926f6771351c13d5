//! PURE: the two manifests the cluster-hosted DNS reads the load balancers' IPs from, as the
//! installer writes them once its load balancers exist (openshift/installer
//! pkg/infrastructure/clusterapi/ignition.go `addLoadBalancersToInfra`, and
//! pkg/asset/lbconfig/lbconfig.go), here filled with the reserved IPs instead.

use crate::assets::{ClusterSpec, Doc, kind};
use crate::error::{InputError, read_if_present};
use bootstrap_cloud::{Reservation, ReservationKey, Scope};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;

/// The lb-config ConfigMap's file in the asset dir (lbconfig.go `ConfigPath`).
pub const LB_CONFIG: &str = "openshift/openshift-lb-config.yaml";
pub const LB_CONFIG_NAME: &str = "openshift-lb-config";
pub const LB_CONFIG_NAMESPACE: &str = "openshift-infra";
/// The keys of its data (lbconfig.go `PrivateLoadBalancer`, `PublicLoadBalancer`).
pub const INTERNAL_KEY: &str = "internal-api-lb-ips";
pub const EXTERNAL_KEY: &str = "external-api-lb-ips";
/// openshift/api config/v1 `CloudLoadBalancerIPs`: `+kubebuilder:validation:MaxItems=16`.
pub const MAX_IPS: usize = 16;

/// The IPs the cluster-hosted DNS answers `api-int` and `api` with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbIps {
    /// `apiIntLoadBalancerIPs`: the reserved private IPs.
    pub api_int: Vec<IpAddr>,
    /// `apiLoadBalancerIPs`: the reserved public IPs for a public API; for a private one the
    /// internal IPs, as the installer does ("In private clusters, the API and API-Int servers
    /// both point to the same internal load balancer", pkg/infrastructure/gcp/clusterapi/
    /// ignition.go).
    pub api: Vec<IpAddr>,
}

impl LbIps {
    /// From the reservations kept for each key (in key order: IPv4 before IPv6), each list
    /// without repeats (`+listType=set`).
    pub fn of(spec: &ClusterSpec, kept: &BTreeMap<ReservationKey, Reservation>) -> Self {
        let of_scope = |scope: Scope| {
            let mut ips: Vec<IpAddr> = Vec::new();
            for r in kept.values().filter(|r| r.key.scope == scope) {
                if !ips.contains(&r.ip) {
                    ips.push(r.ip);
                }
            }
            ips
        };
        let api_int = of_scope(Scope::Private);
        let api = if spec.publish.public_api() {
            of_scope(Scope::Public)
        } else {
            api_int.clone()
        };
        Self { api_int, api }
    }
}

/// The JSON path segments of `cloudLoadBalancerConfig` for `cloud` (aws, gcp, azure).
fn config_path(cloud: &str) -> [&str; 4] {
    ["status", "platformStatus", cloud, "cloudLoadBalancerConfig"]
}

/// The mapping under `segments`, made when absent; anything else there is bad input.
fn mapping_at<'a>(
    root: &'a mut Value,
    segments: &[&str],
    doc: &Doc,
) -> Result<&'a mut Map<String, Value>, InputError> {
    let mut here = root;
    for (depth, segment) in segments.iter().enumerate() {
        let field = segments[..=depth].join(".");
        let parent = here
            .as_object_mut()
            .ok_or_else(|| doc.error(&field, "expected to be inside a mapping"))?;
        let child = parent
            .entry(segment.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if child.is_null() {
            *child = Value::Object(Map::new());
        }
        if !child.is_object() {
            return Err(doc.error(&field, format!("expected a mapping, found {}", kind(child))));
        }
        here = child;
    }
    here.as_object_mut()
        .ok_or_else(|| doc.error(&segments.join("."), "expected a mapping"))
}

/// The Infrastructure manifest with `clusterHosted.apiIntLoadBalancerIPs` and
/// `apiLoadBalancerIPs` set to `ips` (and `dnsType: ClusterHosted` when absent: the installer
/// writes it whenever userProvisionedDNS is Enabled). Every other field stays as it was,
/// `ingressLoadBalancerIPs` included. A shape that is not the Infrastructure's is bad input.
pub fn with_lb_ips(doc: &Doc, cloud: &str, ips: &LbIps) -> Result<Value, InputError> {
    match doc.get("kind") {
        Some(Value::String(k)) if k == "Infrastructure" => {}
        Some(other) => {
            return Err(doc.error(
                "kind",
                format!("expected Infrastructure, found {}", describe(other)),
            ));
        }
        None => return Err(doc.error("kind", "missing; expected Infrastructure")),
    }
    let path = config_path(cloud);
    let mut root = doc.root.clone();
    let config = mapping_at(&mut root, &path, doc)?;
    let dns_type = config
        .entry("dnsType")
        .or_insert_with(|| json!("ClusterHosted"));
    if dns_type != "ClusterHosted" {
        return Err(doc.error(
            &format!("{}.dnsType", path.join(".")),
            format!(
                "expected ClusterHosted (the IPs are published only for cluster-hosted DNS), found {}",
                describe(dns_type)
            ),
        ));
    }
    let mut hosted_path = path.to_vec();
    hosted_path.push("clusterHosted");
    let hosted = mapping_at(&mut root, &hosted_path, doc)?;
    for (key, list) in [
        ("apiIntLoadBalancerIPs", &ips.api_int),
        ("apiLoadBalancerIPs", &ips.api),
    ] {
        if list.len() > MAX_IPS {
            return Err(doc.error(
                &format!("{}.{key}", hosted_path.join(".")),
                format!(
                    "{} IPs to publish, but the API allows at most {MAX_IPS} (openshift/api CloudLoadBalancerIPs)",
                    list.len()
                ),
            ));
        }
        let strings: Vec<Value> = list.iter().map(|ip| json!(ip.to_string())).collect();
        hosted.insert(key.to_string(), Value::Array(strings));
    }
    Ok(root)
}

/// The lb-config ConfigMap, as `CreateLBConfigMap` builds it: both keys, each the IPs joined
/// by commas.
pub fn lb_config(ips: &LbIps) -> Value {
    let joined = |list: &[IpAddr]| {
        list.iter()
            .map(IpAddr::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": LB_CONFIG_NAME, "namespace": LB_CONFIG_NAMESPACE},
        "data": {INTERNAL_KEY: joined(&ips.api_int), EXTERNAL_KEY: joined(&ips.api)},
    })
}

/// An lb-config file already in the asset dir is replaced only when it is the installer's:
/// empty (the installer writes it empty until its load balancers exist) or ConfigMap
/// `openshift-infra/openshift-lb-config`. None: empty or absent.
pub fn existing_lb_config(path: &Path) -> Result<Option<Doc>, InputError> {
    let Some(text) = read_if_present(path)? else {
        return Ok(None);
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let doc = Doc::parse(path, &text, "(document)")?;
    for (field, want) in [
        ("kind", "ConfigMap"),
        ("metadata.name", LB_CONFIG_NAME),
        ("metadata.namespace", LB_CONFIG_NAMESPACE),
    ] {
        match doc.get(field) {
            Some(Value::String(s)) if s == want => {}
            Some(other) => {
                return Err(doc.error(field, format!("expected {want}, found {}", describe(other))));
            }
            None => return Err(doc.error(field, format!("missing; expected {want}"))),
        }
    }
    Ok(Some(doc))
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => kind(other).to_string(),
    }
}
