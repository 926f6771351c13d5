//! A real kube-apiserver named by `--kubeconfig`: a small HTTPS client (the kubeconfig's
//! server, CA and bearer token; HTTP/1.1, one connection per request, JSON) for the few calls
//! the harness makes: list, watch, create (+status), delete.
//!
//! Only loopback: a kubeconfig whose server is not on 127.0.0.0/8 or ::1 is refused before
//! anything is dialled.

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// What a watch calls with each line of its stream; false ends the watch.
type OnLine<'a> = &'a mut (dyn FnMut(&[u8]) -> bool + Send);

#[derive(Clone)]
pub struct RealKube {
    kubeconfig: PathBuf,
    addr: SocketAddr,
    host: String,
    token: String,
    tls: tokio_rustls::TlsConnector,
}

/// The plural of each kind the harness creates (the server's own names).
fn plural(kind: &str) -> Result<&'static str> {
    Ok(match kind {
        "Namespace" => "namespaces",
        "Node" => "nodes",
        "Pod" => "pods",
        "ServiceAccount" => "serviceaccounts",
        "Endpoints" => "endpoints",
        "EndpointSlice" => "endpointslices",
        "CustomResourceDefinition" => "customresourcedefinitions",
        "ConfigMap" => "configmaps",
        "ClusterRole" => "clusterroles",
        "ClusterRoleBinding" => "clusterrolebindings",
        other => bail!("the harness does not create {other} objects"),
    })
}

