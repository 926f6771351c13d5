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
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

pub struct GceBackendHealth {
    addresses: Addresses,
    rules: ForwardingRules,
    services: RegionBackendServices,
    project: String,
    region: String,
    /// `<infra>-bootstrap`: never counted as a healthy backend.
    bootstrap_vm: String,
    /// What the proof has learnt, so that looking again while it waits for the first health
    /// check costs few reads (see [`Self::health`]).
    known: std::sync::Mutex<Known>,
}

/// How long a learnt fact is trusted: the address's users, a healthy rule.
const TRUSTED_FOR: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Known {
    /// The rules using an IP, and when that was read.
    users: HashMap<IpAddr, (Vec<String>, Instant)>,
    /// By rule name: its ports, backend service and groups (they do not change while the
    /// proof waits).
    rules: HashMap<String, RuleChain>,
    /// By rule name: a health that proved it, and when.
    healthy: HashMap<String, (FrontendHealth, Instant)>,
}

/// A forwarding rule as the proof needs it: its ports, its backend service and the groups of
/// that service, and how many times its health was asked.
#[derive(Clone, Debug)]
struct RuleChain {
    ports: Vec<String>,
    service: Option<String>,
    groups: Vec<String>,
    looks: usize,
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
            known: std::sync::Mutex::new(Known::default()),
        })
    }

    /// The forwarding rules using the INTERNAL address at `ip`; None: no internal address
    /// holds `ip` (an external one: the wire proves it).
    async fn internal_rules(&self, ip: IpAddr) -> Result<Option<Vec<String>>, CloudError> {
        if let Some((users, at)) = lock(&self.known).users.get(&ip)
            && at.elapsed() < TRUSTED_FOR
        {
            return Ok(Some(users.clone()));
        }
        let users = self.read_internal_rules(ip).await?;
        if let Some(users) = users.as_ref().filter(|u| !u.is_empty()) {
            lock(&self.known)
                .users
                .insert(ip, (users.clone(), Instant::now()));
        }
        Ok(users)
    }

    async fn read_internal_rules(&self, ip: IpAddr) -> Result<Option<Vec<String>>, CloudError> {
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
    ///
    /// Looking again while the proof waits for GCE's first health check costs one read per
    /// rule not proven yet: the address's users and a rule proven healthy are trusted for
    /// [`TRUSTED_FOR`], a rule and its backend service are read once, and after a rule's first
    /// look (every group) each look asks one group, the next one each time (a backend
    /// service's groups share its health check, so they pass together; one that stays down
    /// is passed over at the next look). A failed read forgets what was learnt of the rule.
    pub async fn health(&self, ip: IpAddr) -> Result<Option<Vec<FrontendHealth>>, CloudError> {
        let Some(rules) = self.internal_rules(ip).await? else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for name in rules {
            if let Some(proven) = self.proven(&name) {
                out.push(proven);
                continue;
            }
            let chain = match self.known_rule(&name) {
                Some(chain) => chain,
                None => self.read_rule(&name).await?,
            };
            let mut health = FrontendHealth {
                frontend: name.clone(),
                ports: chain.ports.clone(),
                healthy: Vec::new(),
                unhealthy: Vec::new(),
            };
            if let Some(service) = &chain.service {
                for group in groups_to_ask(&chain) {
                    let answer = match self.group_health(service, group).await {
                        Ok(answer) => answer,
                        Err(e) => {
                            self.forget(ip, &name);
                            return Err(e);
                        }
                    };
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
            }
            self.looked(&name, &health);
            out.push(health);
        }
        Ok(Some(out))
    }

    fn proven(&self, name: &str) -> Option<FrontendHealth> {
        let known = lock(&self.known);
        let (health, at) = known.healthy.get(name)?;
        (at.elapsed() < TRUSTED_FOR).then(|| health.clone())
    }

    fn known_rule(&self, name: &str) -> Option<RuleChain> {
        lock(&self.known).rules.get(name).cloned()
    }

    /// One more look at the rule `name`; remembered as proven when a backend was healthy.
    fn looked(&self, name: &str, health: &FrontendHealth) {
        let mut known = lock(&self.known);
        if let Some(chain) = known.rules.get_mut(name) {
            chain.looks += 1;
        }
        if !health.healthy.is_empty() {
            known
                .healthy
                .insert(name.to_string(), (health.clone(), Instant::now()));
        }
    }

    fn forget(&self, ip: IpAddr, name: &str) {
        let mut known = lock(&self.known);
        known.users.remove(&ip);
        known.rules.remove(name);
        known.healthy.remove(name);
    }

    /// The rule `name` and its backend service's groups, read and remembered (a rule with
    /// no backend service yet, or one with no backend yet, is not remembered: it is still
    /// being built).
    async fn read_rule(&self, name: &str) -> Result<RuleChain, CloudError> {
        let rule = self
            .rules
            .get()
            .set_project(&self.project)
            .set_region(&self.region)
            .set_forwarding_rule(name)
            .send()
            .await
            .map_err(|e| classify("forwardingRules.get", e))?;
        let mut chain = RuleChain {
            ports: rule.ports.clone(),
            service: rule
                .backend_service
                .as_deref()
                .map(|s| last_segment(s).to_string()),
            groups: Vec::new(),
            looks: 0,
        };
        let Some(service) = chain.service.clone() else {
            return Ok(chain);
        };
        let backend = self
            .services
            .get()
            .set_project(&self.project)
            .set_region(&self.region)
            .set_backend_service(&service)
            .send()
            .await
            .map_err(|e| classify("regionBackendServices.get", e))?;
        chain.groups = backend
            .backends
            .iter()
            .filter_map(|b| b.group.clone())
            .collect();
        if !chain.groups.is_empty() {
            lock(&self.known)
                .rules
                .insert(name.to_string(), chain.clone());
        }
        Ok(chain)
    }

    async fn group_health(
        &self,
        service: &str,
        group: &str,
    ) -> Result<google_cloud_compute_v1::model::BackendServiceGroupHealth, CloudError> {
        self.services
            .get_health()
            .set_project(&self.project)
            .set_region(&self.region)
            .set_backend_service(service)
            .set_body(ResourceGroupReference::new().set_group(group))
            .send()
            .await
            .map_err(|e| classify("regionBackendServices.getHealth", e))
    }
}

/// PURE: the groups to ask at this look of a rule: all of them at its first look, then one,
/// the next one each time.
fn groups_to_ask(chain: &RuleChain) -> Vec<&String> {
    match chain.looks {
        0 => chain.groups.iter().collect(),
        looks => chain
            .groups
            .get(looks % chain.groups.len().max(1))
            .into_iter()
            .collect(),
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_asked_every_group_at_its_first_look_then_one_the_next_each_time() {
        let mut chain = RuleChain {
            ports: vec!["6443".into()],
            service: Some("a1".into()),
            groups: vec!["g0".into(), "g1".into(), "g2".into()],
            looks: 0,
        };
        let asked =
            |c: &RuleChain| -> Vec<String> { groups_to_ask(c).into_iter().cloned().collect() };
        assert_eq!(asked(&chain), ["g0", "g1", "g2"]);
        let mut later = Vec::new();
        for looks in 1..=4 {
            chain.looks = looks;
            later.extend(asked(&chain));
        }
        assert_eq!(later, ["g1", "g2", "g0", "g1"]);
        chain.groups.clear();
        assert!(asked(&chain).is_empty());
        chain.looks = 0;
        assert!(asked(&chain).is_empty());
    }
}
