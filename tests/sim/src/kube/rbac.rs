//! RBAC, as kube-apiserver's authorizer chain decides (kubernetes/kubernetes
//! plugin/pkg/auth/authorizer/rbac/rbac.go, pkg/apis/rbac/v1/evaluation_helpers.go,
//! pkg/registry/rbac/validation/rule.go `VisitRulesFor`/`appliesTo`): the privileged group
//! `system:masters` may do everything (kubeapiserver/authorizer's privileged-groups
//! authorizer); anyone else may do what a rule of a role bound to them allows. The
//! ClusterRoleBindings apply everywhere, the RoleBindings of the request's namespace there
//! (their roleRef a ClusterRole, or a Role of that namespace). A rule matches when its
//! apiGroups, resources (`*`, `<res>/<sub>`, `*/<sub>`), verbs (`*`) and resourceNames (none:
//! any) match, or, for a path outside the resource API, its nonResourceURLs (`*` suffix).
//!
//! The roles and bindings are the `rbac.authorization.k8s.io/v1` objects of the store, served
//! and stored like the others, so a test grants through the API or the sim's `objects` what
//! an admin would `kubectl apply`. At start the store holds the bootstrap policy every
//! authenticated user gets (bootstrappolicy/policy.go): `system:discovery`,
//! `system:basic-user` (SelfSubjectAccessReview, SelfSubjectRulesReview create) and
//! `system:public-info-viewer`, bound to `system:authenticated`, and `cluster-admin` bound to
//! `system:masters`.
//!
//! Simplified: no aggregated ClusterRoles (`aggregationRule`), no escalation check on role
//! writes (the sim's users that write roles are `system:masters`), no impersonation.

use super::request_info::Attributes;
use super::resources::{CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES};
use super::store::{Inner, Key};
use serde_json::{Value, json};

/// The group every authenticated user is in (the authenticator adds it).
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group RBAC never refuses.
pub const MASTERS: &str = "system:masters";

/// Who a request is from (kube-apiserver's `user.Info`): the bearer token's user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub name: String,
    /// Its groups, without `system:authenticated` (always added).
    pub groups: Vec<String>,
}

