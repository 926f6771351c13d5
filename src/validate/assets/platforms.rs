//! The platform's own fields of the install-config: AWS subnets (ids, duplicates, a public
//! subnet for an external API), Azure and GCP names.

use super::names;
use super::{FileCheck, at};
use serde_json::Value;
use std::collections::BTreeMap;

/// Duplicates among the ids of a list, as (index, first index).
fn duplicates<'a>(ids: impl Iterator<Item = (usize, &'a str)>) -> Vec<(usize, usize, &'a str)> {
    let mut first = BTreeMap::new();
    let mut dups = Vec::new();
    for (i, id) in ids {
        if let Some(f) = first.insert(id, i) {
            first.insert(id, f);
            dups.push((i, f, id));
        }
    }
    dups
}

pub(super) fn aws(c: &mut FileCheck, ic: &Value) {
    c.opt_str(ic, "platform.aws.region", names::aws_region);
    c.opt_str(ic, "platform.aws.hostedZone", names::aws_hosted_zone_id);
    for list in ["platform.aws.vpc.subnets", "platform.aws.subnets"] {
        let Some(Value::Array(entries)) = at(ic, list) else {
            continue;
        };
        let vpc = list.ends_with("vpc.subnets");
        let ids: Vec<(usize, &str, String)> = entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                let (v, field) = if vpc {
                    (e.get("id"), format!("{list}[{i}].id"))
                } else {
                    (Some(e), format!("{list}[{i}]"))
                };
                v.and_then(Value::as_str).map(|s| (i, s, field))
            })
            .collect();
        for (_, id, field) in &ids {
            if let Err(p) = names::aws_subnet_id(id) {
                c.bad(field, p);
            }
        }
        for (i, first, id) in duplicates(ids.iter().map(|(i, id, _)| (*i, *id))) {
            let field = if vpc {
                format!("{list}[{i}].id")
            } else {
                format!("{list}[{i}]")
            };
            c.bad(
                &field,
                format!("{id} is listed twice (also {list}[{first}]); expected each subnet once, with all its roles"),
            );
        }
        if vpc {
            public_subnet_for_external_api(c, ic, entries);
        }
    }
}

/// With roles given, publish External (the default) needs a ControlPlaneExternalLB subnet:
/// without one the public `api` record would silently be left out.
fn public_subnet_for_external_api(c: &mut FileCheck, ic: &Value, entries: &[Value]) {
    let publish = at(ic, "publish")
        .and_then(Value::as_str)
        .unwrap_or("External");
    if !(publish.is_empty() || publish == "External") {
        return;
    }
    let roles: Vec<&str> = entries
        .iter()
        .filter_map(|e| e.get("roles").and_then(Value::as_array))
        .flatten()
        .filter_map(|r| r.get("type").and_then(Value::as_str))
        .collect();
    if !roles.is_empty() && !roles.contains(&"ControlPlaneExternalLB") {
        c.bad(
            "platform.aws.vpc.subnets",
            "no subnet has the role ControlPlaneExternalLB, but publish is External; expected at least one public subnet for the public API load balancer (or publish: Internal)",
        );
    }
}

pub(super) fn azure(c: &mut FileCheck, ic: &Value) {
    c.opt_str(ic, "platform.azure.region", names::azure_region);
    for f in [
        "resourceGroupName",
        "baseDomainResourceGroupName",
        "networkResourceGroupName",
    ] {
        c.opt_str(
            ic,
            &format!("platform.azure.{f}"),
            names::azure_resource_group,
        );
    }
    c.opt_str(ic, "platform.azure.virtualNetwork", |s| {
        names::azure_network_name(s, 2, 64)
    });
    for f in ["computeSubnet", "controlPlaneSubnet"] {
        c.opt_str(ic, &format!("platform.azure.{f}"), |s| {
            names::azure_network_name(s, 1, 80)
        });
    }
    if let Some(Value::Array(subnets)) = at(ic, "platform.azure.subnets") {
        for (i, s) in subnets.iter().enumerate() {
            c.opt_str(s, "name", |n| names::azure_network_name(n, 1, 80));
            // opt_str names the field relative to the entry: say which entry.
            if let Some(last) = c.errors.last_mut()
                && last.field == format!("{}name", c.prefix)
            {
                last.field = format!("{}platform.azure.subnets[{i}].name", c.prefix);
            }
        }
    }
}

pub(super) fn gcp(c: &mut FileCheck, ic: &Value) {
    c.opt_str(ic, "platform.gcp.projectID", names::gcp_project);
    c.opt_str(ic, "platform.gcp.networkProjectID", names::gcp_project);
    c.opt_str(ic, "platform.gcp.region", names::gcp_region);
    for f in ["network", "controlPlaneSubnet", "computeSubnet"] {
        c.opt_str(ic, &format!("platform.gcp.{f}"), names::gcp_name);
    }
}
