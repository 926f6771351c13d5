//! compute.v1 load-balancer resources as a cloud-controller-manager makes them: global
//! `healthChecks`, `httpHealthChecks`, `firewalls` and `globalOperations`; regional
//! `forwardingRules`, `backendServices` (with `getHealth`) and `targetPools` (with
//! `addInstance` / `removeInstance`). What each kind must hold, and what it refuses, is in
//! `lb_rules`; zonal instance groups, instances and zones in `zonal`.
//!
//! GCE's semantics, as OpenShift's GCE cloud provider relies on them (openshift/cloud-provider-gcp
//! 30cc0479, `vendor/github.com/GoogleCloudPlatform/k8s-cloud-provider/pkg/cloud/`):
//! - Every insert, delete, update and patch answers an Operation of its scope (global,
//!   region, zone), RUNNING for the fake's `operation_delay`; the provider then calls
//!   `POST .../operations/{name}/wait` until DONE (`op.go:38-41,68-116`, `OperationsUseWait`),
//!   taking the scope from the Operation's `selfLink` (`service.go:85-96`).
//! - A name is unique per scope and kind: a second insert is 409 `alreadyExists`; an unknown
//!   name is 404 `notFound`.
//! - `update` (PUT) of a backend service carries the `fingerprint` the caller read: a stale one
//!   is 412 `conditionNotMet` "Invalid fingerprint."; each change gives a new one.
//! - A resource another one uses cannot be deleted: 400 `resourceInUseByAnotherResource`
//!   (a health check of a backend service or target pool, a backend service of a forwarding
//!   rule, a target pool of a forwarding rule, an instance group of a backend service).
//! - Lists take `filter` (RE2 `eq`, see `filter`) and pages.
//!
//! A resource is visible from its insert on (its Operation still RUNNING).

use super::compute::{self, BASE};
use super::http::{ApiError, Reply, Req, list_page};
use super::operations;
use super::{Operation, World};
use hyper::Method;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The kinds served, with (scope kind, the API's `kind`, the permission noun).
const KINDS: &[(&str, &str, &str, &str)] = &[
    (
        "global",
        "healthChecks",
        "compute#healthCheck",
        "healthChecks",
    ),
    (
        "global",
        "httpHealthChecks",
        "compute#httpHealthCheck",
        "httpHealthChecks",
    ),
    ("global", "firewalls", "compute#firewall", "firewalls"),
    (
        "regions",
        "forwardingRules",
        "compute#forwardingRule",
        "forwardingRules",
    ),
    (
        "regions",
        "backendServices",
        "compute#backendService",
        "regionBackendServices",
    ),
    (
        "regions",
        "targetPools",
        "compute#targetPool",
        "targetPools",
    ),
];

fn kind_of(scope: &str, collection: &str) -> Option<(&'static str, &'static str)> {
    KINDS
        .iter()
        .find(|(s, c, _, _)| scope.starts_with(s) && *c == collection)
        .map(|(_, _, kind, noun)| (*kind, *noun))
}

/// A stored resource's key: `projects/p/global/firewalls/x`, `projects/p/regions/r/...`.
pub(crate) fn key(scope: &str, collection: &str, name: &str) -> String {
    format!("{scope}/{collection}/{name}")
}

/// The key a resource URL names, whatever host and version prefix it carries
/// (`http://127.0.0.1:P/compute/v1/projects/...`, `https://www.googleapis.com/compute/v1/...`,
/// a relative `projects/...` or `global/...` of `project`), or None.
pub(crate) fn key_of_url(project: &str, url: &str) -> Option<String> {
    let path = match url.find("/projects/") {
        Some(i) => &url[i + 1..],
        None if url.starts_with("projects/") => url,
        None => {
            return Some(format!(
                "projects/{project}/{}",
                url.trim_start_matches('/')
            ));
        }
    };
    Some(path.to_string())
}

fn not_found(path: &str) -> ApiError {
    ApiError::not_found(format!("The resource '{path}' was not found"))
}

/// `rest` is the path after `compute/v1/projects/`. None: not one of these calls.
pub(crate) fn route(w: &mut World, req: &Req, rest: &[&str]) -> Option<Reply> {
    let (project, scope, tail): (&str, String, &[&str]) = match rest {
        [p, "global", tail @ ..] => (p, format!("projects/{p}/global"), tail),
        [p, "regions", r, tail @ ..] => (p, format!("projects/{p}/regions/{r}"), tail),
        _ => return None,
    };
    let collection = *tail.first()?;
    if collection == "operations" {
        return match (&req.method, tail) {
            (&Method::GET, ["operations", op]) if scope.ends_with("/global") => {
                Some(global_operation(w, project, op))
            }
            _ => None,
        };
    }
    let (kind, noun) = kind_of(scope.split('/').nth(2)?, collection)?;
    if let Err(e) = check_scope(w, project, &scope) {
        return Some(Err(e));
    }
    let allow = |w: &World, verb: &str, path: &str| {
        super::authz::compute(w, project, &format!("compute.{noun}.{verb}"), path)
    };
    let collection_path = format!("{scope}/{collection}");
    Some(match (&req.method, &tail[1..]) {
        (&Method::GET, []) => {
            allow(w, "list", &scope).and_then(|()| list(w, req, &collection_path))
        }
        (&Method::POST, []) => {
            let name = req.body["name"].as_str().unwrap_or_default();
            allow(w, "create", &key(&scope, collection, name))
                .and_then(|()| insert(w, req, &scope, collection, kind))
        }
        (method, [name, action @ ..]) => {
            let path = key(&scope, collection, name);
            match (method, action) {
                (&Method::GET, []) => allow(w, "get", &path).and_then(|()| get(w, &path)),
                (&Method::DELETE, []) => {
                    allow(w, "delete", &path).and_then(|()| delete(w, &scope, &path))
                }
                (&Method::PUT, []) => {
                    allow(w, "update", &path).and_then(|()| update(w, req, &scope, &path, false))
                }
                (&Method::PATCH, []) => {
                    allow(w, "update", &path).and_then(|()| update(w, req, &scope, &path, true))
                }
                (&Method::POST, ["getHealth"]) if collection == "backendServices" => {
                    allow(w, "get", &path)
                        .and_then(|()| super::lb_rules::health(w, &path, &req.body))
                }
                (&Method::POST, [verb @ ("addInstance" | "removeInstance")])
                    if collection == "targetPools" =>
                {
                    allow(w, "update", &path).and_then(|()| {
                        super::lb_rules::pool_members(w, &path, &req.body, *verb == "addInstance")
                            .and_then(|()| started(w, &scope, verb, &path))
                    })
                }
                _ => Err(ApiError::not_found(format!(
                    "The requested URL was not found: {} {}",
                    req.method,
                    rest.join("/")
                ))),
            }
        }
        _ => return None,
    })
}

fn check_scope(w: &World, project: &str, scope: &str) -> Result<(), ApiError> {
    if project != w.seed().project {
        return Err(not_found(&format!("projects/{project}")));
    }
    match scope.split('/').nth(3) {
        Some(region) if scope.contains("/regions/") && region != w.seed().region => {
            Err(not_found(scope))
        }
        _ => Ok(()),
    }
}

fn list(w: &World, req: &Req, collection_path: &str) -> Reply {
    let (filter, start, max) = req.list_params()?;
    let prefix = format!("{collection_path}/");
    let matching: Vec<Value> =
        w.lb.range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| !k[prefix.len()..].contains('/'))
            .map(|(_, v)| v.clone())
            .filter(|v| filter.matches(v))
            .collect();
    let kind = matching
        .first()
        .and_then(|v| v["kind"].as_str())
        .map_or_else(|| "compute#list".to_string(), |k| format!("{k}List"));
    Ok(list_page(&kind, collection_path, &matching, start, max))
}

