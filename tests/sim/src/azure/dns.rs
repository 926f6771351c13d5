//! `dnsZones` (2018-05-01: `TTL`, `ARecords`, `AAAARecords`) and `privateDnsZones`
//! (2020-06-01: `ttl`, `aRecords`, `aaaaRecords`) in the fake: zones (read only) and A/AAAA
//! record sets with ETags; `If-Match` / `If-None-Match: *` not met -> 412 PreconditionFailed,
//! as ARM's optimistic concurrency does. A private zone lists its `virtualNetworkLinks`
//! (read only).

use super::arm::{Call, Reply};
use super::world::{SUBSCRIPTION, World, rg_id, uuid};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::IpAddr;

#[derive(Debug, Clone)]
pub struct RecordSet {
    pub ttl: u64,
    pub values: Vec<IpAddr>,
    pub etag: String,
    pub metadata: Value,
}

impl RecordSet {
    /// This set of the record `name` (`@`: the apex) of `zone` as the inspections show it:
    /// `"<fqdn> <TYPE>"` and its values, sorted.
    pub fn shown(&self, zone: &str, rtype: &str, name: &str) -> (String, Vec<String>) {
        let fqdn = if name == "@" {
            zone.to_string()
        } else {
            format!("{name}.{zone}")
        };
        let mut values: Vec<String> = self.values.iter().map(IpAddr::to_string).collect();
        values.sort();
        (format!("{fqdn} {rtype}"), values)
    }
}

#[derive(Debug, Clone, Default)]
pub struct DnsZone {
    pub etag: String,
    /// (TYPE, relative name lowercased) -> set.
    pub records: BTreeMap<(String, String), RecordSet>,
    /// Private zones: (link name, linked vnet's resource id).
    pub links: Vec<(String, String)>,
    /// CNAME record sets: relative name lowercased -> target. Written by
    /// [`super::AzureSim::write_cname`] only (the agent never writes one); no A/AAAA set can
    /// be created next to one.
    pub cnames: BTreeMap<String, String>,
}

impl World {
    pub(super) fn zone(
        &self,
        call: &Call,
        private: bool,
        rg: &str,
        zone: &str,
        rg_name: &str,
    ) -> Reply {
        if call.method != "GET" {
            return Reply::error(405, "MethodNotAllowed", "zones are read-only in the fake");
        }
        let Some(z) = self.zones.get(&(private, rg.to_string(), zone.to_string())) else {
            let kind = if private {
                "privateDnsZones"
            } else {
                "dnszones"
            };
            return Reply::error(
                404,
                "ResourceNotFound",
                format!(
                    "The Resource 'Microsoft.Network/{kind}/{zone}' under resource group '{rg_name}' was not found."
                ),
            );
        };
        let (kind, properties) = if private {
            let properties = json!({
                "maxNumberOfRecordSets": 25000,
                "numberOfRecordSets": z.records.len() + 1,
                "maxNumberOfVirtualNetworkLinks": 1000,
                "numberOfVirtualNetworkLinks": 1,
                "maxNumberOfVirtualNetworkLinksWithRegistration": 100,
                "numberOfVirtualNetworkLinksWithRegistration": 0,
                "provisioningState": "Succeeded",
            });
            ("privateDnsZones", properties)
        } else {
            let properties = json!({
                "maxNumberOfRecordSets": 10000,
                "numberOfRecordSets": z.records.len() + 2,
                "nameServers": ["ns1-01.azure-dns.com.", "ns2-01.azure-dns.net.", "ns3-01.azure-dns.org.", "ns4-01.azure-dns.info."],
                "zoneType": "Public",
            });
            ("dnszones", properties)
        };
        let id = format!(
            "{}/providers/Microsoft.Network/{kind}/{zone}",
            rg_id(rg_name)
        );
        let body = json!({
            "id": id, "name": zone, "type": format!("Microsoft.Network/{kind}"),
            "etag": z.etag, "location": "global", "tags": {}, "properties": properties,
        });
        Reply::json(200, body)
    }

