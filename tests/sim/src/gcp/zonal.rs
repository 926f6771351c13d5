//! compute.v1 zonal calls of a cloud-controller-manager: `zones.list` (it manages every zone
//! of its region with `regional`/`multizone`, openshift/cloud-provider-gcp 30cc0479
//! `providers/gce/gce.go:1004-1027`), `instances.list` (with the RE2 filter `name eq
//! <prefix>.*`, `gce_instances.go:701-762`), and unmanaged `instanceGroups`: `insert`,
//! `delete`, `listInstances`, `addInstances` and `removeInstances`
//! (`gce_instancegroup.go`, `gce_loadbalancer_internal.go:654-727`). Each mutation answers a
//! zonal Operation (`zoneOperations.wait`, see `instances`).
//!
//! An instance group holds VMs of its own zone only; adding a member twice, or removing one
//! that is not a member, is refused (400 `memberAlreadyExists` / `memberNotFound`); a group a
//! backend service uses cannot be deleted (400 `resourceInUseByAnotherResource`).

use super::compute::BASE;
use super::http::{ApiError, Reply, Req, list_page};
use super::{World, region_zones};
use hyper::Method;
use serde_json::{Value, json};

/// `rest` is the path after `compute/v1/projects/`. None: not one of these calls.
pub(crate) fn route(w: &mut World, req: &Req, rest: &[&str]) -> Option<Reply> {
    Some(match (&req.method, rest) {
        (&Method::GET, [p, "zones"]) => zones(w, req, p),
        (&Method::GET, [p, "zones", z, "instances"]) => instances(w, req, p, z),
        (&Method::POST, [p, "zones", z, "instanceGroups"]) => insert(w, req, p, z),
        (&Method::DELETE, [p, "zones", z, "instanceGroups", name]) => delete(w, p, z, name),
        (&Method::POST, [p, "zones", z, "instanceGroups", name, action]) => {
            members_call(w, req, p, z, name, action)
        }
        _ => return None,
    })
}

fn allow(w: &World, project: &str, permission: &str, path: &str) -> Result<(), ApiError> {
    super::authz::compute(w, project, permission, path)?;
    if project != w.seed().project {
        return Err(ApiError::not_found(format!(
            "The resource 'projects/{project}' was not found"
        )));
    }
    Ok(())
}

fn zones(w: &World, req: &Req, project: &str) -> Reply {
    allow(
        w,
        project,
        "compute.zones.list",
        &format!("projects/{project}"),
    )?;
    let (filter, start, max) = req.list_params()?;
    let region = w.seed().region.clone();
    let items: Vec<Value> = region_zones(&region)
        .iter()
        .map(|z| {
            json!({
                "kind": "compute#zone",
                "id": super::reads::stable_id(z),
                "name": z,
                "status": "UP",
                "region": format!("{BASE}/projects/{project}/regions/{region}"),
                "selfLink": format!("{BASE}/projects/{project}/zones/{z}"),
            })
        })
        .filter(|z| filter.matches(z))
        .collect();
    Ok(list_page(
        "compute#zoneList",
        &format!("projects/{project}/zones"),
        &items,
        start,
        max,
    ))
}

fn instances(w: &World, req: &Req, project: &str, zone: &str) -> Reply {
    let parent = format!("projects/{project}/zones/{zone}");
    allow(w, project, "compute.instances.list", &parent)?;
    super::instance_groups::check_zone(w, project, zone)?;
    let (filter, start, max) = req.list_params()?;
    let items: Vec<Value> = w
        .instances
        .iter()
        .filter(|(_, i)| i.zone == zone)
        .map(|(name, i)| super::instances::instance_json(w, name, i))
        .filter(|i| filter.matches(i))
        .collect();
    Ok(list_page(
        "compute#instanceList",
        &format!("{parent}/instances"),
        &items,
        start,
        max,
    ))
}

/// (zone, name) of the instance group a URL names, when it exists.
pub(crate) fn group_of_url(w: &World, url: &str) -> Option<(String, String)> {
    let tail = url.rsplit("/zones/").next()?;
    let (zone, name) = tail.split_once("/instanceGroups/")?;
    w.seed()
        .instance_groups
        .iter()
        .any(|(z, n, _)| z == zone && n == name)
        .then(|| (zone.to_string(), name.to_string()))
}

fn group_path(project: &str, zone: &str, name: &str) -> String {
    format!("projects/{project}/zones/{zone}/instanceGroups/{name}")
}

