//! What the node health check of GCE's internal load balancers sees (`backendServices.getHealth`,
//! served by `lb_store` for the backend services a cloud-controller-manager or the simulated
//! GCE provider of `kube::lb` made): the shared node check `k8s-<cluster-id>-node` (HTTP
//! :10256 `/healthz`, every 8 s, healthy after 1 success: the provider's
//! `newInternalLBHealthCheck`, openshift/cloud-provider-gcp 30cc0479
//! `providers/gce/gce_loadbalancer_internal.go:889-908`, `gce.go:77-82`).
//!
//! Health: :10256 is ovnkube-node's, so a VM that is a Node passes and the bootstrap VM (no
//! OVN-Kubernetes) fails; nothing passes before the first check after the backend service was
//! made (see `lb_rules::health`).

use super::World;
use super::compute::BASE;
use serde_json::{Value, json};

/// One instance group behind an internal load balancer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupBackend {
    pub zone: String,
    pub group: String,
    pub members: Vec<String>,
}

/// `getHealth`'s answer for a group's `members` in `zone`: once `checked`, a VM that is a Node
/// passes (ovnkube-node answers :10256), any other fails; before, nothing passes.
pub(super) fn group_health(w: &World, zone: &str, members: &[String], checked: bool) -> Value {
    let statuses: Vec<Value> = members
        .iter()
        .map(|m| {
            let node = w.seed().instances.iter().any(|i| i.name == *m && i.node);
            let ip = w
                .instances
                .get(m)
                .and_then(|i| i.addresses().first().map(ToString::to_string));
            json!({
                "instance": format!("{BASE}/projects/{}/zones/{zone}/instances/{m}", w.seed().project),
                "ipAddress": ip,
                "port": 10256,
                "healthState": if checked && node { "HEALTHY" } else { "UNHEALTHY" },
            })
        })
        .collect();
    json!({"kind": "compute#backendServiceGroupHealth", "healthStatus": statuses})
}
