//! compute.v1 `addresses` and `regionOperations` for the seeded project and region.
//!
//! The Operations these calls start (and their requestId replay and `wait`) are in
//! `operations`, shared with the other compute resources.

use super::http::{ApiError, Reply, Req, list_page};
use super::operations::{get_operation, operation, replay, start_operation};
use super::{Effect, Operation, SubnetSeed, World, now_rfc3339};
use hyper::Method;
use serde_json::{Value, json};
use std::net::Ipv4Addr;

/// How the API spells its own URLs (selfLink, region, subnetwork).
pub(crate) const BASE: &str = "https://www.googleapis.com/compute/v1";

/// `rest` is the path after `compute/v1/projects/`.
pub fn route(w: &mut World, req: &Req, rest: &[&str]) -> Reply {
    let (project, region) = match rest {
        [p, "regions", r, ..] => (*p, *r),
        [p, ..] => {
            check_project(w, p)?;
            return Err(ApiError::not_found(format!(
                "The requested URL was not found: {}",
                rest.join("/")
            )));
        }
        [] => return Err(ApiError::not_found("no project")),
    };
    check_project(w, project)?;
    if region != w.seed().region {
        return Err(ApiError::not_found(format!(
            "The resource 'projects/{project}/regions/{region}' was not found"
        )));
    }
    super::authz::compute_call(w, req, &rest[3..])?;
    match (&req.method, &rest[3..]) {
        (&Method::GET, ["addresses"]) => list(w, req),
        (&Method::POST, ["addresses"]) => insert(w, req),
        (&Method::GET, ["addresses", name]) => get(w, name),
        (&Method::DELETE, ["addresses", name]) => delete(w, req, name),
        (&Method::GET, ["operations", op]) => get_operation(w, op),
        _ => Err(ApiError::not_found(format!(
            "The requested URL was not found: {} {}",
            req.method,
            rest.join("/")
        ))),
    }
}

pub(super) fn check_project(w: &World, project: &str) -> Result<(), ApiError> {
    if project == w.seed().project {
        Ok(())
    } else {
        Err(ApiError::not_found(format!(
            "The resource 'projects/{project}' was not found"
        )))
    }
}

pub(super) fn region_path(w: &World) -> String {
    format!("projects/{}/regions/{}", w.seed().project, w.seed().region)
}

fn address_not_found(w: &World, name: &str) -> ApiError {
    ApiError::not_found(format!(
        "The resource '{}/addresses/{name}' was not found",
        region_path(w)
    ))
}

fn list(w: &mut World, req: &Req) -> Reply {
    let (filter, start, max) = req.list_params()?;
    let matching: Vec<Value> = w
        .addresses
        .values()
        .filter(|a| filter.matches(a))
        .cloned()
        .collect();
    let path = format!("{}/addresses", region_path(w));
    Ok(list_page(
        "compute#addressList",
        &path,
        &matching,
        start,
        max,
    ))
}

fn get(w: &World, name: &str) -> Reply {
    w.addresses
        .get(name)
        .cloned()
        .ok_or_else(|| address_not_found(w, name))
}

/// Validates a GCP label key or value.
fn valid_label(text: &str, key: bool) -> bool {
    text.len() <= 63
        && (!key || text.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// RFC 1035 resource names: `[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub(super) fn valid_name(name: &str) -> bool {
    name.len() <= 63
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The seeded subnetwork a URL names: `projects/p/regions/r/subnetworks/s` (or the full URL),
/// or `regions/r/subnetworks/s` (the request's project). A subnetwork belongs to one project,
/// so naming it under another is refused as GCE refuses it: 400 `invalid`, "The referenced
/// subnetwork resource cannot be found." (the shape of terraform-provider-google#2140, for
/// an instance's subnetwork; #19507 for this field of an address).
pub(super) fn subnetwork<'a>(w: &'a World, url: &str) -> Result<&'a SubnetSeed, ApiError> {
    // Any endpoint's form: GCE's own hosts, or the `api-endpoint` a client was pointed at
    // (OpenShift's provider builds `<api-endpoint>projects/...`, gce.go:939-951).
    let path = match url.find("/compute/v1/") {
        Some(i) if url.contains("://") => &url[i + "/compute/v1/".len()..],
        _ => url,
    }
    .trim_start_matches('/');
    let seed = w.seed();
    let (project, rest) = match path.strip_prefix("projects/") {
        Some(rest) => match rest.split_once('/') {
            Some((project, rest)) => (project, rest),
            None => ("", rest),
        },
        None => (seed.project.as_str(), path),
    };
    let name = rest.strip_prefix(&format!("regions/{}/subnetworks/", seed.region));
    seed.subnetworks
        .iter()
        .find(|s| Some(s.name.as_str()) == name && seed.subnet_project(s) == project)
        .ok_or_else(|| {
            ApiError::invalid(format!(
                "Invalid value for field 'resource.subnetwork': '{url}'. The referenced subnetwork resource cannot be found."
            ))
        })
}

