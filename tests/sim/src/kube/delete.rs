//! DELETE: preconditions, finalizers (deletionTimestamp, removal when the last finalizer
//! goes), owner-reference garbage collection (background propagation; `Orphan` keeps
//! dependents), namespace termination (Terminating phase, contents deleted, protected
//! namespaces refused) and the response body per type (object or `Status` Success).
//!
//! Simplification: garbage collection and namespace termination run synchronously inside the
//! DELETE (kube-apiserver and its controllers take a moment; the events are the same).

use super::meta;
use super::ops::{decode, not_found};
use super::resources::{NAMESPACES, RESOURCES};
use super::status::{ApiError, success};
use super::store::{Inner, Key};
use serde_json::{Value, json};
use std::sync::Arc;

#[derive(Default)]
pub struct DeleteOpts {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub orphan: bool,
    pub dry_run: bool,
}

impl DeleteOpts {
    /// From a DeleteOptions body (may be empty) and the query.
    pub fn parse(body: &[u8], query: &[(String, String)]) -> Result<Self, ApiError> {
        let mut o = DeleteOpts::default();
        if !body.iter().all(u8::is_ascii_whitespace) {
            let v = decode(body)?;
            o.uid = meta::get_str(&v, &["preconditions", "uid"]).map(str::to_string);
            o.resource_version =
                meta::get_str(&v, &["preconditions", "resourceVersion"]).map(str::to_string);
            o.orphan = v.get("propagationPolicy").and_then(Value::as_str) == Some("Orphan")
                || v.get("orphanDependents") == Some(&json!(true));
            o.dry_run = v
                .get("dryRun")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
        }
        for (k, v) in query {
            match (k.as_str(), v.as_str()) {
                ("dryRun", "All") => o.dry_run = true,
                ("propagationPolicy", "Orphan") | ("orphanDependents", "true") => o.orphan = true,
                _ => {}
            }
        }
        Ok(o)
    }
}

/// DELETE of one object: (HTTP code, body).
pub fn delete(inner: &mut Inner, key: &Key, opts: &DeleteOpts) -> Result<(u16, Value), ApiError> {
    let res = &RESOURCES[key.res];
    let obj = inner.get(key).ok_or_else(|| not_found(key))?;
    if let Some(uid) = &opts.uid
        && uid != meta::uid(&obj)
    {
        let msg = format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            meta::uid(&obj)
        );
        return Err(ApiError::conflict(res, &key.name, &msg));
    }
    if let Some(rv) = &opts.resource_version
        && rv != meta::get_str(&obj, &["metadata", "resourceVersion"]).unwrap_or("")
    {
        let msg = format!(
            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in meta: {}",
            meta::get_str(&obj, &["metadata", "resourceVersion"]).unwrap_or("")
        );
        return Err(ApiError::conflict(res, &key.name, &msg));
    }
    if key.res == NAMESPACES
        && ["default", "kube-system", "kube-public"].contains(&key.name.as_str())
    {
        return Err(ApiError::forbidden(
            res,
            &key.name,
            "this namespace may not be deleted",
        ));
    }
    let finalizers = meta::get(&obj, &["metadata", "finalizers"])
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let pending = finalizers || key.res == NAMESPACES;
    if opts.dry_run {
        let body = if res.returns_deleted_object || pending {
            (*obj).clone()
        } else {
            success(res, &key.name, meta::uid(&obj))
        };
        return Ok((200, body));
    }
    if pending {
        let mut marked = (*obj).clone();
        if meta::get(&marked, &["metadata", "deletionTimestamp"]).is_none() {
            meta::set_str(
                &mut marked,
                &["metadata", "deletionTimestamp"],
                &meta::now(),
            );
            meta::set(
                &mut marked,
                &["metadata", "deletionGracePeriodSeconds"],
                json!(0),
            );
            if key.res == NAMESPACES {
                meta::set_str(&mut marked, &["status", "phase"], "Terminating");
            }
            marked = (*inner.put(key.clone(), marked)).clone();
        }
        if key.res == NAMESPACES {
            terminate_namespace(inner, &key.name);
        }
        return Ok((200, marked));
    }
    let removed = remove_object(inner, key).unwrap_or(obj);
    if !opts.orphan {
        collect_garbage(inner, key, meta::uid(&removed));
    }
    let body = if res.returns_deleted_object {
        (*removed).clone()
    } else {
        success(res, &key.name, meta::uid(&removed))
    };
    Ok((200, body))
}

/// Removes an object for good; a terminating namespace left empty goes too.
pub(super) fn remove_object(inner: &mut Inner, key: &Key) -> Option<Arc<Value>> {
    let removed = inner.remove(key)?;
    if RESOURCES[key.res].namespaced {
        finish_namespace(inner, &key.ns);
    }
    Some(removed)
}

/// Deletes the objects whose every owner is gone (background propagation).
pub(super) fn collect_garbage(inner: &mut Inner, owner: &Key, uid: &str) {
    let owner_ns = RESOURCES[owner.res].namespaced.then_some(owner.ns.as_str());
    let dependents: Vec<Key> = (0..RESOURCES.len())
        .flat_map(|r| inner.list(r, owner_ns.filter(|_| RESOURCES[r].namespaced)))
        .filter(|(_, o)| {
            meta::get(o, &["metadata", "ownerReferences"])
                .and_then(Value::as_array)
                .is_some_and(|refs| {
                    refs.iter()
                        .any(|r| r.get("uid").and_then(Value::as_str) == Some(uid))
                })
        })
        .map(|(k, _)| k)
        .collect();
    for k in dependents {
        let _ = delete(inner, &k, &DeleteOpts::default());
    }
}

fn terminate_namespace(inner: &mut Inner, ns: &str) {
    let contents: Vec<Key> = (0..RESOURCES.len())
        .filter(|r| RESOURCES[*r].namespaced)
        .flat_map(|r| inner.list(r, Some(ns)))
        .map(|(k, _)| k)
        .collect();
    for k in contents {
        let _ = delete(inner, &k, &DeleteOpts::default());
    }
    finish_namespace(inner, ns);
}

fn finish_namespace(inner: &mut Inner, ns: &str) {
    let key = Key::new(NAMESPACES, "", ns);
    let terminating = inner
        .get(&key)
        .is_some_and(|o| meta::get(&o, &["metadata", "deletionTimestamp"]).is_some());
    let empty = (0..RESOURCES.len())
        .filter(|r| RESOURCES[*r].namespaced)
        .all(|r| inner.list(r, Some(ns)).is_empty());
    if terminating && empty {
        inner.remove(&key);
    }
}
