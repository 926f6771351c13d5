//! Fidelity of the fake kube-apiserver: raw HTTPS requests for the exact wire shapes, and the
//! official Python client (tests/sim/py/kube_oracle.py) as an independent oracle.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::kube::{CloudOptions, ControllerKnobs, KubeSim, KubeSimOptions, PodSet};
use bootstrap_sim::venv;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_rustls::TlsConnector;

// ---------------------------------------------------------------- raw HTTPS client

struct Raw {
    connector: TlsConnector,
    addr: String,
    token: String,
}

impl Raw {
    fn new(sim: &KubeSim) -> Self {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(sim.ca_pem().as_bytes()).unwrap())
            .unwrap();
        let config = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Self {
            connector: TlsConnector::from(Arc::new(config)),
            addr: sim.url().trim_start_matches("https://").to_string(),
            token: sim.token().to_string(),
        }
    }

    async fn response(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &str,
        token: Option<&str>,
    ) -> hyper::Response<hyper::body::Incoming> {
        let tcp = tokio::net::TcpStream::connect(&self.addr).await.unwrap();
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let tls = self.connector.connect(name, tcp).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .unwrap();
        tokio::spawn(conn);
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.addr)
            .header("user-agent", "raw-test/1.0")
            .header("content-type", content_type);
        if let Some(t) = token.or(Some(&self.token)).filter(|t| !t.is_empty()) {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
        sender.send_request(req).await.unwrap()
    }

    async fn call(&self, method: &str, path: &str, content_type: &str, body: &str) -> (u16, Value) {
        status_and_body(self.response(method, path, content_type, body, None).await).await
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.call("GET", path, "application/json", "").await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("POST", path, "application/json", &body.to_string())
            .await
    }

    async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("PUT", path, "application/json", &body.to_string())
            .await
    }

    async fn patch(&self, path: &str, content_type: &str, body: &str) -> (u16, Value) {
        self.call("PATCH", path, content_type, body).await
    }

    async fn merge_patch(&self, path: &str, body: &str) -> (u16, Value) {
        self.patch(path, "application/merge-patch+json", body).await
    }

    /// Server-side apply of `body` to `path` as `manager` (none: the query names none).
    async fn apply(
        &self,
        path: &str,
        manager: Option<&str>,
        force: bool,
        body: &str,
    ) -> (u16, Value) {
        let mut params: Vec<String> = manager
            .map(|m| format!("fieldManager={m}"))
            .into_iter()
            .collect();
        if force {
            params.push("force=true".into());
        }
        let query = if params.is_empty() {
            String::new()
        } else {
            format!("?{}", params.join("&"))
        };
        self.patch(
            &format!("{path}{query}"),
            "application/apply-patch+yaml",
            body,
        )
        .await
    }

    async fn delete(&self, path: &str) -> (u16, Value) {
        self.call("DELETE", path, "", "").await
    }

    async fn watch(&self, path: &str) -> Watch {
        let resp = self
            .response("GET", path, "application/json", "", None)
            .await;
        assert_eq!(resp.status().as_u16(), 200, "watch {path}");
        let (tx, rx) = mpsc::unbounded_channel();
        let mut body = resp.into_body();
        tokio::spawn(async move {
            let mut buf = Vec::new();
            while let Some(Ok(frame)) = body.frame().await {
                if let Ok(data) = frame.into_data() {
                    buf.extend_from_slice(&data);
                    while let Some(i) = buf.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = buf.drain(..=i).collect();
                        let _ = tx.send(serde_json::from_slice::<Value>(&line).unwrap());
                    }
                }
            }
        });
        Watch { rx }
    }
}

/// The status code and the body: its JSON, else its text as a JSON string.
async fn status_and_body(resp: hyper::Response<hyper::body::Incoming>) -> (u16, Value) {
    let code = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let v = serde_json::from_slice(&bytes)
        .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (code, v)
}

struct Watch {
    rx: mpsc::UnboundedReceiver<Value>,
}

impl Watch {
    /// The next event; None when the server closed the stream. Panics after `secs`.
    async fn next(&mut self, secs: u64) -> Option<Value> {
        tokio::time::timeout(Duration::from_secs(secs), self.rx.recv())
            .await
            .expect("watch event in time")
    }

    /// The next non-BOOKMARK event.
    async fn event(&mut self) -> Value {
        loop {
            let e = self.next(10).await.expect("stream open");
            if e["type"] != "BOOKMARK" {
                return e;
            }
        }
    }

    /// Skips events until `pred` holds.
    async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let e = self.next(10).await.expect("stream open");
            if pred(&e) {
                return e;
            }
        }
    }

    async fn closed(&mut self, secs: u64) -> bool {
        loop {
            match tokio::time::timeout(Duration::from_secs(secs), self.rx.recv()).await {
                Ok(Some(_)) => continue,
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
    }
}

// ---------------------------------------------------------------- helpers

/// The control plane's pods, plus `app: api` pods in `default` for the Services of [`lb`].
fn pods() -> Vec<PodSet> {
    let mut sets = PodSet::openshift();
    sets.push(PodSet::new("default", "api", &[("app", "api")], &[6443]));
    sets
}

async fn sim(knobs: ControllerKnobs) -> KubeSim {
    KubeSim::start(KubeSimOptions {
        controller: knobs,
        control_plane_pods: pods(),
        ..Default::default()
    })
    .await
    .unwrap()
}

fn quick() -> ControllerKnobs {
    ControllerKnobs {
        ingress_delay: Duration::from_millis(50),
        endpoints_delay: Duration::from_millis(50),
        ..Default::default()
    }
}

/// A watch event's type and its object's name.
fn type_and_name(e: &Value) -> (&str, &str) {
    let name = e["object"]["metadata"]["name"].as_str();
    (e["type"].as_str().unwrap(), name.unwrap())
}

/// [`quick`], but the Services never get ingress or endpoints on their own.
fn never_ready() -> ControllerKnobs {
    ControllerKnobs {
        never_ready: true,
        ..quick()
    }
}

fn lb(name: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "annotations": annotations, "labels": {"app": name}},
        "spec": {"type": "LoadBalancer", "selector": {"app": "api"},
                 "ports": [{"name": "https", "port": 6443, "targetPort": 6443}]}
    })
}

/// The stored cluster-scoped `config.openshift.io/v1` object `resource/name`.
fn openshift_config(sim: &KubeSim, resource: &str, name: &str) -> Value {
    sim.get("config.openshift.io", "v1", resource, None, name)
        .unwrap()
}

/// The string at `pointer` in each item of the array `items`.
fn strings_at<'a>(items: &'a Value, pointer: &str) -> Vec<&'a str> {
    let strings = items.as_array().unwrap().iter();
    strings
        .map(|item| item.pointer(pointer).and_then(Value::as_str).unwrap())
        .collect()
}

fn rv(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn managers(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap().to_string(),
                        e["operation"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn fields_of<'a>(obj: &'a Value, manager: &str) -> &'a Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == manager)
        .map(|e| &e["fieldsV1"])
        .unwrap_or(&Value::Null)
}

async fn oracle(sim: &KubeSim, args: &[&str]) -> Value {
    let kubeconfig = sim.kubeconfig_path().to_str().unwrap().to_string();
    let args = [&["--kubeconfig", &kubeconfig][..], args].concat();
    venv::run_json("kube_oracle.py", &args).await.unwrap()
}

// ---------------------------------------------------------------- raw HTTP tests

#[tokio::test(flavor = "multi_thread")]
async fn auth_discovery_and_kubeconfig() {
    let sim = sim(quick()).await;
    let raw = Raw::new(&sim);
    for token in [Some(""), Some("wrong")] {
        let resp = raw
            .response("GET", "/api/v1/namespaces", "", "", token)
            .await;
        let (code, body) = status_and_body(resp).await;
        assert_eq!(code, 401);
        assert_eq!(
            body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
        );
    }
    let (code, version) = raw.get("/version").await;
    assert_eq!((code, version["major"].as_str()), (200, Some("1")));
    // system:public-info-viewer: /version and the health endpoints need no token.
    let resp = raw.response("GET", "/version", "", "", Some("")).await;
    let (code, version) = status_and_body(resp).await;
    assert_eq!((code, version["major"].as_str()), (200, Some("1")));
    let (_, api) = raw.get("/api").await;
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"], json!(["v1"]));
    let (_, core) = raw.get("/api/v1").await;
    assert_eq!(core["kind"], "APIResourceList");
    assert_eq!(core["groupVersion"], "v1");
    let find = |list: &Value, name: &str| {
        list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in discovery"))
    };
    let svc = find(&core, "services");
    assert_eq!(svc["kind"], "Service");
    assert_eq!(svc["namespaced"], true);
    assert_eq!(svc["shortNames"], json!(["svc"]));
    for verb in [
        "create", "delete", "get", "list", "patch", "update", "watch",
    ] {
        assert!(svc["verbs"].as_array().unwrap().contains(&json!(verb)));
    }
    assert_eq!(
        find(&core, "services/status")["verbs"],
        json!(["get", "patch", "update"])
    );
    for name in ["endpoints", "namespaces", "configmaps"] {
        find(&core, name);
    }
    assert_eq!(find(&core, "namespaces")["namespaced"], false);
    let (_, groups) = raw.get("/apis").await;
    assert_eq!(groups["kind"], "APIGroupList");
    assert_eq!(
        strings_at(&groups["groups"], "/name"),
        [
            "discovery.k8s.io",
            "config.openshift.io",
            "apiextensions.k8s.io",
            // Deployments: the AWS Load Balancer Controller's, which the hand-over waits on.
            "apps",
            "rbac.authorization.k8s.io",
            // OLM and the aws-load-balancer-operator's API (`manifests`).
            "operators.coreos.com",
            "networking.olm.openshift.io",
            // The day-2 change's Lease.
            "coordination.k8s.io"
        ]
    );
    assert_eq!(
        groups["groups"][1]["preferredVersion"],
        json!({"groupVersion": "config.openshift.io/v1", "version": "v1"})
    );
    let (_, config) = raw.get("/apis/config.openshift.io/v1").await;
    assert_eq!(config["groupVersion"], "config.openshift.io/v1");
    let cv = find(&config, "clusterversions");
    assert_eq!(
        (&cv["kind"], &cv["namespaced"]),
        (&json!("ClusterVersion"), &json!(false))
    );
    find(&config, "clusterversions/status");
    assert_eq!(find(&config, "infrastructures")["namespaced"], false);
    let (_, disc) = raw.get("/apis/discovery.k8s.io/v1").await;
    assert_eq!(find(&disc, "endpointslices")["kind"], "EndpointSlice");
    let (code, group) = raw.get("/apis/config.openshift.io").await;
    assert_eq!((code, &group["kind"]), (200, &json!("APIGroup")));
    let (code, missing) = raw.get("/apis/nope.example.com/v1/things").await;
    assert_eq!(code, 404);
    assert_eq!(missing["reason"], "NotFound");
    assert_eq!(
        missing["message"],
        "the server could not find the requested resource"
    );

    let kubeconfig = std::fs::read_to_string(sim.kubeconfig_path()).unwrap();
    assert!(kubeconfig.contains(&format!("server: {}", sim.url())));
    assert!(kubeconfig.contains("certificate-authority-data: "));
    assert!(kubeconfig.contains(&format!("token: {}", sim.token())));
    let (_, nss) = raw.get("/api/v1/namespaces").await;
    assert_eq!(nss["kind"], "NamespaceList");
    assert_eq!(
        strings_at(&nss["items"], "/metadata/name"),
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn crud_status_bodies_and_generation() {
    let sim = sim(never_ready()).await;
    let raw = Raw::new(&sim);
    let (code, ns) = raw
        .post(
            "/api/v1/namespaces",
            json!({"metadata": {"name": "openshift-kube-apiserver"}}),
        )
        .await;
    assert_eq!(code, 201);
    assert_eq!(ns["kind"], "Namespace");
    assert_eq!(ns["status"]["phase"], "Active");
    let path = "/api/v1/namespaces/openshift-kube-apiserver/services";
    let (code, svc) = raw.post(path, lb("api", json!({}))).await;
    assert_eq!(code, 201, "{svc}");
    assert_eq!(
        (&svc["kind"], &svc["apiVersion"]),
        (&json!("Service"), &json!("v1"))
    );
    let m = &svc["metadata"];
    assert_eq!(m["uid"].as_str().unwrap().len(), 36);
    assert_eq!(m["generation"], 1);
    assert!(m["creationTimestamp"].as_str().unwrap().ends_with('Z'));
    assert!(rv(&svc) > rv(&ns));
    let spec = &svc["spec"];
    assert!(spec["clusterIP"].as_str().unwrap().starts_with("172.30."));
    assert_eq!(spec["ports"][0]["protocol"], "TCP");
    assert!(spec["ports"][0]["nodePort"].as_i64().unwrap() >= 30000);
    assert_eq!(spec["externalTrafficPolicy"], "Cluster");
    assert_eq!(svc["status"], json!({"loadBalancer": {}}));
    assert_eq!(
        managers(&svc),
        [("raw-test".to_string(), "Update".to_string())]
    );

    let (code, dup) = raw.post(path, lb("api", json!({}))).await;
    assert_eq!(code, 409);
    assert_eq!(
        dup,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "services \"api\" already exists", "reason": "AlreadyExists",
               "details": {"name": "api", "kind": "services"}, "code": 409})
    );
    let (code, nf) = raw.get(&format!("{path}/nope")).await;
    assert_eq!(code, 404);
    assert_eq!(nf["message"], "services \"nope\" not found");
    assert_eq!(nf["details"], json!({"name": "nope", "kind": "services"}));
    let (code, bad) = raw
        .post(
            path,
            json!({"metadata": {"name": "noports"}, "spec": {"type": "ClusterIP"}}),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(bad["reason"], "Invalid");
    assert_eq!(
        bad["message"],
        "Service \"noports\" is invalid: spec.ports: Required value"
    );
    assert_eq!(
        bad["details"],
        json!({"name": "noports", "kind": "Service", "causes": [
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.ports"}]})
    );
    let (code, bad) = raw.post(path, lb("Not_A_Label", json!({}))).await;
    assert_eq!(code, 422);
    assert!(bad["message"].as_str().unwrap().starts_with(
        "Service \"Not_A_Label\" is invalid: metadata.name: Invalid value: \"Not_A_Label\": a DNS-1035 label"
    ));
    let (code, nons) = raw
        .post("/api/v1/namespaces/ghost/services", lb("x", json!({})))
        .await;
    assert_eq!(code, 404);
    assert_eq!(nons["message"], "namespaces \"ghost\" not found");

    // PUT: stale resourceVersion -> 409; spec change bumps generation; status is ignored.
    let mut changed = svc.clone();
    changed["spec"]["ports"][0]["port"] = json!(7443);
    changed["status"] = json!({"loadBalancer": {"ingress": [{"ip": "9.9.9.9"}]}});
    let (code, updated) = raw.put(&format!("{path}/api"), changed.clone()).await;
    assert_eq!(code, 200, "{updated}");
    assert_eq!(updated["metadata"]["generation"], 2);
    assert_eq!(updated["status"], json!({"loadBalancer": {}}));
    assert_eq!(updated["spec"]["clusterIP"], svc["spec"]["clusterIP"]);
    let (code, stale) = raw.put(&format!("{path}/api"), changed).await;
    assert_eq!(code, 409);
    assert_eq!(stale["reason"], "Conflict");
    assert_eq!(
        stale["message"],
        "Operation cannot be fulfilled on services \"api\": the object has been modified; please apply your changes to the latest version and try again"
    );

    // Status subresource: only .status changes, generation stays.
    let mut status = updated.clone();
    status["spec"]["ports"][0]["port"] = json!(1);
    status["status"] = json!({"loadBalancer": {"ingress": [{"ip": "10.1.2.3"}]}});
    let (code, st) = raw.put(&format!("{path}/api/status"), status).await;
    assert_eq!(code, 200, "{st}");
    assert_eq!(st["spec"]["ports"][0]["port"], 7443);
    assert_eq!(
        st["status"]["loadBalancer"]["ingress"],
        json!([{"ip": "10.1.2.3", "ipMode": "VIP"}])
    );
    assert_eq!(st["metadata"]["generation"], 2);
    let sub: Vec<&Value> = st["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["subresource"] == "status")
        .collect();
    assert_eq!(sub.len(), 1);
    assert_eq!(
        sub[0]["fieldsV1"],
        json!({"f:status": {"f:loadBalancer": {"f:ingress": {}}}})
    );
    assert_eq!(
        sim.get(
            "",
            "v1",
            "services",
            Some("openshift-kube-apiserver"),
            "api"
        )
        .unwrap(),
        st
    );

    // A no-op PUT does not bump the resourceVersion.
    let (_, same) = raw.put(&format!("{path}/api"), st.clone()).await;
    assert_eq!(rv(&same), rv(&st));

    // Merge patch and JSON patch.
    let (code, merged) = raw
        .merge_patch(
            &format!("{path}/api"),
            r#"{"metadata":{"labels":{"x":"y"}}}"#,
        )
        .await;
    assert_eq!(
        (code, &merged["metadata"]["labels"]["x"]),
        (200, &json!("y"))
    );
    let (code, jp) = raw
        .patch(
            &format!("{path}/api"),
            "application/json-patch+json",
            r#"[{"op":"replace","path":"/spec/ports/0/port","value":8443}]"#,
        )
        .await;
    assert_eq!((code, &jp["spec"]["ports"][0]["port"]), (200, &json!(8443)));
    assert_eq!(jp["metadata"]["generation"], 3);
    let (code, bad) = raw.patch(&format!("{path}/api"), "text/plain", "{}").await;
    assert_eq!(code, 415, "{bad}");

    // DELETE: Services return the object, ConfigMaps a Status.
    let (code, gone) = raw.delete(&format!("{path}/api")).await;
    assert_eq!((code, &gone["kind"]), (200, &json!("Service")));
    let cms = "/api/v1/namespaces/default/configmaps";
    raw.post(cms, json!({"metadata": {"name": "c"}, "data": {"a": "b"}}))
        .await;
    let (code, st) = raw.delete(&format!("{cms}/c")).await;
    assert_eq!(code, 200);
    assert_eq!(st["kind"], "Status");
    assert_eq!(st["status"], "Success");
    assert_eq!(st["details"]["name"], "c");
    assert_eq!(st["details"]["kind"], "configmaps");
}

#[tokio::test(flavor = "multi_thread")]
async fn server_side_apply_raw() {
    let sim = sim(never_ready()).await;
    let raw = Raw::new(&sim);
    let url = "/api/v1/namespaces/default/services/api";
    let yaml = "apiVersion: v1
kind: Service
metadata:
  name: api
  labels:
    app: api
spec:
  type: LoadBalancer
  selector:
    app: api
  ports:
  - name: https
    port: 6443
    targetPort: 6443
";
    let (code, missing) = raw.apply(url, None, false, yaml).await;
    assert_eq!(code, 422);
    assert_eq!(
        missing["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let (code, created) = raw.apply(url, Some("bootstrap-agent"), true, yaml).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        managers(&created),
        [("bootstrap-agent".into(), "Apply".into())]
    );
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!(entry["apiVersion"], "v1");
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:app": {}}},
               "f:spec": {"f:ports": {}, "f:selector": {}, "f:type": {}}})
    );
    let (code, again) = raw.apply(url, Some("bootstrap-agent"), true, yaml).await;
    assert_eq!(code, 200);
    assert_eq!(rv(&again), rv(&created), "a no-op apply writes nothing");

    // Another manager changing our field: conflict, then force moves ownership.
    let other = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"api"},"spec":{"type":"NodePort"}}"#;
    let (code, conflict) = raw.apply(url, Some("other-manager"), false, other).await;
    assert_eq!(code, 409, "{conflict}");
    assert_eq!(
        conflict,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "Apply failed with 1 conflict: conflict with \"bootstrap-agent\": .spec.type",
               "reason": "Conflict", "code": 409,
               "details": {"causes": [{"reason": "FieldManagerConflict",
                                       "message": "conflict with \"bootstrap-agent\"",
                                       "field": ".spec.type"}]}})
    );
    let (code, forced) = raw.apply(url, Some("other-manager"), true, other).await;
    assert_eq!(code, 200, "{forced}");
    assert_eq!(forced["spec"]["type"], "NodePort");
    assert_eq!(
        fields_of(&forced, "bootstrap-agent")["f:spec"],
        json!({"f:ports": {}, "f:selector": {}})
    );
    assert_eq!(
        fields_of(&forced, "other-manager"),
        &json!({"f:spec": {"f:type": {}}})
    );

    // An Update-manager's field conflicts with "<name>" using v1.
    raw.merge_patch(
        &format!("{url}?fieldManager=kubectl-edit"),
        r#"{"spec":{"sessionAffinity":"ClientIP"}}"#,
    )
    .await;
    let both = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"api"},
        "spec":{"type":"LoadBalancer","sessionAffinity":"None"}}"#;
    let (code, two) = raw.apply(url, Some("bootstrap-agent"), false, both).await;
    assert_eq!(code, 409, "{two}");
    assert_eq!(
        two["message"],
        "Apply failed with 2 conflicts: conflicts with \"kubectl-edit\" using v1:\n- .spec.sessionAffinity\nconflicts with \"other-manager\":\n- .spec.type"
    );

    // Omitting fields we applied before removes them (labels), unless others own them.
    let shrink = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"api"},
        "spec":{"selector":{"app":"api"},"ports":[{"name":"https","port":6443,"targetPort":6443}]}}"#;
    let (code, shrunk) = raw.apply(url, Some("bootstrap-agent"), false, shrink).await;
    assert_eq!(code, 200, "{shrunk}");
    assert_eq!(shrunk["metadata"].get("labels"), None);
    assert_eq!(shrunk["spec"]["type"], "NodePort", "owned by other-manager");

    // Status apply touches only status; main apply ignores status.
    let st = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"api"},
        "spec":{"type":"ExternalName"},"status":{"loadBalancer":{"ingress":[{"hostname":"h"}]}}}"#;
    let (code, status) = raw
        .apply(&format!("{url}/status"), Some("ccm"), true, st)
        .await;
    assert_eq!(code, 200, "{status}");
    assert_eq!(status["spec"]["type"], "NodePort");
    assert_eq!(
        status["status"]["loadBalancer"]["ingress"][0]["hostname"],
        "h"
    );
    let (code, main) = raw
        .apply(url, Some("other-manager"), true, r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"api"},"spec":{"type":"NodePort"},"status":{"loadBalancer":{}}}"#)
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        main["status"]["loadBalancer"]["ingress"][0]["hostname"],
        "h"
    );
    let (code, wrong) = raw
        .apply(
            url,
            Some("x"),
            false,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"api"}}"#,
        )
        .await;
    assert_eq!(code, 400, "{wrong}");
}