fn get(w: &World, path: &str) -> Reply {
    w.lb.get(path).cloned().ok_or_else(|| not_found(path))
}

/// A new fingerprint: 8 bytes in URL-safe base64, as GCE writes its `format: byte` fields
/// (`-` and `_`, never `+` or `/`: google-cloud-compute-v1 decodes them with
/// `serde_with::base64::Base64<UrlSafe>` and fails on anything else).
pub(crate) fn fingerprint(w: &mut World) -> String {
    use base64::Engine;
    let id = w.id();
    base64::engine::general_purpose::URL_SAFE.encode(
        super::reads::stable_id(&id)
            .parse::<u64>()
            .unwrap_or_default()
            .to_be_bytes(),
    )
}

fn insert(w: &mut World, req: &Req, scope: &str, collection: &str, kind: &str) -> Reply {
    if let Some(op) = operations::replay(w, req)? {
        return Ok(op);
    }
    let path = match store(w, scope, collection, kind, &req.body) {
        Err(e) if e.reason == super::lb_rules::IP_IN_USE => {
            // Accepted, then failed: nothing is created.
            let name = req.body["name"].as_str().unwrap_or_default();
            let mut op = operation(w, scope, "insert", &key(scope, collection, name));
            op.json["error"] = json!({"errors": [{"code": e.reason, "message": e.message}]});
            op.json["httpErrorStatusCode"] = json!(409);
            op.json["httpErrorMessage"] = json!("CONFLICT");
            return operations::start_operation(w, op, req.param("requestId"));
        }
        other => other?,
    };
    let op = operation(w, scope, "insert", &path);
    operations::start_operation(w, op, req.param("requestId"))
}

