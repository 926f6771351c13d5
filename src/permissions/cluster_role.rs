//! The Kubernetes ClusterRole the agent's cluster calls need (`permissions --kube`), per
//! command. Proven against the local API server, which enforces RBAC as kube-apiserver does
//! (tests/operating_kube.rs: each command succeeds holding exactly its role, and fails with
//! the API server's refusal holding it less any one verb).

use bootstrap_cloud::permissions::Command;
use serde_json::{Value, json};

/// One rule: API group, resources, verbs, and the commands that need them.
struct KubeRule {
    group: &'static str,
    resources: &'static [&'static str],
    verbs: &'static [&'static str],
    commands: &'static [Command],
    /// `resourceNames`: the rule holds for these objects only (none: every object).
    names: &'static [&'static str],
}

const RUN: &[Command] = &[Command::Run];
const PUBLISH: &[Command] = &[Command::Publish];

/// The cluster calls, read from the code:
/// - `cluster::apply`: namespaces get/create; Services get, server-side apply = patch, and
///   create (kube-apiserver's patch handler authorizes `create` for an apply that creates);
///   delete for a template with the `release.openshift.io/delete` annotation.
/// - `cluster::gate::watch`: Services, Endpoints, EndpointSlices list/watch.
/// - `cluster`: the ConfigMap kube-system/bootstrap-agent get, apply (patch, create).
/// - `capabilities::cluster_version`: ClusterVersion get, apply (patch, and create when it
///   creates `version` from cvo-overrides.yaml), list/watch while it waits for the CVO to
///   create `version` (no cvo-overrides.yaml).
/// - `preflight::kube_checks` and `cluster::lb_controller` (AWS): the controller's CRD get,
///   its Deployment get, and Deployment and EndpointSlices list/watch until it serves.
/// - `runner::services` (`teardown --all`): our Services get, delete, and list/watch (by name)
///   until gone (their controllers' finalizers hold them until the load balancer is deleted).
///   `apply-services` (`run`, `publish`): a Service whose load balancer never changes its
///   addresses (AWS) is read (get), deleted and watched until gone before it is applied anew.
/// - `publish`: as `run`'s apply and gate for the external Service (its namespace exists:
///   get), its deletion with `--auto-delete` (else the admin's, watched through get), and
///   the scope keys applied to the ConfigMap `run` made (get, patch).
///
/// - `day2` (`publish` from an admin's machine, without an asset dir): ConfigMaps get
///   (kube-system cluster-config-v1, the install-config; bootstrap-agent, what `run` left),
///   Infrastructure and DNS `cluster` get, the cloud's creds Secret in kube-system get (by
///   name: aws-creds, gcp-credentials, azure-credentials), and the change's Lease get, create
///   and update (taken, renewed, released by clearing its holder).
///
/// Preflight's SelfSubjectAccessReviews need no rule: kube-apiserver's bootstrap policy binds
/// `system:basic-user`, which holds them, to every authenticated user (OpenShift too).
const KUBE: &[KubeRule] = &[
    KubeRule {
        group: "",
        resources: &["namespaces"],
        verbs: &["get", "create"],
        commands: RUN,
        names: &[],
    },
    KubeRule {
        group: "",
        resources: &["services"],
        verbs: &["get", "list", "watch", "create", "patch", "delete"],
        commands: RUN,
        names: &[],
    },
    KubeRule {
        group: "",
        resources: &["services"],
        verbs: &["get", "list", "watch", "delete"],
        commands: &[Command::TeardownAll],
        names: &[],
    },
    KubeRule {
        group: "",
        resources: &["namespaces"],
        verbs: &["get"],
        commands: PUBLISH,
        names: &[],
    },
    KubeRule {
        group: "",
        resources: &["services"],
        verbs: &["get", "list", "watch", "create", "patch", "delete"],
        commands: PUBLISH,
        names: &[],
    },
    KubeRule {
        group: "",
        resources: &["endpoints"],
        verbs: &["list", "watch"],
        commands: PUBLISH,
        names: &[],
    },
    KubeRule {
        group: "discovery.k8s.io",
        resources: &["endpointslices"],
        verbs: &["list", "watch"],
        commands: PUBLISH,
        names: &[],
    },
    KubeRule {
        group: "",
        resources: &["configmaps"],
        verbs: &["get", "patch"],
        commands: PUBLISH,
        names: &[],
    },
    KubeRule {
        group: "config.openshift.io",
        resources: &["infrastructures", "dnses"],
        verbs: &["get"],
        commands: PUBLISH,
        names: &["cluster"],
    },
    KubeRule {
        group: "",
        resources: &["secrets"],
        verbs: &["get"],
        commands: PUBLISH,
        names: &["aws-creds", "gcp-credentials", "azure-credentials"],
    },
    KubeRule {
        group: "coordination.k8s.io",
        resources: &["leases"],
        verbs: &["get", "create", "update"],
        commands: PUBLISH,
        names: &[],
    },
    KubeRule {
        group: "",
        resources: &["endpoints"],
        verbs: &["list", "watch"],
        commands: RUN,
        names: &[],
    },
    KubeRule {
        group: "discovery.k8s.io",
        resources: &["endpointslices"],
        verbs: &["list", "watch"],
        commands: RUN,
        names: &[],
    },
    KubeRule {
        group: "",
        resources: &["configmaps"],
        verbs: &["get", "create", "patch"],
        commands: RUN,
        names: &[],
    },
    KubeRule {
        group: "config.openshift.io",
        resources: &["clusterversions"],
        verbs: &["get", "list", "watch", "create", "patch"],
        commands: &[Command::Run, Command::CapabilitiesApply],
        names: &[],
    },
    KubeRule {
        group: "apiextensions.k8s.io",
        resources: &["customresourcedefinitions"],
        verbs: &["get"],
        commands: RUN,
        names: &[],
    },
    KubeRule {
        group: "apps",
        resources: &["deployments"],
        verbs: &["get", "list", "watch"],
        commands: RUN,
        names: &[],
    },
];

/// The order verbs are printed in.
const VERB_ORDER: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];

/// PURE: the ClusterRole for `commands`: one rule per (group, resources), its verbs the union
/// of those the commands need.
pub fn kube_cluster_role(commands: &[Command]) -> Value {
    type Rule<'a> = (&'a str, &'a [&'a str], &'a [&'a str], Vec<&'a str>);
    let mut rules: Vec<Rule<'_>> = Vec::new();
    for r in KUBE
        .iter()
        .filter(|r| r.commands.iter().any(|c| commands.contains(c)))
    {
        match rules
            .iter_mut()
            .find(|(g, res, names, _)| *g == r.group && *res == r.resources && *names == r.names)
        {
            Some((_, _, _, verbs)) => {
                for v in r.verbs {
                    if !verbs.contains(v) {
                        verbs.push(v);
                    }
                }
            }
            None => rules.push((r.group, r.resources, r.names, r.verbs.to_vec())),
        }
    }
    let rules: Vec<Value> = rules
        .into_iter()
        .map(|(group, resources, names, mut verbs)| {
            verbs.sort_by_key(|v| VERB_ORDER.iter().position(|o| o == v));
            let mut rule = json!({"apiGroups": [group], "resources": resources, "verbs": verbs});
            if !names.is_empty() {
                rule["resourceNames"] = json!(names);
            }
            rule
        })
        .collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "bootstrap-agent"},
        "rules": rules,
    })
}