#[tokio::test(flavor = "multi_thread")]
async fn list_watch_selectors_bookmarks_and_gone() {
    let sim = KubeSim::start(KubeSimOptions {
        controller: never_ready(),
        history_limit: 5,
        bookmark_interval: Duration::from_millis(200),
        ..Default::default()
    })
    .await
    .unwrap();
    let raw = Raw::new(&sim);
    let cms = "/api/v1/namespaces/default/configmaps";
    for (name, tier) in [("a", "cp"), ("b", "worker")] {
        raw.post(
            cms,
            json!({"metadata": {"name": name, "labels": {"tier": tier}}}),
        )
        .await;
    }
    let (_, list) = raw.get(cms).await;
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["apiVersion"], "v1");
    let list_rv = rv(&list);
    assert_eq!(list_rv, sim.resource_version());
    assert_eq!(list["items"][0].get("kind"), None, "items carry no kind");
    let (_, sel) = raw
        .get(&format!("{cms}?labelSelector=tier%20in%20(cp)"))
        .await;
    assert_eq!(sel["items"].as_array().unwrap().len(), 1);
    let (code, bad) = raw.get(&format!("{cms}?fieldSelector=spec.x%3Dy")).await;
    assert_eq!((code, &bad["reason"]), (400, &json!("BadRequest")));

    // Pagination.
    let (_, page) = raw.get(&format!("{cms}?limit=1")).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert_eq!(page["metadata"]["remainingItemCount"], 1);
    let token = page["metadata"]["continue"].as_str().unwrap();
    let (_, rest) = raw.get(&format!("{cms}?limit=1&continue={token}")).await;
    assert_eq!(rest["items"][0]["metadata"]["name"], "b");
    assert_eq!(rest["metadata"].get("continue"), None);

    // Watch from the list RV: only later events, with bookmarks; selector transitions.
    let mut w = raw
        .watch(&format!(
            "{cms}?watch=true&resourceVersion={list_rv}&labelSelector=tier%3Dcp&allowWatchBookmarks=true"
        ))
        .await;
    let mut all = raw.watch(&format!("{cms}?watch=1")).await;
    for _ in 0..2 {
        assert_eq!(all.event().await["type"], "ADDED");
    }
    let bm = w.next(5).await.unwrap();
    assert_eq!(bm["type"], "BOOKMARK");
    assert_eq!(
        bm["object"],
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": list_rv.to_string()}})
    );
    // Relabelling moves an object into the selector (ADDED) or out of it (DELETED).
    for (name, tier, seen) in [("b", "cp", "ADDED"), ("a", "x", "DELETED")] {
        let labels = json!({"metadata": {"labels": {"tier": tier}}}).to_string();
        raw.merge_patch(&format!("{cms}/{name}"), &labels).await;
        let e = w.event().await;
        assert_eq!(type_and_name(&e), (seen, name));
        assert_eq!(e["object"]["kind"], "ConfigMap");
    }
    raw.delete(&format!("{cms}/b")).await;
    let e = w.event().await;
    assert_eq!(type_and_name(&e), ("DELETED", "b"));
    assert_eq!(rv(&e["object"]), sim.resource_version());
    for t in ["MODIFIED", "MODIFIED", "DELETED"] {
        assert_eq!(all.event().await["type"], t);
    }

    // Too old: the history keeps 5 events per type, so the first RV is gone.
    for i in 0..6 {
        raw.post(cms, json!({"metadata": {"name": format!("n{i}")}}))
            .await;
    }
    let mut old = raw
        .watch(&format!("{cms}?watch=true&resourceVersion={list_rv}"))
        .await;
    let e = old.next(5).await.unwrap();
    assert_eq!(e["type"], "ERROR");
    assert_eq!(e["object"]["code"], 410);
    assert_eq!(e["object"]["reason"], "Expired");
    assert!(
        e["object"]["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("too old resource version: {list_rv} ("))
    );
    assert!(old.closed(5).await);

    // timeoutSeconds and drop_watches close streams.
    let mut short = raw
        .watch(&format!("{cms}?watch=true&timeoutSeconds=1"))
        .await;
    assert!(short.closed(5).await);
    let mut dropped = raw
        .watch(&format!(
            "{cms}?watch=true&resourceVersion={}",
            sim.resource_version()
        ))
        .await;
    sim.drop_watches();
    assert!(dropped.closed(5).await);
    assert!(all.closed(5).await);

    // sendInitialEvents ends the initial ADDED events with an annotated bookmark.
    let mut initial = raw
        .watch(&format!("{cms}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"))
        .await;
    let mut added = 0;
    let end = loop {
        let e = initial.next(5).await.unwrap();
        if e["type"] == "BOOKMARK" {
            break e;
        }
        added += 1;
    };
    assert_eq!(added, 7);
    assert_eq!(
        end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );

    let log = sim.request_log();
    assert!(log.contains(&("GET".into(), format!("{cms}?watch=true&timeoutSeconds=1"))));
}

#[tokio::test(flavor = "multi_thread")]
async fn controller_sets_ingress_then_endpoints() {
    let sim = sim(ControllerKnobs {
        ingress_delay: Duration::from_millis(300),
        endpoints_delay: Duration::from_millis(300),
        ..Default::default()
    })
    .await;
    let raw = Raw::new(&sim);
    let svcs = "/api/v1/namespaces/default/services";
    let start_rv = sim.resource_version();
    let mut w = raw
        .watch(&format!("{svcs}?watch=true&resourceVersion={start_rv}"))
        .await;
    let mut slices = raw
        .watch(&format!(
            "/apis/discovery.k8s.io/v1/endpointslices?watch=true&resourceVersion={start_rv}&labelSelector=kubernetes.io%2Fservice-name%3Dapi-int"
        ))
        .await;
    let t0 = Instant::now();
    let (code, _) = raw
        .post(
            svcs,
            lb(
                "api-int",
                json!({"service.beta.kubernetes.io/azure-load-balancer-ipv4": "10.0.1.5"}),
            ),
        )
        .await;
    assert_eq!(code, 201);
    raw.post(
        svcs,
        lb(
            "api-ext",
            json!({"service.beta.kubernetes.io/aws-load-balancer-eip-allocations": "eipalloc-1"}),
        ),
    )
    .await;
    let added = w.event().await;
    assert_eq!(added["type"], "ADDED");
    // Both Services get their ingress after the same delay, in either order: take each
    // Service's first MODIFIED event with an ingress (the controller's finalizer comes just
    // before it) without dropping the other's.
    let mut first_modified = HashMap::new();
    while first_modified.len() < 2 {
        let e = w.event().await;
        if e["type"] == "MODIFIED" {
            assert_eq!(
                e["object"]["metadata"]["finalizers"],
                json!(["service.kubernetes.io/load-balancer-cleanup"]),
                "{e:#}"
            );
        }
        if e["type"] == "MODIFIED" && !e["object"]["status"]["loadBalancer"]["ingress"].is_null() {
            let name = e["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string();
            first_modified.entry(name).or_insert(e);
        }
    }
    let modified = first_modified.remove("api-int").unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(300));
    assert_eq!(
        modified["object"]["status"]["loadBalancer"]["ingress"],
        json!([{"ip": "10.0.1.5", "ipMode": "VIP"}])
    );
    let slice = slices.event().await;
    assert!(t0.elapsed() >= Duration::from_millis(600));
    assert_eq!(slice["type"], "ADDED");
    let s = &slice["object"];
    assert!(rv(s) > rv(&modified["object"]));
    assert!(
        s["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with("api-int-")
    );
    assert_eq!(
        s["metadata"]["name"].as_str().unwrap().len(),
        "api-int-".len() + 5
    );
    assert_eq!(s["addressType"], "IPv4");
    assert_eq!(s["endpoints"].as_array().unwrap().len(), 3);
    assert_eq!(s["endpoints"][0]["addresses"], json!(["10.0.0.1"]));
    assert_eq!(s["endpoints"][2]["conditions"]["ready"], true);
    assert_eq!(
        s["ports"],
        json!([{"name": "https", "port": 6443, "protocol": "TCP"}])
    );
    assert_eq!(s["metadata"]["ownerReferences"][0]["kind"], "Service");
    let ep = sim
        .get("", "v1", "endpoints", Some("default"), "api-int")
        .unwrap();
    assert_eq!(ep["subsets"][0]["addresses"].as_array().unwrap().len(), 3);
    let ext = first_modified.remove("api-ext").unwrap();
    let host = ext["object"]["status"]["loadBalancer"]["ingress"][0]["hostname"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        host.starts_with("api-ext-") && host.ends_with(".amazonaws.com"),
        "the in-tree AWS provider reports the ELB's hostname: {host}"
    );

    // Deleting the Service removes its slices (owner references) and Endpoints.
    raw.delete(&format!("{svcs}/api-int")).await;
    let gone = slices.event().await;
    assert_eq!(gone["type"], "DELETED");
    assert!(
        sim.get("", "v1", "endpoints", Some("default"), "api-int")
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn controller_knobs_and_make_ready() {
    let sim = sim(never_ready()).await;
    let raw = Raw::new(&sim);
    let svcs = "/api/v1/namespaces/default/services";
    raw.post(
        svcs,
        lb(
            "a",
            json!({"service.beta.kubernetes.io/azure-load-balancer-ipv4": "10.9.9.9"}),
        ),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let a = sim.get("", "v1", "services", Some("default"), "a").unwrap();
    assert_eq!(a["status"], json!({"loadBalancer": {}}), "never_ready");

    // make_ready: both conditions at once, right now.
    let mut w = raw
        .watch(&format!("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?watch=true&resourceVersion={}", sim.resource_version()))
        .await;
    sim.make_ready("default", "a");
    let a = sim.get("", "v1", "services", Some("default"), "a").unwrap();
    assert_eq!(a["status"]["loadBalancer"]["ingress"][0]["ip"], "10.9.9.9");
    assert_eq!(w.event().await["type"], "ADDED");

    // make_ready before the Service exists: ready as soon as it appears.
    sim.make_ready("default", "early");
    let mut sw = raw
        .watch(&format!(
            "{svcs}?watch=true&fieldSelector=metadata.name%3Dearly"
        ))
        .await;
    raw.post(svcs, lb("early", json!({}))).await;
    sw.until(|e| e["object"]["status"]["loadBalancer"]["ingress"].is_array())
        .await;

    // ingress_without_endpoints, then flapping.
    sim.set_knobs(ControllerKnobs {
        ingress_without_endpoints: true,
        ..quick()
    });
    raw.post(svcs, lb("b", json!({}))).await;
    let mut bw = raw
        .watch(&format!(
            "{svcs}?watch=true&fieldSelector=metadata.name%3Db"
        ))
        .await;
    bw.until(|e| e["object"]["status"]["loadBalancer"]["ingress"].is_array())
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let slices = sim.list("discovery.k8s.io", "v1", "endpointslices", Some("default"));
    assert!(
        !slices
            .iter()
            .any(|s| s["metadata"]["labels"]["kubernetes.io/service-name"] == "b")
    );

    sim.set_knobs(ControllerKnobs {
        flapping: Some(Duration::from_millis(100)),
        endpoints: 2,
        ..quick()
    });
    let mut fw = raw
        .watch("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?watch=true&labelSelector=kubernetes.io%2Fservice-name%3Db")
        .await;
    let mut seen = Vec::new();
    while seen.len() < 4 {
        let e = fw.event().await;
        let ready = e["object"]["endpoints"][0]["conditions"]["ready"].clone();
        assert_eq!(e["object"]["endpoints"].as_array().unwrap().len(), 2);
        if seen.last() != Some(&ready) {
            seen.push(ready);
        }
    }
    assert_eq!(seen, [json!(true), json!(false), json!(true), json!(false)]);

    // drop_watches_every closes client watches periodically.
    sim.set_knobs(ControllerKnobs {
        drop_watches_every: Some(Duration::from_millis(200)),
        never_ready: true,
        ..quick()
    });
    let mut dw = raw.watch(&format!("{svcs}?watch=true")).await;
    assert!(dw.closed(5).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn namespace_deletion_and_finalizers() {
    let sim = sim(quick()).await;
    let raw = Raw::new(&sim);
    raw.post("/api/v1/namespaces", json!({"metadata": {"name": "tmp"}}))
        .await;
    let cms = "/api/v1/namespaces/tmp/configmaps";
    raw.post(cms, json!({"metadata": {"name": "plain"}})).await;
    raw.post(
        cms,
        json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}),
    )
    .await;
    let (code, held) = raw.delete(&format!("{cms}/held")).await;
    assert_eq!(code, 200);
    assert!(held["metadata"]["deletionTimestamp"].is_string());
    let (code, ns) = raw.delete("/api/v1/namespaces/tmp").await;
    assert_eq!(code, 200);
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert!(
        sim.get("", "v1", "configmaps", Some("tmp"), "plain")
            .is_none()
    );
    let (code, refused) = raw.post(cms, json!({"metadata": {"name": "new"}})).await;
    assert_eq!(code, 403);
    assert_eq!(
        refused["message"],
        "configmaps \"new\" is forbidden: unable to create new content in namespace tmp because it is being terminated"
    );
    let (code, _) = raw
        .merge_patch(
            &format!("{cms}/held"),
            r#"{"metadata":{"finalizers":null}}"#,
        )
        .await;
    assert_eq!(code, 200);
    assert!(
        sim.get("", "v1", "configmaps", Some("tmp"), "held")
            .is_none()
    );
    assert!(sim.get("", "v1", "namespaces", None, "tmp").is_none());
    let (code, _) = raw.delete("/api/v1/namespaces/default").await;
    assert_eq!(code, 403);
}

// ---------------------------------------------------------------- Python oracle

#[tokio::test(flavor = "multi_thread")]
async fn oracle_crud_and_status_bodies() {
    let sim = sim(never_ready()).await;
    let out = oracle(&sim, &["crud", "--namespace", "oracle"]).await;
    assert_eq!(out["namespace"]["status"]["phase"], "Active");
    assert!(
        out["namespaces"]
            .as_array()
            .unwrap()
            .contains(&json!("oracle"))
    );
    let created = &out["created"];
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(created["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(created["spec"]["ports"][0]["targetPort"], 6443);
    assert_eq!(
        managers(created),
        [("OpenAPI-Generator".to_string(), "Update".to_string())]
    );
    assert_eq!(out["read"]["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(out["list"]["kind"], "ServiceList");
    assert_eq!(out["list"]["names"], json!(["api", "other"]));
    let sel = &out["selected"];
    assert_eq!(sel["app=api"], json!(["api"]));
    assert_eq!(sel["app!=api"], json!(["other"]));
    assert_eq!(sel["app in (api,other),tier"], json!(["api"]));
    assert_eq!(sel["!tier"], json!(["other"]));
    assert_eq!(sel["app notin (api)"], json!(["other"]));
    assert_eq!(sel["metadata.name=other"], json!(["other"]));
    assert_eq!(
        out["all_namespaces"],
        // The AWS world runs the AWS Load Balancer Controller's webhook Service.
        json!([
            "default/kubernetes",
            "kube-system/aws-load-balancer-webhook-service",
            "oracle/api",
            "oracle/other"
        ])
    );
    assert_eq!(out["already_exists"]["status"], 409);
    assert_eq!(
        out["already_exists"]["body"],
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "services \"api\" already exists", "reason": "AlreadyExists",
               "details": {"name": "api", "kind": "services"}, "code": 409})
    );
    assert_eq!(out["not_found"]["status"], 404);
    assert_eq!(out["not_found"]["body"]["reason"], "NotFound");
    assert_eq!(out["invalid_ports"]["status"], 422);
    assert_eq!(
        out["invalid_ports"]["body"]["details"]["causes"][0]["field"],
        "spec.ports"
    );
    assert_eq!(out["invalid_name"]["status"], 422);
    assert_eq!(
        out["invalid_name"]["body"]["details"]["causes"][0]["field"],
        "metadata.name"
    );
    assert_eq!(out["missing_namespace"]["status"], 404);
    assert_eq!(
        out["missing_namespace"]["body"]["details"]["kind"],
        "namespaces"
    );
    assert_eq!(out["replaced"]["metadata"]["labels"]["touched"], "yes");
    assert_eq!(out["stale"]["status"], 409);
    assert_eq!(out["stale"]["body"]["reason"], "Conflict");
    assert_eq!(out["deleted"]["metadata"]["name"], "other");
    assert_eq!(out["after_delete"], json!(["api"]));
    assert_eq!(out["configmap_deleted"]["status"], "Success");
}

#[tokio::test(flavor = "multi_thread")]
async fn oracle_server_side_apply_and_conflict() {
    let sim = sim(never_ready()).await;
    let out = oracle(&sim, &["apply"]).await;
    let first = &out["first"];
    assert_eq!(first["spec"]["type"], "LoadBalancer");
    assert_eq!(
        managers(first),
        [("bootstrap-agent".into(), "Apply".into())]
    );
    assert_eq!(
        out["again"]["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    let conflict = &out["conflict"];
    assert_eq!(conflict["status"], 409);
    assert_eq!(conflict["body"]["reason"], "Conflict");
    assert_eq!(
        conflict["body"]["message"],
        "Apply failed with 1 conflict: conflict with \"bootstrap-agent\": .spec.ports"
    );
    assert_eq!(
        conflict["body"]["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"bootstrap-agent\"", "field": ".spec.ports"}])
    );
    // Same value: shared ownership, no conflict.
    assert_eq!(
        fields_of(&out["shared"], "label-keeper"),
        &json!({"f:metadata": {"f:labels": {"f:a": {}}}})
    );
    let forced = &out["forced"];
    assert_eq!(forced["spec"]["ports"][0]["port"], 7443);
    assert_eq!(
        fields_of(forced, "bootstrap-agent")["f:spec"],
        json!({"f:selector": {}, "f:type": {}})
    );
    // Omitted labels: "b" removed, "a" kept (label-keeper owns it), ports kept (forced away).
    let pruned = &out["pruned"];
    assert_eq!(pruned["metadata"]["labels"], json!({"a": "1"}));
    assert_eq!(pruned["spec"]["ports"][0]["port"], 7443);
    assert_eq!(out["missing_manager"]["status"], 422);
    assert_eq!(out["merge_patched"]["metadata"]["annotations"]["note"], "x");
    assert_eq!(out["json_patched"]["metadata"]["labels"]["c"], "3");
    assert_eq!(out["status_ignored"]["status"], json!({"loadBalancer": {}}));
}

#[tokio::test(flavor = "multi_thread")]
async fn oracle_watch_sees_controller_ingress() {
    let sim = sim(ControllerKnobs {
        ingress_delay: Duration::from_millis(500),
        ..quick()
    })
    .await;
    let raw = Raw::new(&sim);
    let rv = sim.resource_version();
    let (code, _) = raw
        .post(
            "/api/v1/namespaces/default/services",
            lb(
                "api",
                json!({"service.beta.kubernetes.io/azure-load-balancer-ipv4": "10.0.3.7"}),
            ),
        )
        .await;
    assert_eq!(code, 201);
    let out = oracle(
        &sim,
        &[
            "watch",
            "--name",
            "api",
            "--resource-version",
            &rv.to_string(),
        ],
    )
    .await;
    let events: Vec<&Value> = out["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] != "BOOKMARK")
        .collect();
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["ingress"], Value::Null);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "MODIFIED");
    assert_eq!(
        last["ingress"],
        json!([{"ip": "10.0.3.7", "ipMode": "VIP"}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn oracle_watch_too_old_resource_version_is_410() {
    let sim = KubeSim::start(KubeSimOptions {
        history_limit: 2,
        controller: quick(),
        ..Default::default()
    })
    .await
    .unwrap();
    let raw = Raw::new(&sim);
    let first = sim.resource_version();
    for i in 0..4 {
        raw.post(
            "/api/v1/namespaces/default/services",
            json!({"metadata": {"name": format!("s{i}")}, "spec": {"ports": [{"port": 80}]}}),
        )
        .await;
    }
    let out = oracle(&sim, &["gone", "--resource-version", &first.to_string()]).await;
    assert_eq!(out["raw_status"], 200);
    assert_eq!(out["raw_first"]["type"], "ERROR");
    assert_eq!(out["raw_first"]["object"]["code"], 410);
    assert_eq!(out["raw_first"]["object"]["reason"], "Expired");
    assert_eq!(out["watch"]["status"], 410);
}

#[tokio::test(flavor = "multi_thread")]
async fn oracle_dynamic_client_custom_resources() {
    let sim = sim(quick()).await;
    let out = oracle(&sim, &["dynamic"]).await;
    assert_eq!(
        out["resource"],
        json!({"namespaced": false, "name": "clusterversions", "status": true})
    );
    assert_eq!(out["created"]["metadata"]["generation"], 1);
    assert_eq!(out["created"]["spec"]["clusterID"], "abc");
    assert_eq!(
        out["partial_status"],
        json!({"code": 422, "causes": ["status.availableUpdates", "status.desired", "status.observedGeneration", "status.versionHash"]}),
        "the real CRD's required status fields are enforced"
    );
    assert_eq!(
        out["status_patched"]["status"]["capabilities"]["enabledCapabilities"],
        json!(["Ingress"])
    );
    assert_eq!(out["read"]["metadata"]["generation"], 1);
    assert_eq!(
        out["list"],
        json!({"kind": "ClusterVersionList", "items": ["version"]})
    );
    assert_eq!(
        out["crds"],
        json!([
            // The aws-load-balancer-operator's and OLM's, vendored from their projects.
            "awsloadbalancercontrollers.networking.olm.openshift.io",
            "clusterversions.config.openshift.io",
            "dnses.config.openshift.io",
            "infrastructures.config.openshift.io",
            "operatorgroups.operators.coreos.com",
            "subscriptions.operators.coreos.com",
            // The AWS Load Balancer Controller's, present by default (`aws_lb_controller`).
            "targetgroupbindings.elbv2.k8s.aws"
        ])
    );
    assert_eq!(out["infra_namespaced"], false);
    assert_eq!(out["slices_namespaced"], true);
    assert_eq!(out["version"]["major"], "1");
    let stored = openshift_config(&sim, "clusterversions", "version");
    assert_eq!(
        stored["status"]["capabilities"]["enabledCapabilities"],
        json!(["Ingress"])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn seeded_objects_generate_name_and_dry_run() {
    let sim = KubeSim::start(KubeSimOptions {
        objects: vec![
            json!({"apiVersion": "config.openshift.io/v1", "kind": "Infrastructure",
                   "metadata": {"name": "cluster"},
                   "spec": {"platformSpec": {"type": "AWS"}},
                   "status": {"infrastructureName": "demo-x7k2p", "platformStatus": {"type": "AWS"}}}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-config"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "c", "namespace": "openshift-config"}, "data": {"k": "v"}}),
        ],
        controller: quick(),
        ..Default::default()
    })
    .await
    .unwrap();
    let infra = openshift_config(&sim, "infrastructures", "cluster");
    assert_eq!(infra["status"]["infrastructureName"], "demo-x7k2p");
    assert_eq!(infra["metadata"]["generation"], 1);
    assert_eq!(
        sim.list("", "v1", "configmaps", Some("openshift-config"))
            .len(),
        1
    );
    let raw = Raw::new(&sim);
    let (_, cv) = raw
        .get("/apis/config.openshift.io/v1/infrastructures")
        .await;
    assert_eq!(
        cv["items"][0]["kind"], "Infrastructure",
        "custom resources keep kind in lists"
    );

    let cms = "/api/v1/namespaces/default/configmaps";
    let (code, generated) = raw
        .post(cms, json!({"metadata": {"generateName": "gen-"}}))
        .await;
    assert_eq!(code, 201);
    let name = generated["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    let before = sim.resource_version();
    let (code, dry) = raw
        .post(
            &format!("{cms}?dryRun=All"),
            json!({"metadata": {"name": "dry"}}),
        )
        .await;
    assert_eq!((code, &dry["metadata"]["name"]), (201, &json!("dry")));
    assert!(
        sim.get("", "v1", "configmaps", Some("default"), "dry")
            .is_none()
    );
    assert_eq!(sim.resource_version(), before);
    assert!(
        sim.create(json!({"apiVersion": "v9", "kind": "Nope"}))
            .is_err()
    );
}

// ---------------------------------------------------------------- strict controllers

fn quick_retry() -> ControllerKnobs {
    ControllerKnobs {
        refusal_retry: Duration::from_millis(100),
        ..quick()
    }
}

/// A sim whose strict controllers (of `cloud`) retry refusals quickly, with the namespaces
/// of the API and machine-config-server Services.
async fn strict_sim(cloud: CloudOptions) -> (KubeSim, Raw) {
    let sim = KubeSim::start(KubeSimOptions {
        controller: quick_retry(),
        cloud,
        ..Default::default()
    })
    .await
    .unwrap();
    let raw = Raw::new(&sim);
    namespaces(&raw, &[API_NS, MCS_NS]).await;
    (sim, raw)
}

async fn namespaces(raw: &Raw, names: &[&str]) {
    for name in names {
        let (code, body) = raw
            .post("/api/v1/namespaces", json!({"metadata": {"name": name}}))
            .await;
        assert_eq!(code, 201, "{body}");
    }
}

fn service(ns: &str, name: &str, annotations: Value, spec: Value) -> Value {
    let mut svc = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "spec": {"type": "LoadBalancer",
                 "selector": {"app": "openshift-kube-apiserver", "apiserver": "true"},
                 "ports": [{"name": "https", "port": 6443, "targetPort": 6443}]}
    });
    for (k, v) in spec.as_object().unwrap() {
        svc["spec"][k] = v.clone();
    }
    svc
}

async fn create(raw: &Raw, svc: Value) {
    let (ns, _) = namespace_and_name(&svc);
    let (code, body) = raw
        .post(&format!("/api/v1/namespaces/{ns}/services"), svc)
        .await;
    assert_eq!(code, 201, "{body}");
}

/// Deletes the Service and, as `kubectl delete` does, waits until it is gone (its controller's
/// finalizer holds it until the load balancer is deleted).
async fn delete_service(raw: &Raw, ns: &str, name: &str) {
    let (code, body) = raw
        .delete(&format!("/api/v1/namespaces/{ns}/services/{name}"))
        .await;
    assert_eq!(code, 200, "{body}");
    gone_after(raw, ns, name, Instant::now()).await;
}

/// Waits until the Service `ns/name` has an ingress entry; returns it.
async fn ingress(raw: &Raw, ns: &str, name: &str) -> Value {
    ingress_list(raw, ns, name).await[0].clone()
}

/// The whole ingress list, once there is one.
async fn ingress_list(raw: &Raw, ns: &str, name: &str) -> Value {
    let mut w = raw
        .watch(&format!(
            "/api/v1/namespaces/{ns}/services?watch=true&fieldSelector=metadata.name%3D{name}"
        ))
        .await;
    let e = w
        .until(|e| e["object"]["status"]["loadBalancer"]["ingress"].is_array())
        .await;
    e["object"]["status"]["loadBalancer"]["ingress"].clone()
}

/// Waits for an Event about the Service `ns/name` with `reason`; returns it.
async fn event(raw: &Raw, ns: &str, name: &str, reason: &str) -> Value {
    let mut w = raw
        .watch(&format!("/api/v1/namespaces/{ns}/events?watch=true"))
        .await;
    let e = w
        .until(|e| e["object"]["involvedObject"]["name"] == name && e["object"]["reason"] == reason)
        .await;
    e["object"].clone()
}

fn namespace_and_name(obj: &Value) -> (String, String) {
    let metadata = &obj["metadata"];
    let ns = metadata["namespace"].as_str().unwrap().to_string();
    (ns, metadata["name"].as_str().unwrap().to_string())
}

/// Creates the Service `svc`; the Event with `reason` the controller then records about it.
async fn create_until_event(raw: &Raw, svc: Value, reason: &str) -> Value {
    let (ns, name) = namespace_and_name(&svc);
    create(raw, svc).await;
    event(raw, &ns, &name, reason).await
}

/// Creates `svc`, which the cloud provider refuses (`case` names the test case): its
/// SyncLoadBalancerFailed event, whose message names each of `names`; and no ingress.
async fn refused_sync(sim: &KubeSim, raw: &Raw, case: &str, svc: Value, names: &[&str]) -> Value {
    let (ns, name) = namespace_and_name(&svc);
    let refused = create_until_event(raw, svc, "SyncLoadBalancerFailed").await;
    let message = refused["message"].as_str().unwrap();
    for wanted in names {
        assert!(
            message.contains(wanted),
            "{case}: {message} names no {wanted}"
        );
    }
    assert_no_ingress(sim, &ns, &name);
    refused
}

fn assert_no_ingress(sim: &KubeSim, ns: &str, name: &str) {
    let svc = sim.get("", "v1", "services", Some(ns), name).unwrap();
    assert_eq!(
        svc["status"]["loadBalancer"],
        json!({}),
        "{ns}/{name} was refused: no ingress"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn endpoints_come_only_from_pods_the_selector_matches() {
    let sim = sim(quick()).await;
    let raw = Raw::new(&sim);
    let ns = "openshift-kube-apiserver";
    let mut pods = raw
        .watch(&format!("/api/v1/namespaces/{ns}/pods?watch=true"))
        .await;
    namespaces(&raw, &[ns]).await;
    // The kubelets start the static pods once the namespace exists: running, host network.
    let mut seen = std::collections::BTreeMap::new();
    while seen.len() < 3 {
        let e = pods
            .until(|e| e["object"]["status"]["phase"] == "Running")
            .await;
        seen.insert(
            e["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string(),
            e["object"].clone(),
        );
    }
    let pod = &seen["kube-apiserver-master-0"];
    assert_eq!(
        pod["metadata"]["labels"],
        json!({"app": "openshift-kube-apiserver", "apiserver": "true", "revision": "7"})
    );
    assert_eq!(pod["spec"]["hostNetwork"], true);
    assert_eq!(pod["spec"]["nodeName"], "master-0");
    assert_eq!(pod["status"]["podIP"], "10.0.0.1");

    create(&raw, service(ns, "real", json!({}), json!({}))).await;
    create(
        &raw,
        service(
            ns,
            "seed",
            json!({}),
            json!({"selector": {"app": "kube-apiserver"}}),
        ),
    )
    .await;
    let mut slices = raw
        .watch(&format!(
            "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices?watch=true"
        ))
        .await;
    // The two slices appear in either order: take the first event of each.
    let mut first = std::collections::BTreeMap::new();
    while first.len() < 2 {
        let e = slices
            .until(|e| {
                let name = &e["object"]["metadata"]["labels"]["kubernetes.io/service-name"];
                name == "real" || name == "seed"
            })
            .await;
        let name = e["object"]["metadata"]["labels"]["kubernetes.io/service-name"]
            .as_str()
            .unwrap()
            .to_string();
        first.entry(name).or_insert(e);
    }
    let (real, seed) = (&first["real"], &first["seed"]);
    let endpoints = real["object"]["endpoints"].as_array().unwrap().clone();
    let ips: Vec<&str> = endpoints
        .iter()
        .map(|e| e["addresses"][0].as_str().unwrap())
        .collect();
    assert_eq!(ips, ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    assert!(endpoints.iter().all(|e| e["conditions"]["ready"] == true));
    assert_eq!(endpoints[1]["targetRef"]["name"], "kube-apiserver-master-1");
    assert_eq!(endpoints[1]["nodeName"], "master-1");
    assert_eq!(
        seed["object"]["endpoints"],
        json!([]),
        "the seed's `app: kube-apiserver` matches no real pod"
    );
    let ep = sim.get("", "v1", "endpoints", Some(ns), "seed").unwrap();
    assert_eq!(ep["subsets"], json!([]));

    // A pod that goes away leaves the endpoints.
    let (code, _) = raw
        .delete(&format!(
            "/api/v1/namespaces/{ns}/pods/kube-apiserver-master-1"
        ))
        .await;
    assert_eq!(code, 200);
    let fewer = slices
        .until(|e| {
            e["object"]["metadata"]["labels"]["kubernetes.io/service-name"] == "real"
                && e["object"]["endpoints"].as_array().unwrap().len() == 2
        })
        .await;
    assert_eq!(fewer["type"], "MODIFIED");
    // Fewer control-plane nodes, fewer pods.
    sim.set_knobs(ControllerKnobs {
        endpoints: 1,
        ..quick()
    });
    slices
        .until(|e| {
            e["object"]["metadata"]["labels"]["kubernetes.io/service-name"] == "real"
                && e["object"]["endpoints"].as_array().unwrap().len() == 1
        })
        .await;
}

fn nlb(subnets: &[&str], ips: &[&str]) -> Value {
    json!({
        "service.beta.kubernetes.io/aws-load-balancer-type": "external",
        "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
        "service.beta.kubernetes.io/aws-load-balancer-subnets": subnets.join(","),
        "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses": ips.join(","),
    })
}

fn public_nlb(subnets: &[&str], allocations: &[&str]) -> Value {
    json!({
        "service.beta.kubernetes.io/aws-load-balancer-type": "external",
        "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
        "service.beta.kubernetes.io/aws-load-balancer-subnets": subnets.join(","),
        "service.beta.kubernetes.io/aws-load-balancer-eip-allocations": allocations.join(","),
    })
}

const MCS_NS: &str = "openshift-machine-config-operator";
const API_NS: &str = "openshift-kube-apiserver";

const MCS_LB: &str = "internal-lb-machine-config-server";

/// The old AWS rendering: a machine-config-server NLB on the subnets and private IPs the API
/// NLB holds. The controller's refusal event.
async fn second_internal_nlb_refused(raw: &Raw, subnets: &[&str], ips: &[&str]) -> Value {
    let mcs = service(MCS_NS, MCS_LB, nlb(subnets, ips), mcs_port());
    create_until_event(raw, mcs, "FailedDeployModel").await
}

/// The machine-config-server's internal Service on the API's frontend (`annotations`,
/// `spec`), on its own port.
fn mcs_on_the_api_frontend(annotations: Value, spec: Value) -> Value {
    let mut mcs = service(MCS_NS, MCS_LB, annotations, spec);
    mcs["spec"]["ports"] = mcs_port()["ports"].clone();
    mcs
}

fn mcs_port() -> Value {
    json!({"ports": [{"name": "machine-config-server", "port": 22623, "targetPort": 22623}],
           "selector": {"k8s-app": "machine-config-server"}})
}

#[tokio::test(flavor = "multi_thread")]
async fn aws_refuses_a_private_ip_that_another_nlb_holds_until_it_is_free() {
    let (sim, raw) = strict_sim(CloudOptions::default()).await;
    let (subnets, ips) = (["subnet-a", "subnet-b"], ["10.0.4.100", "10.0.5.100"]);
    create(
        &raw,
        service(API_NS, "internal-lb", nlb(&subnets, &ips), json!({})),
    )
    .await;
    let api = ingress(&raw, API_NS, "internal-lb").await;
    let host = api["hostname"].as_str().unwrap();
    assert!(
        host.starts_with("k8s-openshif-internal-")
            && host.ends_with(".elb.us-east-1.amazonaws.com"),
        "{host}"
    );
    assert!(
        api.get("ip").is_none(),
        "the controller reports only the NLB's hostname"
    );
    let ok = event(&raw, API_NS, "internal-lb", "SuccessfullyReconciled").await;
    assert_eq!(ok["type"], "Normal");

    // The old AWS rendering: a second internal Service on the same private IPs.
    let refused = second_internal_nlb_refused(&raw, &subnets, &ips).await;
    assert_eq!(refused["type"], "Warning");
    assert_eq!(refused["source"]["component"], "service");
    assert_eq!(refused["involvedObject"]["kind"], "Service");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.starts_with("Failed deploy model due to ")
            && message.contains("10.0.4.100")
            && message.contains("openshift-kube-apiserver/internal-lb"),
        "{message}"
    );
    assert_no_ingress(&sim, MCS_NS, MCS_LB);
    // The controller keeps trying: the same event, counted.
    let mut events = raw
        .watch(&format!("/api/v1/namespaces/{MCS_NS}/events?watch=true"))
        .await;
    events
        .until(|e| {
            e["object"]["reason"] == "FailedDeployModel" && e["object"]["count"].as_u64() >= Some(2)
        })
        .await;

    // Once the first NLB is gone, the IPs are free and the retry succeeds.
    delete_service(&raw, API_NS, "internal-lb").await;
    let healed = ingress(&raw, MCS_NS, MCS_LB).await;
    assert!(
        healed["hostname"]
            .as_str()
            .unwrap()
            .starts_with("k8s-openshif-internal-")
    );

    // Models the controller cannot build are refused before any claim.
    let bad = create_until_event(
        &raw,
        service(API_NS, "odd", nlb(&subnets, &ips[..1]), json!({})),
        "FailedBuildModel",
    )
    .await;
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .contains("count of private IPv4 addresses (1) and subnets (2) must match")
    );
}

/// `(lb name, lb id)` from an NLB hostname `<name>-<id>.elb.<region>.amazonaws.com`.
fn nlb_of(ingress: &Value) -> String {
    let host = ingress["hostname"].as_str().unwrap();
    let stem = host.split(".elb.").next().unwrap();
    let (name, id) = stem.rsplit_once('-').unwrap();
    format!("ELB net/{name}/{id}")
}

/// The ENI that the Elastic IP `allocation` is associated with, in the world moto shows.
fn eni_of_eip<'a>(world: &'a Value, allocation: &str) -> &'a Value {
    let eips = world["eips"].as_array().unwrap();
    let eip = eips.iter().find(|e| e["id"] == allocation).unwrap();
    let enis = world["enis"].as_array().unwrap();
    enis.iter()
        .find(|e| e["id"] == eip["eni"])
        .unwrap_or_else(|| panic!("{eip}"))
}

/// Creates the internet-facing NLB Service `ns/name` on the EIP `allocations` in `subnets`;
/// once it has its ingress, the description of its NLB's ENIs.
async fn public_nlb_of(
    raw: &Raw,
    ns: &str,
    name: &str,
    subnets: &[&str],
    allocations: &[&str],
) -> String {
    let annotations = public_nlb(subnets, allocations);
    create(raw, service(ns, name, annotations, json!({}))).await;
    nlb_of(&ingress(raw, ns, name).await)
}

/// moto with the AWS fixture's world (its asset dir in the temp dir): what exists.
async fn aws_world() -> (bootstrap_sim::AwsPeers, tempfile::TempDir, Value) {
    let peers = bootstrap_sim::AwsPeers::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/assets/aws");
    peers
        .setup_world(&fixture, &dir.path().join("assets"))
        .await
        .unwrap();
    let world = peers.inspect().await.unwrap();
    (peers, dir, world)
}

#[tokio::test(flavor = "multi_thread")]
async fn aws_nlbs_claim_their_addresses_in_moto_and_give_them_back() {
    let (peers, _dir, world) = aws_world().await;
    let subnet = |cidr: &str| -> String {
        world["subnets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["cidr"] == cidr)
            .unwrap_or_else(|| panic!("no subnet {cidr}: {world}"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (s1, s2, s4, s5) = (
        subnet("10.0.1.0/24"),
        subnet("10.0.2.0/24"),
        subnet("10.0.4.0/24"),
        subnet("10.0.5.0/24"),
    );
    let private = [s1.as_str(), s2.as_str()];
    let ips = ["10.0.1.100", "10.0.2.100"];
    // Someone else's ENI still holds the first IP (as the agent's placeholder does before
    // the hand-over).
    let holder = peers
        .create_eni(&s1, Some(ips[0]), "placeholder")
        .await
        .unwrap();

    let (sim, raw) = strict_sim(peers.lb_cloud()).await;
    let refused = create_until_event(
        &raw,
        service(API_NS, "internal-lb", nlb(&private, &ips), json!({})),
        "FailedDeployModel",
    )
    .await;
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains(ips[0]) && message.contains(&holder),
        "{message}"
    );
    assert_no_ingress(&sim, API_NS, "internal-lb");

    // The hand-over: the ENI goes, the controller's retry gets the IPs.
    peers.delete_eni(&holder).await.unwrap();
    let api = ingress(&raw, API_NS, "internal-lb").await;
    let description = nlb_of(&api);
    let enis = |world: &Value, ip: &str| -> Vec<Value> {
        world["enis"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ip"] == ip)
            .cloned()
            .collect()
    };
    let now = peers.inspect().await.unwrap();
    for (ip, subnet) in ips.iter().zip(&private) {
        let held = enis(&now, ip);
        assert_eq!(held.len(), 1, "{ip}: {held:?}");
        assert_eq!(held[0]["description"], description.as_str(), "{ip}");
        assert_eq!(held[0]["subnet"], *subnet);
    }

    // The old two-Service rendering: the second internal NLB on the same IPs is refused.
    let refused = second_internal_nlb_refused(&raw, &private, &ips).await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("openshift-kube-apiserver/internal-lb")
    );
    assert_no_ingress(&sim, MCS_NS, MCS_LB);

    // EIPs: each is associated with an ENI of the NLB in a public subnet, the i-th
    // allocation in the i-th subnet by ID (moto's ids are random).
    let (a1, _) = peers.allocate_eip().await.unwrap();
    let (a2, _) = peers.allocate_eip().await.unwrap();
    let public = [s4.as_str(), s5.as_str()];
    let ext_description = public_nlb_of(&raw, API_NS, "external-lb", &public, &[&a1, &a2]).await;
    let now = peers.inspect().await.unwrap();
    let mut by_id = public;
    by_id.sort();
    for (allocation, subnet) in [&a1, &a2].iter().zip(&by_id) {
        let eni = eni_of_eip(&now, allocation);
        assert_eq!(eni["description"], ext_description.as_str());
        assert_eq!(eni["subnet"], *subnet);
    }
    // An EIP associated elsewhere is refused.
    let (a3, _) = peers.allocate_eip().await.unwrap();
    let other = peers.create_eni(&s4, None, "a NAT instance").await.unwrap();
    peers.associate(&a3, &other).await.unwrap();
    let refused = create_until_event(
        &raw,
        service(MCS_NS, "taken", public_nlb(&public[..1], &[&a3]), json!({})),
        "FailedDeployModel",
    )
    .await;
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains(&a3) && message.contains(&other) && message.contains("already associated"),
        "{message}"
    );

    // Deleting the NLBs gives everything back: the MCS Service now gets the private IPs, and
    // a new Service the EIPs.
    delete_service(&raw, API_NS, "internal-lb").await;
    let mcs = ingress(&raw, MCS_NS, MCS_LB).await;
    delete_service(&raw, API_NS, "external-lb").await;
    let again = public_nlb_of(&raw, MCS_NS, "external-again", &public, &[&a1, &a2]).await;
    let now = peers.inspect().await.unwrap();
    for ip in ips {
        let held = enis(&now, ip);
        assert_eq!(held.len(), 1, "the first NLB's ENIs are gone: {held:?}");
        assert_eq!(held[0]["description"], nlb_of(&mcs).as_str());
    }
    let gone: Vec<&Value> = now["enis"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["description"] == description.as_str() || e["description"] == ext_description.as_str()
        })
        .collect();
    assert!(gone.is_empty(), "deleted NLBs leave no ENI: {gone:?}");
    for allocation in [&a1, &a2] {
        let eni = eni_of_eip(&now, allocation);
        assert_eq!(eni["description"], again.as_str());
    }
}

/// EC2 as boto3 hears it from moto_server.py: an Elastic IP an NLB's interface holds is not
/// released (`InvalidIPAddress.InUse`), and that interface, ELB's (requester-managed), is not
/// deleted by anyone else (`InvalidNetworkInterface.InUse`). Deleting the Service deletes the
/// NLB, which lets go of both only after the controller's release delay; then the release
/// succeeds.
#[tokio::test(flavor = "multi_thread")]
async fn aws_an_eip_an_nlb_holds_is_released_only_once_the_nlb_let_go() {
    let (peers, _dir, world) = aws_world().await;
    let public = world["subnets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["cidr"] == "10.0.4.0/24")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let delay = Duration::from_secs(3);
    let (_sim, raw) = strict_sim(CloudOptions {
        release_delay: delay,
        ..peers.lb_cloud()
    })
    .await;
    let (allocation, _) = peers.allocate_eip().await.unwrap();
    public_nlb_of(&raw, API_NS, "external-lb", &[&public], &[&allocation]).await;
    let now = peers.inspect().await.unwrap();
    let eni = eni_of_eip(&now, &allocation)["id"]
        .as_str()
        .unwrap()
        .to_string();

    let refused = format!("{:#}", peers.release_eip(&allocation).await.unwrap_err());
    assert!(refused.contains("InvalidIPAddress.InUse"), "{refused}");
    let refused = format!("{:#}", peers.delete_eni(&eni).await.unwrap_err());
    assert!(
        refused.contains("InvalidNetworkInterface.InUse"),
        "{refused}"
    );

    let deleted = std::time::Instant::now();
    delete_service(&raw, API_NS, "external-lb").await;
    // Refused (InUse) until the NLB let go; a boto3 call may itself outlast the delay on a
    // loaded machine, so what is asserted is when the release first succeeds.
    loop {
        match peers.release_eip(&allocation).await {
            Ok(()) => break,
            Err(e) if deleted.elapsed() < delay + Duration::from_secs(20) => {
                assert!(format!("{e:#}").contains("InUse"), "{e:#}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("never let go: {e:#}"),
        }
    }
    assert!(deleted.elapsed() >= delay, "released before the NLB let go");
    let now = peers.inspect().await.unwrap();
    assert!(
        now["eips"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["id"] != allocation.as_str()),
        "{now}"
    );
    assert!(
        now["enis"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["id"] != eni.as_str()),
        "ELB deleted its interface: {now}"
    );
}

/// The controller pairs the i-th allocation with the i-th subnet sorted by ID: a Service that
/// lists its public subnets in descending ID order gets the first EIP in the lowest subnet
/// (in moto: the interface holding it is in that subnet), not in the one listed first.
#[tokio::test(flavor = "multi_thread")]
async fn aws_eips_go_to_the_subnets_in_id_order_whatever_the_annotation_order() {
    let (peers, _dir, world) = aws_world().await;
    let mut public: Vec<String> = world["subnets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| ["10.0.4.0/24", "10.0.5.0/24"].contains(&s["cidr"].as_str().unwrap()))
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(public.len(), 2, "{world}");
    public.sort();
    public.reverse();
    let (_sim, raw) = strict_sim(peers.lb_cloud()).await;
    let (first, _) = peers.allocate_eip().await.unwrap();
    let (second, _) = peers.allocate_eip().await.unwrap();
    let subnets: Vec<&str> = public.iter().map(String::as_str).collect();
    public_nlb_of(&raw, API_NS, "external-lb", &subnets, &[&first, &second]).await;
    let now = peers.inspect().await.unwrap();
    assert_eq!(
        eni_of_eip(&now, &first)["subnet"],
        public[1].as_str(),
        "lowest id"
    );
    assert_eq!(eni_of_eip(&now, &second)["subnet"], public[0].as_str());
}

/// The backend security group, as the AWS Load Balancer Controller picks it on each target's
/// ENI in moto (the world's control plane: CAPA's three groups on each master's ENI, only
/// `<infra-id>-lb` tagged `kubernetes.io/cluster/<infra-id>`). As the installer makes them the
/// NLB serves. With none tagged, or two, the NLB is still built (its hostname is the ingress)
/// but registers no target, so it serves nothing, and the controller's own words say why;
/// tagging exactly one again heals it on the controller's next try.
#[tokio::test(flavor = "multi_thread")]
async fn aws_refuses_targets_whose_eni_has_no_or_several_tagged_security_groups() {
    let (peers, _dir, world) = aws_world().await;
    let cp = peers.control_plane().unwrap();
    assert_eq!(cp.ips.len(), 3, "{cp:?}");
    let key = format!("kubernetes.io/cluster/{}", cp.infra_id);
    let subnet = |cidr: &str| -> String {
        let subnets = world["subnets"].as_array().unwrap();
        let found = subnets.iter().find(|s| s["cidr"] == cidr).unwrap();
        found["id"].as_str().unwrap().to_string()
    };
    // The masters' subnet first: without cross-zone, only its zone's address reaches them.
    let private = [subnet("10.0.1.0/24"), subnet("10.0.2.0/24")];
    let private: Vec<&str> = private.iter().map(String::as_str).collect();
    let eni_of = |ip: &std::net::Ipv4Addr| -> String {
        let enis = world["enis"].as_array().unwrap();
        let eni = enis.iter().find(|e| e["ip"] == ip.to_string().as_str());
        eni.unwrap_or_else(|| panic!("no ENI holds {ip}: {world}"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first_eni = eni_of(&cp.ips[0]);
    let (sim, raw) = strict_sim(peers.lb_cloud()).await;

    // As the installer tags them: the NLB serves.
    let installer = ["10.0.1.100", "10.0.2.100"];
    create(
        &raw,
        service(API_NS, "internal-lb", nlb(&private, &installer), json!({})),
    )
    .await;
    assert!(
        serving_becomes(&sim, installer[0], true).await,
        "installer's groups"
    );

    // None tagged: built, no target.
    peers
        .tag_security_group(&cp.groups["lb"], &key, None)
        .await
        .unwrap();
    let untagged = ["10.0.1.101", "10.0.2.101"];
    let refused = create_until_event(
        &raw,
        service(API_NS, "untagged", nlb(&private, &untagged), json!({})),
        "FailedNetworkReconcile",
    )
    .await;
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "expected exactly one securityGroup tagged with {key} for eni "
        )) && message.ends_with(&format!(", got: [] (clusterName: {})", cp.infra_id)),
        "{message}"
    );
    // The targets are judged in IP order: the first master's ENI.
    assert!(
        message.contains(&format!("for eni {first_eni},")),
        "{message}"
    );
    assert!(ingress(&raw, API_NS, "untagged").await["hostname"].is_string());
    assert!(serving_becomes(&sim, untagged[0], false).await);
    assert!(
        !sim.serving_ips()
            .await
            .contains(&untagged[0].parse().unwrap())
    );

    // Two tagged: the controller names both, sorted.
    for role in ["lb", "node"] {
        peers
            .tag_security_group(&cp.groups[role], &key, Some("owned"))
            .await
            .unwrap();
    }
    let two = ["10.0.1.102", "10.0.2.102"];
    let refused = create_until_event(
        &raw,
        service(API_NS, "two", nlb(&private, &two), json!({})),
        "FailedNetworkReconcile",
    )
    .await;
    let mut both = [cp.groups["lb"].clone(), cp.groups["node"].clone()];
    both.sort();
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("got: [{} {}]", both[0], both[1])),
        "{message}"
    );
    assert!(!sim.serving_ips().await.contains(&two[0].parse().unwrap()));

    // One tagged again: the next try registers the targets of both.
    peers
        .tag_security_group(&cp.groups["node"], &key, None)
        .await
        .unwrap();
    assert!(serving_becomes(&sim, two[0], true).await, "healed");
    assert!(serving_becomes(&sim, untagged[0], true).await, "healed");
}

/// GCP and Azure: internal frontends from the compute subnet, shared by distinct ports only.
async fn internal_frontends_refuse(cloud: &str) {
    let (annotations, options, outside, inside): (fn(&str) -> Value, _, _, _) = match cloud {
        "gcp" => (
            |_ip: &str| json!({"networking.gke.io/load-balancer-type": "Internal"}),
            CloudOptions {
                gcp_compute_subnet: Some("10.0.128.0/17".parse().unwrap()),
                ..Default::default()
            },
            "10.0.0.9",
            "10.0.128.9",
        ),
        _ => (
            |ip: &str| {
                json!({"service.beta.kubernetes.io/azure-load-balancer-internal": "true",
                       "service.beta.kubernetes.io/azure-load-balancer-ipv4": ip})
            },
            CloudOptions {
                azure_compute_subnet: Some("10.0.1.0/24".parse().unwrap()),
                ..Default::default()
            },
            "10.0.0.9",
            "10.0.1.253",
        ),
    };
    let spec = |ip: &str| json!({"loadBalancerIP": ip});
    let (sim, raw) = strict_sim(options).await;
    let api = service(API_NS, "internal-lb", annotations(outside), spec(outside));
    let refused = refused_sync(&sim, &raw, cloud, api, &[outside]).await;
    assert_eq!(refused["type"], "Warning");
    assert_eq!(refused["source"]["component"], "service-controller");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.starts_with("Error syncing load balancer: failed to ensure load balancer: "),
        "{cloud}: {message}"
    );

    delete_service(&raw, API_NS, "internal-lb").await;
    create(
        &raw,
        service(API_NS, "internal-lb", annotations(inside), spec(inside)),
    )
    .await;
    assert_eq!(
        ingress(&raw, API_NS, "internal-lb").await,
        json!({"ip": inside, "ipMode": "VIP"})
    );
    create(
        &raw,
        mcs_on_the_api_frontend(annotations(inside), spec(inside)),
    )
    .await;
    assert_eq!(
        ingress(&raw, MCS_NS, MCS_LB).await["ip"],
        inside,
        "{cloud}: one IP fronts both Services, on distinct ports"
    );
    let same_port = service(MCS_NS, "same-port", annotations(inside), spec(inside));
    // The provider's words on Azure (`checkLoadBalancerResourcesConflicts`, naming the API
    // Service's rule `a<uid>-TCP-6443`); GCE's refusal of a duplicate IP:port on GCP.
    let api_rule = format!("{}-TCP-6443 ", lb_of(&raw, API_NS, "internal-lb").await);
    let duplicate = format!("Duplicate IP:port {inside}:6443-6443");
    let clash: Vec<&str> = match cloud {
        "gcp" => vec![&duplicate],
        _ => vec![
            "checkLoadBalancerResourcesConflicts: service port",
            "consume the port 6443",
            &api_rule,
        ],
    };
    refused_sync(&sim, &raw, cloud, same_port, &clash).await;
}

/// The load-balancer resource name (`a<uid>`) of the Service `ns/name`.
async fn lb_of(raw: &Raw, ns: &str, name: &str) -> String {
    let (_, svc) = raw
        .get(&format!("/api/v1/namespaces/{ns}/services/{name}"))
        .await;
    bootstrap_sim::kube::lb_resource_name(&svc)
}

#[tokio::test(flavor = "multi_thread")]
async fn gcp_refuses_an_internal_address_outside_the_compute_subnet_and_a_shared_port() {
    internal_frontends_refuse("gcp").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn azure_refuses_an_internal_ip_outside_the_compute_subnet_and_a_shared_port() {
    internal_frontends_refuse("azure").await;
}

/// A strict sim whose GCP controllers read `fake` (instance groups, addresses).
async fn gcp_sim(fake: &bootstrap_sim::gcp::GcpFake) -> (KubeSim, Raw) {
    strict_sim(CloudOptions {
        gcp_compute_subnet: fake.cloud_config_subnet_range(),
        gcp: Some(fake.lb_view()),
        ..Default::default()
    })
    .await
}

/// The internal API Service on `fake` (address 10.0.128.9): served, or with `refused` the
/// refusal's words that the Warning must name.
async fn gcp_internal_api_on(fake: &bootstrap_sim::gcp::GcpFake, refused: Option<(&str, &[&str])>) {
    let annotations = json!({"networking.gke.io/load-balancer-type": "Internal"});
    let svc = service(
        API_NS,
        "internal-lb",
        annotations,
        json!({"loadBalancerIP": "10.0.128.9"}),
    );
    let (sim, raw) = gcp_sim(fake).await;
    match refused {
        None => {
            create(&raw, svc).await;
            assert_eq!(
                ingress(&raw, API_NS, "internal-lb").await["ip"],
                "10.0.128.9"
            );
        }
        Some((why, names)) => {
            refused_sync(&sim, &raw, why, svc, names).await;
        }
    }
}

/// OpenShift's GCE provider builds an internal load balancer on the installer's per-zone
/// instance groups (`<infra-id>-master-<zone>`, reused by the cloud config's
/// `external-instance-groups-prefix`). With them the Service is served; without them the
/// control-plane machines and the workers of a zone go into one group of the provider's own,
/// which GCE refuses (`wrongSubnetwork`); groups of another name holding the control-plane
/// machines make GCE refuse a second load-balanced group
/// (`INSTANCE_IN_MULTIPLE_LOAD_BALANCED_IGS`). Either way no forwarding rule, no ingress.
#[tokio::test(flavor = "multi_thread")]
async fn gcp_internal_load_balancer_needs_the_installers_instance_groups() {
    use bootstrap_sim::gcp::{FakeOptions, GcpFake};
    let fake = GcpFake::start(FakeOptions::default()).await.unwrap();
    gcp_internal_api_on(&fake, None).await;

    let fake = GcpFake::start(FakeOptions::default()).await.unwrap();
    fake.remove_instance_groups(&[]);
    let names = [
        "wrongSubnetwork",
        "mycluster-master-subnet",
        "mycluster-worker-subnet",
        "k8s-ig--",
    ];
    gcp_internal_api_on(&fake, Some(("no instance groups", &names))).await;

    let mut options = FakeOptions::default();
    for (_, name, _) in &mut options.seed.instance_groups {
        *name = name.replace("mycluster-7xk2p-", "legacy-");
    }
    let fake = GcpFake::start(options).await.unwrap();
    let names = [
        "INSTANCE_IN_MULTIPLE_LOAD_BALANCED_IGS",
        "legacy-master-us-central1-",
    ];
    gcp_internal_api_on(&fake, Some(("groups of another name", &names))).await;
}

/// The reuse rule exactly (`filterNodesWithExistingExternalInstanceGroups`): a master group
/// is reused when every member but `<infra-id>-bootstrap` is a Node of its zone. The
/// bootstrap VM in it does not stop the reuse; a VM that is no Node yet (a replacement
/// control-plane machine) does, and the zone's master then lands in the provider's own group
/// while the installer's still holds it: GCE refuses (`INSTANCE_IN_MULTIPLE_LOAD_BALANCED_IGS`).
#[tokio::test(flavor = "multi_thread")]
async fn gcp_reuses_a_master_group_only_when_every_member_but_the_bootstrap_vm_is_a_node() {
    use bootstrap_sim::gcp::{FakeOptions, GcpFake, InstanceSeed};
    let options = FakeOptions::default();
    let with_bootstrap = options
        .seed
        .instance_groups
        .iter()
        .any(|(_, _, members)| members.iter().any(|m| m.ends_with("-bootstrap")));
    assert!(
        with_bootstrap,
        "the installer's seed has the bootstrap VM in a master group"
    );
    let fake = GcpFake::start(options).await.unwrap();
    gcp_internal_api_on(&fake, None).await;

    let mut options = FakeOptions::default();
    let (zone, _, members) = &mut options.seed.instance_groups[0];
    let replacement = "mycluster-7xk2p-master-3".to_string();
    members.push(replacement.clone());
    let zone = zone.clone();
    options.seed.instances.push(InstanceSeed {
        name: replacement,
        zone,
        subnetwork: "mycluster-master-subnet".into(),
        node: false,
        network_ip: Some("10.0.1.23".parse().unwrap()),
    });
    let fake = GcpFake::start(options).await.unwrap();
    // The zone's master goes to the provider's own group while the installer's (not reused)
    // still holds it.
    let names = [
        "INSTANCE_IN_MULTIPLE_LOAD_BALANCED_IGS",
        "mycluster-7xk2p-master-0",
        "k8s-ig--",
    ];
    gcp_internal_api_on(&fake, Some(("a member that is no Node", &names))).await;
}

/// GCE lets several internal forwarding rules share an IP only when its address has purpose
/// `SHARED_LOADBALANCER_VIP` (what the agent reserves): with an address of another purpose
/// the second Service's rule is refused with GCE's own error, and with the shared one both
/// Services are served.
#[tokio::test(flavor = "multi_thread")]
async fn gcp_second_internal_service_on_an_ip_needs_a_shared_loadbalancer_vip_address() {
    use bootstrap_sim::gcp::{FakeOptions, GcpFake};
    let annotations = json!({"networking.gke.io/load-balancer-type": "Internal"});
    let api_ports = json!([{"name": "https", "port": 6443, "protocol": "TCP"}]);
    let mcs_ports = json!([{"name": "mcs", "port": 22623, "protocol": "TCP"}]);
    for purpose in ["GCE_ENDPOINT", "SHARED_LOADBALANCER_VIP"] {
        let fake = GcpFake::start(FakeOptions::default()).await.unwrap();
        let address = fake.create_address("user-api-int", true, &[]).unwrap();
        fake.set_purpose("user-api-int", purpose);
        let ip = address["address"].as_str().unwrap().to_string();
        // The fake makes a user's internal address in its first subnetwork: the load
        // balancer's subnetwork here.
        let (sim, raw) = strict_sim(CloudOptions {
            gcp_compute_subnet: Some("10.0.0.0/17".parse().unwrap()),
            gcp: Some(fake.lb_view()),
            ..Default::default()
        })
        .await;
        let spec = |ports: &Value| json!({"loadBalancerIP": ip, "ports": ports});
        create(
            &raw,
            service(API_NS, "internal-lb", annotations.clone(), spec(&api_ports)),
        )
        .await;
        assert_eq!(
            ingress(&raw, API_NS, "internal-lb").await["ip"],
            ip.as_str()
        );
        let mcs = service(
            API_NS,
            "internal-lb-mcs",
            annotations.clone(),
            spec(&mcs_ports),
        );
        if purpose == "SHARED_LOADBALANCER_VIP" {
            create(&raw, mcs).await;
            assert_eq!(
                ingress(&raw, API_NS, "internal-lb-mcs").await["ip"],
                ip.as_str()
            );
        } else {
            let names = [
                "googleapi: Error 409: IP_IN_USE_BY_ANOTHER_RESOURCE",
                ip.as_str(),
            ];
            refused_sync(&sim, &raw, purpose, mcs, &names).await;
        }
    }
}

/// The GCE provider's `verifyUserRequestedIP`: a static address is taken only in the
/// Service's network tier (Premium unless `cloud.google.com/network-tier` says Standard), and
/// an address that is not a static one of the region not at all.
#[tokio::test(flavor = "multi_thread")]
async fn gcp_external_load_balancer_refuses_an_address_of_another_network_tier() {
    use bootstrap_sim::gcp::{FakeOptions, GcpFake};
    let fake = GcpFake::start(FakeOptions::default()).await.unwrap();
    let address = fake.create_address("user-api", false, &[]).unwrap();
    let ip = address["address"].as_str().unwrap().to_string();
    fake.set_network_tier("user-api", "STANDARD");
    let (sim, raw) = gcp_sim(&fake).await;
    let spec = json!({"loadBalancerIP": ip});
    let premium = service(API_NS, "external-lb", json!({}), spec.clone());
    let names = [ip.as_str(), "Standard network tier; expected Premium"];
    refused_sync(&sim, &raw, "standard address", premium, &names).await;
    delete_service(&raw, API_NS, "external-lb").await;

    let standard = json!({"cloud.google.com/network-tier": "Standard"});
    create(&raw, service(API_NS, "external-lb", standard, spec)).await;
    assert_eq!(
        ingress(&raw, API_NS, "external-lb").await["ip"],
        ip.as_str()
    );

    let not_static = service(
        API_NS,
        "other",
        json!({}),
        json!({"loadBalancerIP": "198.51.100.200"}),
    );
    let names = ["198.51.100.200", "neither static nor assigned to the LB"];
    refused_sync(&sim, &raw, "not static", not_static, &names).await;
}

/// cloud-provider-azure looks for a public Service's IP among the public IPs of the cluster's
/// resource group, or of the group `azure-load-balancer-resource-group` names.
#[tokio::test(flavor = "multi_thread")]
async fn azure_public_load_balancer_finds_a_public_ip_only_in_the_named_resource_group() {
    use bootstrap_sim::azure::{AzureSim, AzureSimOptions, CLUSTER_RG};
    let azure = AzureSim::start(AzureSimOptions::default()).await.unwrap();
    azure.create_user_public_ip("shared-ips-rg", "user-api", "52.1.2.3".parse().unwrap());
    let (sim, raw) = strict_sim(CloudOptions {
        azure: Some(azure.lb_view()),
        ..Default::default()
    })
    .await;
    let ipv4 = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
    let rg = "service.beta.kubernetes.io/azure-load-balancer-resource-group";
    let unnamed = service(API_NS, "external-lb", json!({ipv4: "52.1.2.3"}), json!({}));
    let names = [
        "cannot find public IP with IP address 52.1.2.3",
        &format!("in resource group {CLUSTER_RG}"),
    ];
    refused_sync(&sim, &raw, "the cluster's group", unnamed, &names).await;
    delete_service(&raw, API_NS, "external-lb").await;

    let named = json!({ipv4: "52.1.2.3", rg: "shared-ips-rg"});
    create(&raw, service(API_NS, "external-lb", named, json!({}))).await;
    assert_eq!(ingress(&raw, API_NS, "external-lb").await["ip"], "52.1.2.3");
}

/// Azure dual stack: a dual-stack internal Service gets a frontend per family, the IPv6 one
/// from the compute subnet's IPv6 prefix; an IPv6 outside it is refused; a single-stack
/// Service ignores its IPv6 annotation, as cloud-provider-azure does.
#[tokio::test(flavor = "multi_thread")]
async fn azure_dual_stack_internal_services_get_both_ips_from_the_compute_subnet() {
    let (sim, raw) = strict_sim(CloudOptions {
        azure_compute_subnet: Some("10.0.1.0/24".parse().unwrap()),
        azure_compute_subnet_ipv6: Some("fd00:10:0:2::/64".parse().unwrap()),
        ..Default::default()
    })
    .await;
    let annotations = |v6: &str| {
        json!({"service.beta.kubernetes.io/azure-load-balancer-internal": "true",
               "service.beta.kubernetes.io/azure-load-balancer-ipv4": "10.0.1.253",
               "service.beta.kubernetes.io/azure-load-balancer-ipv6": v6})
    };
    let dual = json!({"ipFamilyPolicy": "RequireDualStack", "ipFamilies": ["IPv4", "IPv6"]});

    let outside = service(
        API_NS,
        "outside",
        annotations("fd00:10:0:1::9"),
        dual.clone(),
    );
    let names = ["fd00:10:0:1::9", "fd00:10:0:2::/64"];
    refused_sync(&sim, &raw, "azure dual stack", outside, &names).await;
    delete_service(&raw, API_NS, "outside").await;

    let v6 = "fd00:10:0:2:c5ce:f6a6:3c97:2c8";
    create(
        &raw,
        service(API_NS, "internal-lb", annotations(v6), dual.clone()),
    )
    .await;
    assert_eq!(
        ingress_list(&raw, API_NS, "internal-lb").await,
        json!([{"ip": "10.0.1.253", "ipMode": "VIP"}, {"ip": v6, "ipMode": "VIP"}])
    );
    // The machine-config-server Service shares both frontends on its own port.
    create(&raw, mcs_on_the_api_frontend(annotations(v6), dual)).await;
    assert_eq!(
        ingress_list(&raw, MCS_NS, MCS_LB)
            .await
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // Single stack (no ipFamilies): only the IPv4 frontend, whatever the annotations say.
    create(
        &raw,
        service(
            MCS_NS,
            "single",
            annotations(v6),
            json!({"ports": [{"name": "x", "port": 8443, "targetPort": 8443}]}),
        ),
    )
    .await;
    assert_eq!(
        ingress_list(&raw, MCS_NS, "single").await,
        json!([{"ip": "10.0.1.253", "ipMode": "VIP"}])
    );
}

/// A ClusterRole bound to the user `agent` (what `kubectl create clusterrole` +
/// `clusterrolebinding` make).
fn agent_rbac(rules: Value) -> Vec<Value> {
    vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "agent"}, "rules": rules}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "agent"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "agent"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                             "name": "agent"}]}),
    ]
}

/// The sim as the user `agent` holding `rules` only.
async fn as_agent(rules: Value) -> KubeSim {
    KubeSim::start(KubeSimOptions {
        user: Some(bootstrap_sim::kube::User::new("agent", &[])),
        objects: agent_rbac(rules),
        ..Default::default()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn self_subject_access_reviews_answer_from_rbac_and_refuse_an_empty_spec() {
    let sim = as_agent(json!([{"apiGroups": [""], "resources": ["services"],
                               "verbs": ["patch"]}]))
    .await;
    let raw = Raw::new(&sim);
    let path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    let review = |verb: &str, group: &str, resource: &str| {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
               "spec": {"resourceAttributes": {"verb": verb, "group": group, "resource": resource,
                                               "namespace": "default"}}})
    };
    let (code, answer) = raw.post(path, review("patch", "", "services")).await;
    assert_eq!(code, 201, "{answer}");
    assert_eq!(answer["status"]["allowed"], true);
    assert_eq!(
        answer["status"]["reason"],
        "RBAC: allowed by ClusterRoleBinding \"agent\" of ClusterRole \"agent\" to User \"agent\""
    );
    let (code, answer) = raw
        .post(
            path,
            review("patch", "config.openshift.io", "clusterversions"),
        )
        .await;
    assert_eq!(code, 201, "{answer}");
    assert_eq!(answer["status"]["allowed"], false);
    // The admin (system:masters) may do everything.
    let admin = KubeSim::start(KubeSimOptions::default()).await.unwrap();
    let (_, answer) = Raw::new(&admin)
        .post(
            path,
            review("patch", "config.openshift.io", "clusterversions"),
        )
        .await;
    assert_eq!(answer["status"]["allowed"], true, "{answer}");
    // kube-apiserver's validation: exactly one of the attribute kinds.
    let (code, answer) = raw
        .post(path, json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {}}))
        .await;
    assert_eq!(code, 422, "{answer}");
}

/// Every request is authorized as kube-apiserver's RBAC does: what the user's roles allow
/// passes, anything else is a 403 `Status` with the authorization filter's message, before
/// anything changes; discovery stays open to every authenticated user.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_rbac_does_not_allow_is_forbidden_with_kube_apiservers_status() {
    let sim = as_agent(json!([
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["patch"]},
        {"apiGroups": ["config.openshift.io"], "resources": ["clusterversions"],
         "verbs": ["get"], "resourceNames": ["version"]},
    ]))
    .await;
    let raw = Raw::new(&sim);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}});
    let (code, body) = raw.post("/api/v1/namespaces/default/configmaps", cm).await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = raw.get("/api/v1/namespaces/default/configmaps/c").await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = raw
        .merge_patch(
            "/api/v1/namespaces/default/configmaps/c",
            r#"{"data":{"a":"2"}}"#,
        )
        .await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "configmaps \"c\" is forbidden: User \"agent\" cannot patch resource \"configmaps\" in API group \"\" in the namespace \"default\"",
               "reason": "Forbidden", "details": {"name": "c", "kind": "configmaps"}, "code": 403})
    );
    assert_eq!(
        sim.get("", "v1", "configmaps", Some("default"), "c")
            .unwrap()["data"]["a"],
        "1",
        "a refused patch changes nothing"
    );
    let (code, body) = raw.get("/api/v1/namespaces/default/configmaps").await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "configmaps is forbidden: User \"agent\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let (code, body) = raw
        .get("/apis/config.openshift.io/v1/clusterversions")
        .await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "clusterversions.config.openshift.io is forbidden: User \"agent\" cannot list resource \"clusterversions\" in API group \"config.openshift.io\" at the cluster scope"
    );
    assert_eq!(body["details"]["group"], "config.openshift.io");
    // resourceNames: `version` may be read (404: it does not exist yet), nothing else.
    let (code, _) = raw
        .get("/apis/config.openshift.io/v1/clusterversions/version")
        .await;
    assert_eq!(code, 404);
    let (code, _) = raw
        .get("/apis/config.openshift.io/v1/clusterversions/other")
        .await;
    assert_eq!(code, 403);
    for path in [
        "/api",
        "/apis",
        "/api/v1",
        "/apis/config.openshift.io/v1",
        "/version",
    ] {
        let (code, body) = raw.get(path).await;
        assert_eq!(code, 200, "{path}: {body}");
    }
    // An apply that would create the object needs `create` too (kube-apiserver's patch
    // handler authorizes it with the authorizer's reason alone, empty here).
    let svc = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"default"},"spec":{"ports":[{"port":443}]}}"#;
    let (code, body) = raw
        .apply(
            "/api/v1/namespaces/default/services/s",
            Some("agent"),
            true,
            svc,
        )
        .await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(body["message"], "services \"s\" is forbidden: ");
    assert!(
        sim.get("", "v1", "services", Some("default"), "s")
            .is_none()
    );
    // The sim's own roles are API objects: the admin reads them, the agent may not.
    let (code, _) = raw
        .get("/apis/rbac.authorization.k8s.io/v1/clusterroles/agent")
        .await;
    assert_eq!(code, 403);
    assert!(
        sim.get(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            None,
            "system:basic-user"
        )
        .is_some()
    );
}

