//! `PUT .../networkInterfaces/{name}`: the NIC is replaced whole by the body (its
//! ipConfigurations are the body's), long-running like a public IP (`provisioningState`
//! `Updating`, then `Succeeded` after the world's delay; `Azure-AsyncOperation` and
//! `Retry-After` on the answer). The addresses are allocated at once and shown in the answer.
//!
//! Refused as Network Resource Provider refuses it (400 unless said):
//! - `If-Match` not the current etag, or `If-None-Match: *` on an existing NIC: 412
//!   `PreconditionFailed` (ARM's optimistic concurrency, as the DNS record sets here).
//! - several ipConfigurations and none primary: `NetworkInterfaceMustHaveOneOneIPConfigAsPrimary`,
//!   "Network Interface <name> specifies multiple IPConfigurations but none of the
//!   IPConfigurations is specified as Primary." (Azure/azure-sdk-for-go#259); more than one
//!   primary is refused with the same code. A single ipConfiguration is primary whatever the
//!   body says.
//! - the existing primary ipConfiguration missing from the body (deleted or renamed):
//!   `IpConfigDeleteNotSupported`, "IP Configuration <name> cannot be deleted. Deletion and
//!   renaming of primary IP Configuration is not supported" (ansible-collections/azure#1281).
//! - two ipConfigurations of one name: `DuplicateResourceName`, "Resource <nic id> has two
//!   child resources with the same name (<name>)."
//! - a subnet that does not exist (the fake's world has one virtual network, so a subnet of
//!   another network is one): `InvalidResourceReference`, "Resource <subnet id> referenced by
//!   resource <nic id> was not found. Please make sure that the referenced resource exists, and
//!   that both resources are in the same region." (Azure/azure-cli#13258). The same for a
//!   `loadBalancerBackendAddressPools` id naming no pool of an existing load balancer (the
//!   pool then lists the ipConfiguration in its `backendIPConfigurations`, see
//!   `load_balancers`).
//! - a Static address that is no IPv4 address: `InvalidPrivateIPAddressFormat`; outside its
//!   subnet: `PrivateIPAddressNotInSubnet`; one of the subnet's first four or last address:
//!   `PrivateIPAddressInReservedRange` (both codes in ARM's "common deployment errors" list);
//!   held by another ipConfiguration or marked in use: `PrivateIPAddressIsAllocated`, "IP
//!   configuration <id> is using the private IP address <ip> which is already allocated to
//!   resource <id>." (the message in Azure's private-endpoint troubleshooting page).
//! - a new ipConfiguration (or one moved to another subnet) needs
//!   `Microsoft.Network/virtualNetworks/subnets/join/action` on its subnet: ARM's linked access
//!   check, 403 `LinkedAuthorizationFailed` ("... has permission to perform action
//!   'Microsoft.Network/networkInterfaces/write' on scope '<nic>'; however, it does not have
//!   permission to perform action(s) 'Microsoft.Network/virtualNetworks/subnets/join/action'
//!   on the linked scope(s) '<subnet>' (respectively) or the linked scope(s) are invalid.").
//!
//! A Dynamic ipConfiguration keeps the address it has (same name, same subnet); a new one
//! gets the subnet's lowest address that is neither platform-reserved nor taken. IPv4 only.

use super::arm::{Call, Reply};
use super::nic::{IpConfig, Nic, new_etag, nic_id};
use super::world::{CLIENT_ID, World, uuid};
use serde_json::Value;
use std::net::Ipv4Addr;

/// One ipConfiguration of the body, before its address is settled.
struct Asked {
    /// Its place in the body: the NIC keeps the body's order.
    index: usize,
    name: String,
    subnet: String,
    allocation: String,
    ip: Option<String>,
    primary: bool,
    pools: Vec<String>,
}

fn bad_request(code: &str, message: String) -> Reply {
    Reply::error(400, code, message)
}

