//! dns.v1 `managedZones`, `resourceRecordSets` and `changes`, each zone under its own project
//! (the seed's, or a third one for a Shared VPC's private zone): a request under another
//! project does not find it, as Cloud DNS answers 404.

use super::http::{ApiError, Reply, Req};
use super::{World, ZoneSeed, ZoneState, now_rfc3339};
use hyper::Method;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

pub(crate) fn new_zone(w: &mut World, seed: &ZoneSeed) -> ZoneState {
    let visibility = if seed.private { "private" } else { "public" };
    let mut json = json!({
        "kind": "dns#managedZone",
        "name": seed.name,
        "dnsName": seed.dns_name,
        "description": "",
        "id": w.id(),
        "nameServers": ["ns-cloud-a1.googledomains.com.", "ns-cloud-a2.googledomains.com."],
        "creationTime": now_rfc3339(),
        "visibility": visibility,
    });
    let project = seed
        .project
        .clone()
        .unwrap_or_else(|| w.seed().project.clone());
    // Bound to the network's project: a Shared VPC's host project.
    let network_project = w
        .seed()
        .subnetworks
        .first()
        .map_or(w.seed().project.as_str(), |s| w.seed().subnet_project(s))
        .to_string();
    if seed.private {
        json["privateVisibilityConfig"] = json!({
            "kind": "dns#managedZonePrivateVisibilityConfig",
            "networks": [{
                "kind": "dns#managedZonePrivateVisibilityConfigNetwork",
                "networkUrl": format!(
                    "https://www.googleapis.com/compute/v1/projects/{}/global/networks/{}",
                    network_project, w.seed().network
                ),
            }],
        });
    }
    let mut rrsets = BTreeMap::new();
    rrsets.insert(
        (seed.dns_name.clone(), "NS".to_string()),
        json!({"kind": "dns#resourceRecordSet", "name": seed.dns_name, "type": "NS",
               "ttl": 21600, "rrdatas": json["nameServers"]}),
    );
    rrsets.insert(
        (seed.dns_name.clone(), "SOA".to_string()),
        json!({"kind": "dns#resourceRecordSet", "name": seed.dns_name, "type": "SOA",
               "ttl": 21600, "rrdatas": ["ns-cloud-a1.googledomains.com. cloud-dns-hostmaster.google.com. 1 21600 3600 259200 300"]}),
    );
    ZoneState {
        project,
        json,
        rrsets,
        changes: Vec::new(),
    }
}

/// `rest` is the path after `dns/v1/projects/`.
pub fn route(w: &mut World, req: &Req, rest: &[&str]) -> Reply {
    let Some(project) = rest.first() else {
        return Err(ApiError::not_found("no project"));
    };
    let known = *project == w.seed().project || w.zones.iter().any(|z| z.project == *project);
    if !known {
        return Err(ApiError::not_found(format!(
            "The 'parameters.project' resource named '{project}' does not exist."
        )));
    }
    let project = *project;
    authorize(w, req, project, &rest[1..])?;
    match (&req.method, &rest[1..]) {
        (&Method::GET, ["managedZones"]) => list_zones(w, req, project),
        (&Method::GET, ["managedZones", zone]) => {
            Ok(zone_index(w, project, zone).map(|i| w.zones[i].json.clone())?)
        }
        (&Method::GET, ["managedZones", zone, "rrsets"]) => list_rrsets(w, req, project, zone),
        (&Method::POST, ["managedZones", zone, "changes"]) => create_change(w, req, project, zone),
        (&Method::GET, ["managedZones", zone, "changes", id]) => {
            let i = zone_index(w, project, zone)?;
            w.zones[i]
                .changes
                .iter()
                .find(|(c, _)| c["id"] == *id)
                .map(|(c, _)| c.clone())
                .ok_or_else(|| {
                    ApiError::not_found(format!(
                        "The 'parameters.changeId' resource named '{id}' does not exist."
                    ))
                })
        }
        _ => Err(ApiError::not_found(format!(
            "The requested URL was not found: {} {}",
            req.method,
            rest.join("/")
        ))),
    }
}

