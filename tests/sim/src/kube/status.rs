//! `Status` bodies, shaped as kube-apiserver's `k8s.io/apimachinery/pkg/api/errors` builds
//! them (message wording, reason, code, details with the plural resource as `kind`).

use super::resources::Resource;
use serde_json::{Map, Value, json};

#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

/// One field error of a 422 Invalid (`field.Error`).
#[derive(Debug, Clone)]
pub struct FieldErr {
    pub field: String,
    pub kind: FieldErrKind,
    pub value: Value,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrKind {
    Required,
    Invalid,
    NotSupported,
    Duplicate,
    Forbidden,
}

impl FieldErr {
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrKind::Required, field, Value::Null, detail)
    }
    pub fn invalid(field: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        Self::new(FieldErrKind::Invalid, field, value, detail)
    }
    pub fn not_supported(field: impl Into<String>, value: Value, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        let detail = format!("supported values: {}", list.join(", "));
        Self::new(FieldErrKind::NotSupported, field, value, detail)
    }
    pub fn duplicate(field: impl Into<String>, value: Value) -> Self {
        Self::new(FieldErrKind::Duplicate, field, value, "")
    }
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrKind::Forbidden, field, Value::Null, detail)
    }
    fn new(
        kind: FieldErrKind,
        field: impl Into<String>,
        value: Value,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            kind,
            value,
            detail: detail.into(),
        }
    }

    fn reason(&self) -> &'static str {
        match self.kind {
            FieldErrKind::Required => "FieldValueRequired",
            FieldErrKind::Invalid => "FieldValueInvalid",
            FieldErrKind::NotSupported => "FieldValueNotSupported",
            FieldErrKind::Duplicate => "FieldValueDuplicate",
            FieldErrKind::Forbidden => "FieldValueForbidden",
        }
    }

    /// `ErrorBody()`: the message without the field name.
    fn body(&self) -> String {
        let value = match &self.value {
            Value::String(s) => format!("{s:?}"),
            other => other.to_string(),
        };
        let head = match self.kind {
            FieldErrKind::Required => "Required value".to_string(),
            FieldErrKind::Forbidden => "Forbidden".to_string(),
            FieldErrKind::Invalid => format!("Invalid value: {value}"),
            FieldErrKind::NotSupported => format!("Unsupported value: {value}"),
            FieldErrKind::Duplicate => format!("Duplicate value: {value}"),
        };
        if self.detail.is_empty() {
            head
        } else {
            format!("{head}: {}", self.detail)
        }
    }
}

fn details(res: &Resource, name: &str, kind: &str) -> Value {
    let mut d = Map::new();
    d.insert("name".into(), json!(name));
    if !res.group.is_empty() {
        d.insert("group".into(), json!(res.group));
    }
    d.insert("kind".into(), json!(kind));
    Value::Object(d)
}

