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

use super::apply::Scope;
use super::endpoints;
use super::events::{self, Report};
use super::kubelet::{self, PodSet};
use super::lb::{self, CloudOptions, LoadBalancers, Outcome};
use super::meta;
use super::ops::{self, WriteCtx};
use super::resources::{NAMESPACES, NODES, PODS, SERVICES};
use super::store::{EventType, Inner, Key};
use super::{ControllerKnobs, Shared};
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio::task::JoinHandle;

const CCM: &str = "cloud-controller-manager";

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

/// Whether the Service carries the finalizer of a load-balancer controller (see
/// [`lb::finalizer`]).
fn holds_finalizer(svc: &Value) -> bool {
    meta::get(svc, &["metadata", "finalizers"])
        .and_then(Value::as_array)
        .is_some_and(|f| {
            f.iter()
                .any(|f| f.as_str().is_some_and(|f| lb::FINALIZERS.contains(&f)))
        })
}

/// A deleted Service (or one no longer a LoadBalancer) whose controller holds it by its
/// finalizer: the load balancer is deleted, then the finalizers come off (for an NLB once the
/// NLB is deleted, ELB freeing its interfaces after; on GCP the provider's own first, at the
/// end of `EnsureLoadBalancerDeleted`, then the service controller's), and with them a
/// deleted Service goes.
async fn let_go(ctx: Arc<Ctx>, id: Id, uid: String, finalizer_first: bool) {
    if finalizer_first {
        tokio::time::sleep(ctx.lbs.cloud().nlb_deletion).await;
        remove_finalizers(&mut ctx.shared.store.lock(), &id, &uid);
    }
    ctx.lbs.release(&id.0, &id.1, &uid).await;
    if !finalizer_first {
        remove_finalizers(&mut ctx.shared.store.lock(), &id, &uid);
    }
    lock(&ctx.cleaning).remove(&(id, uid));
}

/// Puts the Service's controller's finalizer on it, then the cloud provider's own (each a
/// write of `services/status`, as `servicehelper.PatchService` makes it; not on a Service
/// being deleted: the API server refuses a new finalizer there).
fn add_finalizers(inner: &mut Inner, ns: &str, name: &str, cloud: &CloudOptions) {
    let Some(svc) = service(inner, ns, name) else {
        return;
    };
    let wanted = [lb::finalizer(&svc), lb::provider_finalizer(&svc, cloud)];
    for finalizer in wanted.into_iter().flatten() {
        let Some(mut svc) = service(inner, ns, name) else {
            return;
        };
        if meta::get(&svc, &["metadata", "deletionTimestamp"]).is_some() {
            return;
        }
        let mut finalizers = finalizers_of(&svc);
        if finalizers.iter().any(|f| f == finalizer) {
            continue;
        }
        finalizers.push(json!(finalizer));
        meta::set(&mut svc, &["metadata", "finalizers"], json!(finalizers));
        write_finalizers(inner, ns, name, svc);
    }
}

