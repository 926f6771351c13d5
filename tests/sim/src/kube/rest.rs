//! REST paths `/api/v1/[namespaces/<ns>/]<plural>[/<name>[/status]]` and
//! `/apis/<group>/<version>/[namespaces/<ns>/]<plural>[/<name>[/status]]`: verbs by method,
//! query parameters (fieldManager, force, dryRun, selectors, limit/continue, watch options).

use super::Shared;
use super::apply::Scope;
use super::delete::{self, DeleteOpts};
use super::http::{Body, Req, error, is_true, json_headers, respond};
use super::ops::{self, PatchType, WriteCtx};
use super::rbac;
use super::request_info::Attributes;
use super::resources::{RESOURCES, find};
use super::selector::{FieldSelector, LabelSelector};
use super::status::{ApiError, FieldErr};
use super::store::Key;
use super::watch::{self, WatchReq};
use base64::Engine;
use hyper::{Method, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// What a resource path names.
enum Target {
    /// A collection: in one namespace, or all (None) / cluster-scoped.
    Collection(usize, Option<String>),
    Object(Key, Scope),
}

fn parse_target(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let (res, ns, tail) = match rest {
        ["namespaces", ns, plural, tail @ ..]
            if find(group, version, plural).is_some_and(|r| RESOURCES[r].namespaced) =>
        {
            (find(group, version, plural)?, Some(ns.to_string()), tail)
        }
        [plural, tail @ ..] => {
            let r = find(group, version, plural)?;
            if RESOURCES[r].namespaced && !tail.is_empty() {
                return None;
            }
            (r, None, tail)
        }
        [] => return None,
    };
    let key = |name: &str| Key::new(res, ns.as_deref().unwrap_or(""), name);
    match tail {
        [] => Some(Target::Collection(res, ns)),
        [name] => Some(Target::Object(key(name), Scope::Main)),
        [name, "status"] if RESOURCES[res].status => Some(Target::Object(key(name), Scope::Status)),
        _ => None,
    }
}

pub(super) fn resource(
    shared: &Arc<Shared>,
    group: &str,
    version: &str,
    rest: &[&str],
    r: &Req,
) -> Response<Body> {
    let Some(target) = parse_target(group, version, rest) else {
        return error(&ApiError::no_route());
    };
    let result = match (target, &r.method) {
        (Target::Collection(res, ns), &Method::GET) if r.flag("watch") => {
            return watch(shared, res, ns, r);
        }
        (Target::Collection(res, ns), &Method::GET) => list(shared, res, ns.as_deref(), r),
        (Target::Collection(res, ns), &Method::POST)
            if ns.is_some() || !RESOURCES[res].namespaced =>
        {
            create(shared, res, ns.as_deref().unwrap_or(""), r)
        }
        (Target::Collection(res, ns), &Method::DELETE) => {
            delete_collection(shared, res, ns.as_deref(), r)
        }
        (Target::Object(key, _), &Method::GET) => {
            let res = &RESOURCES[key.res];
            shared
                .store
                .lock()
                .get(&key)
                .map(|o| (200, (*o).clone()))
                .ok_or_else(|| ApiError::not_found(res, &key.name))
        }
        (Target::Object(key, scope), &Method::PUT) => update(shared, &key, scope, r),
        (Target::Object(key, scope), &Method::PATCH) => patch(shared, &key, scope, r),
        (Target::Object(key, Scope::Main), &Method::DELETE) => DeleteOpts::parse(&r.body, &r.query)
            .and_then(|opts| delete::delete(&mut shared.store.lock(), &key, &opts)),
        (_, m) => Err(ApiError::method_not_allowed(m.as_str())),
    };
    let mut response = match result {
        Ok((code, v)) => respond(code, &v),
        Err(e) => error(&e),
    };
    // As kube-apiserver's warning recorder: `299 - "<text>"`, one header per warning.
    for w in r.warnings.borrow().iter() {
        let text = format!("299 - {}", serde_json::Value::from(w.as_str()));
        if let Ok(v) = hyper::header::HeaderValue::from_str(&text) {
            response.headers_mut().append("warning", v);
        }
    }
    response
}

fn body_value(r: &Req) -> Result<Value, ApiError> {
    if r.content_type.contains("protobuf") || r.content_type.contains("cbor") {
        return Err(ApiError::unsupported_media(&r.content_type));
    }
    ops::decode(&r.body)
}

fn ctx(r: &Req) -> Result<(String, bool, ops::FieldValidation), ApiError> {
    let manager = r.manager();
    if manager.len() > 128 {
        return Err(ApiError::invalid_kind(
            "meta.k8s.io",
            "UpdateOptions",
            "",
            &[FieldErr::invalid(
                "fieldManager",
                json!(manager),
                "must be less than 128 characters",
            )],
        ));
    }
    let validation = ops::FieldValidation::parse(r.q("fieldValidation"))?;
    Ok((manager, r.dry_run(), validation))
}

fn create(shared: &Shared, res: usize, ns: &str, r: &Req) -> Result<(u16, Value), ApiError> {
    write(r, |body, wc| {
        ops::create(&mut shared.store.lock(), res, ns, body, wc)
    })
    .map(|v| (201, v))
}

fn update(shared: &Shared, key: &Key, scope: Scope, r: &Req) -> Result<(u16, Value), ApiError> {
    write(r, |body, wc| {
        ops::update(&mut shared.store.lock(), key, body, scope, wc)
    })
    .map(|v| (200, v))
}

/// Runs the create or update `op` with the request's body and write context.
fn write(
    r: &Req,
    op: impl FnOnce(Value, &WriteCtx) -> Result<Value, ApiError>,
) -> Result<Value, ApiError> {
    let body = body_value(r)?;
    let (manager, dry_run, validation) = ctx(r)?;
    let wc = WriteCtx {
        manager: &manager,
        dry_run,
        validation,
        warnings: Some(&r.warnings),
    };
    op(body, &wc)
}

fn patch(shared: &Shared, key: &Key, scope: Scope, r: &Req) -> Result<(u16, Value), ApiError> {
    let typ = PatchType::from_content_type(&r.content_type)
        .ok_or_else(|| ApiError::unsupported_media(&r.content_type))?;
    let (manager, dry_run, validation) = ctx(r)?;
    let force = r.q("force");
    let mut errs = Vec::new();
    if typ == PatchType::Apply && r.q("fieldManager").is_none_or(str::is_empty) {
        errs.push(FieldErr::required(
            "fieldManager",
            "is required for apply patch",
        ));
    }
    if typ != PatchType::Apply && force.is_some() {
        errs.push(FieldErr::forbidden(
            "force",
            "may not be specified for non-apply patch",
        ));
    }
    if !errs.is_empty() {
        return Err(ApiError::invalid_kind(
            "meta.k8s.io",
            "PatchOptions",
            "",
            &errs,
        ));
    }
    let wc = WriteCtx {
        manager: &manager,
        dry_run,
        validation,
        warnings: Some(&r.warnings),
    };
    let force = force.is_some_and(is_true);
    let mut inner = shared.store.lock();
    // An apply that creates needs `create` too (endpoints/handlers/patch.go: the create
    // validation authorizes `createAuthorizerAttributes`, refusing with the authorizer's
    // reason alone).
    if typ == PatchType::Apply && inner.get(key).is_none() {
        let res = &RESOURCES[key.res];
        let create = Attributes {
            verb: "create".into(),
            resource_request: true,
            group: res.group.into(),
            resource: res.plural.into(),
            subresource: if scope == Scope::Status {
                "status".into()
            } else {
                String::new()
            },
            namespace: key.ns.clone(),
            name: key.name.clone(),
            path: String::new(),
        };
        if let Err(reason) = rbac::authorize(&inner, &shared.user, &create) {
            return Err(ApiError::forbidden_by(
                res.group, res.plural, &key.name, &reason,
            ));
        }
    }
    ops::patch(&mut inner, key, typ, &r.body, scope, &wc, force)
        .map(|(v, created)| (if created { 201 } else { 200 }, v))
}

fn selectors(r: &Req, res: usize) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let labels =
        LabelSelector::parse(r.q("labelSelector").unwrap_or("")).map_err(ApiError::bad_request)?;
    let fields = FieldSelector::parse_for(r.q("fieldSelector").unwrap_or(""), RESOURCES[res].kind)
        .map_err(ApiError::bad_request)?;
    Ok((labels, fields))
}