/// The NLB settings of the AWS templates, as the AWS Load Balancer Controller takes them: a
/// malformed attribute map is a model it cannot build (`FailedBuildModel`), an attribute ELB
/// does not know on an NLB is refused when deployed (`FailedDeployModel`); neither gets an
/// ingress.
#[tokio::test(flavor = "multi_thread")]
async fn aws_nlb_settings_are_refused_as_the_controller_and_elb_refuse_them() {
    let (sim, raw) = strict_sim(CloudOptions::default()).await;
    let with = |name: &str, ip: &str, key: &str, value: &str| {
        let mut annotations = nlb(&["subnet-a"], &[ip]);
        annotations[format!("service.beta.kubernetes.io/{key}")] = json!(value);
        service(API_NS, name, annotations, json!({}))
    };
    let malformed = create_until_event(
        &raw,
        with(
            "malformed",
            "10.0.4.100",
            "aws-load-balancer-attributes",
            "load_balancing.cross_zone.enabled",
        ),
        "FailedBuildModel",
    )
    .await;
    assert!(
        malformed["message"].as_str().unwrap().contains(
            "failed to parse stringMap annotation, service.beta.kubernetes.io/aws-load-balancer-attributes"
        ),
        "{malformed}"
    );
    assert_no_ingress(&sim, API_NS, "malformed");
    let unknown = create_until_event(
        &raw,
        with(
            "unknown",
            "10.0.4.101",
            "aws-load-balancer-attributes",
            "idle_timeout.timeout_seconds=60",
        ),
        "FailedDeployModel",
    )
    .await;
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("attribute key 'idle_timeout.timeout_seconds' is not recognized"),
        "{unknown}"
    );
    assert_no_ingress(&sim, API_NS, "unknown");
    let bad_check = create_until_event(
        &raw,
        with(
            "bad-check",
            "10.0.4.102",
            "aws-load-balancer-healthcheck-protocol",
            "SSL",
        ),
        "FailedBuildModel",
    )
    .await;
    assert!(
        bad_check["message"]
            .as_str()
            .unwrap()
            .contains("unsupported health check protocol SSL")
    );
}

