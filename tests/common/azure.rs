//! Harness of the Azure integration tests: the local ARM fake behind a counting proxy, and the
//! agent binary run against it with the fixture asset dir as is (the fake is seeded to match).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

#[path = "agent.rs"]
pub mod agent;

pub use agent::*;
use bootstrap_sim::Hold;
use bootstrap_sim::azure::{AzurePeers, AzureSimOptions};
use serde_json::Value;

pub const BOOTSTRAP_IP: &str = "10.0.1.10";
pub const API_AAAA: &str = "api.mycluster.example.com AAAA";
pub const API_INT_AAAA: &str = "api-int.mycluster.example.com AAAA";
pub const INFRA: &str = "mycluster-7xk2p";
pub const CLUSTER_TAG: &str = "kubernetes.io_cluster.mycluster-7xk2p";
pub const RESERVATION_TAG: &str = "bootstrap-agent.openshift.io_reservation";
pub const PRIVATE_TAG: &str = "mycluster-7xk2p-rsvd-private-ipv4";
/// The fake's compute subnet is 10.0.1.0/24 with .254 in use: the top free address.
pub const EXPECTED_PRIVATE_IP: &str = "10.0.1.253";
/// Dual stack: the compute subnet's IPv6 /64 is fd00:10:0:2::/64; the agent derives the
/// private IPv6 from the infra id in its upper half.
pub const EXPECTED_PRIVATE_IPV6: &str = "fd00:10:0:2:c5ce:f6a6:3c97:2c8";
pub const PRIVATE_TAG_V6: &str = "mycluster-7xk2p-rsvd-private-ipv6";

agent::harness!(AzurePeers);

impl Harness {
    /// The fake seeded to match the fixture: `azure-dualstack` gets dual-stack subnets.
    pub async fn new(fixture: &str) -> Self {
        let options = AzureSimOptions {
            dual_stack: fixture == "azure-dualstack",
            ..Default::default()
        };
        Self::with(fixture, options).await
    }

    pub async fn with(fixture: &str, options: AzureSimOptions) -> Self {
        let peers = AzurePeers::start_with(options).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut env = peers.agent_env();
        env.push(("BOOTSTRAP_AGENT_LOG".into(), "info".into()));
        let mut agent = Agent::new(dir, agent::fixture(fixture), BOOTSTRAP_IP, env);
        agent.env_remove.push("AZURE_CLIENT_SECRET");
        Self { peers, agent }
    }

    /// Starts `args`, waits until the proxy froze its `hold`-th mutation, SIGKILLs it.
    pub async fn kill_at(&self, args: &[&str], hold: Hold) {
        let proxy = &self.peers.arm_proxy;
        // One proxy carries every ARM call: count the mutations of this command only.
        proxy.reset();
        self.agent.kill_at(args, proxy, hold).await;
    }

    pub async fn world(&self) -> World {
        World(self.peers.inspect().await.unwrap())
    }

    /// Mutating calls as `METHOD <path below the subscription>`, sorted.
    pub fn calls(&self) -> Vec<String> {
        let prefix = "/subscriptions/00000000-0000-0000-0000-000000000001/";
        let mut calls: Vec<String> = self
            .peers
            .mutating_calls()
            .iter()
            .map(|c| c.replacen(prefix, "", 1))
            .collect();
        calls.sort();
        calls
    }
}

/// The fake's view of what exists.
pub struct World(pub Value);

impl World {
    pub fn public_ips(&self) -> Vec<&Value> {
        self.0["public_ips"].as_array().unwrap().iter().collect()
    }

    /// Public IPs carrying both of our tags.
    pub fn ours(&self) -> Vec<&Value> {
        self.public_ips()
            .into_iter()
            .filter(|r| r["tags"][RESERVATION_TAG].is_string())
            .filter(|r| r["tags"][CLUSTER_TAG] == "owned")
            .collect()
    }

    pub fn public_ip(&self, version: &str) -> Vec<String> {
        self.ours()
            .iter()
            .filter(|r| r["version"] == version)
            .map(|r| r["ip"].as_str().unwrap().to_string())
            .collect()
    }

    pub fn rg_tags(&self) -> &serde_json::Map<String, Value> {
        self.0["resource_group_tags"]["mycluster-7xk2p-rg"]
            .as_object()
            .unwrap()
    }

    /// Private IPs recorded as ours (resource-group tags `<infra-id>-rsvd-private-*`).
    pub fn private_ips(&self) -> Vec<String> {
        self.rg_tags()
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("{INFRA}-rsvd-private-")))
            .map(|(_, v)| v.as_str().unwrap().to_string())
            .collect()
    }

    pub fn record(&self, zone: &str, name: &str) -> Vec<String> {
        agent::strings(&self.0["zones"][zone][name])
    }

    /// The stage-1 picture: one public IP per family (one when single stack), one private IP
    /// per family, and the records (AAAA for api/api-int only when dual stack).
    pub fn assert_seeded(&self, dual_stack: bool, extra_private: &[&str]) {
        let ours = self.ours();
        let families = if dual_stack { 2 } else { 1 };
        assert_eq!(ours.len(), families, "one public IP per family: {ours:?}");
        for r in &ours {
            assert_eq!(r["sku"], "Standard");
            assert_eq!(r["allocation"], "Static");
            assert_eq!(r["state"], "Succeeded");
            let purpose = r["tags"][RESERVATION_TAG].as_str().unwrap();
            assert_eq!(r["name"], format!("{INFRA}-rsvd-{purpose}"));
        }
        let mut reserved_private = vec![EXPECTED_PRIVATE_IP.to_string()];
        if dual_stack {
            reserved_private.push(EXPECTED_PRIVATE_IPV6.to_string());
        }
        assert_eq!(self.private_ips(), reserved_private);
        for name in [API_AAAA, API_INT_AAAA] {
            let expected: Vec<String> = if dual_stack {
                vec![EXPECTED_PRIVATE_IPV6.to_string()]
            } else {
                Vec::new()
            };
            assert_eq!(self.record("private", name), expected, "private {name}");
        }
        let mut private = vec![EXPECTED_PRIVATE_IP.to_string(), BOOTSTRAP_IP.to_string()];
        private.extend(extra_private.iter().map(|s| s.to_string()));
        private.sort();
        for name in [API, API_INT] {
            let mut got = self.record("private", name);
            got.sort();
            assert_eq!(got, private, "private {name}");
        }
        assert_eq!(
            self.record("public", API),
            self.public_ip("IPv4"),
            "public api A"
        );
        if dual_stack {
            let v6 = self.public_ip("IPv6");
            assert_eq!(v6.len(), 1);
            assert_eq!(self.record("public", API_AAAA), v6, "public api AAAA");
        } else {
            assert!(self.record("public", API_AAAA).is_empty());
        }
    }
}
