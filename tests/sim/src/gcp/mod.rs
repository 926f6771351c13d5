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
pub mod load_balancers;
mod metadata;
#[cfg(test)]
mod nic_tests;
mod nic_update;
mod operations;
mod provider_calls;
mod reads;
mod zonal;

pub use provider_calls::Call;

use crate::proxy::{Proxy, Service};
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use filter::Filter;
pub use iam::KNOWN_PERMISSIONS;

/// A subnetwork the fake knows (internal addresses come from its range).
#[derive(Debug, Clone)]
pub struct SubnetSeed {
    pub name: String,
    /// The project that holds it: a Shared VPC host project, else (None) the seed's project.
    pub project: Option<String>,
    pub network: String,
    pub cidr: Ipv4Addr,
    pub prefix: u8,
}

/// A managed zone the fake starts with.
#[derive(Debug, Clone)]
pub struct ZoneSeed {
    pub name: String,
    pub dns_name: String,
    pub private: bool,
    /// The project that holds it (`platform.gcp.dns.privateZone.projectID`: a third project),
    /// else (None) the seed's project. Cloud DNS finds a zone only under its own project.
    pub project: Option<String>,
}

/// The world the fake starts with; the default matches `tests/fixtures/assets/gcp`.
#[derive(Debug, Clone)]
pub struct Seed {
    pub project: String,
    pub region: String,
    pub network: String,
    pub subnetworks: Vec<SubnetSeed>,
    pub zones: Vec<ZoneSeed>,
    /// Where EXTERNAL addresses come from (documentation range: never routed).
    pub external_pool: (Ipv4Addr, u8),
    /// The subnetwork of the cluster's cloud-provider config (`subnetwork-name`: the compute
    /// subnet), where the cloud provider creates internal forwarding rules.
    pub cloud_config_subnetwork: String,
    /// The region's address quotas (`regions.get` `quotas`).
    pub quotas: AddressQuotas,
    /// The cluster's infra id: the cloud config's `node-instance-prefix` and
    /// `external-instance-groups-prefix` (openshift/installer
    /// `pkg/asset/manifests/gcp/cloudproviderconfig.go` sets both to it).
    pub infra_id: String,
    /// The project's default network tier (`projects.get` `defaultNetworkTier`): the tier of
    /// an EXTERNAL address inserted without `networkTier`.
    pub default_network_tier: String,
    /// The cluster's VM instances (see [`InstanceSeed`]).
    pub instances: Vec<InstanceSeed>,
    /// Zonal unmanaged instance groups. The installer's are `<infra-id>-master-<zone>` with
    /// the control-plane machines of the zone.
    pub instance_groups: Vec<InstanceGroupSeed>,
}

/// A zonal instance group: (zone, name, member instance names).
pub type InstanceGroupSeed = (String, String, Vec<String>);

/// A VM of the cluster: its name, zone and the subnetwork of its primary interface (nic0),
/// whether a Node of that name exists (the bootstrap VM is none), and nic0's primary internal
/// address (`networkIP`).
#[derive(Debug, Clone)]
pub struct InstanceSeed {
    pub name: String,
    pub zone: String,
    pub subnetwork: String,
    pub node: bool,
    /// None: the lowest free usable address of the subnetwork when the fake starts (GCE picks
    /// "an unused internal IP" when none is given).
    pub network_ip: Option<Ipv4Addr>,
}

/// Where [`Seed::with_installer_machines`] puts the installer's VMs in their subnetworks (GCE
/// would pick the addresses; tests need to know them): the bootstrap VM at `.1.10` of a range
/// starting at `.0.0` (10.0.1.10 in every seed here: the bootstrap IP the tests pass the
/// agent), control-plane machine *i* at `.1.20 + i`, worker *i* at `.0.30 + i`.
const BOOTSTRAP_HOST: u32 = 256 + 10;
const MASTER_HOST: u32 = 256 + 20;
const WORKER_HOST: u32 = 30;

