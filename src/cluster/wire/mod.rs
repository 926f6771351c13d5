//! Proof on the wire: before the bootstrap IP leaves DNS, the path a client will take must
//! work, not only the API's word that the Services are ready. For each load-balancer IP DNS
//! keeps: a TCP connection to port 6443, a TLS handshake that verifies the API server's
//! certificate with the cluster CA from the kubeconfig (for the name the kubeconfig's server
//! uses), and `GET /readyz` answering `200 ok`; for an IP that serves the machine-config
//! server, a TCP connection to 22623 and a completed TLS handshake (its certificate is signed
//! by the installer's root CA, which the kubeconfig does not carry, so its chain is not
//! verified). `/readyz` needs no credentials: kube-apiserver lets anyone read it
//! (`system:public-info-viewer`), so none are sent.
//!
//! Dial overrides redirect a dial (`IP:PORT` or `*:PORT`) to another address: for tests on
//! loopback and for networks where a NAT sits between the bootstrap host and the load
//! balancer. They change only where the connection goes, never what is verified.

use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

mod any_certificate;
mod backend;
mod retry;
use any_certificate::AnyCertificate;
pub use backend::prove_ip;
use bootstrap_cloud::AddressProvider;
pub use retry::{ProofRetry, jitter};

pub const API_PORT: u16 = 6443;
pub const MCS_PORT: u16 = 22623;

/// Each connection, handshake and answer gets this long.
const STEP_TIMEOUT: Duration = Duration::from_secs(3);

/// Where a dial goes instead: `IP:PORT=HOST:PORT` or `*:PORT=HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialOverride {
    /// None: any IP on `port`.
    pub ip: Option<IpAddr>,
    pub port: u16,
    pub to: SocketAddr,
}

impl DialOverride {
    /// Handed to clap in place of a malformed value, which the one pass then refuses.
    pub const STAND_IN: Self = Self {
        ip: None,
        port: 0,
        to: SocketAddr::V4(std::net::SocketAddrV4::new(
            std::net::Ipv4Addr::UNSPECIFIED,
            0,
        )),
    };

    pub fn parse(text: &str) -> Result<Self, String> {
        let expected = "expected IP:PORT=HOST:PORT or *:PORT=HOST:PORT (IPv6 in brackets)";
        let (from, to) = text.split_once('=').ok_or(expected)?;
        let to: SocketAddr = to.parse().map_err(|_| format!("{to:?}: {expected}"))?;
        let (ip, port) = from.rsplit_once(':').ok_or(expected)?;
        let port: u16 = port.parse().map_err(|_| format!("{port:?}: {expected}"))?;
        let ip = match ip {
            "*" => None,
            ip => Some(
                ip.trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse()
                    .map_err(|_| format!("{ip:?}: {expected}"))?,
            ),
        };
        Ok(Self { ip, port, to })
    }
}

/// `run`'s settings of the proof.
#[derive(Debug, Clone, clap::Args)]
pub struct WireArgs {
    /// Before the bootstrap IP leaves DNS (and, progressive, before an IP joins), dial every
    /// load-balancer IP DNS keeps: TLS to 6443 verified with the kubeconfig's CA and
    /// GET /readyz == ok, a TLS handshake on 22623 where it serves the machine-config server.
    /// `off` for networks where the bootstrap host cannot reach the load balancers.
    #[arg(long, env = "BOOTSTRAP_AGENT_WIRE_PROOF", default_value = "on",
          value_parser = crate::options::words(&["on", "off"]))]
    pub wire_proof: String,
    /// Dial another address instead: `IP:PORT=HOST:PORT` or `*:PORT=HOST:PORT` (a NAT between
    /// the bootstrap host and the load balancer; tests on loopback). Only where the connection
    /// goes changes, never what is verified. Repeatable.
    #[arg(long = "wire-dial-override", env = "BOOTSTRAP_AGENT_WIRE_DIAL_OVERRIDES", value_delimiter = ',',
          value_parser = crate::options::checked(DialOverride::parse, DialOverride::STAND_IN))]
    pub wire_dial_overrides: Vec<DialOverride>,
}

