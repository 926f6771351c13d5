//! Server-side apply and `metadata.managedFields`, after structured-merge-diff:
//!
//! - Every write records field ownership. Apply gives the manager exactly the fields of its
//!   configuration (operation `Apply`); create/update/patch give the manager the fields it
//!   changed (operation `Update`) and take them away from everyone else.
//! - Apply conflicts: a field in the configuration that another manager owns and whose value
//!   would change. Without `force` that is a 409 with one `FieldManagerConflict` cause per
//!   field; with `force` the other manager loses the field. Managers that set the same value
//!   share ownership.
//! - A field the manager applied before and omits now is removed, unless another manager
//!   owns it.
//! - Ownership is kept per subresource (`subresource: status` entries); main-resource writes
//!   never own `.status` of a type with a status subresource, status writes own only `.status`.
//! - No-op writes (nothing but managedFields timestamps would change) are not persisted.
//!
//! Simplifications: lists are atomic (see `fields`); maps are granular except the atomic
//! maps listed per resource; `null` in a configuration means "not set".

use super::fields::{FieldSet, Path, merge, path_string, remove_at, value_at};
use super::meta;
use super::resources::Resource;
use super::status::ApiError;
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Main,
    Status,
}

impl Scope {
    pub fn subresource(self) -> Option<&'static str> {
        match self {
            Scope::Main => None,
            Scope::Status => Some("status"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub time: String,
    pub subresource: Option<String>,
    pub fields: FieldSet,
}

impl Entry {
    fn is(&self, manager: &str, operation: &str, sub: Option<&str>) -> bool {
        self.manager == manager && self.operation == operation && self.subresource.as_deref() == sub
    }

    /// How conflicts name the manager: `"x"` for Apply, `"x" using v1` for Update.
    fn display(&self) -> String {
        if self.operation == "Update" {
            format!("{:?} using {}", self.manager, self.api_version)
        } else {
            format!("{:?}", self.manager)
        }
    }

    fn to_json(&self) -> Value {
        let mut e = json!({
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": self.fields.to_fields_v1(),
        });
        if let Some(s) = &self.subresource {
            e["subresource"] = json!(s);
        }
        e
    }
}

pub fn entries(obj: &Value) -> Vec<Entry> {
    let Some(list) = meta::get(obj, &["metadata", "managedFields"]).and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|e| {
            Some(Entry {
                manager: e.get("manager")?.as_str()?.to_string(),
                operation: e.get("operation")?.as_str()?.to_string(),
                api_version: meta::get_str(e, &["apiVersion"]).unwrap_or("").to_string(),
                time: meta::get_str(e, &["time"]).unwrap_or("").to_string(),
                subresource: meta::get_str(e, &["subresource"]).map(str::to_string),
                fields: FieldSet::from_fields_v1(e.get("fieldsV1").unwrap_or(&Value::Null)),
            })
        })
        .collect()
}

/// Writes `list` (minus empty entries, minus paths that no longer exist) to the object.
fn store_entries(obj: &mut Value, mut list: Vec<Entry>) {
    for e in &mut list {
        e.fields.0.retain(|p| value_at(obj, p).is_some());
    }
    list.retain(|e| !e.fields.is_empty());
    if list.is_empty() {
        meta::remove(obj, &["metadata", "managedFields"]);
    } else {
        let json: Vec<Value> = list.iter().map(Entry::to_json).collect();
        meta::set(obj, &["metadata", "managedFields"], Value::Array(json));
    }
}

pub fn atomic_fn(res: &'static Resource) -> impl Fn(&[String]) -> bool {
    move |p: &[String]| {
        res.atomic_maps
            .iter()
            .any(|a| a.len() == p.len() && a.iter().zip(p).all(|(a, p)| p == &format!("f:{a}")))
    }
}

/// Which top-level fields a write in `scope` may own.
pub fn scope_fn(res: &'static Resource, scope: Scope) -> impl Fn(&[String]) -> bool {
    move |p: &[String]| {
        let status = p.first().is_some_and(|s| s == "f:status");
        match scope {
            Scope::Status => status,
            Scope::Main => !(res.status && status),
        }
    }
}

/// Records an Update-operation write: `manager` gains what changed from `old` to `new`,
/// others lose it. Fields the server sets (`server_set`) are owned by no one.
pub fn record_update(
    res: &'static Resource,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    scope: Scope,
    server_set: &[&[&str]],
) {
    let atomic = atomic_fn(res);
    let keep = scope_fn(res, scope);
    let all = FieldSet::of(new, &atomic, &keep);
    let changed: Vec<Path> = all
        .0
        .into_iter()
        .filter(|p| old.and_then(|o| value_at(o, p)) != value_at(new, p))
        .filter(|p| {
            !server_set.iter().any(|s| {
                s.len() <= p.len() && s.iter().zip(p.iter()).all(|(a, b)| b == &format!("f:{a}"))
            })
        })
        .collect();
    let mut list = old.map(entries).unwrap_or_default();
    if !changed.is_empty() {
        let sub = scope.subresource();
        for e in &mut list {
            e.fields
                .0
                .retain(|q| !changed.iter().any(|p| p == q || q.starts_with(p)));
        }
        let now = meta::now();
        match list.iter_mut().find(|e| e.is(manager, "Update", sub)) {
            Some(e) => {
                e.fields.0.extend(changed);
                e.time = now;
            }
            None => list.push(Entry {
                manager: manager.to_string(),
                operation: "Update".into(),
                api_version: res.api_version(),
                time: now,
                subresource: sub.map(str::to_string),
                fields: FieldSet(changed.into_iter().collect()),
            }),
        }
    }
    store_entries(new, list);
}

/// Server-side apply of `config` onto `live` (None: the object does not exist yet, and
/// `live` is then the skeleton to create). `finish` turns the merged object into the stored
/// one (defaults, allocation, validation, status kept per scope).
#[allow(clippy::too_many_arguments)]
pub fn apply(
    res: &'static Resource,
    live: &Value,
    mut config: Value,
    manager: &str,
    force: bool,
    scope: Scope,
    finish: &mut dyn FnMut(Value) -> Result<Value, ApiError>,
) -> Result<Value, ApiError> {
    let atomic = atomic_fn(res);
    let keep = scope_fn(res, scope);
    meta::strip_nulls(&mut config);
    // What the configuration sets, limited to the scope (main writes never touch status).
    let applied = FieldSet::of(&config, &atomic, &keep);
    let mut scoped = Value::Object(Default::default());
    for p in &applied.0 {
        if let Some(v) = value_at(&config, p) {
            let keys: Vec<&str> = p
                .iter()
                .map(|s| s.strip_prefix("f:").unwrap_or(s))
                .collect();
            meta::set(&mut scoped, &keys, v.clone());
        }
    }
    let sub = scope.subresource();
    let mut list = entries(live);
    let previous = list
        .iter()
        .find(|e| e.is(manager, "Apply", sub))
        .map(|e| e.fields.clone())
        .unwrap_or_default();

    let mut merged = live.clone();
    for p in previous.0.difference(&applied.0) {
        let owned_elsewhere = list
            .iter()
            .filter(|e| !e.is(manager, "Apply", sub))
            .any(|e| e.fields.related(p).next().is_some());
        let still_applied = applied.related(p).next().is_some();
        if !owned_elsewhere && !still_applied {
            remove_at(&mut merged, p);
        }
    }
    merge(&mut merged, &scoped, &mut Vec::new(), &atomic);
    // Conflicts are reported before validation errors, as structured-merge-diff finds them
    // at merge time; they compare the defaulted result when there is one.
    let finished = finish(merged.clone());
    let compared = finished.as_ref().unwrap_or(&merged);

    // Conflicts: fields of the configuration that others own and whose value would change.
    let mut conflicts: Vec<(usize, Path)> = Vec::new();
    for (i, e) in list.iter().enumerate() {
        if e.is(manager, "Apply", sub) {
            continue;
        }
        for p in &applied.0 {
            let differs = e.fields.related(p).any(|q| {
                let d = if q.len() > p.len() { q } else { p };
                value_at(compared, d) != value_at(live, d)
            });
            if differs {
                conflicts.push((i, p.clone()));
            }
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(conflict_error(&list, &conflicts));
    }
    let mut candidate = finished?;
    for (i, p) in &conflicts {
        list[*i]
            .fields
            .0
            .retain(|q| !(q.starts_with(p) || p.starts_with(q)));
    }
    let api_version = meta::get_str(&config, &["apiVersion"])
        .unwrap_or("")
        .to_string();
    let entry = Entry {
        manager: manager.to_string(),
        operation: "Apply".into(),
        api_version,
        time: meta::now(),
        subresource: sub.map(str::to_string),
        fields: applied,
    };
    match list.iter_mut().find(|e| e.is(manager, "Apply", sub)) {
        Some(e) => {
            let time = if e.fields == entry.fields {
                e.time.clone()
            } else {
                entry.time.clone()
            };
            *e = Entry { time, ..entry };
        }
        None => list.push(entry),
    }
    store_entries(&mut candidate, list);
    Ok(candidate)
}

fn conflict_error(list: &[Entry], conflicts: &[(usize, Path)]) -> ApiError {
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(i, p)| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {}", list[*i].display()),
                "field": path_string(p),
            })
        })
        .collect();
    let message = if let [(i, p)] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            list[*i].display(),
            path_string(p)
        )
    } else {
        let mut managers: Vec<String> = conflicts.iter().map(|(i, _)| list[*i].display()).collect();
        managers.sort();
        managers.dedup();
        let mut lines = Vec::new();
        for m in managers {
            lines.push(format!("conflicts with {m}:"));
            for (i, p) in conflicts {
                if list[*i].display() == m {
                    lines.push(format!("- {}", path_string(p)));
                }
            }
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError::apply_conflict(message, causes)
}

/// The object without what changes on every write (resourceVersion, managedFields times),
/// to tell a no-op write from a real one.
pub fn comparable(v: &Value) -> Value {
    let mut v = v.clone();
    meta::remove(&mut v, &["metadata", "resourceVersion"]);
    if let Some(list) = v
        .get_mut("metadata")
        .and_then(|m| m.get_mut("managedFields"))
        .and_then(Value::as_array_mut)
    {
        for e in list {
            if let Some(e) = e.as_object_mut() {
                e.remove("time");
            }
        }
    }
    v
}
