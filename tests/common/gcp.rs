//! The GCP harness: the in-process fake of compute.v1 + dns.v1 behind two counting proxies,
//! and the agent binary run against it with `tests/fixtures/assets/gcp` (the fake is seeded
//! with that fixture's project, region, subnetworks and zones).

use super::agent::{self, API, API_INT, Agent};
use super::cloud::{
    Cloud, CloudWorld, Harness, InstallerNetwork, forward_to_peers, ips_of, ours_in,
};
use bootstrap_sim::Proxy;
use bootstrap_sim::gcp::{FakeOptions, GcpPeers, Seed};
use serde_json::Value;

pub const BOOTSTRAP_IP: &str = "10.0.1.10";
/// The bootstrap VM (`<infra-id>-bootstrap`) whose nic0 gets the alias IP.
pub const BOOTSTRAP_VM: &str = "mycluster-7xk2p-bootstrap";
/// `instances.updateNetworkInterface` on the bootstrap VM, as [`Cloud::calls`] names it.
pub const UPDATE_NETWORK_INTERFACE: &str = "PATCH updateNetworkInterface";
pub const CLUSTER_LABEL: &str = "kubernetes-io-cluster-mycluster-7xk2p";
pub const RESERVATION_LABEL: &str = "bootstrap-agent-reservation";

/// The cluster's private zone (`mycluster.example.com.`, private visibility).
pub const PRIVATE_ZONE: &str = "mycluster-7xk2p-private-zone";
/// The public zone (`example.com.`).
pub const PUBLIC_ZONE: &str = "example-com";

/// The agent against the GCP fake.
pub type GcpHarness = Harness<GcpPeers>;

impl GcpHarness {
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
}

