//! [`AzurePeers`]: what tests and the README demo start, the fake behind its counting proxy,
//! the CA file the agent trusts, and the agent's environment.

use super::{AzureSim, AzureSimOptions};
use crate::proxy::{Proxy, Service};
use anyhow::{Context, Result};
use serde_json::Value;
use std::path::PathBuf;

/// The Azure world for tests and the demo: the fake, a counting/freezing proxy in front of
/// ARM, and the CA file the agent trusts for the token endpoint.
pub struct AzurePeers {
    pub sim: AzureSim,
    pub arm_proxy: Proxy,
    pub dir: tempfile::TempDir,
    pub ca_file: PathBuf,
}

crate::proxy::counting_proxies!(AzurePeers: arm_proxy);

impl AzurePeers {
    pub async fn start() -> Result<Self> {
        Self::start_with(AzureSimOptions::default()).await
    }

    pub async fn start_with(options: AzureSimOptions) -> Result<Self> {
        let sim = AzureSim::start(options).await?;
        let arm_proxy = Proxy::start(sim.arm_addr, Service::Arm).await?;
        let dir = tempfile::tempdir()?;
        let ca_file = dir.path().join("azure-sim-ca.pem");
        std::fs::write(&ca_file, &sim.ca_pem).context("cannot write the fake's CA")?;
        Ok(Self {
            sim,
            arm_proxy,
            dir,
            ca_file,
        })
    }

    /// Environment for the agent: ARM through the proxy, the fake's authority, its CA, and no
    /// ambient Azure credentials (the fixture's creds secret is used).
    pub fn agent_env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            (
                "BOOTSTRAP_AGENT_AZURE_ARM_ENDPOINT".into(),
                self.arm_proxy.url(),
            ),
            (
                "BOOTSTRAP_AGENT_AZURE_AUTHORITY_HOST".into(),
                self.sim.login_url(),
            ),
        ];
        env.extend(self.ca_and_second_address_env());
        env
    }

    /// The fake's CA, and the second address left to the cloud: the agent runs on this
    /// machine, not on the bootstrap VM, so the cloud gives the VM its second address and
    /// nothing here brings it up (as the wire proof is routed with --wire-dial-override).
    fn ca_and_second_address_env(&self) -> [(String, String); 2] {
        [
            (
                "BOOTSTRAP_AGENT_AZURE_CA_FILE".into(),
                self.ca_file.display().to_string(),
            ),
            (
                "BOOTSTRAP_AGENT_BOOTSTRAP_SECOND_ADDRESS".into(),
                "cloud".into(),
            ),
        ]
    }

    /// Environment for the agent that gives no endpoint: the agent derives its cloud's ARM
    /// and authority from the assets, and every cloud's real host names are pinned to the
    /// fake (its CA trusted). Calls this way bypass the counting proxy.
    pub fn derived_env(&self) -> Vec<(String, String)> {
        let mut env = vec![(
            "BOOTSTRAP_AGENT_AZURE_RESOLVE".into(),
            self.sim.resolve_pins(),
        )];
        env.extend(self.ca_and_second_address_env());
        env
    }

    /// What the local API server's load-balancer controller knows of this cloud: the compute
    /// subnet internal load balancers take their IPs from (its IPv6 prefix when dual stack).
    pub fn lb_cloud(&self) -> crate::kube::CloudOptions {
        crate::kube::CloudOptions {
            azure_compute_subnet: self.sim.compute_subnet_range(),
            azure_compute_subnet_ipv6: self.sim.compute_subnet_range_ipv6(),
            addresses: Some(self.sim.address_book()),
            azure: Some(self.sim.lb_view()),
            ..Default::default()
        }
    }

    /// What exists now (see [`AzureSim::inspect`]).
    pub async fn inspect(&self) -> Result<Value> {
        Ok(self.sim.inspect())
    }
}

/// For the README demo (`bootstrap-sim demo azure`): starts the fake behind its proxy. Use
/// `agent_env()` for the agent's environment and `inspect()` for what exists afterwards; the
/// asset dir is `tests/fixtures/assets/azure` as is (the fake is seeded to match it).
pub async fn demo_peers() -> Result<AzurePeers> {
    AzurePeers::start().await
}
