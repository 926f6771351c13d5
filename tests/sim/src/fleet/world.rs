//! The fleet's world: one cloud's peers (one account / project / subscription) holding `n`
//! clusters in the same network, each with its own infra id, bootstrap host and asset dir,
//! all sharing the zones (the clusters of `tests/many_clusters.rs`, made here for the
//! `bootstrap-sim fleet` command). With `shared_record_set` every cluster is named
//! `mycluster`, so all write into the same `api`/`api-int` record sets (on Azure, where each
//! cluster's private zone lives in its resource group, only the public `api` is shared).
//! Another writer's values sit in the record sets the first cluster writes.

use super::super::baddays::{OTHER_PUBLIC, OTHER_WRITER};
use crate::peers::{Peers, fixture};
use crate::{AwsPeers, azure::AzurePeers, gcp::GcpPeers};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// One cluster of the fleet, ready for its agent.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub infra_id: String,
    pub assets: PathBuf,
    pub bootstrap_ip: String,
    pub state: PathBuf,
}

/// The most clusters a cloud's world holds: their bootstrap hosts share one /24 (GCP's from
/// .5, AWS's from .10); on Azure the control-plane /24 (where the installer puts the bootstrap
/// VM) also holds each bootstrap host's second address (2 per cluster, from .11), and the
/// compute /24 each cluster's private IP.
pub fn max_clusters(cloud: &str) -> usize {
    match cloud {
        "azure" => 110,
        _ => 200,
    }
}