impl Cloud for GcpPeers {
    type World = GcpWorld;
    const NAME: &'static str = "gcp";
    const BOOTSTRAP_IP: &'static str = BOOTSTRAP_IP;
    const OTHER_BOOTSTRAP_IP: &'static str = "10.0.1.99";
    const SECOND_ADDRESS: bool = true;
    const API_INT_WITHOUT_BOOTSTRAP_IP: bool = false;
    /// After the two address inserts.
    const SECOND_ADDRESS_MUTATION: Option<usize> = Some(3);
    /// 2 addresses, the bootstrap VM's alias IP, 3 record sets.
    const PLANNED_CHANGES: usize = 6;
    /// 2 address inserts, the alias IP added to the bootstrap VM's nic0, one Change per zone.
    const BOOTSTRAP_CALLS: &'static [&'static str] = &[
        "POST addresses",
        "POST addresses",
        UPDATE_NETWORK_INTERFACE,
        // One Change per zone: public `api`; private `api` + `api-int`.
        "POST changes",
        "POST changes",
    ];
    /// One Change takes both bootstrap addresses out of the private records, then the alias
    /// IP leaves the VM.
    const DNS_TEARDOWN_CALLS: &'static [&'static str] = &["POST changes", UPDATE_NETWORK_INTERFACE];
    /// The service account key.
    const FIXTURE_SECRETS: &'static [(&'static str, &'static str)] =
        &[("fixture-secret-DO-NOT-LOG", "secret")];
    const FOREIGN_NAMES: &'static [&'static str] = &[
        "unlabelled",
        "other-cluster-rsvd-public-ipv4",
        "mycluster-7xk2p-cluster-ip",
        "reservation-label-only",
        "shared-not-owned",
    ];

    async fn start() -> GcpHarness {
        GcpHarness::new().await
    }

    async fn world(&self) -> GcpWorld {
        GcpWorld(self.inspect())
    }

    async fn write_record(&self, private: bool, fqdn: &str, values: &[&str]) {
        let zone = if private { PRIVATE_ZONE } else { PUBLIC_ZONE };
        self.fake.write_record(zone, fqdn, "A", values).unwrap();
    }

    async fn write_cname(&self, private: bool, fqdn: &str, target: &str) {
        let zone = if private { PRIVATE_ZONE } else { PUBLIC_ZONE };
        self.fake
            .write_record(zone, fqdn, "CNAME", &[&format!("{target}.")])
            .unwrap();
    }

    /// Not ours: unlabelled, another cluster's, ours by cluster label only (like the
    /// installer's own addresses), a reservation label without the cluster label, and a
    /// cluster label `shared` rather than `owned`.
    async fn create_user_public(&self) -> Vec<String> {
        let made =
            bootstrap_sim::upi::gcp_address(&self.fake, "mycluster-7xk2p-rsvd-public-ipv4", None)
                .await
                .unwrap();
        vec![made["ip"].as_str().unwrap().to_string()]
    }

    async fn create_foreign(&self) {
        let fake = &self.fake;
        fake.create_address("unlabelled", false, &[]).unwrap();
        fake.create_address(
            "other-cluster-rsvd-public-ipv4",
            false,
            &[
                ("kubernetes-io-cluster-other-abcde", "owned"),
                (RESERVATION_LABEL, "public-ipv4"),
            ],
        )
        .unwrap();
        fake.create_address(
            "mycluster-7xk2p-cluster-ip",
            true,
            &[(CLUSTER_LABEL, "owned")],
        )
        .unwrap();
        fake.create_address(
            "reservation-label-only",
            true,
            &[(RESERVATION_LABEL, "private-ipv4")],
        )
        .unwrap();
        fake.create_address(
            "shared-not-owned",
            false,
            &[
                (CLUSTER_LABEL, "shared"),
                (RESERVATION_LABEL, "public-ipv4"),
            ],
        )
        .unwrap();
        assert_eq!(fake.addresses().len(), 5);
    }

    forward_to_peers!(GcpPeers);

    /// Operations and zones carry names; tests compare the operation only.
    fn normalize_call(call: &str) -> String {
        if let Some(rest) = call.strip_prefix("POST /dns/v1/projects/example-project/managedZones/")
            && rest.ends_with("/changes")
        {
            return "POST changes".to_string();
        }
        if call.starts_with("PATCH /compute/v1/projects/")
            && call.ends_with(&format!("/instances/{BOOTSTRAP_VM}/updateNetworkInterface"))
        {
            return UPDATE_NETWORK_INTERFACE.to_string();
        }
        match call {
            "POST /compute/v1/projects/example-project/regions/us-central1/addresses" => {
                "POST addresses".to_string()
            }
            other if other.starts_with("DELETE /compute/v1/") => "DELETE address".to_string(),
            other => other.to_string(),
        }
    }

    fn dns_and_address_proxies(&self) -> (&Proxy, &Proxy) {
        (&self.dns_proxy, &self.compute_proxy)
    }
}

impl CloudWorld for GcpWorld {
    fn raw(&self) -> &Value {
        &self.0
    }

    /// Our addresses, and the alias IP of ours on the bootstrap VM.
    fn our_count(&self) -> usize {
        self.ours().len() + self.bootstrap_host_extra_addresses().len()
    }

    fn bootstrap_host_extra_addresses(&self) -> Vec<String> {
        let mut extra = self.bootstrap_host_addresses().split_off(1);
        extra.sort();
        extra
    }

    fn reserved_private(&self) -> Vec<String> {
        self.ips("private-ipv4")
    }

    fn reserved_public(&self) -> Vec<String> {
        self.ips("public-ipv4")
    }

    fn values(&self, zone: &str, name: &str) -> Vec<String> {
        self.record(zone, name)
    }

    /// Addresses without both of our labels, whole (name, labels, address, subnetwork).
    fn foreign(&self) -> Value {
        let ours = self.ours();
        Value::from(
            self.addresses()
                .into_iter()
                .filter(|a| !ours.contains(a))
                .cloned()
                .collect::<Vec<Value>>(),
        )
    }

    fn assert_seeded(&self, extra_private: &[&str]) {
        GcpWorld::assert_seeded(self, extra_private);
    }