/// The zones of a region the fake answers (`regions.get` `zones`): `<region>-a`, `-b`, `-c`.
pub fn region_zones(region: &str) -> Vec<String> {
    ["a", "b", "c"]
        .iter()
        .map(|z| format!("{region}-{z}"))
        .collect()
}

/// Three control-plane machines (one per zone, in `control_plane_subnet`) and a worker per
/// zone (in `compute_subnet`), and the installer's per-zone instance groups
/// `<infra_id>-master-<zone>` holding each zone's control-plane machine (CAPG
/// `cloud/scope/cluster.go` `InstanceGroupSpec`: `<name>-<tag>-<zone>`, the installer setting
/// the tag to `master` in `pkg/asset/manifests/gcp/cluster.go`). The bootstrap VM
/// `<infra_id>-bootstrap` sits in the first zone's group ("During bootstrap the bootstrap
/// machine is placed in one of the master instance groups", openshift/cloud-provider-gcp
/// `gce_loadbalancer_internal_openshift.go`); it is no Node.
pub fn installer_machines(
    infra_id: &str,
    region: &str,
    control_plane_subnet: &str,
    compute_subnet: &str,
) -> (Vec<InstanceSeed>, Vec<InstanceGroupSeed>) {
    let mut instances = Vec::new();
    let mut groups = Vec::new();
    for (i, zone) in region_zones(region).into_iter().enumerate() {
        let master = format!("{infra_id}-master-{i}");
        let suffix = zone.rsplit('-').next().unwrap_or("a");
        instances.push(InstanceSeed {
            name: master.clone(),
            zone: zone.clone(),
            subnetwork: control_plane_subnet.into(),
            node: true,
            network_ip: None,
        });
        instances.push(InstanceSeed {
            name: format!("{infra_id}-worker-{suffix}-x7k2p"),
            zone: zone.clone(),
            subnetwork: compute_subnet.into(),
            node: true,
            network_ip: None,
        });
        let mut members = vec![master];
        if i == 0 {
            let bootstrap = format!("{infra_id}-bootstrap");
            instances.push(InstanceSeed {
                name: bootstrap.clone(),
                zone: zone.clone(),
                subnetwork: control_plane_subnet.into(),
                node: false,
                network_ip: None,
            });
            members.push(bootstrap);
        }
        groups.push((zone.clone(), format!("{infra_id}-master-{zone}"), members));
    }
    (instances, groups)
}

/// A region's address quota limits; usage is what the fake holds.
#[derive(Debug, Clone, Copy)]
pub struct AddressQuotas {
    /// `STATIC_ADDRESSES`: regional external static addresses.
    pub static_addresses: u32,
    /// `INTERNAL_ADDRESSES`: regional internal addresses.
    pub internal_addresses: u32,
}

impl Default for AddressQuotas {
    /// Raised quotas (a fresh project gets 8 static addresses): one fake holds twenty
    /// clusters in `many_clusters`.
    fn default() -> Self {
        Self {
            static_addresses: 100,
            internal_addresses: 200,
        }
    }
}

impl Default for Seed {
    fn default() -> Self {
        let subnet = |name: &str, cidr: [u8; 4], prefix| SubnetSeed {
            name: name.into(),
            project: None,
            network: "mycluster-network".into(),
            cidr: Ipv4Addr::from(cidr),
            prefix,
        };
        let zone = |name: &str, dns: &str, private| ZoneSeed {
            name: name.into(),
            dns_name: dns.into(),
            private,
            project: None,
        };
        Self {
            project: "example-project".into(),
            region: DEFAULT_REGION.into(),
            network: "mycluster-network".into(),
            subnetworks: vec![
                subnet("mycluster-master-subnet", [10, 0, 0, 0], 17),
                subnet("mycluster-worker-subnet", [10, 0, 128, 0], 17),
            ],
            zones: vec![
                zone("example-com", "example.com.", false),
                zone(
                    "mycluster-7xk2p-private-zone",
                    "mycluster.example.com.",
                    true,
                ),
                // A public zone with the cluster's name: only visibility tells them apart.
                zone(
                    "mycluster-example-com-public",
                    "mycluster.example.com.",
                    false,
                ),
            ],
            external_pool: (Ipv4Addr::new(198, 51, 100, 0), 24),
            cloud_config_subnetwork: "mycluster-worker-subnet".into(),
            quotas: AddressQuotas::default(),
            infra_id: "mycluster-7xk2p".into(),
            default_network_tier: "PREMIUM".into(),
            instances: Vec::new(),
            instance_groups: Vec::new(),
        }
        .with_installer_machines()
    }
}

