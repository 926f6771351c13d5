//! The writing verbs, as atomic read-modify-writes on the locked store: create, update (PUT)
//! and the four patch types (deletes are in `delete`). The HTTP layer and the controller both
//! call these.
//!
//! Simplifications: strategic merge patch is applied as a JSON merge patch (lists replaced, not merged by key);
//! `fieldValidation` counts only for the custom resources with a complete schema (see
//! `objects::unknown_fields`); other objects are schemaless or pruned silently.

use super::apply::{self, Scope};
use super::delete::{collect_garbage, remove_object};
use super::meta;
use super::objects::{prepare, server_set};
use super::resources::{NAMESPACES, RESOURCES, Resource};
use super::status::{ApiError, FieldErr};
use super::store::{Inner, Key};
use serde_json::{Value, json};
use std::sync::Arc;

pub struct WriteCtx<'a> {
    pub manager: &'a str,
    pub dry_run: bool,
    /// `fieldValidation` (Warn when unset, as kube-apiserver's default).
    pub validation: FieldValidation,
    /// Where `Warn` puts its `Warning:` lines (the HTTP layer sends them); None: dropped.
    pub warnings: Option<&'a std::cell::RefCell<Vec<String>>>,
}

impl<'a> WriteCtx<'a> {
    /// A write of the simulated controllers: their objects have no unknown fields.
    pub fn internal(manager: &'a str, dry_run: bool) -> Self {
        Self {
            manager,
            dry_run,
            validation: FieldValidation::Ignore,
            warnings: None,
        }
    }
}

/// The `fieldValidation` query parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldValidation {
    Ignore,
    Warn,
    Strict,
}

impl FieldValidation {
    /// kube-apiserver refuses other values with 400 (handlers/rest.go `fieldValidation`).
    pub fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value {
            None | Some("") | Some("Warn") => Ok(Self::Warn),
            Some("Ignore") => Ok(Self::Ignore),
            Some("Strict") => Ok(Self::Strict),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of Ignore, Warn, Strict, got {other}"
            ))),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_content_type(ct: &str) -> Option<Self> {
        match ct.split(';').next().unwrap_or("").trim() {
            "application/json-patch+json" => Some(Self::Json),
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Some(Self::Apply),
            _ => None,
        }
    }
}

/// Parses a request body: JSON, or YAML (which includes JSON).
pub fn decode(body: &[u8]) -> Result<Value, ApiError> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("the body of the request is not UTF-8"))?;
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
}

/// apiVersion/kind in a body must name the resource of the URL (when present, or always).
fn check_type(res: &Resource, body: &Value, required: bool) -> Result<(), ApiError> {
    let expected = res.api_version();
    match body.get("apiVersion").and_then(Value::as_str) {
        Some(v) if v != expected => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({expected})"
            )));
        }
        None if required => {
            return Err(ApiError::bad_request(
                "error decoding YAML: Object 'apiVersion' is missing",
            ));
        }
        _ => {}
    }
    match body.get("kind").and_then(Value::as_str) {
        Some(k) if k != res.kind => Err(ApiError::bad_request(format!(
            "the kind in the data ({k}) does not match the expected kind ({})",
            res.kind
        ))),
        None if required => Err(ApiError::bad_request(
            "error decoding YAML: Object 'Kind' is missing",
        )),
        _ => Ok(()),
    }
}

fn check_identity(key: &Key, body: &Value) -> Result<(), ApiError> {
    let res = &RESOURCES[key.res];
    if let Some(n) = meta::get_str(body, &["metadata", "name"])
        && n != key.name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({})",
            key.name
        )));
    }
    if res.namespaced
        && let Some(ns) = meta::get_str(body, &["metadata", "namespace"])
        && !ns.is_empty()
        && ns != key.ns
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

/// A namespaced create needs a namespace that exists and is not terminating.
fn check_namespace(inner: &Inner, key: &Key) -> Result<(), ApiError> {
    let res = &RESOURCES[key.res];
    if !res.namespaced {
        return Ok(());
    }
    let ns_res = &RESOURCES[NAMESPACES];
    let Some(ns) = inner.get(&Key::new(NAMESPACES, "", &key.ns)) else {
        return Err(ApiError::not_found(ns_res, &key.ns));
    };
    if meta::get(&ns, &["metadata", "deletionTimestamp"]).is_some() {
        return Err(ApiError::forbidden(
            res,
            &key.name,
            &format!(
                "unable to create new content in namespace {} because it is being terminated",
                key.ns
            ),
        ));
    }
    Ok(())
}

pub(super) fn not_found(key: &Key) -> ApiError {
    ApiError::not_found(&RESOURCES[key.res], &key.name)
}

/// Persists `new` unless it is a no-op; removes the object when its last finalizer went away
/// during deletion. Returns the stored (or would-be stored) object and whether it was created.
fn commit(inner: &mut Inner, key: &Key, old: Option<&Value>, new: Value, dry_run: bool) -> Value {
    if let Some(old) = old
        && apply::comparable(old) == apply::comparable(&new)
    {
        return old.clone();
    }
    if dry_run {
        return new;
    }
    let deleting = meta::get(&new, &["metadata", "deletionTimestamp"]).is_some();
    let finalizers = meta::get(&new, &["metadata", "finalizers"])
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let stored = inner.put(key.clone(), new);
    if deleting && !finalizers && key.res != NAMESPACES {
        remove_object(inner, key);
        collect_garbage(inner, key, meta::uid(&stored));
    }
    (*stored).clone()
}

