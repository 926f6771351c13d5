//! PURE: the Kubernetes half of `run` as changes, planned like the cloud's, so `plan` shows
//! every step `run` has left. The caller reads the capability registry and renders the
//! templates (I/O); the planner turns what it wants into changes. Both are server-side
//! applies of the whole wanted state: one that finds it in place writes nothing, which is why
//! they are planned without observing the cluster.

use super::{Change, Value};
use serde::{Deserialize, Serialize};

/// What the Kubernetes stages want.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeWants {
    /// None: not known to this command (no capability registry at hand).
    pub capabilities: Option<Capabilities>,
    pub services: Vec<WantedService>,
}

/// ClusterVersion `version` `spec.capabilities`, as the install-config selects it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    pub baseline: String,
    pub additional: Vec<String>,
}

/// One LoadBalancer Service rendered from a template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WantedService {
    pub namespace: String,
    pub name: String,
    /// `services/<cloud>/<file>`.
    pub template: String,
    /// The template asks for the object's deletion (`release.openshift.io/delete: "true"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delete: bool,
    /// The reserved IPs the Service claims.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Value>,
}

pub(super) fn set_capabilities(wants: &KubeWants) -> Vec<Change> {
    wants
        .capabilities
        .iter()
        .map(|c| Change::SetCapabilities {
            capabilities: c.clone(),
        })
        .collect()
}

pub(super) fn apply_services(wants: &KubeWants) -> Vec<Change> {
    wants
        .services
        .iter()
        .map(|s| Change::ApplyService { service: s.clone() })
        .collect()
}