impl Seed {
    /// The network the installer makes when the install-config names none (fixture
    /// `gcp-default-network`): `<infra-id>-network` with `<infra-id>-master-subnet` and
    /// `<infra-id>-worker-subnet`, laid out like the default seed's.
    pub fn installer_network() -> Self {
        let network = "mycluster-7xk2p-network".to_string();
        let defaults = Self::default();
        Self {
            subnetworks: defaults
                .subnetworks
                .iter()
                .map(|subnet| SubnetSeed {
                    name: subnet.name.replace("mycluster-", "mycluster-7xk2p-"),
                    network: network.clone(),
                    ..subnet.clone()
                })
                .collect(),
            network,
            ..defaults
        }
        .with_installer_machines()
    }

    /// [`installer_machines`] in this seed's control-plane (first) and compute (second)
    /// subnetworks, at the addresses [`BOOTSTRAP_HOST`] and its neighbours name.
    fn with_installer_machines(mut self) -> Self {
        let name = |i: usize| {
            self.subnetworks
                .get(i)
                .map(|s| s.name.clone())
                .unwrap_or_default()
        };
        let (mut instances, groups) =
            installer_machines(&self.infra_id, &self.region, &name(0), &name(1));
        let (mut masters, mut workers) = (0, 0);
        for vm in &mut instances {
            let role = vm.name.trim_start_matches(&format!("{}-", self.infra_id));
            let (subnet, host) = if role == "bootstrap" {
                (0, BOOTSTRAP_HOST)
            } else if role.starts_with("master-") {
                masters += 1;
                (0, MASTER_HOST + masters - 1)
            } else {
                workers += 1;
                (1, WORKER_HOST + workers - 1)
            };
            vm.network_ip = self.subnetworks.get(subnet).and_then(|s| {
                let (first, last) = ipam::usable(s);
                let ip = u32::from(s.cidr).checked_add(host)?;
                (first..=last).contains(&ip).then(|| Ipv4Addr::from(ip))
            });
        }
        self.instances = instances;
        self.instance_groups = groups;
        self
    }

    /// Another cluster of the same project, as its installer left it for the agent: its
    /// per-zone master instance groups and its bootstrap VM at `bootstrap_ip` (preflight's
    /// `instance-groups` line and the bootstrap-host lookup find them).
    pub fn add_installer_bootstrap(&mut self, infra_id: &str, bootstrap_ip: Ipv4Addr) {
        let name = |i: usize| {
            self.subnetworks
                .get(i)
                .map(|s| s.name.clone())
                .unwrap_or_default()
        };
        let (vms, groups) = installer_machines(infra_id, &self.region, &name(0), &name(1));
        let bootstrap = vms
            .into_iter()
            .filter(|vm| vm.name == format!("{infra_id}-bootstrap"))
            .map(|vm| InstanceSeed {
                network_ip: Some(bootstrap_ip),
                ..vm
            });
        self.instances.extend(bootstrap);
        self.instance_groups.extend(groups);
    }
}

impl Seed {
    /// Shared VPC (fixture `gcp-shared-vpc`): the network `shared-vpc` and its subnetworks
    /// `ocp-control-plane` and `ocp-compute` belong to the host project
    /// [`SHARED_VPC_HOST_PROJECT`]; addresses and zones stay in the service project (the
    /// default seed's `example-project`). The service project holds no subnetwork.
    pub fn shared_vpc() -> Self {
        let defaults = Self::default();
        let names = ["ocp-control-plane", "ocp-compute"];
        Self {
            subnetworks: defaults
                .subnetworks
                .iter()
                .zip(names)
                .map(|(subnet, name)| SubnetSeed {
                    name: name.into(),
                    project: Some(SHARED_VPC_HOST_PROJECT.into()),
                    network: "shared-vpc".into(),
                    ..subnet.clone()
                })
                .collect(),
            network: "shared-vpc".into(),
            cloud_config_subnetwork: "ocp-compute".into(),
            ..defaults
        }
        .with_installer_machines()
    }

