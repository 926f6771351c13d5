//! compute.v1 reads that preflight makes: `projects.get`, `regions.get` (with the region's
//! address `quotas`, their usage counted from the addresses the fake holds) and
//! `subnetworks.get` (under the project that holds the subnetwork: a Shared VPC's host), and
//! zonal `instanceGroups` (see `instance_groups`).
//!
//! Each is refused as GCE refuses a caller without its permission (see `authz`).

use super::compute::BASE;
use super::http::{ApiError, Reply, Req};
use super::{SubnetSeed, World};
use hyper::Method;
use serde_json::json;

/// `rest` is the path after `compute/v1/projects/`. None: not one of these reads.
pub fn route(w: &World, req: &Req, rest: &[&str]) -> Option<Reply> {
    if req.method != Method::GET {
        return None;
    }
    if let Some(reply) = super::instance_groups::route(w, req, rest) {
        return Some(reply);
    }
    Some(match rest {
        [project] => project_get(w, project),
        [project, "regions", region] => region_get(w, project, region),
        [project, "regions", region, "subnetworks", name] => {
            subnetwork_get(w, project, region, name)
        }
        _ => return None,
    })
}

/// GCE's refusal when the caller lacks `permission` for `resource` (`projects/<p>/...`).
fn allowed(w: &World, permission: &str, resource: &str) -> Result<(), ApiError> {
    let project = resource
        .strip_prefix("projects/")
        .and_then(|r| r.split('/').next())
        .unwrap_or_default();
    super::authz::compute(w, project, permission, resource)
}

/// Projects the fake holds: the seed's, and each subnetwork's (a Shared VPC host).
fn known_project(w: &World, project: &str) -> Result<(), ApiError> {
    let seed = w.seed();
    if project == seed.project
        || seed
            .subnetworks
            .iter()
            .any(|s| seed.subnet_project(s) == project)
    {
        Ok(())
    } else {
        Err(ApiError::not_found(format!(
            "The resource 'projects/{project}' was not found"
        )))
    }
}

fn project_get(w: &World, project: &str) -> Reply {
    known_project(w, project)?;
    allowed(w, "compute.projects.get", &format!("projects/{project}"))?;
    Ok(json!({
        "kind": "compute#project",
        "id": stable_id(project),
        "name": project,
        "creationTimestamp": "2024-01-01T00:00:00.000-07:00",
        "defaultServiceAccount": "123456789-compute@developer.gserviceaccount.com",
        "defaultNetworkTier": w.seed().default_network_tier,
        "xpnProjectStatus": "UNSPECIFIED_XPN_PROJECT_STATUS",
        "selfLink": format!("{BASE}/projects/{project}"),
    }))
}

fn region_get(w: &World, project: &str, region: &str) -> Reply {
    known_project(w, project)?;
    let seed = w.seed();
    if region != seed.region {
        return Err(ApiError::not_found(format!(
            "The resource 'projects/{project}/regions/{region}' was not found"
        )));
    }
    allowed(
        w,
        "compute.regions.get",
        &format!("projects/{project}/regions/{region}"),
    )?;
    // Addresses live in the seed's project only: another project's region uses none.
    let count = |kind: &str| {
        if project != seed.project {
            return 0;
        }
        w.addresses
            .values()
            .filter(|a| a["addressType"] == kind)
            .count()
    };
    let quota = |metric: &str, limit: u32, usage: usize| json!({"metric": metric, "limit": f64::from(limit), "usage": usage as f64});
    let (external, internal) = (count("EXTERNAL"), count("INTERNAL"));
    let zones: Vec<String> = super::region_zones(region)
        .iter()
        .map(|z| format!("{BASE}/projects/{project}/zones/{z}"))
        .collect();
    Ok(json!({
        "kind": "compute#region",
        "id": stable_id(region),
        "name": region,
        "description": region,
        "status": "UP",
        "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
        "zones": zones,
        "quotas": [
            quota("CPUS", 24, 0),
            quota("STATIC_ADDRESSES", seed.quotas.static_addresses, external),
            quota("IN_USE_ADDRESSES", seed.quotas.static_addresses, external),
            quota("INTERNAL_ADDRESSES", seed.quotas.internal_addresses, internal),
        ],
        "selfLink": format!("{BASE}/projects/{project}/regions/{region}"),
        "supportsPzs": false,
    }))
}

fn subnetwork_get(w: &World, project: &str, region: &str, name: &str) -> Reply {
    known_project(w, project)?;
    let seed = w.seed();
    let path = format!("projects/{project}/regions/{region}/subnetworks/{name}");
    let subnet: &SubnetSeed = seed
        .subnetworks
        .iter()
        .find(|s| s.name == name && seed.subnet_project(s) == project && region == seed.region)
        .ok_or_else(|| ApiError::not_found(format!("The resource '{path}' was not found")))?;
    allowed(w, "compute.subnetworks.get", &path)?;
    let gateway = std::net::Ipv4Addr::from(u32::from(subnet.cidr) + 1);
    Ok(json!({
        "kind": "compute#subnetwork",
        "id": stable_id(&path),
        "name": name,
        "network": format!("{BASE}/projects/{project}/global/networks/{}", subnet.network),
        "ipCidrRange": format!("{}/{}", subnet.cidr, subnet.prefix),
        "gatewayAddress": gateway.to_string(),
        "region": format!("{BASE}/projects/{project}/regions/{region}"),
        "privateIpGoogleAccess": false,
        "purpose": "PRIVATE",
        "stackType": "IPV4_ONLY",
        "fingerprint": "bPzmxzqKiL0=",
        "creationTimestamp": "2024-01-01T00:00:00.000-07:00",
        "selfLink": format!("{BASE}/{path}"),
    }))
}

/// GCE ids are decimal uint64 strings; a stable one per name keeps answers repeatable.
pub(crate) fn stable_id(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    (hash >> 1).to_string()
}