    fn assert_at_most_planned(&self) {
        assert!(self.ours().len() <= 2, "{:#}", self.0);
        self.second_address();
    }
}

/// The fake's view of what exists.
pub struct GcpWorld(pub Value);

impl GcpWorld {
    pub fn addresses(&self) -> Vec<&Value> {
        self.0["addresses"].as_array().unwrap().iter().collect()
    }

    /// Addresses carrying both of our labels.
    pub fn ours(&self) -> Vec<&Value> {
        ours_in(
            &self.0["addresses"],
            "labels",
            RESERVATION_LABEL,
            CLUSTER_LABEL,
        )
    }

    pub fn ours_of(&self, purpose: &str) -> Vec<&Value> {
        self.ours()
            .into_iter()
            .filter(|a| a["labels"][RESERVATION_LABEL] == purpose)
            .collect()
    }

    pub fn ips(&self, purpose: &str) -> Vec<String> {
        ips_of(&self.ours_of(purpose))
    }

    pub fn record(&self, zone: &str, name: &str) -> Vec<String> {
        let mut values = agent::strings(&self.0["zones"][zone][name]);
        values.sort();
        values
    }

    /// The bootstrap VM's addresses: nic0's own (the bootstrap IP), then its alias IPs.
    pub fn bootstrap_host_addresses(&self) -> Vec<String> {
        assert_eq!(
            self.0["bootstrap_host"]["name"], BOOTSTRAP_VM,
            "{:#}",
            self.0
        );
        agent::strings(&self.0["bootstrap_host"]["addresses"])
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
        let host = self.bootstrap_host_addresses();
        assert_eq!(host.len(), 2, "the bootstrap VM and one alias IP: {host:?}");
        assert_eq!(host[0], BOOTSTRAP_IP);
        let alias: std::net::Ipv4Addr = host[1].parse().unwrap();
        assert!(
            alias.octets()[..2] == [10, 0] && alias.octets()[2] < 128 && host[1] != private_ip,
            "the alias comes from the bootstrap VM's subnetwork (the control plane's 10.0.0.0/17), not the VIP's: {alias}"
        );
        self.assert_private_records(&[private_ip.to_string()], BOOTSTRAP_IP, extra_private);
        assert_eq!(
            self.record("public", API),
            self.ips("public-ipv4"),
            "public api"
        );
    }
}

impl InstallerNetwork for GcpPeers {
    const DEFAULT_NAMES: &'static [&'static str] = &[
        "network mycluster-7xk2p-network: default name (<infra-id>-network)",
        "control-plane subnet mycluster-7xk2p-master-subnet: default name (<infra-id>-master-subnet)",
        "compute subnet mycluster-7xk2p-worker-subnet: default name (<infra-id>-worker-subnet)",
    ];
    const BRING_YOUR_OWN_REFUSAL: &'static str =
        "The referenced subnetwork resource cannot be found";

    async fn start_on_installer_network(fixture: &str) -> GcpHarness {
        let options = FakeOptions {
            seed: Seed::installer_network(),
            ..FakeOptions::realistic()
        };
        GcpHarness::with_fixture(fixture, options).await
    }
}

/// The printed custom role (`includedPermissions`), bound on the projects its description
/// names ("bootstrap-agent: bind on <project> (<n> permissions), ...").
impl super::suite_permissions::EnforcesRole for GcpPeers {
    const PERMISSIONS: &'static str = "includedPermissions";

    fn grant(&self, role: &Value) {
        let description = role["description"].as_str().unwrap();
        let projects: Vec<String> = description
            .strip_prefix("bootstrap-agent: bind on ")
            .unwrap_or_else(|| panic!("{description}"))
            .split(", ")
            .map(|p| p.split(" (").next().unwrap().to_string())
            .collect();
        assert!(!projects.is_empty(), "{description}");
        self.fake.grant(&projects, &Self::permissions_of(role));
    }
}