/// Whether `ip` is held: by an address, a VM or a forwarding rule (see `ipam`).
fn in_use(w: &World, ip: &str) -> bool {
    match ip.parse::<Ipv4Addr>() {
        Ok(ip) => w.ip_in_use(ip),
        Err(_) => w.addresses.values().any(|a| a["address"] == ip),
    }
}

/// Builds the address resource for an insert (validated; not yet stored). Errors that GCE
/// reports synchronously are returned; an explicit address in use is left for the operation.
pub(crate) fn new_address(w: &mut World, body: &Value) -> Result<Value, ApiError> {
    let name = body["name"].as_str().ok_or_else(|| {
        ApiError::new(
            400,
            "required",
            "Required field 'resource.name' not specified",
        )
    })?;
    if !valid_name(name) {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'resource.name': '{name}'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{{0,61}}[a-z0-9])?)'"
        )));
    }
    if w.addresses.contains_key(name) {
        return Err(ApiError::new(
            409,
            "alreadyExists",
            format!(
                "The resource '{}/addresses/{name}' already exists",
                region_path(w)
            ),
        ));
    }
    if let Some(labels) = body.get("labels").and_then(Value::as_object) {
        for (k, v) in labels {
            let v = v.as_str().unwrap_or("\u{0}");
            if !valid_label(k, true) || !valid_label(v, false) {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field 'resource.labels': '{k}'. Label keys and values must be lowercase letters, digits, '_' or '-', at most 63 characters"
                )));
            }
        }
    }
    let address_type = body["addressType"].as_str().unwrap_or("EXTERNAL");
    let purpose = body["purpose"].as_str();
    let seed = w.seed().clone();
    let rp = region_path(w);
    let mut out = json!({
        "kind": "compute#address",
        "id": w.id(),
        "creationTimestamp": now_rfc3339(),
        "name": name,
        "description": body["description"].as_str().unwrap_or(""),
        "addressType": address_type,
        "ipVersion": body["ipVersion"].as_str().unwrap_or("IPV4"),
        "status": "RESERVING",
        "region": format!("{BASE}/{rp}"),
        "selfLink": format!("{BASE}/{rp}/addresses/{name}"),
        "labels": body.get("labels").cloned().unwrap_or(json!({})),
        "labelFingerprint": "42WmSpB8rSM=",
    });
    let explicit = body["address"].as_str();
    let (lo, hi) = match address_type {
        "EXTERNAL" => {
            if purpose.is_some_and(|p| p != "NAT_AUTO") {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field 'resource.purpose': '{}'. Purpose is only valid for INTERNAL addresses",
                    purpose.unwrap_or_default()
                )));
            }
            if body.get("subnetwork").is_some_and(|s| !s.is_null()) {
                return Err(ApiError::invalid(
                    "Invalid value for field 'resource.subnetwork'. An EXTERNAL address cannot have a subnetwork",
                ));
            }
            // Without `networkTier` GCE takes the project's default tier.
            let tier = match body["networkTier"].as_str() {
                Some(t @ ("PREMIUM" | "STANDARD")) => t.to_string(),
                Some(other) => {
                    return Err(ApiError::invalid(format!(
                        "Invalid value for field 'resource.networkTier': '{other}'."
                    )));
                }
                None => seed.default_network_tier.clone(),
            };
            out["networkTier"] = json!(tier);
            let (lo, hi) = super::ipam::span(seed.external_pool.0, seed.external_pool.1);
            (lo + 1, hi - 1)
        }
        "INTERNAL" => {
            let subnet_url = body["subnetwork"].as_str().ok_or_else(|| {
                ApiError::invalid("Invalid value for field 'resource.subnetwork'. An INTERNAL address needs a subnetwork")
            })?;
            let subnet = subnetwork(w, subnet_url)?.clone();
            let subnet_project = seed.subnet_project(&subnet).to_string();
            if let Some(p) = purpose
                && !["GCE_ENDPOINT", "SHARED_LOADBALANCER_VIP", "DNS_RESOLVER"].contains(&p)
            {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field 'resource.purpose': '{p}'."
                )));
            }
            out["purpose"] = json!(purpose.unwrap_or("GCE_ENDPOINT"));
            out["subnetwork"] = json!(format!(
                "{BASE}/projects/{subnet_project}/regions/{}/subnetworks/{}",
                seed.region, subnet.name
            ));
            out["network"] = json!(format!(
                "{BASE}/projects/{subnet_project}/global/networks/{}",
                subnet.network
            ));
            // GCP reserves the network, gateway, second-to-last and broadcast addresses.
            super::ipam::usable(&subnet)
        }
        other => {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'resource.addressType': '{other}'."
            )));
        }
    };
    let ip = match explicit {
        Some(ip) => {
            let parsed: Ipv4Addr = ip.parse().map_err(|_| {
                ApiError::invalid(format!(
                    "Invalid value for field 'resource.address': '{ip}'."
                ))
            })?;
            let n = u32::from(parsed);
            if n < lo || n > hi {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field 'resource.address': '{ip}'. Address is not in the subnetwork's usable range"
                )));
            }
            ip.to_string()
        }
        None => (lo..=hi)
            .map(|n| Ipv4Addr::from(n).to_string())
            .find(|ip| !in_use(w, ip))
            .ok_or_else(|| {
                ApiError::new(
                    400,
                    "ipSpaceExhausted",
                    "IP space of the subnetwork is exhausted",
                )
            })?,
    };
    out["address"] = json!(ip);
    Ok(out)
}

