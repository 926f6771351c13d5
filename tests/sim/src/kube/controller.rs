//! The simulated service controller: cloud-controller-manager's load-balancer part plus the
//! endpoint-slice controller, for Services of type LoadBalancer only.
//!
//! After `ingress_delay` it sets `status.loadBalancer.ingress` (an IP when one was requested
//! through an annotation or `spec.loadBalancerIP`, else an AWS-style hostname); after a further
//! `endpoints_delay` it writes an EndpointSlice `<svc>-<5 chars>` (label
//! `kubernetes.io/service-name`, owner reference to the Service) with `endpoints` ready
//! endpoints 10.0.0.1.., and keeps the core/v1 Endpoints object `<svc>` in step. It watches
//! Services through the store like any controller, and writes through the same verbs, so
//! every step is a watch event with a new resourceVersion. A change of the Service's
//! requested address or ports, or of the knobs, cancels the pending steps and starts over
//! (steps already true are not waited for again).
//!
//! Simplifications: no pods; endpoints exist only for LoadBalancer Services; names and
//! hostnames are derived from the Service uid (stable, not random).

use super::apply::Scope;
use super::delete::{self, DeleteOpts};
use super::meta;
use super::ops::{self, WriteCtx};
use super::resources::{ENDPOINTS, ENDPOINTSLICES, SERVICES};
use super::store::{EventType, Inner, Key};
use super::{ControllerKnobs, Shared};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio::task::JoinHandle;

const CCM: &str = "cloud-controller-manager";
const KCM: &str = "kube-controller-manager";
const AWS_PRIVATE: &str = "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses";
const AZURE_IP: &str = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
const SERVICE_NAME: &str = "kubernetes.io/service-name";
const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
const SLICE_CONTROLLER: &str = "endpointslice-controller.k8s.io";