/// `/api/v1` or `/apis/<group>/<version>`.
fn base(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

impl RealKube {
    /// Reads `kubeconfig`: its current context's server (loopback only), CA and token.
    pub fn open(kubeconfig: &Path) -> Result<Self> {
        let what = kubeconfig.display();
        let text =
            std::fs::read_to_string(kubeconfig).with_context(|| format!("cannot read {what}"))?;
        let doc: Value =
            serde_saphyr::from_str(&text).with_context(|| format!("{what}: not YAML"))?;
        let current = doc["current-context"].as_str().unwrap_or_default();
        let named = |list: &str, name: &str| -> Value {
            let items = doc[list].as_array().cloned().unwrap_or_default();
            items
                .into_iter()
                .find(|i| name.is_empty() || i["name"] == name)
                .unwrap_or(Value::Null)
        };
        let context = named("contexts", current);
        let cluster_name = context["context"]["cluster"].as_str().unwrap_or_default();
        let user_name = context["context"]["user"].as_str().unwrap_or_default();
        let cluster = &named("clusters", cluster_name)["cluster"];
        let user = &named("users", user_name)["user"];
        let server = cluster["server"]
            .as_str()
            .with_context(|| format!("{what}: clusters[].cluster.server: expected a URL"))?;
        let url = url::Url::parse(server)
            .with_context(|| format!("{what}: clusters[].cluster.server {server:?}"))?;
        if url.scheme() != "https" {
            bail!("{what}: clusters[].cluster.server: expected https://, found {server:?}");
        }
        let host = url.host_str().unwrap_or_default().to_string();
        let ip: std::net::IpAddr = host
            .trim_matches(|c| c == '[' || c == ']')
            .parse()
            .or_else(|_| {
                (host == "localhost")
                    .then_some([127, 0, 0, 1].into())
                    .ok_or(())
            })
            .map_err(|()| {
                anyhow::anyhow!("{what}: clusters[].cluster.server: expected a loopback IP")
            })?;
        if !ip.is_loopback() {
            bail!("{what}: clusters[].cluster.server {server:?}: only loopback is dialled");
        }
        let addr = SocketAddr::new(ip, url.port().unwrap_or(443));
        let token = user["token"]
            .as_str()
            .with_context(|| format!("{what}: users[].user.token: expected a bearer token"))?
            .to_string();
        let ca_pem = match cluster["certificate-authority-data"].as_str() {
            Some(data) => {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD
                    .decode(data.trim())
                    .with_context(|| format!("{what}: certificate-authority-data: not base64"))?
            }
            None => {
                let file = cluster["certificate-authority"].as_str().with_context(|| {
                    format!("{what}: clusters[].cluster: expected certificate-authority(-data)")
                })?;
                std::fs::read(file).with_context(|| format!("{what}: cannot read {file}"))?
            }
        };
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&ca_pem) {
            let cert = cert.with_context(|| format!("{what}: the CA is not PEM"))?;
            roots
                .add(cert)
                .with_context(|| format!("{what}: the CA is not a certificate"))?;
        }
        if roots.is_empty() {
            bail!("{what}: clusters[].cluster: the certificate authority holds no PEM certificate");
        }
        let config = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Self {
            kubeconfig: kubeconfig.to_path_buf(),
            addr,
            host: ip.to_string(),
            token,
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
        })
    }

    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    pub fn host_port(&self) -> String {
        self.addr.to_string()
    }

    /// One request; the response's status and body (streamed to `on_line` line by line
    /// when given: a watch).
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        mut on_line: Option<OnLine<'_>>,
    ) -> Result<(StatusCode, Bytes)> {
        let tcp = tokio::net::TcpStream::connect(self.addr)
            .await
            .with_context(|| format!("cannot connect to {}", self.addr))?;
        let name = ServerName::try_from(self.host.clone())?;
        let tls = self.tls.connect(name, tcp).await.context("TLS handshake")?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
        tokio::spawn(conn);
        let body = body
            .map(serde_json::to_vec)
            .transpose()?
            .unwrap_or_default();
        let req = Request::builder()
            .method(method.clone())
            .uri(path)
            .header("host", self.addr.to_string())
            .header("authorization", format!("Bearer {}", self.token))
            .header("accept", "application/json")
            .header("content-type", "application/json")
            .header("user-agent", "bootstrap-sim-real-ccm")
            .body(Full::new(Bytes::from(body)))?;
        let mut resp = sender
            .send_request(req)
            .await
            .with_context(|| format!("{method} {path}"))?;
        let status = resp.status();
        let mut all = Vec::new();
        let mut line = Vec::new();
        while let Some(frame) = resp.body_mut().frame().await {
            let frame = frame.with_context(|| format!("{method} {path}: body"))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            match on_line.as_mut() {
                Some(f) if status.is_success() => {
                    for b in data.iter() {
                        if *b == b'\n' {
                            if !f(&line) {
                                return Ok((status, Bytes::new()));
                            }
                            line.clear();
                        } else {
                            line.push(*b);
                        }
                    }
                }
                _ => all.extend_from_slice(&data),
            }
        }
        Ok((status, Bytes::from(all)))
    }

    /// A call whose answer must be a success; its body as JSON.
    pub async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Value> {
        let (status, bytes) = self.send(method.clone(), path, body, None).await?;
        if !status.is_success() {
            bail!(
                "{method} {path}: {status}: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
        serde_json::from_slice(&bytes).with_context(|| format!("{method} {path}: not JSON"))
    }

    pub async fn list(&self, group: &str, version: &str, plural: &str) -> Result<Vec<Value>> {
        let list = self
            .call(
                Method::GET,
                &format!("{}/{plural}", base(group, version)),
                None,
            )
            .await?;
        Ok(list["items"].as_array().cloned().unwrap_or_default())
    }

    /// Every change of objects of a type from now on, as `(event type, object)`: a watch from
    /// a list's resourceVersion, again from the last one seen when the server ends it (gone:
    /// listed again, each object sent as `ADDED`).
    pub async fn events(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<UnboundedReceiver<(String, Value)>> {
        let path = format!("{}/{plural}", base(group, version));
        let version_of = |l: &Value| l["metadata"]["resourceVersion"].as_str().map(String::from);
        let listed = self.call(Method::GET, &path, None).await?;
        let mut rv = version_of(&listed).unwrap_or_default();
        let (tx, rx) = unbounded_channel();
        let kube = self.clone();
        tokio::spawn(async move {
            loop {
                let watch = format!("{path}?watch=true&resourceVersion={rv}");
                let mut gone = false;
                let mut on_line = |line: &[u8]| {
                    let Ok(event) = serde_json::from_slice::<Value>(line) else {
                        return true;
                    };
                    let kind = event["type"].as_str().unwrap_or_default().to_string();
                    if kind == "ERROR" {
                        gone = true;
                        return false;
                    }
                    if let Some(v) = event["object"]["metadata"]["resourceVersion"].as_str() {
                        rv = v.to_string();
                    }
                    tx.send((kind, event["object"].clone())).is_ok()
                };
                let ended = kube.send(Method::GET, &watch, None, Some(&mut on_line));
                let Ok((status, _)) = ended.await else { return };
                if tx.is_closed() {
                    return;
                }
                if gone || !status.is_success() {
                    let Ok(list) = kube.call(Method::GET, &path, None).await else {
                        return;
                    };
                    rv = version_of(&list).unwrap_or_default();
                    for item in list["items"].as_array().into_iter().flatten() {
                        if tx.send(("ADDED".into(), item.clone())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Ok(rx)
    }

    /// Every change of objects of a type from now on, as the objects after the change.
    pub async fn changes(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<UnboundedReceiver<Value>> {
        let mut events = self.events(group, version, plural).await?;
        let (tx, rx) = unbounded_channel();
        tokio::spawn(async move {
            while let Some((_, obj)) = events.recv().await {
                if tx.send(obj).is_err() {
                    return;
                }
            }
        });
        Ok(rx)
    }

    /// The collection path `obj` is created in.
    fn collection(obj: &Value) -> Result<String> {
        let api_version = obj["apiVersion"].as_str().unwrap_or("v1");
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let kind = obj["kind"].as_str().unwrap_or_default();
        let plural = plural(kind)?;
        Ok(match obj["metadata"]["namespace"].as_str() {
            Some(ns) => format!("{}/namespaces/{ns}/{plural}", base(group, version)),
            None => format!("{}/{plural}", base(group, version)),
        })
    }

    /// Creates `obj`, then writes its status (the status subresource; what the kubelet or a
    /// controller would write). One that exists already is left as it is.
    pub async fn create(&self, obj: Value) -> Result<()> {
        let path = Self::collection(&obj)?;
        let (status, bytes) = self.send(Method::POST, &path, Some(&obj), None).await?;
        if status == StatusCode::CONFLICT {
            return Ok(());
        }
        if !status.is_success() {
            bail!("POST {path}: {status}: {}", String::from_utf8_lossy(&bytes));
        }
        let created: Value = serde_json::from_slice(&bytes).context("POST: not JSON")?;
        let has_status = obj["status"].as_object().is_some_and(|s| !s.is_empty());
        if has_status && obj["kind"] != "Namespace" && obj["kind"] != "CustomResourceDefinition" {
            let name = created["metadata"]["name"].as_str().unwrap_or_default();
            let mut with_status = created.clone();
            with_status["status"] = obj["status"].clone();
            self.call(
                Method::PUT,
                &format!("{path}/{name}/status"),
                Some(&with_status),
            )
            .await?;
        }
        Ok(())
    }

    pub async fn delete(&self, path: &str) -> Result<()> {
        let (status, bytes) = self.send(Method::DELETE, path, None, None).await?;
        if !status.is_success() && status != StatusCode::NOT_FOUND {
            bail!(
                "DELETE {path}: {status}: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
        Ok(())
    }

    /// GET `path`: None when it is not there.
    pub async fn get(&self, path: &str) -> Result<Option<Value>> {
        let (status, bytes) = self.send(Method::GET, path, None, None).await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            bail!("GET {path}: {status}: {}", String::from_utf8_lossy(&bytes));
        }
        Ok(Some(serde_json::from_slice(&bytes).context("not JSON")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::{KubeSim, KubeSimOptions};
    use serde_json::json;

    fn node(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
               "spec": {"providerID": format!("gce://p/z/{name}")},
               "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.9"}]}})
    }

    /// The client the harness uses against a real kube-apiserver, pointed at the local API
    /// server's kubeconfig: the same HTTPS, token and JSON.
    #[tokio::test(flavor = "multi_thread")]
    async fn creates_with_status_lists_and_watches_through_the_kubeconfig() {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let sim = KubeSim::start(KubeSimOptions::default()).await.unwrap();
        let kube = RealKube::open(sim.kubeconfig_path()).unwrap();
        assert_eq!(kube.host_port(), sim.url().trim_start_matches("https://"));
        let mut events = kube.events("", "v1", "nodes").await.unwrap();
        kube.create(node("master-9")).await.unwrap();
        // A second create of the same object is left as it is (409).
        kube.create(node("master-9")).await.unwrap();
        let stored = sim.get("", "v1", "nodes", None, "master-9").unwrap();
        assert_eq!(stored["status"]["addresses"][0]["address"], "10.0.0.9");
        let listed = kube.list("", "v1", "nodes").await.unwrap();
        assert!(listed.iter().any(|n| n["metadata"]["name"] == "master-9"));
        let (kind, obj) = events.recv().await.unwrap();
        assert_eq!(
            (kind.as_str(), &obj["metadata"]["name"]),
            ("ADDED", &json!("master-9"))
        );
        kube.delete("/api/v1/nodes/master-9").await.unwrap();
        let mut last = String::new();
        while last != "DELETED" {
            last = events.recv().await.unwrap().0;
        }
        assert_eq!(kube.get("/api/v1/nodes/master-9").await.unwrap(), None);
        let err = kube.create(json!({"kind": "Secret"})).await.unwrap_err();
        assert!(err.to_string().contains("does not create Secret"), "{err}");
    }

    #[test]
    fn a_kubeconfig_off_loopback_or_without_a_token_is_refused_before_any_dial() {
        let dir = tempfile::tempdir().unwrap();
        let write = |server: &str, user: &str| {
            let path = dir.path().join("kubeconfig");
            std::fs::write(
                &path,
                format!(
                    "clusters:\n- name: c\n  cluster:\n    server: {server}\n    \
                     certificate-authority-data: AAAA\nusers:\n- name: u\n  user: {user}\n\
                     contexts:\n- name: x\n  context: {{cluster: c, user: u}}\n\
                     current-context: x\n"
                ),
            )
            .unwrap();
            path
        };
        let err = |p: &Path| format!("{:#}", RealKube::open(p).err().unwrap());
        let off = write("https://10.1.2.3:6443", "{token: t}");
        assert!(err(&off).contains("only loopback"), "{}", err(&off));
        let plain = write("http://127.0.0.1:6443", "{token: t}");
        assert!(err(&plain).contains("expected https://"), "{}", err(&plain));
        let no_token = write("https://127.0.0.1:6443", "{}");
        assert!(
            err(&no_token).contains("users[].user.token"),
            "{}",
            err(&no_token)
        );
        let no_ca = write("https://127.0.0.1:6443", "{token: t}");
        assert!(
            err(&no_ca).contains("no PEM certificate"),
            "{}",
            err(&no_ca)
        );
    }
}
