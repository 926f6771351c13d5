//! `authorization.k8s.io/v1` SelfSubjectAccessReview (create only, as kube-apiserver serves
//! it): the answer for the token's user. The sim has no RBAC; what the user may not do is the
//! test's [`Denied`] list, so a test can show a client refusing to go on without a permission.
//! A review without `spec.resourceAttributes` or `spec.nonResourceAttributes` is refused with
//! 422, as kube-apiserver's validation refuses it.

use super::http::{Body, Req, error, respond};
use super::status::ApiError;
use hyper::{Method, Response};
use serde_json::{Value, json};

/// One permission the sim's user lacks: `verb` on `resource` of `group` ("" = core), in any
/// namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub verb: String,
    pub group: String,
    pub resource: String,
}

impl Denied {
    pub fn new(verb: &str, group: &str, resource: &str) -> Self {
        Self {
            verb: verb.into(),
            group: group.into(),
            resource: resource.into(),
        }
    }
}

pub(super) fn self_subject_access_review(denied: &[Denied], r: &Req) -> Response<Body> {
    if r.method != Method::POST {
        return error(&ApiError::method_not_allowed(r.method.as_str()));
    }
    let review: Value = match serde_json::from_slice(&r.body) {
        Ok(v) => v,
        Err(e) => return error(&ApiError::bad_request(format!("invalid JSON: {e}"))),
    };
    let spec = &review["spec"];
    let attrs = &spec["resourceAttributes"];
    if !attrs.is_object() && !spec["nonResourceAttributes"].is_object() {
        return error(&ApiError::unprocessable(
            "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    let field = |name: &str| attrs[name].as_str().unwrap_or("");
    let refused = denied.iter().find(|d| {
        (d.verb == field("verb") || d.verb == "*")
            && d.group == field("group")
            && d.resource == field("resource")
    });
    let status = match refused {
        Some(_) => json!({"allowed": false, "reason": format!(
            "RBAC: the sim's user may not {} {}", field("verb"), field("resource")
        )}),
        None => {
            json!({"allowed": true, "reason": "the sim has no RBAC: everything else is allowed"})
        }
    };
    respond(
        201,
        &json!({
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": status,
        }),
    )
}
