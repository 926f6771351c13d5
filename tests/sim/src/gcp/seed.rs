//! What the GCP fake starts with: its options (delays, IAM, health-check interval) and its
//! seed: the projects, the subnetworks and zones, the installer's VMs and instance groups,
//! the address quotas.

use super::ipam;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::time::Duration;

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
