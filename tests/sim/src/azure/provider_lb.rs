//! The load balancers the simulated Azure service controller (`kube::lb`) builds in the fake,
//! as OpenShift's Azure cloud-controller-manager builds them for our Services
//! (openshift/cloud-provider-azure d04449b95a54, run against this fake by `bootstrap-sim
//! real-ccm azure`; docs/clouds.md). Each goes through the ARM PUT of `load_balancers` (so ARM's
//! refusals and back references apply) and writes the NICs' pool references as the
//! provider's NIC PUTs do:
//!
//! - The load balancer: `<cluster-name>` (public) or `<cluster-name>-internal`, Standard, in the
//!   cluster's resource group; OpenShift runs the CCM with `--cluster-name=<infra-id>`
//!   (`getAzureLoadBalancerName`, `pkg/provider/azure_loadbalancer.go:4088-4122`).
//! - The frontend: `a<uid>` (`getDefaultFrontendIPConfigName`, :4445-4465), Static at the
//!   Service's private IP in the compute subnet, or on its public IP; a second Service on the
//!   same private IP puts its rule on the first one's frontend (matched by IP, :4417-4433).
//! - The backend pool `<cluster-name>`, with every Node's primary ipConfiguration: the provider
//!   leaves control-plane Nodes out unless `excludeMasterFromStandardLB` is false (default
//!   true for Standard, `azure.go:61,573-577`; `azure_standard.go:145-157,975`), and the
//!   installer's cloud config sets it false (openshift/installer#5111), so the masters are in.
//! - A rule per port, `a<uid>-TCP-<port>`: frontend port = backend port, floating IP and TCP
//!   reset on, idle 4 minutes (`getLoadBalancerRuleName`, `azure_standard.go:270-307`).
//! - The probe: OpenShift's operator sets `clusterServiceLoadBalancerHealthProbeMode: shared`
//!   (openshift/cluster-cloud-controller-manager-operator bc52198c
//!   `pkg/cloud/azure/azure.go:190-191`), so every rule uses the one
//!   `cluster-service-shared-health-probe`, HTTP :10256 `/healthz`, 5 s, 2
//!   (`azure_loadbalancer_healthprobe.go:33-45`, `pkg/consts/consts.go:572-575`), not a TCP
//!   probe per rule on the nodePort.
//!
//! A Service that goes takes its rules off, then its frontend when no rule uses it, the shared
//! probe with the last rule, and the load balancer with its last frontend (ARM then drops the
//! NICs' references to its pool, `load_balancers`).

use super::arm::Call;
use super::load_balancers::lb_id;
use super::world::{CLUSTER_RG, LOCATION};
use super::{AzureLbView, lock};
use serde_json::{Value, json};
use std::net::Ipv4Addr;

/// The fixture's infra id, the CCM's `--cluster-name`.
const CLUSTER_NAME: &str = "mycluster-7xk2p";
/// The shared probe's name (`consts.SharedProbeName`).
pub const SHARED_PROBE: &str = "cluster-service-shared-health-probe";

/// Where a Service's frontend takes its address.
#[derive(Clone, Debug)]
pub enum FrontendAddress {
    /// A Static private IPv4 of the subnet holding it.
    Private(Ipv4Addr),
    /// A public IP, by id.
    Public(String),
}

/// The load balancer's name.
pub fn lb_name(internal: bool) -> String {
    if internal {
        format!("{CLUSTER_NAME}-internal")
    } else {
        CLUSTER_NAME.to_string()
    }
}

/// The children of `collection` (taken out of `body`; put them back with `json!`).
fn take(body: &mut Value, collection: &str) -> Vec<Value> {
    match body["properties"][collection].take() {
        Value::Array(list) => list,
        _ => Vec::new(),
    }
}

fn put_back(body: &mut Value, collection: &str, list: Vec<Value>) {
    body["properties"][collection] = Value::Array(list);
}

fn upsert(list: &mut Vec<Value>, item: Value) {
    match list.iter_mut().find(|c| c["name"] == item["name"]) {
        Some(existing) => *existing = item,
        None => list.push(item),
    }
}

