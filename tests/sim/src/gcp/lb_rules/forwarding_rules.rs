//! What a forwarding rule must hold and what GCE refuses of it: its scheme and links, its
//! ports, its IP against the address resources, the VMs and the other rules (a shared VIP's
//! ports must not overlap), and the users of its address.

use super::super::World;
use super::super::http::ApiError;
use super::{default, invalid, linked, strings};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr};

/// The port ranges a rule takes: `allPorts`, `ports`, or `portRange` (`a-b`).
fn port_ranges(rule: &Value) -> Vec<(u32, u32)> {
    if rule["allPorts"] == true {
        return vec![(1, 65535)];
    }
    let mut ranges: Vec<(u32, u32)> = strings(&rule["ports"])
        .iter()
        .filter_map(|p| p.parse().ok())
        .map(|p| (p, p))
        .collect();
    if let Some(range) = rule["portRange"].as_str() {
        let (a, b) = range.split_once('-').unwrap_or((range, range));
        if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
            ranges.push((a, b));
        }
    }
    ranges
}

fn overlap(a: &Value, b: &Value) -> bool {
    a["IPProtocol"] == b["IPProtocol"]
        && port_ranges(a)
            .iter()
            .any(|(a1, a2)| port_ranges(b).iter().any(|(b1, b2)| a1 <= b2 && b1 <= a2))
}

/// The reason of GCE's failed operation for an IP another resource holds; the operation's
/// error, not the insert's answer (see `lb_store::insert`).
pub(crate) const IP_IN_USE: &str = "IP_IN_USE_BY_ANOTHER_RESOURCE";

/// GCE fails the insert's operation (409, `IP_IN_USE_BY_ANOTHER_RESOURCE`: the error
/// kubernetes/ingress-gce#2735 quotes) when a rule takes an IP held by another resource: a
/// VM, a rule on an address that is not `SHARED_LOADBALANCER_VIP`, an unreserved IP in use.
fn ip_in_use(ip: &str) -> ApiError {
    ApiError::new(
        409,
        IP_IN_USE,
        format!("IP '{ip}' is already being used by another resource."),
    )
}

pub(super) fn forwarding_rule(w: &mut World, path: &str, rule: &mut Value) -> Result<(), ApiError> {
    default(rule, "loadBalancingScheme", json!("EXTERNAL"));
    default(rule, "IPProtocol", json!("TCP"));
    let scheme = rule["loadBalancingScheme"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let internal = match scheme.as_str() {
        "INTERNAL" => true,
        "EXTERNAL" => false,
        other => {
            return Err(invalid(
                "loadBalancingScheme",
                other,
                "Must be INTERNAL or EXTERNAL here.",
            ));
        }
    };
    if port_ranges(rule).is_empty() && internal {
        return Err(invalid(
            "ports",
            "",
            "An INTERNAL forwarding rule needs ports or allPorts.",
        ));
    }
    let subnet = if internal {
        let service = rule["backendService"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let bs = linked(w, "backendService", &service, "backendServices")?;
        if w.lb[&bs]["loadBalancingScheme"] != "INTERNAL" {
            return Err(invalid(
                "backendService",
                &service,
                "The backend service's scheme is not INTERNAL.",
            ));
        }
        let url = rule["subnetwork"].as_str().unwrap_or_default().to_string();
        Some(super::super::compute::subnetwork(w, &url)?.clone())
    } else {
        let target = rule["target"].as_str().unwrap_or_default().to_string();
        linked(w, "target", &target, "targetPools")?;
        let tier = w.seed().default_network_tier.clone();
        default(rule, "networkTier", json!(tier));
        None
    };
    let others: Vec<Value> =
        w.lb.iter()
            .filter(|(k, _)| k.contains("/forwardingRules/") && k.as_str() != path)
            .map(|(_, v)| v.clone())
            .collect();
    let ip = match rule["IPAddress"].as_str().filter(|s| !s.is_empty()) {
        Some(text) => {
            let ip: Ipv4Addr = text
                .parse()
                .map_err(|_| invalid("IPAddress", text, "Must be an IPv4 address."))?;
            let address = w.addresses.values().find(|a| a["address"] == text).cloned();
            let sharing: Vec<&Value> = others.iter().filter(|o| o["IPAddress"] == text).collect();
            match &address {
                Some(a) if a["addressType"] != if internal { "INTERNAL" } else { "EXTERNAL" } => {
                    return Err(invalid(
                        "IPAddress",
                        text,
                        "The address is of another type than the forwarding rule's scheme.",
                    ));
                }
                Some(a) if !internal && a["networkTier"] != rule["networkTier"] => {
                    return Err(invalid(
                        "IPAddress",
                        text,
                        "The address is in another network tier than the forwarding rule.",
                    ));
                }
                Some(a)
                    if internal
                        && !sharing.is_empty()
                        && a["purpose"] != "SHARED_LOADBALANCER_VIP" =>
                {
                    return Err(ip_in_use(text));
                }
                None if !internal => {
                    return Err(invalid(
                        "IPAddress",
                        text,
                        "The specified external IP address is not reserved in this project and region.",
                    ));
                }
                None if w.ip_in_use(ip) => return Err(ip_in_use(text)),
                None if subnet.as_ref().is_some_and(|s| {
                    let (lo, hi) = super::super::ipam::usable(s);
                    !(lo..=hi).contains(&u32::from(ip))
                }) =>
                {
                    return Err(invalid(
                        "IPAddress",
                        text,
                        "The IP address is not in the subnetwork's range.",
                    ));
                }
                _ => {}
            }
            if let Some(clash) = sharing.iter().find(|o| overlap(o, rule)) {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field 'resource.IPAddress': '{text}'. The ports of this forwarding rule conflict with forwarding rule '{}' on the same IP address.",
                    clash["name"].as_str().unwrap_or_default()
                )));
            }
            ip
        }
        None => {
            let (lo, hi) = match &subnet {
                Some(s) => super::super::ipam::usable(s),
                None => {
                    let (base, prefix) = w.seed().external_pool;
                    let (lo, hi) = super::super::ipam::span(base, prefix);
                    (lo + 1, hi - 1)
                }
            };
            (lo..=hi)
                .map(Ipv4Addr::from)
                .find(|ip| !w.ip_in_use(*ip))
                .ok_or_else(|| ApiError::new(400, "ipSpaceExhausted", "IP space is exhausted"))?
        }
    };
    rule["IPAddress"] = json!(ip.to_string());
    let name = rule["name"].as_str().unwrap_or_default().to_string();
    w.edit_address_users(IpAddr::V4(ip), &name, true);
    Ok(())
}
