#![allow(clippy::unwrap_used)]

use super::*;
use crate::kube::request_info::attrs as req;
use crate::kube::resources::RESOURCES;
use crate::kube::store::Store;
use hyper::Method;

fn store(objects: Vec<Value>) -> Store {
    let store = Store::new(RESOURCES.len(), 100);
    {
        let mut inner = store.lock();
        for o in bootstrap_policy().into_iter().chain(objects) {
            let kind = o["kind"].as_str().unwrap();
            let res = RESOURCES.iter().position(|r| r.kind == kind).unwrap();
            let ns = o["metadata"]["namespace"].as_str().unwrap_or("");
            let name = o["metadata"]["name"].as_str().unwrap();
            inner.put(Key::new(res, ns, name), o.clone());
        }
    }
    store
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name}, "rules": rules})
}

fn binding(kind: &str, ns: &str, name: &str, role_kind: &str, subjects: Value) -> Value {
    let mut b = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
           "metadata": {"name": name},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
           "subjects": subjects});
    if !ns.is_empty() {
        b["metadata"]["namespace"] = json!(ns);
    }
    b
}

fn allowed(store: &Store, user: &User, a: &Attributes) -> bool {
    authorize(&store.lock(), user, a).is_ok()
}

#[test]
fn a_cluster_role_binding_grants_its_rules_everywhere_and_nothing_else() {
    let s = store(vec![
        cluster_role(
            "agent",
            json!([{"apiGroups": [""], "resources": ["services"], "verbs": ["get", "patch"]},
                   {"apiGroups": ["config.openshift.io"], "resources": ["clusterversions"],
                    "verbs": ["watch"], "resourceNames": ["version"]}]),
        ),
        binding(
            "ClusterRoleBinding",
            "",
            "agent",
            "ClusterRole",
            json!([{"kind": "User", "name": "agent"}]),
        ),
    ]);
    let agent = User::new("agent", &[]);
    let other = User::new("someone", &[]);
    let get = req(Method::GET, "/api/v1/namespaces/a/services/x", &[]);
    assert!(allowed(&s, &agent, &get));
    assert!(!allowed(&s, &other, &get), "bound to the user only");
    assert!(allowed(
        &s,
        &agent,
        &req(Method::PATCH, "/api/v1/namespaces/b/services/x", &[])
    ));
    for refused in [
        req(Method::DELETE, "/api/v1/namespaces/a/services/x", &[]),
        req(Method::GET, "/api/v1/namespaces/a/services", &[]),
        // A subresource is its own resource: `services` does not grant `services/status`.
        req(Method::PATCH, "/api/v1/namespaces/a/services/x/status", &[]),
        req(Method::GET, "/api/v1/namespaces/a/configmaps/x", &[]),
        // resourceNames: the watch of `version` only.
        req(
            Method::GET,
            "/apis/config.openshift.io/v1/clusterversions",
            &[("watch", "true")],
        ),
    ] {
        assert!(!allowed(&s, &agent, &refused), "{refused:?}");
    }
    assert!(allowed(
        &s,
        &agent,
        &req(
            Method::GET,
            "/apis/config.openshift.io/v1/clusterversions",
            &[
                ("watch", "true"),
                ("fieldSelector", "metadata.name=version")
            ]
        )
    ));
    // system:masters is never refused; every authenticated user may discover and review.
    assert!(allowed(
        &s,
        &User::admin(),
        &req(Method::DELETE, "/api/v1/namespaces/x", &[])
    ));
    assert!(allowed(&s, &other, &req(Method::GET, "/apis", &[])));
    assert!(allowed(
        &s,
        &other,
        &req(
            Method::POST,
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            &[]
        )
    ));
    assert!(!allowed(&s, &other, &req(Method::GET, "/metrics", &[])));
}

#[test]
fn a_role_binding_grants_in_its_namespace_only() {
    let mut role = cluster_role(
        "reader",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]},
               {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["get"]}]),
    );
    role["kind"] = json!("Role");
    role["metadata"]["namespace"] = json!("kube-system");
    let s = store(vec![
        role,
        binding(
            "RoleBinding",
            "kube-system",
            "reader",
            "Role",
            json!([{"kind": "Group", "name": "agents"},
                   {"kind": "ServiceAccount", "name": "sa"}]),
        ),
    ]);
    let member = User::new("x", &["agents"]);
    let sa = User::new("system:serviceaccount:kube-system:sa", &[]);
    let cm = req(
        Method::PUT,
        "/api/v1/namespaces/kube-system/configmaps/c",
        &[],
    );
    assert!(allowed(&s, &member, &cm));
    assert!(allowed(&s, &sa, &cm));
    assert!(!allowed(&s, &User::new("y", &[]), &cm));
    assert!(!allowed(
        &s,
        &member,
        &req(Method::PUT, "/api/v1/namespaces/default/configmaps/c", &[])
    ));
    assert!(allowed(
        &s,
        &member,
        &req(
            Method::GET,
            "/apis/apps/v1/namespaces/kube-system/deployments/d/status",
            &[]
        )
    ));
    assert!(!allowed(
        &s,
        &member,
        &req(
            Method::GET,
            "/apis/apps/v1/namespaces/kube-system/deployments/d",
            &[]
        )
    ));
}

#[test]
fn a_binding_to_a_missing_role_is_the_refusals_reason() {
    let s = store(vec![binding(
        "ClusterRoleBinding",
        "",
        "gone",
        "ClusterRole",
        json!([{"kind": "User", "name": "agent"}]),
    )]);
    let a = req(Method::GET, "/api/v1/namespaces/a/services/x", &[]);
    let reason = authorize(&s.lock(), &User::new("agent", &[]), &a).unwrap_err();
    assert_eq!(
        reason,
        "RBAC: [clusterrole.rbac.authorization.k8s.io \"gone\" not found]"
    );
    let why = authorize(
        &s.lock(),
        &User::new("agent", &[]),
        &req(Method::GET, "/api", &[]),
    )
    .unwrap();
    assert!(why.contains("system:discovery"), "{why}");
}
