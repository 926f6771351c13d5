//! A faithful local fake of the GCP REST APIs the agent uses, over plain HTTP on 127.0.0.1
//! (so the counting/freezing [`Proxy`] can sit in front):
//!
//! - compute.v1: regional `addresses` (insert/get/list with filter/delete) and
//!   `regionOperations` (get/wait). Mutations return an Operation that is RUNNING until
//!   `operation_delay` has passed, then DONE; `requestId` must be a UUID and makes an insert or
//!   delete idempotent (same id, same operation, no second effect). INTERNAL addresses are
//!   allocated from the subnetwork's range (first two and last two addresses reserved, as on
//!   GCP); an explicit address already in use fails the operation with
//!   `IP_IN_USE_BY_ANOTHER_RESOURCE`; an existing name is a 409 `alreadyExists`. A subnetwork
//!   belongs to one project: a Shared VPC's lives in the host project while the addresses
//!   stay in the service project, and a subnetwork URL naming a project that does not hold
//!   it is refused as GCE refuses it (400 `invalid`, "The referenced subnetwork resource
//!   cannot be found.").
//! - compute.v1 `instances.get` and `instances.updateNetworkInterface` (nic0's alias IP
//!   ranges) of the seed's VMs, with `zoneOperations` (get/wait); see `instances`. One
//!   allocator (`ipam`) knows every address in use: address resources, the VMs' primary
//!   addresses and aliases, forwarding rules; the bootstrap VM is at 10.0.1.10 in every seed.
//! - dns.v1: `managedZones` (list with `dnsName`, get), `resourceRecordSets` (list with
//!   `name`/`type`) and `changes` (create/get). A Change is validated whole, then applied
//!   atomically: a deletion must match the existing set exactly (ttl and rrdatas, else 412
//!   `conditionNotMet`; absent: 404 `notFound`), an addition must not exist (409
//!   `alreadyExists`). Changes are `pending` for `change_delay`, then `done`.
//! - cloudresourcemanager.v1: `projects.testIamPermissions`, for preflight (see `iam`).
//!
//! Errors use Google's envelope `{"error":{"code","message","errors":[{"reason","message",
//! "domain"}],"status"}}`. The shapes follow the discovery documents that ship with
//! google-api-python-client, which `tests/gcp_fake.rs` uses as the oracle.
//!
//! What the fake starts with (its options and seed: projects, subnetworks, zones, VMs) is in
//! `seed`, what the simulated load-balancer controllers read of it and change in it in
//! `lb_view`, the fake behind its counting proxies in `peers`; this file holds the world and
//! the fake's handle on it.

mod authz;
mod ccm_view;
mod compute;
mod dns;
mod filter;
mod http;
mod iam;
mod instance_groups;
mod instances;
mod ipam;
mod lb_addresses;
mod lb_rules;
#[cfg(test)]
mod lb_rules_tests;
mod lb_store;
mod lb_view;
pub mod load_balancers;
mod metadata;
#[cfg(test)]
mod nic_tests;
mod nic_update;
mod operations;
mod peers;
mod provider_calls;
mod reads;
mod seed;
mod zonal;

pub use lb_view::GcpLbView;
pub use peers::GcpPeers;
pub use provider_calls::Call;
pub use seed::{
    AddressQuotas, DEFAULT_REGION, DNS_PROJECT, FakeOptions, InstanceGroupSeed, InstanceSeed,
    SHARED_VPC_HOST_PROJECT, Seed, SubnetSeed, ZoneSeed, installer_machines, region_zones,
};

#[cfg(doc)]
use crate::proxy::Proxy;
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub use filter::Filter;
pub use iam::KNOWN_PERMISSIONS;

/// What happens to the world when an operation completes.
#[derive(Debug, Clone)]
enum Effect {
    /// The address becomes RESERVED.
    Reserve(String),
    /// The address is gone.
    Delete(String),
    /// The VM's pending alias IP ranges become its aliases (`instances`).
    Aliases(String),
}

#[derive(Debug, Clone)]
struct Operation {
    json: Value,
    done_at: Instant,
    effect: Option<Effect>,
}

#[derive(Debug, Clone)]
struct ZoneState {
    /// The project that holds the zone: requests under any other project do not see it.
    project: String,
    json: Value,
    /// (name, type) -> rrset JSON.
    rrsets: BTreeMap<(String, String), Value>,
    changes: Vec<(Value, Instant)>,
}

