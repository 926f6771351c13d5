//! IAM in the fake: every compute.v1 and dns.v1 call is checked against the permissions the
//! caller holds on the request's project, the same set `projects.testIamPermissions` answers
//! from ([`super::FakeOptions::granted`]: a project it does not list grants everything; a
//! permission in [`super::FakeOptions::denied`] is held nowhere). The check comes first, before
//! the resource is looked up, as Google's front ends authorize before serving.
//!
//! Which call needs which permission: the "IAM Permissions" section of each compute.v1 method
//! reference (`addresses.insert`: `compute.addresses.create`, or `createInternal` for an
//! INTERNAL address, with `compute.subnetworks.use` on the subnetwork it names;
//! `addresses.delete`: `delete` / `deleteInternal`; `regionOperations.get` and `wait`:
//! `compute.regionOperations.get`; ...) and Cloud DNS's "Roles and permissions" page
//! (docs.cloud.google.com/dns/docs/access-control: `changes.create` needs
//! `dns.changes.create` and, per record set of the change, `dns.resourceRecordSets.create` to
//! create it, `.update` to replace it (a deletion and an addition of one name and type),
//! `.delete` to delete it). An insert carrying labels is also checked for
//! `compute.addresses.setLabels`, as GCE checks `compute.instances.setLabels` for an instance
//! created with labels (the address page does not say so; a role holding it loses nothing).
//!
//! Refused as the real APIs refuse:
//! - Compute: 403, reason `forbidden`, "Required '<permission>' permission for '<resource>'"
//!   (e.g. terraform-google-forseti#431: "Error 403: Required
//!   'compute.globalAddresses.createInternal' permission for 'projects/…/global/addresses/…',
//!   forbidden").
//! - Cloud DNS: 403, reason `forbidden`, message "Forbidden", naming no permission
//!   (the response bodies in hashicorp/terraform-provider-google#9468 and #8915).

use super::World;
use super::http::{ApiError, Req};
use hyper::Method;

/// Whether the caller holds `permission` on `project`.
pub(crate) fn holds(w: &World, project: &str, permission: &str) -> bool {
    if w.options.denied.iter().any(|d| d == permission) {
        return false;
    }
    match w.options.granted.get(project) {
        None => true,
        Some(granted) => granted.iter().any(|g| g == permission),
    }
}

/// Compute's refusal when the caller lacks `permission` on `project` for `resource` (its path,
/// `projects/<p>/regions/<r>/addresses/<name>`).
pub(crate) fn compute(
    w: &World,
    project: &str,
    permission: &str,
    resource: &str,
) -> Result<(), ApiError> {
    if holds(w, project, permission) {
        return Ok(());
    }
    Err(ApiError::new(
        403,
        "forbidden",
        format!("Required '{permission}' permission for '{resource}'"),
    ))
}

/// A compute.v1 `addresses` or `regionOperations` call (`rest`: the path after the region):
/// the caller holds what it needs on the address (or the region, for a list), and `compute.subnetworks.use` on the subnetwork an INTERNAL insert names.
pub(crate) fn compute_call(w: &World, req: &Req, rest: &[&str]) -> Result<(), ApiError> {
    let project = w.seed().project.clone();
    let rp = super::compute::region_path(w);
    let check = |permission: &str, resource: &str| compute(w, &project, permission, resource);
    match (&req.method, rest) {
        (&Method::GET, ["addresses"]) => check("compute.addresses.list", &rp),
        (&Method::GET, ["addresses", name]) => {
            check("compute.addresses.get", &format!("{rp}/addresses/{name}"))
        }
        (&Method::POST, ["addresses"]) => {
            let name = req.body["name"].as_str().unwrap_or_default();
            let resource = format!("{rp}/addresses/{name}");
            let internal = req.body["addressType"] == "INTERNAL";
            check(
                if internal {
                    "compute.addresses.createInternal"
                } else {
                    "compute.addresses.create"
                },
                &resource,
            )?;
            if req.body["labels"]
                .as_object()
                .is_some_and(|l| !l.is_empty())
            {
                check("compute.addresses.setLabels", &resource)?;
            }
            match req.body["subnetwork"].as_str() {
                Some(url) if internal => {
                    let subnet = super::compute::subnetwork(w, url)?;
                    let subnet_project = w.seed().subnet_project(subnet).to_string();
                    compute(
                        w,
                        &subnet_project,
                        "compute.subnetworks.use",
                        &format!(
                            "projects/{subnet_project}/regions/{}/subnetworks/{}",
                            w.seed().region,
                            subnet.name
                        ),
                    )
                }
                _ => Ok(()),
            }
        }
        (&Method::DELETE, ["addresses", name]) => {
            let internal = w
                .addresses
                .get(*name)
                .is_some_and(|a| a["addressType"] == "INTERNAL");
            check(
                if internal {
                    "compute.addresses.deleteInternal"
                } else {
                    "compute.addresses.delete"
                },
                &format!("{rp}/addresses/{name}"),
            )
        }
        (&Method::GET, ["operations", op]) => check(
            "compute.regionOperations.get",
            &format!("{rp}/operations/{op}"),
        ),
        _ => Ok(()),
    }
}

