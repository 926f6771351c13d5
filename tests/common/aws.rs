//! The AWS harness: moto (EC2) and ministack (Route53) behind counting proxies, inspected
//! with boto3, and the agent run against them on a copy of the fixture with moto's ids.

use super::agent::{self, API, API_INT, Agent};
use super::cloud::{Cloud, CloudWorld, Harness, forward_to_peers, ips_of, ours_in};
use bootstrap_sim::{AwsPeers, Proxy, VpcLayout};
use serde_json::Value;

pub const BOOTSTRAP_IP: &str = "10.0.1.10";

/// The agent against moto and ministack.
pub type AwsHarness = Harness<AwsPeers>;

impl AwsHarness {
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
}

const RRSET: &str = "POST /2013-04-01/hostedzone/{id}/rrset";

impl Cloud for AwsPeers {
    type World = AwsWorld;
    const NAME: &'static str = "aws";
    const BOOTSTRAP_IP: &'static str = BOOTSTRAP_IP;
    const OTHER_BOOTSTRAP_IP: &'static str = "10.0.1.99";
    /// The masters on AWS run no apiserver-watcher: the bootstrap IP alone.
    const SECOND_ADDRESS: bool = false;
    const API_INT_WITHOUT_BOOTSTRAP_IP: bool = false;
    const SECOND_ADDRESS_MUTATION: Option<usize> = None;
    const PLANNED_CHANGES: usize = 9;
    /// 3 EIPs, 3 ENIs, one change batch per zone (public `api`; private `api` + `api-int`).
    const BOOTSTRAP_CALLS: &'static [&'static str] = &[
        "AllocateAddress",
        "AllocateAddress",
        "AllocateAddress",
        "CreateNetworkInterface",
        "CreateNetworkInterface",
        "CreateNetworkInterface",
        RRSET,
        RRSET,
    ];
    /// One batch: the private `api` and `api-int`.
    const DNS_TEARDOWN_CALLS: &'static [&'static str] = &[RRSET];
    /// Both keys of the creds secret.
    const FIXTURE_SECRETS: &'static [(&'static str, &'static str)] = &[
        ("fixture-secret-DO-NOT-LOG", "secret"),
        ("AKIAFIXTUREEXAMPLE00", "access key id"),
    ];
    /// EC2 calls are named by action only: the check holds trivially; ids are compared by
    /// [`CloudWorld::foreign`].
    const FOREIGN_NAMES: &'static [&'static str] = &[];

    async fn start() -> AwsHarness {
        AwsHarness::new("aws").await
    }

    async fn world(&self) -> AwsWorld {
        AwsWorld(self.inspect().await.unwrap())
    }

    async fn write_record(&self, private: bool, fqdn: &str, values: &[&str]) {
        let zone = if private { "private" } else { "public" };
        AwsPeers::write_record(self, zone, fqdn, values)
            .await
            .unwrap();
    }

    async fn write_cname(&self, private: bool, fqdn: &str, target: &str) {
        let zone = if private { "private" } else { "public" };
        AwsPeers::write_cname(self, zone, fqdn, target)
            .await
            .unwrap();
    }

    /// One EIP per public subnet (10.0.4-6.0/24), named as the seed names ours.
    async fn create_user_public(&self) -> Vec<String> {
        let world = self.inspect().await.unwrap();
        let mut ips = Vec::new();
        for subnet in world["subnets"].as_array().unwrap() {
            let cidr = subnet["cidr"].as_str().unwrap();
            if !["10.0.4.", "10.0.5.", "10.0.6."]
                .iter()
                .any(|p| cidr.starts_with(p))
            {
                continue;
            }
            let id = subnet["id"].as_str().unwrap();
            let name = format!("mycluster-7xk2p-rsvd-public-ipv4-{id}");
            let (_, ip) = self.create_named(&name, None).await.unwrap();
            ips.push(ip);
        }
        assert_eq!(
            ips.len(),
            3,
            "the fixture's three public subnets: {world:#}"
        );
        ips
    }

    async fn create_foreign(&self) {
        AwsPeers::create_foreign(self).await.unwrap();
    }

    forward_to_peers!(AwsPeers);

    /// Route53 paths carry zone ids; tests compare the operation only.
    fn normalize_call(call: &str) -> String {
        match call.strip_prefix("POST /2013-04-01/hostedzone/") {
            Some(rest) if rest.contains("/rrset") => RRSET.to_string(),
            _ => call.to_string(),
        }
    }

    fn dns_and_address_proxies(&self) -> (&Proxy, &Proxy) {
        (&self.route53_proxy, &self.ec2_proxy)
    }

    /// `status` counts the step's retries by cause: all of them throttling.
    fn assert_throttling_counted(status: &Value) {
        let retries = &status["steps"]["reserve"]["retries"];
        assert!(
            retries["throttled"].as_u64().is_some_and(|n| n >= 1)
                && retries.as_object().is_some_and(|r| r.len() == 1),
            "{retries}: {:#}",
            status["steps"]
        );
    }

    /// EIPs are never duplicated any more: the SDK does not retry AllocateAddress, the runner
    /// observes by tag before allocating again, so nothing needs releasing afterwards.
    fn assert_nothing_made_twice(&self) {
        let released = self.ec2_proxy.calls_named("ReleaseAddress");
        assert!(
            released.is_empty(),
            "a duplicate EIP was allocated: {released:?}"
        );
    }
}

