//! `Microsoft.Network/publicIPAddresses` in the fake: PUT/DELETE long-running with
//! `Azure-AsyncOperation` (+ `Location` on DELETE) and `Retry-After`; `provisioningState`
//! Updating -> Succeeded or Deleting -> gone after a configurable delay; the address is
//! assigned when provisioning succeeds; GET; list by resource group with `nextLink` paging.
//!
//! A public IP a load balancer frontend uses shows it in `properties.ipConfiguration.id`
//! (set by the local API server's simulated service controller, see [`World::use_public_ip`])
//! and cannot be deleted: DELETE answers 400 `PublicIPAddressCannotBeDeleted`, "Public IP
//! address ... can not be deleted since it is still allocated to resource ...", as Network
//! Resource Provider answers it (the code is in Azure's error code lists, e.g. AKS's
//! `PublicIPAddressCannotBeDeleted`; the message as clients log it, e.g. terraform and packer
//! issues quoting `network.PublicIPAddressesClient#Delete: ... StatusCode=400`). ARM checks it
//! before starting the long-running delete: nothing changes.

use super::arm::{Call, Reply};
use super::world::{SUBSCRIPTION, World, rg_id, uuid};
use serde_json::{Map, Value, json};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct PublicIp {
    pub rg: String,
    pub name: String,
    pub location: String,
    pub sku: String,
    pub version: String,
    pub allocation: String,
    pub tags: Map<String, Value>,
    pub ip: Option<IpAddr>,
    pub state: String,
    pub etag: String,
    pub guid: String,
    /// The id of the load balancer frontend using the address, if any.
    pub ip_configuration: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) struct Operation {
    ready_at: Instant,
    done: bool,
    /// Lowercased resource id the operation works on.
    target: String,
    delete: bool,
}

pub fn pip_id(rg: &str, name: &str) -> String {
    format!(
        "{}/providers/Microsoft.Network/publicIPAddresses/{name}",
        rg_id(rg)
    )
}

impl super::arm::InResourceGroup for PublicIp {
    fn resource_group(&self) -> &str {
        &self.rg
    }
}

impl World {
    /// Finishes every operation whose time has come.
    pub fn tick(&mut self) {
        let now = Instant::now();
        let due: Vec<String> = self
            .operations
            .iter()
            .filter(|(_, op)| !op.done && op.ready_at <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            let Some(op) = self.operations.get_mut(&id) else {
                continue;
            };
            op.done = true;
            let (target, delete) = (op.target.clone(), op.delete);
            if delete {
                self.public_ips.remove(&target);
            } else if let Some(pip) = self.public_ips.get_mut(&target) {
                pip.state = "Succeeded".into();
                if pip.ip.is_none() {
                    pip.ip = Some(if pip.version == "IPv6" {
                        self.next_v6 += 1;
                        IpAddr::V6(Ipv6Addr::new(
                            0x2603,
                            0x1030,
                            0x20c,
                            0,
                            0,
                            0,
                            0,
                            self.next_v6,
                        ))
                    } else {
                        self.next_v4 += 1;
                        let n = self.next_v4;
                        IpAddr::V4(Ipv4Addr::new(20, 81, (n / 250) as u8, (n % 250) as u8 + 1))
                    });
                }
                pip.etag = format!("W/\"{}\"", uuid());
            } else {
                self.nic_provisioned(&target);
            }
        }
    }

    /// The load balancer `lb`'s frontend uses (`attach`) or no longer uses the public IP
    /// holding `ip`, if there is one. The frontend's id is the one cloud-provider-azure gives
    /// it: `frontendIPConfigurations/<lb>` of the cluster's load balancer, named after the
    /// infra id, in the cluster's resource group.
    pub fn use_public_ip(&mut self, ip: IpAddr, lb: &str, attach: bool) {
        self.tick();
        let frontend = format!(
            "{}/providers/Microsoft.Network/loadBalancers/{}/frontendIPConfigurations/{lb}",
            rg_id(super::world::CLUSTER_RG),
            super::world::CLUSTER_RG.trim_end_matches("-rg")
        );
        let Some(pip) = self.public_ips.values_mut().find(|p| p.ip == Some(ip)) else {
            return;
        };
        if attach {
            pip.ip_configuration = Some(frontend);
        } else if pip.ip_configuration.as_deref() == Some(frontend.as_str()) {
            pip.ip_configuration = None;
        }
    }

