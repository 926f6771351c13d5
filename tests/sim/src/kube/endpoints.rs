//! The endpoint-slice controller (and the legacy endpoints controller) for one Service: the
//! EndpointSlice `<svc>-<5 chars>` (labels `kubernetes.io/service-name` and
//! `endpointslice.kubernetes.io/managed-by`, owner reference to the Service) and the Endpoints
//! `<svc>`, derived from the pods in the Service's namespace that match its selector, are
//! Running and have an IP. An endpoint is ready when its pod's `Ready` condition is True (and
//! the controller's flapping gate is open). A selector that matches no pod gives a slice with
//! no endpoints, as in a real cluster.
//!
//! Objects are rewritten only when their content changes, so pod events that change nothing
//! make no writes. Simplified: one slice per Service (no 100-endpoint split), IPv4 only,
//! numeric target ports only.

use super::apply::Scope;
use super::delete::{self, DeleteOpts};
use super::meta;
use super::ops::{self, WriteCtx};
use super::resources::{ENDPOINTS, ENDPOINTSLICES, PODS, SERVICES};
use super::store::{Inner, Key};
use serde_json::{Value, json};
use std::net::Ipv4Addr;

const KCM: &str = "kube-controller-manager";
const SERVICE_NAME: &str = "kubernetes.io/service-name";
const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
const SLICE_CONTROLLER: &str = "endpointslice-controller.k8s.io";

fn service(inner: &Inner, ns: &str, name: &str) -> Option<Value> {
    inner
        .get(&Key::new(SERVICES, ns, name))
        .map(|s| (*s).clone())
}

/// One backend: a pod's IP on its node.
struct Backend {
    ip: String,
    node: String,
    pod: String,
    uid: String,
    ready: bool,
}

fn selects(selector: &serde_json::Map<String, Value>, pod: &Value) -> bool {
    let labels = meta::labels(pod);
    !selector.is_empty()
        && selector
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
}

