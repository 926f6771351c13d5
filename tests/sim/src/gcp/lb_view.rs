//! The GCP fake as the simulated load-balancer controllers see it: the book of its addresses'
//! users, which the service controller edits as it builds forwarding rules, and the view the
//! GCE cloud provider reads (cloud config, instance groups, addresses), outside the request
//! log and the proxies' counts.

use super::{GcpFake, InstanceSeed, World, instance_groups};
use serde_json::{Value, json};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

impl GcpFake {
    /// The fake's addresses as the simulated service controller uses them: a forwarding rule
    /// on an address lists itself in the address's `users`, and the address is `IN_USE`
    /// (compute.v1 Address: `users[]`, "The URLs of the resources that are using this
    /// address", `status` RESERVING / RESERVED / IN_USE). An address with users cannot be
    /// deleted (`compute::delete`: `resourceInUseByAnotherResource`).
    pub fn address_book(&self) -> crate::kube::AddressBook {
        crate::kube::AddressBook(Arc::new(AddressUsers(self.world.clone())))
    }
}

struct AddressUsers(Arc<Mutex<World>>);

impl AddressUsers {
    fn edit(&self, ip: std::net::IpAddr, lb: &str, attach: bool) {
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        w.tick();
        w.edit_address_users(ip, lb, attach);
    }
}

impl World {
    /// Edits the users of the address holding `ip` (none: only the forwarding rules' IPs):
    /// the forwarding rule `lb` uses it (`attach`) or no longer does.
    pub(crate) fn edit_address_users(&mut self, ip: std::net::IpAddr, lb: &str, attach: bool) {
        let w = self;
        let rule = format!(
            "https://www.googleapis.com/compute/v1/projects/{}/regions/{}/forwardingRules/{lb}",
            w.seed().project,
            w.seed().region
        );
        let rules = w.forwarding_rule_ips.entry(ip).or_default();
        if attach {
            rules.insert(lb.to_string());
        } else {
            rules.remove(lb);
        }
        if rules.is_empty() {
            w.forwarding_rule_ips.remove(&ip);
        }
        let ip = ip.to_string();
        let Some(address) = w
            .addresses
            .values_mut()
            .find(|a| a["address"] == ip.as_str())
        else {
            return;
        };
        let mut users: Vec<Value> = address["users"].as_array().cloned().unwrap_or_default();
        users.retain(|u| u != rule.as_str());
        if attach {
            users.push(json!(rule));
        }
        address["status"] = json!(if users.is_empty() {
            "RESERVED"
        } else {
            "IN_USE"
        });
        match address.as_object_mut() {
            Some(fields) if users.is_empty() => {
                fields.remove("users");
            }
            Some(fields) => {
                fields.insert("users".into(), json!(users));
            }
            None => {}
        }
    }
}

impl crate::kube::AddressUsers for AddressUsers {
    fn attach(&self, ip: std::net::IpAddr, lb: &str) {
        self.edit(ip, lb, true);
    }

    fn detach(&self, ip: std::net::IpAddr, lb: &str) {
        self.edit(ip, lb, false);
    }
}

impl GcpFake {
    /// What the simulated GCE load-balancer controller reads of this fake.
    pub fn lb_view(&self) -> GcpLbView {
        GcpLbView {
            world: self.world.clone(),
        }
    }
}

/// The fake as the cloud provider in the simulated service controller reads it: the cloud
/// config's prefix, the nodes per zone, the zones' instance groups and the region's addresses.
/// Reads the world directly (the same functions the REST answers use), so nothing shows in
/// the request log or the proxies' counts.
#[derive(Clone)]
pub struct GcpLbView {
    world: Arc<Mutex<World>>,
}

impl std::fmt::Debug for GcpLbView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GcpLbView")
    }
}

impl GcpLbView {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// (project, region, the cloud config's `external-instance-groups-prefix` = infra id).
    pub fn cloud_config(&self) -> (String, String, String) {
        let w = self.lock();
        let seed = w.seed();
        (
            seed.project.clone(),
            seed.region.clone(),
            seed.infra_id.clone(),
        )
    }

    /// The addresses the VM `name` answers on now: nic0's `networkIP`, then every address of
    /// its alias IP ranges once the update that added them is DONE (as `instances.get` shows
    /// them). Empty for a VM the fake does not know.
    pub fn instance_addresses(&self, name: &str) -> Vec<Ipv4Addr> {
        self.lock().instance_addresses(name)
    }

    /// The nodes (instances) of the cluster.
    pub fn instances(&self) -> Vec<InstanceSeed> {
        self.lock().seed().instances.clone()
    }

    /// The instance groups of `zone` whose name starts with `prefix` (the cloud provider's
    /// `ListInstanceGroupsWithPrefix`), each with its member instance names.
    pub fn groups_with_prefix(&self, zone: &str, prefix: &str) -> Vec<(String, Vec<String>)> {
        let w = self.lock();
        instance_groups::in_zone(&w, zone)
            .iter()
            .filter_map(|g| g["name"].as_str())
            .filter(|name| name.starts_with(prefix))
            .map(|name| (name.to_string(), instance_groups::members(&w, zone, name)))
            .collect()
    }

    /// Every instance group of `zone` with its members.
    pub fn groups(&self, zone: &str) -> Vec<(String, Vec<String>)> {
        self.groups_with_prefix(zone, "")
    }

    /// The region's address holding `ip` (`GetRegionAddressByIP`), as the API shows it.
    pub fn address_by_ip(&self, ip: &str) -> Option<Value> {
        let mut w = self.lock();
        w.tick();
        w.addresses.values().find(|a| a["address"] == ip).cloned()
    }
}