impl ApiError {
    fn new(
        code: u16,
        reason: &'static str,
        message: impl Into<String>,
        details: Option<Value>,
    ) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details,
        }
    }

    pub fn not_found(res: &Resource, name: &str) -> Self {
        let msg = format!("{} {name:?} not found", res.qualified());
        Self::new(404, "NotFound", msg, Some(details(res, name, res.plural)))
    }

    /// A path that names no resource.
    pub fn no_route() -> Self {
        let msg = "the server could not find the requested resource";
        Self::new(404, "NotFound", msg, Some(json!({})))
    }

    pub fn already_exists(res: &Resource, name: &str) -> Self {
        let msg = format!("{} {name:?} already exists", res.qualified());
        Self::new(
            409,
            "AlreadyExists",
            msg,
            Some(details(res, name, res.plural)),
        )
    }

    /// `Operation cannot be fulfilled on services "x": <why>`.
    pub fn conflict(res: &Resource, name: &str, why: &str) -> Self {
        let msg = format!(
            "Operation cannot be fulfilled on {} {name:?}: {why}",
            res.qualified()
        );
        Self::new(409, "Conflict", msg, Some(details(res, name, res.plural)))
    }

    pub fn stale(res: &Resource, name: &str) -> Self {
        Self::conflict(
            res,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 from server-side apply: `details.causes` of type FieldManagerConflict.
    pub fn apply_conflict(message: String, causes: Vec<Value>) -> Self {
        Self::new(409, "Conflict", message, Some(json!({"causes": causes})))
    }

    pub fn invalid(res: &Resource, name: &str, errs: &[FieldErr]) -> Self {
        Self::invalid_kind(res.group, res.kind, name, errs)
    }

    /// `NewInvalid` for any group/kind, e.g. `PatchOptions.meta.k8s.io "" is invalid: ...`.
    pub fn invalid_kind(group: &str, kind: &str, name: &str, errs: &[FieldErr]) -> Self {
        let rendered: Vec<String> = errs
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect();
        let joined = if rendered.len() == 1 {
            rendered[0].clone()
        } else {
            format!("[{}]", rendered.join(", "))
        };
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let msg = format!("{qualified} {name:?} is invalid: {joined}");
        let mut d = json!({"name": name});
        if !group.is_empty() {
            d["group"] = json!(group);
        }
        d["kind"] = json!(kind);
        d["causes"] = errs
            .iter()
            .map(|e| json!({"reason": e.reason(), "message": e.body(), "field": e.field}))
            .collect();
        Self::new(422, "Invalid", msg, Some(d))
    }

    /// 422 without field causes (a JSON patch that cannot be applied).
    pub fn unprocessable(msg: impl Into<String>) -> Self {
        Self::new(422, "Invalid", msg, None)
    }

    pub fn bad_request(msg: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", msg, None)
    }

    /// An error that is not a `Status` inside kube-apiserver: `ErrorToAPIStatus` makes it a
    /// 500 without a reason (server-side apply's "field not declared in schema" is one,
    /// kubernetes/kubernetes issue 122480).
    pub fn internal(msg: impl Into<String>) -> Self {
        Self::new(500, "", msg, None)
    }

    /// `services "x" is forbidden: <why>`.
    pub fn forbidden(res: &Resource, name: &str, why: &str) -> Self {
        let msg = format!("{} {name:?} is forbidden: {why}", res.qualified());
        Self::new(403, "Forbidden", msg, Some(details(res, name, res.plural)))
    }

    /// An authorizer's refusal, as apimachinery's `NewForbidden(groupResource, name, err)`:
    /// `<resource>[.<group>] ["<name>" ]is forbidden: <why>`, or `forbidden: <why>` for a
    /// path outside the resource API; details name/group/kind (the resource), empty omitted.
    pub fn forbidden_by(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let qualified = match (resource, group) {
            ("", _) => String::new(),
            (r, "") => r.to_string(),
            (r, g) => format!("{r}.{g}"),
        };
        let msg = match (qualified.as_str(), name) {
            ("", _) => format!("forbidden: {why}"),
            (q, "") => format!("{q} is forbidden: {why}"),
            (q, n) => format!("{q} {n:?} is forbidden: {why}"),
        };
        let mut d = Map::new();
        for (k, v) in [("name", name), ("group", group), ("kind", resource)] {
            if !v.is_empty() {
                d.insert(k.into(), json!(v));
            }
        }
        Self::new(403, "Forbidden", msg, Some(Value::Object(d)))
    }

    pub fn expired(msg: impl Into<String>) -> Self {
        Self::new(410, "Expired", msg, None)
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized", None)
    }

    pub fn method_not_allowed(method: &str) -> Self {
        let msg =
            format!("the server does not allow this method on the requested resource ({method})");
        Self::new(405, "MethodNotAllowed", msg, Some(json!({})))
    }

    pub fn unsupported_media(content_type: &str) -> Self {
        let msg = format!(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type:?})"
        );
        Self::new(415, "UnsupportedMediaType", msg, Some(json!({})))
    }

    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if self.reason.is_empty() {
            // `reason` is omitempty in metav1.Status.
            if let Some(m) = s.as_object_mut() {
                m.remove("reason");
            }
        }
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

/// The `Status` of Success returned by DELETE for types that do not return the object.
pub fn success(res: &Resource, name: &str, uid: &str) -> Value {
    let mut d = details(res, name, res.plural);
    d["uid"] = json!(uid);
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": d,
    })
}
