//! Per-type server logic between decoding and storage: server-owned metadata, defaults,
//! allocation (Service cluster IPs and node ports), validation (422 Invalid) and
//! metadata.generation.
//!
//! Faithful: name rules per type (DNS-1035 for Services), label syntax, namespace defaults,
//! EndpointSlice addressType/addresses, the Service rules in `service`.
//! Simplified: only the validations listed here; custom resources other than those with a
//! schema in `schema` are schemaless.

use super::apply::Scope;
use super::meta;
use super::ops::{FieldValidation, WriteCtx};
use super::resources::{NameRule, RESOURCES, Resource};
use super::schema;
use super::service;
use super::status::{ApiError, FieldErr};
use super::store::{Inner, Key};
use serde_json::{Value, json};

/// Fields the server sets, owned by no manager on create/update.
pub fn server_set(res: &Resource) -> &'static [&'static [&'static str]] {
    if res.kind == "Service" {
        &[
            &["spec", "clusterIP"],
            &["spec", "clusterIPs"],
            &["spec", "ipFamilies"],
            &["spec", "ipFamilyPolicy"],
        ]
    } else {
        &[]
    }
}

/// Turns a decoded (or merged) object into what is stored.
pub fn prepare(
    inner: &Inner,
    key: &Key,
    old: Option<&Value>,
    new: Value,
    scope: Scope,
    ctx: &WriteCtx<'_>,
    apply: bool,
) -> Result<Value, ApiError> {
    let res = &RESOURCES[key.res];
    let mut obj = match (scope, old) {
        (Scope::Status, Some(old)) => {
            let mut o = old.clone();
            match new.get("status") {
                Some(s) => meta::set(&mut o, &["status"], s.clone()),
                None => {
                    meta::remove(&mut o, &["status"]);
                }
            }
            // kube-apiserver's status strategies reset only the spec
            // (`pkg/registry/core/service/strategy.go`, `serviceStatusStrategy.PrepareForUpdate`:
            // `newService.Spec = oldService.Spec`): the service controller and OpenShift's GCE
            // provider put their finalizers on and off through `services/status`
            // (k8s.io/cloud-provider `servicehelper.PatchService`).
            if key.res == super::resources::SERVICES {
                for field in ["finalizers", "labels", "annotations"] {
                    match new.get("metadata").and_then(|m| m.get(field)) {
                        Some(v) => meta::set(&mut o, &["metadata", field], v.clone()),
                        None => {
                            meta::remove(&mut o, &["metadata", field]);
                        }
                    }
                }
            }
            o
        }
        _ => new,
    };
    if !obj.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request is not a JSON object",
        ));
    }
    obj["apiVersion"] = json!(res.api_version());
    obj["kind"] = json!(res.kind);
    let m = meta::obj_mut(&mut obj, &["metadata"]);
    m.insert("name".into(), json!(key.name));
    if res.namespaced {
        m.insert("namespace".into(), json!(key.ns));
    } else {
        m.remove("namespace");
    }
    m.remove("resourceVersion");
    m.remove("selfLink");
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "generation",
    ] {
        match old.and_then(|o| meta::get(o, &["metadata", field])) {
            Some(v) => {
                m.insert(field.into(), v.clone());
            }
            None => {
                m.remove(field);
            }
        }
    }
    if old.is_none() {
        m.insert("uid".into(), json!(meta::new_uid()));
        m.insert("creationTimestamp".into(), json!(meta::now()));
    }
    if scope == Scope::Main && res.status {
        match old.and_then(|o| o.get("status")) {
            Some(s) => obj["status"] = s.clone(),
            None => {
                meta::remove(&mut obj, &["status"]);
            }
        }
    }

    let mut errs = Vec::new();
    if old.is_none()
        && let Some(e) = check_name(res.name_rule, &key.name)
    {
        errs.push(e);
    }
    errs.extend(check_labels(&obj));
    match res.kind {
        "Namespace" => namespace_defaults(&mut obj, &key.name),
        "Service" => {
            service::decode_check(&obj)?;
            errs.extend(service::defaults(inner, key, old, &mut obj));
            if errs.is_empty() {
                errs.extend(service::validate(&obj));
            }
        }
        "EndpointSlice" => errs.extend(validate_slice(&obj)),
        _ => {}
    }
    if let Some(schema) = schema::of(res) {
        let (found, pruned) = schema::check_pruning(schema, &mut obj);
        if !pruned.is_empty() && schema::complete(res) {
            unknown_fields(res, key, &pruned, ctx, apply)?;
        }
        errs.extend(found);
    }
    if !errs.is_empty() {
        return Err(ApiError::invalid(res, &key.name, &errs));
    }
    if res.generation {
        let generation = match old {
            None => 1,
            Some(o) => {
                let g = meta::get(o, &["metadata", "generation"])
                    .and_then(Value::as_i64)
                    .unwrap_or(1);
                if spec_part(o) == spec_part(&obj) {
                    g
                } else {
                    g + 1
                }
            }
        };
        meta::set(&mut obj, &["metadata", "generation"], json!(generation));
    }
    Ok(obj)
}