fn parse_rv(r: &Req) -> Result<Option<u64>, ApiError> {
    match r.q("resourceVersion") {
        None | Some("") | Some("0") => Ok(None),
        Some(s) => s
            .parse::<u64>()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s:?}"))),
    }
}

/// Built-in types come without kind/apiVersion inside lists; custom resources keep them.
fn list_item(res: usize, obj: &Value) -> Value {
    let mut v = obj.clone();
    if !RESOURCES[res].custom
        && let Some(m) = v.as_object_mut()
    {
        m.remove("kind");
        m.remove("apiVersion");
    }
    v
}

fn list(shared: &Shared, res: usize, ns: Option<&str>, r: &Req) -> Result<(u16, Value), ApiError> {
    let (labels, fields) = selectors(r, res)?;
    parse_rv(r)?;
    let limit: usize = match r.q("limit") {
        Some(l) => l
            .parse()
            .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
        None => 0,
    };
    let (objects, mut rv, compacted) = {
        let inner = shared.store.lock();
        (inner.list(res, ns), inner.rv(), inner.compacted(res))
    };
    let mut start = String::new();
    if let Some(token) = r.q("continue").filter(|t| !t.is_empty()) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(token)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .ok_or_else(|| {
                ApiError::bad_request("continue key is not valid: illegal base64 data")
            })?;
        let token_rv = decoded.get("rv").and_then(Value::as_u64).unwrap_or(0);
        if token_rv < compacted {
            return Err(ApiError::expired(
                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
            ));
        }
        rv = token_rv;
        start = decoded
            .get("start")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
    }
    let mut items: Vec<(String, Value)> = objects
        .iter()
        .map(|(k, o)| (format!("{}/{}", k.ns, k.name), o))
        .filter(|(k, _)| start.is_empty() || *k > start)
        .filter(|(_, o)| labels.matches(o) && fields.matches(o))
        .map(|(k, o)| (k, list_item(res, o)))
        .collect();
    let mut list_meta = json!({"resourceVersion": rv.to_string()});
    if limit > 0 && items.len() > limit {
        let remaining = items.len() - limit;
        items.truncate(limit);
        let last = items.last().map(|(k, _)| k.clone()).unwrap_or_default();
        let token = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": last});
        list_meta["continue"] =
            json!(base64::engine::general_purpose::STANDARD.encode(token.to_string()));
        list_meta["remainingItemCount"] = json!(remaining);
    }
    let res = &RESOURCES[res];
    Ok((
        200,
        json!({
            "kind": res.list_kind(),
            "apiVersion": res.api_version(),
            "metadata": list_meta,
            "items": items.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        }),
    ))
}