/// Starts `cloud`'s peers for `n` clusters under `work` (emptied first).
pub async fn start(
    cloud: &str,
    n: usize,
    shared_record_set: bool,
    work: &Path,
) -> Result<(Peers, Vec<Cluster>)> {
    if n == 0 || n > max_clusters(cloud) {
        bail!(
            "{n} clusters: the {cloud} world holds 1 to {}",
            max_clusters(cloud)
        );
    }
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let name = |i: usize| {
        if shared_record_set {
            "mycluster".to_string()
        } else {
            format!("clu{i:02}")
        }
    };
    let infra_id = |i: usize| format!("clu{i:02}-7xk2p");
    let (peers, base, first_ip, private_zones): (Peers, PathBuf, u8, Vec<String>) = match cloud {
        "aws" => {
            let eips = u32::try_from(3 * n).unwrap_or(u32::MAX).max(100);
            let peers = AwsPeers::start_with_eip_limit(eips).await?;
            let base = work.join("base");
            let setup = peers.setup_world(&fixture("aws"), &base).await?;
            let zone_id = |kind: &str| -> Result<String> {
                setup["zones"][kind]
                    .as_str()
                    .and_then(|z| z.rsplit('/').next())
                    .map(str::to_string)
                    .with_context(|| format!("the AWS world has no {kind} zone"))
            };
            let private = if shared_record_set {
                zone_id("private")?
            } else {
                // Named by `hostedZone` in every cluster's install-config.
                peers.create_zone("example.com", true).await?
            };
            // Every bootstrap host in the first private subnet; setup made the first's.
            let subnet = setup["subnets"]["subnet-0a1b2c3d4e5f60001"]
                .as_str()
                .context("the AWS world has no first private subnet")?
                .to_string();
            let ips: Vec<String> = (1..n).map(|i| format!("10.0.1.{}", 10 + i)).collect();
            let ips: Vec<&str> = ips.iter().map(String::as_str).collect();
            peers.create_enis(&subnet, &ips, "bootstrap host").await?;
            for fqdn in [
                format!("api.{}.example.com", name(0)),
                format!("api-int.{}.example.com", name(0)),
            ] {
                peers
                    .write_record_in(&private, &fqdn, &[OTHER_WRITER])
                    .await?;
            }
            let public_id = zone_id("public")?;
            let api = format!("api.{}.example.com", name(0));
            peers
                .write_record_in(&public_id, &api, &[OTHER_PUBLIC])
                .await?;
            let zones = setup["zones"].clone();
            (Peers::Aws(peers, zones), base, 10, vec![private; n])
        }
        "gcp" => {
            let mut options = crate::gcp::FakeOptions::realistic();
            let zones: Vec<String> = if shared_record_set {
                vec!["mycluster-7xk2p-private-zone".to_string(); n]
            } else {
                (0..n).map(|i| format!("clu{i:02}-private-zone")).collect()
            };
            if !shared_record_set {
                for (i, zone) in zones.iter().enumerate() {
                    options.seed.zones.push(crate::gcp::ZoneSeed {
                        name: zone.clone(),
                        dns_name: format!("clu{i:02}.example.com."),
                        private: true,
                        project: None,
                    });
                }
            }
            // Each cluster's installer made its instance groups and its bootstrap VM.
            for i in 0..n {
                let bootstrap_ip = std::net::Ipv4Addr::new(10, 0, 0, 5 + i as u8);
                options
                    .seed
                    .add_installer_bootstrap(&infra_id(i), bootstrap_ip);
            }
            let peers = GcpPeers::start(options).await?;
            for fqdn in [
                format!("api.{}.example.com", name(0)),
                format!("api-int.{}.example.com", name(0)),
            ] {
                peers
                    .fake
                    .write_record(&zones[0], &fqdn, "A", &[OTHER_WRITER])?;
            }
            let api = format!("api.{}.example.com", name(0));
            peers
                .fake
                .write_record("example-com", &api, "A", &[OTHER_PUBLIC])?;
            (Peers::Gcp(peers), fixture("gcp"), 5, zones)
        }
        "azure" => {
            let peers = AzurePeers::start().await?;
            let mut zones = Vec::new();
            for i in 0..n {
                let rg = format!("{}-rg", infra_id(i));
                let ip = std::net::Ipv4Addr::new(10, 0, 0, 11 + i as u8);
                peers.sim.add_bootstrap_nic(&rg, &infra_id(i), ip);
                let zone = format!("{}.example.com", name(i));
                peers.sim.create_cluster_resource_group(&rg, Some(&zone));
                zones.push(format!("{rg}/{zone}"));
            }
            let (rg, zone) = zones[0].split_once('/').unwrap_or_default();
            for fqdn in [
                format!("api.{}.example.com", name(0)),
                format!("api-int.{}.example.com", name(0)),
            ] {
                peers
                    .sim
                    .write_record_in(true, rg, zone, &fqdn, &[OTHER_WRITER])?;
            }
            let api = format!("api.{}.example.com", name(0));
            peers.sim.write_record(false, &api, &[OTHER_PUBLIC])?;
            (Peers::Azure(peers), fixture("azure"), 11, zones)
        }
        other => bail!("unknown cloud {other:?}: expected aws, gcp or azure"),
    };
    let prefix = if cloud == "aws" { "10.0.1" } else { "10.0.0" };
    let mut clusters = Vec::with_capacity(n);
    for (i, private_zone) in private_zones.iter().enumerate() {
        let dir = work.join(format!("cluster-{i:03}"));
        let assets = dir.join("assets");
        let (name, infra_id) = (name(i), infra_id(i));
        copy_edited(&base, &assets, &|text| {
            edit_assets(cloud, text, &name, &infra_id, private_zone)
        })?;
        let state = dir.join("state");
        std::fs::create_dir_all(&state)?;
        clusters.push(Cluster {
            infra_id,
            assets,
            bootstrap_ip: format!("{prefix}.{}", usize::from(first_ip) + i),
            state,
        });
    }
    Ok((peers, clusters))
}

/// A file of the base assets, edited for cluster `name` with `infra_id`: on AWS the private
/// zone is named by `hostedZone`; on GCP and Azure the network is the one all share.
fn edit_assets(
    cloud: &str,
    text: String,
    name: &str,
    infra_id: &str,
    private_zone: &str,
) -> String {
    if cloud == "aws" {
        let text = text.replace("mycluster-7xk2p", infra_id);
        if name == "mycluster" {
            return text;
        }
        return text.replace("mycluster", name).replace(
            "        region: us-east-1\n",
            &format!("        region: us-east-1\n        hostedZone: {private_zone}\n"),
        );
    }
    text.replace("mycluster-7xk2p", infra_id)
        .replace(".mycluster.example.com", &format!(".{name}.example.com"))
        .replace("name: mycluster\n", &format!("name: {name}\n"))
}

/// Copies the tree `from` to `to`, every file through `edit`.
fn copy_edited(from: &Path, to: &Path, edit: &dyn Fn(String) -> String) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_edited(&entry.path(), &target, edit)?;
        } else {
            let text = std::fs::read_to_string(entry.path())
                .with_context(|| format!("cannot read {}", entry.path().display()))?;
            std::fs::write(&target, edit(text))
                .with_context(|| format!("cannot write {}", target.display()))?;
        }
    }
    Ok(())
}
