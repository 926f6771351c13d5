//! What each load-balancer resource of `lb_store` must hold, what GCE fills in, and what it
//! refuses, as OpenShift's GCE cloud provider meets them (openshift/cloud-provider-gcp
//! 30cc0479; the calls with file:line in `real-ccms-gcp-azure.md` 1.4-1.5):
//!
//! - Forwarding rules: `loadBalancingScheme` defaults to `EXTERNAL` and is always returned
//!   (the provider deletes and rebuilds a network load balancer whose rule shows another scheme,
//!   `gce_loadbalancer.go:199-218`); `IPProtocol` defaults to TCP. An INTERNAL rule needs an
//!   existing INTERNAL backend service and a subnetwork; an EXTERNAL one an existing target
//!   pool. The IP: an address resource holding it must be of the rule's type (and an
//!   EXTERNAL one of the rule's network tier); a second rule on an INTERNAL address is accepted
//!   only when the address's purpose is `SHARED_LOADBALANCER_VIP` and the ports do not
//!   overlap; an internal IP no address holds must be free in the subnetwork (GCE then gives it
//!   as an ephemeral address); an EXTERNAL IP must be a reserved address. The rule becomes a
//!   user of its address (`users`, status IN_USE) until it is deleted.
//! - Backend services: `loadBalancingScheme` defaults to EXTERNAL; each health check and each
//!   backend group must exist.
//! - Target pools: each instance must exist; GCE stores them as full URLs. Each health check
//!   (legacy HTTP) must exist.
//! - Health checks: GCE's defaults (5 s interval and timeout, thresholds 2); a timeout longer
//!   than the interval is refused. Firewalls: `allowed` or `denied`; direction INGRESS and
//!   priority 1000 by default; ranges must be CIDRs.
//!
//! Links are kept as the caller sent them (GCE answers in the form of its own endpoint, which
//! is what the provider built them from; a loopback endpoint must see its own form back, or
//! `forwardingRulesEqual` compares `subnetwork` strings unequal and rebuilds every sync).
//!
//! A forwarding rule's checks (its scheme, links, ports and IP, and its address's users) are
//! in `forwarding_rules`; this file holds the other resources' and what every one shares.

mod forwarding_rules;

pub(crate) use forwarding_rules::IP_IN_USE;

use super::World;
use super::compute::BASE;
use super::http::{ApiError, Reply};
use super::lb_store::key_of_url;
use forwarding_rules::forwarding_rule;
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr};

fn invalid(field: &str, value: &str, why: &str) -> ApiError {
    ApiError::invalid(format!(
        "Invalid value for field 'resource.{field}': '{value}'. {why}"
    ))
}

fn project(w: &World) -> String {
    w.seed().project.clone()
}

/// The stored resource a link names, or GCE's refusal of the field.
fn linked(w: &World, field: &str, url: &str, collection: &str) -> Result<String, ApiError> {
    key_of_url(&project(w), url)
        .filter(|k| k.contains(&format!("/{collection}/")) && w.lb.contains_key(k))
        .ok_or_else(|| invalid(field, url, "The referenced resource was not found."))
}

fn default(resource: &mut Value, field: &str, value: Value) {
    if resource[field].is_null() {
        resource[field] = value;
    }
}

