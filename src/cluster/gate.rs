//! The readiness gate: a Service is Ready when `status.loadBalancer.ingress` has an entry AND
//! at least one endpoint is ready in the EndpointSlices labelled
//! `kubernetes.io/service-name=<name>` (Endpoints as a fallback when there are no slices).
//!
//! Watch-driven: reflectors over Services, EndpointSlices and Endpoints, re-evaluated on every
//! event; kube-runtime's watcher re-lists after a dropped watch or a 410. The caller owns the
//! deadline. No polling, no fixed sleeps.

use futures::{StreamExt, stream::BoxStream};
use k8s_openapi::api::core::v1::{Endpoints, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::Serialize;
use std::time::{Duration, Instant};

pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// One Service to wait for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Target {
    pub namespace: String,
    pub name: String,
}

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
}

#[derive(Debug, Clone, Serialize)]
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

/// Evaluates one Service from what the reflectors hold.
pub fn evaluate(
    target: &Target,
    service: Option<&Service>,
    slices: &[&EndpointSlice],
    endpoints: Option<&Endpoints>,
) -> ServiceGate {
    let mut gate = ServiceGate {
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        ready: false,
        reason: String::new(),
        ingress: Vec::new(),
        ready_endpoints: 0,
        endpoints: 0,
    };
    let Some(service) = service else {
        gate.reason = "service not found".into();
        return gate;
    };
    gate.ingress = service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|i| i.ip.clone().or_else(|| i.hostname.clone()))
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
    gate.ready = !gate.ingress.is_empty() && gate.ready_endpoints > 0;
    gate.reason = if gate.ingress.is_empty() {
        "no ingress yet".into()
    } else if gate.ready_endpoints == 0 {
        format!(
            "{} of {} endpoints ready",
            gate.ready_endpoints, gate.endpoints
        )
    } else {
        "ready".into()
    };
    gate
}

struct Stores {
    services: Vec<Store<Service>>,
    slices: Store<EndpointSlice>,
    endpoints: Vec<Store<Endpoints>>,
}

impl Stores {
    fn evaluate(&self, targets: &[Target]) -> Vec<ServiceGate> {
        let slices = self.slices.state();
        let endpoints: Vec<_> = self.endpoints.iter().flat_map(Store::state).collect();
        let services: Vec<_> = self.services.iter().flat_map(Store::state).collect();
        targets
            .iter()
            .map(|t| {
                let service = services.iter().find(|s| {
                    s.meta().namespace.as_deref() == Some(&t.namespace)
                        && s.meta().name.as_deref() == Some(&t.name)
                });
                let mine: Vec<&EndpointSlice> = slices
                    .iter()
                    .filter(|s| s.meta().namespace.as_deref() == Some(&t.namespace))
                    .filter(|s| {
                        s.meta()
                            .labels
                            .as_ref()
                            .and_then(|l| l.get(SERVICE_NAME_LABEL))
                            == Some(&t.name)
                    })
                    .map(|s| s.as_ref())
                    .collect();
                let eps = endpoints.iter().find(|e| {
                    e.meta().namespace.as_deref() == Some(&t.namespace)
                        && e.meta().name.as_deref() == Some(&t.name)
                });
                evaluate(
                    t,
                    service.map(|s| s.as_ref()),
                    &mine,
                    eps.map(|e| e.as_ref()),
                )
            })
            .collect()
    }
}

fn watch<K>(
    api: Api<K>,
    config: watcher::Config,
) -> (Store<K>, BoxStream<'static, Result<(), watcher::Error>>)
where
    K: Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let (reader, writer) = reflector::store();
    let stream = reflector::reflector(writer, watcher(api, config))
        .default_backoff()
        .map(|event| event.map(|_| ()))
        .boxed();
    (reader, stream)
}

/// Waits until every target is Ready, calling `progress` whenever a Service's state changes.
/// Never returns on its own otherwise: wrap it in a timeout (see `wait_ready`).
pub async fn run_gate(
    client: &kube::Client,
    targets: &[Target],
    mut progress: impl FnMut(&[ServiceGate]),
) -> Vec<ServiceGate> {
    let names = targets
        .iter()
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let selector = format!("{SERVICE_NAME_LABEL} in ({names})");
    let mut namespaces: Vec<&str> = targets.iter().map(|t| t.namespace.as_str()).collect();
    namespaces.sort();
    namespaces.dedup();
    // Services and Endpoints per namespace of the targets; slices cluster-wide by label.
    let mut streams = Vec::new();
    let (slices, s) = watch(
        Api::<EndpointSlice>::all(client.clone()),
        watcher::Config::default().labels(&selector),
    );
    streams.push(s);
    let mut stores = Stores {
        services: Vec::new(),
        slices,
        endpoints: Vec::new(),
    };
    for ns in namespaces {
        let (store, s) = watch(
            Api::<Service>::namespaced(client.clone(), ns),
            watcher::Config::default(),
        );
        stores.services.push(store);
        streams.push(s);
        let (store, s) = watch(
            Api::<Endpoints>::namespaced(client.clone(), ns),
            watcher::Config::default(),
        );
        stores.endpoints.push(store);
        streams.push(s);
    }
    let mut events = futures::stream::select_all(streams);
    let mut last: Vec<ServiceGate> = Vec::new();
    while let Some(event) = events.next().await {
        if let Err(e) = event {
            tracing::warn!(error = %e, "watch interrupted; kube-runtime re-lists with backoff");
            continue;
        }
        let now = stores.evaluate(targets);
        if now != last {
            progress(&now);
            last = now;
        }
        if last.iter().all(|s| s.ready) {
            return last;
        }
    }
    last
}

/// The gate under one overall deadline.
pub async fn wait_ready(
    client: &kube::Client,
    targets: &[Target],
    deadline: Duration,
    mut progress: impl FnMut(&[ServiceGate]),
) -> Result<GateReport, GateTimeout> {
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
        run_gate(client, targets, |s| {
            last = s.to_vec();
            progress(s)
        }),
    )
    .await;
    let elapsed_ms = started.elapsed().as_millis();
    match outcome {
        Ok(services) if services.iter().all(|s| s.ready) && !services.is_empty() => {
            Ok(GateReport {
                passed: true,
                services,
                elapsed_ms,
            })
        }
        Ok(services) => Err(GateTimeout {
            after: deadline,
            report: GateReport {
                passed: false,
                services,
                elapsed_ms,
            },
        }),
        Err(_) => Err(GateTimeout {
            after: deadline,
            report: GateReport {
                passed: false,
                services: last,
                elapsed_ms,
            },
        }),
    }
}
