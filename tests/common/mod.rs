//! Shared harness of the integration tests: the AWS world (moto + ministack behind counting
//! proxies, inspected with boto3) and the agent binary run against it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

#[path = "agent.rs"]
pub mod agent;

pub use agent::*;
use bootstrap_sim::{AwsPeers, Hold, VpcLayout};
use serde_json::Value;

pub const BOOTSTRAP_IP: &str = "10.0.1.10";

agent::harness!(AwsPeers);

impl Harness {
    pub async fn new(fixture: &str) -> Self {
        Self::with_layout(fixture, &VpcLayout::Byo).await.0
    }

    /// The fixture's world in peers started by the caller (e.g. with a low Elastic IP limit).
    pub async fn with_peers(peers: AwsPeers, fixture: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let assets = dir.path().join("assets");
        peers
            .setup_world(&agent::fixture(fixture), &assets)
            .await
            .unwrap();
        let agent = Agent::new(dir, assets, BOOTSTRAP_IP, peers.agent_env());
        Self { peers, agent }
    }

    /// A world whose subnets are laid out as `layout` says; also returns the setup's answer
    /// (its `layout` holds the subnet ids by kind).
    pub async fn with_layout(fixture: &str, layout: &VpcLayout) -> (Self, Value) {
        let peers = AwsPeers::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let assets = dir.path().join("assets");
        let setup = peers
            .setup_layout(&agent::fixture(fixture), &assets, layout)
            .await
            .unwrap();
        let agent = Agent::new(dir, assets, BOOTSTRAP_IP, peers.agent_env());
        (Self { peers, agent }, setup)
    }

    /// Starts `args`, waits until the Route53 (or EC2) proxy froze it at `hold`, SIGKILLs it.
    pub async fn kill_at(&self, args: &[&str], route53: bool, hold: Hold) {
        let proxy = if route53 {
            &self.peers.route53_proxy
        } else {
            &self.peers.ec2_proxy
        };
        self.agent.kill_at(args, proxy, hold).await;
    }

    pub async fn world(&self) -> World {
        World(self.peers.inspect().await.unwrap())
    }
}

/// boto3's view of what exists.
pub struct World(pub Value);

impl World {
    pub fn ours<'a>(&'a self, kind: &str) -> Vec<&'a Value> {
        self.0[kind]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["tags"]["bootstrap-agent.openshift.io/reservation"].is_string())
            .filter(|r| r["tags"]["kubernetes.io/cluster/mycluster-7xk2p"] == "owned")
            .collect()
    }

    pub fn ips(&self, kind: &str) -> Vec<String> {
        let mut ips: Vec<String> = self
            .ours(kind)
            .iter()
            .map(|r| r["ip"].as_str().unwrap().to_string())
            .collect();
        ips.sort();
        ips
    }

    pub fn record(&self, zone: &str, name: &str) -> Vec<String> {
        agent::strings(&self.0["zones"][zone][name])
    }

    pub fn count(&self, kind: &str) -> usize {
        self.0[kind].as_array().unwrap().len()
    }

    /// The stage-1 picture: 3 EIPs + 3 ENIs of ours, one per subnet, and the records.
    pub fn assert_seeded(&self, extra_private: &[&str]) {
        let eips = self.ours("eips");
        let enis = self.ours("enis");
        assert_eq!(eips.len(), 3, "one EIP per public subnet: {eips:?}");
        assert_eq!(enis.len(), 3, "one ENI per private subnet: {enis:?}");
        let mut keys: Vec<&str> = eips
            .iter()
            .chain(&enis)
            .map(|r| {
                r["tags"]["bootstrap-agent.openshift.io/reservation"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        keys.sort();
        keys.dedup();
        assert_eq!(
            keys.len(),
            6,
            "no two reservations for the same purpose: {keys:?}"
        );
        let mut private = self.ips("enis");
        private.push(BOOTSTRAP_IP.to_string());
        private.extend(extra_private.iter().map(|s| s.to_string()));
        private.sort();
        for name in [API, API_INT] {
            let mut got = self.record("private", name);
            got.sort();
            assert_eq!(got, private, "private {name}");
        }
        let mut public = self.record("public", API);
        public.sort();
        assert_eq!(public, self.ips("eips"), "public api");
    }
}
