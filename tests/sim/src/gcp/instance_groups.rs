//! compute.v1 zonal `instanceGroups`: `list` (with `filter`, `maxResults`, `pageToken`) and
//! `get`, under the seed's project, in the zones of its region. The groups are the seed's
//! (the installer's `<infra-id>-master-<zone>`, see [`super::installer_machines`]); the fake
//! makes none. OpenShift's cloud provider lists them per zone to reuse them for internal load
//! balancers (openshift/cloud-provider-gcp `providers/gce/gce_loadbalancer_internal_openshift.go`,
//! `candidateExternalInstanceGroups`), preflight to see that they are there.

use super::compute::BASE;
use super::http::{ApiError, Reply, Req, list_page};
use super::{World, region_zones};
use serde_json::{Value, json};

/// `rest` is the path after `compute/v1/projects/`: `[project, "zones", zone, "instanceGroups",
/// name?]`. None: not an instance-group read.
pub fn route(w: &World, req: &Req, rest: &[&str]) -> Option<Reply> {
    match rest {
        [project, "zones", zone, "instanceGroups"] => Some(list(w, req, project, zone)),
        [project, "zones", zone, "instanceGroups", name] => Some(get(w, project, zone, name)),
        _ => None,
    }
}

pub(super) fn check_zone(w: &World, project: &str, zone: &str) -> Result<(), ApiError> {
    if project != w.seed().project {
        return Err(ApiError::not_found(format!(
            "The resource 'projects/{project}' was not found"
        )));
    }
    if !region_zones(&w.seed().region).iter().any(|z| z == zone) {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'zone': '{zone}'. Unknown zone."
        )));
    }
    Ok(())
}

/// The instance groups of `zone` as the API shows them.
pub(crate) fn in_zone(w: &World, zone: &str) -> Vec<Value> {
    let seed = w.seed();
    seed.instance_groups
        .iter()
        .filter(|(z, _, _)| z == zone)
        .map(|(zone, name, members)| {
            let zone_path = format!("projects/{}/zones/{zone}", seed.project);
            json!({
                "kind": "compute#instanceGroup",
                "id": super::reads::stable_id(&format!("{zone_path}/{name}")),
                "name": name,
                "zone": format!("{BASE}/{zone_path}"),
                "network": format!("{BASE}/projects/{}/global/networks/{}", seed.project, seed.network),
                "size": members.len(),
                "namedPorts": [{"name": "apiserver", "port": 6443}],
                "fingerprint": "42WmSpB8rSM=",
                "creationTimestamp": "2024-01-01T00:00:00.000-07:00",
                "selfLink": format!("{BASE}/{zone_path}/instanceGroups/{name}"),
            })
        })
        .collect()
}

/// The member instance names of group `name` in `zone` (`instanceGroups.listInstances`).
pub(crate) fn members(w: &World, zone: &str, name: &str) -> Vec<String> {
    w.seed()
        .instance_groups
        .iter()
        .find(|(z, n, _)| z == zone && n == name)
        .map(|(_, _, m)| m.clone())
        .unwrap_or_default()
}

fn list(w: &World, req: &Req, project: &str, zone: &str) -> Reply {
    let parent = format!("projects/{project}/zones/{zone}");
    super::authz::compute(w, project, "compute.instanceGroups.list", &parent)?;
    check_zone(w, project, zone)?;
    let (filter, start, max) = req.list_params()?;
    let matching: Vec<Value> = in_zone(w, zone)
        .into_iter()
        .filter(|g| filter.matches(g))
        .collect();
    let path = format!("projects/{project}/zones/{zone}/instanceGroups");
    Ok(list_page(
        "compute#instanceGroupList",
        &path,
        &matching,
        start,
        max,
    ))
}

fn get(w: &World, project: &str, zone: &str, name: &str) -> Reply {
    let path = format!("projects/{project}/zones/{zone}/instanceGroups/{name}");
    super::authz::compute(w, project, "compute.instanceGroups.get", &path)?;
    check_zone(w, project, zone)?;
    in_zone(w, zone)
        .into_iter()
        .find(|g| g["name"] == name)
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "The resource 'projects/{project}/zones/{zone}/instanceGroups/{name}' was not found"
            ))
        })
}
