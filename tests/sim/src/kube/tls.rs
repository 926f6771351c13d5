//! A throwaway PKI: a self-signed CA and a server certificate for 127.0.0.1, ::1 and localhost
//! (plus the in-cluster `kubernetes.default.svc` names), and the kubeconfig that trusts it.

use anyhow::{Context, Result};
use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Pki {
    pub ca_pem: String,
    pub server: Arc<ServerConfig>,
}

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
    let ca_key = KeyPair::generate().context("CA key")?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).context("CA params")?;
    ca.distinguished_name
        .push(DnType::CommonName, "kube-sim-ca");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).context("CA cert")?;
    let issuer = Issuer::new(ca, ca_key);

    let key = KeyPair::generate().context("server key")?;
    let names: Vec<String> = SERVER_NAMES.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(names).context("server params")?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    let cert = params.signed_by(&key, &issuer).context("server cert")?;

    let chain = vec![
        cert.der().clone(),
        CertificateDer::from(ca_cert.der().to_vec()),
    ];
    let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let mut server = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .context("rustls server config")?;
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Pki {
        ca_pem: ca_cert.pem(),
        server: Arc::new(server),
    })
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
