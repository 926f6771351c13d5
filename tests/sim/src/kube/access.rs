//! `authorization.k8s.io/v1` SelfSubjectAccessReview (create only, as kube-apiserver serves
//! it): the answer for the token's user, from the same RBAC that authorizes its requests (see
//! `rbac`), with the reason RBAC gives (pkg/registry/authorization/selfsubjectaccessreview).
//! A review without `spec.resourceAttributes` or `spec.nonResourceAttributes` is refused with
//! 422, as kube-apiserver's validation refuses it.

use super::http::{Body, Req, error, respond};
use super::rbac::{self, User};
use super::request_info::Attributes;
use super::status::ApiError;
use super::store::Inner;
use hyper::{Method, Response};
use serde_json::{Value, json};

pub(super) fn self_subject_access_review(inner: &Inner, user: &User, r: &Req) -> Response<Body> {
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
    let field = |v: &Value, name: &str| v[name].as_str().unwrap_or("").to_string();
    let attributes = if attrs.is_object() {
        Attributes {
            verb: field(attrs, "verb"),
            resource_request: true,
            group: field(attrs, "group"),
            resource: field(attrs, "resource"),
            subresource: field(attrs, "subresource"),
            namespace: field(attrs, "namespace"),
            name: field(attrs, "name"),
            path: String::new(),
        }
    } else {
        let non = &spec["nonResourceAttributes"];
        Attributes {
            verb: field(non, "verb"),
            path: field(non, "path"),
            ..Default::default()
        }
    };
    let status = match rbac::authorize(inner, user, &attributes) {
        Ok(reason) if reason.is_empty() => json!({"allowed": true}),
        Ok(reason) => json!({"allowed": true, "reason": reason}),
        Err(reason) if reason.is_empty() => json!({"allowed": false}),
        Err(reason) => json!({"allowed": false, "reason": reason}),
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