pub(crate) struct World {
    options: FakeOptions,
    /// name -> address JSON (one region).
    addresses: BTreeMap<String, Value>,
    operations: BTreeMap<String, Operation>,
    request_ids: HashMap<String, String>,
    zones: Vec<ZoneState>,
    /// The seed's VMs by name: nic0's addresses and fingerprint.
    instances: BTreeMap<String, instances::InstanceState>,
    /// The IPs of the forwarding rules the simulated service controller made, with the rules
    /// (load-balancer names) on each.
    forwarding_rule_ips: BTreeMap<IpAddr, BTreeSet<String>>,
    /// The load-balancer resources a cloud-controller-manager made through the API, by path
    /// (`projects/p/global/firewalls/x`; see `lb_store`).
    lb: BTreeMap<String, Value>,
    /// When each of them was made (a backend service's health is checked from then on).
    lb_built: BTreeMap<String, Instant>,
    next_id: u64,
    /// Every request: (method, path).
    log: Vec<(String, String)>,
}

impl World {
    fn new(options: FakeOptions) -> Self {
        let instances = instances::from_seed(&options.seed);
        let mut world = Self {
            options,
            addresses: BTreeMap::new(),
            operations: BTreeMap::new(),
            request_ids: HashMap::new(),
            zones: Vec::new(),
            instances,
            forwarding_rule_ips: BTreeMap::new(),
            lb: BTreeMap::new(),
            lb_built: BTreeMap::new(),
            next_id: 4_200_000_000_000_000_000,
            log: Vec::new(),
        };
        for z in world.options.seed.zones.clone() {
            let zone = dns::new_zone(&mut world, &z);
            world.zones.push(zone);
        }
        world
    }

    fn id(&mut self) -> String {
        self.next_id += 7919;
        self.next_id.to_string()
    }

    fn seed(&self) -> &Seed {
        &self.options.seed
    }

    /// Completes what is due: operations past their delay, changes past theirs.
    fn tick(&mut self) {
        let now = Instant::now();
        let due: Vec<String> = self
            .operations
            .iter()
            .filter(|(_, op)| op.json["status"] != "DONE" && op.done_at <= now)
            .map(|(name, _)| name.clone())
            .collect();
        for name in due {
            self.complete(&name);
        }
        for zone in &mut self.zones {
            for (change, done_at) in &mut zone.changes {
                if change["status"] == "pending" && *done_at <= now {
                    change["status"] = json!("done");
                }
            }
        }
    }

    fn complete(&mut self, name: &str) {
        let Some(op) = self.operations.get_mut(name) else {
            return;
        };
        op.json["status"] = json!("DONE");
        op.json["progress"] = json!(100);
        op.json["endTime"] = json!(now_rfc3339());
        match op.effect.take() {
            Some(Effect::Reserve(address)) => {
                if let Some(a) = self.addresses.get_mut(&address) {
                    a["status"] = json!("RESERVED");
                }
            }
            Some(Effect::Delete(address)) => {
                self.addresses.remove(&address);
            }
            Some(Effect::Aliases(instance)) => instances::apply_pending(self, &instance),
            None => {}
        }
    }

    /// The addresses the VM `name` answers on now: nic0's primary address, then each
    /// address of its alias IP ranges (as `instances.get` shows them: an update still RUNNING
    /// is not counted). Empty for a VM the fake does not know.
    pub(crate) fn instance_addresses(&mut self, name: &str) -> Vec<Ipv4Addr> {
        self.tick();
        self.instances
            .get(name)
            .map(instances::InstanceState::addresses)
            .unwrap_or_default()
    }
}

pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// The fake server: compute.v1 and dns.v1 on one loopback port, one shared world.
pub struct GcpFake {
    pub addr: SocketAddr,
    world: Arc<Mutex<World>>,
    task: tokio::task::JoinHandle<()>,
}

