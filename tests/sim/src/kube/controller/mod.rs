//! The simulated controllers of a cluster's LoadBalancer Services: the load-balancer
//! controller of the cloud (see `lb`), the endpoint-slice controller (see `endpoints`) and the
//! kubelets of the control-plane nodes (see `kubelet`).
//!
//! Per LoadBalancer Service, two steps run side by side, each skipped when already true:
//! - **Ingress.** After `ingress_delay`, the Service's load-balancer controller reconciles it.
//!   When the cloud lets it have its addresses, it records its Normal Events and sets
//!   `status.loadBalancer.ingress` (a hostname only for AWS NLBs, the IP elsewhere). When the
//!   cloud refuses, it records the Warning Event the real controller records, leaves no
//!   ingress, and tries again after `refusal_retry` (a real controller requeues), so a
//!   conflict that goes away is healed.
//! - **Endpoints.** After `ingress_delay + endpoints_delay`, the EndpointSlice and Endpoints
//!   are written from the pods that match the Service's selector, and kept in step with pod
//!   changes from then on. `flapping` toggles their readiness.
//!
//! The AWS contract other code relies on: an NLB's private IP is held in moto by an ENI whose
//! Description is `ELB net/<lb-name>/<lb-id>` (found with DescribeNetworkInterfaces filtered
//! by `addresses.private-ip-address`); an NLB's EIP is associated (DescribeAddresses ->
//! `networkInterfaceId`) with an ENI of the same Description shape in the public subnet. The
//! ingress is the hostname `<lb-name>-<lb-id>.elb.<region>.amazonaws.com`, never an IP.
//! Refusals are Events with `involvedObject` = the Service: `FailedBuildModel` /
//! `FailedDeployModel` from component `service` (AWS Load Balancer Controller),
//! `SyncLoadBalancerFailed` from `service-controller` (GCP, Azure).
//!
//! The controllers watch through the store like any client and write through the same verbs,
//! so every step is a watch event with a new resourceVersion. A change of the Service's
//! annotations or spec, or of the knobs, cancels the pending steps and starts over; a claim
//! already under way in the cloud runs to its end first.
//!
//! The two steps (ingress, endpoints) and their status writes are in `steps`, the finalizers
//! in `finalizers`; this file holds the controller, its watch loop and each Service's
//! pipeline.

mod finalizers;
mod steps;

use super::endpoints;
use super::kubelet::{self, PodSet};
use super::lb::{self, CloudOptions, LoadBalancers};
use super::meta;
use super::resources::{NAMESPACES, NODES, PODS, SERVICES};
use super::store::{EventType, Inner, Key};
use super::{ControllerKnobs, Shared};
use anyhow::Result;
use finalizers::{holds_finalizer, let_go};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use steps::{clear, make_ready_now, provision, publish_endpoints};
use tokio::sync::watch;
use tokio::task::JoinHandle;

type Id = (String, String);

/// What the controller tasks share.
struct Ctx {
    shared: Arc<Shared>,
    lbs: Arc<LoadBalancers>,
    /// Services whose endpoints are published, with their flapping gate (open = ready).
    published: Mutex<HashMap<Id, bool>>,
    /// `make_ready` calls for Services that do not exist yet.
    pending: Mutex<HashSet<Id>>,
    /// Deleted Services (by uid) whose load balancer is being deleted before their finalizer
    /// comes off.
    cleaning: Mutex<HashSet<(Id, String)>>,
    pods: Vec<PodSet>,
    /// The control-plane nodes' IPs (see `kubelet::node_ip`).
    node_ips: Vec<std::net::Ipv4Addr>,
}

pub struct Controller {
    ctx: Arc<Ctx>,
    knobs: watch::Sender<ControllerKnobs>,
    tasks: Vec<JoinHandle<()>>,
}