impl WireArgs {
    /// The proof from the kubeconfig (None: off). A kubeconfig without a usable CA or server
    /// is bad input.
    pub async fn proof(&self, kubeconfig: &Path) -> Result<Option<WireProof>> {
        if self.wire_proof == "off" {
            return Ok(None);
        }
        WireProof::from_kubeconfig(kubeconfig, self.wire_dial_overrides.clone())
            .await
            .map(Some)
            .map_err(|e| {
                crate::error::InputError::new(
                    kubeconfig,
                    "certificate-authority / server (for --wire-proof)",
                    crate::error::render_chain(&e),
                )
                .into()
            })
    }
}

/// What the proof needs: the cluster's CA and the name its certificate must carry.
#[derive(Clone)]
pub struct WireProof {
    roots: Arc<rustls::RootCertStore>,
    server_name: rustls::pki_types::ServerName<'static>,
    overrides: Vec<DialOverride>,
}

/// One IP's outcome.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IpProof {
    pub ip: IpAddr,
    pub ok: bool,
    /// What was proven, or what failed.
    pub reason: String,
}

impl WireProof {
    /// From the kubeconfig: its CA (`certificate-authority-data` or `certificate-authority`)
    /// and the host of its server URL (the name the API certificate is checked against).
    pub async fn from_kubeconfig(kubeconfig: &Path, overrides: Vec<DialOverride>) -> Result<Self> {
        let kc = super::read_kubeconfig(kubeconfig)?;
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .with_context(|| format!("kubeconfig {} is not usable", kubeconfig.display()))?;
        let mut roots = rustls::RootCertStore::empty();
        for der in config.root_cert.iter().flatten() {
            roots
                .add(rustls::pki_types::CertificateDer::from(der.clone()))
                .context("the kubeconfig's certificate authority is not a usable certificate")?;
        }
        if roots.is_empty() {
            bail!(
                "kubeconfig {} has no certificate authority: the API certificate cannot be verified on the wire (--wire-proof off skips the proof)",
                kubeconfig.display()
            );
        }
        let host = config
            .tls_server_name
            .clone()
            .or_else(|| config.cluster_url.host().map(str::to_string))
            .context("the kubeconfig's server URL has no host")?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let server_name = rustls::pki_types::ServerName::try_from(host)
            .context("the kubeconfig's server host is not a valid TLS name")?;
        Ok(Self {
            roots: Arc::new(roots),
            server_name,
            overrides,
        })
    }

    fn target(&self, ip: IpAddr, port: u16) -> SocketAddr {
        self.overrides
            .iter()
            .find(|o| o.port == port && o.ip == Some(ip))
            .or_else(|| {
                self.overrides
                    .iter()
                    .find(|o| o.port == port && o.ip.is_none())
            })
            .map_or(SocketAddr::new(ip, port), |o| o.to)
    }

    /// Proves one IP: the API on 6443, and the machine-config server on 22623 when `mcs`.
    pub async fn prove(&self, ip: IpAddr, mcs: bool) -> IpProof {
        let this = self.clone();
        let outcome = tokio::task::spawn_blocking(move || this.prove_blocking(ip, mcs))
            .await
            .unwrap_or_else(|e| Err(anyhow::anyhow!("the proof did not finish: {e}")));
        match outcome {
            Ok(what) => IpProof {
                ip,
                ok: true,
                reason: what,
            },
            Err(e) => IpProof {
                ip,
                ok: false,
                reason: crate::error::render_chain(&e),
            },
        }
    }

