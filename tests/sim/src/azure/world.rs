//! The fake's state: the fixture's resource groups, virtual network, zones and constants.
//! What each resource type does lives next door: `arm` (routing, the request and the answer,
//! the ARM error envelope), `public_ip` (public IPs and their long-running operations),
//! `network` (subnets, CheckIPAddressAvailability), `dns` (zones and record sets with ETags),
//! `tags` (resource-group tags), `resource_groups` (the subscription's list of them),
//! `authorization` (role assignments, permissions, the subscription), `usages` (the region's
//! network usages and public IP limits).

use super::dns::DnsZone;
use super::network::{Subnet, VirtualNetwork};
use super::public_ip::{Operation, PublicIp};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

pub const SUBSCRIPTION: &str = "00000000-0000-0000-0000-000000000001";
pub const CLIENT_ID: &str = "00000000-0000-0000-0000-000000000002";
pub const TENANT: &str = "00000000-0000-0000-0000-000000000003";
pub const CLIENT_SECRET: &str = "fixture-secret-DO-NOT-LOG";
pub const CLUSTER_RG: &str = "mycluster-7xk2p-rg";
pub const DNS_RG: &str = "dns-rg";
pub const NETWORK_RG: &str = "network-rg";
pub const VNET: &str = "mycluster-vnet";
pub const COMPUTE_SUBNET: &str = "mycluster-worker-subnet";
/// The network the installer makes when the install-config names none: in the cluster
/// resource group, named after the infra id.
pub const INSTALLER_VNET: &str = "mycluster-7xk2p-vnet";
pub const INSTALLER_COMPUTE_SUBNET: &str = "mycluster-7xk2p-worker-subnet";
pub const PUBLIC_ZONE: &str = "example.com";
pub const PRIVATE_ZONE: &str = "mycluster.example.com";
pub const LOCATION: &str = "eastus";

pub struct World {
    pub delay: Duration,
    pub retry_after: u64,
    pub page_size: usize,
    /// Bearer token -> what it was issued for (see `cloud`).
    pub tokens: BTreeMap<String, super::cloud::TokenInfo>,
    /// The fake's authority, `https://127.0.0.1:PORT` (what `/metadata/endpoints` names).
    pub login_origin: String,
    /// The cloud this fake is: which tokens its ARM accepts.
    pub cloud: super::cloud::SimCloud,
    pub resource_groups: BTreeMap<String, Map<String, Value>>,
    /// Lowercased resource id -> public IP.
    pub public_ips: BTreeMap<String, PublicIp>,
    pub(super) operations: BTreeMap<String, Operation>,
    pub vnet: VirtualNetwork,
    /// Private addresses marked taken by something the fake does not model (worker NICs,
    /// a user's VM): CheckIPAddressAvailability and NICs count them with the NICs' own.
    pub in_use: BTreeSet<Ipv4Addr>,
    /// Lowercased resource id -> network interface (see `nic`).
    pub nics: BTreeMap<String, super::nic::Nic>,
    /// (private?, rg lowercased, zone lowercased) -> zone.
    pub zones: BTreeMap<(bool, String, String), DnsZone>,
    /// The agent's role assignments (default: Contributor on the subscription).
    pub roles: Vec<super::authorization::RoleAssignment>,
    pub quota: super::usages::PublicIpQuota,
    /// A rival writer: each conditional record-set write first loses to one of these values
    /// (added to the set under a new ETag), as if someone wrote between read and write.
    pub rival_writes: Vec<IpAddr>,
    /// Rivals armed to claim the address of the agent's next private-IP claims, in order.
    pub rival_claims: Vec<super::resource_groups::RivalClaim>,
    /// Rivals that record the address a NIC's new secondary IP configuration was just given
    /// (see [`super::AzureSim::race_second_addresses`]).
    pub rival_second_addresses: Vec<super::resource_groups::RivalClaim>,
    pub(super) active_rivals: Vec<super::resource_groups::ActiveRival>,
    /// Network security groups by lowercased `<rg>/<name>`, each with its rules by name: the
    /// installer's `<infra-id>-nsg` in the cluster resource group (see `lb_view`).
    pub security_groups: BTreeMap<String, BTreeMap<String, Value>>,
    /// Their etags (ARM's `etag`, changed by each PUT), by the same key.
    pub security_group_etags: BTreeMap<String, String>,
    /// Lowercased resource id -> load balancer (see `load_balancers`).
    pub load_balancers: BTreeMap<String, super::load_balancers::LoadBalancer>,
    /// When a load balancer first served each address and port (see `load_balancers`).
    pub frontends_since: BTreeMap<(IpAddr, u16), std::time::Instant>,
    /// Lowercased resource id -> virtual machine (see `compute`).
    pub vms: BTreeMap<String, super::compute::Vm>,
    /// ResourceGroups_List answers 403 (the caller lacks the read permission).
    pub deny_resource_group_list: bool,
    pub(super) next_v4: u32,
    pub(super) next_v6: u16,
}