    /// Shared VPC with the private zone in a third project (fixture
    /// `gcp-private-zone-project`): [`Seed::shared_vpc`], but the cluster's private zone is
    /// `mycluster-private-zone` of [`DNS_PROJECT`] (bound to the host project's network); the
    /// service project keeps only the public zones.
    pub fn private_zone_in_dns_project() -> Self {
        let mut seed = Self::shared_vpc();
        seed.zones.retain(|z| !z.private);
        seed.zones.push(ZoneSeed {
            name: "mycluster-private-zone".into(),
            dns_name: "mycluster.example.com.".into(),
            private: true,
            project: Some(DNS_PROJECT.into()),
        });
        seed
    }

    /// The subnetwork named `name`.
    pub(crate) fn subnetwork(&self, name: &str) -> Option<&SubnetSeed> {
        self.subnetworks.iter().find(|s| s.name == name)
    }

    /// The project holding `subnet`.
    pub(crate) fn subnet_project<'a>(&'a self, subnet: &'a SubnetSeed) -> &'a str {
        subnet.project.as_deref().unwrap_or(&self.project)
    }
}

/// The region of every seed here.
pub const DEFAULT_REGION: &str = "us-central1";

/// The Shared VPC host project of [`Seed::shared_vpc`].
pub const SHARED_VPC_HOST_PROJECT: &str = "example-host-project";

/// The project holding the private zone of [`Seed::private_zone_in_dns_project`].
pub const DNS_PROJECT: &str = "example-dns-project";

#[derive(Debug, Clone, Default)]
pub struct FakeOptions {
    /// How long a compute Operation stays RUNNING.
    pub operation_delay: Duration,
    /// How long a DNS Change stays `pending`.
    pub change_delay: Duration,
    pub seed: Seed,
    /// IAM permissions the caller lacks on every project: the calls needing one are refused
    /// (see `authz`).
    pub denied: Vec<String>,
    /// Per project, the IAM permissions the caller holds there, as Cloud Resource Manager's
    /// `projects.testIamPermissions` answers them and every call is checked against (see
    /// `authz`); a project not listed grants every one.
    pub granted: BTreeMap<String, Vec<String>>,
    /// The internal load balancers' node health check interval: their backends pass only
    /// after the first check (see `load_balancers`; GCE's `k8s-<cluster-id>-node`: 8 s).
    pub health_check_interval: Duration,
}

impl FakeOptions {
    /// Small delays, so clients must really poll.
    pub fn realistic() -> Self {
        Self {
            operation_delay: Duration::from_millis(150),
            change_delay: Duration::from_millis(100),
            seed: Seed::default(),
            denied: Vec::new(),
            granted: BTreeMap::new(),
            health_check_interval: Duration::from_secs(8),
        }
    }
}

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
    fn lock(&self) -> std::sync::MutexGuard<'_, World> {
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

impl Drop for GcpFake {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The GCP world for tests and the demo: one fake, a counting proxy for compute and one for
/// DNS (so compute and DNS mutations can be counted and frozen separately, like EC2/Route53).
pub struct GcpPeers {
    pub fake: GcpFake,
    pub compute_proxy: Proxy,
    pub dns_proxy: Proxy,
}

crate::proxy::counting_proxies!(GcpPeers: compute_proxy, dns_proxy);

impl GcpPeers {
    pub async fn start(options: FakeOptions) -> Result<Self> {
        let fake = GcpFake::start(options).await?;
        let compute_proxy = Proxy::start(fake.addr, Service::Google).await?;
        let dns_proxy = Proxy::start(fake.addr, Service::Google).await?;
        Ok(Self {
            fake,
            compute_proxy,
            dns_proxy,
        })
    }

