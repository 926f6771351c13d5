//! Who the GCP and Azure load balancers forward to, and when they forward at all: the
//! control-plane nodes of the local API server (`kubelet`: `master-0..N`) as the cloud
//! providers' backends, each with its service proxy up or down.
//!
//! - Backends: every Node without the label
//!   `node.kubernetes.io/exclude-from-external-load-balancers` (k8s.io/cloud-provider
//!   `controllers/service/controller.go`, `stableNodeSetPredicates`; readiness and roles are
//!   not checked). On Azure the masters too: the installer's cloud config sets
//!   `excludeMasterFromStandardLB: false`, and `availabilitySet.EnsureHostsInPool`
//!   (kubernetes-sigs/cloud-provider-azure `pkg/provider/azure_standard.go`) skips masters
//!   only when it is true. The sim's nodes are all masters; workers are not simulated.
//! - Health (`externalTrafficPolicy: Cluster`): Azure probes `:10256/healthz` over HTTP with
//!   the one shared probe OpenShift's operator configures (see [`azure_probes`]), every 5 s, 2
//!   failures to mark a backend down (`HealthProbeDefaultProbeInterval`,
//!   `HealthProbeDefaultNumOfProbe` in `pkg/consts`); GCE checks `:10256/healthz` too. Both are answered by the node's service proxy (ovnkube-node),
//!   not by the apiserver, so a node is healthy while its proxy is up. The probes' timing is
//!   not simulated: a proxy going down takes its node out at once.
//! - No healthy backend: an Azure Standard load balancer drops new flows, so its frontends
//!   serve only while some backend is healthy (and an endpoint is ready: the proxy forwards
//!   to one). GCE's internal passthrough load balancer fails open ("When all backend VMs are
//!   unhealthy, the load balancer distributes new connections among all backends as a last
//!   resort", Google Cloud's "Traffic distribution for internal passthrough Network Load
//!   Balancers"): its frontends serve while an endpoint is ready, as before.

use super::super::meta;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The nodes as the load balancers see them.
#[derive(Debug, Default)]
pub struct Nodes {
    /// How many nodes there are (`master-0..count`).
    pub count: usize,
    /// Nodes whose service proxy (`:10256`, the nodePorts) does not answer.
    pub proxy_down: BTreeSet<String>,
    /// Nodes labelled `node.kubernetes.io/exclude-from-external-load-balancers`.
    pub excluded: BTreeSet<String>,
}

impl Nodes {
    /// The backend pool: every node but the excluded ones.
    pub fn pool(&self) -> Vec<String> {
        (0..self.count)
            .map(super::super::kubelet::node_name)
            .filter(|n| !self.excluded.contains(n))
            .collect()
    }

    /// The pool's nodes whose probe passes.
    pub fn healthy(&self) -> Vec<String> {
        self.pool()
            .into_iter()
            .filter(|n| !self.proxy_down.contains(n))
            .collect()
    }
}

/// The probes cloud-provider-azure puts on the load balancer for the Service's rules: with the
/// shared probe mode OpenShift's operator configures (openshift/cluster-cloud-controller-manager-
/// operator `pkg/cloud/azure/azure.go:190-191`), one `cluster-service-shared-health-probe`,
/// HTTP :10256 `/healthz`, for every rule (`buildClusterServiceSharedProbe`,
/// `azure_loadbalancer_healthprobe.go:33-45`); none for a Service without a TCP port.
pub fn azure_probes(svc: &Value) -> Vec<Value> {
    let tcp = meta::get(svc, &["spec", "ports"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|p| p["protocol"].as_str().unwrap_or("TCP") == "TCP");
    if !tcp {
        return Vec::new();
    }
    vec![json!({
        "name": crate::azure::SHARED_PROBE,
        "protocol": "Http",
        "port": 10256,
        "requestPath": "/healthz",
        "intervalInSeconds": 5,
        "numberOfProbes": 2,
    })]
}

impl super::LoadBalancers {
    /// There are `count` nodes (`master-0..count`, the kubelet's).
    pub fn set_node_count(&self, count: usize) {
        super::lock(&self.nodes).count = count;
    }

    /// The service proxy of `node` answers its probes (`up`) or not.
    pub fn set_service_proxy(&self, node: &str, up: bool) {
        let mut nodes = super::lock(&self.nodes);
        if up {
            nodes.proxy_down.remove(node);
        } else {
            nodes.proxy_down.insert(node.to_string());
        }
    }

    /// `node` carries the label `node.kubernetes.io/exclude-from-external-load-balancers`
    /// (`excluded`) or not.
    pub fn set_excluded(&self, node: &str, excluded: bool) {
        let mut nodes = super::lock(&self.nodes);
        if excluded {
            nodes.excluded.insert(node.to_string());
        } else {
            nodes.excluded.remove(node);
        }
    }

    /// Whether an Azure load balancer (Standard: no fail-open) fronts the Service.
    fn on_azure(&self, svc: &Value) -> bool {
        match super::kind(svc) {
            super::Kind::AzureInternal => true,
            super::Kind::Other => self.cloud.azure.is_some() && self.cloud.gcp.is_none(),
            _ => false,
        }
    }

    /// Whether the Service's load balancer forwards new flows at all now: on Azure only while
    /// a backend is healthy; elsewhere always (GCE fails open; AWS is decided per target in
    /// `serving`).
    pub fn forwards(&self, svc: &Value) -> bool {
        !self.on_azure(svc) || !super::lock(&self.nodes).healthy().is_empty()
    }

    /// The Azure load balancer's backend side for the Service: `{pool: [node], healthy:
    /// [node], probes: [{name, protocol, port, intervalInSeconds, numberOfProbes}]}`; None
    /// for a Service no Azure load balancer fronts.
    pub fn azure_backend(&self, svc: &Value) -> Option<Value> {
        if !self.on_azure(svc) {
            return None;
        }
        let nodes = super::lock(&self.nodes);
        Some(json!({
            "pool": nodes.pool(),
            "healthy": nodes.healthy(),
            "probes": azure_probes(svc),
        }))
    }
}