    /// A PUT that goes on asynchronously: 201 with the body for a new resource, 200 for an
    /// update, and the operation to follow (`Azure-AsyncOperation`, `Retry-After`).
    pub(super) fn put_accepted(
        &mut self,
        call: &Call,
        key: &str,
        location: &str,
        created: bool,
        body: Value,
    ) -> Reply {
        let op = self.start_operation(key, false);
        Reply::json(if created { 201 } else { 200 }, body)
            .header(
                "Azure-AsyncOperation",
                self.op_url(call, location, &op, false),
            )
            .header("Retry-After", self.retry_after.to_string())
    }

    pub(super) fn start_operation(&mut self, target: &str, delete: bool) -> String {
        let id = uuid();
        self.operations.insert(
            id.clone(),
            Operation {
                ready_at: Instant::now() + self.delay,
                done: false,
                target: target.to_string(),
                delete,
            },
        );
        id
    }

    pub fn public_ip_json(&self, pip: &PublicIp) -> Value {
        let id = pip_id(&pip.rg, &pip.name);
        let mut props = json!({
            "provisioningState": pip.state,
            "resourceGuid": pip.guid,
            "publicIPAddressVersion": pip.version,
            "publicIPAllocationMethod": pip.allocation,
            "idleTimeoutInMinutes": 4,
            "ipTags": [],
            "ddosSettings": {"protectionMode": "VirtualNetworkInherited"},
        });
        if let Some(ip) = pip.ip {
            props["ipAddress"] = json!(ip.to_string());
        }
        if let Some(frontend) = &pip.ip_configuration {
            props["ipConfiguration"] = json!({"id": frontend});
        }
        json!({
            "name": pip.name,
            "id": id,
            "etag": pip.etag,
            "location": pip.location,
            "tags": pip.tags,
            "type": "Microsoft.Network/publicIPAddresses",
            "sku": {"name": pip.sku, "tier": "Regional"},
            "properties": props,
        })
    }

    pub(super) fn operation_status(&self, id: &str) -> Reply {
        match self.operations.get(id) {
            None => Reply::error(
                404,
                "OperationNotFound",
                format!("Operation {id} not found."),
            ),
            Some(op) => {
                let status = if op.done { "Succeeded" } else { "InProgress" };
                let reply = Reply::json(200, json!({"status": status}));
                if op.done {
                    reply
                } else {
                    reply.header("Retry-After", self.retry_after.to_string())
                }
            }
        }
    }

    pub(super) fn operation_result(&self, call: &Call, loc: &str, id: &str) -> Reply {
        match self.operations.get(id) {
            None => Reply::error(
                404,
                "OperationNotFound",
                format!("Operation {id} not found."),
            ),
            Some(op) if !op.done => Reply::empty(202)
                .header("Location", self.op_url(call, loc, id, true))
                .header("Retry-After", self.retry_after.to_string()),
            Some(op) if op.delete => Reply::empty(204),
            Some(op) => match self.public_ips.get(&op.target) {
                Some(pip) => Reply::json(200, self.public_ip_json(pip)),
                None => match self.nics.get(&op.target) {
                    Some(nic) => Reply::json(200, self.nic_json(nic)),
                    None => Reply::empty(204),
                },
            },
        }
    }

    pub(super) fn op_url(&self, call: &Call, loc: &str, id: &str, result: bool) -> String {
        let kind = if result {
            "operationResults"
        } else {
            "operations"
        };
        let version = call.query.get("api-version").cloned().unwrap_or_default();
        format!(
            "{}/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Network/locations/{loc}/{kind}/{id}?api-version={version}",
            call.origin
        )
    }

    pub(super) fn list_public_ips(&self, call: &Call, rg: &str) -> Reply {
        let json = Self::public_ip_json;
        self.list_in_group(call, rg, "publicIPAddresses", &self.public_ips, json)
    }

