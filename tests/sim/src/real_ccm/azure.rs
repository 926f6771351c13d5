//! Azure for `bootstrap-sim real-ccm`: OpenShift's Azure cloud-controller-manager against the
//! ARM fake (`crate::azure`) and the local API server.
//!
//! The CCM is pointed at loopback before it starts (openshift/cloud-provider-azure
//! d04449b95a54): the cloud config's `resourceManagerEndpoint` makes it read
//! `/metadata/endpoints` of the fake's ARM (an array naming the fake's ARM and authority,
//! vendor `sigs.k8s.io/cloud-provider-azure/pkg/azclient/cloud.go:42-104`); `tenantId: adfs`
//! keeps MSAL from instance discovery at `login.microsoftonline.com`; the fake's CA is its
//! only trust (`SSL_CERT_FILE`); `useInstanceMetadata: false` keeps it off IMDS
//! (169.254.169.254, `pkg/consts/consts.go:435`). The cluster is the fixture's: three
//! control-plane Nodes, each a VM of the fake with its NIC in the control-plane subnet, and
//! the installer's cloud config (`excludeMasterFromStandardLB: false`, so the masters are the
//! load balancers' backends, openshift/installer `pkg/asset/manifests/azure/
//! cloudproviderconfig.go`). The CCM's ARM calls go through a counting proxy of their own.

use super::kube::Kube;
use super::upi::UserAddresses;
use super::{CcmCommand, CloudUnderTest, NodeChange, UserMade};
use crate::azure::{
    AzurePeers, CLIENT_ID, CLIENT_SECRET, CLUSTER_RG, COMPUTE_SUBNET, LOCATION, NETWORK_RG,
    SECURITY_GROUP, SUBSCRIPTION, VNET,
};
use crate::kube::KubeSimOptions;
use crate::proxy::{Proxy, Service};
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::net::Ipv4Addr;
use std::path::Path;

use std::time::{Duration, Instant};

/// The infra id: the CCM's `--cluster-name`, as OpenShift runs it.
const INFRA_ID: &str = "mycluster-7xk2p";

/// UPI: the user's public IP, by the seed's name, and the private IP they picked in the
/// compute subnet (Azure has no private-IP resource: named with `--reservations`), as
/// docs/upi.md and `tests/azure.rs`'s by-hand test.
const USER_PUBLIC_IP: &str = "mycluster-7xk2p-rsvd-public-ipv4";
const USER_PRIVATE_IP: &str = "10.0.1.200";

/// The control-plane Nodes: name and address (in the fixture's control-plane subnet,
/// 10.0.0.0/24, past its platform-reserved first four).
const NODES: [(&str, Ipv4Addr); 3] = [
    ("master-0", Ipv4Addr::new(10, 0, 0, 5)),
    ("master-1", Ipv4Addr::new(10, 0, 0, 6)),
    ("master-2", Ipv4Addr::new(10, 0, 0, 7)),
];

pub struct Azure {
    peers: AzurePeers,
    ccm_proxy: Proxy,
}

impl Azure {
    /// The ARM fake with the cluster's VMs, and a counting proxy for the CCM's calls.
    pub async fn start() -> Result<Self> {
        let peers = AzurePeers::start().await?;
        let ccm_proxy = Proxy::start(peers.sim.arm_addr, Service::Arm).await?;
        for (name, ip) in NODES {
            peers.sim.add_machine(name, ip);
        }
        Ok(Self { peers, ccm_proxy })
    }
}