    fn prove_blocking(&self, ip: IpAddr, mcs: bool) -> Result<String> {
        let verified = rustls::ClientConfig::builder()
            .with_root_certificates(self.roots.clone())
            .with_no_client_auth();
        let mut api = self.handshake(ip, API_PORT, Arc::new(verified))?;
        let host = match &self.server_name {
            rustls::pki_types::ServerName::DnsName(n) => n.as_ref().to_string(),
            rustls::pki_types::ServerName::IpAddress(ip) => IpAddr::from(*ip).to_string(),
            _ => ip.to_string(),
        };
        let request = format!(
            "GET /readyz HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {}\r\nAccept: text/plain\r\nConnection: close\r\n\r\n",
            super::USER_AGENT
        );
        api.write_all(request.as_bytes())
            .with_context(|| format!("{ip}:{API_PORT}: cannot send GET /readyz"))?;
        let mut answer = Vec::new();
        // A peer that closes without close_notify still gave us its answer.
        match api.read_to_end(&mut answer) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !answer.is_empty() => {}
            Err(e) => bail!("{ip}:{API_PORT}: no answer to GET /readyz: {e}"),
        }
        let answer = String::from_utf8_lossy(&answer);
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let status = head.lines().next().unwrap_or("");
        let body = dechunk(head, body);
        if status.split_whitespace().nth(1) != Some("200") || body.trim() != "ok" {
            bail!(
                "{ip}:{API_PORT}: GET /readyz answered {status:?} {:?}, not 200 ok",
                body.chars().take(80).collect::<String>()
            );
        }
        let mut proven = format!("{ip}:{API_PORT} TLS verified for {host}, /readyz ok");
        if mcs {
            // The MCS certificate is signed by the installer's root CA: the handshake must
            // complete, the chain is not ours to verify.
            let config = rustls::ClientConfig::builder()
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate::new()))
                .with_no_client_auth();
            self.handshake(ip, MCS_PORT, Arc::new(config))?;
            proven.push_str(&format!("; {ip}:{MCS_PORT} TLS handshake completed"));
        }
        Ok(proven)
    }

    fn handshake(
        &self,
        ip: IpAddr,
        port: u16,
        config: Arc<rustls::ClientConfig>,
    ) -> Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>> {
        let to = self.target(ip, port);
        let via = if to == SocketAddr::new(ip, port) {
            String::new()
        } else {
            format!(" (dialled as {to})")
        };
        let tcp = TcpStream::connect_timeout(&to, STEP_TIMEOUT)
            .with_context(|| format!("{ip}:{port}{via}: TCP connect failed"))?;
        tcp.set_read_timeout(Some(STEP_TIMEOUT))?;
        tcp.set_write_timeout(Some(STEP_TIMEOUT))?;
        let conn = rustls::ClientConnection::new(config, self.server_name.clone())
            .with_context(|| format!("{ip}:{port}: cannot start TLS"))?;
        let mut stream = rustls::StreamOwned::new(conn, tcp);
        while stream.conn.is_handshaking() {
            stream
                .conn
                .complete_io(&mut stream.sock)
                .with_context(|| format!("{ip}:{port}{via}: TLS handshake failed"))?;
        }
        Ok(stream)
    }
}

/// The body of a `Transfer-Encoding: chunked` answer, else the body as is.
fn dechunk(head: &str, body: &str) -> String {
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return body.to_string();
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].trim_start_matches("\r\n");
    }
    out
}

/// The IPs DNS keeps, each with whether it serves the machine-config server (a Service
/// claiming it exposes port 22623).
pub fn kept_ips(targets: &[crate::render::ServiceClaim]) -> BTreeMap<IpAddr, bool> {
    let mut ips = BTreeMap::new();
    for t in targets {
        for ip in &t.claims {
            let mcs = ips.entry(*ip).or_insert(false);
            *mcs |= t.ports.contains(&MCS_PORT);
        }
    }
    ips
}

