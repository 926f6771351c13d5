//! Discovery documents (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`)
//! in the legacy (unaggregated) format, and the CRDs behind the custom resources.

use super::resources::{RESOURCES, Resource, groups};
use serde_json::{Value, json};

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": "v1.33.5",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-10-01T00:00:00Z",
        "goVersion": "go1.24.6",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

pub fn api_versions(server: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server}]
    })
}

fn group_version(group: &str, version: &str) -> Value {
    json!({"groupVersion": format!("{group}/{version}"), "version": version})
}

/// A group and its versions, in table order; the first is the preferred one
/// (`operators.coreos.com`: v1 for OperatorGroup, v1alpha1 for Subscription).
fn api_group(group: &str) -> Value {
    let mut versions: Vec<&str> = Vec::new();
    for r in RESOURCES.iter().filter(|r| r.group == group) {
        if !versions.contains(&r.version) {
            versions.push(r.version);
        }
    }
    let preferred = versions.first().copied().unwrap_or("v1");
    json!({
        "name": group,
        "versions": versions.iter().map(|v| group_version(group, v)).collect::<Vec<_>>(),
        "preferredVersion": group_version(group, preferred)
    })
}

pub fn group_list() -> Value {
    json!({
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": groups().into_iter().map(api_group).collect::<Vec<_>>()
    })
}

pub fn group(name: &str) -> Option<Value> {
    groups().contains(&name).then(|| {
        let mut g = api_group(name);
        g["kind"] = json!("APIGroup");
        g["apiVersion"] = json!("v1");
        g
    })
}

fn resource_entries(r: &Resource) -> Vec<Value> {
    let mut main = json!({
        "name": r.plural,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": VERBS,
    });
    if !r.short_names.is_empty() {
        main["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        main["categories"] = json!(r.categories);
    }
    let mut out = vec![main];
    if r.status {
        out.push(json!({
            "name": format!("{}/status", r.plural),
            "singularName": "",
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": ["get", "patch", "update"],
        }));
    }
    out
}

/// `/api/v1` (group "") or `/apis/<group>/<version>`.
pub fn resource_list(group: &str, version: &str) -> Option<Value> {
    let resources: Vec<Value> = RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .flat_map(resource_entries)
        .collect();
    if resources.is_empty() {
        return None;
    }
    let mut list =
        json!({"kind": "APIResourceList", "groupVersion": version, "resources": resources});
    if !group.is_empty() {
        list["apiVersion"] = json!("v1");
        list["groupVersion"] = json!(format!("{group}/{version}"));
    }
    Some(list)
}

/// The CustomResourceDefinitions of the custom resources, seeded at start.
pub fn crds() -> Vec<Value> {
    RESOURCES
        .iter()
        .filter(|r| r.custom)
        .map(|r| {
            let names = json!({
                "plural": r.plural,
                "singular": r.singular,
                "kind": r.kind,
                "listKind": r.list_kind(),
            });
            json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{}.{}", r.plural, r.group)},
                "spec": {
                    "group": r.group,
                    "names": names,
                    "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
                    "versions": [{
                        "name": r.version,
                        "served": true,
                        "storage": true,
                        "subresources": if r.status { json!({"status": {}}) } else { json!({}) },
                        "schema": {"openAPIV3Schema": super::schema::of(r).cloned().unwrap_or_else(|| json!({
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": true
                        }))}
                    }]
                },
                "status": {
                    "acceptedNames": names,
                    "storedVersions": [r.version],
                    "conditions": [
                        {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                         "message": "no conflicts found"},
                        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                         "message": "the initial names have been accepted"}
                    ]
                }
            })
        })
        .collect()
}
