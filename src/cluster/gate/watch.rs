//! The watch: reflectors over Services, EndpointSlices and Endpoints, re-evaluated on every
//! event, and the cloud asked on a backoff while a Service waits for its proof.

use super::evaluate::{evaluate, with_controller_hint};
use super::{SERVICE_NAME_LABEL, ServiceGate};
use crate::cluster::watch;
use crate::render::ServiceClaim;
use bootstrap_cloud::{AddressProvider, Holder};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Endpoints, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use kube::{Api, Resource};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::time::{Duration, Instant};

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

/// Waits until every target is Ready, calling `progress` whenever a Service's state changes.
/// Never returns on its own otherwise (but for a watch the API server refuses: see
/// [`crate::cluster::WatchRefused`]): wrap it in a timeout (see `wait_ready`). `cloud` proves
/// who holds the claimed IPs where the ingress is only a hostname.
pub async fn run_gate(
    client: &kube::Client,
    targets: &[ServiceClaim],
    cloud: Option<&dyn AddressProvider>,
    mut progress: impl FnMut(&[ServiceGate]),
) -> Result<Vec<ServiceGate>, crate::cluster::WatchRefused> {
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
    // Which streams are Services: their events re-arm the cloud look-up.
    let mut service_streams: BTreeSet<usize> = BTreeSet::new();
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
        service_streams.insert(streams.len());
        streams.push(s);
        let (store, s) = watch(
            Api::<Endpoints>::namespaced(client.clone(), ns),
            watcher::Config::default(),
        );
        stores.endpoints.push(store);
        streams.push(s);
    }
    // Nothing is judged before every watch has listed once: an empty store before its
    // initial list means "not listed yet", not "absent" (a Service applied just before would
    // otherwise be reported "service not found").
    let watches = streams.len();
    let mut listed: BTreeSet<usize> = BTreeSet::new();
    let mut events = futures::stream::select_all(
        streams
            .into_iter()
            .enumerate()
            .map(|(i, s)| s.map(move |event| (i, event)).boxed()),
    );
    let mut last: Vec<ServiceGate> = Vec::new();
    let mut holders: Option<BTreeMap<IpAddr, Holder>> = None;
    let mut cloud_backoff = CLOUD_FIRST_ASK;
    let mut next_cloud_ask: Option<tokio::time::Instant> = None;
    let mut asking_often_until = tokio::time::Instant::now() + CLOUD_OFTEN_FOR;
    loop {
        let ask_at = next_cloud_ask;
        tokio::select! {
            event = events.next() => match event {
                None => return Ok(last),
                Some((_, Err(e))) => {
                    if let Some(refused) = crate::cluster::WatchRefused::of(&e) {
                        return Err(refused);
                    }
                    tracing::warn!(error = %e, "watch interrupted; kube-runtime re-lists with backoff");
                    continue;
                }
                Some((i, Ok(init_done))) => {
                    if init_done {
                        listed.insert(i);
                    }
                    if service_streams.contains(&i) {
                        // A Service changed (its load balancer came, or changed): the cloud's
                        // side follows within seconds, so ask soon and often for a while.
                        let soon = tokio::time::Instant::now() + CLOUD_FIRST_ASK;
                        cloud_backoff = CLOUD_FIRST_ASK;
                        asking_often_until = soon + CLOUD_OFTEN_FOR;
                        next_cloud_ask = next_cloud_ask.map(|at| at.min(soon));
                    }
                }
            },
            _ = sleep_until(ask_at), if ask_at.is_some() => {
                let claims: Vec<IpAddr> = last
                    .iter()
                    .zip(targets)
                    .filter(|(g, _)| g.needs_cloud_proof)
                    .flat_map(|(_, t)| t.claims.iter().copied())
                    .collect();
                holders = ask_cloud(cloud, &claims).await.or(holders);
                let cap = match tokio::time::Instant::now() < asking_often_until {
                    true => CLOUD_OFTEN_ASK,
                    false => CLOUD_MAX_ASK,
                };
                cloud_backoff = (cloud_backoff * 2).min(cap);
                next_cloud_ask = None;
            }
        }
        if listed.len() < watches {
            continue;
        }
        let now = stores.evaluate(targets, holders.as_ref(), started.elapsed());
        if now != last {
            progress(&now);
            last = now;
        }
        if last.iter().all(|s| s.ready) {
            return Ok(last);
        }
        if next_cloud_ask.is_none() && last.iter().any(|s| s.needs_cloud_proof && !s.ready) {
            next_cloud_ask = Some(tokio::time::Instant::now() + cloud_backoff);
        }
    }
}

/// The first cloud look-up comes right after the ingress appears (and after every later event
/// of a Service); later ones back off to once a second for [`CLOUD_OFTEN_FOR`], then to once
/// every 10 s. So once the load balancer's interfaces hold the reserved IPs the gate passes
/// within a second, if that happens within a minute of the Service's last change, and asks at
/// most 64 times in that minute and 6 times a minute after it (one `holders` each: AWS
/// DescribeNetworkInterfaces, and DescribeAddresses for the public IPs).
const CLOUD_FIRST_ASK: Duration = Duration::from_millis(50);
const CLOUD_OFTEN_ASK: Duration = Duration::from_secs(1);
const CLOUD_OFTEN_FOR: Duration = Duration::from_secs(60);
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
