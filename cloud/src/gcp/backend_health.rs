//! The cloud's own proof for GCP's internal load balancer, where the bootstrap host's proof on
//! the wire tests nothing: OpenShift's GCE provider reuses the installer's
//! `<infra>-master-<zone>` instance groups as the internal load balancer's backends, and one of
//! them holds the bootstrap VM (openshift/cloud-provider-gcp
//! `providers/gce/gce_loadbalancer_internal_openshift.go`,
//! `filterNodesWithExistingExternalInstanceGroups`: "During bootstrap the bootstrap machine is
//! placed in one of the master instance groups"); GCE hands a backend's own connection to its
//! internal passthrough load balancer back to that backend (the premise of MCO's
//! apiserver-watcher). So a dial from the bootstrap host reaches the bootstrap host.
//!
//! What GCE says instead, reads only: the address at the IP (`addresses.list`, filtered by
//! `address`) names the forwarding rules using it (`users`); each rule names its regional
//! backend service, whose backends are instance groups; `regionBackendServices.getHealth`
//! gives each group's instances as the load balancer's health check last saw them. The
//! provider's check for `externalTrafficPolicy: Cluster` is the shared `k8s-<cluster-id>-node`
//! HTTP check on :10256 (ovnkube-node), so a HEALTHY instance other than the bootstrap VM is a
//! node the load balancer sends traffic to, and OVN-Kubernetes relays it to a ready endpoint
//! (which the gate already requires).

use super::{GcpSettings, classify};
use crate::{CloudError, FrontendHealth};
use google_cloud_compute_v1::client::{Addresses, ForwardingRules, RegionBackendServices};
use google_cloud_compute_v1::model::health_status::HealthState;
use google_cloud_compute_v1::model::{ResourceGroupReference, address};
use google_cloud_gax::paginator::ItemPaginator;
use std::net::IpAddr;

pub struct GceBackendHealth {
    addresses: Addresses,
    rules: ForwardingRules,
    services: RegionBackendServices,
    project: String,
    region: String,
    /// `<infra>-bootstrap`: never counted as a healthy backend.
    bootstrap_vm: String,
}

/// The last segment of a resource URL (`.../forwardingRules/a1b2` -> `a1b2`).
fn last_segment(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

impl GceBackendHealth {
    pub async fn new(settings: &GcpSettings) -> Result<Self, CloudError> {
        let endpoint = settings.compute_endpoint.as_deref();
        Ok(Self {
            addresses: build_client!(Addresses, settings, endpoint, "compute"),
            rules: build_client!(ForwardingRules, settings, endpoint, "compute"),
            services: build_client!(RegionBackendServices, settings, endpoint, "compute"),
            project: settings.project.clone(),
            region: settings.region.clone(),
            bootstrap_vm: format!("{}-bootstrap", settings.infra_id),
        })
    }

    /// The forwarding rules using the INTERNAL address at `ip`; None: no internal address
    /// holds `ip` (an external one: the wire proves it).
    async fn internal_rules(&self, ip: IpAddr) -> Result<Option<Vec<String>>, CloudError> {
        let mut items = self
            .addresses
            .list()
            .set_project(&self.project)
            .set_region(&self.region)
            .set_filter(format!("address = \"{ip}\""))
            .by_item();
        while let Some(item) = items.next().await {
            let a = item.map_err(|e| classify("addresses.list", e))?;
            if a.address.as_deref() != Some(ip.to_string().as_str()) {
                continue;
            }
            if a.address_type == Some(address::AddressType::Internal) {
                return Ok(Some(
                    a.users
                        .iter()
                        .map(|u| last_segment(u).to_string())
                        .collect(),
                ));
            }
            return Ok(None);
        }
        // No address resource at all: an internal IP the load balancer reserved itself would
        // still be an address; nothing holds it yet.
        Ok(Some(Vec::new()))
    }

    /// Each forwarding rule at `ip` with the health of its backend service's instances.
    /// Stops asking a rule's groups at the first healthy instance that is not the bootstrap
    /// VM (one is enough to serve).
    pub async fn health(&self, ip: IpAddr) -> Result<Option<Vec<FrontendHealth>>, CloudError> {
        let Some(rules) = self.internal_rules(ip).await? else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for name in rules {
            let rule = self
                .rules
                .get()
                .set_project(&self.project)
                .set_region(&self.region)
                .set_forwarding_rule(&name)
                .send()
                .await
                .map_err(|e| classify("forwardingRules.get", e))?;
            let mut health = FrontendHealth {
                frontend: name.clone(),
                ports: rule.ports.clone(),
                healthy: Vec::new(),
                unhealthy: Vec::new(),
            };
            let Some(service) = rule.backend_service.as_deref().map(last_segment) else {
                out.push(health);
                continue;
            };
            let backend = self
                .services
                .get()
                .set_project(&self.project)
                .set_region(&self.region)
                .set_backend_service(service)
                .send()
                .await
                .map_err(|e| classify("regionBackendServices.get", e))?;
            for group in backend.backends.iter().filter_map(|b| b.group.clone()) {
                let answer = self
                    .services
                    .get_health()
                    .set_project(&self.project)
                    .set_region(&self.region)
                    .set_backend_service(service)
                    .set_body(ResourceGroupReference::new().set_group(group))
                    .send()
                    .await
                    .map_err(|e| classify("regionBackendServices.getHealth", e))?;
                for status in &answer.health_status {
                    let instance = status.instance.as_deref().map_or("?", last_segment);
                    let healthy = status.health_state == Some(HealthState::Healthy);
                    match healthy && instance != self.bootstrap_vm {
                        true => health.healthy.push(instance.to_string()),
                        false => health.unhealthy.push(instance.to_string()),
                    }
                }
                if !health.healthy.is_empty() {
                    break;
                }
            }
            out.push(health);
        }
        Ok(Some(out))
    }
}
