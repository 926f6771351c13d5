//! `Microsoft.Network/networkInterfaces` in the fake: the bootstrap VM's NIC as the installer
//! makes it, GET, and the PUT that replaces a NIC whole (ARM semantics; see `nic_put`). The
//! shape is the NetworkInterface of azure-rest-api-specs
//! `specification/network/resource-manager/Microsoft.Network/stable/*/networkInterface.json`
//! (as azure-mgmt-network 33.1.0 models it): `id`, `name`, `type`, `location`, `tags`, `etag`,
//! `properties.{provisioningState, resourceGuid, ipConfigurations[], macAddress, primary,
//! enableAcceleratedNetworking, enableIPForwarding, virtualMachine, nicType}`, each
//! ipConfiguration with `id`, `name`, `etag`, `type` and `properties.{privateIPAddress,
//! privateIPAllocationMethod, privateIPAddressVersion, primary, subnet.id,
//! provisioningState}`.
//!
//! The installer's bootstrap machine is the CAPZ AzureMachine `<infra-id>-bootstrap`
//! (openshift/installer `pkg/asset/machines/azure/azuremachines.go`), whose NIC CAPZ names
//! `<machine>-nic` (`azure/defaults.go` `GenerateNICName`) with one Dynamic ipConfiguration
//! `pipConfig` (`azure/services/networkinterfaces/spec.go`), in the cluster resource group.
//! The installer puts the machine in the control-plane subnet; the fixture's world has always
//! had the bootstrap host at 10.0.1.10 (the bootstrap IP every test passes the agent), which
//! is in its compute subnet, so the fake's NIC sits in whichever subnet holds 10.0.1.10.

use super::arm::Reply;
use super::world::{CLUSTER_RG, SUBSCRIPTION, World, rg_id, uuid};
use serde_json::{Map, Value, json};
use std::net::Ipv4Addr;

/// The bootstrap host's private address in the fixture's world.
pub const BOOTSTRAP_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 10);
/// The fixture's infra id.
const INFRA_ID: &str = "mycluster-7xk2p";
/// The bootstrap VM's network interface (`<infra-id>-bootstrap-nic`).
pub const BOOTSTRAP_NIC: &str = "mycluster-7xk2p-bootstrap-nic";
/// Its primary ipConfiguration, as CAPZ names it.
pub const BOOTSTRAP_IPCONFIG: &str = "pipConfig";

#[derive(Debug, Clone)]
pub struct IpConfig {
    pub name: String,
    pub ip: Ipv4Addr,
    /// `Dynamic` or `Static`.
    pub allocation: String,
    pub primary: bool,
    /// The subnet's name (of the world's one virtual network).
    pub subnet: String,
    /// The load balancers' backend pools (ids as sent) this ipConfiguration is a member of
    /// (`loadBalancerBackendAddressPools`): the pools list it in `backendIPConfigurations`.
    pub pools: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Nic {
    pub rg: String,
    pub name: String,
    pub location: String,
    pub tags: Map<String, Value>,
    pub etag: String,
    pub guid: String,
    /// `Updating` until the PUT's operation is done, then `Succeeded`.
    pub state: String,
    pub mac: String,
    /// The VM the NIC is attached to (read-only in the API).
    pub vm: Option<String>,
    pub ipconfigs: Vec<IpConfig>,
}

pub fn nic_id(rg: &str, name: &str) -> String {
    format!(
        "{}/providers/Microsoft.Network/networkInterfaces/{name}",
        rg_id(rg)
    )
}

pub fn new_etag() -> String {
    format!("W/\"{}\"", uuid())
}

impl World {
    /// The bootstrap VM's NIC `<infra-id>-bootstrap-nic` in the cluster resource group, as
    /// CAPZ makes it (see the module doc).
    pub(super) fn add_bootstrap_nic(&mut self) {
        self.add_nic(CLUSTER_RG, INFRA_ID, BOOTSTRAP_IP);
    }

    /// The bootstrap VM `<infra_id>-bootstrap` of another cluster: its NIC
    /// `<infra_id>-bootstrap-nic` in resource group `rg`, holding `ip` (in whichever subnet
    /// holds it; none when no subnet does), as CAPZ makes it.
    pub(super) fn add_nic(&mut self, rg: &str, infra_id: &str, ip: Ipv4Addr) {
        let Some(subnet) = self.vnet.subnets.iter().find(|s| s.contains(ip)) else {
            return;
        };
        let subnet = subnet.name.clone();
        let name = format!("{infra_id}-bootstrap-nic");
        let nic = Nic {
            rg: rg.into(),
            name: name.clone(),
            location: super::world::LOCATION.into(),
            tags: Map::new(),
            etag: new_etag(),
            guid: uuid(),
            state: "Succeeded".into(),
            mac: "00-0D-3A-1B-2C-3D".into(),
            vm: Some(format!(
                "{}/providers/Microsoft.Compute/virtualMachines/{infra_id}-bootstrap",
                rg_id(rg)
            )),
            ipconfigs: vec![IpConfig {
                name: BOOTSTRAP_IPCONFIG.into(),
                ip,
                allocation: "Dynamic".into(),
                primary: true,
                subnet,
                pools: Vec::new(),
            }],
        };
        self.nics
            .insert(nic_id(rg, &name).to_ascii_lowercase(), nic);
    }