pub struct Controller {
    shared: Arc<Shared>,
    knobs: watch::Sender<ControllerKnobs>,
    pending: Arc<Mutex<HashSet<(String, String)>>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Controller {
    pub fn start(shared: Arc<Shared>, knobs: ControllerKnobs) -> Self {
        let (tx, rx) = watch::channel(knobs);
        let pending = Arc::new(Mutex::new(HashSet::new()));
        let main = tokio::spawn(run(shared.clone(), rx.clone(), pending.clone()));
        let dropper = tokio::spawn(drop_watches(shared.clone(), rx));
        Self {
            shared,
            knobs: tx,
            pending,
            tasks: vec![main, dropper],
        }
    }

    pub fn set_knobs(&self, knobs: ControllerKnobs) {
        self.knobs.send_replace(knobs);
    }

    pub fn knobs(&self) -> ControllerKnobs {
        self.knobs.borrow().clone()
    }

    /// Ingress and ready endpoints now; if the Service does not exist yet, as soon as it does.
    pub fn make_ready(&self, ns: &str, name: &str) {
        let n = self.knobs.borrow().endpoints.max(1);
        let mut inner = self.shared.store.lock();
        if !make_ready_now(&mut inner, ns, name, n) {
            lock(&self.pending).insert((ns.to_string(), name.to_string()));
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

async fn run(
    shared: Arc<Shared>,
    mut knobs: watch::Receiver<ControllerKnobs>,
    pending: Arc<Mutex<HashSet<(String, String)>>>,
) {
    let Ok((backlog, mut events)) = shared.store.lock().subscribe(SERVICES, None, true) else {
        return;
    };
    let mut running: HashMap<(String, String), Running> = HashMap::new();
    let seen =
        |obj: &Value, deleted: bool, running: &mut HashMap<_, Running>, knobs: &ControllerKnobs| {
            let id = (
                meta::namespace(obj).to_string(),
                meta::name(obj).to_string(),
            );
            let lb = !deleted && meta::get_str(obj, &["spec", "type"]) == Some("LoadBalancer");
            if !lb {
                let was_lb = running.remove(&id).is_some();
                if was_lb || deleted {
                    clear(&mut shared.store.lock(), &id.0, &id.1, deleted);
                }
                return;
            }
            if lock(&pending).remove(&id) {
                make_ready_now(
                    &mut shared.store.lock(),
                    &id.0,
                    &id.1,
                    knobs.endpoints.max(1),
                );
            }
            let inputs = json!([
                meta::uid(obj),
                desired_ingress(obj),
                meta::get(obj, &["spec", "ports"])
            ]);
            if running.get(&id).is_some_and(|r| r.inputs == inputs) {
                return;
            }
            running.remove(&id);
            let task = tokio::spawn(pipeline(
                shared.clone(),
                id.0.clone(),
                id.1.clone(),
                knobs.clone(),
            ));
            running.insert(id, Running { inputs, task });
        };
    let current = knobs.borrow_and_update().clone();
    for e in backlog {
        seen(&e.obj, false, &mut running, &current);
    }
    let mut shutdown = shared.shutdown.clone();
    loop {
        tokio::select! {
            e = events.recv() => match e {
                Some(e) => {
                    let k = knobs.borrow().clone();
                    seen(&e.obj, e.typ == EventType::Deleted, &mut running, &k);
                }
                None => break,
            },
            r = knobs.changed() => {
                if r.is_err() {
                    break;
                }
                let k = knobs.borrow_and_update().clone();
                let services: Vec<_> = shared.store.lock().list(SERVICES, None);
                running.clear();
                for (_, svc) in services {
                    seen(&svc, false, &mut running, &k);
                }
            }
            _ = super::stopped(&mut shutdown) => break,
        }
    }
}

/// The steps for one Service, each skipped when already true.
async fn pipeline(shared: Arc<Shared>, ns: String, name: String, knobs: ControllerKnobs) {
    if knobs.never_ready {
        return;
    }
    let ingress_set = {
        let inner = shared.store.lock();
        service(&inner, &ns, &name).is_some_and(|s| has_desired_ingress(&s))
    };
    if !ingress_set {
        tokio::time::sleep(knobs.ingress_delay).await;
        set_ingress(&mut shared.store.lock(), &ns, &name);
    }
    if knobs.ingress_without_endpoints {
        return;
    }
    let ready = endpoints_ready(&shared.store.lock(), &ns, &name, knobs.endpoints);
    if !ready {
        tokio::time::sleep(knobs.endpoints_delay).await;
    }
    set_endpoints(&mut shared.store.lock(), &ns, &name, knobs.endpoints, true);
    if let Some(period) = knobs.flapping {
        let mut ready = true;
        loop {
            tokio::time::sleep(period).await;
            ready = !ready;
            set_endpoints(&mut shared.store.lock(), &ns, &name, knobs.endpoints, ready);
        }
    }
}

fn service(inner: &Inner, ns: &str, name: &str) -> Option<Value> {
    inner
        .get(&Key::new(SERVICES, ns, name))
        .map(|s| (*s).clone())
}

/// The address the cloud would give: the requested private/static IP, else a hostname.
fn desired_ingress(svc: &Value) -> Value {
    let annotation = |k: &str| {
        meta::get_str(svc, &["metadata", "annotations", k])
            .and_then(|v| v.split(',').map(str::trim).find(|s| !s.is_empty()))
    };
    let ip = annotation(AWS_PRIVATE)
        .or_else(|| annotation(AZURE_IP))
        .or_else(|| meta::get_str(svc, &["spec", "loadBalancerIP"]).filter(|s| !s.is_empty()));
    match ip {
        Some(ip) => json!({"ip": ip, "ipMode": "VIP"}),
        None => {
            let hex: String = meta::uid(svc)
                .chars()
                .filter(char::is_ascii_hexdigit)
                .take(8)
                .collect();
            json!({"hostname": format!("{}-{hex}.elb.us-east-1.amazonaws.com", meta::name(svc))})
        }
    }
}

fn has_desired_ingress(svc: &Value) -> bool {
    meta::get(svc, &["status", "loadBalancer", "ingress"]) == Some(&json!([desired_ingress(svc)]))
}

fn set_ingress(inner: &mut Inner, ns: &str, name: &str) {
    let Some(mut svc) = service(inner, ns, name) else {
        return;
    };
    if meta::get_str(&svc, &["spec", "type"]) != Some("LoadBalancer") || has_desired_ingress(&svc) {
        return;
    }
    let ingress = desired_ingress(&svc);
    meta::set(
        &mut svc,
        &["status", "loadBalancer"],
        json!({"ingress": [ingress]}),
    );
    let ctx = WriteCtx {
        manager: CCM,
        dry_run: false,
    };
    let _ = ops::update(
        inner,
        &Key::new(SERVICES, ns, name),
        svc,
        Scope::Status,
        &ctx,
    );
}

fn slice_name(svc: &Value) -> String {
    format!(
        "{}-{}",
        meta::name(svc),
        meta::suffix(5, Some(meta::uid(svc)))
    )
}

fn slices_of(inner: &Inner, ns: &str, name: &str) -> Vec<(Key, Value)> {
    inner
        .list(ENDPOINTSLICES, Some(ns))
        .into_iter()
        .filter(|(_, s)| {
            meta::get_str(s, &["metadata", "labels", SERVICE_NAME]) == Some(name)
                && meta::get_str(s, &["metadata", "labels", MANAGED_BY]) == Some(SLICE_CONTROLLER)
        })
        .map(|(k, s)| (k, (*s).clone()))
        .collect()
}

fn endpoints_ready(inner: &Inner, ns: &str, name: &str, n: usize) -> bool {
    slices_of(inner, ns, name).iter().any(|(_, s)| {
        let eps = s
            .get("endpoints")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        eps.len() == n
            && eps
                .iter()
                .all(|e| meta::get(e, &["conditions", "ready"]) == Some(&json!(true)))
    })
}

/// Writes the EndpointSlice and the Endpoints object of a Service: `n` endpoints, all ready
/// or all not ready.
fn set_endpoints(inner: &mut Inner, ns: &str, name: &str, n: usize, ready: bool) {
    let Some(svc) = service(inner, ns, name) else {
        return;
    };
    let ports: Vec<Value> = meta::get(&svc, &["spec", "ports"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let target = |p: &Value| match p.get("targetPort") {
        Some(Value::Number(n)) => json!(n),
        _ => p.get("port").cloned().unwrap_or(json!(0)),
    };
    let ips: Vec<String> = (1..=n).map(|i| format!("10.0.0.{i}")).collect();
    let endpoints: Vec<Value> = ips
        .iter()
        .enumerate()
        .map(|(i, ip)| {
            json!({
                "addresses": [ip],
                "conditions": {"ready": ready, "serving": ready, "terminating": false},
                "nodeName": format!("master-{i}"),
            })
        })
        .collect();
    let slice_ports: Vec<Value> = ports
        .iter()
        .map(|p| json!({"name": p.get("name").cloned().unwrap_or(json!("")), "port": target(p), "protocol": p.get("protocol").cloned().unwrap_or(json!("TCP"))}))
        .collect();
    let owner = json!([{
        "apiVersion": "v1", "kind": "Service", "name": name, "uid": meta::uid(&svc),
        "controller": true, "blockOwnerDeletion": true
    }]);
    let ctx = WriteCtx {
        manager: KCM,
        dry_run: false,
    };
    let existing = slices_of(inner, ns, name);
    let mut slice = match existing.first() {
        Some((_, s)) => s.clone(),
        None => json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": slice_name(&svc),
                "namespace": ns,
                "generateName": format!("{name}-"),
                "labels": {
                    SERVICE_NAME: name,
                    MANAGED_BY: SLICE_CONTROLLER,
                },
                "ownerReferences": owner,
            },
        }),
    };
    slice["addressType"] = json!("IPv4");
    slice["endpoints"] = json!(endpoints);
    slice["ports"] = json!(slice_ports);
    let _ = match existing.first() {
        Some((key, _)) => ops::update(inner, key, slice, Scope::Main, &ctx),
        None => ops::create(inner, ENDPOINTSLICES, ns, slice, &ctx),
    };

    let addresses: Vec<Value> = ips
        .iter()
        .enumerate()
        .map(|(i, ip)| json!({"ip": ip, "nodeName": format!("master-{i}")}))
        .collect();
    let ep_ports: Vec<Value> = ports
        .iter()
        .map(|p| {
            let mut e = json!({"port": target(p), "protocol": p.get("protocol").cloned().unwrap_or(json!("TCP"))});
            if let Some(n) = p.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
                e["name"] = json!(n);
            }
            e
        })
        .collect();
    let mut subset = json!({"ports": ep_ports});
    if !addresses.is_empty() {
        subset[if ready {
            "addresses"
        } else {
            "notReadyAddresses"
        }] = json!(addresses);
    }
    let key = Key::new(ENDPOINTS, ns, name);
    let mut ep = match inner.get(&key) {
        Some(e) => (*e).clone(),
        None => {
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": ns}})
        }
    };
    ep["subsets"] = json!([subset]);
    let _ = match inner.get(&key) {
        Some(_) => ops::update(inner, &key, ep, Scope::Main, &ctx),
        None => ops::create(inner, ENDPOINTS, ns, ep, &ctx),
    };
}

/// A Service that is gone or no longer a LoadBalancer: no ingress, no endpoints.
fn clear(inner: &mut Inner, ns: &str, name: &str, deleted: bool) {
    let opts = DeleteOpts::default();
    for (key, _) in slices_of(inner, ns, name) {
        let _ = delete::delete(inner, &key, &opts);
    }
    let _ = delete::delete(inner, &Key::new(ENDPOINTS, ns, name), &opts);
    if deleted {
        return;
    }
    if let Some(mut svc) = service(inner, ns, name)
        && meta::get(&svc, &["status", "loadBalancer", "ingress"]).is_some()
    {
        meta::set(&mut svc, &["status", "loadBalancer"], json!({}));
        let ctx = WriteCtx {
            manager: CCM,
            dry_run: false,
        };
        let _ = ops::update(
            inner,
            &Key::new(SERVICES, ns, name),
            svc,
            Scope::Status,
            &ctx,
        );
    }
}

/// Forces ingress and `n` ready endpoints; false when there is no such LoadBalancer Service.
fn make_ready_now(inner: &mut Inner, ns: &str, name: &str, n: usize) -> bool {
    let Some(svc) = service(inner, ns, name) else {
        return false;
    };
    if meta::get_str(&svc, &["spec", "type"]) != Some("LoadBalancer") {
        return false;
    }
    set_ingress(inner, ns, name);
    set_endpoints(inner, ns, name, n, true);
    true
}
