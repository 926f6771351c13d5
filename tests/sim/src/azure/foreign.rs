//! What the agent does not own, set up in the world by tests: a user's public IP (UPI) and
//! other clusters' or untagged public IPs and a resource-group tag of someone else. Apart from
//! the fake's own controls because each is a fixture of "never touch this".

use super::public_ip::{PublicIp, pip_id};
use super::{AzureSim, CLUSTER_RG, LOCATION, lock};
use serde_json::{Map, json};
use std::net::{IpAddr, Ipv4Addr};

impl AzureSim {
    /// A Standard static public IPv4 `name` with address `ip` in resource group `rg` (created
    /// when missing), made by the user: no tags.
    pub fn create_user_public_ip(&self, rg: &str, name: &str, ip: Ipv4Addr) {
        let mut w = lock(&self.world);
        w.add_resource_group(rg);
        let key = pip_id(rg, name).to_ascii_lowercase();
        w.public_ips.insert(
            key,
            PublicIp {
                rg: rg.into(),
                name: name.into(),
                location: LOCATION.into(),
                sku: "Standard".into(),
                version: "IPv4".into(),
                allocation: "Static".into(),
                tags: Map::new(),
                ip: Some(IpAddr::V4(ip)),
                state: "Succeeded".into(),
                etag: format!("W/\"{}\"", uuid::Uuid::new_v4()),
                guid: uuid::Uuid::new_v4().to_string(),
                ip_configuration: None,
            },
        );
    }

    /// Public IPs in the cluster resource group that are not ours: untagged, another
    /// cluster's, and ours by cluster tag only (no reservation tag). The agent must never
    /// touch them. Also a resource-group tag of someone else.
    pub fn create_foreign(&self) {
        let mut w = lock(&self.world);
        let foreign: [(&str, &[(&str, &str)]); 3] = [
            ("untagged-ip", &[]),
            (
                "other-cluster-ip",
                &[
                    ("kubernetes.io_cluster.other-abc12", "owned"),
                    ("bootstrap-agent.openshift.io_reservation", "public-ipv4"),
                ],
            ),
            (
                "mycluster-7xk2p-outbound-ip",
                &[("kubernetes.io_cluster.mycluster-7xk2p", "owned")],
            ),
        ];
        for (i, (name, tags)) in foreign.iter().enumerate() {
            let key = pip_id(CLUSTER_RG, name).to_ascii_lowercase();
            w.public_ips.insert(
                key,
                PublicIp {
                    rg: CLUSTER_RG.into(),
                    name: name.to_string(),
                    location: LOCATION.into(),
                    sku: "Standard".into(),
                    version: "IPv4".into(),
                    allocation: "Static".into(),
                    tags: tags
                        .iter()
                        .map(|(k, v)| (k.to_string(), json!(v)))
                        .collect(),
                    ip: Some(IpAddr::V4(Ipv4Addr::new(52, 0, 0, 10 + i as u8))),
                    state: "Succeeded".into(),
                    etag: format!("W/\"{}\"", uuid::Uuid::new_v4()),
                    guid: uuid::Uuid::new_v4().to_string(),
                    ip_configuration: None,
                },
            );
        }
        if let Some(tags) = w.resource_groups.get_mut(CLUSTER_RG) {
            tags.insert("owner".into(), json!("platform-team"));
        }
    }
}