/// Whether a TLS handshake with the API server completes through `door` within 3 s (an NLB
/// that drops the traffic leaves it hanging).
async fn handshake_through(raw: &Raw, door: std::net::SocketAddr) -> bool {
    let tcp = tokio::net::TcpStream::connect(door).await.unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    matches!(
        tokio::time::timeout(Duration::from_secs(3), raw.connector.connect(name, tcp)).await,
        Ok(Ok(_))
    )
}

/// The internal NLB's managed security group opens its listeners to its source ranges only:
/// from the machine network a client reaches 22623 and 6443 through the NLB's IP, from
/// elsewhere its traffic is dropped on both ports (the ranges are per Service, not per
/// listener).
#[tokio::test(flavor = "multi_thread")]
async fn aws_internal_nlb_admits_only_its_source_ranges_on_every_listener() {
    let (sim, raw) = strict_sim(CloudOptions::default()).await;
    let mut svc = service(
        API_NS,
        "internal-lb",
        nlb(&["subnet-a"], &["10.0.4.100"]),
        json!({"loadBalancerSourceRanges": ["10.0.0.0/16"]}),
    );
    svc["spec"]["ports"] = json!([
        {"name": "https", "port": 6443, "targetPort": 6443},
        {"name": "machine-config-server", "port": 22623, "targetPort": 22623}
    ]);
    create(&raw, svc).await;
    let ip: std::net::IpAddr = "10.0.4.100".parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !sim.serving_ips().await.contains(&ip) {
        assert!(Instant::now() < deadline, "the NLB never served {ip}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for port in [6443, 22623] {
        let inside = sim
            .front_door_from(ip, port, Some("10.0.1.10".parse().unwrap()))
            .await
            .unwrap();
        let outside = sim
            .front_door_from(ip, port, Some("192.168.7.7".parse().unwrap()))
            .await
            .unwrap();
        assert!(
            handshake_through(&raw, inside).await,
            "{port} from the machine network"
        );
        assert!(
            !handshake_through(&raw, outside).await,
            "{port} from elsewhere"
        );
    }
}

/// The dns bench tells the API server's time apart from the agent's by these spans: one per
/// answered request, from its arrival to its answer; a watch stays open and is not one.
#[tokio::test(flavor = "multi_thread")]
async fn each_answered_request_is_a_busy_span_a_watch_is_not() {
    let sim = sim(quick()).await;
    let raw = Raw::new(&sim);
    let before = sim.busy_spans().len();
    let started = std::time::Instant::now();
    raw.get("/version").await;
    raw.get("/api/v1/namespaces").await;
    let spans = sim.busy_spans();
    assert_eq!(spans.len(), before + 2);
    for (from, to) in &spans[before..] {
        assert!(*from >= started && to >= from && *to <= std::time::Instant::now());
    }
    let _watch = raw
        .watch("/api/v1/namespaces/default/configmaps?watch=true")
        .await;
    assert_eq!(sim.busy_spans().len(), before + 2, "a watch is no span");
}

// ---- what the GCP and Azure providers refuse, and whom their load balancers forward to ----

/// Polls until `ip` serves (`serves`) or not, as `serving_ips` decides; false on a timeout.
async fn serving_becomes(sim: &KubeSim, ip: &str, serves: bool) -> bool {
    let ip: std::net::IpAddr = ip.parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if sim.serving_ips().await.contains(&ip) == serves {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// The GCE provider's address manager (`ensureAddressReservation`): with no address of the
/// region at the IP it reserves its own `a<uid>` and releases it at the end of the sync, so
/// none stays; an IP outside the cloud config's subnetwork cannot be reserved, and with no
/// address holding it the provider fails naming both errors. A second Service on the IP of
/// the first then has no `SHARED_LOADBALANCER_VIP` address: GCE refuses its forwarding rule,
/// until the first is gone. A VM's address (a worker's) likewise.
#[tokio::test(flavor = "multi_thread")]
async fn gcp_without_an_address_the_provider_reserves_its_own_and_a_second_rule_is_refused() {
    use bootstrap_sim::gcp::{FakeOptions, GcpFake};
    let fake = GcpFake::start(FakeOptions::default()).await.unwrap();
    let (sim, raw) = gcp_sim(&fake).await;
    let annotations = json!({"networking.gke.io/load-balancer-type": "Internal"});
    let on = |name: &str, ip: &str, port: u16| {
        service(
            API_NS,
            name,
            annotations.clone(),
            json!({"loadBalancerIP": ip, "ports": [{"name": "p", "port": port, "targetPort": 6443}]}),
        )
    };
    let outside = on("outside", "10.0.0.9", 6443);
    let names = [
        r#"failed to get address by IP "10.0.0.9" after reservation attempt, err: "googleapi: Error 404: Address with IP \"10.0.0.9\" was not found in region \"us-central1\"", reservation err: "googleapi: Error 400: Invalid value for field 'resource.address': '10.0.0.9'."#,
    ];
    refused_sync(&sim, &raw, "outside the subnetwork", outside, &names).await;
    delete_service(&raw, API_NS, "outside").await;

    create(&raw, on("internal-lb", "10.0.128.9", 6443)).await;
    assert_eq!(
        ingress(&raw, API_NS, "internal-lb").await["ip"],
        "10.0.128.9"
    );
    assert!(
        fake.addresses().is_empty(),
        "the provider's own address is released at the end of the sync: {:?}",
        fake.addresses()
    );
    let second = on("internal-lb-mcs", "10.0.128.9", 22623);
    let names = ["googleapi: Error 409: IP_IN_USE_BY_ANOTHER_RESOURCE - IP '10.0.128.9'"];
    refused_sync(&sim, &raw, "no shared address", second, &names).await;
    delete_service(&raw, API_NS, "internal-lb").await;
    assert_eq!(
        ingress(&raw, API_NS, "internal-lb-mcs").await["ip"],
        "10.0.128.9",
        "served once the first rule is gone (the refusal is retried)"
    );

    // A worker's primary address (the seed's workers sit at .30 of the compute subnet).
    let worker = on("on-a-worker", "10.0.128.30", 6443);
    let names = ["IP_IN_USE_BY_ANOTHER_RESOURCE - IP '10.0.128.30'"];
    refused_sync(&sim, &raw, "a VM's address", worker, &names).await;
}

/// An Azure internal Service, on the fake's compute subnet.
fn azure_internal(name: &str, ip: &str) -> Value {
    service(
        API_NS,
        name,
        json!({"service.beta.kubernetes.io/azure-load-balancer-internal": "true",
               "service.beta.kubernetes.io/azure-load-balancer-ipv4": ip}),
        json!({}),
    )
}

async fn azure_world() -> (bootstrap_sim::azure::AzureSim, KubeSim, Raw) {
    use bootstrap_sim::azure::{AzureSim, AzureSimOptions};
    let azure = AzureSim::start(AzureSimOptions::default()).await.unwrap();
    let (sim, raw) = strict_sim(CloudOptions {
        azure_compute_subnet: azure.compute_subnet_range(),
        azure: Some(azure.lb_view()),
        ..Default::default()
    })
    .await;
    (azure, sim, raw)
}

/// Azure's backend pool holds every node (masters included: `excludeMasterFromStandardLB:
/// false`) but those labelled `exclude-from-external-load-balancers`; every rule has the shared
/// probe, HTTP :10256 (5 s, 2 probes), answered by the node's service proxy. A
/// Standard load balancer does not fail open: with no backend passing its probe the frontend
/// serves nothing, ready endpoints or not. GCE's internal load balancer fails open.
#[tokio::test(flavor = "multi_thread")]
async fn azure_frontend_serves_only_through_a_healthy_backend_gcp_fails_open() {
    let (_azure, sim, raw) = azure_world().await;
    create(&raw, azure_internal("internal-lb", "10.0.1.253")).await;
    ingress(&raw, API_NS, "internal-lb").await;
    assert!(serving_becomes(&sim, "10.0.1.253", true).await);
    let backend = sim.azure_backend(API_NS, "internal-lb").unwrap();
    assert_eq!(backend["pool"], json!(["master-0", "master-1", "master-2"]));
    let probe = &backend["probes"][0];
    assert_eq!(probe["name"], "cluster-service-shared-health-probe");
    assert_eq!(probe["protocol"], "Http");
    assert_eq!(probe["port"], 10256);
    assert_eq!(
        (
            probe["intervalInSeconds"].as_i64(),
            probe["numberOfProbes"].as_i64()
        ),
        (Some(5), Some(2))
    );

    for node in ["master-0", "master-1"] {
        sim.set_service_proxy(node, false);
    }
    assert!(
        serving_becomes(&sim, "10.0.1.253", true).await,
        "one backend healthy"
    );
    sim.exclude_from_load_balancers("master-2", true);
    assert!(
        serving_becomes(&sim, "10.0.1.253", false).await,
        "the healthy node left the pool: no backend passes, nothing is forwarded"
    );
    assert_eq!(
        sim.azure_backend(API_NS, "internal-lb").unwrap()["pool"],
        json!(["master-0", "master-1"])
    );
    sim.set_service_proxy("master-1", true);
    assert!(serving_becomes(&sim, "10.0.1.253", true).await);

    let (sim, raw) = strict_sim(CloudOptions {
        gcp_compute_subnet: Some("10.0.128.0/17".parse().unwrap()),
        ..Default::default()
    })
    .await;
    let gcp = json!({"networking.gke.io/load-balancer-type": "Internal"});
    create(
        &raw,
        service(
            API_NS,
            "internal-lb",
            gcp,
            json!({"loadBalancerIP": "10.0.128.9"}),
        ),
    )
    .await;
    for node in ["master-0", "master-1", "master-2"] {
        sim.set_service_proxy(node, false);
    }
    assert!(
        serving_becomes(&sim, "10.0.128.9", true).await,
        "GCE fails open"
    );
    assert!(sim.azure_backend(API_NS, "internal-lb").is_none());
}

/// ARM refuses an internal frontend on a private IP a network interface holds (here the
/// bootstrap VM's NIC), naming that NIC's IP configuration.
#[tokio::test(flavor = "multi_thread")]
async fn azure_internal_ip_a_nic_holds_is_refused() {
    let (_azure, sim, raw) = azure_world().await;
    let names = [
        "PrivateIPAddressIsAllocated: IP configuration /subscriptions/",
        "/loadBalancers/mycluster-7xk2p-internal/frontendIPConfigurations/a",
        "is using the private IP address 10.0.1.10 which is already allocated to resource",
        "/networkInterfaces/mycluster-7xk2p-bootstrap-nic/ipConfigurations/pipConfig.",
    ];
    refused_sync(
        &sim,
        &raw,
        "bootstrap NIC",
        azure_internal("internal-lb", "10.0.1.10"),
        &names,
    )
    .await;
}

/// The cloud config's network security group (`<infra>-nsg`) must exist for every Service
/// (`reconcileSecurityGroup`); the public Service adds a rule from the `Internet` tag to its
/// public IP on its port, gone with the Service; an internal one adds none.
#[tokio::test(flavor = "multi_thread")]
async fn azure_security_group_must_exist_and_opens_only_the_public_ip() {
    let (azure, sim, raw) = azure_world().await;
    azure.create_user_public_ip(
        bootstrap_sim::azure::CLUSTER_RG,
        "user-api",
        "52.1.2.3".parse().unwrap(),
    );
    let ipv4 = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
    create(&raw, azure_internal("internal-lb", "10.0.1.253")).await;
    ingress(&raw, API_NS, "internal-lb").await;
    assert_eq!(
        azure.security_rules(),
        Some(vec![]),
        "an internal Service adds no rule"
    );
    create(
        &raw,
        service(API_NS, "external-lb", json!({ipv4: "52.1.2.3"}), json!({})),
    )
    .await;
    ingress(&raw, API_NS, "external-lb").await;
    let rules = azure.security_rules().unwrap();
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0]["sourceAddressPrefix"], "Internet");
    // One destination: the singular field, as the provider writes it (`SetDestinationPrefixes`).
    assert_eq!(rules[0]["destinationAddressPrefix"], "52.1.2.3");
    assert_eq!(rules[0].get("destinationAddressPrefixes"), None);
    assert_eq!(rules[0]["destinationPortRanges"], json!(["6443"]));
    assert_eq!(rules[0]["priority"], 500);
    // The name the real CCM gave this rule: the MD5 of `Tcp_Internet_6443`
    // (`GenerateAllowSecurityRuleName`, securityrule.go:45-71).
    assert_eq!(
        rules[0]["name"],
        "k8s-azure-lb_allow_IPv4_4ce3b725426836a7353a6fc9245b1979"
    );
    delete_service(&raw, API_NS, "external-lb").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while azure.security_rules() != Some(vec![]) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        azure.security_rules(),
        Some(vec![]),
        "the rule goes with its Service"
    );

    azure.remove_security_group();
    let names = [r#"nsg "mycluster-7xk2p-nsg" not found"#];
    refused_sync(
        &sim,
        &raw,
        "internal",
        azure_internal("other", "10.0.1.252"),
        &names,
    )
    .await;
    let public = service(MCS_NS, "external", json!({ipv4: "52.1.2.3"}), json!({}));
    refused_sync(&sim, &raw, "public", public, &names).await;
}

/// An adopted Basic public IP: the provider PUTs it back as Standard. ARM upgrades a Static
/// one nothing uses (the Service is served, the address now Standard), and refuses a
/// Dynamic one or one another resource uses.
#[tokio::test(flavor = "multi_thread")]
async fn azure_basic_public_ip_is_upgraded_or_refused_as_arm_does() {
    let (azure, sim, raw) = azure_world().await;
    let rg = bootstrap_sim::azure::CLUSTER_RG;
    let ipv4 = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
    let cases = [
        ("52.1.2.3", "Static", None, None),
        (
            "52.1.2.4",
            "Dynamic",
            None,
            Some("StandardSkuPublicIPAddressesMustBeStatic: Standard sku publicIp /subscriptions/"),
        ),
        (
            "52.1.2.5",
            "Static",
            Some(
                "/subscriptions/x/resourceGroups/y/providers/Microsoft.Network/networkInterfaces/vm-nic/ipConfigurations/ipconfig1",
            ),
            Some("PublicIPAddressInUseCannotUpdate: Public IP address /subscriptions/"),
        ),
    ];
    for (i, (ip, allocation, user, refusal)) in cases.iter().enumerate() {
        azure.create_user_public_ip(rg, &format!("basic-{i}"), ip.parse().unwrap());
        azure.set_public_ip_sku(ip.parse().unwrap(), "Basic", allocation);
        if let Some(user) = user {
            azure.attach_public_ip(ip.parse().unwrap(), user);
        }
        let svc = service(
            API_NS,
            &format!("external-{i}"),
            json!({ipv4: ip}),
            json!({}),
        );
        match refusal {
            None => {
                create(&raw, svc).await;
                assert_eq!(
                    ingress(&raw, API_NS, &format!("external-{i}")).await["ip"],
                    *ip
                );
                assert_eq!(
                    azure.public_ip_sku(ip.parse().unwrap()).as_deref(),
                    Some("Standard")
                );
            }
            Some(words) => {
                refused_sync(&sim, &raw, allocation, svc, &[words]).await;
                assert_eq!(
                    azure.public_ip_sku(ip.parse().unwrap()).as_deref(),
                    Some("Basic")
                );
            }
        }
    }
}

/// The Service `ns/name` as stored, None once it is gone.
async fn stored_service(raw: &Raw, ns: &str, name: &str) -> Option<Value> {
    let (code, body) = raw
        .get(&format!("/api/v1/namespaces/{ns}/services/{name}"))
        .await;
    match code {
        200 => Some(body),
        404 => None,
        other => panic!("{other}: {body}"),
    }
}

/// Until the Service `ns/name` is gone; how long that took from `since`.
async fn gone_after(raw: &Raw, ns: &str, name: &str, since: Instant) -> Duration {
    for _ in 0..200 {
        if stored_service(raw, ns, name).await.is_none() {
            return since.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{ns}/{name} never went")
}

/// A deleted LoadBalancer Service outlives its load balancer, held by its controller's
/// finalizer (the service controller's `service.kubernetes.io/load-balancer-cleanup`, the AWS
/// Load Balancer Controller's `service.k8s.aws/resources`): the DELETE answers 200 with the
/// object and its deletion timestamp, the ingress is cleared, and the Service goes once the
/// cloud let go of its addresses (release delay 800 ms); an NLB's Service goes once the NLB
/// is deleted, before ELB frees its interfaces. A Service whose model the controller cannot
/// build carries no finalizer and goes at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_service_stays_until_its_controller_deleted_the_load_balancer() {
    let release = Duration::from_millis(800);
    let (_sim, raw) = strict_sim(CloudOptions {
        release_delay: release,
        ..Default::default()
    })
    .await;
    let internal = json!({"networking.gke.io/load-balancer-type": "Internal"});
    let (subnets, ips) = (["subnet-a", "subnet-b"], ["10.0.4.100", "10.0.5.100"]);
    let cases = [
        (
            "internal-lb",
            service(
                API_NS,
                "internal-lb",
                internal,
                json!({"loadBalancerIP": "10.0.0.5"}),
            ),
            "service.kubernetes.io/load-balancer-cleanup gke.networking.io/l4-ilb-v1",
        ),
        (
            "nlb",
            service(API_NS, "nlb", nlb(&subnets, &ips), json!({})),
            "service.k8s.aws/resources",
        ),
    ];
    for (name, svc, finalizer) in cases {
        create(&raw, svc).await;
        ingress(&raw, API_NS, name).await;
        let held = stored_service(&raw, API_NS, name).await.unwrap();
        assert_eq!(
            held["metadata"]["finalizers"],
            json!(finalizer.split(' ').collect::<Vec<_>>()),
            "{name}: {held:#}"
        );
        let t0 = Instant::now();
        let (code, deleting) = raw
            .delete(&format!("/api/v1/namespaces/{API_NS}/services/{name}"))
            .await;
        assert_eq!(code, 200, "{deleting:#}");
        assert!(
            deleting["metadata"]["deletionTimestamp"].is_string(),
            "{name}: {deleting:#}"
        );
        let took = gone_after(&raw, API_NS, name, t0).await;
        if finalizer == "service.k8s.aws/resources" {
            assert!(took < release, "{name}: the NLB went first: {took:?}");
        } else {
            assert!(took >= release, "{name}: the rule went first: {took:?}");
        }
    }
    let unbuilt = create_until_event(
        &raw,
        service(API_NS, "odd", nlb(&subnets, &ips[..1]), json!({})),
        "FailedBuildModel",
    )
    .await;
    assert!(unbuilt["message"].is_string());
    let odd = stored_service(&raw, API_NS, "odd").await.unwrap();
    assert!(odd["metadata"].get("finalizers").is_none(), "{odd:#}");
    delete_service(&raw, API_NS, "odd").await;
    assert!(stored_service(&raw, API_NS, "odd").await.is_none());
}

/// The finalizers as OpenShift's GCE provider and the service controller write them
/// (openshift/cloud-provider-gcp 30cc04797f50): the service controller's
/// `service.kubernetes.io/load-balancer-cleanup` first (`syncLoadBalancerIfNeeded`,
/// `vendor/k8s.io/cloud-provider/controllers/service/controller.go:406`), then the provider's
/// `gke.networking.io/l4-ilb-v1` (internal, `gce_loadbalancer_internal.go:95`) or
/// `gke.networking.io/l4-netlb-v1` (external, `gce_loadbalancer_external.go:100`), each its
/// own write of `services/status` (`servicehelper.PatchService`, helper.go:133-143). On
/// deletion the provider's goes first, at the end of `EnsureLoadBalancerDeleted`
/// (`gce_loadbalancer_internal.go:452-453`, `gce_loadbalancer_external.go:424-425`), then the
/// service controller's (controller.go:395), and the Service goes.
#[tokio::test(flavor = "multi_thread")]
async fn gcp_provider_finalizers_follow_the_service_controllers_and_leave_before_it() {
    use bootstrap_sim::gcp::{FakeOptions, GcpFake};
    let fake = GcpFake::start(FakeOptions::default()).await.unwrap();
    let address = fake.create_address("user-api", false, &[]).unwrap();
    let external_ip = address["address"].as_str().unwrap().to_string();
    let (_sim, raw) = gcp_sim(&fake).await;
    let cleanup = "service.kubernetes.io/load-balancer-cleanup";
    let cases = [
        (
            "internal-lb",
            service(
                API_NS,
                "internal-lb",
                json!({"networking.gke.io/load-balancer-type": "Internal"}),
                json!({"loadBalancerIP": "10.0.128.9"}),
            ),
            "gke.networking.io/l4-ilb-v1",
        ),
        (
            "external-lb",
            service(
                API_NS,
                "external-lb",
                json!({}),
                json!({"loadBalancerIP": external_ip}),
            ),
            "gke.networking.io/l4-netlb-v1",
        ),
    ];
    for (name, svc, provider) in cases {
        let mut w = raw
            .watch(&format!(
                "/api/v1/namespaces/{API_NS}/services?watch=true&fieldSelector=metadata.name%3D{name}"
            ))
            .await;
        create(&raw, svc).await;
        // Every stored version of the Service's finalizers, in order, until it is gone.
        let mut seen: Vec<Value> = Vec::new();
        let mut record = |e: &Value| {
            let f = e["object"]["metadata"]["finalizers"].clone();
            let f = if f.is_null() { json!([]) } else { f };
            if seen.last() != Some(&f) {
                seen.push(f);
            }
        };
        loop {
            let e = w.event().await;
            record(&e);
            if e["object"]["status"]["loadBalancer"]["ingress"].is_array() {
                break;
            }
        }
        let held = stored_service(&raw, API_NS, name).await.unwrap();
        assert_eq!(
            held["metadata"]["finalizers"],
            json!([cleanup, provider]),
            "{name}: {held:#}"
        );
        // The controller wrote the Service through `status` only.
        let main_writes: Vec<&Value> = held["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["manager"] == "cloud-controller-manager" && m["subresource"] != "status")
            .collect();
        assert!(main_writes.is_empty(), "{name}: {main_writes:?}");
        let (code, _) = raw
            .delete(&format!("/api/v1/namespaces/{API_NS}/services/{name}"))
            .await;
        assert_eq!(code, 200);
        loop {
            let e = w.event().await;
            record(&e);
            if e["type"] == "DELETED" {
                break;
            }
        }
        // The watch began before the create: the first versions are the ones without any
        // finalizer, then cleanup alone, then both; the way out is the reverse.
        assert_eq!(
            seen,
            vec![
                json!([]),
                json!([cleanup]),
                json!([cleanup, provider]),
                json!([cleanup]),
                json!([]),
            ],
            "{name}"
        );
    }
}

/// With a real cloud-controller-manager building the load balancers (`bootstrap-sim real-ccm`,
/// `CloudOptions::external_controller`), the simulated controller serves no Service: no
/// ingress, no finalizer, and a deleted Service waits for the real controller's finalizer to
/// come off; endpoints are still published. The finalizer goes on and off as the service
/// controller writes it: a strategic-merge PATCH of `/status` (client-go's
/// `$setElementOrder` / `$deleteFromPrimitiveList` directives), which kube-apiserver's Service
/// status strategy keeps (it resets only the spec).
#[tokio::test(flavor = "multi_thread")]
async fn an_external_controller_builds_the_load_balancers_the_sim_only_publishes_endpoints() {
    let (_azure, _sim, raw) = {
        use bootstrap_sim::azure::{AzureSim, AzureSimOptions};
        let azure = AzureSim::start(AzureSimOptions::default()).await.unwrap();
        let (sim, raw) = strict_sim(CloudOptions {
            azure_compute_subnet: azure.compute_subnet_range(),
            azure: Some(azure.lb_view()),
            external_controller: true,
            ..Default::default()
        })
        .await;
        (azure, sim, raw)
    };
    create(&raw, azure_internal("internal-lb", "10.0.1.253")).await;
    let mut endpoints = raw
        .watch(&format!(
            "/api/v1/namespaces/{API_NS}/endpoints?watch=true&fieldSelector=metadata.name%3Dinternal-lb"
        ))
        .await;
    endpoints
        .until(|e| e["object"]["subsets"][0]["addresses"].is_array())
        .await;
    let path = format!("/api/v1/namespaces/{API_NS}/services/internal-lb");
    let (_, svc) = raw.get(&path).await;
    assert_eq!(
        svc["status"]["loadBalancer"]["ingress"],
        Value::Null,
        "{svc}"
    );
    assert_eq!(svc["metadata"]["finalizers"], Value::Null, "{svc}");

    let strategic = "application/strategic-merge-patch+json";
    let cleanup = "service.kubernetes.io/load-balancer-cleanup";
    let add =
        json!({"metadata": {"$setElementOrder/finalizers": [cleanup], "finalizers": [cleanup]}});
    let (code, svc) = raw
        .patch(&format!("{path}/status"), strategic, &add.to_string())
        .await;
    assert_eq!(code, 200, "{svc}");
    assert_eq!(svc["metadata"]["finalizers"], json!([cleanup]), "{svc}");
    let (code, svc) = raw.delete(&path).await;
    assert_eq!(code, 200, "{svc}");
    let (code, svc) = raw.get(&path).await;
    assert_eq!(code, 200, "held by the real controller's finalizer: {svc}");
    assert!(svc["metadata"]["deletionTimestamp"].is_string(), "{svc}");
    let remove = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [cleanup]}});
    let (code, svc) = raw
        .patch(&format!("{path}/status"), strategic, &remove.to_string())
        .await;
    assert_eq!(code, 200, "{svc}");
    let (code, _) = raw.get(&path).await;
    assert_eq!(code, 404, "gone once the finalizer is off");
}

