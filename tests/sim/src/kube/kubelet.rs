//! The simulated control-plane nodes `master-0..N` (N = `ControllerKnobs::endpoints`) and the
//! pods they run, so that Services get endpoints only when their selector matches real pods.
//!
//! Each [`PodSet`] runs one pod per node, host-networked (pod IP = node IP: the i-th of
//! `KubeSimOptions::node_ips`, else `10.0.0.<i+1>`),
//! Running and Ready, as soon as its namespace exists (the kubelet cannot create pods in a
//! namespace that does not exist or is terminating). The default sets are OpenShift's:
//! the kube-apiserver static pods in `openshift-kube-apiserver` (`app:
//! openshift-kube-apiserver`, `apiserver: "true"`, `revision`) and the machine-config-server
//! DaemonSet pods in `openshift-machine-config-operator` (`k8s-app: machine-config-server`).
//! A node beyond N loses its pods. Pods are written through the store like any client's
//! writes (manager `kubelet`), so they are visible and watchable.
//!
//! Simplified: no Node objects of its own (`bootstrap-sim real-ccm` creates them for a real
//! cloud-controller-manager), no containers' lifecycle, no mirror-pod annotations or owner
//! references (the DaemonSet is not simulated).

use super::apply::Scope;
use super::delete::{self, DeleteOpts};
use super::meta;
use super::ops::{self, WriteCtx};
use super::resources::{NAMESPACES, PODS};
use super::store::{Inner, Key};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const KUBELET: &str = "kubelet";

/// Pods that run on every control-plane node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSet {
    pub namespace: String,
    /// Static pods are named `<name>-<node>`; DaemonSet pods `<name>-<5 chars>`.
    pub name: String,
    pub static_pod: bool,
    pub labels: BTreeMap<String, String>,
    /// Container ports (host ports: the pod uses the host network).
    pub ports: Vec<u16>,
}

impl PodSet {
    pub fn new(namespace: &str, name: &str, labels: &[(&str, &str)], ports: &[u16]) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
            static_pod: false,
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ports: ports.to_vec(),
        }
    }

    /// The kube-apiserver static pods, as OpenShift labels them.
    pub fn kube_apiserver() -> Self {
        Self {
            static_pod: true,
            ..Self::new(
                "openshift-kube-apiserver",
                "kube-apiserver",
                &[
                    ("app", "openshift-kube-apiserver"),
                    ("apiserver", "true"),
                    ("revision", "7"),
                ],
                &[6443],
            )
        }
    }

    /// The machine-config-server DaemonSet pods, as OpenShift labels them.
    pub fn machine_config_server() -> Self {
        Self::new(
            "openshift-machine-config-operator",
            "machine-config-server",
            &[("k8s-app", "machine-config-server")],
            &[22623],
        )
    }

    /// What a real control plane runs: kube-apiserver and machine-config-server.
    pub fn openshift() -> Vec<Self> {
        vec![Self::kube_apiserver(), Self::machine_config_server()]
    }

    fn pod_name(&self, node: usize) -> String {
        if self.static_pod {
            format!("{}-{}", self.name, node_name(node))
        } else {
            let seed = format!("{}/{}/{}", self.namespace, self.name, node_name(node));
            format!("{}-{}", self.name, meta::suffix(5, Some(&seed)))
        }
    }

    fn is_member(&self, pod: &Value) -> bool {
        let labels = meta::labels(pod);
        self.labels
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)).and_then(Value::as_str) == Some(v))
    }
}

pub fn node_name(i: usize) -> String {
    format!("master-{i}")
}

/// Node `i`'s IP: the i-th of `ips` (the world's control-plane machines, e.g. all in one
/// zone), else `10.0.0.<i+1>`.
pub fn node_ip(i: usize, ips: &[std::net::Ipv4Addr]) -> String {
    ips.get(i)
        .map_or_else(|| format!("10.0.0.{}", i + 1), ToString::to_string)
}

fn node_index(pod: &Value) -> Option<usize> {
    meta::get_str(pod, &["spec", "nodeName"])?
        .strip_prefix("master-")?
        .parse()
        .ok()
}

fn namespace_active(inner: &Inner, ns: &str) -> bool {
    inner
        .get(&Key::new(NAMESPACES, "", ns))
        .is_some_and(|n| meta::get(&n, &["metadata", "deletionTimestamp"]).is_none())
}

/// Makes the pods match `nodes` nodes: creates what is missing in active namespaces and deletes
/// the pods of nodes that are gone. Cheap when nothing changes (no writes).
pub fn sync(inner: &mut Inner, sets: &[PodSet], nodes: usize, node_ips: &[std::net::Ipv4Addr]) {
    for set in sets {
        if !namespace_active(inner, &set.namespace) {
            continue;
        }
        let existing: Vec<(Key, usize)> = inner
            .list(PODS, Some(&set.namespace))
            .into_iter()
            .filter(|(_, p)| set.is_member(p))
            .filter_map(|(k, p)| node_index(&p).map(|i| (k, i)))
            .collect();
        for (key, _) in existing.iter().filter(|(_, i)| *i >= nodes) {
            let _ = delete::delete(inner, key, &DeleteOpts::default());
        }
        for node in 0..nodes {
            if !existing.iter().any(|(_, i)| *i == node) {
                run_pod(inner, set, node, node_ips);
            }
        }
    }
}

fn run_pod(inner: &mut Inner, set: &PodSet, node: usize, node_ips: &[std::net::Ipv4Addr]) {
    let name = set.pod_name(node);
    let ports: Vec<Value> = set
        .ports
        .iter()
        .map(|p| json!({"containerPort": p, "hostPort": p, "protocol": "TCP"}))
        .collect();
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": set.namespace, "labels": set.labels},
        "spec": {
            "nodeName": node_name(node),
            "hostNetwork": true,
            "priorityClassName": "system-node-critical",
            "containers": [{"name": set.name, "image": format!("quay.io/openshift/{}:sim", set.name), "ports": ports}],
        },
    });
    let ctx = WriteCtx::internal(KUBELET, false);
    let Ok(created) = ops::create(inner, PODS, &set.namespace, pod, &ctx) else {
        return;
    };
    let ip = node_ip(node, node_ips);
    let now = meta::now();
    let conditions: Vec<Value> = ["Initialized", "Ready", "ContainersReady", "PodScheduled"]
        .iter()
        .map(|t| json!({"type": t, "status": "True", "lastTransitionTime": now}))
        .collect();
    let mut running = created;
    running["status"] = json!({
        "phase": "Running",
        "hostIP": ip,
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": now,
        "conditions": conditions,
    });
    let key = Key::new(PODS, &set.namespace, &name);
    let _ = ops::update(inner, &key, running, Scope::Status, &ctx);
}