/// The caller holds what the call needs on the project (see `authz`); a change, per record
/// set, `dns.resourceRecordSets.create`, `.update` (deleted and added back) or `.delete`.
fn authorize(w: &World, req: &Req, project: &str, rest: &[&str]) -> Result<(), ApiError> {
    let needs: Vec<&str> = match (&req.method, rest) {
        (&Method::GET, ["managedZones"]) => vec!["dns.managedZones.list"],
        (&Method::GET, ["managedZones", _]) => vec!["dns.managedZones.get"],
        (&Method::GET, ["managedZones", _, "rrsets"]) => vec!["dns.resourceRecordSets.list"],
        (&Method::GET, ["managedZones", _, "changes", _]) => vec!["dns.changes.get"],
        (&Method::POST, ["managedZones", _, "changes"]) => {
            let keys = |field: &str| -> BTreeSet<(String, String)> {
                req.body[field]
                    .as_array()
                    .map(|sets| {
                        sets.iter()
                            .map(|s| {
                                (
                                    s["name"].as_str().map(fqdn).unwrap_or_default(),
                                    s["type"].as_str().unwrap_or_default().to_string(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let (deleted, added) = (keys("deletions"), keys("additions"));
            let mut needs = vec!["dns.changes.create"];
            if added.iter().any(|k| !deleted.contains(k)) {
                needs.push("dns.resourceRecordSets.create");
            }
            if added.iter().any(|k| deleted.contains(k)) {
                needs.push("dns.resourceRecordSets.update");
            }
            if deleted.iter().any(|k| !added.contains(k)) {
                needs.push("dns.resourceRecordSets.delete");
            }
            needs
        }
        _ => Vec::new(),
    };
    super::authz::dns(w, project, &needs)
}

/// A zone by name or numeric id.
fn zone_index(w: &World, project: &str, zone: &str) -> Result<usize, ApiError> {
    w.zones
        .iter()
        .position(|z| z.project == project && (z.json["name"] == zone || z.json["id"] == zone))
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "The 'parameters.managedZone' resource named '{zone}' does not exist."
            ))
        })
}

fn fqdn(name: &str) -> String {
    format!("{}.", name.trim_end_matches('.').to_ascii_lowercase())
}

fn list_zones(w: &World, req: &Req, project: &str) -> Reply {
    let wanted = req.param("dnsName").map(fqdn);
    let zones: Vec<Value> = w
        .zones
        .iter()
        .filter(|z| z.project == project)
        .filter(|z| {
            wanted
                .as_ref()
                .is_none_or(|d| z.json["dnsName"].as_str().map(fqdn).as_ref() == Some(d))
        })
        .map(|z| z.json.clone())
        .collect();
    Ok(json!({"kind": "dns#managedZonesListResponse", "managedZones": zones}))
}

fn list_rrsets(w: &World, req: &Req, project: &str, zone: &str) -> Reply {
    let i = zone_index(w, project, zone)?;
    let name = req.param("name").map(fqdn);
    let rtype = req.param("type");
    if rtype.is_some() && name.is_none() {
        return Err(ApiError::invalid(
            "Invalid value for 'parameters.type': the type filter requires a name filter",
        ));
    }
    let rrsets: Vec<Value> = w.zones[i]
        .rrsets
        .iter()
        .filter(|((n, t), _)| name.as_ref().is_none_or(|x| x == n) && rtype.is_none_or(|x| x == t))
        .map(|(_, v)| v.clone())
        .collect();
    Ok(json!({"kind": "dns#resourceRecordSetsListResponse", "rrsets": rrsets}))
}

/// Checks one rrset of a change; returns its (name, type) key.
fn rrset_key(zone_dns: &str, set: &Value, field: &str) -> Result<(String, String), ApiError> {
    let name = set["name"].as_str().ok_or_else(|| {
        ApiError::new(
            400,
            "required",
            format!("Required field '{field}.name' not specified"),
        )
    })?;
    let rtype = set["type"].as_str().ok_or_else(|| {
        ApiError::new(
            400,
            "required",
            format!("Required field '{field}.type' not specified"),
        )
    })?;
    let name = fqdn(name);
    if !(name == zone_dns || name.ends_with(&format!(".{zone_dns}"))) {
        return Err(ApiError::invalid(format!(
            "Invalid value for '{field}.name': '{name}'. The name is not within the zone '{zone_dns}'"
        )));
    }
    let rrdatas = set["rrdatas"].as_array().cloned().unwrap_or_default();
    if rrdatas.is_empty() {
        return Err(ApiError::new(
            400,
            "required",
            format!("Required field '{field}.rrdata' not specified"),
        ));
    }
    for d in &rrdatas {
        let d = d.as_str().unwrap_or_default();
        let ok = match rtype {
            "A" => d.parse::<std::net::Ipv4Addr>().is_ok(),
            "AAAA" => d.parse::<std::net::Ipv6Addr>().is_ok(),
            _ => true,
        };
        if !ok {
            return Err(ApiError::invalid(format!(
                "Invalid value for '{field}.rrdata': '{d}'"
            )));
        }
    }
    Ok((name, rtype.to_string()))
}

fn rrdata_set(set: &Value) -> BTreeSet<String> {
    set["rrdatas"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Validates the whole change against the zone, then applies it atomically.
fn create_change(w: &mut World, req: &Req, project: &str, zone: &str) -> Reply {
    let i = zone_index(w, project, zone)?;
    let zone_dns = w.zones[i].json["dnsName"]
        .as_str()
        .map(fqdn)
        .unwrap_or_default();
    let deletions = req.body["deletions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let additions = req.body["additions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if deletions.is_empty() && additions.is_empty() {
        return Err(ApiError::new(
            400,
            "required",
            "The 'entity.change' resource must have at least one addition or deletion",
        ));
    }
    let mut next = w.zones[i].rrsets.clone();
    for (n, set) in deletions.iter().enumerate() {
        let field = format!("entity.change.deletions[{n}]");
        let key = rrset_key(&zone_dns, set, &field)?;
        let Some(existing) = next.get(&key) else {
            return Err(ApiError::not_found(format!(
                "The '{field}' resource named '{} ({})' does not exist.",
                key.0, key.1
            )));
        };
        let same = existing["ttl"] == set["ttl"] && rrdata_set(existing) == rrdata_set(set);
        if !same {
            return Err(ApiError::new(
                412,
                "conditionNotMet",
                format!("Precondition not met for '{field}'"),
            ));
        }
        next.remove(&key);
    }
    let mut stored_additions = Vec::new();
    for (n, set) in additions.iter().enumerate() {
        let field = format!("entity.change.additions[{n}]");
        let key = rrset_key(&zone_dns, set, &field)?;
        if next.contains_key(&key) {
            return Err(ApiError::new(
                409,
                "alreadyExists",
                format!(
                    "The resource '{field}' named '{} ({})' already exists",
                    key.0, key.1
                ),
            ));
        }
        // A name holds one CNAME or sets of other types, never both
        // (cloud.google.com/dns/docs/error-messages, `cnameResourceRecordSetConflict`).
        let clash = if key.1 == "CNAME" {
            next.keys().any(|(n, t)| *n == key.0 && t != "CNAME")
        } else {
            next.contains_key(&(key.0.clone(), "CNAME".to_string()))
        };
        if clash {
            return Err(ApiError::new(
                409,
                "cnameResourceRecordSetConflict",
                format!(
                    "The resource record set '{field}' is invalid because the DNS name '{}' may have either one CNAME resource record set or resource record sets of other types, but not both.",
                    key.0
                ),
            ));
        }
        let stored = json!({
            "kind": "dns#resourceRecordSet",
            "name": key.0,
            "type": key.1,
            "ttl": set["ttl"].as_i64().unwrap_or(300),
            "rrdatas": set["rrdatas"],
        });
        stored_additions.push(stored.clone());
        next.insert(key, stored);
    }
    let delay = w.options.change_delay;
    let id = (w.zones[i].changes.len() + 1).to_string();
    let change = json!({
        "kind": "dns#change",
        "id": id,
        "startTime": now_rfc3339(),
        "status": if delay.is_zero() { "done" } else { "pending" },
        "additions": stored_additions,
        "deletions": deletions,
        "isServing": true,
    });
    let zone = &mut w.zones[i];
    zone.rrsets = next;
    zone.changes.push((change.clone(), Instant::now() + delay));
    Ok(change)
}
