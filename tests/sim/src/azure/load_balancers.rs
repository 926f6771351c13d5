//! `Microsoft.Network/loadBalancers` in the fake, as cloud-provider-azure uses them (list per
//! resource group, GET, PUT, DELETE; openshift/cloud-provider-azure d04449b95a54
//! `pkg/provider/azure_loadbalancer_repo.go:60-192`). The shape is the LoadBalancer of
//! azure-rest-api-specs `specification/network/resource-manager/Microsoft.Network/stable/*/
//! loadBalancer.json`: `sku`, `properties.{frontendIPConfigurations, backendAddressPools,
//! loadBalancingRules, probes, inboundNatRules, outboundRules, provisioningState,
//! resourceGuid}`, every child with its `id` (`<lb id>/<collection>/<name>`), `etag` and
//! `type`.
//!
//! ARM fills what the client does not send: ids, etags, `provisioningState: Succeeded` (the
//! PUT completes at once: 200/201 with the body and no `Azure-AsyncOperation`), a frontend's
//! `loadBalancingRules`, a probe's `loadBalancingRules`, a backend pool's
//! `loadBalancingRules` and `backendIPConfigurations` (the NIC ipConfigurations that name the
//! pool in their `loadBalancerBackendAddressPools`, see `nic_put`); a public IP a frontend
//! uses shows the frontend in its `ipConfiguration` until the frontend or the load balancer
//! goes (see `public_ip`: it cannot be deleted meanwhile); a deleted load balancer's pools
//! are gone from the NICs that named them.
//!
//! Refused as Network Resource Provider refuses it (400 unless said):
//! - `If-Match` not the current etag, or `If-None-Match: *` on an existing load balancer: 412
//!   `PreconditionFailed` (as NICs and record sets here).
//! - no `location`: `LocationRequired`.
//! - two children of one collection with one name: `DuplicateResourceName` (as NICs).
//! - a reference to a child that is not in the body (a rule's frontend, pool or probe), a
//!   subnet or a public IP that does not exist: `InvalidResourceReference`, "Resource <id>
//!   referenced by resource <lb id> was not found. ..." (as NICs).
//! - a Static private frontend address outside its subnet: `PrivateIPAddressNotInSubnet`;
//!   held by a NIC or another load balancer's frontend: `PrivateIPAddressIsAllocated` (as
//!   NICs). A frontend's address is taken for NICs and CheckIPAddressAvailability too.
//! - a public IP another resource already uses: `PublicIPAddressInUse`, "Resource <frontend>
//!   is referencing public IP address <pip> that is already allocated to resource <user>."

use super::arm::{Call, Reply};
use super::nic::new_etag;
use super::world::{World, rg_id, uuid};
use serde_json::{Value, json};
use std::net::Ipv4Addr;

/// The collections of a load balancer that hold named children, with each child's type.
const CHILDREN: [(&str, &str); 6] = [
    ("frontendIPConfigurations", "frontendIPConfigurations"),
    ("backendAddressPools", "backendAddressPools"),
    ("loadBalancingRules", "loadBalancingRules"),
    ("probes", "probes"),
    ("inboundNatRules", "inboundNatRules"),
    ("outboundRules", "outboundRules"),
];

/// Read-only properties ARM computes: dropped from a body, filled in on the way out.
const COMPUTED: [&str; 5] = [
    "loadBalancingRules",
    "backendIPConfigurations",
    "inboundNatRules",
    "outboundRules",
    "provisioningState",
];

#[derive(Debug, Clone)]
pub struct LoadBalancer {
    pub rg: String,
    pub name: String,
    /// The stored resource: the body as accepted, with ids, etags and states filled in.
    pub body: Value,
}

pub fn lb_id(rg: &str, name: &str) -> String {
    format!(
        "{}/providers/Microsoft.Network/loadBalancers/{name}",
        rg_id(rg)
    )
}

fn reference_missing(what: &str, by: &str) -> Reply {
    Reply::error(
        400,
        "InvalidResourceReference",
        format!(
            "Resource {what} referenced by resource {by} was not found. Please make sure that the referenced resource exists, and that both resources are in the same region."
        ),
    )
}

/// The ids a child refers to under `key` (one object, or a list of them).
pub(super) fn refs<'a>(props: &'a Value, key: &str) -> Vec<&'a str> {
    match &props[key] {
        Value::Array(list) => list.iter().filter_map(|r| r["id"].as_str()).collect(),
        Value::Object(_) => props[key]["id"].as_str().into_iter().collect(),
        _ => Vec::new(),
    }
}

impl super::arm::InResourceGroup for LoadBalancer {
    fn resource_group(&self) -> &str {
        &self.rg
    }
}

/// ARM's refusal of two children of `id` with one name (names compare case-insensitively).
pub(super) fn duplicate_child(id: &str, name: &str) -> Reply {
    Reply::error(
        400,
        "DuplicateResourceName",
        format!("Resource {id} has two child resources with the same name ({name})."),
    )
}