impl CloudUnderTest for Azure {
    fn name(&self) -> &'static str {
        "azure"
    }

    fn agent_env(&self) -> Vec<(String, String)> {
        self.peers.agent_env()
    }

    fn agent_proxies(&self) -> Vec<&Proxy> {
        self.peers.proxies()
    }

    fn ccm_proxy(&self) -> &Proxy {
        &self.ccm_proxy
    }

    /// Its ARM calls, not counting `/metadata/endpoints` (read once per client it makes, 76
    /// at start-up, no token).
    fn counts(&self, call: &crate::proxy::Call) -> bool {
        !call.action.contains("/metadata/endpoints")
    }

    fn serving_since(&self, ip: std::net::IpAddr, port: u16) -> Option<Instant> {
        self.peers.sim.frontend_serving_since(ip, port)
    }

    fn left_ours(&self) -> Vec<String> {
        let world = self.peers.sim.inspect();
        let mut left = Vec::new();
        for pip in world["public_ips"].as_array().into_iter().flatten() {
            let ours = pip["tags"]
                .as_object()
                .is_some_and(|t| t.keys().any(|k| k.starts_with("bootstrap-agent")));
            if ours {
                left.push(format!("public IP {} ({})", pip["name"], pip["ip"]));
            }
        }
        let configs = world["bootstrap_nic"]["ip_configurations"].as_array();
        for config in configs.into_iter().flatten() {
            if config["primary"] != true {
                left.push(format!(
                    "bootstrap NIC ipConfiguration {} ({})",
                    config["name"], config["ip"]
                ));
            }
        }
        for (rg, tags) in world["resource_group_tags"]
            .as_object()
            .into_iter()
            .flatten()
        {
            for key in tags.as_object().into_iter().flatten().map(|(k, _)| k) {
                if key.starts_with("bootstrap-agent") {
                    left.push(format!("resource group {rg} tag {key}"));
                }
            }
        }
        for visibility in ["public", "private"] {
            for (record, values) in world["zones"][visibility].as_object().into_iter().flatten() {
                left.push(format!("{visibility} record {record} {values}"));
            }
        }
        left
    }

    fn nodes(&self) -> Vec<Value> {
        NODES.iter().map(|(name, ip)| node(name, *ip)).collect()
    }

    fn local_kube_options(&self, external_controller: bool) -> KubeSimOptions {
        let mut cloud = self.peers.lb_cloud();
        cloud.external_controller = external_controller;
        KubeSimOptions {
            cloud,
            node_ips: NODES.iter().map(|(_, ip)| *ip).collect(),
            ..Default::default()
        }
    }

    /// The installer's cloud config pointed at the fake (through the counting proxy); the
    /// operator's flags without the cloud-node controller (the harness makes the Nodes).
    fn ccm_command(&self, kubeconfig: &Path, work: &Path) -> Result<CcmCommand> {
        let config = work.join("azure.json");
        let arm = format!("{}/", self.ccm_proxy.url());
        std::fs::write(&config, serde_json::to_vec_pretty(&cloud_config(&arm))?)
            .with_context(|| format!("cannot write {}", config.display()))?;
        let args = [
            "--cloud-provider=azure",
            "--controllers=*,-cloud-node",
            "--configure-cloud-routes=false",
            "--allocate-node-cidrs=false",
            "--leader-elect=false",
            "--secure-port=0",
            "--kube-api-content-type=application/json",
            "--v=2",
        ]
        .map(String::from)
        .into_iter()
        .chain([
            format!("--cluster-name={INFRA_ID}"),
            format!("--cloud-config={}", config.display()),
            format!("--kubeconfig={}", kubeconfig.display()),
        ])
        .collect();
        // Its only trust is the fake's CA.
        let env = vec![(
            "SSL_CERT_FILE".to_string(),
            self.peers.ca_file.display().to_string(),
        )];
        Ok(CcmCommand { args, env })
    }

    async fn add_a_node(&self, kube: &Kube, limit: Duration) -> Result<Option<NodeChange>> {
        add_a_node(self, kube, limit).await
    }

    /// A Standard, static public IP in the cluster resource group (azure-mgmt-network), and
    /// `--reservations` naming the private IP.
    async fn make_user_addresses(&self, work: &Path) -> Result<UserMade> {
        let sim = &self.peers.sim;
        crate::upi::azure_public_ip(
            sim,
            CLUSTER_RG,
            USER_PUBLIC_IP,
            LOCATION,
            "Standard",
            "Static",
        )
        .await
        .with_context(|| format!("the user's public IP {USER_PUBLIC_IP}"))?;
        let file = work.join("reservations.yaml");
        std::fs::write(&file, format!("private-ipv4: {{ip: {USER_PRIVATE_IP}}}\n"))
            .with_context(|| format!("cannot write {}", file.display()))?;
        Ok(UserMade {
            agent_env: vec![(
                "BOOTSTRAP_AGENT_RESERVATIONS".into(),
                file.display().to_string(),
            )],
            named_only: vec![(
                format!("private-ipv4 {USER_PRIVATE_IP} (--reservations)"),
                USER_PRIVATE_IP.to_string(),
            )],
        })
    }

    fn user_addresses(&self) -> UserAddresses {
        let found = self
            .peers
            .sim
            .public_ip_resource(CLUSTER_RG, USER_PUBLIC_IP);
        found
            .map(|pip| (USER_PUBLIC_IP.to_string(), pip))
            .into_iter()
            .collect()
    }

    fn left_ccm(&self) -> Vec<String> {
        let mut left = Vec::new();
        for lb in self.peers.sim.load_balancers() {
            let name = lb["name"].as_str().unwrap_or_default();
            left.push(format!("load balancer {name}"));
            for collection in [
                "frontendIPConfigurations",
                "loadBalancingRules",
                "probes",
                "backendAddressPools",
            ] {
                let children = lb["properties"][collection].as_array();
                for child in children.into_iter().flatten() {
                    left.push(format!(
                        "{name} {collection} {}",
                        describe(collection, child)
                    ));
                }
            }
        }
        for rule in self.peers.sim.security_rules().into_iter().flatten() {
            left.push(format!("{SECURITY_GROUP} rule {rule}"));
        }
        for (nic, pool) in self.peers.sim.nic_pool_references() {
            left.push(format!("NIC {nic} names backend pool {pool}"));
        }
        left
    }
}

