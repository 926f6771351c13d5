//! The service controller's node sync on GCE: a Node added or removed makes it update the
//! load balancer of every LoadBalancer Service with the nodes as they are now (k8s.io/cloud-provider
//! `controllers/service/controller.go:160-186`, the node informer's handlers, and
//! `nodeSyncService` / `lockedUpdateLoadBalancerHosts` :790-860, as vendored at
//! openshift/cloud-provider-gcp 30cc04797f50), one Service at a time, then an event per
//! Service: `UpdatedLoadBalancer` "Updated load balancer with new hosts", or the Warning
//! `UpdateLoadBalancerFailed` with the provider's error (:841, :858).
//!
//! What the GCE provider's `UpdateLoadBalancer` calls (`providers/gce/`): for an internal
//! Service, `ensureInternalInstanceGroups` again, so a new VM goes into the provider's own
//! `k8s-ig--<cluster-id>` group of its zone (`instanceGroups.addInstances`,
//! gce_loadbalancer_internal.go:654-727); for an external one, `updateTargetPool` adds it to
//! the Service's target pool (`targetPools.addInstance`, gce_loadbalancer_external.go:656-706).
//! The nodes are the GCP fake's VMs that are Nodes (see `gce`); a VM leaving is not modelled
//! (the fake has no VM removal), so a removal syncs and finds nothing to add.

use super::super::events::{self, EventType};
use super::super::meta;
use super::super::resources::SERVICES;
use super::super::store::Store;
use super::outcome::{SERVICE_CONTROLLER, report};
use super::{Kind, LoadBalancers, gce, gce_build, kind};
use crate::gcp::{Call, GcpLbView};
use serde_json::Value;

impl LoadBalancers {
    /// A Node came or went: updates the hosts of every served LoadBalancer Service (one with
    /// an ingress) in name order, recording each one's event as its update ends. Nothing
    /// without the GCP fake.
    pub async fn update_hosts(&self, store: &Store) {
        let Some(gcp) = &self.cloud.gcp else {
            return;
        };
        // The service controller's one worker (see `gce_build`).
        let _one_at_a_time = self.sync_queue.lock().await;
        let mut services: Vec<Value> = store
            .lock()
            .list(SERVICES, None)
            .into_iter()
            .map(|(_, svc)| (*svc).clone())
            .filter(|svc| meta::get_str(svc, &["spec", "type"]) == Some("LoadBalancer"))
            .filter(|svc| {
                meta::get(svc, &["status", "loadBalancer", "ingress"])
                    .and_then(Value::as_array)
                    .is_some_and(|i| !i.is_empty())
            })
            .collect();
        services.sort_by_key(|s| (meta::namespace(s).to_string(), meta::name(s).to_string()));
        for svc in services {
            let done = match update_gce_hosts(gcp, &svc).await {
                Ok(()) => report(
                    SERVICE_CONTROLLER,
                    EventType::Normal,
                    "UpdatedLoadBalancer",
                    "Updated load balancer with new hosts".into(),
                ),
                Err(why) => {
                    let hosts = node_names(gcp);
                    report(
                        SERVICE_CONTROLLER,
                        EventType::Warning,
                        "UpdateLoadBalancerFailed",
                        format!(
                            "Error updating load balancer with new hosts {hosts:?} [node names limited, total number of nodes: {}], error: {why}",
                            hosts.len()
                        ),
                    )
                }
            };
            events::record(&mut store.lock(), &svc, &done);
        }
    }
}

/// The VMs that are Nodes, by name.
fn node_names(gcp: &GcpLbView) -> Vec<String> {
    gcp.instances()
        .into_iter()
        .filter(|vm| vm.node)
        .map(|vm| vm.name)
        .collect()
}

/// The GCE provider's `UpdateLoadBalancer` for `svc`: the new nodes into the internal
/// load balancer's own instance groups, or into the external one's target pool.
async fn update_gce_hosts(gcp: &GcpLbView, svc: &Value) -> Result<(), String> {
    let lb = super::lb_resource_name(svc);
    let calls = match kind(svc) {
        Kind::GcpInternal => gce::ensure_internal_instance_groups(gcp)?
            .into_iter()
            .filter(|b| b.group == gce::OWN_GROUP)
            .flat_map(|b| {
                [
                    Call::InsertGroup {
                        zone: b.zone.clone(),
                        name: b.group.clone(),
                    },
                    Call::AddInstances {
                        zone: b.zone,
                        name: b.group,
                        members: b.members,
                    },
                ]
            })
            .collect(),
        // An external load balancer is built only on a requested IP (see `gce_build`).
        Kind::Other if meta::get_str(svc, &["spec", "loadBalancerIP"]).is_some() => {
            vec![Call::AddToPool {
                scope: format!("regions/{}", gcp.cloud_config().1),
                name: lb,
                instances: gcp
                    .instances()
                    .into_iter()
                    .filter(|vm| vm.node)
                    .map(|vm| format!("/zones/{}/instances/{}", vm.zone, vm.name))
                    .collect(),
            }]
        }
        _ => Vec::new(),
    };
    gce_build::run(gcp, &calls).await.map(drop)
}
