//! What cloud-provider-azure reads and writes of the fake besides the public IPs' addresses
//! (see [`AzureLbView`]): the cluster's network security group, an adopted public IP's SKU,
//! and who holds a private address. Each refusal is ARM's or the provider's, in the
//! `<code>: <message>` form the other refusals of the simulated controller use.

use super::world::{CLUSTER_RG, World, rg_id};
use super::{AzureLbView, AzureSim, lock};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr};

/// The fixture's infra id (`<infra>-nsg`, `<infra>-internal`).
const INFRA_ID: &str = "mycluster-7xk2p";

/// The cloud config's `securityGroupName`: the installer's `<infra>-nsg`, in
/// `securityGroupResourceGroup`, which defaults to `resourceGroup` (the cluster's;
/// kubernetes-sigs/cloud-provider-azure `pkg/provider/azure.go`).
pub const SECURITY_GROUP: &str = "mycluster-7xk2p-nsg";

/// The id of the cluster's load balancer (`<infra>` public, `<infra>-internal` internal) in
/// the cluster's resource group, as cloud-provider-azure names them (`getAzureLoadBalancerName`;
/// OpenShift runs it with `--cluster-name=<infra>`).
pub fn load_balancer_id(internal: bool) -> String {
    let suffix = if internal { "-internal" } else { "" };
    format!(
        "{}/providers/Microsoft.Network/loadBalancers/{INFRA_ID}{suffix}",
        rg_id(CLUSTER_RG)
    )
}

/// An adopted public IP as the provider finds it by address.
#[derive(Clone, Debug)]
pub struct FoundPublicIp {
    pub id: String,
    pub sku: String,
    pub allocation: String,
    /// The id of the ipConfiguration using it, if any.
    pub ip_configuration: Option<String>,
}

impl World {
    pub(super) fn nsg_key(name: &str) -> String {
        format!("{}/{}", CLUSTER_RG, name).to_ascii_lowercase()
    }
}

impl AzureSim {
    /// The public IP `name` of resource group `rg` as ARM's GET shows it (etag, tags, SKU,
    /// address, what holds it): what a user reads of their own.
    pub fn public_ip_resource(&self, rg: &str, name: &str) -> Option<Value> {
        let mut w = lock(&self.world);
        w.tick();
        let pip = w
            .public_ips
            .values()
            .find(|p| p.rg.eq_ignore_ascii_case(rg) && p.name.eq_ignore_ascii_case(name))?;
        Some(w.public_ip_json(pip))
    }

    /// Deletes the cluster's network security group (a user who removed it, or a cloud config
    /// naming one that does not exist).
    pub fn remove_security_group(&self) {
        lock(&self.world)
            .security_groups
            .remove(&World::nsg_key(SECURITY_GROUP));
    }

    /// The rules the service controller added to the cluster's network security group, as
    /// `{name, access, direction, protocol, sourceAddressPrefix, destinationAddressPrefixes,
    /// destinationPortRanges}`; None when the group does not exist.
    pub fn security_rules(&self) -> Option<Vec<Value>> {
        lock(&self.world)
            .security_groups
            .get(&World::nsg_key(SECURITY_GROUP))
            .map(|rules| {
                rules
                    .values()
                    .map(|r| {
                        let mut flat = r["properties"].clone();
                        flat["name"] = r["name"].clone();
                        flat
                    })
                    .collect()
            })
    }

    /// Makes the public IP holding `ip` Basic (a user's older address) with `allocation`
    /// (`Static` or `Dynamic`).
    pub fn set_public_ip_sku(&self, ip: IpAddr, sku: &str, allocation: &str) {
        let mut w = lock(&self.world);
        if let Some(pip) = w.public_ips.values_mut().find(|p| p.ip == Some(ip)) {
            pip.sku = sku.into();
            pip.allocation = allocation.into();
        }
    }

    /// The SKU of the public IP holding `ip`.
    pub fn public_ip_sku(&self, ip: IpAddr) -> Option<String> {
        let w = lock(&self.world);
        w.public_ips
            .values()
            .find(|p| p.ip == Some(ip))
            .map(|p| p.sku.clone())
    }

    /// Gives the public IP holding `ip` to another resource's ipConfiguration `by`.
    pub fn attach_public_ip(&self, ip: IpAddr, by: &str) {
        let mut w = lock(&self.world);
        if let Some(pip) = w.public_ips.values_mut().find(|p| p.ip == Some(ip)) {
            pip.ip_configuration = Some(by.into());
        }
    }
}

impl AzureLbView {
    /// The cloud config's network security group exists. Else the provider's own error
    /// (`securityGroupRepo.GetSecurityGroup`, `pkg/provider/securitygroup/
    /// azure_securitygroup_repo.go`), which `reconcileSecurityGroup` returns unwrapped.
    pub fn security_group(&self) -> Result<(), String> {
        let w = lock(&self.world);
        if w.security_groups
            .contains_key(&World::nsg_key(SECURITY_GROUP))
        {
            Ok(())
        } else {
            Err(format!("nsg \"{SECURITY_GROUP}\" not found"))
        }
    }