    /// Environment for the agent: both endpoints through the proxies (Resource Manager, which
    /// preflight only asks, straight to the fake). They are plain `http://` URLs, so the agent
    /// calls them with anonymous credentials and never looks for Application Default
    /// Credentials.
    pub fn agent_env(&self) -> Vec<(String, String)> {
        vec![
            (
                "BOOTSTRAP_AGENT_GCP_RESOURCE_MANAGER_ENDPOINT".into(),
                self.fake.url(),
            ),
            (
                "BOOTSTRAP_AGENT_GCP_COMPUTE_ENDPOINT".into(),
                self.compute_proxy.url(),
            ),
            (
                "BOOTSTRAP_AGENT_GCP_DNS_ENDPOINT".into(),
                self.dns_proxy.url(),
            ),
            (
                // The agent runs on this machine, not on the bootstrap VM: the cloud gives
                // the VM its second address, and nothing here brings it up (as the wire
                // proof is routed with --wire-dial-override).
                "BOOTSTRAP_AGENT_BOOTSTRAP_SECOND_ADDRESS".into(),
                "cloud".into(),
            ),
        ]
    }

    /// What the local API server's load-balancer controller knows of this cloud: the range of
    /// the cloud-config subnetwork internal forwarding rules must take their address from, and
    /// the fake itself (instance groups, addresses; see `kube::lb::gce`).
    pub fn lb_cloud(&self) -> crate::kube::CloudOptions {
        crate::kube::CloudOptions {
            gcp_compute_subnet: self.fake.cloud_config_subnet_range(),
            addresses: Some(self.fake.address_book()),
            gcp: Some(self.fake.lb_view()),
            ..Default::default()
        }
    }

    /// What exists now: `{addresses: [{name, ip, status, addressType, purpose, subnetwork,
    /// labels}], bootstrap_host: {name, addresses: [nic0's networkIP, then each alias's
    /// address]}, instances: {name: [addresses, likewise]}, zones: {public, private: {"name
    /// TYPE": [values]}}}` (public = the `example.com.` zone, private = the cluster's private
    /// zone; the bootstrap host is the VM `<infra-id>-bootstrap`; addresses as `instances.get`
    /// shows them; `instances`: every VM of the fake).
    pub fn inspect(&self) -> Value {
        let addresses: Vec<Value> = self
            .fake
            .addresses()
            .into_iter()
            .map(|a| {
                json!({"name": a["name"], "ip": a["address"], "status": a["status"],
                       "addressType": a["addressType"], "purpose": a["purpose"],
                       "subnetwork": a["subnetwork"], "labels": a["labels"]})
            })
            .collect();
        let zone = |name: &str| -> Value {
            let records: serde_json::Map<String, Value> = self
                .fake
                .records(name)
                .into_iter()
                .filter(|(k, _)| k.ends_with(" A") || k.ends_with(" AAAA"))
                .map(|(k, v)| (k, json!(v)))
                .collect();
            Value::Object(records)
        };
        let bootstrap = format!("{}-bootstrap", self.fake.seed().infra_id);
        let bootstrap_addresses: Vec<String> = self
            .fake
            .instance_addresses(&bootstrap)
            .iter()
            .map(ToString::to_string)
            .collect();
        let instances: serde_json::Map<String, Value> = self
            .fake
            .all_instance_addresses()
            .into_iter()
            .map(|(name, ips)| {
                let ips: Vec<String> = ips.iter().map(ToString::to_string).collect();
                (name, json!(ips))
            })
            .collect();
        json!({
            "addresses": addresses,
            "bootstrap_host": {"name": bootstrap, "addresses": bootstrap_addresses},
            "instances": instances,
            "zones": {
                "public": zone("example-com"),
                "private": zone("mycluster-7xk2p-private-zone"),
                // Seed::private_zone_in_dns_project's, in the third project.
                "private_in_dns_project": zone("mycluster-private-zone"),
            }
        })
    }
}
