//! PURE: one Service's readiness from what the reflectors hold and the cloud said.

use super::ServiceGate;
use crate::render::ServiceClaim;
use bootstrap_cloud::Holder;
use k8s_openapi::api::core::v1::{Endpoints, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::time::Duration;

/// How long a Service may go without any ingress before the reason says that maybe no
/// load-balancer controller acts on it.
pub(super) const NO_CONTROLLER_HINT_AFTER: Duration = Duration::from_secs(120);

fn ip_list(ips: &BTreeSet<IpAddr>) -> String {
    ips.iter()
        .map(IpAddr::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// PURE: does a load balancer hold exactly the claimed IPs? Ok(how it is known) or Err(why
/// not). `holders` is the cloud's answer for a hostname-only ingress (None: not asked yet):
/// each claimed IP must be held by an interface of the NLB the ingress hostname names, not
/// by any other load balancer.
pub fn prove_claims(
    claims: &[IpAddr],
    ingress_ips: &[IpAddr],
    ingress_hostnames: &[String],
    holders: Option<&BTreeMap<IpAddr, Holder>>,
) -> Result<String, String> {
    let claimed: BTreeSet<IpAddr> = claims.iter().copied().collect();
    if claimed.is_empty() {
        return Ok(String::new());
    }
    if !ingress_ips.is_empty() {
        let held: BTreeSet<IpAddr> = ingress_ips.iter().copied().collect();
        if held == claimed {
            return Ok(format!("ingress holds {}", ip_list(&claimed)));
        }
        return Err(format!(
            "the load balancer holds {} but DNS points at the reserved {}",
            ip_list(&held),
            ip_list(&claimed)
        ));
    }
    let host = ingress_hostnames.join(", ");
    let Some(holders) = holders else {
        return Err(format!(
            "ingress is the hostname {host}; asking the cloud who holds {}",
            ip_list(&claimed)
        ));
    };
    let mut problems = Vec::new();
    let mut proofs = Vec::new();
    for ip in &claimed {
        match holders.get(ip) {
            // An interface of this Service's own NLB: the one its ingress hostname names.
            Some(h) if ingress_hostnames.iter().any(|n| h.is_interface_of(n)) => {
                proofs.push(format!("{ip} by {}", h.id))
            }
            Some(h) if h.is_load_balancer() => problems.push(format!(
                "{ip} is held by {} ({:?}), another load balancer than {host}",
                h.id, h.description
            )),
            Some(h) => problems.push(format!(
                "{ip} is held by {} ({:?}), not a load balancer",
                h.id, h.description
            )),
            None => problems.push(format!("{ip} is held by nothing yet")),
        }
    }
    if problems.is_empty() {
        Ok(format!(
            "cloud: load-balancer interfaces hold {} (ingress {host})",
            proofs.join(", ")
        ))
    } else {
        Err(format!("ingress is {host}, but {}", problems.join("; ")))
    }
}

/// Evaluates one Service from what the reflectors hold (and the cloud's answer, if asked).
pub fn evaluate(
    target: &ServiceClaim,
    service: Option<&Service>,
    slices: &[&EndpointSlice],
    endpoints: Option<&Endpoints>,
    holders: Option<&BTreeMap<IpAddr, Holder>>,
) -> ServiceGate {
    let mut gate = ServiceGate::not_evaluated(&target.namespace, &target.name);
    let Some(service) = service else {
        gate.reason = "service not found".into();
        return gate;
    };
    let ingress: Vec<_> = service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .into_iter()
        .flatten()
        .collect();
    gate.ingress = ingress
        .iter()
        .filter_map(|i| i.ip.clone().or_else(|| i.hostname.clone()))
        .collect();
    let ingress_ips: Vec<IpAddr> = ingress
        .iter()
        .filter_map(|i| i.ip.as_deref()?.parse().ok())
        .collect();
    let hostnames: Vec<String> = ingress
        .iter()
        .filter(|i| i.ip.is_none())
        .filter_map(|i| i.hostname.clone())
        .collect();
    if slices.is_empty() {
        // Fallback for clusters without EndpointSlices.
        for subset in endpoints
            .and_then(|e| e.subsets.as_ref())
            .into_iter()
            .flatten()
        {
            let ready = subset.addresses.as_ref().map_or(0, Vec::len);
            gate.ready_endpoints += ready;
            gate.endpoints += ready + subset.not_ready_addresses.as_ref().map_or(0, Vec::len);
        }
    } else {
        for slice in slices {
            for ep in slice.endpoints.iter().flatten() {
                gate.endpoints += 1;
                // "nil should be interpreted as true" (discovery.k8s.io/v1 EndpointConditions).
                if ep.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true) {
                    gate.ready_endpoints += 1;
                }
            }
        }
    }
    let proof = if gate.ingress.is_empty() {
        Err("no ingress yet".to_string())
    } else {
        gate.needs_cloud_proof = ingress_ips.is_empty() && !target.claims.is_empty();
        prove_claims(&target.claims, &ingress_ips, &hostnames, holders)
    };
    gate.ready = proof.is_ok() && gate.ready_endpoints > 0;
    gate.reason = match proof {
        Err(why) => why,
        Ok(how) => {
            gate.proof = how;
            if gate.ready_endpoints == 0 {
                format!(
                    "{} of {} endpoints ready",
                    gate.ready_endpoints, gate.endpoints
                )
            } else {
                "ready".into()
            }
        }
    };
    gate
}

/// The reason, with a hint when a Service that only the AWS Load Balancer Controller serves
/// has had no ingress for a long time.
pub(super) fn with_controller_hint(
    mut gate: ServiceGate,
    target: &ServiceClaim,
    waited: Duration,
) -> ServiceGate {
    if target.needs_aws_lb_controller
        && gate.ingress.is_empty()
        && waited >= NO_CONTROLLER_HINT_AFTER
    {
        gate.reason = format!(
            "no ingress after {}: no controller is acting on aws-load-balancer-type=external Services; is the AWS Load Balancer Controller running?",
            humantime::format_duration(Duration::from_secs(waited.as_secs()))
        );
    }
    gate
}
