//! One cloud's local peers, whichever cloud: what the demo and the hand-over simulation start
//! next to the local Kubernetes API server.

use crate::kube::CloudOptions;
use crate::proxy::Proxy;
use crate::{AwsPeers, azure::AzurePeers, gcp::GcpPeers};
use anyhow::{Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub enum Peers {
    /// With the world's zone ids (`{"public": id, "private": id}`).
    Aws(AwsPeers, Value),
    Gcp(GcpPeers),
    Azure(AzurePeers),
}

/// The example asset dir of `cloud` in the repo.
pub fn fixture(cloud: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/assets")
        .join(cloud)
}

impl Peers {
    /// Starts the peers of `cloud` ("aws", "gcp" or "azure") and says which asset dir matches
    /// them: on AWS the example assets rewritten with moto's subnet ids under `work`, else the
    /// example assets as they are (the fakes are seeded to match them).
    pub async fn start(cloud: &str, work: &Path) -> Result<(Peers, PathBuf)> {
        Self::start_with_propagation(cloud, work, None).await
    }

    /// As [`Peers::start`], with every DNS change held before it is done for `propagation`
    /// (None: each peer's own default): Route53 answers `PENDING` then `INSYNC`, Cloud DNS
    /// `pending` then `done`. Azure DNS has no change to wait for (a record-set PUT answers once
    /// it is applied), so there it changes nothing.
    pub async fn start_with_propagation(
        cloud: &str,
        work: &Path,
        propagation: Option<Duration>,
    ) -> Result<(Peers, PathBuf)> {
        let fixture = fixture(cloud);
        Ok(match cloud {
            "aws" => {
                let peers = match propagation {
                    Some(p) => AwsPeers::start_with_propagation(p).await?,
                    None => AwsPeers::start().await?,
                };
                let assets = work.join("assets");
                let world = peers.setup_world(&fixture, &assets).await?;
                (Peers::Aws(peers, world["zones"].clone()), assets)
            }
            "gcp" => {
                let mut options = crate::gcp::FakeOptions::realistic();
                if let Some(p) = propagation {
                    options.change_delay = p;
                }
                (Peers::Gcp(GcpPeers::start(options).await?), fixture)
            }
            "azure" => (Peers::Azure(crate::azure::demo_peers().await?), fixture),
            other => bail!("unknown cloud {other:?}: expected aws, gcp or azure"),
        })
    }

    /// The counting proxy in front of the cloud's DNS API (on Azure, ARM as a whole).
    pub fn dns_proxy(&self) -> &Proxy {
        match self {
            Peers::Aws(p, _) => &p.route53_proxy,
            Peers::Gcp(p) => &p.dns_proxy,
            Peers::Azure(p) => &p.arm_proxy,
        }
    }

    /// Every counting proxy in front of the cloud's APIs.
    pub fn proxies(&self) -> Vec<&Proxy> {
        match self {
            Peers::Aws(p, _) => p.proxies(),
            Peers::Gcp(p) => p.proxies(),
            Peers::Azure(p) => p.proxies(),
        }
    }

    pub fn agent_env(&self) -> Vec<(String, String)> {
        match self {
            Peers::Aws(p, _) => p.agent_env(),
            Peers::Gcp(p) => p.agent_env(),
            Peers::Azure(p) => p.agent_env(),
        }
    }

    pub fn mutating_calls(&self) -> usize {
        match self {
            Peers::Aws(p, _) => p.mutating_calls().len(),
            Peers::Gcp(p) => p.mutating_calls().len(),
            Peers::Azure(p) => p.mutating_calls().len(),
        }
    }

    /// What the simulated load-balancer controllers know of this cloud.
    pub fn lb_cloud(&self) -> CloudOptions {
        match self {
            Peers::Aws(p, _) => p.lb_cloud(),
            Peers::Gcp(p) => p.lb_cloud(),
            Peers::Azure(p) => p.lb_cloud(),
        }
    }

    /// What exists now, with the record sets as `zones: {public|private: {"<fqdn> <TYPE>":
    /// [values]}}` on every cloud.
    pub async fn inspect(&self) -> Result<Value> {
        match self {
            Peers::Aws(p, _) => p.inspect().await,
            Peers::Gcp(p) => Ok(p.inspect()),
            Peers::Azure(p) => p.inspect().await,
        }
    }
}

impl Peers {
    /// The private addresses the bootstrap host has in its cloud now: on GCP nic0's
    /// `networkIP` and alias IP ranges of `<infra-id>-bootstrap` (once the update that added
    /// them is DONE), on Azure the ipConfigurations of `<infra-id>-bootstrap-nic` (primary
    /// first). AWS: none modelled (empty).
    pub fn bootstrap_addresses(&self) -> Vec<std::net::IpAddr> {
        let v4 = |list: Vec<std::net::Ipv4Addr>| list.into_iter().map(Into::into).collect();
        match self {
            Peers::Aws(..) => Vec::new(),
            Peers::Gcp(p) => {
                let name = format!("{}-bootstrap", p.fake.seed().infra_id);
                v4(p.fake.instance_addresses(&name))
            }
            Peers::Azure(p) => v4(p.sim.nic_private_addresses(crate::azure::BOOTSTRAP_NIC)),
        }
    }

    /// The record sets of the public and private zone of the example world, as
    /// `{"public"|"private": {"<fqdn> <TYPE>": [values]}}`: what an authoritative server
    /// answers now.
    pub async fn zones(&self) -> Result<Value> {
        match self {
            Peers::Aws(p, zones) => {
                let mut out = serde_json::Map::new();
                for kind in ["public", "private"] {
                    let id = zones[kind].as_str().unwrap_or_default();
                    out.insert(kind.into(), Value::Object(p.records(id).await?));
                }
                Ok(Value::Object(out))
            }
            other => Ok(other.inspect().await?["zones"].clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-over simulation learns the bootstrap host's addresses from the fakes: at the
    /// start, its one primary address, the bootstrap IP the tests pass the agent.
    #[tokio::test]
    async fn the_bootstrap_host_starts_with_the_bootstrap_ip_on_gcp_and_azure() {
        let work = tempfile::tempdir().unwrap();
        let bootstrap: std::net::IpAddr = "10.0.1.10".parse().unwrap();
        for cloud in ["gcp", "azure"] {
            let (peers, _) = Peers::start(cloud, work.path()).await.unwrap();
            assert_eq!(peers.bootstrap_addresses(), [bootstrap], "{cloud}");
        }
    }
}