impl GcpFake {
    pub async fn start(options: FakeOptions) -> Result<Self> {
        instances::check_seed(&options.seed).map_err(|e| anyhow::anyhow!("GCP seed: {e}"))?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let world = Arc::new(Mutex::new(World::new(options)));
        let task = tokio::spawn(http::serve(listener, world.clone()));
        Ok(Self { addr, world, task })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The project, region, network and subnetworks the fake was seeded with.
    pub fn seed(&self) -> Seed {
        self.lock().seed().clone()
    }

    /// The range of the cloud-config subnetwork (see [`Seed::cloud_config_subnetwork`]).
    pub fn cloud_config_subnet_range(&self) -> Option<crate::kube::Ipv4Cidr> {
        let w = self.lock();
        let seed = w.seed();
        seed.subnetwork(&seed.cloud_config_subnetwork)
            .map(|s| crate::kube::Ipv4Cidr::new(s.cidr, s.prefix))
    }

    /// Every request the fake served: (method, path without query).
    pub fn request_log(&self) -> Vec<(String, String)> {
        self.lock().log.clone()
    }

    /// The addresses the VM `name` answers on now (see [`GcpLbView::instance_addresses`]).
    pub fn instance_addresses(&self, name: &str) -> Vec<Ipv4Addr> {
        self.lock().instance_addresses(name)
    }

    /// Every VM's addresses now, by name (as [`GcpFake::instance_addresses`]).
    pub fn all_instance_addresses(&self) -> BTreeMap<String, Vec<Ipv4Addr>> {
        let mut w = self.lock();
        let names: Vec<String> = w.instances.keys().cloned().collect();
        names
            .into_iter()
            .map(|name| {
                let addresses = w.instance_addresses(&name);
                (name, addresses)
            })
            .collect()
    }

    /// All addresses as the API would list them (any label).
    pub fn addresses(&self) -> Vec<Value> {
        let mut w = self.lock();
        w.tick();
        w.addresses.values().cloned().collect()
    }

    /// All record sets of a zone (by zone name), as `"name TYPE" -> [rrdatas]`.
    pub fn records(&self, zone: &str) -> BTreeMap<String, Vec<String>> {
        let mut w = self.lock();
        w.tick();
        w.zones
            .iter()
            .find(|z| z.json["name"] == zone)
            .map(|z| {
                z.rrsets
                    .iter()
                    .map(|((name, rtype), set)| {
                        let values = set["rrdatas"]
                            .as_array()
                            .map(|a| {
                                a.iter()
                                    .filter_map(|v| v.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default();
                        (format!("{} {rtype}", name.trim_end_matches('.')), values)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Another writer sets `name`/`rtype` in `zone` to exactly `values` (empty: delete), ttl 300.
    pub fn write_record(&self, zone: &str, name: &str, rtype: &str, values: &[&str]) -> Result<()> {
        let mut w = self.lock();
        let z = w
            .zones
            .iter_mut()
            .find(|z| z.json["name"] == zone)
            .ok_or_else(|| anyhow::anyhow!("no zone {zone}"))?;
        let key = (
            format!("{}.", name.trim_end_matches('.')),
            rtype.to_string(),
        );
        if values.is_empty() {
            z.rrsets.remove(&key);
        } else {
            z.rrsets.insert(
                key.clone(),
                json!({"kind": "dns#resourceRecordSet", "name": key.0, "type": rtype,
                       "ttl": 300, "rrdatas": values}),
            );
        }
        Ok(())
    }

    /// Creates an address directly (as another tool would), with the given labels; RESERVED.
    pub fn create_address(
        &self,
        name: &str,
        internal: bool,
        labels: &[(&str, &str)],
    ) -> Result<Value> {
        let mut w = self.lock();
        let labels: serde_json::Map<String, Value> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        let mut body = json!({"name": name, "labels": labels});
        if internal {
            let seed = w.seed().clone();
            body["addressType"] = json!("INTERNAL");
            body["subnetwork"] = json!(format!(
                "projects/{}/regions/{}/subnetworks/{}",
                seed.subnet_project(&seed.subnetworks[0]),
                seed.region,
                seed.subnetworks[0].name
            ));
        }
        let address =
            compute::new_address(&mut w, &body).map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let mut address = address;
        address["status"] = json!("RESERVED");
        w.addresses.insert(name.to_string(), address.clone());
        Ok(address)
    }
}

impl GcpFake {
    /// From now on the caller holds exactly `permissions` on each of `projects` (a role bound
    /// there), and every permission on the projects not named; `projects` empty: every
    /// permission everywhere again. Both `testIamPermissions` and every call answer from it.
    pub fn grant(&self, projects: &[String], permissions: &[String]) {
        let mut w = self.lock();
        w.options.granted = projects
            .iter()
            .map(|p| (p.clone(), permissions.to_vec()))
            .collect();
    }

    /// Drops the seed's instance groups of `zones` (all zones when empty), as a cluster whose
    /// installer made none.
    pub fn remove_instance_groups(&self, zones: &[&str]) {
        self.lock()
            .options
            .seed
            .instance_groups
            .retain(|(z, _, _)| !zones.is_empty() && !zones.contains(&z.as_str()));
    }

    /// Sets the network tier of the address `name` (`PREMIUM` or `STANDARD`), as a user who
    /// reserved it in the other tier.
    pub fn set_network_tier(&self, name: &str, tier: &str) {
        if let Some(a) = self.lock().addresses.get_mut(name) {
            a["networkTier"] = json!(tier);
        }
    }

    /// Sets the `purpose` of the address `name` (tests: an internal address the user made
    /// for one load balancer only, `GCE_ENDPOINT`, or to share, `SHARED_LOADBALANCER_VIP`).
    pub fn set_purpose(&self, name: &str, purpose: &str) {
        if let Some(a) = self.lock().addresses.get_mut(name) {
            a["purpose"] = json!(purpose);
        }
    }
}

impl Drop for GcpFake {
    fn drop(&mut self) {
        self.task.abort();
    }
}