impl AzureLbView {
    /// The stored load balancer `name` of the cluster's resource group, as ARM shows it.
    pub fn load_balancer(&self, name: &str) -> Option<Value> {
        let w = lock(&self.world);
        let key = lb_id(CLUSTER_RG, name).to_ascii_lowercase();
        w.load_balancers.get(&key).map(|lb| w.lb_json(lb))
    }

    fn put(&self, name: &str, body: &Value) -> Result<(), String> {
        let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let headers = hyper::HeaderMap::new();
        let call = Call {
            method: "PUT",
            segments: Vec::new(),
            query: Default::default(),
            headers: &headers,
            body: &bytes,
            origin: String::new(),
        };
        let mut w = lock(&self.world);
        let reply = w.load_balancer(&call, CLUSTER_RG, name);
        if reply.status >= 300 {
            let error = reply.body.as_ref().map(|b| &b["error"]);
            return Err(format!(
                "{}: {}",
                error.and_then(|e| e["code"].as_str()).unwrap_or_default(),
                error
                    .and_then(|e| e["message"].as_str())
                    .unwrap_or_default()
            ));
        }
        Ok(())
    }

    /// Puts the Service's frontend (`a<uid>` = `service`, and `-IPv6` = `family` for the IPv6
    /// one of a dual-stack Service, `getResourceByIPFamily`), its rules for `ports` and the
    /// shared probe on the cluster's load balancer, and every Node VM's NIC in its pool.
    pub fn ensure_service_lb(
        &self,
        internal: bool,
        service: &str,
        family: &str,
        address: &FrontendAddress,
        ports: &[u16],
    ) -> Result<(), String> {
        let frontend = &format!("{service}{family}");
        let name = lb_name(internal);
        let id = lb_id(CLUSTER_RG, &name);
        let mut body = self.load_balancer(&name).unwrap_or_else(|| {
            json!({"location": LOCATION, "sku": {"name": "Standard", "tier": "Regional"},
                   "properties": {}})
        });
        let frontend_props = match address {
            FrontendAddress::Private(ip) => {
                let w = lock(&self.world);
                let subnet = w
                    .vnet
                    .subnets
                    .iter()
                    .find(|s| s.contains(*ip))
                    .map(|s| w.subnet_id(&s.name))
                    .unwrap_or_default();
                json!({"privateIPAddress": ip.to_string(), "privateIPAllocationMethod": "Static",
                       "subnet": {"id": subnet}})
            }
            FrontendAddress::Public(pip) => json!({"publicIPAddress": {"id": pip}}),
        };
        // A frontend at the same private IP already there takes the rules (its name is the
        // first Service's).
        let mut frontends = take(&mut body, "frontendIPConfigurations");
        let shared = match address {
            FrontendAddress::Private(ip) => frontends
                .iter()
                .find(|f| f["properties"]["privateIPAddress"] == ip.to_string())
                .and_then(|f| f["name"].as_str().map(str::to_string)),
            FrontendAddress::Public(_) => None,
        };
        let frontend_name = shared.unwrap_or_else(|| frontend.to_string());
        upsert(
            &mut frontends,
            json!({"name": frontend_name, "properties": frontend_props}),
        );
        put_back(&mut body, "frontendIPConfigurations", frontends);
        let mut pools = take(&mut body, "backendAddressPools");
        upsert(&mut pools, json!({"name": CLUSTER_NAME, "properties": {}}));
        put_back(&mut body, "backendAddressPools", pools);
        let mut probes = take(&mut body, "probes");
        let probe = json!({"name": SHARED_PROBE, "properties": {"protocol": "Http", "port": 10256,
            "requestPath": "/healthz", "intervalInSeconds": 5, "probeThreshold": 2}});
        upsert(&mut probes, probe);
        put_back(&mut body, "probes", probes);
        let mut rules = take(&mut body, "loadBalancingRules");
        for port in ports {
            let rule = json!({"name": format!("{service}-TCP-{port}{family}"), "properties": {
                "frontendIPConfiguration": {"id": format!("{id}/frontendIPConfigurations/{frontend_name}")},
                "backendAddressPool": {"id": format!("{id}/backendAddressPools/{CLUSTER_NAME}")},
                "backendAddressPools": [{"id": format!("{id}/backendAddressPools/{CLUSTER_NAME}")}],
                "probe": {"id": format!("{id}/probes/{SHARED_PROBE}")},
                "protocol": "Tcp", "frontendPort": port, "backendPort": port,
                "enableFloatingIP": true, "enableTcpReset": true, "idleTimeoutInMinutes": 4,
                "loadDistribution": "Default", "disableOutboundSnat": false}});
            upsert(&mut rules, rule);
        }
        put_back(&mut body, "loadBalancingRules", rules);
        self.put(&name, &body)?;
        self.join_pool(&format!("{id}/backendAddressPools/{CLUSTER_NAME}"));
        Ok(())
    }

