//! The readiness gate: a Service is Ready when
//! 1. a load balancer holds exactly the reserved IPs it claims (the IPs DNS points at):
//!    - where the cloud writes IPs into `status.loadBalancer.ingress` (GCP, Azure), the ingress
//!      IPs must be those IPs, no other and none missing;
//!    - where it writes only a hostname (the AWS Load Balancer Controller), the cloud is asked
//!      who holds each IP, and every one must be held by a load-balancer interface
//!      (`ELB net/...`), not by our placeholder ENI or by nothing;
//! 2. AND at least one endpoint is ready in the EndpointSlices labelled
//!    `kubernetes.io/service-name=<name>` (Endpoints as a fallback when there are no slices).
//!
//! Watch-driven: reflectors over Services, EndpointSlices and Endpoints, re-evaluated on every
//! event; kube-runtime's watcher re-lists after a dropped watch or a 410. The cloud has no
//! watch, so only while a Service waits for the cloud's proof is the cloud asked again, on a
//! backoff. The caller owns the deadline.

mod evaluate;
mod watch;

pub use evaluate::{evaluate, prove_claims};
pub use watch::run_gate;

use crate::render::ServiceClaim;
use bootstrap_cloud::AddressProvider;
use serde::Serialize;
use std::time::{Duration, Instant};

pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ServiceGate {
    pub namespace: String,
    pub name: String,
    pub ready: bool,
    /// Why not ready yet ("no ingress yet", "0 of 3 endpoints ready"), or "ready".
    pub reason: String,
    pub ingress: Vec<String>,
    pub ready_endpoints: usize,
    pub endpoints: usize,
    /// How the claimed IPs were shown to be held ("" while not shown).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub proof: String,
    /// The ingress is a hostname: only the cloud can say who holds the claimed IPs.
    #[serde(skip)]
    pub needs_cloud_proof: bool,
}

impl ServiceGate {
    /// A Service nothing is known about yet: not ready, no reason, no ingress, no endpoint.
    pub fn not_evaluated(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
            ready: false,
            reason: String::new(),
            ingress: Vec::new(),
            ready_endpoints: 0,
            endpoints: 0,
            proof: String::new(),
            needs_cloud_proof: false,
        }
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct GateReport {
    pub passed: bool,
    pub services: Vec<ServiceGate>,
    pub elapsed_ms: u128,
}

/// The gate did not pass within the deadline; carries the last known state.
#[derive(Debug, thiserror::Error)]
#[error("readiness gate timed out after {}: {}", humantime::format_duration(*.after), summary(&.report.services))]
pub struct GateTimeout {
    pub after: Duration,
    pub report: GateReport,
}

fn summary(services: &[ServiceGate]) -> String {
    services
        .iter()
        .filter(|s| !s.ready)
        .map(|s| format!("{}/{}: {}", s.namespace, s.name, s.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The gate under one overall deadline: after it, [`GateTimeout`]; a watch the API server
/// refuses stops it at once ([`crate::cluster::WatchRefused`]).
pub async fn wait_ready(
    client: &kube::Client,
    targets: &[ServiceClaim],
    cloud: Option<&dyn AddressProvider>,
    deadline: Duration,
    mut progress: impl FnMut(&[ServiceGate]),
) -> anyhow::Result<GateReport> {
    let started = Instant::now();
    if targets.is_empty() {
        // Platform none (or templates that render nothing): there is nothing to wait for.
        return Ok(GateReport {
            passed: true,
            services: Vec::new(),
            elapsed_ms: 0,
        });
    }
    let mut last = Vec::new();
    let outcome = tokio::time::timeout(
        deadline,
        run_gate(client, targets, cloud, |s| {
            last = s.to_vec();
            progress(s)
        }),
    )
    .await;
    let elapsed_ms = started.elapsed().as_millis();
    match outcome {
        Ok(Ok(services)) if services.iter().all(|s| s.ready) && !services.is_empty() => {
            Ok(GateReport {
                passed: true,
                services,
                elapsed_ms,
            })
        }
        Ok(Ok(services)) => Err(GateTimeout {
            after: deadline,
            report: GateReport {
                passed: false,
                services,
                elapsed_ms,
            },
        }
        .into()),
        Ok(Err(refused)) => Err(refused.into()),
        Err(_) => Err(GateTimeout {
            after: deadline,
            report: GateReport {
                passed: false,
                services: last,
                elapsed_ms,
            },
        }
        .into()),
    }
}

#[cfg(test)]
mod tests;
