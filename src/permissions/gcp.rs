//! The GCP custom role: one role, the projects to bind it on named in its description.

use crate::assets::{ClusterSpec, Platform};
use bootstrap_cloud::Scope;
use bootstrap_cloud::permissions::{self as table, Command};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// PURE: the custom role (`gcloud iam roles create --file`), the projects to bind it on in
/// its description.
pub fn gcp_role(spec: Option<&ClusterSpec>, commands: &[Command]) -> Value {
    let wanted = match spec {
        Some(spec) => {
            let (project, network_project) = match &spec.platform {
                Platform::Gcp(gcp) => (gcp.project.clone(), gcp.subnetwork_project().to_string()),
                _ => ("<project>".into(), "<project>".into()),
            };
            let scopes: BTreeSet<Scope> = super::planned_scopes(spec);
            // Each written zone's project, and whether it is found by name (not by id).
            let mut zones: Vec<(String, bool)> = Vec::new();
            for (zone, _) in crate::plan::records_of_interest(spec) {
                let p = zone
                    .id
                    .as_deref()
                    .and_then(zone_project)
                    .unwrap_or(&project)
                    .to_string();
                let looked_up = zone.id.is_none();
                match zones.iter_mut().find(|(known, _)| *known == p) {
                    Some((_, any)) => *any |= looked_up,
                    None => zones.push((p, looked_up)),
                }
            }
            let zones: Vec<(&str, bool)> = zones.iter().map(|(p, l)| (p.as_str(), *l)).collect();
            table::gcp_wanted(&project, &network_project, &scopes, &zones, commands, true)
        }
        None => table::gcp_wanted(
            "<project>",
            "<project>",
            &BTreeSet::from([Scope::Public, Scope::Private, Scope::Bootstrap]),
            &[("<project>", true)],
            commands,
            true,
        ),
    };
    let permissions: BTreeSet<&str> = wanted.values().flatten().copied().collect();
    let bindings: Vec<String> = wanted
        .iter()
        .map(|(project, p)| format!("{project} ({} permissions)", p.len()))
        .collect();
    json!({
        "title": "bootstrap-agent",
        "description": format!("bootstrap-agent: bind on {}", bindings.join(", ")),
        "stage": "GA",
        "includedPermissions": permissions,
    })
}

/// `projects/<p>/managedZones/<z>`: p.
fn zone_project(id: &str) -> Option<&str> {
    match id.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", project, "managedZones", zone] if !project.is_empty() && !zone.is_empty() => {
            Some(project)
        }
        _ => None,
    }
}
