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

use crate::render::ServiceClaim;
use bootstrap_cloud::{AddressProvider, Holder};
use futures::{StreamExt, stream::BoxStream};
use k8s_openapi::api::core::v1::{Endpoints, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// How long a Service may go without any ingress before the reason says that maybe no
/// load-balancer controller acts on it.
const NO_CONTROLLER_HINT_AFTER: Duration = Duration::from_secs(120);

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

fn ip_list(ips: &BTreeSet<IpAddr>) -> String {
    ips.iter()
        .map(IpAddr::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// PURE: does a load balancer hold exactly the claimed IPs? Ok(how it is known) or Err(why
/// not). `holders` is the cloud's answer for a hostname-only ingress (None: not asked yet).
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
            Some(h) if h.is_load_balancer() => proofs.push(format!("{ip} by {}", h.id)),
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
    let mut gate = ServiceGate {
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        ready: false,
        reason: String::new(),
        ingress: Vec::new(),
        ready_endpoints: 0,
        endpoints: 0,
        proof: String::new(),
        needs_cloud_proof: false,
    };
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
fn with_controller_hint(
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

struct Stores {
    services: Vec<Store<Service>>,
    slices: Store<EndpointSlice>,
    endpoints: Vec<Store<Endpoints>>,
}

impl Stores {
    fn evaluate(
        &self,
        targets: &[ServiceClaim],
        holders: Option<&BTreeMap<IpAddr, Holder>>,
        waited: Duration,
    ) -> Vec<ServiceGate> {
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
                let gate = evaluate(
                    t,
                    service.map(|s| s.as_ref()),
                    &mine,
                    eps.map(|e| e.as_ref()),
                    holders,
                );
                with_controller_hint(gate, t, waited)
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
/// Never returns on its own otherwise: wrap it in a timeout (see `wait_ready`). `cloud` proves
/// who holds the claimed IPs where the ingress is only a hostname.
pub async fn run_gate(
    client: &kube::Client,
    targets: &[ServiceClaim],
    cloud: Option<&dyn AddressProvider>,
    mut progress: impl FnMut(&[ServiceGate]),
) -> Vec<ServiceGate> {
    let started = Instant::now();
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
    let mut holders: Option<BTreeMap<IpAddr, Holder>> = None;
    let mut cloud_backoff = CLOUD_FIRST_ASK;
    let mut next_cloud_ask: Option<tokio::time::Instant> = None;
    loop {
        let ask_at = next_cloud_ask;
        tokio::select! {
            event = events.next() => match event {
                None => return last,
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "watch interrupted; kube-runtime re-lists with backoff");
                    continue;
                }
                Some(Ok(())) => {}
            },
            _ = sleep_until(ask_at), if ask_at.is_some() => {
                let claims: Vec<IpAddr> = last
                    .iter()
                    .zip(targets)
                    .filter(|(g, _)| g.needs_cloud_proof)
                    .flat_map(|(_, t)| t.claims.iter().copied())
                    .collect();
                holders = ask_cloud(cloud, &claims).await.or(holders);
                cloud_backoff = (cloud_backoff * 2).min(CLOUD_MAX_ASK);
                next_cloud_ask = None;
            }
        }
        let now = stores.evaluate(targets, holders.as_ref(), started.elapsed());
        if now != last {
            progress(&now);
            last = now;
        }
        if last.iter().all(|s| s.ready) {
            return last;
        }
        if next_cloud_ask.is_none() && last.iter().any(|s| s.needs_cloud_proof && !s.ready) {
            next_cloud_ask = Some(tokio::time::Instant::now() + cloud_backoff);
        }
    }
}

/// The first cloud look-up comes right after the ingress appears; later ones back off.
const CLOUD_FIRST_ASK: Duration = Duration::from_millis(50);
const CLOUD_MAX_ASK: Duration = Duration::from_secs(10);

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The cloud's holders of `claims`; None when it cannot say (no cloud, or an error: logged,
/// and the gate asks again later).
async fn ask_cloud(
    cloud: Option<&dyn AddressProvider>,
    claims: &[IpAddr],
) -> Option<BTreeMap<IpAddr, Holder>> {
    let Some(cloud) = cloud else {
        tracing::warn!(
            "the ingress is a hostname and no cloud credentials are at hand to prove who holds the reserved IPs"
        );
        return None;
    };
    match cloud.holders(claims).await {
        Some(Ok(map)) => Some(map),
        Some(Err(e)) => {
            tracing::warn!(error = %e, "cannot ask the cloud who holds the reserved IPs; asking again later");
            None
        }
        None => None,
    }
}

/// The gate under one overall deadline.
pub async fn wait_ready(
    client: &kube::Client,
    targets: &[ServiceClaim],
    cloud: Option<&dyn AddressProvider>,
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
        run_gate(client, targets, cloud, |s| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{LoadBalancerIngress, LoadBalancerStatus, ServiceStatus};
    use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions};

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn target(claims: &[&str]) -> ServiceClaim {
        ServiceClaim {
            namespace: "ns".into(),
            name: "lb".into(),
            claims: claims.iter().map(|s| ip(s)).collect(),
            needs_aws_lb_controller: false,
            ports: Vec::new(),
        }
    }

    fn service(ingress: &[(&str, bool)]) -> Service {
        Service {
            status: Some(ServiceStatus {
                load_balancer: Some(LoadBalancerStatus {
                    ingress: Some(
                        ingress
                            .iter()
                            .map(|(v, is_ip)| LoadBalancerIngress {
                                ip: is_ip.then(|| v.to_string()),
                                hostname: (!is_ip).then(|| v.to_string()),
                                ..Default::default()
                            })
                            .collect(),
                    ),
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn ready_slice() -> EndpointSlice {
        EndpointSlice {
            endpoints: Some(vec![Endpoint {
                addresses: vec!["10.0.0.5".into()],
                conditions: Some(EndpointConditions {
                    ready: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            }]),
            ..Default::default()
        }
    }

    fn gate(
        t: &ServiceClaim,
        svc: &Service,
        holders: Option<&BTreeMap<IpAddr, Holder>>,
    ) -> ServiceGate {
        evaluate(t, Some(svc), &[&ready_slice()], None, holders)
    }

    #[test]
    fn an_ingress_ip_other_than_the_reserved_one_is_not_ready_and_names_both() {
        let g = gate(
            &target(&["10.0.1.5"]),
            &service(&[("10.0.9.9", true)]),
            None,
        );
        assert!(!g.ready);
        assert_eq!(
            g.reason,
            "the load balancer holds 10.0.9.9 but DNS points at the reserved 10.0.1.5"
        );
    }

    #[test]
    fn an_ingress_with_an_extra_or_a_missing_ip_is_not_ready() {
        let t = target(&["10.0.1.5", "10.0.2.5"]);
        let extra = gate(
            &target(&["10.0.1.5"]),
            &service(&[("10.0.1.5", true), ("10.0.9.9", true)]),
            None,
        );
        assert!(!extra.ready, "{extra:?}");
        let missing = gate(&t, &service(&[("10.0.1.5", true)]), None);
        assert!(!missing.ready, "{missing:?}");
        let both = gate(
            &t,
            &service(&[("10.0.2.5", true), ("10.0.1.5", true)]),
            None,
        );
        assert!(both.ready, "{both:?}");
        assert_eq!(both.proof, "ingress holds 10.0.1.5, 10.0.2.5");
    }

    #[test]
    fn a_hostname_ingress_needs_the_cloud_to_show_a_load_balancer_holding_every_claim() {
        let t = target(&["10.0.1.5", "10.0.2.5"]);
        let svc = service(&[("internal-lb-1.elb.us-east-1.amazonaws.com", false)]);
        let unasked = gate(&t, &svc, None);
        assert!(!unasked.ready && unasked.needs_cloud_proof, "{unasked:?}");
        assert!(
            unasked.reason.contains("asking the cloud"),
            "{}",
            unasked.reason
        );

        let elb = |id: &str| Holder {
            id: id.into(),
            description: format!("ELB net/k8s-internal/{id}"),
        };
        let placeholder = Holder {
            id: "eni-ours".into(),
            description: "".into(),
        };
        let half = BTreeMap::from([
            (ip("10.0.1.5"), elb("eni-1")),
            (ip("10.0.2.5"), placeholder),
        ]);
        let g = gate(&t, &svc, Some(&half));
        assert!(!g.ready);
        assert!(
            g.reason
                .contains("10.0.2.5 is held by eni-ours (\"\"), not a load balancer"),
            "{}",
            g.reason
        );
        let one = BTreeMap::from([(ip("10.0.1.5"), elb("eni-1"))]);
        let g = gate(&t, &svc, Some(&one));
        assert!(
            g.reason.contains("10.0.2.5 is held by nothing yet"),
            "{}",
            g.reason
        );

        let all = BTreeMap::from([
            (ip("10.0.1.5"), elb("eni-1")),
            (ip("10.0.2.5"), elb("eni-2")),
        ]);
        let g = gate(&t, &svc, Some(&all));
        assert!(g.ready, "{g:?}");
        assert!(
            g.proof.starts_with(
                "cloud: load-balancer interfaces hold 10.0.1.5 by eni-1, 10.0.2.5 by eni-2"
            ),
            "{}",
            g.proof
        );
    }

    #[test]
    fn without_claims_ingress_and_an_endpoint_are_enough_and_endpoints_still_count() {
        let g = gate(&target(&[]), &service(&[("lb.example", false)]), None);
        assert!(g.ready && !g.needs_cloud_proof, "{g:?}");
        let no_endpoints = evaluate(
            &target(&["10.0.1.5"]),
            Some(&service(&[("10.0.1.5", true)])),
            &[],
            None,
            None,
        );
        assert!(!no_endpoints.ready);
        assert_eq!(no_endpoints.reason, "0 of 0 endpoints ready");
        let none = evaluate(
            &target(&[]),
            Some(&service(&[])),
            &[&ready_slice()],
            None,
            None,
        );
        assert_eq!(none.reason, "no ingress yet");
    }

    #[test]
    fn after_a_long_wait_without_ingress_the_reason_asks_for_the_aws_lb_controller() {
        let mut t = target(&["10.0.1.5"]);
        t.needs_aws_lb_controller = true;
        let g = evaluate(&t, Some(&service(&[])), &[], None, None);
        let early = with_controller_hint(
            g.clone(),
            &t,
            NO_CONTROLLER_HINT_AFTER - Duration::from_secs(1),
        );
        assert_eq!(early.reason, "no ingress yet");
        let late = with_controller_hint(g, &t, NO_CONTROLLER_HINT_AFTER);
        assert!(
            late.reason
                .contains("is the AWS Load Balancer Controller running?"),
            "{}",
            late.reason
        );
        t.needs_aws_lb_controller = false;
        let other = with_controller_hint(late.clone(), &t, NO_CONTROLLER_HINT_AFTER);
        assert_eq!(
            other.reason, late.reason,
            "only AWS external Services get the hint"
        );
    }

    #[test]
    fn only_aws_external_services_wait_for_the_aws_lb_controller() {
        let svc = |annotation: Option<&str>| Service {
            metadata: kube::api::ObjectMeta {
                name: Some("internal-lb".into()),
                namespace: Some("openshift-kube-apiserver".into()),
                annotations: annotation.map(|v| {
                    [(
                        "service.beta.kubernetes.io/aws-load-balancer-type".to_string(),
                        v.to_string(),
                    )]
                    .into()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let t = ServiceClaim::for_service(&svc(Some("external")), vec![ip("10.0.1.5")]);
        assert!(t.needs_aws_lb_controller);
        assert_eq!(
            (t.namespace.as_str(), t.name.as_str()),
            ("openshift-kube-apiserver", "internal-lb")
        );
        assert_eq!(t.claims, [ip("10.0.1.5")]);
        assert!(!ServiceClaim::for_service(&svc(Some("nlb")), vec![]).needs_aws_lb_controller);
        assert!(!ServiceClaim::for_service(&svc(None), vec![]).needs_aws_lb_controller);
    }
}
