//! What a real kube-apiserver lacks that the local API server provides, made by the harness
//! before the run (`--kubeconfig`): the custom resources' CRDs (ClusterVersion,
//! Infrastructure, DNS, ... as the local server serves them, established), the control-plane
//! namespaces with their `default` ServiceAccount (the token controller's; ServiceAccount
//! admission refuses pods without it), the Nodes, and on each control-plane Node the
//! kube-apiserver and machine-config-server pods, Running and Ready (the kubelet's).
//!
//! No kube-controller-manager runs beside the server: the harness plays the EndpointSlice and
//! Endpoints controllers (from the pods a Service selects; removed with the Service).
//!
//! The server outlives the run: what the harness makes carries [`HARNESS_LABEL`] and is
//! removed when the run ends ([`finish`]), with the agent's progress ConfigMap; a cluster
//! where an install has begun (a LoadBalancer Service, that ConfigMap) is refused.

use super::real_kube::RealKube;
use crate::kube::PodSet;
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// A pod the harness made: where its Services' endpoints point.
#[derive(Clone)]
struct Backend {
    namespace: String,
    name: String,
    labels: serde_json::Map<String, Value>,
    ip: String,
    node: String,
}

/// The label on everything the harness makes in the server (`metadata.labels`).
pub const HARNESS_LABEL: (&str, &str) = ("bootstrap-sim-real-ccm", "harness");

/// The agent's record of its progress (`kube-system/bootstrap-agent`): this run's.
const AGENT_CONFIGMAP: &str = "/api/v1/namespaces/kube-system/configmaps/bootstrap-agent";

/// `obj` with [`HARNESS_LABEL`].
pub fn labelled(mut obj: Value) -> Value {
    let (key, value) = HARNESS_LABEL;
    if !obj["metadata"]["labels"].is_object() {
        obj["metadata"]["labels"] = json!({});
    }
    obj["metadata"]["labels"][key] = json!(value);
    obj
}

/// Refuses a cluster where an install has begun: the run must start from none.
async fn refuse_a_used_cluster(kube: &RealKube) -> Result<()> {
    if kube.get(AGENT_CONFIGMAP).await?.is_some() {
        bail!("kube-system/bootstrap-agent exists: an install has run here (delete it)");
    }
    let services = kube.list("", "v1", "services").await?;
    if let Some(s) = services
        .iter()
        .find(|s| s["spec"]["type"] == "LoadBalancer")
    {
        bail!(
            "LoadBalancer Service {}/{} exists: the run needs a cluster without one",
            s["metadata"]["namespace"].as_str().unwrap_or_default(),
            s["metadata"]["name"].as_str().unwrap_or_default()
        );
    }
    Ok(())
}

/// Removes what the harness made and the agent's progress ConfigMap, once the run is done.
pub async fn finish(kube: &RealKube) -> Result<()> {
    remove_labelled(kube).await?;
    kube.delete(AGENT_CONFIGMAP).await
}

/// Removes the harness's labelled Nodes, pods, EndpointSlices, Endpoints and the agent's
/// RBAC (`least_privilege.rs`); pods at once: no kubelet confirms a graceful delete.
async fn remove_labelled(kube: &RealKube) -> Result<()> {
    let (key, value) = HARNESS_LABEL;
    for (collection, plural) in [
        ("/api/v1", "pods"),
        ("/apis/discovery.k8s.io/v1", "endpointslices"),
        ("/api/v1", "endpoints"),
        ("/api/v1", "nodes"),
        ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings"),
        ("/apis/rbac.authorization.k8s.io/v1", "clusterroles"),
        ("/api/v1", "serviceaccounts"),
    ] {
        let list = kube
            .get(&format!(
                "{collection}/{plural}?labelSelector={key}%3D{value}"
            ))
            .await?
            .unwrap_or_default();
        for item in list["items"].as_array().into_iter().flatten() {
            let name = item["metadata"]["name"].as_str().unwrap_or_default();
            let path = match item["metadata"]["namespace"].as_str() {
                Some(ns) => format!("{collection}/namespaces/{ns}/{plural}/{name}"),
                None => format!("{collection}/{plural}/{name}"),
            };
            kube.delete(&format!("{path}?gracePeriodSeconds=0")).await?;
        }
    }
    Ok(())
}