/// Cloud DNS's refusal when the caller lacks any of `permissions` on `project`.
pub(crate) fn dns(w: &World, project: &str, permissions: &[&str]) -> Result<(), ApiError> {
    if permissions.iter().all(|p| holds(w, project, p)) {
        return Ok(());
    }
    Err(ApiError::new(403, "forbidden", "Forbidden"))
}

#[cfg(test)]
mod tests {
    use super::super::{FakeOptions, Seed, compute, dns, instances, reads};
    use super::*;
    use serde_json::{Value, json};

    fn world(granted: &[&str]) -> World {
        let mut options = FakeOptions {
            seed: Seed::default(),
            ..FakeOptions::default()
        };
        options.granted.insert(
            "example-project".into(),
            granted.iter().map(|s| s.to_string()).collect(),
        );
        World::new(options)
    }

    fn req(method: Method, path: &str, body: Value) -> (Req, Vec<String>) {
        let req = Req::for_test(method, path, body);
        let segments = req.segments.clone();
        (req, segments)
    }

    /// Sends `method path body` to the fake's router for it: its answer.
    fn call(w: &mut World, method: Method, path: &str, body: Value) -> Result<Value, ApiError> {
        let (req, segments) = req(method, path, body);
        let s: Vec<&str> = segments.iter().map(String::as_str).collect();
        match s.as_slice() {
            ["compute", "v1", "projects", ..] => match reads::route(w, &req, &s[3..]) {
                Some(reply) => reply,
                None => instances::route(w, &req, &s[3..])
                    .unwrap_or_else(|| compute::route(w, &req, &s[3..])),
            },
            ["dns", "v1", "projects", ..] => dns::route(w, &req, &s[3..]),
            _ => panic!("{path}"),
        }
    }

    const REGION: &str = "compute/v1/projects/example-project/regions/us-central1";
    const ZONE: &str = "dns/v1/projects/example-project/managedZones/mycluster-7xk2p-private-zone";

    fn internal() -> Value {
        json!({"name": "a", "addressType": "INTERNAL", "labels": {"k": "v"},
               "subnetwork": "regions/us-central1/subnetworks/mycluster-master-subnet"})
    }

    fn change(deleted: &[&str], added: &[&str]) -> Value {
        let set = |ip: &&str| json!({"name": "api.mycluster.example.com.", "type": "A", "ttl": 60, "rrdatas": [ip]});
        json!({"deletions": deleted.iter().map(set).collect::<Vec<_>>(),
               "additions": added.iter().map(set).collect::<Vec<_>>()})
    }