impl World {
    pub(super) fn put_nic(&mut self, call: &Call, rg: &str, name: &str) -> Reply {
        let key = nic_id(rg, name).to_ascii_lowercase();
        let existing = self.nics.get(&key).cloned();
        if let Some(refused) = precondition(call, existing.as_ref()) {
            return refused;
        }
        let body = match call.json() {
            Ok(b) => b,
            Err(r) => return r,
        };
        let Some(location) = body["location"].as_str() else {
            return bad_request(
                "LocationRequired",
                "The location property is required for this definition.".into(),
            );
        };
        let id = nic_id(rg, name);
        let asked = match self.parse_ipconfigs(&body, &id, name) {
            Ok(a) => a,
            Err(r) => return r,
        };
        if let Some(old) = &existing
            && let Some(primary) = old.ipconfigs.iter().find(|c| c.primary)
            && !asked
                .iter()
                .any(|a| a.name.eq_ignore_ascii_case(&primary.name))
        {
            return bad_request(
                "IpConfigDeleteNotSupported",
                format!(
                    "IP Configuration {} cannot be deleted. Deletion and renaming of primary IP Configuration is not supported",
                    primary.name
                ),
            );
        }
        if let Some(refused) = self.linked_access(&id, existing.as_ref(), &asked) {
            return refused;
        }
        let configs = match self.settle(&id, &key, existing.as_ref(), asked) {
            Ok(c) => c,
            Err(r) => return r,
        };
        let added: Vec<String> = configs
            .iter()
            .filter(|c| !c.primary)
            .filter(|c| {
                existing.as_ref().is_none_or(|e| {
                    !e.ipconfigs
                        .iter()
                        .any(|o| o.name.eq_ignore_ascii_case(&c.name))
                })
            })
            .map(|c| c.ip.to_string())
            .collect();
        for ip in &added {
            self.rival_on_second_address(ip);
        }
        let nic = Nic {
            rg: existing
                .as_ref()
                .map_or_else(|| rg.to_string(), |e| e.rg.clone()),
            name: existing
                .as_ref()
                .map_or_else(|| name.to_string(), |e| e.name.clone()),
            location: location.to_string(),
            tags: body["tags"].as_object().cloned().unwrap_or_default(),
            etag: new_etag(),
            guid: existing.as_ref().map_or_else(uuid, |e| e.guid.clone()),
            state: "Updating".into(),
            mac: existing
                .as_ref()
                .map_or_else(String::new, |e| e.mac.clone()),
            vm: existing.as_ref().and_then(|e| e.vm.clone()),
            ipconfigs: configs,
        };
        self.nics.insert(key.clone(), nic.clone());
        let body = self.nic_json(&nic);
        self.put_accepted(call, &key, location, existing.is_none(), body)
    }

    /// The body's ipConfigurations: names, subnets, allocation, the primary rule.
    fn parse_ipconfigs(&self, body: &Value, id: &str, name: &str) -> Result<Vec<Asked>, Reply> {
        let list = body["properties"]["ipConfigurations"]
            .as_array()
            .filter(|l| !l.is_empty())
            .ok_or_else(|| {
                bad_request(
                    "InvalidRequestFormat",
                    format!("Network interface {id} must have at least one IP configuration."),
                )
            })?;
        let mut asked: Vec<Asked> = Vec::new();
        for c in list {
            let config_name = c["name"].as_str().unwrap_or_default().to_string();
            if config_name.is_empty() {
                return Err(bad_request(
                    "InvalidRequestFormat",
                    "Cannot parse the request: an ipConfiguration has no name.".into(),
                ));
            }
            if asked
                .iter()
                .any(|a| a.name.eq_ignore_ascii_case(&config_name))
            {
                return Err(bad_request(
                    "DuplicateResourceName",
                    format!(
                        "Resource {id} has two child resources with the same name ({config_name})."
                    ),
                ));
            }
            let p = &c["properties"];
            let config_id = format!("{id}/ipConfigurations/{config_name}");
            if p["privateIPAddressVersion"]
                .as_str()
                .is_some_and(|v| !v.eq_ignore_ascii_case("IPv4"))
            {
                return Err(bad_request(
                    "InvalidRequestFormat",
                    format!("The fake serves IPv4 ipConfigurations only ({config_id})."),
                ));
            }
            let subnet_ref = p["subnet"]["id"].as_str().unwrap_or_default();
            let subnet = self.subnet_of(subnet_ref).ok_or_else(|| {
                bad_request(
                    "InvalidResourceReference",
                    format!(
                        "Resource {subnet_ref} referenced by resource {id} was not found. Please make sure that the referenced resource exists, and that both resources are in the same region."
                    ),
                )
            })?;
            let mut pools = Vec::new();
            for pool in p["loadBalancerBackendAddressPools"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let pool = pool["id"].as_str().unwrap_or_default();
                if !self.backend_pool_exists(pool) {
                    return Err(bad_request(
                        "InvalidResourceReference",
                        format!(
                            "Resource {pool} referenced by resource {id} was not found. Please make sure that the referenced resource exists, and that both resources are in the same region."
                        ),
                    ));
                }
                pools.push(pool.to_string());
            }
            let allocation = match p["privateIPAllocationMethod"].as_str() {
                Some(m) if m.eq_ignore_ascii_case("Static") => "Static",
                _ => "Dynamic",
            };
            asked.push(Asked {
                index: asked.len(),
                name: config_name,
                subnet,
                allocation: allocation.into(),
                ip: p["privateIPAddress"].as_str().map(str::to_string),
                primary: p["primary"].as_bool().unwrap_or(false),
                pools,
            });
        }
        if let [only] = asked.as_mut_slice() {
            only.primary = true;
        }
        match asked.iter().filter(|a| a.primary).count() {
            1 => Ok(asked),
            0 => Err(bad_request(
                "NetworkInterfaceMustHaveOneOneIPConfigAsPrimary",
                format!(
                    "Network Interface {name} specifies multiple IPConfigurations but none of the IPConfigurations is specified as Primary."
                ),
            )),
            _ => Err(bad_request(
                "NetworkInterfaceMustHaveOneOneIPConfigAsPrimary",
                format!(
                    "Network Interface {name} specifies multiple IPConfigurations as Primary; exactly one must be."
                ),
            )),
        }
    }

