//! What the harness reads off the API server while the agent and the CCM work: our
//! LoadBalancer Services, when each got its ingress, when the gate passed, the CCM's Events.

use super::CloudUnderTest;
use super::kube::Kube;
use anyhow::Result;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// One of our LoadBalancer Services as it is now.
pub struct OurService {
    pub namespace: String,
    pub name: String,
    /// The addresses it asks for: its annotations' (Azure) or `spec.loadBalancerIP` (GCP).
    pub ips: Vec<std::net::IpAddr>,
    pub ports: Vec<u16>,
    pub finalizers: Value,
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// Our LoadBalancer Services now.
pub async fn our_services(kube: &Kube) -> Result<Vec<OurService>> {
    Ok(kube
        .list("", "v1", "services")
        .await?
        .into_iter()
        .filter(|s| s["spec"]["type"] == "LoadBalancer")
        .map(|s| {
            let annotated = s["metadata"]["annotations"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| {
                    k.contains("load-balancer-ipv4") || k.contains("load-balancer-ipv6")
                })
                .filter_map(|(_, v)| v.as_str()?.parse().ok());
            let spec_ip = s["spec"]["loadBalancerIP"]
                .as_str()
                .and_then(|ip| ip.parse().ok());
            let ports = s["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| u16::try_from(p["port"].as_u64()?).ok())
                .collect();
            OurService {
                namespace: text(&s["metadata"]["namespace"]),
                name: text(&s["metadata"]["name"]),
                ips: annotated.chain(spec_ip).collect(),
                ports,
                finalizers: s["metadata"]["finalizers"].clone(),
            }
        })
        .collect())
}

/// When the last of `services` was served by its load balancer on each of its addresses and
/// ports (None: one never was).
pub fn all_served_at(cloud: &impl CloudUnderTest, services: &[OurService]) -> Option<Instant> {
    let mut latest: Option<Instant> = None;
    for svc in services {
        for ip in &svc.ips {
            for port in &svc.ports {
                let at = cloud.serving_since(*ip, *port)?;
                latest = Some(latest.map_or(at, |l| l.max(at)));
            }
        }
    }
    latest
}

/// The Events on Services written by anyone but the agent (the CCM), as
/// `ns/name Type Reason: message`, each once.
/// Only those of this run (at or after `since`, to the second): a real server keeps an
/// earlier run's.
pub async fn ccm_events(kube: &Kube, since: SystemTime) -> Result<Vec<String>> {
    let this_run = |e: &Value| {
        let stamps = [
            &e["lastTimestamp"],
            &e["eventTime"],
            &e["metadata"]["creationTimestamp"],
        ];
        let at = stamps
            .iter()
            .find_map(|t| humantime::parse_rfc3339_weak(t.as_str()?).ok());
        at.is_none_or(|at| at + Duration::from_secs(1) >= since)
    };
    let mut out: Vec<String> = kube
        .list("", "v1", "events")
        .await?
        .iter()
        .filter(|e| e["involvedObject"]["kind"] == "Service")
        .filter(|e| this_run(e))
        .filter(|e| e["source"]["component"] != "bootstrap-agent")
        .map(|e| {
            format!(
                "{}/{} {} {}: {}",
                text(&e["involvedObject"]["namespace"]),
                text(&e["involvedObject"]["name"]),
                text(&e["type"]),
                text(&e["reason"]),
                text(&e["message"])
            )
        })
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// When each LoadBalancer Service (namespace, name) first had an ingress.
pub type IngressTimes = Arc<Mutex<BTreeMap<(String, String), Instant>>>;

/// When each LoadBalancer Service first had an ingress, recorded from now on.
pub async fn ingress_watch(kube: &Kube) -> Result<IngressTimes> {
    let mut changes = kube.changes("", "v1", "services").await?;
    let seen = Arc::new(Mutex::new(BTreeMap::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Some(svc) = changes.recv().await {
            let has_ingress = svc["status"]["loadBalancer"]["ingress"]
                .as_array()
                .is_some_and(|i| !i.is_empty());
            if has_ingress {
                let key = (
                    text(&svc["metadata"]["namespace"]),
                    text(&svc["metadata"]["name"]),
                );
                let mut map = record.lock().unwrap_or_else(|p| p.into_inner());
                map.entry(key).or_insert_with(Instant::now);
            }
        }
    });
    Ok(seen)
}

/// When the agent's gate first passed: the first write of the ConfigMap
/// `kube-system/bootstrap-agent` with `phase: gate-passed`, watched from before `run`.
pub async fn gate_watch(kube: &Kube) -> Result<tokio::task::JoinHandle<Option<Instant>>> {
    let mut changes = kube.changes("", "v1", "configmaps").await?;
    Ok(tokio::spawn(async move {
        while let Some(cm) = changes.recv().await {
            let ours = cm["metadata"]["namespace"] == "kube-system"
                && cm["metadata"]["name"] == "bootstrap-agent";
            if ours && cm["data"]["phase"] == "gate-passed" {
                return Some(Instant::now());
            }
        }
        None
    }))
}

/// Watches the Events from now on: the returned task ends once each of `services` got an
/// `UpdatedLoadBalancer` Event (the CCM syncs every Service on a Node change, one after
/// another), true; false after `limit`. Its calls until then are the node change's.
pub async fn all_updated(
    kube: &Kube,
    services: &[OurService],
    limit: Duration,
) -> Result<tokio::task::JoinHandle<bool>> {
    let mut changes = kube.changes("", "v1", "events").await?;
    let mut waiting: BTreeSet<(String, String)> = services
        .iter()
        .map(|s| (s.namespace.clone(), s.name.clone()))
        .collect();
    Ok(tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + limit;
        while !waiting.is_empty() {
            match tokio::time::timeout_at(deadline, changes.recv()).await {
                Ok(Some(e)) if e["reason"] == "UpdatedLoadBalancer" => {
                    let about = &e["involvedObject"];
                    let key = (
                        about["namespace"].as_str().unwrap_or_default().to_string(),
                        about["name"].as_str().unwrap_or_default().to_string(),
                    );
                    waiting.remove(&key);
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => return false,
            }
        }
        true
    }))
}

/// Waits (at most a minute) until no LoadBalancer Service is left (the CCM took its finalizer
/// off once it deleted the load balancer) and nothing the CCM made is left in the cloud (it
/// deletes what Services share, e.g. GCP's instance group, once the last is gone). The cloud
/// changes where nothing can be watched: it is read every 100 ms.
pub async fn settle(kube: &Kube, cloud: &impl CloudUnderTest) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let services_gone = our_services(kube).await.is_ok_and(|s| s.is_empty());
        if services_gone && cloud.left_ccm().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Milliseconds from `from` to `to`, negative when `to` came first.
pub fn signed_ms(from: Instant, to: Instant) -> i64 {
    let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    if to >= from {
        ms(to - from)
    } else {
        -ms(from - to)
    }
}
