//! What a request asks, as kube-apiserver's authorizer sees it: its `RequestInfo`
//! (k8s.io/apiserver pkg/endpoints/request/requestinfo.go) turned into the authorizer's
//! attributes (endpoints/filters/authorization.go), and the refusal the authorization filter
//! writes (endpoints/handlers/responsewriters/errors.go `forbiddenMessage`, apimachinery's
//! `NewForbidden`).

use super::http::is_true;
use super::status::ApiError;
use hyper::Method;

/// The authorizer's attributes of one request (or of a SelfSubjectAccessReview's spec).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// get, list, watch, create, update, patch, delete, deletecollection; for a path outside
    /// the resource API, the method in lower case.
    pub verb: String,
    /// Whether this is a resource request (`/api/v1/...` or `/apis/<g>/<v>/...`).
    pub resource_request: bool,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    /// The path of a non-resource request.
    pub path: String,
}

/// Subresources of a namespace (`/api/v1/namespaces/<ns>/status`), not resources in it.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

impl Attributes {
    /// requestinfo.go's `NewRequestInfo`: `/api/<v>/...` and `/apis/<g>/<v>/...` with at least
    /// a resource are resource requests (namespace, resource, name, subresource from the
    /// parts; GET/DELETE without a name are list/deletecollection, a list with `watch` is a
    /// watch, and a `metadata.name=` field selector names the object of a list or watch);
    /// every other path is a non-resource request.
    pub fn of_request(method: &Method, path: &str, query: &[(String, String)]) -> Self {
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let non_resource = || Attributes {
            verb: method.as_str().to_ascii_lowercase(),
            path: path.to_string(),
            ..Default::default()
        };
        let (group, rest) = match parts.as_slice() {
            ["api", _version, rest @ ..] if !rest.is_empty() => ("", rest),
            ["apis", group, _version, rest @ ..] if !rest.is_empty() => (*group, rest),
            _ => return non_resource(),
        };
        let verb = match *method {
            Method::POST => "create",
            Method::GET | Method::HEAD => "get",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE => "delete",
            _ => "",
        };
        let mut a = Attributes {
            verb: verb.to_string(),
            resource_request: true,
            group: group.to_string(),
            ..Default::default()
        };
        let mut rest = rest;
        if rest[0] == "namespaces" && rest.len() > 1 {
            a.namespace = rest[1].to_string();
            if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
                rest = &rest[2..];
            }
        }
        a.resource = rest[0].to_string();
        if let Some(name) = rest.get(1) {
            a.name = name.to_string();
        }
        if let Some(sub) = rest.get(2) {
            a.subresource = sub.to_string();
        }
        let q = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        if a.name.is_empty() && a.verb == "get" {
            a.verb = if q("watch").is_some_and(is_true) {
                "watch".into()
            } else {
                "list".into()
            };
            if let Some(name) = q("fieldSelector").and_then(exact_name) {
                a.name = name.to_string();
            }
        }
        if a.name.is_empty() && a.verb == "delete" {
            a.verb = "deletecollection".into();
        }
        a
    }

    /// The 403 the authorization filter writes: `<what> is forbidden: User "<user>" cannot
    /// <verb> resource "<resource>[/<sub>]" in API group "<group>" in the namespace "<ns>"`
    /// (`at the cluster scope` without one; `cannot <verb> path "<path>"` outside the
    /// resource API), then `: <reason>` when the authorizer gave one.
    pub fn forbidden(&self, user: &str, reason: &str) -> ApiError {
        let mut why = if !self.resource_request {
            format!("User {user:?} cannot {} path {:?}", self.verb, self.path)
        } else {
            let resource = if self.subresource.is_empty() {
                self.resource.clone()
            } else {
                format!("{}/{}", self.resource, self.subresource)
            };
            let scope = if self.namespace.is_empty() {
                "at the cluster scope".to_string()
            } else {
                format!("in the namespace {:?}", self.namespace)
            };
            format!(
                "User {user:?} cannot {} resource {resource:?} in API group {:?} {scope}",
                self.verb, self.group
            )
        };
        if !reason.is_empty() {
            why = format!("{why}: {reason}");
        }
        ApiError::forbidden_by(&self.group, &self.resource, &self.name, &why)
    }
}