pub fn create(
    inner: &mut Inner,
    res_idx: usize,
    ns: &str,
    mut body: Value,
    ctx: &WriteCtx<'_>,
) -> Result<Value, ApiError> {
    let res = &RESOURCES[res_idx];
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request is not a JSON object",
        ));
    }
    check_type(res, &body, false)?;
    let mut name = meta::get_str(&body, &["metadata", "name"])
        .unwrap_or("")
        .to_string();
    if name.is_empty()
        && let Some(prefix) =
            meta::get_str(&body, &["metadata", "generateName"]).filter(|p| !p.is_empty())
    {
        name = format!("{prefix}{}", meta::suffix(5, None));
    }
    let ns = if res.namespaced {
        match meta::get_str(&body, &["metadata", "namespace"]).filter(|n| !n.is_empty()) {
            Some(n) if n != ns => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => ns.to_string(),
        }
    } else {
        String::new()
    };
    let key = Key::new(res_idx, &ns, &name);
    if name.is_empty() {
        return Err(ApiError::invalid(
            res,
            "",
            &[FieldErr::required(
                "metadata.name",
                "name or generateName is required",
            )],
        ));
    }
    check_namespace(inner, &key)?;
    if inner.get(&key).is_some() {
        return Err(ApiError::already_exists(res, &name));
    }
    meta::set_str(&mut body, &["metadata", "name"], &name);
    let mut obj = prepare(inner, &key, None, body, Scope::Main, ctx, false)?;
    apply::record_update(
        res,
        None,
        &mut obj,
        ctx.manager,
        Scope::Main,
        server_set(res),
    );
    Ok(commit(inner, &key, None, obj, ctx.dry_run))
}

pub fn update(
    inner: &mut Inner,
    key: &Key,
    body: Value,
    scope: Scope,
    ctx: &WriteCtx<'_>,
) -> Result<Value, ApiError> {
    let res = &RESOURCES[key.res];
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request is not a JSON object",
        ));
    }
    check_type(res, &body, false)?;
    check_identity(key, &body)?;
    let old = inner.get(key).ok_or_else(|| not_found(key))?;
    write(inner, key, &old, body, scope, ctx)
}

/// The common tail of PUT and non-apply PATCH: precondition on resourceVersion, then prepare,
/// ownership, commit.
fn write(
    inner: &mut Inner,
    key: &Key,
    old: &Arc<Value>,
    body: Value,
    scope: Scope,
    ctx: &WriteCtx<'_>,
) -> Result<Value, ApiError> {
    let res = &RESOURCES[key.res];
    if let Some(rv) =
        meta::get_str(&body, &["metadata", "resourceVersion"]).filter(|s| !s.is_empty())
        && rv != meta::get_str(old, &["metadata", "resourceVersion"]).unwrap_or("")
    {
        return Err(ApiError::stale(res, &key.name));
    }
    let mut obj = prepare(inner, key, Some(old), body, scope, ctx, false)?;
    apply::record_update(
        res,
        Some(old),
        &mut obj,
        ctx.manager,
        scope,
        server_set(res),
    );
    Ok(commit(inner, key, Some(old), obj, ctx.dry_run))
}

/// PATCH of any type. Returns the object and whether apply created it.
pub fn patch(
    inner: &mut Inner,
    key: &Key,
    typ: PatchType,
    body: &[u8],
    scope: Scope,
    ctx: &WriteCtx<'_>,
    force: bool,
) -> Result<(Value, bool), ApiError> {
    let res = &RESOURCES[key.res];
    if typ == PatchType::Apply {
        return apply_patch(inner, key, body, scope, ctx, force);
    }
    let old = inner.get(key).ok_or_else(|| not_found(key))?;
    let mut doc = (*old).clone();
    match typ {
        PatchType::Json => {
            let p: json_patch::Patch = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            json_patch::patch(&mut doc, &p).map_err(|e| {
                ApiError::unprocessable(format!(
                    "the server rejected our request due to an error in our request: {e}"
                ))
            })?;
        }
        _ => {
            let p: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            if !p.is_object() {
                return Err(ApiError::bad_request("the patch is not a JSON object"));
            }
            let p = match typ {
                PatchType::Strategic => super::strategic::resolve(&doc, &p),
                _ => p,
            };
            json_patch::merge(&mut doc, &p);
        }
    }
    if meta::name(&doc) != key.name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({})",
            meta::name(&doc),
            key.name
        )));
    }
    check_type(res, &doc, false)?;
    Ok((write(inner, key, &old, doc, scope, ctx)?, false))
}

fn apply_patch(
    inner: &mut Inner,
    key: &Key,
    body: &[u8],
    scope: Scope,
    ctx: &WriteCtx<'_>,
    force: bool,
) -> Result<(Value, bool), ApiError> {
    let res = &RESOURCES[key.res];
    let config = decode(body)?;
    if !config.is_object() {
        return Err(ApiError::bad_request(
            "the apply configuration is not an object",
        ));
    }
    check_type(res, &config, true)?;
    check_identity(key, &config)?;
    let old = inner.get(key);
    let live = match &old {
        Some(o) => (**o).clone(),
        None if scope == Scope::Status => return Err(not_found(key)),
        None => {
            check_namespace(inner, key)?;
            let mut m = json!({"name": key.name});
            if res.namespaced {
                m["namespace"] = json!(key.ns);
            }
            json!({"apiVersion": res.api_version(), "kind": res.kind, "metadata": m})
        }
    };
    let prepared = {
        let inner_ref: &Inner = inner;
        let old_ref = old.as_deref();
        let mut finish = |merged: Value| prepare(inner_ref, key, old_ref, merged, scope, ctx, true);
        apply::apply(res, &live, config, ctx.manager, force, scope, &mut finish)?
    };
    let created = old.is_none();
    Ok((
        commit(inner, key, old.as_deref(), prepared, ctx.dry_run),
        created,
    ))
}
