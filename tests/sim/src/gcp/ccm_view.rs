//! What a run with a real cloud-controller-manager reads back from the fake
//! (`bootstrap-sim real-ccm gcp`): what the controller made and left, when each load balancer
//! started to serve, and when each IP joined DNS; and a VM that comes after the install (a
//! node change), with where it is behind the load balancers.

use super::{GcpFake, World};
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::time::{Instant, SystemTime};

fn wall(at: Instant) -> SystemTime {
    SystemTime::now()
        .checked_sub(at.elapsed())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

impl GcpFake {
    /// Everything a controller made through the API that is still there: the load-balancer
    /// resources (`projects/p/global/firewalls/x`, ...), the instance groups the seed did not
    /// have (`projects/p/zones/z/instanceGroups/k8s-ig--...`), and the addresses it reserved
    /// for itself (`a<uid>`: no labels).
    pub fn controller_made(&self) -> Vec<String> {
        let w = self.lock();
        let project = &w.seed().project;
        let mut made: Vec<String> = w.lb.keys().cloned().collect();
        let region = &w.seed().region;
        made.extend(
            w.seed()
                .instance_groups
                .iter()
                .filter(|(_, name, _)| name.starts_with("k8s-"))
                .map(|(zone, name, _)| {
                    format!("projects/{project}/zones/{zone}/instanceGroups/{name}")
                }),
        );
        made.extend(
            w.addresses
                .values()
                .filter(|a| {
                    a["labels"]
                        .as_object()
                        .is_none_or(serde_json::Map::is_empty)
                })
                .filter_map(|a| a["name"].as_str())
                .filter(|n| n.len() == 33 && n.starts_with('a'))
                .map(|n| format!("projects/{project}/regions/{region}/addresses/{n}")),
        );
        made
    }

    /// When each forwarding rule's IP started to serve: its insert DONE, and for an internal
    /// one its backends healthy (the backend service's health check's first interval passed).
    /// Keyed by IP: the latest rule on it.
    pub fn serving_since(&self) -> BTreeMap<String, SystemTime> {
        let w = self.lock();
        let delay = w.options.operation_delay;
        let mut out: BTreeMap<String, SystemTime> = BTreeMap::new();
        for (path, rule) in w.lb.iter().filter(|(k, _)| k.contains("/forwardingRules/")) {
            let Some(built) = w.lb_built.get(path) else {
                continue;
            };
            let mut since = *built + delay;
            if let Some(service) = rule["backendService"]
                .as_str()
                .and_then(|u| super::lb_store::key_of_url(&w.seed().project, u))
            {
                let interval =
                    w.lb.get(&service)
                        .and_then(|s| s["healthChecks"][0].as_str())
                        .and_then(|c| super::lb_store::key_of_url(&w.seed().project, c))
                        .and_then(|c| w.lb.get(&c))
                        .and_then(|c| c["checkIntervalSec"].as_u64())
                        .map_or(
                            w.options.health_check_interval,
                            std::time::Duration::from_secs,
                        );
                if let Some(made) = w.lb_built.get(&service) {
                    since = since.max(*made + interval);
                }
            }
            let ip = rule["IPAddress"].as_str().unwrap_or_default().to_string();
            let since = wall(since);
            let entry = out.entry(ip).or_insert(since);
            *entry = (*entry).max(since);
        }
        out
    }

    /// Each value a DNS change added, with when the change was made (in every zone).
    pub fn dns_additions(&self) -> Vec<(SystemTime, String)> {
        let w = self.lock();
        let delay = w.options.change_delay;
        let mut out = Vec::new();
        for zone in &w.zones {
            for (change, done_at) in &zone.changes {
                let made = wall(done_at.checked_sub(delay).unwrap_or(*done_at));
                for rrset in change["additions"].as_array().into_iter().flatten() {
                    for value in rrset["rrdatas"].as_array().into_iter().flatten() {
                        if let Some(v) = value.as_str() {
                            out.push((made, v.to_string()));
                        }
                    }
                }
            }
        }
        out.sort();
        out
    }

    /// A VM that comes after the install (see [`World::add_instance`]).
    pub fn add_instance(&self, name: &str, zone: &str, subnetwork: &str) -> Result<Ipv4Addr> {
        self.lock().add_instance(name, zone, subnetwork)
    }

    /// Where the VM `vm` is behind the load balancers (see [`World::backends_holding`]).
    pub fn backends_holding(&self, vm: &str) -> Vec<(String, bool)> {
        self.lock().backends_holding(vm)
    }
}

impl World {
    /// A VM that comes after the install (a new worker Machine): `name` in `zone`, nic0 in
    /// the seed's subnetwork `subnetwork` at its lowest free address (GCE picks "an unused
    /// internal IP"), a Node of the cluster. `instances.get`, `instances.list` and the
    /// instance-group and target-pool calls know it from now on. Refused: a name the fake
    /// has, a zone not of the region, a subnetwork the seed lacks or one that is full.
    pub(crate) fn add_instance(
        &mut self,
        name: &str,
        zone: &str,
        subnetwork: &str,
    ) -> Result<Ipv4Addr> {
        let w = self;
        if w.instances.contains_key(name) {
            bail!("GCP fake: an instance {name} exists already");
        }
        if !super::region_zones(&w.seed().region)
            .iter()
            .any(|z| z == zone)
        {
            bail!("GCP fake: {zone} is not a zone of {}", w.seed().region);
        }
        let Some(subnet) = w.seed().subnetwork(subnetwork).cloned() else {
            bail!("GCP fake: no subnetwork {subnetwork}");
        };
        let Some(free) = w.free_block(&subnet, 32) else {
            bail!("GCP fake: no free address in {subnetwork}");
        };
        w.options.seed.instances.push(super::InstanceSeed {
            name: name.to_string(),
            zone: zone.to_string(),
            subnetwork: subnetwork.to_string(),
            node: true,
            network_ip: Some(free.start),
        });
        w.instances.insert(
            name.to_string(),
            super::instances::InstanceState {
                zone: zone.to_string(),
                subnetwork: subnetwork.to_string(),
                network_ip: free.start,
                aliases: Vec::new(),
                pending: None,
                fingerprint: super::instances::hash(name.as_bytes()),
            },
        );
        Ok(free.start)
    }

    /// Each load balancer's backend side and whether the VM `vm` is in it: the backend
    /// services (through an instance group of theirs holding it) and target pools a
    /// controller made, the real CCM or the simulated provider.
    pub(crate) fn backends_holding(&self, vm: &str) -> Vec<(String, bool)> {
        let w = self;
        let project = w.seed().project.clone();
        let mut out = Vec::new();
        for (path, resource) in &w.lb {
            if path.contains("/backendServices/") {
                let holds = resource["backends"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b["group"].as_str())
                    .filter_map(|g| super::zonal::group_of_url(w, g))
                    .any(|(zone, group)| {
                        super::instance_groups::members(w, &zone, &group)
                            .iter()
                            .any(|m| m == vm)
                    });
                out.push((path.clone(), holds));
            } else if path.contains("/targetPools/") {
                let tail = format!("/projects/{project}/zones/");
                let holds = resource["instances"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i.as_str())
                    .any(|i| i.contains(&tail) && i.ends_with(&format!("/instances/{vm}")));
                out.push((path.clone(), holds));
            }
        }
        out
    }
}