fn new_operation(w: &mut World, kind: &str, target: &str, effect: Option<Effect>) -> Operation {
    let rp = region_path(w);
    let target_id = w.next_id.to_string();
    operation(
        w,
        &rp,
        kind,
        format!("{BASE}/{rp}/addresses/{target}"),
        target_id,
        effect,
    )
}

fn insert(w: &mut World, req: &Req) -> Reply {
    if let Some(op) = replay(w, req)? {
        return Ok(op);
    }
    let address = new_address(w, &req.body)?;
    let name = address["name"].as_str().unwrap_or_default().to_string();
    let ip = address["address"].as_str().unwrap_or_default().to_string();
    if in_use(w, &ip) {
        // An explicit address already reserved: the operation fails, nothing is created.
        let mut op = new_operation(w, "insert", &name, None);
        op.json["error"] = json!({"errors": [{
            "code": "IP_IN_USE_BY_ANOTHER_RESOURCE",
            "message": format!("IP '{ip}' is already being used by another resource."),
        }]});
        op.json["httpErrorStatusCode"] = json!(409);
        op.json["httpErrorMessage"] = json!("CONFLICT");
        return start_operation(w, op, req.param("requestId"));
    }
    w.addresses.insert(name.clone(), address);
    let op = new_operation(w, "insert", &name, Some(Effect::Reserve(name.clone())));
    start_operation(w, op, req.param("requestId"))
}

fn delete(w: &mut World, req: &Req, name: &str) -> Reply {
    if let Some(op) = replay(w, req)? {
        return Ok(op);
    }
    let Some(address) = w.addresses.get(name) else {
        return Err(address_not_found(w, name));
    };
    if address["users"].as_array().is_some_and(|u| !u.is_empty()) {
        return Err(ApiError::new(
            400,
            "resourceInUseByAnotherResource",
            format!(
                "The address resource '{}/addresses/{name}' is already being used",
                region_path(w)
            ),
        ));
    }
    let op = new_operation(w, "delete", name, Some(Effect::Delete(name.to_string())));
    start_operation(w, op, req.param("requestId"))
}