    /// The name of the world's subnet a subnet id names (case-insensitive), if it exists.
    pub(super) fn subnet_of(&self, id: &str) -> Option<String> {
        let lower = id.to_ascii_lowercase();
        let rest = lower.strip_prefix(&super::nic::subscription_prefix())?;
        let parts: Vec<&str> = rest.split('/').collect();
        let [
            "resourcegroups",
            rg,
            "providers",
            "microsoft.network",
            "virtualnetworks",
            vnet,
            "subnets",
            subnet,
        ] = parts.as_slice()
        else {
            return None;
        };
        if !self.is_vnet(rg, vnet) {
            return None;
        }
        self.vnet
            .subnets
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(subnet))
            .map(|s| s.name.clone())
    }

    /// ARM's linked access check: joining a subnet needs `subnets/join/action` there.
    fn linked_access(&self, id: &str, existing: Option<&Nic>, asked: &[Asked]) -> Option<Reply> {
        const JOIN: &str = "Microsoft.Network/virtualNetworks/subnets/join/action";
        let joins = asked.iter().filter(|a| {
            !existing.is_some_and(|n| {
                n.ipconfigs
                    .iter()
                    .any(|c| c.name.eq_ignore_ascii_case(&a.name) && c.subnet == a.subnet)
            })
        });
        let denied: Vec<String> = joins
            .filter(|_| !self.allowed(Some(&self.vnet.rg), JOIN))
            .map(|a| self.subnet_id(&a.subnet))
            .collect();
        let first = denied.first()?;
        Some(Reply::error(
            403,
            "LinkedAuthorizationFailed",
            format!(
                "The client '{CLIENT_ID}' with object id '{CLIENT_ID}' has permission to perform action 'Microsoft.Network/networkInterfaces/write' on scope '{id}'; however, it does not have permission to perform action(s) '{JOIN}' on the linked scope(s) '{first}' (respectively) or the linked scope(s) are invalid."
            ),
        ))
    }

    /// Each ipConfiguration's address: Static ones checked, Dynamic ones kept or allocated.
    fn settle(
        &self,
        id: &str,
        key: &str,
        existing: Option<&Nic>,
        asked: Vec<Asked>,
    ) -> Result<Vec<IpConfig>, Reply> {
        let own = |ip: Ipv4Addr| existing.is_some_and(|n| n.ipconfigs.iter().any(|c| c.ip == ip));
        // Taken by someone else than this NIC (its own addresses are its to keep or move).
        let taken = |ip: Ipv4Addr, chosen: &[(usize, IpConfig)]| {
            chosen.iter().any(|(_, c)| c.ip == ip) || (self.private_ip_taken(ip) && !own(ip))
        };
        let holder = |ip: Ipv4Addr, chosen: &[(usize, IpConfig)]| {
            chosen
                .iter()
                .map(|(_, c)| c)
                .find(|c| c.ip == ip)
                .map(|c| format!("{id}/ipConfigurations/{}", c.name))
                .or_else(|| {
                    self.nic_holding(ip)
                        .or_else(|| self.frontend_holding(ip))
                        .filter(|h| !h.to_ascii_lowercase().starts_with(key))
                })
                .unwrap_or_else(|| {
                    format!(
                        "{}/virtualNetworks/{}",
                        super::world::rg_id(&self.vnet.rg),
                        self.vnet.name
                    )
                })
        };
        let mut out: Vec<(usize, IpConfig)> = Vec::new();
        let (statics, dynamics): (Vec<Asked>, Vec<Asked>) =
            asked.into_iter().partition(|a| a.allocation == "Static");
        // A Dynamic ipConfiguration that stays (same name, same subnet) keeps its address.
        let mut fresh = Vec::new();
        for a in dynamics {
            let current = existing.and_then(|n| {
                n.ipconfigs
                    .iter()
                    .find(|c| c.name.eq_ignore_ascii_case(&a.name) && c.subnet == a.subnet)
                    .map(|c| c.ip)
            });
            match current {
                Some(ip) => out.push(config(a, ip)),
                None => fresh.push(a),
            }
        }
        // Then the Static ones, then the new Dynamic ones around them.
        for a in statics {
            let config_id = format!("{id}/ipConfigurations/{}", a.name);
            let Some(subnet) = self.vnet.subnets.iter().find(|s| s.name == a.subnet) else {
                continue;
            };
            let text = a.ip.clone().unwrap_or_default();
            let ip: Ipv4Addr = text.parse().map_err(|_| {
                bad_request(
                    "InvalidPrivateIPAddressFormat",
                    format!("Private static IP address {text} is invalid for IP configuration {config_id}."),
                )
            })?;
            if !subnet.contains(ip) {
                return Err(bad_request(
                    "PrivateIPAddressNotInSubnet",
                    format!(
                        "Private static IP address {ip} does not belong to the range of subnet prefix {}.",
                        subnet.prefix()
                    ),
                ));
            }
            if subnet.platform_reserved(ip) {
                return Err(bad_request(
                    "PrivateIPAddressInReservedRange",
                    format!(
                        "Private static IP address {ip} falls within reserved IP range of subnet prefix {}.",
                        subnet.prefix()
                    ),
                ));
            }
            if taken(ip, &out) {
                return Err(bad_request(
                    "PrivateIPAddressIsAllocated",
                    format!(
                        "IP configuration {config_id} is using the private IP address {ip} which is already allocated to resource {}.",
                        holder(ip, &out)
                    ),
                ));
            }
            out.push(config(a, ip));
        }
        for a in fresh {
            let Some(subnet) = self.vnet.subnets.iter().find(|s| s.name == a.subnet) else {
                continue;
            };
            let base = u32::from(subnet.network);
            let size = 1u32 << (32 - subnet.len);
            let ip = (4..size.saturating_sub(1))
                .map(|o| Ipv4Addr::from(base + o))
                .find(|ip| !taken(*ip, &out) && !own(*ip))
                .ok_or_else(|| {
                    bad_request(
                        "SubnetIsFull",
                        format!(
                            "Subnet {} with address prefix {} does not have enough capacity for 1 IP addresses.",
                            subnet.name,
                            subnet.prefix()
                        ),
                    )
                })?;
            out.push(config(a, ip));
        }
        out.sort_by_key(|(index, _)| *index);
        Ok(out.into_iter().map(|(_, c)| c).collect())
    }
}

fn config(a: Asked, ip: Ipv4Addr) -> (usize, IpConfig) {
    let config = IpConfig {
        name: a.name,
        ip,
        allocation: a.allocation,
        primary: a.primary,
        subnet: a.subnet,
        pools: a.pools,
    };
    (a.index, config)
}

/// `If-Match` (the etag, or `*`: the NIC exists) and `If-None-Match: *` (it does not).
fn precondition(call: &Call, existing: Option<&Nic>) -> Option<Reply> {
    super::preconditions::precondition_on(call, existing.map(|nic| nic.etag.as_str()))
}