pub(super) fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

impl World {
    /// The fixture's world: resource groups, the vnet with its subnets, the two zones. The
    /// vnet is the `azure` fixture's existing one (`network-rg/mycluster-vnet`), or with
    /// `installer_network` the one the installer makes (`mycluster-7xk2p-vnet` in the cluster
    /// resource group, subnets `mycluster-7xk2p-master-subnet` / `-worker-subnet`); both
    /// have the same address layout. With `dual_stack` both subnets also have an IPv6 /64 of
    /// the `azure-dualstack` fixture's machine network `fd00:10::/48` (control plane `:1::`,
    /// compute `:2::`, as the installer splits it).
    pub fn fixture(delay: Duration, installer_network: bool, dual_stack: bool) -> Self {
        let v6 = |n: u16| dual_stack.then_some((Ipv6Addr::new(0xfd00, 0x10, 0, n, 0, 0, 0, 0), 64));
        let (vnet_rg, vnet, master, worker) = if installer_network {
            (
                CLUSTER_RG,
                INSTALLER_VNET,
                "mycluster-7xk2p-master-subnet",
                INSTALLER_COMPUTE_SUBNET,
            )
        } else {
            (NETWORK_RG, VNET, "mycluster-master-subnet", COMPUTE_SUBNET)
        };
        let mut resource_groups = BTreeMap::new();
        for rg in [CLUSTER_RG, DNS_RG, vnet_rg] {
            resource_groups.insert(rg.to_ascii_lowercase(), Map::new());
        }
        let mut zones = BTreeMap::new();
        zones.insert(
            (false, DNS_RG.into(), PUBLIC_ZONE.into()),
            DnsZone {
                etag: uuid(),
                ..Default::default()
            },
        );
        // Linked to the cluster's vnet, as the installer links it (`<infra-id>-network-link`).
        zones.insert(
            (true, CLUSTER_RG.into(), PRIVATE_ZONE.into()),
            DnsZone {
                etag: uuid(),
                links: vec![(
                    "mycluster-7xk2p-network-link".into(),
                    vnet_id(vnet_rg, vnet),
                )],
                ..Default::default()
            },
        );
        let mut world = Self {
            delay,
            retry_after: 1,
            page_size: 3,
            tokens: BTreeMap::new(),
            login_origin: String::new(),
            cloud: super::cloud::SimCloud::default(),
            resource_groups,
            public_ips: BTreeMap::new(),
            operations: BTreeMap::new(),
            vnet: VirtualNetwork {
                rg: vnet_rg.into(),
                name: vnet.into(),
                subnets: vec![
                    Subnet {
                        name: master.into(),
                        network: Ipv4Addr::new(10, 0, 0, 0),
                        len: 24,
                        ipv6: v6(1),
                    },
                    Subnet {
                        name: worker.into(),
                        network: Ipv4Addr::new(10, 0, 1, 0),
                        len: 24,
                        ipv6: v6(2),
                    },
                ],
            },
            // Worker NICs and something sitting on the top address (the bootstrap host's NIC,
            // holding 10.0.1.10, is added below).
            in_use: [
                Ipv4Addr::new(10, 0, 0, 4),
                Ipv4Addr::new(10, 0, 1, 4),
                Ipv4Addr::new(10, 0, 1, 5),
                Ipv4Addr::new(10, 0, 1, 254),
            ]
            .into_iter()
            .collect(),
            nics: BTreeMap::new(),
            zones,
            roles: vec![super::authorization::RoleAssignment::contributor()],
            quota: super::usages::PublicIpQuota::default(),
            rival_writes: Vec::new(),
            rival_claims: Vec::new(),
            rival_second_addresses: Vec::new(),
            active_rivals: Vec::new(),
            security_groups: [(
                format!("{CLUSTER_RG}/{}", super::lb_view::SECURITY_GROUP).to_ascii_lowercase(),
                BTreeMap::new(),
            )]
            .into_iter()
            .collect(),
            security_group_etags: BTreeMap::new(),
            load_balancers: BTreeMap::new(),
            vms: BTreeMap::new(),
            frontends_since: BTreeMap::new(),
            deny_resource_group_list: false,
            next_v4: 1,
            next_v6: 1,
        };
        world.add_bootstrap_nic();
        world
    }
}

pub fn rg_id(rg: &str) -> String {
    format!("/subscriptions/{SUBSCRIPTION}/resourceGroups/{rg}")
}

pub fn vnet_id(rg: &str, vnet: &str) -> String {
    format!(
        "{}/providers/Microsoft.Network/virtualNetworks/{vnet}",
        rg_id(rg)
    )
}
