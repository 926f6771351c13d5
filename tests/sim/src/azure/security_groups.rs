//! `Microsoft.Network/networkSecurityGroups/{name}` in the fake: GET and PUT, as
//! cloud-provider-azure reconciles the cloud config's `securityGroupName` (openshift/
//! cloud-provider-azure d04449b95a54 `pkg/provider/azure_loadbalancer.go:3144-3287`: GET,
//! then a PUT with the group's etag only when its rules change). The group is the installer's
//! `<infra-id>-nsg` in the cluster resource group (see `lb_view`); the fake keeps its rules by
//! name, each `{name, properties}` as azure-rest-api-specs `networkSecurityGroup.json` shapes a
//! SecurityRule, and shows Azure's six `defaultSecurityRules` beside them.
//!
//! Refused as Network Resource Provider refuses it: `If-Match` not the current etag: 412
//! `PreconditionFailed`; two rules of one name: 400 `DuplicateResourceName` (as NICs); a
//! group that does not exist (the fake makes none): GET 404 `ResourceNotFound`.

use super::arm::{Call, Reply};
use super::nic::new_etag;
use super::world::{LOCATION, World, rg_id};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Azure's default rules of every network security group (name, priority, direction,
/// access, source, destination), as `az network nsg show` lists them.
const DEFAULT_RULES: [(&str, u32, &str, &str, &str, &str); 6] = [
    (
        "AllowVnetInBound",
        65000,
        "Inbound",
        "Allow",
        "VirtualNetwork",
        "VirtualNetwork",
    ),
    (
        "AllowAzureLoadBalancerInBound",
        65001,
        "Inbound",
        "Allow",
        "AzureLoadBalancer",
        "*",
    ),
    ("DenyAllInBound", 65500, "Inbound", "Deny", "*", "*"),
    (
        "AllowVnetOutBound",
        65000,
        "Outbound",
        "Allow",
        "VirtualNetwork",
        "VirtualNetwork",
    ),
    (
        "AllowInternetOutBound",
        65001,
        "Outbound",
        "Allow",
        "*",
        "Internet",
    ),
    ("DenyAllOutBound", 65500, "Outbound", "Deny", "*", "*"),
];

fn nsg_id(rg: &str, name: &str) -> String {
    format!(
        "{}/providers/Microsoft.Network/networkSecurityGroups/{name}",
        rg_id(rg)
    )
}

impl World {
    /// `GET` and `PUT` of `.../networkSecurityGroups/{name}`.
    pub(super) fn network_security_group(&mut self, call: &Call, rg: &str, name: &str) -> Reply {
        let key = format!("{rg}/{name}").to_ascii_lowercase();
        let Some(rules) = self.security_groups.get(&key) else {
            return Reply::error(
                404,
                "ResourceNotFound",
                format!(
                    "The Resource 'Microsoft.Network/networkSecurityGroups/{name}' under resource group '{rg}' was not found."
                ),
            );
        };
        let etag = self
            .security_group_etags
            .entry(key.clone())
            .or_insert_with(new_etag)
            .clone();
        match call.method {
            "GET" => Reply::json(200, nsg_json(rg, name, &etag, rules)),
            "PUT" => {
                if let Some(refused) = super::preconditions::precondition_on(call, Some(&etag)) {
                    return refused;
                }
                let body = match call.json() {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let id = nsg_id(rg, name);
                let mut kept: BTreeMap<String, Value> = BTreeMap::new();
                let asked = body["properties"]["securityRules"].as_array();
                for rule in asked.into_iter().flatten() {
                    let rule_name = rule["name"].as_str().unwrap_or_default().to_string();
                    if kept.keys().any(|k| k.eq_ignore_ascii_case(&rule_name)) {
                        return super::load_balancers::duplicate_child(&id, &rule_name);
                    }
                    let mut properties = rule["properties"].clone();
                    if let Some(p) = properties.as_object_mut() {
                        p.remove("provisioningState");
                    }
                    kept.insert(
                        rule_name.clone(),
                        json!({"name": rule_name, "properties": properties}),
                    );
                }
                let etag = new_etag();
                self.security_group_etags.insert(key.clone(), etag.clone());
                let answer = nsg_json(rg, name, &etag, &kept);
                self.security_groups.insert(key, kept);
                Reply::json(200, answer)
            }
            _ => Reply::error(405, "MethodNotAllowed", "method not allowed"),
        }
    }
}

fn nsg_json(rg: &str, name: &str, etag: &str, rules: &BTreeMap<String, Value>) -> Value {
    let id = nsg_id(rg, name);
    let rule = |kind: &str, rule_name: &str, properties: Value| {
        let mut properties = properties;
        properties["provisioningState"] = json!("Succeeded");
        json!({
            "name": rule_name,
            "id": format!("{id}/{kind}/{rule_name}"),
            "etag": etag,
            "type": format!("Microsoft.Network/networkSecurityGroups/{kind}"),
            "properties": properties,
        })
    };
    let own: Vec<Value> = rules
        .values()
        .map(|r| {
            rule(
                "securityRules",
                r["name"].as_str().unwrap_or_default(),
                r["properties"].clone(),
            )
        })
        .collect();
    let defaults: Vec<Value> = DEFAULT_RULES
        .iter()
        .map(
            |(rule_name, priority, direction, access, source, destination)| {
                rule(
                    "defaultSecurityRules",
                    rule_name,
                    json!({
                        "description": "Default rule", "protocol": "*", "sourcePortRange": "*",
                        "destinationPortRange": "*", "sourceAddressPrefix": source,
                        "destinationAddressPrefix": destination, "access": access,
                        "priority": priority, "direction": direction,
                    }),
                )
            },
        )
        .collect();
    json!({
        "name": name,
        "id": id,
        "etag": etag,
        "type": "Microsoft.Network/networkSecurityGroups",
        "location": LOCATION,
        "properties": {
            "provisioningState": "Succeeded",
            "resourceGuid": "6b2c9a3e-1f0d-4c1b-9a53-2f6d1e0c7a41",
            "securityRules": own,
            "defaultSecurityRules": defaults,
        },
    })
}