/// Creates the cluster in the server and starts the endpoints controller; the task ends
/// when the harness does.
pub async fn prepare(kube: &RealKube, nodes: Vec<Value>) -> Result<()> {
    refuse_a_used_cluster(kube).await?;
    // What a run stopped before the agent began left.
    remove_labelled(kube).await?;
    for crd in crate::kube::custom_resource_definitions() {
        kube.create(crd).await?;
    }
    established(kube).await?;
    let sets = PodSet::openshift();
    let namespaces: BTreeSet<&str> = sets.iter().map(|s| s.namespace.as_str()).collect();
    for ns in &namespaces {
        kube.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .await?;
        kube.create(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                           "metadata": {"name": "default", "namespace": ns}}))
            .await?;
    }
    let mut backends = Vec::new();
    for node in nodes {
        let name = node["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let ip = node["status"]["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["type"] == "InternalIP")
            .and_then(|a| a["address"].as_str())
            .unwrap_or_default()
            .to_string();
        let master = node["metadata"]["labels"]
            .get("node-role.kubernetes.io/master")
            .is_some();
        kube.create(labelled(node)).await?;
        if !master {
            continue;
        }
        for set in &sets {
            let pod = pod(set, &name, &ip);
            backends.push(Backend {
                namespace: set.namespace.clone(),
                name: pod["metadata"]["name"].as_str().unwrap_or_default().into(),
                labels: pod["metadata"]["labels"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                ip: ip.clone(),
                node: name.clone(),
            });
            kube.create(labelled(pod)).await?;
        }
    }
    let mut services = kube.events("", "v1", "services").await?;
    let kube = kube.clone();
    tokio::spawn(async move {
        while let Some((kind, svc)) = services.recv().await {
            if let Err(e) = sync_endpoints(&kube, &kind, &svc, &backends).await {
                eprintln!("real-ccm: the harness's endpoints controller: {e:#}");
            }
        }
    });
    Ok(())
}

/// Waits (at most a minute) until every CRD is Established (the server's apiextensions
/// controller), so its resources are served.
async fn established(kube: &RealKube) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    for crd in crate::kube::custom_resource_definitions() {
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}");
        loop {
            let live = kube.get(&path).await?.unwrap_or_default();
            let ok = live["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Established" && c["status"] == "True");
            if ok {
                break;
            }
            if Instant::now() > deadline {
                bail!("the CRD {name} was not established within a minute");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

/// A pod of `set` on `node`, host-networked, Running and Ready (as `kube::kubelet` makes it).
fn pod(set: &PodSet, node: &str, ip: &str) -> Value {
    let ports: Vec<Value> = set
        .ports
        .iter()
        .map(|p| json!({"containerPort": p, "hostPort": p, "protocol": "TCP"}))
        .collect();
    let now = crate::gcp::now_rfc3339();
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": format!("{}-{node}", set.name), "namespace": set.namespace,
                     "labels": set.labels},
        "spec": {
            "nodeName": node,
            "hostNetwork": true,
            "automountServiceAccountToken": false,
            "containers": [{"name": set.name, "image": "registry.invalid/none", "ports": ports}],
        },
        "status": {
            "phase": "Running",
            "hostIP": ip,
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": now,
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
        },
    })
}

