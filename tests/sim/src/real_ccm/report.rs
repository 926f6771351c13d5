//! What one harness run found, and the JSON `real-ccm` prints.

use serde_json::{Value, json};

#[derive(Debug)]
pub struct Report {
    pub cloud: String,
    /// `local` (the in-process API server) or `kubeconfig` (a real kube-apiserver).
    pub kube: String,
    /// `real-ccm` (the CCM built the load balancers) or `simulated` (the local API server's
    /// simulated controller did, for comparison).
    pub controller: String,
    pub run_exit: i32,
    pub second_run_exit: i32,
    /// Mutating cloud calls the agent made in the second `run`.
    pub second_run_mutations: usize,
    pub teardown_exit: i32,
    /// What is left of the agent's own resources after `teardown --all`.
    pub left_ours: Vec<String>,
    /// What is left of what the CCM made for our Services.
    pub left_ccm: Vec<String>,
    /// What the CCM had made once the first `run` was done (same form).
    pub built_ccm: Vec<String>,
    /// The CCM's Events on our Services (`<ns>/<name> <type> <reason>: <message>`).
    pub events: Vec<String>,
    /// From the moment the last of the Services' reserved IPs was served by a load balancer
    /// the CCM made to the gate passing (None: the gate never passed, or nothing served).
    pub gate_lag_ms: Option<i64>,
    /// Per reserved IP: from its load balancer serving to the IP joining DNS (GCP).
    pub gate_lag_ms_per_ip: Vec<(String, i64)>,
    /// From the moment the last of our Services got its ingress to the gate passing.
    pub gate_after_ingress_ms: Option<i64>,
    /// After the second `run`, a fourth Node and its VM come (with a real CCM; on GCP with
    /// the simulated controller too): None when this cloud does not make the change.
    pub node_change: Option<NodeChange>,
    /// The CCM's cloud calls per Service, in each phase.
    pub calls_per_service: CallsPerService,
    pub teardown_ms: u128,
    /// Each LoadBalancer Service's finalizers once `run` is done.
    pub finalizers_after_run: Vec<String>,
    /// The agent held only its documented ClusterRole (`--least-privilege`), not the admin's.
    pub least_privilege: bool,
    /// `--upi`: the user's addresses before the run and after `teardown --all`.
    pub upi: Option<super::UpiReport>,
}

/// The node change: which Node came, how long until every load balancer's backend side held
/// it (None: not within the limit), and each backend side as last seen (holding it or not).
#[derive(Debug, Clone)]
pub struct NodeChange {
    pub node: String,
    pub in_backends_ms: Option<u128>,
    pub backends: Vec<(String, bool)>,
}

#[derive(Debug, Default)]
pub struct CallsPerService {
    pub run: f64,
    /// The mutating ones among `run`'s.
    pub run_mutating: f64,
    pub second_run: f64,
    /// After a fourth Node (and its VM) came.
    pub node_added: f64,
    pub teardown: f64,
}

impl Report {
    pub fn to_json(&self) -> Value {
        let per_ip: serde_json::Map<String, Value> = self
            .gate_lag_ms_per_ip
            .iter()
            .map(|(ip, ms)| (ip.clone(), json!(ms)))
            .collect();
        json!({
            "cloud": self.cloud,
            "kube": self.kube,
            "controller": self.controller,
            "run_exit": self.run_exit,
            "second_run_exit": self.second_run_exit,
            "second_run_mutations": self.second_run_mutations,
            "teardown_exit": self.teardown_exit,
            "left_ours": self.left_ours,
            "left_ccm": self.left_ccm,
            "built_ccm": self.built_ccm,
            "events": self.events,
            "gate_lag_ms": self.gate_lag_ms,
            "gate_lag_ms_per_ip": per_ip,
            "gate_after_ingress_ms": self.gate_after_ingress_ms,
            "node_added_ms": self.node_change.as_ref().and_then(|c| c.in_backends_ms),
            "node_change": self.node_change.as_ref().map(|c| json!({
                "node": c.node,
                "in_backends_ms": c.in_backends_ms,
                "backends_holding_it": c.backends.iter()
                    .map(|(b, holds)| (b.clone(), json!(holds)))
                    .collect::<serde_json::Map<String, Value>>(),
            })),
            "calls_per_service": {
                "run": self.calls_per_service.run,
                "run_mutating": self.calls_per_service.run_mutating,
                "second_run": self.calls_per_service.second_run,
                "node_added": self.calls_per_service.node_added,
                "teardown": self.calls_per_service.teardown,
            },
            "teardown_ms": self.teardown_ms,
            "finalizers_after_run": self.finalizers_after_run,
            "upi": self.upi.as_ref().map(super::UpiReport::to_json),
            "agent_identity": if self.least_privilege { "least-privilege" } else { "admin" },
        })
    }
}
