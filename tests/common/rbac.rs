//! The agent's kube client as a user holding exactly a ClusterRole (the one
//! `bootstrap-agent permissions --kube` prints, or that less one verb): the local API server
//! enforces RBAC (`bootstrap_sim::kube`'s `rbac`), so what the role lacks is refused with
//! kube-apiserver's 403.

use bootstrap_cloud::permissions::Command;
use bootstrap_sim::kube::{KubeSimOptions, User};
use serde_json::{Value, json};

/// The user the agent's kubeconfig holds the token of.
pub const AGENT: &str = "bootstrap-agent";

/// What `bootstrap-agent permissions --kube --command <commands>` prints (the same function).
pub fn printed_role(commands: &[Command]) -> Value {
    bootstrap_agent::permissions::kube_cluster_role(commands)
}

/// `options` with the kubeconfig's user [`AGENT`], bound (ClusterRoleBinding) to `role`.
pub fn as_agent_holding(options: &mut KubeSimOptions, role: &Value) {
    options.user = Some(User::new(AGENT, &[]));
    options.objects.extend(bound(role));
}

/// `role` and a ClusterRoleBinding of it to the user [`AGENT`], as an admin applies them.
pub fn bound(role: &Value) -> Vec<Value> {
    let name = role["metadata"]["name"].clone();
    vec![
        role.clone(),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": AGENT}],
        }),
    ]
}

/// One grant of a role: (API group, resource, verb).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub group: String,
    pub resource: String,
    pub verb: String,
}

impl std::fmt::Display for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:?}/{}", self.verb, self.group, self.resource)
    }
}

impl Grant {
    /// What kube-apiserver's refusal of it says: `cannot <verb> resource "<resource>" in API
    /// group "<group>"`.
    pub fn refusal(&self) -> String {
        format!(
            "cannot {} resource {:?} in API group {:?}",
            self.verb, self.resource, self.group
        )
    }
}

/// Every (group, resource, verb) `role` grants, in rule order.
pub fn grants(role: &Value) -> Vec<Grant> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let mut out = Vec::new();
    for rule in role["rules"].as_array().unwrap() {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    out.push(Grant {
                        group: group.clone(),
                        resource: resource.clone(),
                        verb,
                    });
                }
            }
        }
    }
    out
}

/// `role` less `grant` (the verb taken out of its rule; a rule left without one goes; a rule
/// of several resources is split so the others keep the verb).
pub fn without(role: &Value, grant: &Grant) -> Value {
    let mut role = role.clone();
    let mut rules = Vec::new();
    for rule in role["rules"].as_array().unwrap() {
        let in_group = rule["apiGroups"]
            .as_array()
            .unwrap()
            .contains(&json!(grant.group));
        let resources = rule["resources"].as_array().unwrap();
        if !in_group || !resources.contains(&json!(grant.resource)) {
            rules.push(rule.clone());
            continue;
        }
        let others: Vec<Value> = resources
            .iter()
            .filter(|r| **r != json!(grant.resource))
            .cloned()
            .collect();
        if !others.is_empty() {
            let mut kept = rule.clone();
            kept["resources"] = json!(others);
            rules.push(kept);
        }
        let mut less = rule.clone();
        less["resources"] = json!([grant.resource]);
        let verbs = less["verbs"].as_array_mut().unwrap();
        verbs.retain(|v| *v != json!(grant.verb));
        if !verbs.is_empty() {
            rules.push(less);
        }
    }
    role["rules"] = json!(rules);
    role
}
