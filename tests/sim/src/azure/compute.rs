//! What the fake shows of `Microsoft.Compute`: the provider's registration with its zones
//! (cloud-provider-azure's zone sync at start-up reads it, fatal on error: openshift/
//! cloud-provider-azure d04449b95a54 `pkg/provider/azure.go:497-508`, `azure_zones.go:49-64`,
//! vendor `sigs.k8s.io/cloud-provider-azure/pkg/azclient/providerclient/custom.go:45-62`) and
//! the cluster's virtual machines, one per Node, each with its primary NIC
//! (`azure_standard.go:816-874`: the provider finds a Node's NIC through its VM, named as
//! the Node; its node lifecycle controller deletes a Node whose VM is gone,
//! `azure_instances_v1.go:449-451`).
//!
//! A VM is `{id, name, type, location, zones, properties.{vmId, provisioningState,
//! hardwareProfile, storageProfile.osDisk.osType, osProfile.computerName,
//! networkProfile.networkInterfaces[{id, properties.primary}]}}` (azure-rest-api-specs
//! `specification/compute/.../virtualMachine.json`); `$expand=instanceView` adds the
//! provisioning and power states. A missing VM is 404 `ResourceNotFound`.

use super::arm::Reply;
use super::nic::{IpConfig, Nic, new_etag, nic_id};
use super::world::{LOCATION, SUBSCRIPTION, World, rg_id, uuid};
use serde_json::{Map, json};
use std::net::Ipv4Addr;

#[derive(Debug, Clone)]
pub struct Vm {
    pub rg: String,
    pub name: String,
    pub vm_id: String,
    /// Its one network interface (primary), by id.
    pub nic: String,
}

pub fn vm_id(rg: &str, name: &str) -> String {
    format!(
        "{}/providers/Microsoft.Compute/virtualMachines/{name}",
        rg_id(rg)
    )
}

impl World {
    /// A machine `name` in resource group `rg` whose NIC `<name>-nic` holds `ip` (Dynamic, in
    /// whichever subnet holds it; nothing when none does).
    pub(super) fn add_vm(&mut self, rg: &str, name: &str, ip: Ipv4Addr) {
        let Some(subnet) = self.vnet.subnets.iter().find(|s| s.contains(ip)) else {
            return;
        };
        let subnet = subnet.name.clone();
        let nic_name = format!("{name}-nic");
        let id = vm_id(rg, name);
        let nic = Nic {
            rg: rg.into(),
            name: nic_name.clone(),
            location: LOCATION.into(),
            tags: Map::new(),
            etag: new_etag(),
            guid: uuid(),
            state: "Succeeded".into(),
            mac: "00-0D-3A-4E-5F-60".into(),
            vm: Some(id.clone()),
            ipconfigs: vec![IpConfig {
                name: "pipConfig".into(),
                ip,
                allocation: "Dynamic".into(),
                primary: true,
                subnet,
                pools: Vec::new(),
            }],
        };
        let nic_ref = nic_id(rg, &nic_name);
        self.nics.insert(nic_ref.to_ascii_lowercase(), nic);
        self.vms.insert(
            id.to_ascii_lowercase(),
            Vm {
                rg: rg.into(),
                name: name.into(),
                vm_id: uuid(),
                nic: nic_ref,
            },
        );
    }

    /// Deletes the machine `name` and its NIC (a machine the cloud no longer has).
    pub(super) fn remove_vm(&mut self, rg: &str, name: &str) {
        if let Some(vm) = self.vms.remove(&vm_id(rg, name).to_ascii_lowercase()) {
            self.nics.remove(&vm.nic.to_ascii_lowercase());
        }
    }

