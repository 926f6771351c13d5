//! Harness of the GCP integration tests: the in-process fake of compute.v1 + dns.v1 behind two
//! counting proxies, and the agent binary run against it with `tests/fixtures/assets/gcp`
//! (the fake is seeded with that fixture's project, region, subnetworks and zones).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

#[path = "agent.rs"]
pub mod agent;

pub use agent::*;
use bootstrap_sim::Hold;
use bootstrap_sim::gcp::{FakeOptions, GcpPeers};
use serde_json::Value;

pub const BOOTSTRAP_IP: &str = "10.0.0.5";
pub const CLUSTER_LABEL: &str = "kubernetes-io-cluster-mycluster-7xk2p";
pub const RESERVATION_LABEL: &str = "bootstrap-agent-reservation";

agent::harness!(GcpPeers);

impl Harness {
    pub async fn new() -> Self {
        Self::with_options(FakeOptions::realistic()).await
    }

    pub async fn with_options(options: FakeOptions) -> Self {
        Self::with_fixture("gcp", options).await
    }

    /// The agent on fixture `fixture` (the fake's seed must match its network).
    pub async fn with_fixture(fixture: &str, options: FakeOptions) -> Self {
        let peers = GcpPeers::start(options).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let agent = Agent::new(
            dir,
            agent::fixture(fixture),
            BOOTSTRAP_IP,
            peers.agent_env(),
        );
        Self { peers, agent }
    }

    /// Starts `args`, waits until the DNS (or compute) proxy froze it at `hold`, SIGKILLs it.
    pub async fn kill_at(&self, args: &[&str], dns: bool, hold: Hold) {
        let proxy = if dns {
            &self.peers.dns_proxy
        } else {
            &self.peers.compute_proxy
        };
        self.agent.kill_at(args, proxy, hold).await;
    }

    pub fn world(&self) -> World {
        World(self.peers.inspect())
    }
}

/// The fake's view of what exists.
pub struct World(pub Value);

impl World {
    pub fn addresses(&self) -> Vec<&Value> {
        self.0["addresses"].as_array().unwrap().iter().collect()
    }

    /// Addresses carrying both of our labels.
    pub fn ours(&self) -> Vec<&Value> {
        self.addresses()
            .into_iter()
            .filter(|a| a["labels"][RESERVATION_LABEL].is_string())
            .filter(|a| a["labels"][CLUSTER_LABEL] == "owned")
            .collect()
    }

    pub fn ours_of(&self, purpose: &str) -> Vec<&Value> {
        self.ours()
            .into_iter()
            .filter(|a| a["labels"][RESERVATION_LABEL] == purpose)
            .collect()
    }

    pub fn ips(&self, purpose: &str) -> Vec<String> {
        let mut ips: Vec<String> = self
            .ours_of(purpose)
            .iter()
            .map(|a| a["ip"].as_str().unwrap().to_string())
            .collect();
        ips.sort();
        ips
    }

    pub fn record(&self, zone: &str, name: &str) -> Vec<String> {
        let mut values = agent::strings(&self.0["zones"][zone][name]);
        values.sort();
        values
    }

    /// The stage-1 picture: one public and one private address of ours, and the records.
    pub fn assert_seeded(&self, extra_private: &[&str]) {
        let public = self.ours_of("public-ipv4");
        let private = self.ours_of("private-ipv4");
        assert_eq!(public.len(), 1, "one public address: {:#}", self.0);
        assert_eq!(private.len(), 1, "one private address: {:#}", self.0);
        assert_eq!(self.ours().len(), 2, "nothing else of ours: {:#}", self.0);
        assert_eq!(public[0]["name"], "mycluster-7xk2p-rsvd-public-ipv4");
        assert_eq!(public[0]["addressType"], "EXTERNAL");
        assert_eq!(private[0]["name"], "mycluster-7xk2p-rsvd-private-ipv4");
        assert_eq!(private[0]["addressType"], "INTERNAL");
        assert_eq!(private[0]["purpose"], "SHARED_LOADBALANCER_VIP");
        let private_ip = private[0]["ip"].as_str().unwrap();
        assert!(
            private[0]["subnetwork"]
                .as_str()
                .unwrap()
                .ends_with("-worker-subnet"),
            "the internal VIP lives in the compute subnet, where the cloud provider puts internal forwarding rules: {:#}",
            private[0]
        );
        let octets: std::net::Ipv4Addr = private_ip.parse().unwrap();
        assert!(
            octets.octets()[..2] == [10, 0] && octets.octets()[2] >= 128,
            "from the worker subnet's range 10.0.128.0/17: {private_ip}"
        );
        let mut expected = vec![private_ip.to_string(), BOOTSTRAP_IP.to_string()];
        expected.extend(extra_private.iter().map(|s| s.to_string()));
        expected.sort();
        for name in [API, API_INT] {
            assert_eq!(self.record("private", name), expected, "private {name}");
        }
        assert_eq!(
            self.record("public", API),
            self.ips("public-ipv4"),
            "public api"
        );
    }
}