    /// How many NIC ipConfigurations name a backend pool.
    pub fn pool_references(&self) -> usize {
        let w = lock(&self.world);
        w.nics
            .values()
            .flat_map(|nic| nic.ipconfigs.iter())
            .map(|c| c.pools.len())
            .sum()
    }

    /// How long the provider waits on a NIC PUT (a long-running operation: the SDK polls after
    /// the answer's `Retry-After`, the fake's `retry_after` seconds).
    pub fn nic_update_wait(&self) -> std::time::Duration {
        std::time::Duration::from_secs(lock(&self.world).retry_after)
    }

    /// Every Node VM's primary ipConfiguration in `pool` (the provider's NIC PUTs).
    fn join_pool(&self, pool: &str) {
        let mut w = lock(&self.world);
        let nics: Vec<String> = w
            .vms
            .values()
            .map(|vm| vm.nic.to_ascii_lowercase())
            .collect();
        for (key, nic) in w.nics.iter_mut() {
            if !nics.contains(key) {
                continue;
            }
            if let Some(config) = nic.ipconfigs.iter_mut().find(|c| c.primary)
                && !config.pools.iter().any(|p| p.eq_ignore_ascii_case(pool))
            {
                config.pools.push(pool.to_string());
            }
        }
    }

    /// Takes the Service's (`a<uid>` = `frontend`, at `ips`) rules off both load balancers,
    /// then its frontends no rule uses any more: its own, and one at its IP that another
    /// Service named and left (the provider owns a frontend by name or by IP,
    /// `serviceOwnsFrontendIP`).
    pub fn remove_service_lb(&self, frontend: &str, ips: &[String]) -> Result<(), String> {
        for internal in [true, false] {
            let name = lb_name(internal);
            let Some(mut body) = self.load_balancer(&name) else {
                continue;
            };
            let prefix = format!("{frontend}-");
            let mut rules = take(&mut body, "loadBalancingRules");
            let before = rules.len();
            rules.retain(|r| !r["name"].as_str().is_some_and(|n| n.starts_with(&prefix)));
            let used: Vec<String> = rules
                .iter()
                .filter_map(|r| r["properties"]["frontendIPConfiguration"]["id"].as_str())
                .map(|id| {
                    id.rsplit('/')
                        .next()
                        .unwrap_or_default()
                        .to_ascii_lowercase()
                })
                .collect();
            let (removed_rules, no_rules) = (rules.len() != before, rules.is_empty());
            put_back(&mut body, "loadBalancingRules", rules);
            let mut frontends = take(&mut body, "frontendIPConfigurations");
            let kept = frontends.len();
            frontends.retain(|f| {
                let name = f["name"].as_str().unwrap_or_default();
                let ip = f["properties"]["privateIPAddress"]
                    .as_str()
                    .unwrap_or_default();
                let ours = name.eq_ignore_ascii_case(frontend) || ips.iter().any(|i| i == ip);
                !ours || used.contains(&name.to_ascii_lowercase())
            });
            let (removed_frontend, no_frontends) = (frontends.len() != kept, frontends.is_empty());
            put_back(&mut body, "frontendIPConfigurations", frontends);
            if !removed_rules && !removed_frontend {
                continue;
            }
            if no_rules {
                let mut probes = take(&mut body, "probes");
                probes.retain(|p| p["name"] != SHARED_PROBE);
                put_back(&mut body, "probes", probes);
            }
            if no_frontends {
                let headers = hyper::HeaderMap::new();
                let call = Call {
                    method: "DELETE",
                    segments: Vec::new(),
                    query: Default::default(),
                    headers: &headers,
                    body: &[],
                    origin: String::new(),
                };
                lock(&self.world).load_balancer(&call, CLUSTER_RG, &name);
            } else {
                self.put(&name, &body)?;
            }
        }
        Ok(())
    }
}
