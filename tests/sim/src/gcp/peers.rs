//! The GCP world for tests and the demo: the fake behind its counting proxies, the agent's
//! environment, what the load-balancer controllers know of the cloud, and what exists now.

use super::{FakeOptions, GcpFake};
use crate::proxy::{Proxy, Service};
use anyhow::Result;
use serde_json::{Value, json};

/// The GCP world for tests and the demo: one fake, a counting proxy for compute and one for
/// DNS (so compute and DNS mutations can be counted and frozen separately, like EC2/Route53).
pub struct GcpPeers {
    pub fake: GcpFake,
    pub compute_proxy: Proxy,
    pub dns_proxy: Proxy,
}

crate::proxy::counting_proxies!(GcpPeers: compute_proxy, dns_proxy);

impl GcpPeers {
    pub async fn start(options: FakeOptions) -> Result<Self> {
        let fake = GcpFake::start(options).await?;
        let compute_proxy = Proxy::start(fake.addr, Service::Google).await?;
        let dns_proxy = Proxy::start(fake.addr, Service::Google).await?;
        Ok(Self {
            fake,
            compute_proxy,
            dns_proxy,
        })
    }

    /// Environment for the agent: both endpoints through the proxies (Resource Manager, which
    /// preflight only asks, straight to the fake). They are plain `http://` URLs, so the agent
    /// calls them with anonymous credentials and never looks for Application Default
    /// Credentials.
    pub fn agent_env(&self) -> Vec<(String, String)> {
        vec![
            (
                "BOOTSTRAP_AGENT_GCP_RESOURCE_MANAGER_ENDPOINT".into(),
                self.fake.url(),
            ),
            (
                "BOOTSTRAP_AGENT_GCP_COMPUTE_ENDPOINT".into(),
                self.compute_proxy.url(),
            ),
            (
                "BOOTSTRAP_AGENT_GCP_DNS_ENDPOINT".into(),
                self.dns_proxy.url(),
            ),
            (
                // The agent runs on this machine, not on the bootstrap VM: the cloud gives
                // the VM its second address, and nothing here brings it up (as the wire
                // proof is routed with --wire-dial-override).
                "BOOTSTRAP_AGENT_BOOTSTRAP_SECOND_ADDRESS".into(),
                "cloud".into(),
            ),
        ]
    }

    /// What the local API server's load-balancer controller knows of this cloud: the range of
    /// the cloud-config subnetwork internal forwarding rules must take their address from, and
    /// the fake itself (instance groups, addresses; see `kube::lb::gce`).
    pub fn lb_cloud(&self) -> crate::kube::CloudOptions {
        crate::kube::CloudOptions {
            gcp_compute_subnet: self.fake.cloud_config_subnet_range(),
            addresses: Some(self.fake.address_book()),
            gcp: Some(self.fake.lb_view()),
            ..Default::default()
        }
    }

    /// What exists now: `{addresses: [{name, ip, status, addressType, purpose, subnetwork,
    /// labels}], bootstrap_host: {name, addresses: [nic0's networkIP, then each alias's
    /// address]}, instances: {name: [addresses, likewise]}, zones: {public, private: {"name
    /// TYPE": [values]}}}` (public = the `example.com.` zone, private = the cluster's private
    /// zone; the bootstrap host is the VM `<infra-id>-bootstrap`; addresses as `instances.get`
    /// shows them; `instances`: every VM of the fake).
    pub fn inspect(&self) -> Value {
        let addresses: Vec<Value> = self
            .fake
            .addresses()
            .into_iter()
            .map(|a| {
                json!({"name": a["name"], "ip": a["address"], "status": a["status"],
                       "addressType": a["addressType"], "purpose": a["purpose"],
                       "subnetwork": a["subnetwork"], "labels": a["labels"]})
            })
            .collect();
        let zone = |name: &str| -> Value {
            let records: serde_json::Map<String, Value> = self
                .fake
                .records(name)
                .into_iter()
                .filter(|(k, _)| k.ends_with(" A") || k.ends_with(" AAAA"))
                .map(|(k, v)| (k, json!(v)))
                .collect();
            Value::Object(records)
        };
        let bootstrap = format!("{}-bootstrap", self.fake.seed().infra_id);
        let bootstrap_addresses: Vec<String> = self
            .fake
            .instance_addresses(&bootstrap)
            .iter()
            .map(ToString::to_string)
            .collect();
        let instances: serde_json::Map<String, Value> = self
            .fake
            .all_instance_addresses()
            .into_iter()
            .map(|(name, ips)| {
                let ips: Vec<String> = ips.iter().map(ToString::to_string).collect();
                (name, json!(ips))
            })
            .collect();
        json!({
            "addresses": addresses,
            "bootstrap_host": {"name": bootstrap, "addresses": bootstrap_addresses},
            "instances": instances,
            "zones": {
                "public": zone("example-com"),
                "private": zone("mycluster-7xk2p-private-zone"),
                // Seed::private_zone_in_dns_project's, in the third project.
                "private_in_dns_project": zone("mycluster-private-zone"),
            }
        })
    }
}