impl Controller {
    pub fn start(
        shared: Arc<Shared>,
        knobs: ControllerKnobs,
        cloud: CloudOptions,
        pods: Vec<PodSet>,
        node_ips: Vec<std::net::Ipv4Addr>,
    ) -> Result<Self> {
        let ctx = Arc::new(Ctx {
            shared,
            lbs: Arc::new(LoadBalancers::new(cloud)?),
            published: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashSet::new()),
            cleaning: Mutex::new(HashSet::new()),
            pods,
            node_ips,
        });
        ctx.lbs.set_node_count(knobs.endpoints);
        kubelet::sync(
            &mut ctx.shared.store.lock(),
            &ctx.pods,
            knobs.endpoints,
            &ctx.node_ips,
        );
        let (tx, rx) = watch::channel(knobs);
        let main = tokio::spawn(run(ctx.clone(), rx.clone()));
        let dropper = tokio::spawn(drop_watches(ctx.shared.clone(), rx));
        Ok(Self {
            ctx,
            knobs: tx,
            tasks: vec![main, dropper],
        })
    }

    pub fn set_knobs(&self, knobs: ControllerKnobs) {
        self.knobs.send_replace(knobs);
    }

    pub fn knobs(&self) -> ControllerKnobs {
        self.knobs.borrow().clone()
    }

    pub fn load_balancers(&self) -> Arc<LoadBalancers> {
        self.ctx.lbs.clone()
    }

    /// Ingress and endpoints now, as if the controllers were done (the cloud is not asked);
    /// if the Service does not exist yet, as soon as it does.
    pub fn make_ready(&self, ns: &str, name: &str) {
        let mut inner = self.ctx.shared.store.lock();
        if !make_ready_now(&self.ctx, &mut inner, ns, name) {
            lock(&self.ctx.pending).insert((ns.to_string(), name.to_string()));
        }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.tasks.iter().for_each(JoinHandle::abort);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Closes all client watches every `drop_watches_every`.
async fn drop_watches(shared: Arc<Shared>, mut knobs: watch::Receiver<ControllerKnobs>) {
    loop {
        let period = knobs.borrow_and_update().drop_watches_every;
        match period {
            Some(p) => tokio::select! {
                _ = tokio::time::sleep(p) => shared.store.lock().drop_watches(),
                r = knobs.changed() => if r.is_err() { return },
            },
            None => {
                if knobs.changed().await.is_err() {
                    return;
                }
            }
        }
    }
}

struct Running {
    inputs: Value,
    task: JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn is_lb(svc: &Value) -> bool {
    meta::get_str(svc, &["spec", "type"]) == Some("LoadBalancer")
}

/// A Service event: start, restart or stop its pipeline.
fn seen(
    ctx: &Arc<Ctx>,
    obj: &Value,
    deleted: bool,
    running: &mut HashMap<Id, Running>,
    knobs: &ControllerKnobs,
) {
    let id = (
        meta::namespace(obj).to_string(),
        meta::name(obj).to_string(),
    );
    let finalized = !deleted && holds_finalizer(obj);
    if deleted || !is_lb(obj) || meta::get(obj, &["metadata", "deletionTimestamp"]).is_some() {
        let was_lb = running.remove(&id).is_some();
        if ctx.lbs.cloud().external_controller {
            // The real controller deletes the load balancer and takes its finalizers off.
            lock(&ctx.published).remove(&id);
            endpoints::clear(&mut ctx.shared.store.lock(), &id.0, &id.1);
            return;
        }
        if was_lb || deleted || finalized {
            lock(&ctx.published).remove(&id);
            clear(&mut ctx.shared.store.lock(), &id.0, &id.1, deleted);
            if ctx.lbs.cloud().external_controller {
                // The real controller deletes its load balancer and takes its finalizer off.
                return;
            }
            let uid = meta::uid(obj).to_string();
            if !finalized {
                let lbs = ctx.lbs.clone();
                tokio::spawn(async move { lbs.release(&id.0, &id.1, &uid).await });
            } else if lock(&ctx.cleaning).insert((id.clone(), uid.clone())) {
                let first = lb::finalizer_goes_first(obj);
                tokio::spawn(let_go(ctx.clone(), id, uid, first));
            }
        }
        return;
    }
    if lock(&ctx.pending).remove(&id) {
        make_ready_now(ctx, &mut ctx.shared.store.lock(), &id.0, &id.1);
    }
    let inputs = json!([
        meta::uid(obj),
        meta::get(obj, &["metadata", "annotations"]),
        meta::get(obj, &["spec"])
    ]);
    if running.get(&id).is_some_and(|r| r.inputs == inputs) {
        return;
    }
    running.remove(&id);
    let task = tokio::spawn(pipeline(
        ctx.clone(),
        id.0.clone(),
        id.1.clone(),
        knobs.clone(),
    ));
    running.insert(id, Running { inputs, task });
}

async fn run(ctx: Arc<Ctx>, mut knobs: watch::Receiver<ControllerKnobs>) {
    let subscribe = |res| ctx.shared.store.lock().subscribe(res, None, true);
    let (Ok((backlog, mut services)), Ok((_, mut pods)), Ok((_, mut namespaces))) =
        (subscribe(SERVICES), subscribe(PODS), subscribe(NAMESPACES))
    else {
        return;
    };
    let Ok((_, mut nodes)) = subscribe(NODES) else {
        return;
    };
    let mut running: HashMap<Id, Running> = HashMap::new();
    let current = knobs.borrow_and_update().clone();
    for e in backlog {
        seen(&ctx, &e.obj, false, &mut running, &current);
    }
    let mut shutdown = ctx.shared.shutdown.clone();
    loop {
        tokio::select! {
            e = services.recv() => match e {
                Some(e) => {
                    let k = knobs.borrow().clone();
                    seen(&ctx, &e.obj, e.typ == EventType::Deleted, &mut running, &k);
                }
                None => break,
            },
            e = pods.recv() => match e {
                Some(e) => resync_endpoints(&ctx, &e.key.ns),
                None => break,
            },
            e = nodes.recv() => match e {
                // A Node came or went: every load balancer takes the nodes as they are now (see
                // `lb::node_sync`); its status changing alone syncs nothing here.
                Some(e) if e.typ != EventType::Modified => {
                    let ctx = ctx.clone();
                    tokio::spawn(async move { ctx.lbs.update_hosts(&ctx.shared.store).await });
                }
                Some(_) => {}
                None => break,
            },
            e = namespaces.recv() => match e {
                Some(_) => {
                    let nodes = knobs.borrow().endpoints;
                    kubelet::sync(&mut ctx.shared.store.lock(), &ctx.pods, nodes, &ctx.node_ips);
                }
                None => break,
            },
            r = knobs.changed() => {
                if r.is_err() {
                    break;
                }
                let k = knobs.borrow_and_update().clone();
                kubelet::sync(&mut ctx.shared.store.lock(), &ctx.pods, k.endpoints, &ctx.node_ips);
                ctx.lbs.set_node_count(k.endpoints);
                let services: Vec<_> = ctx.shared.store.lock().list(SERVICES, None);
                running.clear();
                for (_, svc) in services {
                    seen(&ctx, &svc, false, &mut running, &k);
                }
            }
            _ = super::stopped(&mut shutdown) => break,
        }
    }
}

/// Pods of `ns` changed: the published endpoints of its Services follow.
fn resync_endpoints(ctx: &Ctx, ns: &str) {
    let published: Vec<(Id, bool)> = lock(&ctx.published)
        .iter()
        .filter(|((n, _), _)| n == ns)
        .map(|(id, gate)| (id.clone(), *gate))
        .collect();
    let mut inner = ctx.shared.store.lock();
    for ((ns, name), gate) in published {
        endpoints::sync(&mut inner, &ns, &name, gate);
    }
}

/// The steps for one Service, side by side.
async fn pipeline(ctx: Arc<Ctx>, ns: String, name: String, knobs: ControllerKnobs) {
    if knobs.never_ready {
        return;
    }
    tokio::join!(
        provision(&ctx, &ns, &name, &knobs),
        publish_endpoints(&ctx, &ns, &name, &knobs)
    );
}

fn service(inner: &Inner, ns: &str, name: &str) -> Option<Value> {
    inner
        .get(&Key::new(SERVICES, ns, name))
        .map(|s| (*s).clone())
}
