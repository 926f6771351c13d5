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

/// A TLS server on loopback answering every request with `200 ok` (kube-apiserver's `/readyz`
/// answer), with the certificate of `server`: a stand-in for a load balancer in front of an
/// API server, for clients that prove the path on the wire. Runs until the runtime ends.
pub async fn serve_readyz(server: Arc<ServerConfig>) -> Result<std::net::SocketAddr> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let acceptor = tokio_rustls::TlsAcceptor::from(server);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut buf = [0u8; 4096];
                let _ = tls.read(&mut buf).await;
                let _ = tls
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                    .await;
                let _ = tls.shutdown().await;
            });
        }
    });
    Ok(addr)
}