    pub(super) fn public_ip(&mut self, call: &Call, rg: &str, name: &str) -> Reply {
        let key = pip_id(rg, name).to_ascii_lowercase();
        match call.method {
            "GET" => match self.public_ips.get(&key) {
                Some(pip) => Reply::json(200, self.public_ip_json(pip)),
                None => Reply::error(
                    404,
                    "ResourceNotFound",
                    format!(
                        "The Resource 'Microsoft.Network/publicIPAddresses/{name}' under resource group '{rg}' was not found."
                    ),
                ),
            },
            "PUT" => {
                let body = match call.json() {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let Some(location) = body["location"].as_str() else {
                    return Reply::error(
                        400,
                        "LocationRequired",
                        "The location property is required for this definition.",
                    );
                };
                let props = &body["properties"];
                let sku = body["sku"]["name"].as_str().unwrap_or("Basic").to_string();
                let version = props["publicIPAddressVersion"]
                    .as_str()
                    .unwrap_or("IPv4")
                    .to_string();
                let allocation = props["publicIPAllocationMethod"]
                    .as_str()
                    .unwrap_or("Dynamic")
                    .to_string();
                if !matches!(version.as_str(), "IPv4" | "IPv6") {
                    return Reply::error(
                        400,
                        "InvalidRequestFormat",
                        format!("Value '{version}' is not valid for publicIPAddressVersion."),
                    );
                }
                if sku == "Standard" && allocation != "Static" {
                    return Reply::error(
                        400,
                        "StandardSkuPublicIPAddressesMustBeStatic",
                        format!(
                            "Standard sku publicIp /subscriptions/.../{name} must have AllocationMethod set to Static."
                        ),
                    );
                }
                let tags = body["tags"].as_object().cloned().unwrap_or_default();
                let existing = self.public_ips.get(&key).cloned();
                if existing.is_none()
                    && let Some(refusal) = self.quota_refusal(location, &sku)
                {
                    return refusal;
                }
                if let Some(old) = &existing {
                    if old.state == "Deleting" {
                        return Reply::error(
                            409,
                            "AnotherOperationInProgress",
                            format!(
                                "Another operation on this or dependent resource is in progress. Resource {name}."
                            ),
                        );
                    }
                    if old.version != version {
                        return Reply::error(
                            400,
                            "PublicIPAddressVersionCannotBeChanged",
                            format!("Public IP address version of {name} cannot be changed."),
                        );
                    }
                }
                let pip = PublicIp {
                    rg: rg.to_string(),
                    name: name.to_string(),
                    location: location.to_string(),
                    sku,
                    version,
                    allocation,
                    tags,
                    ip: existing.as_ref().and_then(|e| e.ip),
                    state: "Updating".into(),
                    etag: format!("W/\"{}\"", uuid()),
                    guid: existing.as_ref().map_or_else(uuid, |e| e.guid.clone()),
                    ip_configuration: existing.as_ref().and_then(|e| e.ip_configuration.clone()),
                };
                self.public_ips.insert(key.clone(), pip.clone());
                let body = self.public_ip_json(&pip);
                self.put_accepted(call, &key, location, existing.is_none(), body)
            }
            "DELETE" => {
                let Some(pip) = self.public_ips.get_mut(&key) else {
                    return Reply::empty(204);
                };
                if let Some(frontend) = &pip.ip_configuration {
                    return Reply::error(
                        400,
                        "PublicIPAddressCannotBeDeleted",
                        format!(
                            "Public IP address {} can not be deleted since it is still allocated to resource {frontend}. In order to delete the public IP, disassociate/detach the Public IP address from the resource.",
                            pip_id(&pip.rg, &pip.name)
                        ),
                    );
                }
                pip.state = "Deleting".into();
                let location = pip.location.clone();
                let op = self.start_operation(&key, true);
                Reply::empty(202)
                    .header(
                        "Azure-AsyncOperation",
                        self.op_url(call, &location, &op, false),
                    )
                    .header("Location", self.op_url(call, &location, &op, true))
                    .header("Retry-After", self.retry_after.to_string())
            }
            _ => Reply::error(405, "MethodNotAllowed", "method not allowed"),
        }
    }
}