/// Validates and completes `resource` (a new one, or an update's) of `collection` at `path`,
/// and applies its side effects (a forwarding rule's address users).
pub(crate) fn prepare(
    w: &mut World,
    collection: &str,
    path: &str,
    resource: &mut Value,
) -> Result<(), ApiError> {
    match collection {
        "healthChecks" | "httpHealthChecks" => {
            if collection == "healthChecks" {
                let t = resource["type"].as_str().unwrap_or_default();
                if !["TCP", "SSL", "HTTP", "HTTPS", "HTTP2", "GRPC"].contains(&t) {
                    return Err(invalid(
                        "type",
                        t,
                        "Must be one of TCP, SSL, HTTP, HTTPS, HTTP2, GRPC.",
                    ));
                }
            } else {
                default(resource, "port", json!(80));
                default(resource, "requestPath", json!("/"));
            }
            for (field, value) in [
                ("checkIntervalSec", 5),
                ("timeoutSec", 5),
                ("healthyThreshold", 2),
                ("unhealthyThreshold", 2),
            ] {
                default(resource, field, json!(value));
            }
            if resource["timeoutSec"].as_i64() > resource["checkIntervalSec"].as_i64() {
                return Err(ApiError::invalid(
                    "Invalid value for field 'resource.timeoutSec': timeout must be less than or equal to checkIntervalSec.",
                ));
            }
        }
        "firewalls" => {
            let rules = |f: &str| resource[f].as_array().is_some_and(|a| !a.is_empty());
            if !rules("allowed") && !rules("denied") {
                return Err(ApiError::invalid(
                    "Invalid value for field 'resource': a firewall must have at least one allowed or denied rule.",
                ));
            }
            let network = resource["network"]
                .as_str()
                .unwrap_or("global/networks/default");
            if !network.ends_with(&format!("/networks/{}", w.seed().network)) {
                return Err(invalid(
                    "network",
                    network,
                    "The referenced network resource cannot be found.",
                ));
            }
            for field in ["sourceRanges", "destinationRanges"] {
                for range in resource[field].as_array().into_iter().flatten() {
                    let text = range.as_str().unwrap_or_default();
                    let cidr = text.parse::<crate::kube::Ipv4Cidr>().is_ok()
                        || text.parse::<Ipv4Addr>().is_ok();
                    if !cidr {
                        return Err(invalid(
                            field,
                            text,
                            "Must be a valid IPv4 CIDR address range.",
                        ));
                    }
                }
            }
            default(resource, "direction", json!("INGRESS"));
            default(resource, "priority", json!(1000));
            default(resource, "disabled", json!(false));
        }
        "backendServices" => {
            default(resource, "loadBalancingScheme", json!("EXTERNAL"));
            default(resource, "sessionAffinity", json!("NONE"));
            let checks: Vec<String> = strings(&resource["healthChecks"]);
            if checks.is_empty() && resource["loadBalancingScheme"] == "INTERNAL" {
                return Err(invalid(
                    "healthChecks",
                    "",
                    "An INTERNAL backend service needs a health check.",
                ));
            }
            for check in &checks {
                linked(w, "healthChecks", check, "healthChecks")?;
            }
            for backend in resource["backends"].as_array().into_iter().flatten() {
                let group = backend["group"].as_str().unwrap_or_default();
                if super::zonal::group_of_url(w, group).is_none() {
                    return Err(invalid(
                        "backends.group",
                        group,
                        "The referenced instance group cannot be found.",
                    ));
                }
            }
        }
        "targetPools" => {
            default(resource, "sessionAffinity", json!("NONE"));
            let mut full = Vec::new();
            for instance in strings(&resource["instances"]) {
                full.push(json!(instance_url(w, &instance)?));
            }
            resource["instances"] = json!(full);
            for check in strings(&resource["healthChecks"]) {
                linked(w, "healthChecks", &check, "httpHealthChecks")?;
            }
        }
        "forwardingRules" => forwarding_rule(w, path, resource)?,
        _ => {}
    }
    Ok(())
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// An instance's full URL from any link to it (`/zones/z/instances/n`, a full URL), or the
/// refusal when no such VM exists.
fn instance_url(w: &World, link: &str) -> Result<String, ApiError> {
    let tail = link.rsplit("/zones/").next().unwrap_or_default();
    let (zone, name) = tail.split_once("/instances/").unwrap_or(("", ""));
    if w.instances.get(name).is_none_or(|i| i.zone != zone) {
        return Err(invalid(
            "instances",
            link,
            "The referenced instance cannot be found.",
        ));
    }
    Ok(format!(
        "{BASE}/projects/{}/zones/{zone}/instances/{name}",
        project(w)
    ))
}

/// A resource left the store (deleted, or replaced by an update): its side effects go.
pub(crate) fn removed(w: &mut World, path: &str, old: &Value) {
    if path.contains("/forwardingRules/")
        && let (Some(ip), Some(name)) = (old["IPAddress"].as_str(), old["name"].as_str())
        && let Ok(ip) = ip.parse::<IpAddr>()
    {
        w.edit_address_users(ip, name, false);
    }
}

/// Puts back a resource an update failed to replace.
pub(crate) fn restore(w: &mut World, path: &str, old: Value) {
    if path.contains("/forwardingRules/")
        && let (Some(ip), Some(name)) = (old["IPAddress"].as_str(), old["name"].as_str())
        && let Ok(ip) = ip.parse::<IpAddr>()
    {
        w.edit_address_users(ip, name, true);
    }
    w.lb.insert(path.to_string(), old);
}

/// The resource (its path) that uses the one at `path`, if any.
pub(crate) fn user_of(w: &World, path: &str) -> Option<String> {
    let project = project(w);
    w.lb.iter().find_map(|(k, v)| {
        let mut links = strings(&v["healthChecks"]);
        links.extend(
            ["backendService", "target"]
                .iter()
                .filter_map(|f| v[*f].as_str().map(str::to_string)),
        );
        links.extend(
            v["backends"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["group"].as_str().map(str::to_string)),
        );
        links
            .iter()
            .any(|l| key_of_url(&project, l).as_deref() == Some(path))
            .then(|| k.clone())
    })
}

/// `targetPools.addInstance` / `removeInstance`: `{"instances": [{"instance": URL}]}`.
pub(crate) fn pool_members(
    w: &mut World,
    path: &str,
    body: &Value,
    add: bool,
) -> Result<(), ApiError> {
    let mut members = strings(
        &w.lb
            .get(path)
            .map_or(Value::Null, |p| p["instances"].clone()),
    );
    for item in body["instances"].as_array().into_iter().flatten() {
        let url = instance_url(w, item["instance"].as_str().unwrap_or_default())?;
        let present = members.contains(&url);
        match (add, present) {
            (true, false) => members.push(url),
            (false, true) => members.retain(|m| *m != url),
            (true, true) => {
                return Err(invalid(
                    "instances",
                    &url,
                    "The instance is already a member of the target pool.",
                ));
            }
            (false, false) => {
                return Err(invalid(
                    "instances",
                    &url,
                    "The instance is not a member of the target pool.",
                ));
            }
        }
    }
    let fingerprint = super::lb_store::fingerprint(w);
    if let Some(pool) = w.lb.get_mut(path) {
        pool["instances"] = json!(members);
        pool["fingerprint"] = json!(fingerprint);
    }
    Ok(())
}

/// `backendServices.getHealth` of a stored backend service: each instance of the asked group
/// as its health check sees it. :10256 is ovnkube-node's, so a VM that is a Node passes and the
/// bootstrap VM fails; nothing passes before the first check (the check's `checkIntervalSec`)
/// after the backend service was made. A group that is not a backend is refused.
pub(crate) fn health(w: &World, path: &str, body: &Value) -> Reply {
    let service =
        w.lb.get(path)
            .ok_or_else(|| ApiError::not_found(format!("The resource '{path}' was not found")))?;
    let asked = body["group"].as_str().unwrap_or_default();
    let is_backend = service["backends"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|b| {
            b["group"].as_str().and_then(|g| key_of_url(&project(w), g))
                == key_of_url(&project(w), asked)
        });
    let Some((zone, group)) = is_backend
        .then(|| super::zonal::group_of_url(w, asked))
        .flatten()
    else {
        return Err(invalid(
            "group",
            asked,
            "The group is not a backend of this backend service.",
        ));
    };
    let interval = strings(&service["healthChecks"])
        .first()
        .and_then(|c| key_of_url(&project(w), c))
        .and_then(|k| w.lb.get(&k))
        .and_then(|c| c["checkIntervalSec"].as_u64())
        .map_or(
            w.options.health_check_interval,
            std::time::Duration::from_secs,
        );
    let checked = w
        .lb_built
        .get(path)
        .is_some_and(|t| t.elapsed() >= interval);
    let members = super::instance_groups::members(w, &zone, &group);
    Ok(super::load_balancers::group_health(
        w, &zone, &members, checked,
    ))
}
