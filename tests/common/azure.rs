//! The Azure harness: the local ARM fake behind a counting proxy, and the agent binary run
//! against it with the fixture asset dir as is (the fake is seeded to match).

use super::agent::{self, API, API_INT, Agent};
use super::cloud::{
    Cloud, CloudWorld, Harness, InstallerNetwork, forward_to_peers, ips_of, ours_in,
};
use bootstrap_sim::azure::{AzurePeers, AzureSimOptions};
use bootstrap_sim::{Hold, Proxy};
use serde_json::Value;

pub const BOOTSTRAP_IP: &str = "10.0.1.10";
pub const API_AAAA: &str = "api.mycluster.example.com AAAA";
pub const API_INT_AAAA: &str = "api-int.mycluster.example.com AAAA";
pub const INFRA: &str = "mycluster-7xk2p";
pub const CLUSTER_TAG: &str = "kubernetes.io_cluster.mycluster-7xk2p";
pub const RESERVATION_TAG: &str = "bootstrap-agent.openshift.io_reservation";
pub const PRIVATE_TAG: &str = "mycluster-7xk2p-rsvd-private-ipv4";
/// The fake's compute subnet is 10.0.1.0/24: the agent starts in its upper half at an offset
/// hashed from the infra id (`mycluster-7xk2p`: .215), which is free.
pub const EXPECTED_PRIVATE_IP: &str = "10.0.1.215";
/// Dual stack: the compute subnet's IPv6 /64 is fd00:10:0:2::/64; the agent derives the
/// private IPv6 from the infra id in its upper half.
pub const EXPECTED_PRIVATE_IPV6: &str = "fd00:10:0:2:c5ce:f6a6:3c97:2c8";
pub const PRIVATE_TAG_V6: &str = "mycluster-7xk2p-rsvd-private-ipv6";

/// The agent against the Azure fake.
pub type AzureHarness = Harness<AzurePeers>;

/// Mutating calls as [`AzureHarness::calls`] names them.
pub const PIP: &str = "PUT resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Network/publicIPAddresses/mycluster-7xk2p-rsvd-public-ipv4";
pub const PIP6: &str = "PUT resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Network/publicIPAddresses/mycluster-7xk2p-rsvd-public-ipv6";
pub const TAGS: &str =
    "PATCH resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Resources/tags/default";
pub const PRIVATE_API: &str = "PUT resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Network/privateDnsZones/mycluster.example.com/A/api";
pub const PRIVATE_API_INT: &str = "PUT resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Network/privateDnsZones/mycluster.example.com/A/api-int";
pub const PUBLIC_API: &str =
    "PUT resourceGroups/dns-rg/providers/Microsoft.Network/dnsZones/example.com/A/api.mycluster";
pub const PUBLIC_API_AAAA: &str =
    "PUT resourceGroups/dns-rg/providers/Microsoft.Network/dnsZones/example.com/AAAA/api.mycluster";
pub const PRIVATE_API_AAAA: &str = "PUT resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Network/privateDnsZones/mycluster.example.com/AAAA/api";
pub const PRIVATE_API_INT_AAAA: &str = "PUT resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Network/privateDnsZones/mycluster.example.com/AAAA/api-int";
/// The bootstrap VM's NIC, written whole to add or remove our IP configuration.
pub const BOOTSTRAP_NIC_PUT: &str = "PUT resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Network/networkInterfaces/mycluster-7xk2p-bootstrap-nic";
/// The secondary IP configuration of ours on the bootstrap NIC: the reservation's name.
pub const SECOND_ADDRESS_IPCONFIG: &str = "mycluster-7xk2p-rsvd-bootstrap-ipv4";