/// The Service's EndpointSlice and Endpoints from the pods its selector matches; removed
/// with the Service.
async fn sync_endpoints(
    kube: &RealKube,
    kind: &str,
    svc: &Value,
    backends: &[Backend],
) -> Result<()> {
    let ns = svc["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = svc["metadata"]["name"].as_str().unwrap_or_default();
    let Some(selector) = svc["spec"]["selector"].as_object() else {
        return Ok(());
    };
    let slice_path = format!("/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices/{name}");
    let endpoints_path = format!("/api/v1/namespaces/{ns}/endpoints/{name}");
    if kind == "DELETED" {
        kube.delete(&slice_path).await?;
        return kube.delete(&endpoints_path).await;
    }
    if kube.get(&slice_path).await?.is_some() {
        return Ok(());
    }
    let members: Vec<&Backend> = backends
        .iter()
        .filter(|b| b.namespace == ns)
        .filter(|b| selector.iter().all(|(k, v)| b.labels.get(k) == Some(v)))
        .collect();
    let ports: Vec<(Value, Value, Value)> = svc["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let target = match &p["targetPort"] {
                Value::Number(n) => json!(n),
                _ => p["port"].clone(),
            };
            let protocol = p.get("protocol").cloned().unwrap_or(json!("TCP"));
            (
                p.get("name").cloned().unwrap_or(json!("")),
                target,
                protocol,
            )
        })
        .collect();
    let uid = svc["metadata"]["uid"].clone();
    let target = |b: &Backend| json!({"kind": "Pod", "namespace": ns, "name": b.name});
    kube.create(labelled(json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": name, "namespace": ns,
            "labels": {"kubernetes.io/service-name": name,
                       "endpointslice.kubernetes.io/managed-by": "bootstrap-sim-real-ccm"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": name,
                                 "uid": uid, "controller": true}],
        },
        "addressType": "IPv4",
        "endpoints": members.iter().map(|b| json!({
            "addresses": [b.ip],
            "conditions": {"ready": true, "serving": true, "terminating": false},
            "nodeName": b.node, "targetRef": target(b)})).collect::<Vec<_>>(),
        "ports": ports.iter().map(|(n, p, proto)| json!({"name": n, "port": p, "protocol": proto}))
            .collect::<Vec<_>>(),
    })))
    .await
    .with_context(|| format!("the EndpointSlice of {ns}/{name}"))?;
    let subset_ports: Vec<Value> = ports
        .iter()
        .map(|(n, p, proto)| match n.as_str().filter(|n| !n.is_empty()) {
            Some(n) => json!({"name": n, "port": p, "protocol": proto}),
            None => json!({"port": p, "protocol": proto}),
        })
        .collect();
    let addresses: Vec<Value> = members
        .iter()
        .map(|b| json!({"ip": b.ip, "nodeName": b.node, "targetRef": target(b)}))
        .collect();
    let subsets = if addresses.is_empty() {
        json!([])
    } else {
        json!([{"addresses": addresses, "ports": subset_ports}])
    };
    kube.create(labelled(json!({"apiVersion": "v1", "kind": "Endpoints",
                       "metadata": {"name": name, "namespace": ns}, "subsets": subsets})))
        .await
        .with_context(|| format!("the Endpoints of {ns}/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::{KubeSim, KubeSimOptions};

    fn labelled_names(kube: &KubeSim, plural: &str) -> Vec<String> {
        let (group, version) = match plural {
            "endpointslices" => ("discovery.k8s.io", "v1"),
            _ => ("", "v1"),
        };
        let (key, value) = HARNESS_LABEL;
        kube.list(group, version, plural, None)
            .into_iter()
            .filter(|o| o["metadata"]["labels"][key] == value)
            .filter_map(|o| Some(o["metadata"]["name"].as_str()?.to_string()))
            .collect()
    }

    /// What the harness makes in a real kube-apiserver, made through the same client in the
    /// local API server (which serves no ServiceAccounts: `prepare`'s parts, not itself): a
    /// labelled Node and pod, a Service's EndpointSlice and Endpoints from it, all removed
    /// by `finish` with the agent's ConfigMap; a used cluster refused.
    #[tokio::test(flavor = "multi_thread")]
    async fn plays_the_endpoints_controller_and_removes_what_it_made() {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let sim = KubeSim::start(KubeSimOptions::default()).await.unwrap();
        let kube = RealKube::open(sim.kubeconfig_path()).unwrap();
        refuse_a_used_cluster(&kube).await.unwrap();
        let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cp-7"}});
        kube.create(labelled(node)).await.unwrap();
        let set = PodSet::openshift().remove(0);
        let ns = json!({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": set.namespace}});
        kube.create(ns).await.unwrap();
        let pod = pod(&set, "cp-7", "10.0.0.77");
        let backend = Backend {
            namespace: set.namespace.clone(),
            name: "kube-apiserver-cp-7".into(),
            labels: pod["metadata"]["labels"].as_object().cloned().unwrap(),
            ip: "10.0.0.77".into(),
            node: "cp-7".into(),
        };
        kube.create(labelled(pod)).await.unwrap();
        assert_eq!(labelled_names(&sim, "nodes"), vec!["cp-7"]);
        assert_eq!(labelled_names(&sim, "pods"), vec!["kube-apiserver-cp-7"]);

        let svc = sim
            .create(json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "probe", "namespace": set.namespace},
                "spec": {"selector": set.labels, "ports": [{"port": 6443}]}}))
            .unwrap();
        sync_endpoints(&kube, "ADDED", &svc, &[backend])
            .await
            .unwrap();
        let slice = sim
            .get(
                "discovery.k8s.io",
                "v1",
                "endpointslices",
                Some(&set.namespace),
                "probe",
            )
            .unwrap();
        assert_eq!(slice["endpoints"][0]["addresses"][0], "10.0.0.77");
        assert_eq!(
            slice["endpoints"][0]["targetRef"]["name"],
            "kube-apiserver-cp-7"
        );
        let endpoints = sim
            .get("", "v1", "endpoints", Some(&set.namespace), "probe")
            .unwrap();
        assert_eq!(endpoints["subsets"][0]["addresses"][0]["ip"], "10.0.0.77");

        sim.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "bootstrap-agent", "namespace": "kube-system"}}))
            .unwrap();
        let refused = refuse_a_used_cluster(&kube).await.unwrap_err().to_string();
        assert!(
            refused.contains("kube-system/bootstrap-agent exists"),
            "{refused}"
        );
        finish(&kube).await.unwrap();
        for plural in ["nodes", "pods", "endpointslices", "endpoints"] {
            assert_eq!(
                labelled_names(&sim, plural),
                Vec::<String>::new(),
                "{plural}"
            );
        }
        assert!(kube.get(AGENT_CONFIGMAP).await.unwrap().is_none());
        refuse_a_used_cluster(&kube).await.unwrap();
    }

    /// A watch the server ends whose resourceVersion is then gone (410 Expired in the
    /// stream, as kube-apiserver's watch cache sends it): listed again, each object sent as
    /// ADDED, so a Node made meanwhile is seen (and the first again).
    #[tokio::test(flavor = "multi_thread")]
    async fn a_watch_whose_version_is_gone_lists_again() {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let options = KubeSimOptions {
            history_limit: 1,
            ..Default::default()
        };
        let sim = KubeSim::start(options).await.unwrap();
        let kube = RealKube::open(sim.kubeconfig_path()).unwrap();
        let mut events = kube.events("", "v1", "nodes").await.unwrap();
        let node =
            |name: &str| json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}});
        sim.create(node("first")).unwrap();
        let (kind, obj) = events.recv().await.unwrap();
        assert_eq!(
            (kind.as_str(), &obj["metadata"]["name"]),
            ("ADDED", &json!("first"))
        );
        // The watch ends; before the client is back, history moves past its version.
        sim.drop_watches();
        for name in ["second", "third", "fourth"] {
            sim.create(node(name)).unwrap();
        }
        let mut seen = Vec::new();
        while !seen.contains(&"fourth".to_string()) {
            let (kind, obj) = tokio::time::timeout(Duration::from_secs(10), events.recv())
                .await
                .unwrap()
                .unwrap();
            assert_eq!(kind, "ADDED");
            seen.push(obj["metadata"]["name"].as_str().unwrap().to_string());
        }
        assert!(
            seen.contains(&"first".to_string()),
            "listed again: {seen:?}"
        );
    }
}