/// An insert's effect on the world (the API's answer aside): `body` checked, completed as GCE
/// completes it and stored at its path, which is returned.
pub(crate) fn store(
    w: &mut World,
    scope: &str,
    collection: &str,
    kind: &str,
    body: &Value,
) -> Result<String, ApiError> {
    let name = body["name"].as_str().ok_or_else(|| {
        ApiError::new(
            400,
            "required",
            "Required field 'resource.name' not specified",
        )
    })?;
    if !compute::valid_name(name) {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'resource.name': '{name}'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{{0,61}}[a-z0-9])?)'"
        )));
    }
    let path = key(scope, collection, name);
    if w.lb.contains_key(&path) {
        return Err(ApiError::new(
            409,
            "alreadyExists",
            format!("The resource '{path}' already exists"),
        ));
    }
    let mut resource = match body {
        Value::Object(fields) => Value::Object(fields.clone()),
        _ => return Err(ApiError::invalid("Invalid JSON payload received.")),
    };
    let id = w.id();
    resource["kind"] = json!(kind);
    resource["id"] = json!(id);
    resource["creationTimestamp"] = json!(super::now_rfc3339());
    resource["selfLink"] = json!(format!("{BASE}/{path}"));
    if scope.contains("/regions/") {
        resource["region"] = json!(format!("{BASE}/{scope}"));
    }
    resource["fingerprint"] = json!(fingerprint(w));
    super::lb_rules::prepare(w, collection, &path, &mut resource)?;
    w.lb.insert(path.clone(), resource);
    w.lb_built.insert(path.clone(), Instant::now());
    Ok(path)
}

/// The API's `kind` of a collection of `scope` (`projects/p/global`, `projects/p/regions/r`).
pub(crate) fn kind_in(scope: &str, collection: &str) -> Option<&'static str> {
    kind_of(scope.split('/').nth(2)?, collection).map(|(kind, _)| kind)
}

fn delete(w: &mut World, scope: &str, path: &str) -> Reply {
    unstore(w, path)?;
    started(w, scope, "delete", path)
}

/// A delete's effect on the world: refused when absent (404) or used by another resource
/// (400 `resourceInUseByAnotherResource`).
pub(crate) fn unstore(w: &mut World, path: &str) -> Result<(), ApiError> {
    if !w.lb.contains_key(path) {
        return Err(not_found(path));
    }
    if let Some(user) = super::lb_rules::user_of(w, path) {
        return Err(ApiError::new(
            400,
            "resourceInUseByAnotherResource",
            format!("The resource '{path}' is already being used by '{user}'"),
        ));
    }
    if let Some(removed) = w.lb.remove(path) {
        super::lb_rules::removed(w, path, &removed);
    }
    w.lb_built.remove(path);
    Ok(())
}

/// PUT (`patch` false: the body replaces the resource) or PATCH (its fields replace theirs).
fn update(w: &mut World, req: &Req, scope: &str, path: &str, patch: bool) -> Reply {
    let current = get(w, path)?;
    let sent = req.body["fingerprint"].as_str();
    if let Some(sent) = sent
        && current["fingerprint"].as_str() != Some(sent)
    {
        return Err(ApiError::new(
            412,
            "conditionNotMet",
            "Invalid fingerprint.",
        ));
    }
    let mut next = if patch { current.clone() } else { json!({}) };
    if let (Some(next), Some(body)) = (next.as_object_mut(), req.body.as_object()) {
        for (k, v) in body {
            next.insert(k.clone(), v.clone());
        }
    }
    for field in [
        "kind",
        "id",
        "name",
        "creationTimestamp",
        "selfLink",
        "region",
    ] {
        if !current[field].is_null() {
            next[field] = current[field].clone();
        }
    }
    next["fingerprint"] = json!(fingerprint(w));
    let collection = path.rsplit('/').nth(1).unwrap_or_default().to_string();
    if let Some(old) = w.lb.remove(path) {
        super::lb_rules::removed(w, path, &old);
        if let Err(e) = super::lb_rules::prepare(w, &collection, path, &mut next) {
            super::lb_rules::restore(w, path, old);
            return Err(e);
        }
    }
    w.lb.insert(path.to_string(), next);
    started(w, scope, if patch { "patch" } else { "update" }, path)
}

/// An Operation of `scope` on `path`, started (a global one has neither `zone` nor `region`).
pub(crate) fn started(w: &mut World, scope: &str, kind: &str, path: &str) -> Reply {
    let op = operation(w, scope, kind, path);
    operations::start_operation(w, op, None)
}

fn operation(w: &mut World, scope: &str, kind: &str, path: &str) -> Operation {
    let target_id = super::reads::stable_id(path);
    operations::operation(w, scope, kind, format!("{BASE}/{path}"), target_id, None)
}

fn global_operation(w: &World, project: &str, op: &str) -> Reply {
    let path = format!("projects/{project}/global/operations/{op}");
    super::authz::compute(w, project, "compute.globalOperations.get", &path)?;
    let link = format!("{BASE}/{path}");
    w.operations
        .get(op)
        .filter(|o| o.json["selfLink"] == link.as_str())
        .map(|o| o.json.clone())
        .ok_or_else(|| not_found(&path))
}

/// globalOperations.wait: returns when DONE or after 2 minutes, whichever is first.
pub async fn wait_global_operation(world: &Arc<Mutex<World>>, project: &str, op: &str) -> Reply {
    operations::wait_until_done(world, op, |w| global_operation(w, project, op)).await
}
