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

pub static RESOURCES: &[Resource] = &[
    Resource {
        group: "",
        version: "v1",
        plural: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        namespaced: false,
        status: true,
        short_names: &["ns"],
        categories: &[],
        name_rule: NameRule::Dns1123Label,
        returns_deleted_object: true,
        generation: false,
        custom: false,
        atomic_maps: &[],
    },
    Resource {
        group: "",
        version: "v1",
        plural: "services",
        singular: "service",
        kind: "Service",
        namespaced: true,
        status: true,
        short_names: &["svc"],
        categories: ALL,
        name_rule: NameRule::Dns1035Label,
        returns_deleted_object: true,
        generation: true,
        custom: false,
        atomic_maps: &[&["spec", "selector"]],
    },
    Resource {
        group: "",
        version: "v1",
        plural: "endpoints",
        singular: "endpoints",
        kind: "Endpoints",
        namespaced: true,
        status: false,
        short_names: &["ep"],
        categories: &[],
        name_rule: NameRule::Dns1123Subdomain,
        returns_deleted_object: false,
        generation: false,
        custom: false,
        atomic_maps: &[],
    },
    Resource {
        group: "",
        version: "v1",
        plural: "configmaps",
        singular: "configmap",
        kind: "ConfigMap",
        namespaced: true,
        status: false,
        short_names: &["cm"],
        categories: &[],
        name_rule: NameRule::Dns1123Subdomain,
        returns_deleted_object: false,
        generation: false,
        custom: false,
        atomic_maps: &[],
    },
    Resource {
        group: "discovery.k8s.io",
        version: "v1",
        plural: "endpointslices",
        singular: "endpointslice",
        kind: "EndpointSlice",
        namespaced: true,
        status: false,
        short_names: &[],
        categories: &[],
        name_rule: NameRule::Dns1123Subdomain,
        returns_deleted_object: false,
        generation: true,
        custom: false,
        atomic_maps: &[],
    },
    Resource {
        group: "config.openshift.io",
        version: "v1",
        plural: "clusterversions",
        singular: "clusterversion",
        kind: "ClusterVersion",
        namespaced: false,
        status: true,
        short_names: &[],
        categories: &[],
        name_rule: NameRule::Dns1123Subdomain,
        returns_deleted_object: true,
        generation: true,
        custom: true,
        atomic_maps: &[],
    },
    Resource {
        group: "config.openshift.io",
        version: "v1",
        plural: "infrastructures",
        singular: "infrastructure",
        kind: "Infrastructure",
        namespaced: false,
        status: true,
        short_names: &[],
        categories: &[],
        name_rule: NameRule::Dns1123Subdomain,
        returns_deleted_object: true,
        generation: true,
        custom: true,
        atomic_maps: &[],
    },
    Resource {
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
        singular: "customresourcedefinition",
        kind: "CustomResourceDefinition",
        namespaced: false,
        status: true,
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        name_rule: NameRule::Dns1123Subdomain,
        returns_deleted_object: true,
        generation: true,
        custom: false,
        atomic_maps: &[],
    },
    Resource {
        group: "",
        version: "v1",
        plural: "pods",
        singular: "pod",
        kind: "Pod",
        namespaced: true,
        status: true,
        short_names: &["po"],
        categories: ALL,
        name_rule: NameRule::Dns1123Subdomain,
        returns_deleted_object: true,
        generation: false,
        custom: false,
        atomic_maps: &[],
    },
    Resource {
        group: "",
        version: "v1",
        plural: "events",
        singular: "event",
        kind: "Event",
        namespaced: true,
        status: false,
        short_names: &["ev"],
        categories: &[],
        name_rule: NameRule::Dns1123Subdomain,
        returns_deleted_object: false,
        generation: false,
        custom: false,
        atomic_maps: &[],
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
        ] {
            assert_eq!(RESOURCES[idx].plural, plural);
        }
    }
}