    /// Each call without one permission it needs is refused as the API refuses it, naming the
    /// permission and the resource (Compute) or saying "Forbidden" (Cloud DNS); with every
    /// permission it is served.
    #[test]
    fn each_call_is_refused_without_each_permission_it_needs() {
        let all: Vec<&str> = crate::gcp::KNOWN_PERMISSIONS.to_vec();
        let vm = "compute/v1/projects/example-project/zones/us-central1-a/instances";
        let rows: [(Method, String, Value, &[&str], &str); 15] = [
            (
                Method::GET,
                format!("{vm}/mycluster-7xk2p-bootstrap"),
                Value::Null,
                &["compute.instances.get"],
                "projects/example-project/zones/us-central1-a/instances/mycluster-7xk2p-bootstrap",
            ),
            (
                Method::PATCH,
                format!("{vm}/mycluster-7xk2p-bootstrap/updateNetworkInterface"),
                json!({"aliasIpRanges": []}),
                &["compute.instances.updateNetworkInterface"],
                "projects/example-project/zones/us-central1-a/instances/mycluster-7xk2p-bootstrap",
            ),
            (
                Method::GET,
                "compute/v1/projects/example-project/zones/us-central1-a/operations/op".into(),
                Value::Null,
                &["compute.zoneOperations.get"],
                "projects/example-project/zones/us-central1-a/operations/op",
            ),
            (
                Method::GET,
                format!("{REGION}/addresses"),
                Value::Null,
                &["compute.addresses.list"],
                "projects/example-project/regions/us-central1",
            ),
            (
                Method::GET,
                format!("{REGION}/addresses/x"),
                Value::Null,
                &["compute.addresses.get"],
                "projects/example-project/regions/us-central1/addresses/x",
            ),
            (
                Method::POST,
                format!("{REGION}/addresses"),
                json!({"name": "a", "labels": {"k": "v"}}),
                &["compute.addresses.create", "compute.addresses.setLabels"],
                "projects/example-project/regions/us-central1/addresses/a",
            ),
            (
                Method::POST,
                format!("{REGION}/addresses"),
                internal(),
                &[
                    "compute.addresses.createInternal",
                    "compute.addresses.setLabels",
                    "compute.subnetworks.use",
                ],
                "projects/example-project/regions/us-central1/",
            ),
            (
                Method::GET,
                format!("{REGION}/operations/op"),
                Value::Null,
                &["compute.regionOperations.get"],
                "projects/example-project/regions/us-central1/operations/op",
            ),
            (
                Method::GET,
                "compute/v1/projects/example-project".into(),
                Value::Null,
                &["compute.projects.get"],
                "projects/example-project",
            ),
            (
                Method::GET,
                "compute/v1/projects/example-project/zones/us-central1-a/instanceGroups".into(),
                Value::Null,
                &["compute.instanceGroups.list"],
                "projects/example-project/zones/us-central1-a",
            ),
            (
                Method::GET,
                format!("{REGION}/subnetworks/mycluster-master-subnet"),
                Value::Null,
                &["compute.subnetworks.get"],
                "subnetworks/mycluster-master-subnet",
            ),
            (
                Method::GET,
                "dns/v1/projects/example-project/managedZones".into(),
                Value::Null,
                &["dns.managedZones.list"],
                "",
            ),
            (
                Method::GET,
                ZONE.into(),
                Value::Null,
                &["dns.managedZones.get"],
                "",
            ),
            (
                Method::GET,
                format!("{ZONE}/rrsets"),
                Value::Null,
                &["dns.resourceRecordSets.list"],
                "",
            ),
            (
                Method::POST,
                format!("{ZONE}/changes"),
                change(&[], &["10.0.0.9"]),
                &["dns.changes.create", "dns.resourceRecordSets.create"],
                "",
            ),
        ];
        for (method, path, body, needs, resource) in rows {
            for lacking in needs {
                let held: Vec<&str> = all.iter().copied().filter(|p| p != lacking).collect();
                let e = call(&mut world(&held), method.clone(), &path, body.clone())
                    .expect_err(&format!("{path} without {lacking}"));
                assert_eq!((e.code, e.reason), (403, "forbidden"), "{path}");
                if path.starts_with("compute") {
                    assert!(
                        e.message
                            .starts_with(&format!("Required '{lacking}' permission for '"))
                            && e.message.contains(resource),
                        "{path}: {}",
                        e.message
                    );
                } else {
                    assert_eq!(e.message, "Forbidden", "{path}");
                }
            }
            // With all of them: not a refusal (a missing resource answers 404).
            let answer = call(&mut world(&all), method, &path, body);
            assert!(
                answer.as_ref().map_or_else(|e| e.code != 403, |_| true),
                "{path}: {answer:?}"
            );
        }
    }

    /// A change replacing a record set needs `update`, one deleting it `delete`; and a delete
    /// needs `deleteInternal` for an INTERNAL address.
    #[test]
    fn a_replacement_needs_update_a_deletion_delete_and_an_internal_address_delete_internal() {
        let all: Vec<&str> = crate::gcp::KNOWN_PERMISSIONS.to_vec();
        // From now on the caller holds every permission but `lacking` (None: every one).
        let lack = |w: &mut World, lacking: Option<&str>| {
            let held = all.iter().filter(|p| Some(**p) != lacking);
            let held = held.map(|p| p.to_string()).collect();
            w.options.granted.insert("example-project".into(), held);
        };
        let path = format!("{ZONE}/changes");
        let mut w = world(&all);
        call(&mut w, Method::POST, &path, change(&[], &["10.0.0.9"])).unwrap();
        for (lacking, body) in [
            (
                "dns.resourceRecordSets.update",
                change(&["10.0.0.9"], &["10.0.0.8"]),
            ),
            ("dns.resourceRecordSets.delete", change(&["10.0.0.9"], &[])),
        ] {
            lack(&mut w, Some(lacking));
            let e = call(&mut w, Method::POST, &path, body.clone()).unwrap_err();
            assert_eq!(
                (e.code, e.message.as_str()),
                (403, "Forbidden"),
                "{lacking}"
            );
            lack(&mut w, None);
            let done = call(&mut w, Method::POST, &path, body).unwrap();
            assert!(done["id"].is_string(), "{done}");
            for zone in &mut w.zones {
                zone.rrsets.clear();
            }
            call(&mut w, Method::POST, &path, change(&[], &["10.0.0.9"])).unwrap();
        }
        let address = format!("{REGION}/addresses");
        call(&mut w, Method::POST, &address, internal()).unwrap();
        let delete = format!("{address}/a");
        lack(&mut w, Some("compute.addresses.deleteInternal"));
        let e = call(&mut w, Method::DELETE, &delete, Value::Null).unwrap_err();
        assert_eq!(
            e.message,
            "Required 'compute.addresses.deleteInternal' permission for 'projects/example-project/regions/us-central1/addresses/a'"
        );
        lack(&mut w, Some("compute.addresses.delete"));
        call(&mut w, Method::DELETE, &delete, Value::Null).unwrap();
    }
}