/// `metadata.name=<n>` (or `==`) among the selector's terms: `fields.Selector.RequiresExactMatch`.
fn exact_name(selector: &str) -> Option<&str> {
    selector.split(',').find_map(|term| {
        let value = term
            .strip_prefix("metadata.name==")
            .or_else(|| term.strip_prefix("metadata.name="))?;
        (!value.is_empty() && !value.contains('/') && value != "." && value != "..")
            .then_some(value)
    })
}

/// A request's attributes as a test writes the request.
#[cfg(test)]
pub(crate) fn attrs(method: Method, path: &str, query: &[(&str, &str)]) -> Attributes {
    let query: Vec<(String, String)> = query
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Attributes::of_request(&method, path, &query)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn short(a: &Attributes) -> String {
        format!(
            "{} {}|{}|{}|{}|{}",
            a.verb, a.group, a.resource, a.subresource, a.namespace, a.name
        )
    }

    #[test]
    fn requests_resolve_to_kube_apiservers_attributes() {
        for (method, path, query, want) in [
            (
                Method::GET,
                "/api/v1/namespaces/ns/services/a",
                &[][..],
                "get |services||ns|a",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/ns/services",
                &[],
                "list |services||ns|",
            ),
            (
                Method::GET,
                "/api/v1/services",
                &[("watch", "true")][..],
                "watch |services|||",
            ),
            (
                Method::GET,
                "/apis/config.openshift.io/v1/clusterversions",
                &[("watch", "1"), ("fieldSelector", "metadata.name=version")],
                "watch config.openshift.io|clusterversions|||version",
            ),
            (
                Method::POST,
                "/api/v1/namespaces",
                &[],
                "create |namespaces|||",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/x",
                &[],
                "get |namespaces||x|x",
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/x/status",
                &[],
                "update |namespaces|status|x|x",
            ),
            (
                Method::PATCH,
                "/api/v1/namespaces/ns/services/a/status",
                &[],
                "patch |services|status|ns|a",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/ns/configmaps",
                &[],
                "deletecollection |configmaps||ns|",
            ),
            (
                Method::DELETE,
                "/apis/apps/v1/namespaces/ns/deployments/d",
                &[],
                "delete apps|deployments||ns|d",
            ),
        ] {
            let a = attrs(method, path, query);
            assert!(a.resource_request, "{path}");
            assert_eq!(short(&a), want, "{path} {query:?}");
        }
        for path in [
            "/api",
            "/api/v1",
            "/apis",
            "/apis/apps/v1",
            "/version",
            "/healthz",
        ] {
            let a = attrs(Method::GET, path, &[]);
            assert!(!a.resource_request, "{path}");
            assert_eq!((a.verb.as_str(), a.path.as_str()), ("get", path));
        }
    }

    #[test]
    fn the_refusal_is_kube_apiservers_status() {
        let a = attrs(
            Method::PATCH,
            "/api/v1/namespaces/ns/services/a/status",
            &[],
        );
        let status = a.forbidden("agent", "").to_status();
        assert_eq!(status["code"], 403);
        assert_eq!(status["reason"], "Forbidden");
        assert_eq!(
            status["message"],
            "services \"a\" is forbidden: User \"agent\" cannot patch resource \"services/status\" in API group \"\" in the namespace \"ns\""
        );
        assert_eq!(
            status["details"],
            serde_json::json!({"name": "a", "kind": "services"})
        );
        let a = attrs(
            Method::GET,
            "/apis/config.openshift.io/v1/clusterversions",
            &[],
        );
        let status = a.forbidden("agent", "RBAC: x").to_status();
        assert_eq!(
            status["message"],
            "clusterversions.config.openshift.io is forbidden: User \"agent\" cannot list resource \"clusterversions\" in API group \"config.openshift.io\" at the cluster scope: RBAC: x"
        );
        let a = attrs(Method::GET, "/apis", &[]);
        assert_eq!(
            a.forbidden("agent", "").message,
            "forbidden: User \"agent\" cannot get path \"/apis\""
        );
    }
}