fn finalizers_of(svc: &Value) -> Vec<Value> {
    meta::get(svc, &["metadata", "finalizers"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Takes the controllers' finalizers off the Service `id` with `uid` (one re-created under its
/// name keeps its own): the cloud provider's first, then the service controller's, each its
/// own write.
fn remove_finalizers(inner: &mut Inner, id: &Id, uid: &str) {
    let provider = [lb::ILB_FINALIZER, lb::NETLB_FINALIZER];
    let steps: [&dyn Fn(&str) -> bool; 2] =
        [&|f| provider.contains(&f), &|f| lb::FINALIZERS.contains(&f)];
    for goes in steps {
        let Some(mut svc) = service(inner, &id.0, &id.1).filter(|s| meta::uid(s) == uid) else {
            return;
        };
        let finalizers = finalizers_of(&svc);
        let kept: Vec<Value> = finalizers
            .iter()
            .filter(|f| !f.as_str().is_some_and(goes))
            .cloned()
            .collect();
        if kept.len() == finalizers.len() {
            continue;
        }
        meta::set(&mut svc, &["metadata", "finalizers"], json!(kept));
        write_finalizers(inner, &id.0, &id.1, svc);
    }
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

/// Ingress: reconcile with the cloud until it gives the load balancer its addresses.
async fn provision(ctx: &Arc<Ctx>, ns: &str, name: &str, knobs: &ControllerKnobs) {
    let Some(svc) = service(&ctx.shared.store.lock(), ns, name) else {
        return;
    };
    if has_ingress(&svc, ctx.lbs.cloud()) && ctx.lbs.is_provisioned(&svc).await {
        return;
    }
    // No controller serves it (the AWS Load Balancer Controller is not installed, or does not
    // run: its Deployment has no available replica).
    if !lb::served(&svc, ctx.lbs.cloud())
        || (lb::needs_aws_lb_controller(&svc)
            && !super::aws_controller::serving(&ctx.shared.store.lock()))
    {
        return;
    }
    tokio::time::sleep(knobs.ingress_delay).await;
    add_finalizers(&mut ctx.shared.store.lock(), ns, name, ctx.lbs.cloud());
    loop {
        // Detached, so that a restart of this pipeline cannot cut a claim in the cloud in half.
        let (lbs, store) = (ctx.lbs.clone(), ctx.shared.store.clone());
        let (n, m) = (ns.to_string(), name.to_string());
        let Ok(outcome) = tokio::spawn(async move { lbs.reconcile(&store, &n, &m).await }).await
        else {
            return;
        };
        {
            let mut inner = ctx.shared.store.lock();
            let Some(svc) = service(&inner, ns, name) else {
                return;
            };
            match outcome {
                Outcome::Gone => return,
                Outcome::Provisioned(reports) => {
                    record(&mut inner, &svc, &reports);
                    set_ingress(&mut inner, ns, name, ctx.lbs.cloud());
                    return;
                }
                // The NLB exists without targets: its ingress stands, the controller requeues.
                Outcome::Unregistered(reports) => {
                    record(&mut inner, &svc, &reports);
                    set_ingress(&mut inner, ns, name, ctx.lbs.cloud());
                }
                Outcome::Refused(reports) => {
                    record(&mut inner, &svc, &reports);
                    clear_ingress(&mut inner, ns, name);
                }
            }
        }
        tokio::time::sleep(knobs.refusal_retry).await;
    }
}

fn record(inner: &mut Inner, svc: &Value, reports: &[Report]) {
    for r in reports {
        events::record(inner, svc, r);
    }
}

/// Endpoints: from the matching pods, then kept in step (and flapping, if asked).
async fn publish_endpoints(ctx: &Arc<Ctx>, ns: &str, name: &str, knobs: &ControllerKnobs) {
    let id = (ns.to_string(), name.to_string());
    if knobs.ingress_without_endpoints {
        lock(&ctx.published).remove(&id);
        return;
    }
    let current = endpoints::is_current(&ctx.shared.store.lock(), ns, name, true);
    if !current {
        tokio::time::sleep(knobs.ingress_delay + knobs.endpoints_delay).await;
    }
    publish(ctx, &id, true);
    if let Some(period) = knobs.flapping {
        let mut ready = true;
        loop {
            tokio::time::sleep(period).await;
            ready = !ready;
            publish(ctx, &id, ready);
        }
    }
}

fn publish(ctx: &Ctx, id: &Id, gate_open: bool) {
    lock(&ctx.published).insert(id.clone(), gate_open);
    endpoints::sync(&mut ctx.shared.store.lock(), &id.0, &id.1, gate_open);
}

fn has_ingress(svc: &Value, cloud: &CloudOptions) -> bool {
    meta::get(svc, &["status", "loadBalancer", "ingress"]) == Some(&json!(lb::ingress(svc, cloud)))
}

fn write_status(inner: &mut Inner, ns: &str, name: &str, load_balancer: Value) {
    let Some(mut svc) = service(inner, ns, name) else {
        return;
    };
    meta::set(&mut svc, &["status", "loadBalancer"], load_balancer);
    write_finalizers(inner, ns, name, svc);
}

/// A finalizer or status change as the service controller and the GCE provider write it:
/// through `services/status` (`servicehelper.PatchService`), which keeps the Service's
/// metadata.
fn write_finalizers(inner: &mut Inner, ns: &str, name: &str, svc: Value) {
    let ctx = WriteCtx::internal(CCM, false);
    let _ = ops::update(
        inner,
        &Key::new(SERVICES, ns, name),
        svc,
        Scope::Status,
        &ctx,
    );
}

fn set_ingress(inner: &mut Inner, ns: &str, name: &str, cloud: &CloudOptions) {
    let Some(svc) = service(inner, ns, name) else {
        return;
    };
    if !is_lb(&svc) || has_ingress(&svc, cloud) {
        return;
    }
    write_status(
        inner,
        ns,
        name,
        json!({"ingress": lb::ingress(&svc, cloud)}),
    );
}

fn clear_ingress(inner: &mut Inner, ns: &str, name: &str) {
    if service(inner, ns, name)
        .is_some_and(|s| meta::get(&s, &["status", "loadBalancer", "ingress"]).is_some())
    {
        write_status(inner, ns, name, json!({}));
    }
}

/// A Service that is gone or no longer a LoadBalancer: no ingress, no endpoints.
fn clear(inner: &mut Inner, ns: &str, name: &str, deleted: bool) {
    endpoints::clear(inner, ns, name);
    if !deleted {
        clear_ingress(inner, ns, name);
    }
}

/// Forces ingress and endpoints; false when there is no such LoadBalancer Service.
fn make_ready_now(ctx: &Ctx, inner: &mut Inner, ns: &str, name: &str) -> bool {
    let Some(svc) = service(inner, ns, name) else {
        return false;
    };
    if !is_lb(&svc) {
        return false;
    }
    set_ingress(inner, ns, name, ctx.lbs.cloud());
    lock(&ctx.published).insert((ns.to_string(), name.to_string()), true);
    endpoints::sync(inner, ns, name, true);
    true
}