impl User {
    pub fn new(name: &str, groups: &[&str]) -> Self {
        Self {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    /// `system:admin` in `system:masters`: allowed everything (the sim's default user).
    pub fn admin() -> Self {
        Self::new("system:admin", &[MASTERS])
    }

    fn in_group(&self, group: &str) -> bool {
        group == AUTHENTICATED || self.groups.iter().any(|g| g == group)
    }
}

/// The decision: Ok(why it is allowed), or Err(the reason RBAC gives with its refusal: ""
/// unless a binding names a role that does not exist).
pub fn authorize(inner: &Inner, user: &User, a: &Attributes) -> Result<String, String> {
    if user.in_group(MASTERS) {
        return Ok(String::new());
    }
    let mut errors: Vec<String> = Vec::new();
    let mut bindings: Vec<(&str, Value)> = inner
        .list(CLUSTER_ROLE_BINDINGS, None)
        .into_iter()
        .map(|(_, b)| ("ClusterRoleBinding", (*b).clone()))
        .collect();
    if !a.namespace.is_empty() {
        bindings.extend(
            inner
                .list(ROLE_BINDINGS, Some(&a.namespace))
                .into_iter()
                .map(|(_, b)| ("RoleBinding", (*b).clone())),
        );
    }
    for (binding_kind, binding) in &bindings {
        let binding_ns = binding["metadata"]["namespace"].as_str().unwrap_or("");
        let Some(subject) = binding["subjects"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| applies_to(s, user, binding_ns))
        else {
            continue;
        };
        let role_kind = binding["roleRef"]["kind"].as_str().unwrap_or("");
        let role_name = binding["roleRef"]["name"].as_str().unwrap_or("");
        let role = match role_kind {
            "ClusterRole" => inner.get(&Key::new(CLUSTER_ROLES, "", role_name)),
            "Role" if !binding_ns.is_empty() => inner.get(&Key::new(ROLES, binding_ns, role_name)),
            _ => None,
        };
        let Some(role) = role else {
            let what = if role_kind == "Role" {
                "role"
            } else {
                "clusterrole"
            };
            errors.push(format!(
                "{what}.rbac.authorization.k8s.io {role_name:?} not found"
            ));
            continue;
        };
        if role["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| rule_allows(r, a))
        {
            let binding_name = binding["metadata"]["name"].as_str().unwrap_or("");
            let at = if binding_ns.is_empty() {
                String::new()
            } else {
                format!(" in {binding_ns:?}")
            };
            return Ok(format!(
                "RBAC: allowed by {binding_kind} {binding_name:?} of {role_kind} {role_name:?} to {} {:?}{at}",
                subject["kind"].as_str().unwrap_or(""),
                subject["name"].as_str().unwrap_or("")
            ));
        }
    }
    Err(if errors.is_empty() {
        String::new()
    } else {
        format!("RBAC: [{}]", errors.join(", "))
    })
}

/// rule.go `appliesToUser`: a User by name, a Group the user is in, a ServiceAccount by its
/// user name (`system:serviceaccount:<ns>:<name>`, the binding's namespace when unset).
fn applies_to(subject: &Value, user: &User, binding_ns: &str) -> bool {
    let name = subject["name"].as_str().unwrap_or("");
    match subject["kind"].as_str().unwrap_or("") {
        "User" => name == user.name,
        "Group" => user.in_group(name),
        "ServiceAccount" => {
            let ns = subject["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .unwrap_or(binding_ns);
            user.name == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// rbac.go `RuleAllows` with evaluation_helpers.go's matchers.
pub fn rule_allows(rule: &Value, a: &Attributes) -> bool {
    let verbs = strings(&rule["verbs"]);
    if !verbs.iter().any(|v| *v == "*" || *v == a.verb) {
        return false;
    }
    if !a.resource_request {
        return strings(&rule["nonResourceURLs"]).iter().any(|u| {
            *u == "*"
                || *u == a.path
                || u.strip_suffix('*')
                    .is_some_and(|prefix| a.path.starts_with(prefix))
        });
    }
    let combined = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    let groups = strings(&rule["apiGroups"]);
    let resources = strings(&rule["resources"]);
    let names = strings(&rule["resourceNames"]);
    groups.iter().any(|g| *g == "*" || *g == a.group)
        && resources.iter().any(|r| {
            *r == "*"
                || *r == combined
                || (!a.subresource.is_empty()
                    && r.strip_prefix("*/") == Some(a.subresource.as_str()))
        })
        && (names.is_empty() || names.contains(&a.name.as_str()))
}

/// The bootstrap policy's roles and bindings that every cluster has (bootstrappolicy/policy.go,
/// the part a client of this sim meets).
pub fn bootstrap_policy() -> Vec<Value> {
    let role = |name: &str, rules: Value| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": name,
                            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
               "rules": rules})
    };
    let binding = |name: &str, groups: &[&str]| {
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}))
            .collect();
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": name,
                            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": name},
               "subjects": subjects})
    };
    let public = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    let mut discovery = vec![
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
        "/openapi",
        "/openapi/*",
    ];
    discovery.extend(public);
    vec![
        role(
            "cluster-admin",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                   {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        ),
        binding("cluster-admin", &[MASTERS]),
        role(
            "system:discovery",
            json!([{"nonResourceURLs": discovery, "verbs": ["get"]}]),
        ),
        binding("system:discovery", &[AUTHENTICATED]),
        role(
            "system:basic-user",
            json!([{"apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"]},
                   {"apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"], "verbs": ["create"]}]),
        ),
        binding("system:basic-user", &[AUTHENTICATED]),
        role(
            "system:public-info-viewer",
            json!([{"nonResourceURLs": public, "verbs": ["get"]}]),
        ),
        binding(
            "system:public-info-viewer",
            &[AUTHENTICATED, "system:unauthenticated"],
        ),
    ]
}

#[cfg(test)]
#[path = "rbac_tests.rs"]
mod tests;
