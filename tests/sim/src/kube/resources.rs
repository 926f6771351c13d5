//! The resource types the fake serves, with the facts discovery and the handlers need.

/// Which names an object of a type may have (kube-apiserver's validation differs per type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// Services: `[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63.
    Dns1035Label,
    /// Namespaces: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63.
    Dns1123Label,
    /// Most others: dot-separated DNS-1123 labels, at most 253.
    Dns1123Subdomain,
    /// RBAC objects (`system:basic-user`): any path segment, not `.` or `..`, without `/` or
    /// `%` (apimachinery's `ValidatePathSegmentName`).
    PathSegment,
}

#[derive(Debug)]
pub struct Resource {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    /// Has a `/status` subresource: main writes keep `.status`, status writes keep the rest.
    pub status: bool,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub name_rule: NameRule,
    /// DELETE answers with the object (true) or with a `Status` of Success (false).
    pub returns_deleted_object: bool,
    /// metadata.generation is kept and bumped when anything but metadata/status changes.
    pub generation: bool,
    /// A custom resource (served from a CRD): list items keep kind/apiVersion.
    pub custom: bool,
    /// Maps that are atomic for server-side apply (`+mapType=atomic`), as field paths.
    pub atomic_maps: &'static [&'static [&'static str]],
}

impl Resource {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `services` or `clusterversions.config.openshift.io`, as in error messages.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }
}

const ALL: &[&str] = &["all"];

pub const NAMESPACES: usize = 0;
pub const SERVICES: usize = 1;
pub const ENDPOINTS: usize = 2;
pub const ENDPOINTSLICES: usize = 4;
/// Pods of the simulated control-plane nodes (see `kubelet`).
pub const PODS: usize = 8;
/// Events of the simulated load-balancer controllers (see `events`).
pub const EVENTS: usize = 9;
/// Deployments (the AWS Load Balancer Controller's, see `aws_controller`).
pub const DEPLOYMENTS: usize = 10;
/// `rbac.authorization.k8s.io/v1`, which the authorizer reads (see `rbac`).
pub const CLUSTER_ROLES: usize = 11;
pub const CLUSTER_ROLE_BINDINGS: usize = 12;
pub const ROLES: usize = 13;
pub const ROLE_BINDINGS: usize = 14;
/// Nodes: a real cloud controller manager's hosts, and the simulated GCE node sync's trigger
/// (see `lb::node_sync`).
pub const NODES: usize = 20;

/// What a type has unless its entry in [`RESOURCES`] says otherwise: namespaced core/v1,
/// DNS-1123 subdomain names, no `/status`, no generation, DELETE answers with a `Status`.
const DEFAULTS: Resource = Resource {
    group: "",
    version: "v1",
    plural: "",
    singular: "",
    kind: "",
    namespaced: true,
    status: false,
    short_names: &[],
    categories: &[],
    name_rule: NameRule::Dns1123Subdomain,
    returns_deleted_object: false,
    generation: false,
    custom: false,
    atomic_maps: &[],
};

/// OpenShift's cluster-scoped config API, served from CRDs.
const OPENSHIFT_CONFIG: Resource = Resource {
    group: "config.openshift.io",
    namespaced: false,
    status: true,
    returns_deleted_object: true,
    generation: true,
    custom: true,
    ..DEFAULTS
};

/// A custom resource with a `/status` (as OLM's and the aws-load-balancer-operator's CRDs
/// declare), served from a CRD vendored whole (see `schema`).
const CUSTOM: Resource = Resource {
    status: true,
    returns_deleted_object: true,
    generation: true,
    custom: true,
    ..DEFAULTS
};

/// `rbac.authorization.k8s.io/v1`: no status, DELETE answers with a `Status`.
const RBAC: Resource = Resource {
    group: "rbac.authorization.k8s.io",
    name_rule: NameRule::PathSegment,
    ..DEFAULTS
};