fn pod_ready(pod: &Value) -> bool {
    meta::get(pod, &["status", "conditions"])
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// The Running pods with an IP that the Service selects, ordered by IP.
fn backends(inner: &Inner, svc: &Value, gate_open: bool) -> Vec<Backend> {
    let Some(selector) = meta::get(svc, &["spec", "selector"]).and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out: Vec<Backend> = inner
        .list(PODS, Some(meta::namespace(svc)))
        .into_iter()
        .filter(|(_, p)| selects(selector, p))
        .filter(|(_, p)| meta::get(p, &["metadata", "deletionTimestamp"]).is_none())
        .filter(|(_, p)| meta::get_str(p, &["status", "phase"]) == Some("Running"))
        .filter_map(|(_, p)| {
            let ip = meta::get_str(&p, &["status", "podIP"])?.to_string();
            Some(Backend {
                ip,
                node: meta::get_str(&p, &["spec", "nodeName"])
                    .unwrap_or("")
                    .to_string(),
                pod: meta::name(&p).to_string(),
                uid: meta::uid(&p).to_string(),
                ready: gate_open && pod_ready(&p),
            })
        })
        .collect();
    out.sort_by_key(|b| b.ip.parse::<Ipv4Addr>().ok());
    out
}

/// The IPs of the Running pods the Service selects: the targets a load balancer of target
/// type `ip` registers.
pub(super) fn selected_ips(inner: &Inner, svc: &Value) -> Vec<Ipv4Addr> {
    backends(inner, svc, true)
        .iter()
        .filter_map(|b| b.ip.parse().ok())
        .collect()
}

fn target_port(p: &Value) -> Value {
    match p.get("targetPort") {
        Some(Value::Number(n)) => json!(n),
        _ => p.get("port").cloned().unwrap_or(json!(0)),
    }
}

fn service_ports(svc: &Value) -> Vec<Value> {
    meta::get(svc, &["spec", "ports"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
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

/// (endpoints, ports) of the slice as the controller wants it.
fn wanted_slice(svc: &Value, ns: &str, backends: &[Backend]) -> (Value, Value) {
    let endpoints: Vec<Value> = backends
        .iter()
        .map(|b| {
            json!({
                "addresses": [b.ip],
                "conditions": {"ready": b.ready, "serving": b.ready, "terminating": false},
                "nodeName": b.node,
                "targetRef": {"kind": "Pod", "namespace": ns, "name": b.pod, "uid": b.uid},
            })
        })
        .collect();
    let ports: Vec<Value> = service_ports(svc)
        .iter()
        .map(|p| {
            json!({"name": p.get("name").cloned().unwrap_or(json!("")), "port": target_port(p),
                   "protocol": p.get("protocol").cloned().unwrap_or(json!("TCP"))})
        })
        .collect();
    (json!(endpoints), json!(ports))
}

fn wanted_subsets(svc: &Value, ns: &str, backends: &[Backend]) -> Value {
    let ports: Vec<Value> = service_ports(svc)
        .iter()
        .map(|p| {
            let mut e = json!({"port": target_port(p), "protocol": p.get("protocol").cloned().unwrap_or(json!("TCP"))});
            if let Some(n) = p.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
                e["name"] = json!(n);
            }
            e
        })
        .collect();
    if backends.is_empty() {
        return json!([]);
    }
    let address = |b: &Backend| {
        json!({"ip": b.ip, "nodeName": b.node,
               "targetRef": {"kind": "Pod", "namespace": ns, "name": b.pod, "uid": b.uid}})
    };
    let mut subset = json!({"ports": ports});
    let ready: Vec<Value> = backends.iter().filter(|b| b.ready).map(address).collect();
    let not_ready: Vec<Value> = backends.iter().filter(|b| !b.ready).map(address).collect();
    if !ready.is_empty() {
        subset["addresses"] = json!(ready);
    }
    if !not_ready.is_empty() {
        subset["notReadyAddresses"] = json!(not_ready);
    }
    json!([subset])
}

/// True when the slice and the Endpoints already say what [`sync`] would write.
pub fn is_current(inner: &Inner, ns: &str, name: &str, gate_open: bool) -> bool {
    let Some(svc) = service(inner, ns, name) else {
        return false;
    };
    let backends = backends(inner, &svc, gate_open);
    let (endpoints, ports) = wanted_slice(&svc, ns, &backends);
    let slice_ok = slices_of(inner, ns, name)
        .first()
        .is_some_and(|(_, s)| s["endpoints"] == endpoints && s["ports"] == ports);
    let ep_ok = inner
        .get(&Key::new(ENDPOINTS, ns, name))
        .is_some_and(|e| e["subsets"] == wanted_subsets(&svc, ns, &backends));
    slice_ok && ep_ok
}

/// Writes the Service's EndpointSlice and Endpoints from its pods, when they differ.
/// `gate_open: false` reports every endpoint as not ready (the controller's flapping knob).
pub fn sync(inner: &mut Inner, ns: &str, name: &str, gate_open: bool) {
    let Some(svc) = service(inner, ns, name) else {
        return;
    };
    let backends = backends(inner, &svc, gate_open);
    let ctx = WriteCtx::internal(KCM, false);
    let (endpoints, ports) = wanted_slice(&svc, ns, &backends);
    let existing = slices_of(inner, ns, name);
    match existing.first() {
        Some((_, s)) if s["endpoints"] == endpoints && s["ports"] == ports => {}
        Some((key, s)) => {
            let mut slice = s.clone();
            slice["endpoints"] = endpoints;
            slice["ports"] = ports;
            let _ = ops::update(inner, key, slice, Scope::Main, &ctx);
        }
        None => {
            let slice = json!({
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "name": format!("{name}-{}", meta::suffix(5, Some(meta::uid(&svc)))),
                    "namespace": ns,
                    "generateName": format!("{name}-"),
                    "labels": {SERVICE_NAME: name, MANAGED_BY: SLICE_CONTROLLER},
                    "ownerReferences": [{
                        "apiVersion": "v1", "kind": "Service", "name": name,
                        "uid": meta::uid(&svc), "controller": true, "blockOwnerDeletion": true
                    }],
                },
                "addressType": "IPv4",
                "endpoints": endpoints,
                "ports": ports,
            });
            let _ = ops::create(inner, ENDPOINTSLICES, ns, slice, &ctx);
        }
    }

    let subsets = wanted_subsets(&svc, ns, &backends);
    let key = Key::new(ENDPOINTS, ns, name);
    match inner.get(&key) {
        Some(e) if e["subsets"] == subsets => {}
        Some(e) => {
            let mut ep = (*e).clone();
            ep["subsets"] = subsets;
            let _ = ops::update(inner, &key, ep, Scope::Main, &ctx);
        }
        None => {
            let ep = json!({"apiVersion": "v1", "kind": "Endpoints",
                            "metadata": {"name": name, "namespace": ns}, "subsets": subsets});
            let _ = ops::create(inner, ENDPOINTS, ns, ep, &ctx);
        }
    }
}

/// Removes the Service's slices and Endpoints (it is gone or no longer served).
pub fn clear(inner: &mut Inner, ns: &str, name: &str) {
    let opts = DeleteOpts::default();
    for (key, _) in slices_of(inner, ns, name) {
        let _ = delete::delete(inner, &key, &opts);
    }
    let _ = delete::delete(inner, &Key::new(ENDPOINTS, ns, name), &opts);
}
