//! The simulated installer's side of the hand-over: it reads the done-file and destroys the
//! bootstrap host at `complete`, and it leaves its documents in the cluster for day 2.

use super::network::{Alive, Network};
use super::{Timeline, lock};
use crate::kube::KubeSim;
use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// What the installer leaves in the cluster of the asset dir (cluster-bootstrap applies its
/// manifests): ConfigMap kube-system/cluster-config-v1, Infrastructure `cluster` with its
/// status, and the creds Secret when the assets have one.
pub(super) fn installer_left_in_the_cluster(
    kube: &KubeSim,
    assets: &std::path::Path,
) -> Result<()> {
    for file in [
        "manifests/cluster-config.yaml",
        "manifests/cluster-infrastructure-02-config.yml",
        "openshift/99_cloud-creds-secret.yaml",
    ] {
        let path = assets.join(file);
        if !path.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut doc: serde_json::Value = serde_saphyr::from_str(&text)
            .with_context(|| format!("{} is not YAML", path.display()))?;
        if let Some(meta) = doc["metadata"].as_object_mut() {
            meta.remove("creationTimestamp");
        }
        kube.create(doc)
            .with_context(|| format!("cannot create {file} in the cluster"))?;
    }
    Ok(())
}

/// Every 20 ms: which IPs answer (the load balancers that serve, the bootstrap host until it
/// is destroyed) and the installer's side: it reads the done-file and destroys the bootstrap
/// host at `complete`.
pub(super) async fn watch_installer_side(
    kube: Arc<KubeSim>,
    network: Arc<Network>,
    done_file: PathBuf,
    host: Arc<Mutex<BTreeSet<IpAddr>>>,
    t0: Instant,
    timeline: Arc<Mutex<Timeline>>,
    stop: watch::Receiver<bool>,
) {
    let mut destroyed = false;
    while !*stop.borrow() {
        let load_balancers = kube.serving_ips().await;
        if let Ok(text) = std::fs::read_to_string(&done_file)
            && let Ok(doc) = serde_json::from_str::<Value>(&text)
        {
            let at = t0.elapsed();
            let mut t = lock(&timeline);
            t.gate_passed.get_or_insert(at);
            if doc["phase"] == "complete" && !destroyed {
                destroyed = true;
                t.complete = Some(at);
                t.destroyed = Some(at);
            }
        }
        let bootstrap = match destroyed {
            false => lock(&host).clone(),
            true => BTreeSet::new(),
        };
        network.set_alive(Alive {
            bootstrap,
            load_balancers,
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
