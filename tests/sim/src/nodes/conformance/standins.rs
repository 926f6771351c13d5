//! The judge's stand-ins inside a node's namespace: the node's kube-apiserver (TLS on port
//! 6443, `/readyz` 200) that is up or down, and GCE's metadata server as the route scripts
//! read it.

use anyhow::{Context, Result};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub const METADATA_IP: &str = "169.254.169.254";

/// The stand-in kube-apiserver: TLS on 0.0.0.0:6443, every request answered 200 `ok`.
pub struct StandIn {
    tls: tokio_rustls::TlsAcceptor,
    task: Option<JoinHandle<()>>,
}

impl StandIn {
    pub fn new() -> Result<StandIn> {
        let pki = crate::pki::generate("judge-ca", "localhost", &["localhost", "127.0.0.1"])?;
        Ok(StandIn {
            tls: tokio_rustls::TlsAcceptor::from(pki.server),
            task: None,
        })
    }

    pub async fn up(&mut self) -> Result<()> {
        if self.task.is_some() {
            return Ok(());
        }
        // Dual stack: `localhost` is ::1 first for the watcher's check.
        let listener = match TcpListener::bind("[::]:6443").await {
            Ok(l) => l,
            Err(_) => TcpListener::bind("0.0.0.0:6443")
                .await
                .context("stand-in kube-apiserver: bind 0.0.0.0:6443")?,
        };
        let tls = self.tls.clone();
        self.task = Some(tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let tls = tls.clone();
                tokio::spawn(async move {
                    if let Ok(mut stream) = tls.accept(tcp).await {
                        answer_ok(&mut stream).await;
                    }
                });
            }
        }));
        Ok(())
    }

    /// Closes the listener: connections are refused, as while a kube-apiserver restarts.
    pub fn down(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn read_head<S: AsyncReadExt + Unpin>(stream: &mut S) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

async fn answer_ok<S: AsyncReadExt + AsyncWriteExt + Unpin>(stream: &mut S) {
    let _ = read_head(stream).await;
    let _ = stream
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        .await;
    let _ = stream.shutdown().await;
}

/// GCE's metadata server as the route scripts read it: one NIC, its forwarded IPs by index,
/// and only with `Metadata-Flavor: Google` (403 otherwise, as GCE does).
pub async fn metadata_server(forwarded: Vec<IpAddr>, reads: Arc<AtomicUsize>) -> Result<()> {
    let listener = TcpListener::bind((METADATA_IP, 80))
        .await
        .context("stand-in metadata server: bind 169.254.169.254:80")?;
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let forwarded = forwarded.clone();
            let reads = reads.clone();
            tokio::spawn(async move {
                let head = read_head(&mut tcp).await;
                let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                let flavored = head.lines().any(|l| {
                    l.to_ascii_lowercase()
                        .starts_with("metadata-flavor: google")
                });
                let prefix = "/computeMetadata/v1/instance/network-interfaces/";
                let body = match path.strip_prefix(prefix) {
                    _ if !flavored => None,
                    Some("") => Some("0/\n".to_string()),
                    Some("0/mac") => Some("42:01:0a:00:00:14".to_string()),
                    Some("0/forwarded-ips/") => {
                        reads.fetch_add(1, Ordering::SeqCst);
                        Some((0..forwarded.len()).map(|i| format!("{i}\n")).collect())
                    }
                    Some(rest) => rest
                        .strip_prefix("0/forwarded-ips/")
                        .and_then(|i| i.parse::<usize>().ok())
                        .and_then(|i| forwarded.get(i))
                        .map(|ip| ip.to_string()),
                    None => None,
                };
                let reply = match body {
                    Some(b) => format!(
                        "HTTP/1.1 200 OK\r\nMetadata-Flavor: Google\r\nContent-Type: application/text\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
                        b.len()
                    ),
                    None if !flavored => {
                        "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .into()
                    }
                    None => {
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .into()
                    }
                };
                let _ = tcp.write_all(reply.as_bytes()).await;
            });
        }
    });
    Ok(())
}
