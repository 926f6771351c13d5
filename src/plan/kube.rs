//! PURE: the Kubernetes half of `run` as changes, planned like the cloud's, so `plan` shows
//! every step `run` has left. The caller reads the capability registry and renders the
//! templates (I/O); the planner turns what it wants into changes. Both are server-side
//! applies of the whole wanted state: one that finds it in place writes nothing, which is why
//! they are planned without observing the cluster.

use super::{Change, Value};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What the Kubernetes stages want.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeWants {
    /// None: not known to this command (no capability registry at hand).
    pub capabilities: Option<Capabilities>,
    pub services: Vec<WantedService>,
    /// `teardown --all`: the rendered Services the cluster holds now carrying our labels
    /// (`render::is_ours`), as looked up; None: the cluster was not asked (`plan`), so every
    /// rendered Service is planned for deletion, if it exists and is ours.
    pub ours_live: Option<Vec<LiveService>>,
    /// `apply-services`: our Services the cluster holds now, with the addresses their load
    /// balancers were built with; None: the cluster was not asked (`plan` without
    /// `--kubeconfig`), so no replacement can be planned.
    pub live_addresses: Option<Vec<LiveService>>,
    /// `namespace/name` of the Services a replacement was started for and not finished (the
    /// journal's): one that is gone now is waited for and applied, never skipped.
    pub replacing: BTreeSet<String>,
}

/// A Service of ours as the cluster holds it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveService {
    pub namespace: String,
    pub name: String,
    /// The uid the lookup saw: the deletion is conditional on it, so a Service re-created
    /// meanwhile (by someone else) is never deleted.
    pub uid: String,
    /// Deleted already (a deletion timestamp): its controller holds it by its finalizer until
    /// the load balancer is gone.
    #[serde(default)]
    pub deleting: bool,
    /// Its address annotations, those the load balancer never changes once built (see
    /// [`WantedService::addresses`]).
    #[serde(default)]
    pub addresses: BTreeMap<String, String>,
}

/// One Service `teardown --all` deletes: ours (rendered from our templates, carrying our
/// labels), so that its load balancer lets go of the reserved addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoomedService {
    pub namespace: String,
    pub name: String,
    /// `services/<cloud>/<file>`.
    pub template: String,
    /// None in a plan made without asking the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Deleted already (a resume): not deleted again, only waited out until its controller,
    /// once the load balancer is gone, lets go of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleting: bool,
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
    /// The annotations that fix its load balancer's addresses and that the controller never
    /// changes on an existing one (AWS Load Balancer Controller: subnets, private IPs, EIP
    /// allocations), as rendered: other values than the live Service's mean a replacement.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub addresses: BTreeMap<String, String>,
}

impl WantedService {
    pub fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
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

/// `teardown --all`, first: delete each Service we render that the cluster holds with our
/// labels (every one we render, when the cluster was not asked), so that the load balancers
/// let go of the reserved addresses before they are released; one deleted already is only
/// waited out. A template that deletes its Service (`release.openshift.io/delete`) has nothing
/// to tear down.
pub(super) fn delete_services(wants: &KubeWants) -> Vec<Change> {
    wants
        .services
        .iter()
        .filter(|s| !s.delete)
        .filter_map(|s| {
            let (uid, deleting) = match &wants.ours_live {
                None => (None, false),
                Some(live) => {
                    let found = live
                        .iter()
                        .find(|l| l.namespace == s.namespace && l.name == s.name)?;
                    (Some(found.uid.clone()), found.deleting)
                }
            };
            Some(Change::DeleteService {
                service: DoomedService {
                    namespace: s.namespace.clone(),
                    name: s.name.clone(),
                    template: s.template.clone(),
                    uid,
                    deleting,
                },
            })
        })
        .collect()
}

/// Each Service applied, or replaced where its load balancer would keep other addresses
/// than it now claims (the AWS Load Balancer Controller never changes the addresses of an
/// existing NLB: it compares subnets only).
pub(super) fn apply_services(wants: &KubeWants) -> Vec<Change> {
    wants
        .services
        .iter()
        .map(|s| match replacement(wants, s) {
            Some((uid, deleting, changed)) => Change::ReplaceService {
                service: s.clone(),
                uid,
                deleting,
                changed,
            },
            None => Change::ApplyService { service: s.clone() },
        })
        .collect()
}

/// Of [`apply_services`], the replacements only.
pub fn replacements(wants: &KubeWants) -> Vec<Change> {
    apply_services(wants)
        .into_iter()
        .filter(|c| matches!(c, Change::ReplaceService { .. }))
        .collect()
}

/// Why `service` must be deleted and applied anew: the live Service's uid (None: gone
/// already, its replacement interrupted), whether it is being deleted already, and the
/// address annotations that differ. None: an apply does.
fn replacement(
    wants: &KubeWants,
    service: &WantedService,
) -> Option<(Option<String>, bool, Vec<String>)> {
    if service.delete || service.addresses.is_empty() {
        return None;
    }
    let interrupted = wants.replacing.contains(&service.id());
    let live = wants
        .live_addresses
        .as_ref()?
        .iter()
        .find(|l| l.namespace == service.namespace && l.name == service.name);
    let Some(live) = live else {
        return interrupted.then(|| (None, false, Vec::new()));
    };
    let keys: BTreeSet<&String> = live
        .addresses
        .keys()
        .chain(service.addresses.keys())
        .collect();
    let changed: Vec<String> = keys
        .into_iter()
        .filter(|k| live.addresses.get(*k) != service.addresses.get(*k))
        .cloned()
        .collect();
    (live.deleting || !changed.is_empty()).then(|| (Some(live.uid.clone()), live.deleting, changed))
}

#[cfg(test)]
#[path = "kube_tests.rs"]
mod tests;