/// Fields the schema does not declare, as kube-apiserver treats them: decoding comes before
/// validation, so these answers come before any 422.
/// - server-side apply: always refused (the typed patch cannot be built:
///   `managedfields/internal/structuredmerge.go`), a 500 without a reason (kubernetes/kubernetes
///   issues 122480 and 139253: not a `Status` error inside the server);
/// - otherwise `fieldValidation` decides (KEP-2885, kubernetes/kubernetes PR 105916): Strict is
///   400 `strict decoding error: unknown field "spec.x"`, Warn (the default) prunes with a
///   `Warning: 299 - "unknown field \"spec.x\""`, Ignore prunes silently.
fn unknown_fields(
    res: &Resource,
    key: &Key,
    pruned: &[String],
    ctx: &WriteCtx<'_>,
    apply: bool,
) -> Result<(), ApiError> {
    if apply {
        // structured-merge-diff's ValidationErrors: one line, or "errors:" and one per line.
        let lines: Vec<String> = pruned
            .iter()
            .map(|p| format!(".{p}: field not declared in schema"))
            .collect();
        let detail = match lines.as_slice() {
            [one] => one.clone(),
            many => format!("errors:\n  {}", many.join("\n  ")),
        };
        let gvk = if res.group.is_empty() {
            format!("/{}, Kind={}", res.version, res.kind)
        } else {
            format!("{}/{}, Kind={}", res.group, res.version, res.kind)
        };
        return Err(ApiError::internal(format!(
            "failed to create typed patch object ({}/{}; {gvk}): {detail}",
            key.ns, key.name
        )));
    }
    let unknown: Vec<String> = pruned
        .iter()
        .map(|p| format!("unknown field {p:?}"))
        .collect();
    match ctx.validation {
        FieldValidation::Strict => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            unknown.join(", ")
        ))),
        FieldValidation::Warn => {
            if let Some(w) = ctx.warnings {
                w.borrow_mut().extend(unknown);
            }
            Ok(())
        }
        FieldValidation::Ignore => Ok(()),
    }
}

fn spec_part(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

fn namespace_defaults(obj: &mut Value, name: &str) {
    meta::obj_mut(obj, &["metadata", "labels"])
        .insert("kubernetes.io/metadata.name".into(), json!(name));
    let spec = meta::obj_mut(obj, &["spec"]);
    spec.entry("finalizers").or_insert(json!(["kubernetes"]));
    meta::obj_mut(obj, &["status"])
        .entry("phase")
        .or_insert(json!("Active"));
}

const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

pub fn is_label(s: &str, alpha_first: bool) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && (if alpha_first {
            b[0].is_ascii_lowercase()
        } else {
            b[0] != b'-'
        })
        && b[b.len() - 1] != b'-'
}

pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(|l| is_label(l, false))
}

fn check_name(rule: NameRule, name: &str) -> Option<FieldErr> {
    let field = "metadata.name";
    if name.is_empty() {
        return Some(FieldErr::required(
            field,
            "name or generateName is required",
        ));
    }
    let (ok, max, msg) = match rule {
        NameRule::Dns1035Label => (is_label(name, true), 63, DNS1035),
        NameRule::Dns1123Label => (is_label(name, false), 63, DNS1123_LABEL),
        NameRule::Dns1123Subdomain => (is_dns1123_subdomain(name), 253, DNS1123_SUBDOMAIN),
        NameRule::PathSegment => {
            let why = match name {
                "." => Some("may not be '.'"),
                ".." => Some("may not be '..'"),
                _ if name.contains('/') => Some("may not contain '/'"),
                _ if name.contains('%') => Some("may not contain '%'"),
                _ => None,
            };
            return why.map(|why| FieldErr::invalid(field, json!(name), why));
        }
    };
    if name.len() > max {
        return Some(FieldErr::invalid(
            field,
            json!(name),
            format!("must be no more than {max} characters"),
        ));
    }
    (!ok).then(|| FieldErr::invalid(field, json!(name), msg))
}

fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && s.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

pub fn is_label_key(k: &str) -> bool {
    match k.split_once('/') {
        Some((prefix, name)) => is_dns1123_subdomain(prefix) && is_qualified_name_part(name),
        None => is_qualified_name_part(k),
    }
}

pub fn is_label_value(v: &str) -> bool {
    v.is_empty() || is_qualified_name_part(v)
}

fn check_labels(obj: &Value) -> Vec<FieldErr> {
    let mut errs = Vec::new();
    for (field, is_labels) in [("labels", true), ("annotations", false)] {
        let Some(map) = meta::get(obj, &["metadata", field]).and_then(Value::as_object) else {
            continue;
        };
        let path = format!("metadata.{field}");
        for (k, v) in map {
            if !is_label_key(k) {
                errs.push(FieldErr::invalid(&path, json!(k), "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"));
            }
            match v.as_str() {
                Some(s) if !is_labels || is_label_value(s) => {}
                Some(s) => errs.push(FieldErr::invalid(&path, json!(s), "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")),
                None => errs.push(FieldErr::invalid(format!("{path}.{k}"), v.clone(), "must be a string")),
            }
        }
    }
    errs
}

fn validate_slice(obj: &Value) -> Vec<FieldErr> {
    let mut errs = Vec::new();
    const TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
    match obj.get("addressType") {
        None => errs.push(FieldErr::required("addressType", "")),
        Some(v) if !v.as_str().is_some_and(|s| TYPES.contains(&s)) => {
            errs.push(FieldErr::not_supported("addressType", v.clone(), TYPES));
        }
        _ => {}
    }
    for (i, e) in obj
        .get("endpoints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if e.get("addresses")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            errs.push(FieldErr::required(format!("endpoints[{i}].addresses"), ""));
        }
    }
    errs
}