    /// `GET .../privateDnsZones/{zone}/virtualNetworkLinks` (2020-06-01).
    pub(super) fn virtual_network_links(&self, rg: &str, zone: &str, rg_name: &str) -> Reply {
        let Some(z) = self.zones.get(&(true, rg.to_string(), zone.to_string())) else {
            return Reply::error(
                404,
                "ParentResourceNotFound",
                format!(
                    "Can not perform requested operation on nested resource. Parent resource '{zone}' not found."
                ),
            );
        };
        let value: Vec<Value> = z
            .links
            .iter()
            .map(|(name, vnet)| {
                json!({
                    "id": format!("{}/providers/Microsoft.Network/privateDnsZones/{zone}/virtualNetworkLinks/{name}", rg_id(rg_name)),
                    "name": name,
                    "type": "Microsoft.Network/privateDnsZones/virtualNetworkLinks",
                    "etag": "\"00000000-0000-0000-0000-00000000f00d\"",
                    "location": "global",
                    "tags": {},
                    "properties": {
                        "virtualNetwork": {"id": vnet},
                        "registrationEnabled": false,
                        "virtualNetworkLinkState": "Completed",
                        "provisioningState": "Succeeded",
                    },
                })
            })
            .collect();
        Reply::json(200, json!({ "value": value }))
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_set(
        &mut self,
        call: &Call,
        private: bool,
        rg: &str,
        zone: &str,
        rtype: &str,
        name: &str,
        rg_name: &str,
        orig: &[&str],
    ) -> Reply {
        let rtype = rtype.to_ascii_uppercase();
        let zone_kind = if private {
            "privateDnsZones"
        } else {
            "dnszones"
        };
        let Some(z) = self
            .zones
            .get_mut(&(private, rg.to_string(), zone.to_string()))
        else {
            return Reply::error(
                404,
                "ParentResourceNotFound",
                format!(
                    "Can not perform requested operation on nested resource. Parent resource '{zone}' not found."
                ),
            );
        };
        if !matches!(rtype.as_str(), "A" | "AAAA") {
            return Reply::error(
                400,
                "BadRequest",
                format!("record type {rtype} is not supported by the fake"),
            );
        }
        let key = (rtype.clone(), name.to_string());
        let conditional =
            call.header("if-match").is_some() || call.header("if-none-match").is_some();
        if conditional
            && matches!(call.method, "PUT" | "PATCH" | "DELETE")
            && let Some(pos) = self
                .rival_writes
                .iter()
                .position(|ip| (rtype == "A") == ip.is_ipv4())
        {
            let ip = self.rival_writes.remove(pos);
            let set = z.records.entry(key.clone()).or_insert_with(|| RecordSet {
                ttl: 300,
                values: Vec::new(),
                etag: String::new(),
                metadata: json!({}),
            });
            if !set.values.contains(&ip) {
                set.values.push(ip);
            }
            set.etag = uuid();
        }
        let orig_name = orig[orig.len() - 1];
        let (ttl_field, records_field, value_field) = match (private, rtype.as_str()) {
            (false, "A") => ("TTL", "ARecords", "ipv4Address"),
            (false, _) => ("TTL", "AAAARecords", "ipv6Address"),
            (true, "A") => ("ttl", "aRecords", "ipv4Address"),
            (true, _) => ("ttl", "aaaaRecords", "ipv6Address"),
        };
        let fqdn = if name == "@" {
            format!("{zone}.")
        } else {
            format!("{name}.{zone}.")
        };
        let to_json = |set: &RecordSet| {
            let values: Vec<Value> = set
                .values
                .iter()
                .map(|ip| json!({ value_field: ip.to_string() }))
                .collect();
            let mut props = json!({
                "metadata": set.metadata,
                ttl_field: set.ttl,
                "fqdn": fqdn,
                records_field: values,
            });
            if private {
                props["isAutoRegistered"] = json!(false);
            } else {
                props["provisioningState"] = json!("Succeeded");
            }
            json!({
                "id": format!("{}/providers/Microsoft.Network/{zone_kind}/{zone}/{rtype}/{orig_name}", rg_id(rg_name)),
                "name": orig_name,
                "type": format!("Microsoft.Network/{zone_kind}/{rtype}"),
                "etag": set.etag,
                "properties": props,
            })
        };
        let existing = z.records.get(&key).cloned();
        // ETags compare without their quotes (clients may send `"<etag>"` or `<etag>`).
        let if_match = call.header("if-match").map(|t| {
            t.trim()
                .trim_start_matches("W/")
                .trim_matches('"')
                .to_string()
        });
        let if_none_match = call.header("if-none-match").map(str::to_string);
        let precondition_failed = |what: &str| {
            Reply::error(
                412,
                "PreconditionFailed",
                format!(
                    "The condition '{what}' in the request header was not met: the record set has been modified or does not match."
                ),
            )
        };
        match call.method {
            "GET" => match existing {
                Some(set) => Reply::json(200, to_json(&set)),
                None => Reply::error(
                    404,
                    "NotFound",
                    format!(
                        "The resource record '{orig_name}' does not exist in resource group '{rg_name}' of subscription '{SUBSCRIPTION}'."
                    ),
                ),
            },
            "PUT" | "PATCH" => {
                match (&existing, &if_match) {
                    (None, Some(_)) => return precondition_failed("If-Match"),
                    (Some(set), Some(tag)) if tag != "*" && *tag != set.etag => {
                        return precondition_failed("If-Match");
                    }
                    _ => {}
                }
                if if_none_match.as_deref() == Some("*") && existing.is_some() {
                    return precondition_failed("If-None-Match");
                }
                // Azure DNS refuses an address record set where a CNAME is (RFC 1034 3.6.2):
                // 409 `Conflict` (kubernetes-sigs/external-dns#5358,
                // CannotCreateRecordDueToCNameNamingRestriction).
                if existing.is_none() && z.cnames.contains_key(name) {
                    return Reply::error(
                        409,
                        "Conflict",
                        "The record could not be created because a CNAME record with the same name already exists in this zone.",
                    );
                }
                if call.method == "PATCH" && existing.is_none() {
                    return Reply::error(
                        404,
                        "NotFound",
                        format!("The resource record '{orig_name}' does not exist."),
                    );
                }
                let body = match call.json() {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let props = &body["properties"];
                let mut set = existing.clone().unwrap_or(RecordSet {
                    ttl: 3600,
                    values: Vec::new(),
                    etag: String::new(),
                    metadata: json!({}),
                });
                if let Some(ttl) = props[ttl_field].as_u64() {
                    set.ttl = ttl;
                } else if call.method == "PUT" && props[ttl_field].is_null() && existing.is_none() {
                    set.ttl = 3600;
                }
                if call.method == "PUT" || props[records_field].is_array() {
                    let mut values = Vec::new();
                    for record in props[records_field].as_array().into_iter().flatten() {
                        let parsed = record[value_field]
                            .as_str()
                            .and_then(|s| s.parse::<IpAddr>().ok());
                        match parsed {
                            Some(ip) if (rtype == "A") == ip.is_ipv4() => values.push(ip),
                            _ => {
                                return Reply::error(
                                    400,
                                    "BadRequest",
                                    format!(
                                        "The value '{}' for {value_field} is invalid.",
                                        record[value_field]
                                    ),
                                );
                            }
                        }
                    }
                    set.values = values;
                }
                if props["metadata"].is_object() {
                    set.metadata = props["metadata"].clone();
                }
                set.etag = uuid();
                z.records.insert(key, set.clone());
                let status = if existing.is_some() { 200 } else { 201 };
                Reply::json(status, to_json(&set))
            }
            "DELETE" => {
                match (&existing, &if_match) {
                    (None, Some(_)) => return precondition_failed("If-Match"),
                    (Some(set), Some(tag)) if tag != "*" && *tag != set.etag => {
                        return precondition_failed("If-Match");
                    }
                    (None, None) => return Reply::empty(204),
                    _ => {}
                }
                z.records.remove(&key);
                Reply::empty(200)
            }
            _ => Reply::error(405, "MethodNotAllowed", "method not allowed"),
        }
    }
}