impl Cloud for AzurePeers {
    type World = AzureWorld;
    const NAME: &'static str = "azure";
    const BOOTSTRAP_IP: &'static str = BOOTSTRAP_IP;
    const OTHER_BOOTSTRAP_IP: &'static str = "10.0.1.99";
    const SECOND_ADDRESS: bool = true;
    const API_INT_WITHOUT_BOOTSTRAP_IP: bool = true;
    /// After the public IP and the private IP's two tag merges (one proxy carries every call).
    const SECOND_ADDRESS_MUTATION: Option<usize> = Some(4);
    /// 1 public IP, 1 private IP, the bootstrap NIC's IP configuration, 3 record sets.
    const PLANNED_CHANGES: usize = 6;
    /// 1 public IP, 1 private-IP record (claimed, then kept: two Tags Merges), the bootstrap
    /// NIC with our IP configuration, 3 record sets.
    const BOOTSTRAP_CALLS: &'static [&'static str] = &[
        PIP,
        TAGS,
        TAGS,
        BOOTSTRAP_NIC_PUT,
        PRIVATE_API,
        PRIVATE_API_INT,
        PUBLIC_API,
    ];
    /// Both bootstrap addresses out of each private record set, then our IP configuration off
    /// the NIC.
    const DNS_TEARDOWN_CALLS: &'static [&'static str] =
        &[PRIVATE_API, PRIVATE_API_INT, BOOTSTRAP_NIC_PUT];
    /// The client secret and the token the authority gives for it (at trace, reqwest, hyper,
    /// azure_core and azure_identity all log).
    const FIXTURE_SECRETS: &'static [(&'static str, &'static str)] = &[
        ("fixture-secret-DO-NOT-LOG", "secret"),
        ("fake-arm-token", "token"),
    ];
    const FOREIGN_NAMES: &'static [&'static str] =
        &["untagged-ip", "other-cluster-ip", "outbound-ip"];

    async fn start() -> AzureHarness {
        AzureHarness::new("azure").await
    }

    async fn world(&self) -> AzureWorld {
        AzureWorld(self.inspect().await.unwrap())
    }

    async fn write_record(&self, private: bool, fqdn: &str, values: &[&str]) {
        self.sim.write_record(private, fqdn, values).unwrap();
    }

    async fn write_cname(&self, private: bool, fqdn: &str, target: &str) {
        self.sim.write_cname(private, fqdn, target).unwrap();
    }

    async fn create_user_public(&self) -> Vec<String> {
        let made = bootstrap_sim::upi::azure_public_ip(
            &self.sim,
            bootstrap_sim::azure::CLUSTER_RG,
            "mycluster-7xk2p-rsvd-public-ipv4",
            bootstrap_sim::azure::LOCATION,
            "Standard",
            "Static",
        )
        .await
        .unwrap();
        vec![made["ip"].as_str().unwrap().to_string()]
    }

    async fn create_foreign(&self) {
        self.sim.create_foreign();
        assert_eq!(
            self.sim.inspect()["public_ips"].as_array().unwrap().len(),
            3
        );
    }

    forward_to_peers!(AzurePeers);

    /// `METHOD <path below the subscription>`.
    fn normalize_call(call: &str) -> String {
        call.replacen(
            "/subscriptions/00000000-0000-0000-0000-000000000001/",
            "",
            1,
        )
    }

    /// One proxy carries every ARM call.
    fn dns_and_address_proxies(&self) -> (&Proxy, &Proxy) {
        (&self.arm_proxy, &self.arm_proxy)
    }
}

impl CloudWorld for AzureWorld {
    fn api_int_without_bootstrap_ip(&self) -> bool {
        self.second_address().is_some()
    }

    fn raw(&self) -> &Value {
        &self.0
    }

    /// Public IPs of ours, the private IPs recorded as ours, and our IP configuration on the
    /// bootstrap NIC.
    fn our_count(&self) -> usize {
        let ipconfig = self
            .bootstrap_ipconfigs()
            .iter()
            .filter(|c| c["name"] == SECOND_ADDRESS_IPCONFIG)
            .count();
        self.ours().len() + self.private_ips().len() + ipconfig
    }

    /// The NIC's secondary IP configurations, whatever their name.
    fn bootstrap_host_extra_addresses(&self) -> Vec<String> {
        let mut extra: Vec<String> = self
            .bootstrap_ipconfigs()
            .iter()
            .filter(|c| c["primary"] != true)
            .map(|c| c["ip"].as_str().unwrap().to_string())
            .collect();
        extra.sort();
        extra
    }

    fn reserved_private(&self) -> Vec<String> {
        let mut ips = self.private_ips();
        ips.sort();
        ips
    }

    fn reserved_public(&self) -> Vec<String> {
        ips_of(&self.ours())
    }

    fn values(&self, zone: &str, name: &str) -> Vec<String> {
        let mut values = self.record(zone, name);
        values.sort();
        values
    }

    /// Public IPs without both of our tags (whole: tags, state, IP), and the cluster resource
    /// group's tags other than our private-IP records.
    fn foreign(&self) -> Value {
        let ours = self.ours();
        let public_ips: Vec<Value> = self
            .public_ips()
            .into_iter()
            .filter(|r| !ours.contains(r))
            .cloned()
            .collect();
        let tags: serde_json::Map<String, Value> = self
            .rg_tags()
            .iter()
            .filter(|(k, _)| !k.starts_with(&format!("{INFRA}-rsvd-private-")))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        serde_json::json!({"public_ips": public_ips, "resource_group_tags": tags})
    }

    /// The shared suite runs the single-stack fixture (`azure`).
    fn assert_seeded(&self, extra_private: &[&str]) {
        AzureWorld::assert_seeded(self, false, extra_private);
    }

    fn assert_at_most_planned(&self) {
        assert!(
            self.ours().len() <= 1 && self.private_ips().len() <= 1,
            "{:#}",
            self.0
        );
        self.second_address();
    }
}

impl AzureHarness {
    /// `run` against a local API server whose load balancers know this fake's subnets, until
    /// the state machine is done; the API server is returned for further checks.
    pub async fn run_to_done(&mut self) -> bootstrap_sim::kube::KubeSim {
        let cloud = self.peers.lb_cloud();
        let kube = self.local_api(cloud).await;
        self.run(&["run"]).await;
        let status = self.status().await;
        assert_eq!(status["run_step"], "done", "{status:#}");
        kube
    }

