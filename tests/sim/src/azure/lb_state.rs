//! What ARM shows and does with the load balancers besides their PUT (see `load_balancers`):
//! the back references it computes (a frontend's, a pool's and a probe's
//! `loadBalancingRules`, a pool's `backendIPConfigurations` from the NICs naming it), the
//! private addresses frontends hold, and when a rule first serves (for `bootstrap-sim
//! real-ccm`'s timing).

use super::load_balancers::{LoadBalancer, refs};
use super::world::World;
use serde_json::{Value, json};
use std::net::Ipv4Addr;

impl World {
    /// Notes the addresses and ports load balancers serve from now on: a rule's frontend
    /// address (private, or its public IP's) and frontend port, once the rule forwards to a
    /// pool with a member whose NIC update is done (`Succeeded`).
    pub(super) fn note_serving(&mut self) {
        let mut serving = Vec::new();
        for lb in self.load_balancers.values() {
            let props = &lb.body["properties"];
            for rule in props["loadBalancingRules"].as_array().into_iter().flatten() {
                let r = &rule["properties"];
                let has_members = refs(r, "backendAddressPool")
                    .into_iter()
                    .chain(refs(r, "backendAddressPools"))
                    .any(|pool| self.pool_has_a_ready_member(pool));
                let Some(port) = r["frontendPort"]
                    .as_u64()
                    .and_then(|p| u16::try_from(p).ok())
                else {
                    continue;
                };
                if !has_members {
                    continue;
                }
                let frontends = refs(r, "frontendIPConfiguration");
                let all = props["frontendIPConfigurations"]
                    .as_array()
                    .into_iter()
                    .flatten();
                for f in all.filter(|f| {
                    frontends
                        .iter()
                        .any(|id| f["id"].as_str().is_some_and(|x| x.eq_ignore_ascii_case(id)))
                }) {
                    let p = &f["properties"];
                    let ip = match p["publicIPAddress"]["id"].as_str() {
                        Some(pip) => self
                            .public_ips
                            .get(&pip.to_ascii_lowercase())
                            .and_then(|p| p.ip),
                        None => p["privateIPAddress"]
                            .as_str()
                            .and_then(|ip| ip.parse().ok()),
                    };
                    serving.extend(ip.map(|ip| (ip, port)));
                }
            }
        }
        for at in serving {
            self.frontends_since
                .entry(at)
                .or_insert_with(std::time::Instant::now);
        }
    }

    fn pool_has_a_ready_member(&self, pool: &str) -> bool {
        self.nics.values().any(|nic| {
            nic.state == "Succeeded"
                && nic
                    .ipconfigs
                    .iter()
                    .any(|c| c.pools.iter().any(|p| p.eq_ignore_ascii_case(pool)))
        })
    }

    /// The id of the load balancer frontend holding the private `ip`, if one does.
    pub(super) fn frontend_holding(&self, ip: Ipv4Addr) -> Option<String> {
        let text = ip.to_string();
        self.load_balancers.values().find_map(|lb| {
            let frontends = lb.body["properties"]["frontendIPConfigurations"].as_array()?;
            frontends
                .iter()
                .find(|f| f["properties"]["privateIPAddress"].as_str() == Some(text.as_str()))
                .and_then(|f| f["id"].as_str().map(str::to_string))
        })
    }

    /// Whether `id` names a backend pool of an existing load balancer.
    pub(super) fn backend_pool_exists(&self, id: &str) -> bool {
        let lower = id.to_ascii_lowercase();
        let Some((lb, _)) = lower.split_once("/backendaddresspools/") else {
            return false;
        };
        self.load_balancers.get(lb).is_some_and(|found| {
            found.body["properties"]["backendAddressPools"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["id"].as_str().is_some_and(|p| p.eq_ignore_ascii_case(id)))
        })
    }

    /// The load balancer as ARM shows it: the stored body with the computed back references.
    pub fn lb_json(&self, lb: &LoadBalancer) -> Value {
        let mut body = lb.body.clone();
        let rules: Vec<Value> = body["properties"]["loadBalancingRules"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let used_by = |child: &Value, key: &str| -> Vec<Value> {
            let child_id = child["id"].as_str().unwrap_or_default();
            rules
                .iter()
                .filter(|r| {
                    refs(&r["properties"], key)
                        .iter()
                        .chain(refs(&r["properties"], &format!("{key}s")).iter())
                        .any(|x| x.eq_ignore_ascii_case(child_id))
                })
                .filter_map(|r| r["id"].as_str().map(|id| json!({"id": id})))
                .collect()
        };
        for (collection, key) in [
            ("frontendIPConfigurations", "frontendIPConfiguration"),
            ("backendAddressPools", "backendAddressPool"),
            ("probes", "probe"),
        ] {
            let children = body["properties"][collection].as_array_mut();
            for child in children.into_iter().flatten() {
                let using = used_by(child, key);
                if !using.is_empty() {
                    child["properties"]["loadBalancingRules"] = json!(using);
                }
                if collection == "backendAddressPools" {
                    let members = self.pool_members(child["id"].as_str().unwrap_or_default());
                    child["properties"]["backendIPConfigurations"] = json!(members);
                }
            }
        }
        body
    }

    /// The NIC ipConfigurations that name backend pool `pool` (ARM's
    /// `backendIPConfigurations`).
    fn pool_members(&self, pool: &str) -> Vec<Value> {
        self.nics
            .values()
            .flat_map(|nic| {
                let nic_id = super::nic::nic_id(&nic.rg, &nic.name);
                nic.ipconfigs
                    .iter()
                    .filter(|c| c.pools.iter().any(|p| p.eq_ignore_ascii_case(pool)))
                    .map(move |c| json!({"id": format!("{nic_id}/ipConfigurations/{}", c.name)}))
            })
            .collect()
    }
}

impl super::AzureSim {
    /// Every load balancer as ARM shows it.
    pub fn load_balancers(&self) -> Vec<Value> {
        let w = super::lock(&self.world);
        w.load_balancers.values().map(|lb| w.lb_json(lb)).collect()
    }

    /// `(NIC, backend pool id)` for every NIC ipConfiguration naming a pool.
    pub fn nic_pool_references(&self) -> Vec<(String, String)> {
        let w = super::lock(&self.world);
        w.nics
            .values()
            .flat_map(|nic| {
                nic.ipconfigs
                    .iter()
                    .flat_map(|c| c.pools.iter().map(|p| (nic.name.clone(), p.clone())))
            })
            .collect()
    }

    /// When a load balancer first served `ip` on `port`: a frontend holding it had a rule on
    /// the port to a pool with a ready member (see `note_serving`).
    pub fn frontend_serving_since(
        &self,
        ip: std::net::IpAddr,
        port: u16,
    ) -> Option<std::time::Instant> {
        super::lock(&self.world)
            .frontends_since
            .get(&(ip, port))
            .copied()
    }
}