impl World {
    /// `GET .../loadBalancers` of a resource group.
    pub(super) fn list_load_balancers(&self, call: &Call, rg: &str) -> Reply {
        self.list_in_group(
            call,
            rg,
            "loadBalancers",
            &self.load_balancers,
            Self::lb_json,
        )
    }

    /// `GET`, `PUT`, `DELETE` of `.../loadBalancers/{name}`.
    pub(super) fn load_balancer(&mut self, call: &Call, rg: &str, name: &str) -> Reply {
        let key = lb_id(rg, name).to_ascii_lowercase();
        match call.method {
            "GET" => match self.load_balancers.get(&key) {
                Some(lb) => Reply::json(200, self.lb_json(lb)),
                None => not_found(rg, name),
            },
            "PUT" => self.put_load_balancer(call, rg, name, &key),
            "DELETE" => match self.load_balancers.remove(&key) {
                Some(lb) => {
                    let id = lb_id(&lb.rg, &lb.name);
                    self.release_public_ips(&id, &[]);
                    self.leave_pools_of(&id);
                    Reply::empty(200)
                }
                None => Reply::empty(204),
            },
            _ => Reply::error(405, "MethodNotAllowed", "method not allowed"),
        }
    }

    fn put_load_balancer(&mut self, call: &Call, rg: &str, name: &str, key: &str) -> Reply {
        let existing = self.load_balancers.get(key);
        if let Some(refused) = super::preconditions::precondition_on(
            call,
            existing.map(|lb| lb.body["etag"].as_str().unwrap_or_default()),
        ) {
            return refused;
        }
        let (rg, name) = existing.map_or_else(
            || (rg.to_string(), name.to_string()),
            |lb| (lb.rg.clone(), lb.name.clone()),
        );
        let created = existing.is_none();
        let guid = existing
            .and_then(|lb| lb.body["properties"]["resourceGuid"].as_str())
            .map_or_else(uuid, str::to_string);
        let mut body = match call.json() {
            Ok(b) => b,
            Err(r) => return r,
        };
        if body["location"].as_str().is_none() {
            return Reply::error(
                400,
                "LocationRequired",
                "The location property is required for this definition.",
            );
        }
        let id = lb_id(&rg, &name);
        let etag = new_etag();
        let mut names: Vec<(String, Vec<String>)> = Vec::new();
        for (collection, _) in CHILDREN {
            let mut seen: Vec<String> = Vec::new();
            let list = body["properties"][collection].as_array_mut();
            for child in list.into_iter().flatten() {
                let Some(child_name) = child["name"].as_str().map(str::to_string) else {
                    return Reply::error(
                        400,
                        "InvalidRequestFormat",
                        format!("Cannot parse the request: a child of {collection} has no name."),
                    );
                };
                if seen.iter().any(|n| n.eq_ignore_ascii_case(&child_name)) {
                    return duplicate_child(&id, &child_name);
                }
                child["id"] = json!(format!("{id}/{collection}/{child_name}"));
                child["etag"] = json!(etag);
                child["type"] = json!(format!("Microsoft.Network/loadBalancers/{collection}"));
                if let Some(props) = child["properties"].as_object_mut() {
                    for computed in COMPUTED {
                        props.remove(computed);
                    }
                } else {
                    child["properties"] = json!({});
                }
                child["properties"]["provisioningState"] = json!("Succeeded");
                seen.push(child_name);
            }
            names.push((collection.to_string(), seen));
        }
        if let Some(refused) = self.check_references(&body, &id, &names) {
            return refused;
        }
        if let Some(refused) = self.check_frontends(&mut body, &id) {
            return refused;
        }
        let frontends: Vec<(String, String)> = body["properties"]["frontendIPConfigurations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| {
                let pip = f["properties"]["publicIPAddress"]["id"].as_str()?;
                Some((pip.to_string(), f["id"].as_str()?.to_string()))
            })
            .collect();
        self.release_public_ips(&id, &frontends);
        for (pip, frontend) in &frontends {
            if let Some(p) = self.public_ips.get_mut(&pip.to_ascii_lowercase()) {
                p.ip_configuration = Some(frontend.clone());
            }
        }
        body["id"] = json!(id);
        body["name"] = json!(name);
        body["type"] = json!("Microsoft.Network/loadBalancers");
        body["etag"] = json!(etag);
        body["properties"]["provisioningState"] = json!("Succeeded");
        body["properties"]["resourceGuid"] = json!(guid);
        let lb = LoadBalancer { rg, name, body };
        let answer = self.lb_json(&lb);
        self.load_balancers.insert(key.to_string(), lb);
        Reply::json(if created { 201 } else { 200 }, answer)
    }

    /// Every reference between the body's children names a child of the body.
    fn check_references(
        &self,
        body: &Value,
        id: &str,
        names: &[(String, Vec<String>)],
    ) -> Option<Reply> {
        let known = |reference: &str| {
            let lower = reference.to_ascii_lowercase();
            names.iter().any(|(collection, children)| {
                children
                    .iter()
                    .any(|child| lower == format!("{id}/{collection}/{child}").to_ascii_lowercase())
            })
        };
        for collection in ["loadBalancingRules", "inboundNatRules", "outboundRules"] {
            for child in body["properties"][collection]
                .as_array()
                .into_iter()
                .flatten()
            {
                let props = &child["properties"];
                for key in [
                    "frontendIPConfiguration",
                    "frontendIPConfigurations",
                    "backendAddressPool",
                    "backendAddressPools",
                    "probe",
                ] {
                    if let Some(missing) = refs(props, key).into_iter().find(|r| !known(r)) {
                        return Some(reference_missing(missing, id));
                    }
                }
            }
        }
        None
    }

    /// Each frontend's subnet or public IP exists; a Static private address is in its subnet
    /// and held by no NIC; a public IP is used by nothing else.
    fn check_frontends(&self, body: &mut Value, id: &str) -> Option<Reply> {
        let frontends = body["properties"]["frontendIPConfigurations"].as_array_mut();
        for frontend in frontends.into_iter().flatten() {
            let frontend_id = frontend["id"].as_str().unwrap_or_default().to_string();
            let props = &mut frontend["properties"];
            if let Some(pip) = props["publicIPAddress"]["id"].as_str() {
                let Some(held) = self.public_ips.get(&pip.to_ascii_lowercase()) else {
                    return Some(reference_missing(pip, id));
                };
                if let Some(user) = held.ip_configuration.as_deref().filter(|user| {
                    !user.eq_ignore_ascii_case(&frontend_id)
                        && !user
                            .to_ascii_lowercase()
                            .starts_with(&id.to_ascii_lowercase())
                }) {
                    return Some(Reply::error(
                        400,
                        "PublicIPAddressInUse",
                        format!(
                            "Resource {frontend_id} is referencing public IP address {pip} that is already allocated to resource {user}."
                        ),
                    ));
                }
                continue;
            }
            let subnet_ref = props["subnet"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let Some(subnet) = self
                .subnet_of(&subnet_ref)
                .and_then(|name| self.vnet.subnets.iter().find(|s| s.name == name))
            else {
                return Some(reference_missing(&subnet_ref, id));
            };
            props["privateIPAddressVersion"] = json!("IPv4");
            let Some(ip) = props["privateIPAddress"]
                .as_str()
                .and_then(|ip| ip.parse::<Ipv4Addr>().ok())
            else {
                continue;
            };
            if !subnet.contains(ip) {
                return Some(Reply::error(
                    400,
                    "PrivateIPAddressNotInSubnet",
                    format!(
                        "IP configuration {frontend_id} is using the private IP address {ip} which is not in the range of subnet {subnet_ref}."
                    ),
                ));
            }
            let other_lb = self
                .frontend_holding(ip)
                .filter(|f| !f.to_ascii_lowercase().starts_with(&id.to_ascii_lowercase()));
            if let Some(holder) = self.nic_holding(ip).or(other_lb) {
                return Some(Reply::error(
                    400,
                    "PrivateIPAddressIsAllocated",
                    format!(
                        "IP configuration {frontend_id} is using the private IP address {ip} which is already allocated to resource {holder}."
                    ),
                ));
            }
        }
        None
    }

    /// A deleted load balancer's pools are gone from the NICs that named them: for VMs in
    /// availability sets (and standalone ones) cloud-provider-azure deletes the load balancer
    /// without touching the NICs (`azure_loadbalancer.go:696-700`: "do nothing for
    /// availability set", only scale sets must leave the pools first), so ARM drops the
    /// references itself.
    fn leave_pools_of(&mut self, id: &str) {
        let prefix = format!("{}/backendaddresspools/", id.to_ascii_lowercase());
        for nic in self.nics.values_mut() {
            for config in &mut nic.ipconfigs {
                config
                    .pools
                    .retain(|p| !p.to_ascii_lowercase().starts_with(&prefix));
            }
        }
    }

    /// Public IPs a frontend of load balancer `id` used and that are not in `kept` (public IP
    /// id, frontend id) any more are free again.
    fn release_public_ips(&mut self, id: &str, kept: &[(String, String)]) {
        let prefix = format!("{}/", id.to_ascii_lowercase());
        for (key, pip) in self.public_ips.iter_mut() {
            let Some(user) = pip.ip_configuration.as_deref() else {
                continue;
            };
            if user.to_ascii_lowercase().starts_with(&prefix)
                && !kept.iter().any(|(p, _)| p.eq_ignore_ascii_case(key))
            {
                pip.ip_configuration = None;
            }
        }
    }
}

fn not_found(rg: &str, name: &str) -> Reply {
    Reply::error(
        404,
        "ResourceNotFound",
        format!(
            "The Resource 'Microsoft.Network/loadBalancers/{name}' under resource group '{rg}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix"
        ),
    )
}
