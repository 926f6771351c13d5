//! The API server a harness run uses: the local one (in process) or a real kube-apiserver
//! (`--kubeconfig`). The harness reads and writes either only through these calls.

use super::real_kube::RealKube;
use crate::kube::KubeSim;
use anyhow::Result;
use serde_json::Value;
use std::path::Path;
use tokio::sync::mpsc::UnboundedReceiver;

pub enum Kube {
    Local(KubeSim),
    Real(RealKube),
}

impl Kube {
    /// `local`, as the report says.
    pub fn kind(&self) -> &'static str {
        match self {
            Kube::Local(_) => "local",
            Kube::Real(_) => "kubeconfig",
        }
    }

    /// The kubeconfig the agent and the CCM use.
    pub fn kubeconfig_path(&self) -> &Path {
        match self {
            Kube::Local(k) => k.kubeconfig_path(),
            Kube::Real(k) => k.kubeconfig_path(),
        }
    }

    /// `host:port` of the API server (a loopback address): where the agent's proof on the
    /// wire dials in place of each load-balancer IP.
    pub fn host_port(&self) -> String {
        match self {
            Kube::Local(k) => k.url().trim_start_matches("https://").to_string(),
            Kube::Real(k) => k.host_port(),
        }
    }

    /// The objects of a type (`group` "" for core) in every namespace.
    pub async fn list(&self, group: &str, version: &str, plural: &str) -> Result<Vec<Value>> {
        match self {
            Kube::Local(k) => Ok(k.list(group, version, plural, None)),
            Kube::Real(k) => k.list(group, version, plural).await,
        }
    }

    /// Every change of objects of a type from now on, as the objects after the change.
    pub async fn changes(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<UnboundedReceiver<Value>> {
        match self {
            Kube::Local(k) => k
                .changes(group, version, plural)
                .ok_or_else(|| anyhow::anyhow!("the local API server serves no {plural}")),
            Kube::Real(k) => k.changes(group, version, plural).await,
        }
    }

    /// Creates `obj` (its status too: the harness plays the kubelet and the controllers that
    /// would write it).
    pub async fn create(&self, obj: Value) -> Result<()> {
        match self {
            Kube::Local(k) => k.create(obj).map(drop),
            Kube::Real(k) => k.create(super::real_cluster::labelled(obj)).await,
        }
    }

    /// Removes what the harness made in a real server, and the agent's progress record
    /// (the server outlives the run); nothing for the local one, which ends with the run.
    pub async fn finish(&self) -> Result<()> {
        match self {
            Kube::Local(_) => Ok(()),
            Kube::Real(k) => super::real_cluster::finish(k).await,
        }
    }

    /// The (method, path) of each request the server saw, when it can tell.
    pub fn request_log(&self) -> Option<Vec<(String, String)>> {
        match self {
            Kube::Local(k) => Some(k.request_log()),
            Kube::Real(_) => None,
        }
    }
}
