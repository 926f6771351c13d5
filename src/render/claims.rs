//! What a rendered Service claims: the reserved IPs a load balancer must hold for it.

use bootstrap_cloud::Reservation;
use k8s_openapi::api::core::v1::Service;
use serde::Serialize;
use std::net::IpAddr;

/// Renders the Services for the spec's platform from the kept reservations.
/// A rendered Service and the reserved IPs it claims: what the readiness gate waits for, and
/// what the journal remembers between ApplyServices and the gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ServiceClaim {
    pub namespace: String,
    pub name: String,
    /// The reserved IPs this Service claims (DNS points at them); a load balancer must hold
    /// exactly these. Empty: no claim to prove (a Service that asks for no fixed IP).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<IpAddr>,
    /// Set on Services of `aws-load-balancer-type: external`: only the AWS Load Balancer
    /// Controller serves them, and the reason says so when nothing does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_aws_lb_controller: bool,
    /// The Service's ports (the proof on the wire dials 22623 where one exposes it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<u16>,
}

impl ServiceClaim {
    /// The gate's target for a rendered Service that claims `claims`.
    pub fn for_service(service: &Service, claims: Vec<IpAddr>) -> Self {
        let annotation = |k: &str| {
            service
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(k))
                .map(String::as_str)
        };
        Self {
            namespace: service.metadata.namespace.clone().unwrap_or_default(),
            name: service.metadata.name.clone().unwrap_or_default(),
            claims,
            needs_aws_lb_controller: annotation(
                "service.beta.kubernetes.io/aws-load-balancer-type",
            ) == Some("external"),
            ports: service
                .spec
                .iter()
                .flat_map(|s| s.ports.iter().flatten())
                .filter_map(|p| u16::try_from(p.port).ok())
                .collect(),
        }
    }
}

/// Annotations whose values are the IPs a load balancer must hold (comma lists).
const IP_ANNOTATIONS: &[&str] = &[
    "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses",
    "service.beta.kubernetes.io/azure-load-balancer-ipv4",
    "service.beta.kubernetes.io/azure-load-balancer-ipv6",
];
/// Annotation naming the EIP allocations of an AWS NLB (reservation ids, not IPs).
const EIP_ALLOCATIONS: &str = "service.beta.kubernetes.io/aws-load-balancer-eip-allocations";

/// The reserved IPs a rendered Service claims: the IP annotations, `spec.loadBalancerIP`, and
/// the IPs of the EIP allocations it names. DNS points at exactly these, so the gate waits
/// until a load balancer holds them.
pub fn claimed_ips(service: &Service, reservations: &[Reservation]) -> Vec<std::net::IpAddr> {
    let annotations = service.metadata.annotations.as_ref();
    let listed = |key: &str| -> Vec<String> {
        annotations
            .and_then(|a| a.get(key))
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut ips: Vec<std::net::IpAddr> = IP_ANNOTATIONS
        .iter()
        .flat_map(|k| listed(k))
        .chain(
            service
                .spec
                .as_ref()
                .and_then(|s| s.load_balancer_ip.clone()),
        )
        .filter_map(|s| s.parse().ok())
        .collect();
    for id in listed(EIP_ALLOCATIONS) {
        ips.extend(reservations.iter().filter(|r| r.id == id).map(|r| r.ip));
    }
    ips.sort();
    ips.dedup();
    ips
}

/// The annotations that fix an NLB's addresses, which the AWS Load Balancer Controller reads
/// only when it creates the NLB: later reconciles compare the subnets and never change the
/// addresses (../shared/research/aws-lb-controller-observed.md, 2). A Service of ours with
/// other values than these is replaced, not re-applied.
const FIXED_AT_CREATION: &[&str] = &[
    "service.beta.kubernetes.io/aws-load-balancer-subnets",
    "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses",
    EIP_ALLOCATIONS,
];

/// Of `annotations`, those fixed when the load balancer is created, for a Service served by
/// the AWS Load Balancer Controller (empty for any other: their controllers change addresses
/// in place).
pub fn fixed_addresses(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
) -> std::collections::BTreeMap<String, String> {
    let Some(annotations) = annotations else {
        return Default::default();
    };
    if annotations
        .get("service.beta.kubernetes.io/aws-load-balancer-type")
        .map(String::as_str)
        != Some("external")
    {
        return Default::default();
    }
    annotations
        .iter()
        .filter(|(k, _)| FIXED_AT_CREATION.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