    /// Adds `destinations` to the rule `name` allowing `source` on `ports` (TCP), creating
    /// it when missing. As the provider writes a rule (`SetDestinationPrefixes`,
    /// `pkg/provider/securitygroup/securityrule.go:125-134`, openshift/cloud-provider-azure
    /// d04449b95a54): one destination is `destinationAddressPrefix`, several are
    /// `destinationAddressPrefixes` (sorted, no duplicates); `sourcePortRange` `*`; the
    /// first priority from 500 (`consts.LoadBalancerMinimumPriority`).
    pub fn allow_inbound(&self, name: &str, source: &str, destinations: &[String], ports: &[i64]) {
        let mut w = lock(&self.world);
        let Some(rules) = w.security_groups.get_mut(&World::nsg_key(SECURITY_GROUP)) else {
            return;
        };
        let ports: Vec<String> = ports.iter().map(ToString::to_string).collect();
        let priority = 500 + rules.len();
        let rule = rules.entry(name.to_string()).or_insert_with(|| {
            json!({"name": name, "properties": {
                "access": "Allow", "direction": "Inbound", "protocol": "Tcp",
                "priority": priority, "sourcePortRange": "*", "sourceAddressPrefix": source,
                "destinationPortRanges": ports}})
        });
        let mut all = rule_destinations(rule);
        all.extend(destinations.iter().cloned());
        set_destinations(rule, all);
    }

    /// Takes `ip` out of every rule's destinations (its Service is gone); a rule left with
    /// none goes (`CleanSecurityGroup`).
    pub fn remove_destination(&self, ip: &str) {
        let mut w = lock(&self.world);
        let Some(rules) = w.security_groups.get_mut(&World::nsg_key(SECURITY_GROUP)) else {
            return;
        };
        for rule in rules.values_mut() {
            let kept: Vec<String> = rule_destinations(rule)
                .into_iter()
                .filter(|d| d != ip)
                .collect();
            set_destinations(rule, kept);
        }
        rules.retain(|_, r| !rule_destinations(r).is_empty());
    }

    /// The public IP of resource group `rg` holding `ip`.
    pub fn public_ip(&self, rg: &str, ip: &str) -> Option<FoundPublicIp> {
        let mut w = lock(&self.world);
        w.tick();
        w.public_ips
            .values()
            .filter(|p| p.rg.eq_ignore_ascii_case(rg))
            .find(|p| p.ip.is_some_and(|held| held.to_string() == ip))
            .map(|p| FoundPublicIp {
                id: super::public_ip::pip_id(&p.rg, &p.name),
                sku: p.sku.clone(),
                allocation: p.allocation.clone(),
                ip_configuration: p.ip_configuration.clone(),
            })
    }

    /// The PUT the provider makes of an adopted public IP that is not Standard
    /// (`ensurePublicIPExists` sets the SKU to Standard): ARM upgrades a Static one that
    /// nothing uses (the upgrade keeps the address and cannot be undone; Microsoft's "Upgrade
    /// a public IP address" guide), and refuses a Dynamic one (a Standard public IP must be
    /// Static) or one in use by another resource.
    pub fn upgrade_to_standard(&self, id: &str, lb_frontend: &str) -> Result<(), String> {
        let mut w = lock(&self.world);
        let Some(pip) = w
            .public_ips
            .values_mut()
            .find(|p| super::public_ip::pip_id(&p.rg, &p.name).eq_ignore_ascii_case(id))
        else {
            return Ok(());
        };
        if let Some(user) = pip
            .ip_configuration
            .as_deref()
            .filter(|u| !u.eq_ignore_ascii_case(lb_frontend))
        {
            // The message of a real refusal (MicrosoftDocs/azure-docs#76317).
            return Err(format!(
                "PublicIPAddressInUseCannotUpdate: Public IP address {id} is in use by ipconfig {user} and cannot be updated."
            ));
        }
        if pip.allocation != "Static" {
            // The fake's PUT refuses the same (`public_ip`).
            return Err(format!(
                "StandardSkuPublicIPAddressesMustBeStatic: Standard sku publicIp {id} must have AllocationMethod set to Static."
            ));
        }
        pip.sku = "Standard".into();
        Ok(())
    }

    /// The ipConfiguration holding the private `ip` (a NIC's), or the virtual network when
    /// something the fake does not model holds it; None when it is free.
    pub fn private_ip_holder(&self, ip: Ipv4Addr) -> Option<String> {
        let w = lock(&self.world);
        w.nic_holding(ip).or_else(|| {
            w.in_use.contains(&ip).then(|| {
                format!(
                    "{}/providers/Microsoft.Network/virtualNetworks/{}",
                    rg_id(&w.vnet.rg),
                    w.vnet.name
                )
            })
        })
    }
}

/// A security rule's destination prefixes, from either of its two fields.
fn rule_destinations(rule: &Value) -> Vec<String> {
    let p = &rule["properties"];
    let many = p["destinationAddressPrefixes"]
        .as_array()
        .into_iter()
        .flatten();
    many.chain(
        p["destinationAddressPrefix"]
            .as_str()
            .map(|_| &p["destinationAddressPrefix"]),
    )
    .filter_map(|v| v.as_str().map(str::to_string))
    .collect()
}

/// `SetDestinationPrefixes`: one prefix in `destinationAddressPrefix`, several (sorted, no
/// duplicates) in `destinationAddressPrefixes`, none: neither.
fn set_destinations(rule: &mut Value, mut prefixes: Vec<String>) {
    prefixes.sort();
    prefixes.dedup();
    let Some(p) = rule["properties"].as_object_mut() else {
        return;
    };
    p.remove("destinationAddressPrefix");
    p.remove("destinationAddressPrefixes");
    match prefixes.as_slice() {
        [] => {}
        [one] => {
            p.insert("destinationAddressPrefix".into(), json!(one));
        }
        _ => {
            p.insert("destinationAddressPrefixes".into(), json!(prefixes));
        }
    }
}