fn insert(w: &mut World, req: &Req, project: &str, zone: &str) -> Reply {
    let name = req.body["name"].as_str().unwrap_or_default().to_string();
    let path = group_path(project, zone, &name);
    allow(w, project, "compute.instanceGroups.create", &path)?;
    super::instance_groups::check_zone(w, project, zone)?;
    if !super::compute::valid_name(&name) {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'resource.name': '{name}'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{{0,61}}[a-z0-9])?)'"
        )));
    }
    if group_of_url(w, &path).is_some() {
        return Err(ApiError::new(
            409,
            "alreadyExists",
            format!("The resource '{path}' already exists"),
        ));
    }
    w.options
        .seed
        .instance_groups
        .push((zone.to_string(), name, Vec::new()));
    super::lb_store::started(
        w,
        &format!("projects/{project}/zones/{zone}"),
        "insert",
        &path,
    )
}

fn delete(w: &mut World, project: &str, zone: &str, name: &str) -> Reply {
    let path = group_path(project, zone, name);
    allow(w, project, "compute.instanceGroups.delete", &path)?;
    if group_of_url(w, &path).is_none() {
        return Err(ApiError::not_found(format!(
            "The resource '{path}' was not found"
        )));
    }
    if let Some(user) = super::lb_rules::user_of(w, &path) {
        return Err(ApiError::new(
            400,
            "resourceInUseByAnotherResource",
            format!("The instance_group resource '{path}' is already being used by '{user}'"),
        ));
    }
    w.options
        .seed
        .instance_groups
        .retain(|(z, n, _)| !(z == zone && n == name));
    super::lb_store::started(
        w,
        &format!("projects/{project}/zones/{zone}"),
        "delete",
        &path,
    )
}

fn members_call(
    w: &mut World,
    req: &Req,
    project: &str,
    zone: &str,
    name: &str,
    action: &str,
) -> Reply {
    let path = group_path(project, zone, name);
    let (permission, add) = match action {
        "listInstances" => ("compute.instanceGroups.list", None),
        "addInstances" => ("compute.instanceGroups.update", Some(true)),
        "removeInstances" => ("compute.instanceGroups.update", Some(false)),
        _ => {
            return Err(ApiError::not_found(format!(
                "The requested URL was not found: POST {path}/{action}"
            )));
        }
    };
    allow(w, project, permission, &path)?;
    if group_of_url(w, &path).is_none() {
        return Err(ApiError::not_found(format!(
            "The resource '{path}' was not found"
        )));
    }
    let Some(add) = add else {
        let items: Vec<Value> = super::instance_groups::members(w, zone, name)
            .iter()
            .map(|m| {
                json!({"instance": format!("{BASE}/{}", super::instances::instance_path(project, zone, m)),
                       "status": "RUNNING"})
            })
            .collect();
        return Ok(list_page(
            "compute#instanceGroupsListInstances",
            &format!("{path}/listInstances"),
            &items,
            0,
            500,
        ));
    };
    let mut members = super::instance_groups::members(w, zone, name);
    for item in req.body["instances"].as_array().into_iter().flatten() {
        let url = item["instance"].as_str().unwrap_or_default();
        let vm = url.rsplit('/').next().unwrap_or_default().to_string();
        let in_zone = url.contains(&format!("/zones/{zone}/instances/"))
            && w.instances.get(&vm).is_some_and(|i| i.zone == zone);
        if !in_zone {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'resource.instances[0].instance': '{url}'. The instance must exist and be in the instance group's zone."
            )));
        }
        match (add, members.contains(&vm)) {
            (true, true) => {
                return Err(ApiError::new(
                    400,
                    "memberAlreadyExists",
                    format!("The resource '{url}' is already a member of '{path}'"),
                ));
            }
            (false, false) => {
                return Err(ApiError::new(
                    400,
                    "memberNotFound",
                    format!("The resource '{url}' is not a member of '{path}'"),
                ));
            }
            (true, false) => members.push(vm),
            (false, true) => members.retain(|m| *m != vm),
        }
    }
    if let Some(group) = w
        .options
        .seed
        .instance_groups
        .iter_mut()
        .find(|(z, n, _)| z == zone && n == name)
    {
        group.2 = members;
    }
    super::lb_store::started(
        w,
        &format!("projects/{project}/zones/{zone}"),
        action,
        &path,
    )
}