pub static RESOURCES: &[Resource] = &[
    Resource {
        plural: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        namespaced: false,
        status: true,
        short_names: &["ns"],
        name_rule: NameRule::Dns1123Label,
        returns_deleted_object: true,
        ..DEFAULTS
    },
    Resource {
        plural: "services",
        singular: "service",
        kind: "Service",
        status: true,
        short_names: &["svc"],
        categories: ALL,
        name_rule: NameRule::Dns1035Label,
        returns_deleted_object: true,
        generation: true,
        atomic_maps: &[&["spec", "selector"]],
        ..DEFAULTS
    },
    Resource {
        plural: "endpoints",
        singular: "endpoints",
        kind: "Endpoints",
        short_names: &["ep"],
        ..DEFAULTS
    },
    Resource {
        plural: "configmaps",
        singular: "configmap",
        kind: "ConfigMap",
        short_names: &["cm"],
        ..DEFAULTS
    },
    Resource {
        group: "discovery.k8s.io",
        plural: "endpointslices",
        singular: "endpointslice",
        kind: "EndpointSlice",
        generation: true,
        ..DEFAULTS
    },
    Resource {
        plural: "clusterversions",
        singular: "clusterversion",
        kind: "ClusterVersion",
        ..OPENSHIFT_CONFIG
    },
    Resource {
        plural: "infrastructures",
        singular: "infrastructure",
        kind: "Infrastructure",
        ..OPENSHIFT_CONFIG
    },
    Resource {
        group: "apiextensions.k8s.io",
        plural: "customresourcedefinitions",
        singular: "customresourcedefinition",
        kind: "CustomResourceDefinition",
        namespaced: false,
        status: true,
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        returns_deleted_object: true,
        generation: true,
        ..DEFAULTS
    },
    Resource {
        plural: "pods",
        singular: "pod",
        kind: "Pod",
        status: true,
        short_names: &["po"],
        categories: ALL,
        returns_deleted_object: true,
        ..DEFAULTS
    },
    Resource {
        plural: "events",
        singular: "event",
        kind: "Event",
        short_names: &["ev"],
        ..DEFAULTS
    },
    Resource {
        group: "apps",
        plural: "deployments",
        singular: "deployment",
        kind: "Deployment",
        status: true,
        short_names: &["deploy"],
        categories: ALL,
        returns_deleted_object: true,
        generation: true,
        ..DEFAULTS
    },
    Resource {
        plural: "clusterroles",
        singular: "clusterrole",
        kind: "ClusterRole",
        namespaced: false,
        ..RBAC
    },
    Resource {
        plural: "clusterrolebindings",
        singular: "clusterrolebinding",
        kind: "ClusterRoleBinding",
        namespaced: false,
        ..RBAC
    },
    Resource {
        plural: "roles",
        singular: "role",
        kind: "Role",
        ..RBAC
    },
    Resource {
        plural: "rolebindings",
        singular: "rolebinding",
        kind: "RoleBinding",
        ..RBAC
    },
    // What `bootstrap-agent manifests aws-load-balancer-controller` writes (OLM, and the
    // operator's own API): names and scope as their CRDs in tests/fixtures/crds say.
    Resource {
        group: "operators.coreos.com",
        plural: "operatorgroups",
        singular: "operatorgroup",
        kind: "OperatorGroup",
        short_names: &["og"],
        categories: &["olm"],
        ..CUSTOM
    },
    Resource {
        group: "operators.coreos.com",
        version: "v1alpha1",
        plural: "subscriptions",
        singular: "subscription",
        kind: "Subscription",
        short_names: &["sub", "subs"],
        categories: &["olm"],
        ..CUSTOM
    },
    Resource {
        group: "networking.olm.openshift.io",
        plural: "awsloadbalancercontrollers",
        singular: "awsloadbalancercontroller",
        kind: "AWSLoadBalancerController",
        namespaced: false,
        ..CUSTOM
    },
    // Where the installer keeps the cloud's credentials (kube-system aws-creds, ...), which a
    // day-2 command reads from an admin's machine.
    Resource {
        plural: "secrets",
        singular: "secret",
        kind: "Secret",
        ..DEFAULTS
    },
    // The cluster's DNS config (the zones), from openshift/api's CRD (`schema`).
    Resource {
        plural: "dnses",
        singular: "dns",
        kind: "DNS",
        ..OPENSHIFT_CONFIG
    },
    // The cluster's Nodes, for a real cloud controller manager (`bootstrap-sim real-ccm`):
    // its service controller takes them as backends, its node lifecycle controller checks
    // their instances in the cloud. The simulated GCE service controller syncs every load
    // balancer when one comes or goes (`lb::node_sync`).
    Resource {
        plural: "nodes",
        singular: "node",
        kind: "Node",
        namespaced: false,
        status: true,
        short_names: &["no"],
        returns_deleted_object: true,
        ..DEFAULTS
    },
    // The day-2 change's Lease (one admin at a time).
    Resource {
        group: "coordination.k8s.io",
        plural: "leases",
        singular: "lease",
        kind: "Lease",
        ..DEFAULTS
    },
];

pub fn find(group: &str, version: &str, plural: &str) -> Option<usize> {
    RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The API groups other than core, in discovery order.
pub fn groups() -> Vec<&'static str> {
    let mut out: Vec<&str> = Vec::new();
    for r in RESOURCES.iter().filter(|r| !r.group.is_empty()) {
        if !out.contains(&r.group) {
            out.push(r.group);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_constants_name_their_resources() {
        for (idx, plural) in [
            (NAMESPACES, "namespaces"),
            (SERVICES, "services"),
            (ENDPOINTS, "endpoints"),
            (ENDPOINTSLICES, "endpointslices"),
            (PODS, "pods"),
            (EVENTS, "events"),
            (DEPLOYMENTS, "deployments"),
            (CLUSTER_ROLES, "clusterroles"),
            (CLUSTER_ROLE_BINDINGS, "clusterrolebindings"),
            (ROLES, "roles"),
            (ROLE_BINDINGS, "rolebindings"),
            (NODES, "nodes"),
        ] {
            assert_eq!(RESOURCES[idx].plural, plural);
        }
    }

    /// Discovery lists each type once (two Node entries once came in with two merges).
    #[test]
    fn every_resource_type_is_served_once() {
        for (i, r) in RESOURCES.iter().enumerate() {
            assert_eq!(
                find(r.group, r.version, r.plural),
                Some(i),
                "{} is listed twice",
                r.qualified()
            );
        }
    }
}