fn delete_collection(
    shared: &Shared,
    res: usize,
    ns: Option<&str>,
    r: &Req,
) -> Result<(u16, Value), ApiError> {
    let (labels, fields) = selectors(r, res)?;
    let opts = DeleteOpts::parse(&r.body, &r.query)?;
    let mut inner = shared.store.lock();
    let keys: Vec<Key> = inner
        .list(res, ns)
        .into_iter()
        .filter(|(_, o)| labels.matches(o) && fields.matches(o))
        .map(|(k, _)| k)
        .collect();
    let mut items = Vec::new();
    for k in keys {
        if let Ok((_, v)) = delete::delete(&mut inner, &k, &opts) {
            items.push(list_item(res, &v));
        }
    }
    let rd = &RESOURCES[res];
    Ok((
        200,
        json!({"kind": rd.list_kind(), "apiVersion": rd.api_version(),
               "metadata": {"resourceVersion": inner.rv().to_string()}, "items": items}),
    ))
}

fn watch(shared: &Arc<Shared>, res: usize, ns: Option<String>, r: &Req) -> Response<Body> {
    let prepared = (|| {
        let (labels, fields) = selectors(r, res)?;
        let since = parse_rv(r)?;
        let timeout = match r.q("timeoutSeconds") {
            Some(t) => Duration::from_secs(
                t.parse()
                    .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds {t:?}")))?,
            ),
            None => Duration::from_secs(1800),
        };
        Ok::<_, ApiError>(WatchReq {
            res,
            ns,
            labels,
            fields,
            since,
            bookmarks: r.flag("allowWatchBookmarks"),
            send_initial_events: r.flag("sendInitialEvents"),
            timeout,
        })
    })();
    let req = match prepared {
        Ok(req) => req,
        Err(e) => return error(&e),
    };
    let rx = watch::start(
        shared.store.clone(),
        req,
        shared.bookmark_interval,
        shared.shutdown.clone(),
    );
    let mut resp = Response::new(Body::Stream(rx));
    json_headers(resp.headers_mut());
    resp
}