/// A load balancer's child in one line: its name and what decides its behaviour.
fn describe(collection: &str, child: &Value) -> String {
    let p = &child["properties"];
    let last = |v: &Value| {
        v["id"]
            .as_str()
            .and_then(|id| id.rsplit('/').next())
            .unwrap_or("-")
            .to_string()
    };
    let name = child["name"].as_str().unwrap_or_default();
    match collection {
        "frontendIPConfigurations" => format!(
            "{name} private {} public {}",
            p["privateIPAddress"].as_str().unwrap_or("-"),
            last(&p["publicIPAddress"])
        ),
        "loadBalancingRules" => format!(
            "{name} {}:{}->{} floatingIP {} tcpReset {} idle {} probe {}",
            p["protocol"].as_str().unwrap_or("-"),
            p["frontendPort"],
            p["backendPort"],
            p["enableFloatingIP"],
            p["enableTcpReset"],
            p["idleTimeoutInMinutes"],
            last(&p["probe"])
        ),
        "probes" => format!(
            "{name} {} port {} every {}s x{}",
            p["protocol"].as_str().unwrap_or("-"),
            p["port"],
            p["intervalInSeconds"],
            p["probeThreshold"]
                .as_u64()
                .or(p["numberOfProbes"].as_u64())
                .unwrap_or(0)
        ),
        _ => {
            let members: Vec<&str> = p["backendIPConfigurations"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["id"].as_str()?.split("/networkInterfaces/").nth(1))
                .collect();
            format!("{name} members {members:?}")
        }
    }
}

/// The installer's cloud config for the fixture's cluster, pointed at the fake.
fn cloud_config(arm: &str) -> Value {
    json!({
        "cloud": "AzureCloud",
        "resourceManagerEndpoint": arm,
        "tenantId": "adfs",
        "subscriptionId": SUBSCRIPTION,
        "aadClientId": CLIENT_ID,
        "aadClientSecret": CLIENT_SECRET,
        "useManagedIdentityExtension": false,
        "useInstanceMetadata": false,
        "resourceGroup": CLUSTER_RG,
        "location": LOCATION,
        "vnetName": VNET,
        "vnetResourceGroup": NETWORK_RG,
        "subnetName": COMPUTE_SUBNET,
        "securityGroupName": SECURITY_GROUP,
        "securityGroupResourceGroup": CLUSTER_RG,
        "routeTableName": format!("{INFRA_ID}-node-routetable"),
        "vmType": "standard",
        "loadBalancerSku": "standard",
        "excludeMasterFromStandardLB": false,
        // What OpenShift's operator adds to every Azure cloud config (openshift/cluster-cloud-
        // controller-manager-operator `pkg/cloud/azure/azure.go:190-191`): one shared probe.
        "clusterServiceLoadBalancerHealthProbeMode": "shared",
        "cloudProviderBackoff": false,
    })
}

/// A control-plane Node as the kubelet and the cloud-node-manager leave it: its VM's
/// providerID, the installer's role labels, Ready.
fn node(name: &str, ip: Ipv4Addr) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node-role.kubernetes.io/master": "",
                "node-role.kubernetes.io/control-plane": "",
                "node.openshift.io/os_id": "rhcos",
                "topology.kubernetes.io/region": LOCATION,
                "topology.kubernetes.io/zone": format!("{LOCATION}-1"),
            },
        },
        "spec": {
            "providerID": format!(
                "azure:///subscriptions/{SUBSCRIPTION}/resourceGroups/{CLUSTER_RG}/providers/Microsoft.Compute/virtualMachines/{name}"
            ),
        },
        "status": {
            "addresses": [
                {"type": "InternalIP", "address": ip.to_string()},
                {"type": "Hostname", "address": name},
            ],
            "conditions": [{
                "type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }],
        },
    })
}

/// A fourth control-plane machine and its Node (a node change): how long until the CCM put
/// its NIC in both load balancers' pools (None: not within `limit`). Read off the fake's
/// state every 50 ms: the NIC changes in the cloud, where nothing can be watched.
async fn add_a_node(azure: &Azure, kube: &Kube, limit: Duration) -> Result<Option<NodeChange>> {
    let (name, ip) = ("master-3", Ipv4Addr::new(10, 0, 0, 8));
    azure.peers.sim.add_machine(name, ip);
    let started = Instant::now();
    kube.create(node(name, ip))
        .await
        .context("cannot create the fourth Node")?;
    let nic = format!("{name}-nic");
    let deadline = started + limit;
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    loop {
        tick.tick().await;
        let pools = azure
            .peers
            .sim
            .nic_pool_references()
            .into_iter()
            .filter(|(n, _)| *n == nic)
            .count();
        if pools >= 2 || Instant::now() >= deadline {
            return Ok(Some(NodeChange {
                node: name.to_string(),
                in_backends_ms: (pools >= 2).then(|| started.elapsed().as_millis()),
                backends: vec![(format!("{nic} in both load balancers' pools"), pools >= 2)],
            }));
        }
    }
}
