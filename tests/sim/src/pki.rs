//! A throwaway PKI for the sim's HTTPS listeners: a self-signed CA and a server certificate it
//! signs, as a rustls server config (ALPN http/1.1) plus the CA PEM for the client to trust.

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;

pub struct Pki {
    pub ca_pem: String,
    pub server: Arc<ServerConfig>,
}

/// A CA named `ca_name` and a server certificate named `server_name` for `names` (DNS names
/// and IP addresses). Needs a rustls crypto provider installed.
pub fn generate(ca_name: &str, server_name: &str, names: &[&str]) -> Result<Pki> {
    let ca_key = KeyPair::generate().context("CA key")?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).context("CA params")?;
    ca.distinguished_name.push(DnType::CommonName, ca_name);
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).context("CA cert")?;
    let issuer = Issuer::new(ca, ca_key);

    let key = KeyPair::generate().context("server key")?;
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(names).context("server params")?;
    params
        .distinguished_name
        .push(DnType::CommonName, server_name);
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