impl CloudWorld for AwsWorld {
    fn raw(&self) -> &Value {
        &self.0
    }

    fn our_count(&self) -> usize {
        self.ours("eips").len() + self.ours("enis").len()
    }

    /// The agent gives the bootstrap host no second address on AWS (and no ENI of ours holds
    /// the bootstrap host's role): nothing to show.
    fn bootstrap_host_extra_addresses(&self) -> Vec<String> {
        Vec::new()
    }

    fn reserved_private(&self) -> Vec<String> {
        self.ips("enis")
    }

    fn reserved_public(&self) -> Vec<String> {
        self.ips("eips")
    }

    fn values(&self, zone: &str, name: &str) -> Vec<String> {
        let mut values = self.record(zone, name);
        values.sort();
        values
    }

    /// EIPs and ENIs without both of our tags (ENIs: the bootstrap host's too).
    fn foreign(&self) -> Value {
        let not_ours = |kind: &str| {
            let ours = self.ours(kind);
            let mut rest: Vec<Value> = self.0[kind]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| !ours.contains(r))
                .cloned()
                .collect();
            rest.sort_by_key(|r| r.to_string());
            rest
        };
        serde_json::json!({"eips": not_ours("eips"), "enis": not_ours("enis")})
    }

    fn assert_seeded(&self, extra_private: &[&str]) {
        AwsWorld::assert_seeded(self, extra_private);
    }

    fn assert_at_most_planned(&self) {
        assert!(
            self.ours("eips").len() <= 3 && self.ours("enis").len() <= 3,
            "{:#}",
            self.0
        );
    }
}

/// boto3's view of what exists.
pub struct AwsWorld(pub Value);

impl AwsWorld {
    /// No Elastic IP and no ENI of ours is left (`why` and what is left in the failure).
    pub fn assert_no_address_of_ours(&self, why: &str) {
        assert!(
            self.ours("eips").is_empty() && self.ours("enis").is_empty(),
            "{why}: left {:?} {:?}",
            self.ours("eips"),
            self.ours("enis")
        );
    }

    pub fn ours<'a>(&'a self, kind: &str) -> Vec<&'a Value> {
        ours_in(
            &self.0[kind],
            "tags",
            "bootstrap-agent.openshift.io/reservation",
            "kubernetes.io/cluster/mycluster-7xk2p",
        )
    }

    pub fn ips(&self, kind: &str) -> Vec<String> {
        ips_of(&self.ours(kind))
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
        self.assert_private_records(&self.ips("enis"), BOOTSTRAP_IP, extra_private);
        let mut public = self.record("public", API);
        public.sort();
        assert_eq!(public, self.ips("eips"), "public api");
    }
}
