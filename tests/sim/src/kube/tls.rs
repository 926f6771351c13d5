//! A throwaway PKI: a self-signed CA and a server certificate for 127.0.0.1, ::1 and localhost
//! (plus the in-cluster `kubernetes.default.svc` names), and the kubeconfig that trusts it.

use crate::pki;
use anyhow::{Context, Result};
use base64::Engine;
use std::path::{Path, PathBuf};

pub use crate::pki::Pki;

pub const SERVER_NAMES: &[&str] = &[
    "127.0.0.1",
    "::1",
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
];

pub fn generate() -> Result<Pki> {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    pki::generate("kube-sim-ca", "kube-apiserver", SERVER_NAMES)
}

/// Writes `<dir>/kubeconfig`: one cluster with certificate-authority-data, one user with a
/// bearer token, one context (namespace default) that is current.
pub fn write_kubeconfig(dir: &Path, url: &str, ca_pem: &str, token: &str) -> Result<PathBuf> {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let text = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kube-sim
  cluster:
    server: {url}
    certificate-authority-data: {ca}
users:
- name: kube-sim-admin
  user:
    token: {token}
contexts:
- name: kube-sim
  context:
    cluster: kube-sim
    user: kube-sim-admin
    namespace: default
current-context: kube-sim
preferences: {{}}
"
    );
    let path = dir.join("kubeconfig");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}