/// Proves every IP of `ips`, one after the other (a handful); from the cloud side where
/// `cloud` says a dial from here proves nothing ([`prove_ip`]).
pub async fn prove_all(
    proof: &WireProof,
    cloud: Option<&dyn AddressProvider>,
    ips: &BTreeMap<IpAddr, bool>,
) -> Vec<IpProof> {
    let mut out = Vec::new();
    for (ip, mcs) in ips {
        out.push(prove_ip(proof, cloud, *ip, *mcs).await);
    }
    out
}

/// Progressive DNS: of the IPs the gate says are served, those that may join now: the ones
/// already joined, and the new ones the proof passes (all of them when the proof is off).
pub async fn joinable(
    proof: Option<&WireProof>,
    cloud: Option<&dyn AddressProvider>,
    targets: &[crate::render::ServiceClaim],
    served: std::collections::BTreeSet<IpAddr>,
    joined: Option<&std::collections::BTreeSet<IpAddr>>,
) -> std::collections::BTreeSet<IpAddr> {
    let Some(proof) = proof else {
        return served;
    };
    let kept = kept_ips(targets);
    let mut out = std::collections::BTreeSet::new();
    for ip in served {
        if joined.is_some_and(|j| j.contains(&ip)) {
            out.insert(ip);
            continue;
        }
        let outcome = prove_ip(proof, cloud, ip, kept.get(&ip).copied().unwrap_or(false)).await;
        if outcome.ok {
            out.insert(ip);
        } else {
            tracing::info!(%ip, reason = %outcome.reason, "served, but not on the wire yet: not joining DNS");
        }
    }
    out
}

/// Waits until every IP DNS keeps passes the proof (an IP that failed is tried again on a
/// short backoff, [`ProofRetry`]; one that passed is not tried again), up to `timeout`,
/// telling `report` each time what it found. With the proof off, says so and returns.
pub async fn hold_until_proven(
    proof: Option<&WireProof>,
    cloud: Option<&dyn AddressProvider>,
    targets: &[crate::render::ServiceClaim],
    timeout: Duration,
    mut report: impl FnMut(String),
) -> Result<()> {
    let Some(proof) = proof else {
        report(
            "off (--wire-proof off): the bootstrap IP leaves DNS on the gate's word alone".into(),
        );
        return Ok(());
    };
    let mut waiting = kept_ips(targets);
    // Each IP's last outcome; only those not passed yet are tried again.
    let mut outcomes: BTreeMap<IpAddr, IpProof> = BTreeMap::new();
    let mut retry = ProofRetry::default();
    let started = std::time::Instant::now();
    loop {
        for outcome in prove_all(proof, cloud, &waiting).await {
            if outcome.ok {
                waiting.remove(&outcome.ip);
            }
            outcomes.insert(outcome.ip, outcome);
        }
        let failed: Vec<String> = outcomes
            .values()
            .filter(|o| !o.ok)
            .map(|o| o.reason.clone())
            .collect();
        if failed.is_empty() {
            report(format!(
                "passed: {}",
                outcomes
                    .values()
                    .map(|o| o.reason.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
            return Ok(());
        }
        let reasons = failed.join("; ");
        report(format!("keeping the bootstrap IP in DNS: {reasons}"));
        if started.elapsed() >= timeout {
            return Err(WireTimeout {
                waited: Duration::from_secs(started.elapsed().as_secs()),
                reasons,
            }
            .into());
        }
        tokio::time::sleep(retry.after_failure(jitter())).await;
    }
}

/// The proof did not pass within its deadline: the bootstrap IP stays in DNS.
#[derive(Debug, thiserror::Error)]
#[error(
    "proof on the wire did not pass within {}: {reasons}; the bootstrap IP stays in DNS (`--wire-proof off` skips the proof where the bootstrap host cannot reach the load balancers)",
    humantime::format_duration(*.waited)
)]
pub struct WireTimeout {
    pub waited: Duration,
    pub reasons: String,
}

#[cfg(test)]
mod tests;