    /// `GET .../Microsoft.Compute/virtualMachines/{name}`.
    pub(super) fn virtual_machine(&self, call: &super::arm::Call, rg: &str, name: &str) -> Reply {
        let Some(vm) = self.vms.get(&vm_id(rg, name).to_ascii_lowercase()) else {
            return Reply::error(
                404,
                "ResourceNotFound",
                format!(
                    "The Resource 'Microsoft.Compute/virtualMachines/{name}' under resource group '{rg}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix"
                ),
            );
        };
        let mut body = json!({
            "id": vm_id(&vm.rg, &vm.name),
            "name": vm.name,
            "type": "Microsoft.Compute/virtualMachines",
            "location": LOCATION,
            "zones": ["1"],
            "properties": {
                "vmId": vm.vm_id,
                "provisioningState": "Succeeded",
                "hardwareProfile": {"vmSize": "Standard_D8s_v3"},
                "storageProfile": {"osDisk": {"osType": "Linux", "name": format!("{}_OSDisk", vm.name)}},
                "osProfile": {"computerName": vm.name, "adminUsername": "core"},
                "networkProfile": {"networkInterfaces": [
                    {"id": vm.nic, "properties": {"primary": true}}
                ]},
            },
        });
        let expand = call.query.get("$expand").map(String::as_str);
        if expand.is_some_and(|e| e.eq_ignore_ascii_case("instanceView")) {
            body["properties"]["instanceView"] = json!({
                "computerName": vm.name,
                "statuses": [
                    {"code": "ProvisioningState/succeeded", "level": "Info", "displayStatus": "Provisioning succeeded"},
                    {"code": "PowerState/running", "level": "Info", "displayStatus": "VM running"},
                ],
            });
        }
        Reply::json(200, body)
    }
}

impl super::AzureSim {
    /// A cluster machine `name` (a Node's VM, named as the Node) in the cluster resource
    /// group, its NIC `<name>-nic` holding `ip`.
    pub fn add_machine(&self, name: &str, ip: Ipv4Addr) {
        super::lock(&self.world).add_vm(super::CLUSTER_RG, name, ip);
    }

    /// Deletes the cluster machine `name` and its NIC.
    pub fn remove_machine(&self, name: &str) {
        super::lock(&self.world).remove_vm(super::CLUSTER_RG, name);
    }
}

/// `GET /subscriptions/{id}/providers/Microsoft.Compute`: registered, with the region's
/// zones for virtual machines.
pub(super) fn compute_provider() -> Reply {
    let region = "East US";
    Reply::json(
        200,
        json!({
            "id": format!("/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute"),
            "namespace": "Microsoft.Compute",
            "registrationState": "Registered",
            "registrationPolicy": "RegistrationRequired",
            "resourceTypes": [
                {
                    "resourceType": "virtualMachines",
                    "locations": [region],
                    "zoneMappings": [{"location": region, "zones": ["1", "2", "3"]}],
                    "apiVersions": ["2025-04-01", "2024-07-01", "2021-04-01"],
                    "capabilities": "CrossResourceGroupResourceMove, SupportsTags, SupportsLocation"
                },
                {
                    "resourceType": "availabilitySets",
                    "locations": [region],
                    "apiVersions": ["2025-04-01"],
                }
            ]
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_has_its_nic_and_loses_it_with_the_machine() {
        let mut w = World::fixture(std::time::Duration::ZERO, false, false);
        w.add_vm("mycluster-7xk2p-rg", "master-0", Ipv4Addr::new(10, 0, 0, 5));
        assert_eq!(
            w.nic_addresses("master-0-nic"),
            [Ipv4Addr::new(10, 0, 0, 5)]
        );
        w.remove_vm("MyCluster-7xk2p-RG", "master-0");
        assert!(w.nic_addresses("master-0-nic").is_empty());
        assert!(w.vms.is_empty());
    }

    #[test]
    fn the_compute_provider_lists_the_regions_zones_for_machines() {
        let body = compute_provider().body.unwrap_or_default();
        let vms = &body["resourceTypes"][0];
        assert_eq!(vms["resourceType"], "virtualMachines");
        assert_eq!(vms["zoneMappings"][0]["zones"], json!(["1", "2", "3"]));
    }
}