    /// Whether a private address is taken: marked in use, held by a NIC's ipConfiguration
    /// or by a load balancer's frontend.
    pub fn private_ip_taken(&self, ip: Ipv4Addr) -> bool {
        self.in_use.contains(&ip)
            || self.nic_holding(ip).is_some()
            || self.frontend_holding(ip).is_some()
    }

    /// The id of the ipConfiguration holding `ip`, if a NIC's does.
    pub(super) fn nic_holding(&self, ip: Ipv4Addr) -> Option<String> {
        self.nics.values().find_map(|nic| {
            nic.ipconfigs
                .iter()
                .find(|c| c.ip == ip)
                .map(|c| format!("{}/ipConfigurations/{}", nic_id(&nic.rg, &nic.name), c.name))
        })
    }

    /// The private addresses of the NIC `name` (any resource group; ARM names are
    /// case-insensitive), primary ipConfiguration first. Empty when there is no such NIC.
    pub fn nic_addresses(&mut self, name: &str) -> Vec<Ipv4Addr> {
        self.tick();
        let Some(nic) = self
            .nics
            .values()
            .find(|n| n.name.eq_ignore_ascii_case(name))
        else {
            return Vec::new();
        };
        let mut configs: Vec<&IpConfig> = nic.ipconfigs.iter().collect();
        configs.sort_by_key(|c| !c.primary);
        configs.iter().map(|c| c.ip).collect()
    }

    pub(super) fn subnet_id(&self, subnet: &str) -> String {
        format!(
            "{}/providers/Microsoft.Network/virtualNetworks/{}/subnets/{subnet}",
            rg_id(&self.vnet.rg),
            self.vnet.name
        )
    }

    pub fn nic_json(&self, nic: &Nic) -> Value {
        let id = nic_id(&nic.rg, &nic.name);
        let configs: Vec<Value> = nic
            .ipconfigs
            .iter()
            .map(|c| {
                let pools: Vec<Value> = c.pools.iter().map(|p| json!({"id": p})).collect();
                json!({
                    "name": c.name,
                    "id": format!("{id}/ipConfigurations/{}", c.name),
                    "etag": nic.etag,
                    "type": "Microsoft.Network/networkInterfaces/ipConfigurations",
                    "properties": {
                        "provisioningState": nic.state,
                        "privateIPAddress": c.ip.to_string(),
                        "privateIPAllocationMethod": c.allocation,
                        "privateIPAddressVersion": "IPv4",
                        "primary": c.primary,
                        "subnet": {"id": self.subnet_id(&c.subnet)},
                        "loadBalancerBackendAddressPools": pools,
                    },
                })
            })
            .collect();
        let mut properties = json!({
            "provisioningState": nic.state,
            "resourceGuid": nic.guid,
            "ipConfigurations": configs,
            "dnsSettings": {"dnsServers": [], "appliedDnsServers": []},
            "macAddress": nic.mac,
            "primary": true,
            "enableAcceleratedNetworking": false,
            "vnetEncryptionSupported": false,
            "enableIPForwarding": false,
            "hostedWorkloads": [],
            "tapConfigurations": [],
            "nicType": "Standard",
            "auxiliaryMode": "None",
            "auxiliarySku": "None",
        });
        if let Some(vm) = &nic.vm {
            properties["virtualMachine"] = json!({"id": vm});
        }
        json!({
            "name": nic.name,
            "id": id,
            "etag": nic.etag,
            "type": "Microsoft.Network/networkInterfaces",
            "location": nic.location,
            "tags": nic.tags,
            "kind": "Regular",
            "properties": properties,
        })
    }

    /// `GET` (here) and `PUT` (`nic_put`) of `.../networkInterfaces/{name}`.
    pub(super) fn network_interface(
        &mut self,
        call: &super::arm::Call,
        rg: &str,
        name: &str,
    ) -> Reply {
        match call.method {
            "GET" => match self.nics.get(&nic_id(rg, name).to_ascii_lowercase()) {
                Some(nic) => Reply::json(200, self.nic_json(nic)),
                None => not_found(rg, name),
            },
            "PUT" => self.put_nic(call, rg, name),
            _ => Reply::error(405, "MethodNotAllowed", "method not allowed"),
        }
    }

    /// Completes a NIC's PUT: the NIC and its ipConfigurations are `Succeeded`.
    pub(super) fn nic_provisioned(&mut self, key: &str) {
        if let Some(nic) = self.nics.get_mut(key) {
            nic.state = "Succeeded".into();
            nic.etag = new_etag();
        }
    }
}

pub(super) fn not_found(rg: &str, name: &str) -> Reply {
    Reply::error(
        404,
        "ResourceNotFound",
        format!(
            "The Resource 'Microsoft.Network/networkInterfaces/{name}' under resource group '{rg}' was not found."
        ),
    )
}

/// The subscription's id prefix, for parsing subnet references.
pub(super) fn subscription_prefix() -> String {
    format!("/subscriptions/{SUBSCRIPTION}/")
}