/// The load-balancer name the GCE provider gives the Service `ns/name` (`a<uid>`).
async fn gce_lb_name(raw: &Raw, ns: &str, name: &str) -> String {
    let svc = stored_service(raw, ns, name).await.unwrap();
    let mut lb = format!(
        "a{}",
        svc["metadata"]["uid"].as_str().unwrap().replace('-', "")
    );
    lb.truncate(32);
    lb
}

/// A GCP world with our three Services' addresses (the internal one shared, as `reserve`
/// makes it) and `delay` per Operation: the sim, the fake, the internal and external IPs.
async fn gce_three_services(
    delay: Duration,
) -> (KubeSim, Raw, bootstrap_sim::gcp::GcpFake, String, String) {
    use bootstrap_sim::gcp::{FakeOptions, GcpFake};
    let fake = GcpFake::start(FakeOptions {
        operation_delay: delay,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let internal = fake.create_address("user-api-int", true, &[]).unwrap();
    fake.set_purpose("user-api-int", "SHARED_LOADBALANCER_VIP");
    let external = fake.create_address("user-api", false, &[]).unwrap();
    let (sim, raw) = strict_sim(CloudOptions {
        gcp_compute_subnet: Some("10.0.0.0/17".parse().unwrap()),
        gcp: Some(fake.lb_view()),
        ..Default::default()
    })
    .await;
    let ip = |a: &Value| a["address"].as_str().unwrap().to_string();
    (sim, raw, fake, ip(&internal), ip(&external))
}

fn gce_internal(name: &str, ip: &str, port: u16, sources: Value) -> Value {
    let ports = json!([{"name": "p", "port": port, "protocol": "TCP"}]);
    service(
        API_NS,
        name,
        json!({"networking.gke.io/load-balancer-type": "Internal"}),
        json!({"loadBalancerIP": ip, "ports": ports, "loadBalancerSourceRanges": sources}),
    )
}

/// What OpenShift's GCE provider built for our three Services against the GCE fake, run for
/// real (`bootstrap-sim real-ccm gcp`, openshift/cloud-provider-gcp 30cc04797f50): the
/// simulated provider builds the same 16 resources with the provider's fields
/// (`providers/gce/gce_loadbalancer_internal.go:58-268,512-613,889-908`,
/// `gce_loadbalancer_external.go:612-654,726-738,1027-1103,1153-1236`), and deletes them as
/// the provider does (`gce_loadbalancer_internal.go:375-510`, `gce_loadbalancer_external.go:340-499`):
/// shared ones (node health checks and their firewalls, `k8s-ig--` groups) only with the last
/// load balancer using them, so nothing of the provider's is left.
#[tokio::test(flavor = "multi_thread")]
async fn gcp_simulated_provider_builds_what_the_real_one_builds_and_leaves_nothing() {
    let (_sim, raw, fake, int_ip, ext_ip) = gce_three_services(Duration::ZERO).await;
    let view = fake.lb_view();
    create(&raw, gce_internal("internal-lb", &int_ip, 6443, json!([]))).await;
    create(
        &raw,
        gce_internal("internal-lb-mcs", &int_ip, 22623, json!(["10.0.0.0/16"])),
    )
    .await;
    let ext = service(
        API_NS,
        "external-lb",
        json!({}),
        json!({"loadBalancerIP": ext_ip}),
    );
    create(&raw, ext).await;
    for name in ["internal-lb", "internal-lb-mcs", "external-lb"] {
        ingress(&raw, API_NS, name).await;
    }
    let (api, mcs, public) = (
        gce_lb_name(&raw, API_NS, "internal-lb").await,
        gce_lb_name(&raw, API_NS, "internal-lb-mcs").await,
        gce_lb_name(&raw, API_NS, "external-lb").await,
    );
    let (p, r) = ("projects/example-project", "regions/us-central1");
    let node = "k8s-8f1c2a7d4e5b6c90-node";
    let mut wanted = vec![
        format!("{p}/global/firewalls/{node}-hc"),
        format!("{p}/global/firewalls/{node}-http-hc"),
        format!("{p}/global/healthChecks/{node}"),
        format!("{p}/global/httpHealthChecks/{node}"),
        format!("{p}/{r}/targetPools/{public}"),
    ];
    for lb in [&api, &mcs, &public] {
        wanted.push(format!("{p}/global/firewalls/k8s-fw-{lb}"));
        wanted.push(format!("{p}/{r}/forwardingRules/{lb}"));
    }
    for lb in [&api, &mcs] {
        wanted.push(format!("{p}/{r}/backendServices/{lb}"));
    }
    for zone in ["a", "b", "c"] {
        wanted.push(format!(
            "{p}/zones/us-central1-{zone}/instanceGroups/k8s-ig--8f1c2a7d4e5b6c90"
        ));
    }
    let mut made = fake.controller_made();
    made.sort();
    wanted.sort();
    assert_eq!(made, wanted, "16 resources, as the real provider made");

    // The traffic firewalls: the Service's sources (0.0.0.0/0 unset) to its IP and ports,
    // for the cloud config's node tags.
    let fw = |lb: &str| {
        view.resource(&format!("global/firewalls/k8s-fw-{lb}"))
            .unwrap()
    };
    let tags = json!([
        "mycluster-7xk2p-master",
        "mycluster-7xk2p-control-plane",
        "mycluster-7xk2p-worker"
    ]);
    for (lb, sources, port, ip) in [
        (&api, json!(["0.0.0.0/0"]), "6443", &int_ip),
        (&mcs, json!(["10.0.0.0/16"]), "22623", &int_ip),
        (&public, json!(["0.0.0.0/0"]), "6443", &ext_ip),
    ] {
        let fw = fw(lb);
        assert_eq!(fw["sourceRanges"], sources, "{fw:#}");
        assert_eq!(fw["destinationRanges"], json!([ip]), "{fw:#}");
        assert_eq!(
            fw["allowed"],
            json!([{"IPProtocol": "tcp", "ports": [port]}])
        );
        assert_eq!(fw["targetTags"], tags);
    }
    // The node checks: HTTP :10256 /healthz every 8 s, from Google's health-check ranges.
    let check = view
        .resource(&format!("global/healthChecks/{node}"))
        .unwrap();
    assert_eq!(
        check["httpHealthCheck"],
        json!({"port": 10256, "requestPath": "/healthz"})
    );
    assert_eq!(
        (
            &check["checkIntervalSec"],
            &check["timeoutSec"],
            &check["healthyThreshold"],
            &check["unhealthyThreshold"]
        ),
        (&json!(8), &json!(1), &json!(1), &json!(3))
    );
    let hc_fw = view
        .resource(&format!("global/firewalls/{node}-hc"))
        .unwrap();
    assert_eq!(
        hc_fw["sourceRanges"],
        json!([
            "130.211.0.0/22",
            "35.191.0.0/16",
            "209.85.152.0/22",
            "209.85.204.0/22"
        ])
    );
    assert_eq!(
        hc_fw["allowed"],
        json!([{"IPProtocol": "tcp", "ports": ["10256"]}])
    );
    // The internal backend service: the installer's master groups and the provider's own
    // group of the workers, per zone.
    let bs = view
        .resource(&format!("{r}/backendServices/{api}"))
        .unwrap();
    let groups: Vec<&str> = bs["backends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["group"].as_str().unwrap().rsplit('/').next().unwrap())
        .collect();
    assert_eq!(
        groups
            .iter()
            .filter(|g| g.starts_with("mycluster-7xk2p-master-"))
            .count(),
        3
    );
    assert_eq!(
        groups.iter().filter(|g| g.starts_with("k8s-ig--")).count(),
        3
    );
    assert_eq!(bs["loadBalancingScheme"], "INTERNAL");
    // The external load balancer: a target pool of every Node, a PREMIUM rule.
    let pool = view.resource(&format!("{r}/targetPools/{public}")).unwrap();
    assert_eq!(pool["instances"].as_array().unwrap().len(), 6, "{pool:#}");
    let rule = view
        .resource(&format!("{r}/forwardingRules/{public}"))
        .unwrap();
    assert_eq!(
        (
            &rule["loadBalancingScheme"],
            &rule["networkTier"],
            &rule["portRange"]
        ),
        (&json!("EXTERNAL"), &json!("PREMIUM"), &json!("6443-6443"))
    );

    // Deleting the first internal Service keeps what the second still uses.
    delete_service(&raw, API_NS, "internal-lb").await;
    let left = fake.controller_made();
    assert!(
        left.iter()
            .all(|k| !k.ends_with(&api) && !k.ends_with(&format!("k8s-fw-{api}"))),
        "{left:#?}"
    );
    assert!(
        left.contains(&format!("{p}/global/healthChecks/{node}")),
        "{left:#?}"
    );
    assert_eq!(
        left.iter()
            .filter(|k| k.contains("/instanceGroups/k8s-ig--"))
            .count(),
        3
    );
    delete_service(&raw, API_NS, "internal-lb-mcs").await;
    let left = fake.controller_made();
    assert!(
        !left
            .iter()
            .any(|k| k.contains("k8s-ig--") || k.ends_with(&format!("{node}-hc"))),
        "{left:#?}"
    );
    delete_service(&raw, API_NS, "external-lb").await;
    assert_eq!(fake.controller_made(), Vec::<String>::new());
    for a in fake.addresses() {
        assert!(a["users"].is_null(), "{a:#}");
    }
}

/// The service controller syncs one Service at a time and the GCE provider waits for every
/// Operation it starts (k8s.io/cloud-provider `controllers/service/controller.go`, one worker;
/// `k8s-cloud-provider/pkg/cloud/op.go:68-116`): the simulated provider's resources of one
/// Service are all made before any of the next one's, each a full Operation after the one
/// before, and the first Service's ingress waits for its 11 Operations (three `k8s-ig--`
/// groups and their members, the node check, backend service, rule and two firewalls).
#[tokio::test(flavor = "multi_thread")]
async fn gcp_simulated_provider_syncs_one_service_at_a_time_and_waits_each_operation() {
    let delay = Duration::from_millis(150);
    let (_sim, raw, fake, int_ip, ext_ip) = gce_three_services(delay).await;
    let view = fake.lb_view();
    let t0 = Instant::now();
    create(&raw, gce_internal("internal-lb", &int_ip, 6443, json!([]))).await;
    let ext = service(
        API_NS,
        "external-lb",
        json!({}),
        json!({"loadBalancerIP": ext_ip}),
    );
    create(&raw, ext).await;
    let (first, second) = tokio::join!(
        async {
            ingress(&raw, API_NS, "internal-lb").await;
            t0.elapsed()
        },
        async {
            ingress(&raw, API_NS, "external-lb").await;
            t0.elapsed()
        }
    );
    let (internal_ops, external_ops) = (11, 5);
    let (early, late) = if first < second {
        (first, second)
    } else {
        (second, first)
    };
    assert!(
        early >= delay * external_ops.min(internal_ops),
        "the first Service waited its Operations: {early:?}"
    );
    assert!(
        late >= delay * (internal_ops + external_ops),
        "the second Service waited for the first: {late:?}"
    );
    // Creation times, per Service: no interleaving, each one Operation apart at least.
    let created = |tail: String| -> std::time::SystemTime {
        let r = view.resource(&tail).unwrap();
        humantime::parse_rfc3339(r["creationTimestamp"].as_str().unwrap()).unwrap()
    };
    let (api, public) = (
        gce_lb_name(&raw, API_NS, "internal-lb").await,
        gce_lb_name(&raw, API_NS, "external-lb").await,
    );
    let r = "regions/us-central1";
    let internal = [
        "global/healthChecks/k8s-8f1c2a7d4e5b6c90-node".to_string(),
        format!("{r}/backendServices/{api}"),
        format!("{r}/forwardingRules/{api}"),
        format!("global/firewalls/k8s-fw-{api}"),
        "global/firewalls/k8s-8f1c2a7d4e5b6c90-node-hc".to_string(),
    ]
    .map(created);
    let external = [
        format!("global/firewalls/k8s-fw-{public}"),
        "global/firewalls/k8s-8f1c2a7d4e5b6c90-node-http-hc".to_string(),
        "global/httpHealthChecks/k8s-8f1c2a7d4e5b6c90-node".to_string(),
        format!("{r}/targetPools/{public}"),
        format!("{r}/forwardingRules/{public}"),
    ]
    .map(created);
    for run in [&internal[..], &external[..]] {
        for pair in run.windows(2) {
            let gap = pair[1].duration_since(pair[0]).unwrap_or_default();
            assert!(
                gap + Duration::from_millis(5) >= delay,
                "{gap:?} between two calls"
            );
        }
    }
    let apart = internal.iter().max() < external.iter().min()
        || external.iter().max() < internal.iter().min();
    assert!(apart, "one Service at a time: {internal:?} {external:?}");
}

/// What OpenShift's Azure CCM built for our three Services against the ARM fake
/// (`bootstrap-sim real-ccm azure`, openshift/cloud-provider-azure d04449b95a54), the simulated
/// controller builds in the fake: the load balancers `<infra>` and `<infra>-internal`
/// (`getAzureLoadBalancerName`, azure_loadbalancer.go:4088-4122), one internal frontend
/// `a<uid of internal-lb>` at the private IP that the machine-config-server Service's rule joins
/// (:4417-4433), rules `a<uid>-TCP-<port>` (floating IP, TCP reset, 4 min), the pool `<infra>`
/// with every Node VM's NIC (masters included: the installer sets
/// `excludeMasterFromStandardLB: false`, openshift/installer#5111), and the one shared probe
/// OpenShift's operator configures (HTTP :10256 `/healthz`; cluster-cloud-controller-manager-
/// operator `pkg/cloud/azure/azure.go:190-191`, azure_loadbalancer_healthprobe.go:33-45). A
/// Service whose sync put NICs in a pool waits their long-running PUTs (the SDK polls after
/// `Retry-After`). All of it goes with the Services, and ARM drops the NICs' pool references
/// with the load balancers.
#[tokio::test(flavor = "multi_thread")]
async fn azure_simulated_controller_builds_the_real_ccms_load_balancers_and_leaves_nothing() {
    let (azure, _sim, raw) = azure_world().await;
    for (i, ip) in ["10.0.0.5", "10.0.0.6", "10.0.0.7"].iter().enumerate() {
        azure.add_machine(&format!("master-{i}"), ip.parse().unwrap());
    }
    azure.create_user_public_ip(
        bootstrap_sim::azure::CLUSTER_RG,
        "user-api",
        "52.1.2.3".parse().unwrap(),
    );
    let t0 = Instant::now();
    create(&raw, azure_internal("internal-lb", "10.0.1.253")).await;
    ingress(&raw, API_NS, "internal-lb").await;
    // Its NICs joined the pool: the provider waits the NIC PUTs' Retry-After (1 s here).
    assert!(t0.elapsed() >= Duration::from_secs(1), "{:?}", t0.elapsed());
    let mut mcs = azure_internal("internal-lb-mcs", "10.0.1.253");
    mcs["spec"]["ports"] = json!([{"name": "mcs", "port": 22623, "targetPort": 22623}]);
    create(&raw, mcs).await;
    let ipv4 = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
    let ext = service(API_NS, "external-lb", json!({ipv4: "52.1.2.3"}), json!({}));
    create(&raw, ext).await;
    for name in ["internal-lb", "internal-lb-mcs", "external-lb"] {
        ingress(&raw, API_NS, name).await;
    }
    let (api, mcs, public) = (
        gce_lb_name(&raw, API_NS, "internal-lb").await,
        gce_lb_name(&raw, API_NS, "internal-lb-mcs").await,
        gce_lb_name(&raw, API_NS, "external-lb").await,
    );
    let view = azure.lb_view();
    let names = |lb: &Value, collection: &str| -> Vec<String> {
        let mut n: Vec<String> = lb["properties"][collection]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect();
        n.sort();
        n
    };
    let probe = "cluster-service-shared-health-probe".to_string();
    let internal = view.load_balancer("mycluster-7xk2p-internal").unwrap();
    assert_eq!(names(&internal, "frontendIPConfigurations"), [api.as_str()]);
    let mut rules = vec![format!("{api}-TCP-6443"), format!("{mcs}-TCP-22623")];
    rules.sort();
    assert_eq!(names(&internal, "loadBalancingRules"), rules);
    assert_eq!(names(&internal, "probes"), [probe.as_str()]);
    assert_eq!(names(&internal, "backendAddressPools"), ["mycluster-7xk2p"]);
    let frontend = &internal["properties"]["frontendIPConfigurations"][0]["properties"];
    assert_eq!(
        (
            &frontend["privateIPAddress"],
            &frontend["privateIPAllocationMethod"]
        ),
        (&json!("10.0.1.253"), &json!("Static"))
    );
    let rule = &internal["properties"]["loadBalancingRules"][0]["properties"];
    assert_eq!(
        (
            &rule["enableFloatingIP"],
            &rule["enableTcpReset"],
            &rule["idleTimeoutInMinutes"]
        ),
        (&json!(true), &json!(true), &json!(4))
    );
    let shared = &internal["properties"]["probes"][0]["properties"];
    assert_eq!(
        (&shared["protocol"], &shared["port"], &shared["requestPath"]),
        (&json!("Http"), &json!(10256), &json!("/healthz"))
    );
    let members =
        internal["properties"]["backendAddressPools"][0]["properties"]["backendIPConfigurations"]
            .as_array()
            .unwrap()
            .len();
    assert_eq!(members, 3, "every Node's NIC, the masters' included");
    let external = view.load_balancer("mycluster-7xk2p").unwrap();
    assert_eq!(
        names(&external, "frontendIPConfigurations"),
        [public.as_str()]
    );
    assert_eq!(
        names(&external, "loadBalancingRules"),
        [format!("{public}-TCP-6443")]
    );
    assert!(
        external["properties"]["frontendIPConfigurations"][0]["properties"]["publicIPAddress"]
            ["id"]
            .as_str()
            .unwrap()
            .ends_with("/publicIPAddresses/user-api")
    );

    // The first internal Service goes: its rule goes, the frontend stays for the second.
    delete_service(&raw, API_NS, "internal-lb").await;
    let internal = view.load_balancer("mycluster-7xk2p-internal").unwrap();
    assert_eq!(names(&internal, "frontendIPConfigurations"), [api.as_str()]);
    assert_eq!(
        names(&internal, "loadBalancingRules"),
        [format!("{mcs}-TCP-22623")]
    );
    delete_service(&raw, API_NS, "internal-lb-mcs").await;
    delete_service(&raw, API_NS, "external-lb").await;
    assert!(view.load_balancer("mycluster-7xk2p-internal").is_none());
    assert!(view.load_balancer("mycluster-7xk2p").is_none());
    assert_eq!(azure.nic_pool_references(), Vec::<(String, String)>::new());
}

/// A Node added after the Services are served lands in every load balancer's backend side,
/// as with the real controller: its service controller syncs every LoadBalancer Service on a
/// Node add (k8s.io/cloud-provider `controllers/service/controller.go:160-186`, vendored at
/// openshift/cloud-provider-gcp 30cc04797f50), the internal one putting the VM in the
/// provider's own `k8s-ig--<cluster-id>` group of its zone (`ensureInternalInstanceGroup`,
/// `providers/gce/gce_loadbalancer_internal.go:654-727`), the external one in its target
/// pool (`updateTargetPool`, `gce_loadbalancer_external.go:656-706`), then records
/// `UpdatedLoadBalancer` per Service (controller.go:841). The new VM is in no backend
/// before its Node exists.
#[tokio::test(flavor = "multi_thread")]
async fn gcp_simulated_provider_puts_a_node_added_later_in_every_backend() {
    let (_sim, raw, fake, int_ip, ext_ip) = gce_three_services(Duration::from_millis(20)).await;
    create(&raw, gce_internal("internal-lb", &int_ip, 6443, json!([]))).await;
    let ext = service(
        API_NS,
        "external-lb",
        json!({}),
        json!({"loadBalancerIP": ext_ip}),
    );
    create(&raw, ext).await;
    for name in ["internal-lb", "external-lb"] {
        ingress(&raw, API_NS, name).await;
    }
    let seed = fake.seed();
    let (zone, name) = ("us-central1-a", "mycluster-7xk2p-worker-a-n4v8q");
    fake.add_instance(name, zone, &seed.cloud_config_subnetwork)
        .unwrap();
    let held = fake.backends_holding(name);
    assert_eq!(
        held.len(),
        2,
        "a backend service and a target pool: {held:?}"
    );
    assert!(held.iter().all(|(_, holds)| !holds), "{held:?}");

    let node = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
        "spec": {"providerID": format!("gce://{}/{zone}/{name}", seed.project)}});
    let (code, body) = raw.post("/api/v1/nodes", node).await;
    assert_eq!(code, 201, "{body}");
    for svc in ["internal-lb", "external-lb"] {
        let e = event(&raw, API_NS, svc, "UpdatedLoadBalancer").await;
        assert_eq!(e["message"], "Updated load balancer with new hosts");
        assert_eq!(e["type"], "Normal");
    }
    let held = fake.backends_holding(name);
    assert!(held.iter().all(|(_, holds)| *holds), "{held:?}");
    // In the provider's own group of its zone, not in an installer's.
    let view = fake.lb_view();
    let groups = view.groups(zone);
    let own: Vec<_> = groups
        .iter()
        .filter(|(_, members)| members.iter().any(|m| m == name))
        .map(|(g, _)| g.as_str())
        .collect();
    assert_eq!(own, ["k8s-ig--8f1c2a7d4e5b6c90"]);
    let public = gce_lb_name(&raw, API_NS, "external-lb").await;
    let pool = view
        .resource(&format!("regions/us-central1/targetPools/{public}"))
        .unwrap();
    assert_eq!(pool["instances"].as_array().unwrap().len(), 7, "{pool:#}");
}
