//! Cloud Resource Manager v1 `projects.testIamPermissions`: `POST
//! /v1/projects/{project}:testIamPermissions` with `{"permissions": [..]}` answers
//! `{"permissions": [..]}`, the subset the caller holds on the project, in the order asked;
//! the field is left out when none is held (proto3 JSON drops an empty list). Asking needs no
//! permission. What is held comes from [`super::FakeOptions::granted`] (a project it does not
//! list grants everything), which every other call is checked against too (`authz`).
//!
//! Refused as Resource Manager refuses them: a project the fake does not hold (403
//! `PERMISSION_DENIED`, "The caller does not have permission": Resource Manager does not say
//! whether a project exists), a permission with a wildcard or one IAM does not know (400
//! `INVALID_ARGUMENT`), and a body without a `permissions` list (400).

use super::World;
use super::http::{ApiError, Reply, Req};
use hyper::Method;
use serde_json::{Value, json};

/// The permissions this fake knows (IAM knows thousands; these are the ones the agent's calls
/// and its neighbours need). Anything else is refused as an unknown permission.
pub const KNOWN_PERMISSIONS: &[&str] = &[
    "compute.addresses.create",
    "compute.addresses.createInternal",
    "compute.addresses.delete",
    "compute.addresses.deleteInternal",
    "compute.addresses.get",
    "compute.addresses.list",
    "compute.addresses.setLabels",
    "compute.addresses.use",
    "compute.addresses.useInternal",
    "compute.forwardingRules.get",
    "compute.instanceGroups.get",
    "compute.instanceGroups.list",
    "compute.instances.get",
    "compute.instances.updateNetworkInterface",
    "compute.projects.get",
    "compute.regionBackendServices.get",
    "compute.regionOperations.get",
    "compute.regionOperations.list",
    "compute.regions.get",
    "compute.subnetworks.get",
    "compute.subnetworks.list",
    "compute.subnetworks.use",
    "compute.zoneOperations.get",
    "dns.changes.create",
    "dns.changes.get",
    "dns.changes.list",
    "dns.managedZones.get",
    "dns.managedZones.list",
    "dns.resourceRecordSets.create",
    "dns.resourceRecordSets.delete",
    "dns.resourceRecordSets.list",
    "dns.resourceRecordSets.update",
    "resourcemanager.projects.get",
];

/// `rest` is the path after `v1/projects/`. None: not this method.
pub fn route(w: &World, req: &Req, rest: &[&str]) -> Option<Reply> {
    let [resource] = rest else { return None };
    let project = resource.strip_suffix(":testIamPermissions")?;
    if req.method != Method::POST {
        return Some(Err(ApiError::new(
            404,
            "notFound",
            format!(
                "The requested URL was not found on this server ({})",
                req.method
            ),
        )));
    }
    Some(test_permissions(w, project, &req.body))
}

fn test_permissions(w: &World, project: &str, body: &Value) -> Reply {
    if !holds_project(w, project) {
        return Err(ApiError::new(
            403,
            "forbidden",
            "The caller does not have permission",
        ));
    }
    let asked = match body.get("permissions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .map(|p| {
                p.as_str().map(str::to_string).ok_or_else(|| {
                    ApiError::invalid(format!("Invalid value at 'permissions' (TYPE_STRING), {p}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "Invalid value at 'permissions' (type.googleapis.com/google.iam.v1.TestIamPermissionsRequest), {other}"
            )));
        }
    };
    for permission in &asked {
        if permission.contains('*') {
            return Err(ApiError::invalid(format!(
                "Permissions with wildcards ({permission}) are not allowed."
            )));
        }
        if !KNOWN_PERMISSIONS.contains(&permission.as_str()) {
            return Err(ApiError::invalid(format!(
                "Permission {permission} is not valid for this resource."
            )));
        }
    }
    let held: Vec<&String> = asked
        .iter()
        .filter(|p| super::authz::holds(w, project, p))
        .collect();
    if held.is_empty() {
        Ok(json!({}))
    } else {
        Ok(json!({ "permissions": held }))
    }
}

/// The seed's project, each subnetwork's (a Shared VPC host) and each zone's.
fn holds_project(w: &World, project: &str) -> bool {
    let seed = w.seed();
    project == seed.project
        || seed
            .subnetworks
            .iter()
            .any(|s| seed.subnet_project(s) == project)
        || seed
            .zones
            .iter()
            .any(|z| z.project.as_deref() == Some(project))
}

#[cfg(test)]
mod tests {
    use super::super::{FakeOptions, Seed};
    use super::*;

    fn world(granted: &[(&str, &[&str])]) -> World {
        World::new(FakeOptions {
            seed: Seed::shared_vpc(),
            granted: granted
                .iter()
                .map(|(p, list)| (p.to_string(), list.iter().map(|s| s.to_string()).collect()))
                .collect(),
            ..FakeOptions::default()
        })
    }

    fn ask(list: &[&str]) -> Value {
        json!({ "permissions": list })
    }

    #[test]
    fn each_project_answers_from_its_own_grants_and_leaves_out_an_empty_list() {
        let w = world(&[
            ("example-project", &["dns.changes.create"]),
            ("example-host-project", &[]),
        ]);
        let asked = ask(&["compute.addresses.create", "dns.changes.create"]);
        assert_eq!(
            test_permissions(&w, "example-project", &asked).unwrap(),
            json!({"permissions": ["dns.changes.create"]})
        );
        assert_eq!(
            test_permissions(
                &w,
                "example-host-project",
                &ask(&["compute.subnetworks.use"])
            )
            .unwrap(),
            json!({})
        );
        // Not listed: everything is granted.
        let all = world(&[]);
        assert_eq!(
            test_permissions(&all, "example-host-project", &asked).unwrap(),
            asked
        );
    }

    #[test]
    fn wildcards_unknown_permissions_and_projects_are_refused() {
        let w = world(&[]);
        for bad in ["*", "compute.*", "compute.addresses.frobnicate"] {
            let e = test_permissions(&w, "example-project", &ask(&[bad])).unwrap_err();
            assert_eq!(e.code, 400, "{bad}");
        }
        let e = test_permissions(&w, "example-project", &json!({"permissions": "dns"}));
        assert_eq!(e.unwrap_err().code, 400);
        let e = test_permissions(&w, "nope", &ask(&["dns.changes.create"])).unwrap_err();
        assert_eq!(e.code, 403);
        assert_eq!(e.message, "The caller does not have permission");
    }
}