    /// The local API server whose load balancers know this fake's subnets, with a 3 s gate
    /// for `run`.
    pub async fn local_api_failing_fast(&mut self) -> bootstrap_sim::kube::KubeSim {
        let cloud = self.peers.lb_cloud();
        self.local_api_with_gate(cloud, "3s").await
    }

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

    /// Mutating calls as `METHOD <path below the subscription>`, sorted.
    pub fn calls(&self) -> Vec<String> {
        self.peers.calls()
    }
}

/// The fake's view of what exists.
pub struct AzureWorld(pub Value);

impl AzureWorld {
    pub fn public_ips(&self) -> Vec<&Value> {
        self.0["public_ips"].as_array().unwrap().iter().collect()
    }

    /// Public IPs carrying both of our tags.
    pub fn ours(&self) -> Vec<&Value> {
        ours_in(&self.0["public_ips"], "tags", RESERVATION_TAG, CLUSTER_TAG)
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

    /// The IP configurations of the bootstrap NIC `<infra-id>-bootstrap-nic`, primary first.
    pub fn bootstrap_ipconfigs(&self) -> Vec<&Value> {
        let nic = &self.0["bootstrap_nic"];
        assert_eq!(
            nic["name"],
            bootstrap_sim::azure::BOOTSTRAP_NIC,
            "{:#}",
            self.0
        );
        nic["ip_configurations"]
            .as_array()
            .unwrap()
            .iter()
            .collect()
    }

    /// The bootstrap NIC holds the bootstrap IP in its primary IP configuration and one
    /// secondary of ours, Static, named after the reservation, in the compute subnet but not
    /// the private VIP: its address.
    pub fn assert_second_address(&self) -> String {
        let configs = self.bootstrap_ipconfigs();
        assert_eq!(configs.len(), 2, "the primary and ours: {configs:?}");
        assert_eq!(configs[0]["ip"], BOOTSTRAP_IP);
        assert_eq!(configs[0]["primary"], true);
        let ours = configs[1];
        assert_eq!(ours["name"], SECOND_ADDRESS_IPCONFIG, "{ours}");
        assert_eq!(ours["allocation"], "Static", "{ours}");
        let ip = ours["ip"].as_str().unwrap();
        assert!(
            ip.starts_with("10.0.1.") && ip != EXPECTED_PRIVATE_IP && ip != BOOTSTRAP_IP,
            "a free address of the bootstrap NIC's subnet (10.0.1.0/24): {ip}"
        );
        ip.to_string()
    }

    /// After a `run` that reached done: the public IP stays (the LB uses it), the private IP
    /// alone in the private records (bootstrap removed), the public IP in the public `api`.
    pub fn assert_handed_over(&self) {
        assert_eq!(self.ours().len(), 1, "the public IP stays: the LB uses it");
        assert_eq!(
            self.bootstrap_ipconfigs().len(),
            1,
            "the second address left the bootstrap NIC with stage 3: {:#}",
            self.0
        );
        assert_eq!(self.private_ips(), vec![EXPECTED_PRIVATE_IP.to_string()]);
        for name in [API, API_INT] {
            assert_eq!(
                self.record("private", name),
                vec![EXPECTED_PRIVATE_IP.to_string()],
                "private {name}: the reserved IP only, bootstrap removed"
            );
        }
        assert_eq!(self.record("public", API), self.public_ip("IPv4"));
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
        self.assert_second_address();
        self.assert_private_records(
            &[EXPECTED_PRIVATE_IP.to_string()],
            BOOTSTRAP_IP,
            extra_private,
        );
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

/// The private IP is the top free address of the installer's compute subnet, found through its
/// vnet in the cluster resource group.
impl InstallerNetwork for AzurePeers {
    const DEFAULT_NAMES: &'static [&'static str] = &[
        "resource group mycluster-7xk2p-rg: default name (<infra-id>-rg)",
        "network resource group mycluster-7xk2p-rg: default name (the resource group)",
        "virtual network mycluster-7xk2p-vnet: default name (<infra-id>-vnet)",
        "compute subnet mycluster-7xk2p-worker-subnet: default name (<infra-id>-worker-subnet)",
    ];
    /// The main fixture's network resource group.
    const BRING_YOUR_OWN_REFUSAL: &'static str = "network-rg";

    async fn start_on_installer_network(fixture: &str) -> AzureHarness {
        let options = AzureSimOptions {
            installer_network: true,
            ..Default::default()
        };
        AzureHarness::with(fixture, options).await
    }
}

/// The printed role definition (`Actions`), assigned on each of its `AssignableScopes` (a
/// resource group, or the subscription).
impl super::suite_permissions::EnforcesRole for AzurePeers {
    const PERMISSIONS: &'static str = "Actions";

    fn grant(&self, role: &Value) {
        let actions = Self::permissions_of(role);
        let actions: Vec<&str> = actions.iter().map(String::as_str).collect();
        let assignments = role["AssignableScopes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|scope| {
                let scope = scope.as_str().unwrap();
                let group = scope.split_once("/resourceGroups/").map(|(_, rg)| rg);
                bootstrap_sim::azure::RoleAssignment::custom(group, &actions)
            })
            .collect();
        self.sim.set_roles(assignments);
    }
}
