//! What a template sees: the cluster's names and, per scope and family, the reserved address.

use super::INFRA_LABEL;
use crate::assets::ClusterSpec;
use bootstrap_cloud::{IpFamily, Reservation, Scope};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize)]
struct Address {
    subnet: String,
    id: String,
    ip: String,
    family: IpFamily,
}

#[derive(Debug, Default, Serialize)]
struct ByFamily {
    ipv4: Option<String>,
    ipv6: Option<String>,
}

#[derive(Debug, Serialize)]
pub(super) struct TemplateContext {
    infra_id: String,
    cluster_domain: String,
    publish_external: bool,
    dual_stack: bool,
    /// The install-config's IPv4 machine networks (`networking.machineNetwork`), as CIDRs with
    /// the host bits cleared; the installer's default 10.0.0.0/16 when it lists none. The
    /// source ranges of the AWS internal NLB (see templates/services/aws/internal-lb.yaml).
    machine_networks_ipv4: Vec<String>,
    labels: BTreeMap<String, String>,
    /// Reserved public addresses, sorted by subnet (AWS: one per public subnet).
    public: Vec<Address>,
    private: Vec<Address>,
    /// The first public/private address per family (Azure, GCP: there is one).
    public_ip: ByFamily,
    private_ip: ByFamily,
}

pub(super) fn context(spec: &ClusterSpec, reservations: &[Reservation]) -> TemplateContext {
    let addresses = |scope: Scope| -> Vec<Address> {
        let mut list: Vec<Address> = reservations
            .iter()
            .filter(|r| r.key.scope == scope)
            .map(|r| Address {
                subnet: r.key.placement.clone().unwrap_or_default(),
                id: r.id.clone(),
                ip: r.ip.to_string(),
                family: r.key.family,
            })
            .collect();
        list.sort_by(|a, b| (a.family, &a.subnet).cmp(&(b.family, &b.subnet)));
        list
    };
    let by_family = |list: &[Address]| ByFamily {
        ipv4: list
            .iter()
            .find(|a| a.family == IpFamily::Ipv4)
            .map(|a| a.ip.clone()),
        ipv6: list
            .iter()
            .find(|a| a.family == IpFamily::Ipv6)
            .map(|a| a.ip.clone()),
    };
    let (public, private) = (addresses(Scope::Public), addresses(Scope::Private));
    TemplateContext {
        infra_id: spec.infra_id.clone(),
        cluster_domain: spec.cluster_domain(),
        publish_external: spec.publish.public_api(),
        dual_stack: spec.ip_families.len() > 1,
        machine_networks_ipv4: machine_networks_ipv4(spec),
        labels: BTreeMap::from([
            (
                "app.kubernetes.io/managed-by".to_string(),
                "bootstrap-agent".to_string(),
            ),
            (INFRA_LABEL.to_string(), spec.infra_id.clone()),
        ]),
        public_ip: by_family(&public),
        private_ip: by_family(&private),
        public,
        private,
    }
}

/// The installer writes `networking.machineNetwork` after applying its default, 10.0.0.0/16
/// (openshift/installer pkg/types/defaults/installconfig.go), so an install-config without one
/// stands for that default.
const INSTALLER_DEFAULT_MACHINE_NETWORK: &str = "10.0.0.0/16";

/// The IPv4 machine networks as `a.b.c.d/len`, host bits cleared (EC2 takes only a network
/// address in a security group rule), each once.
fn machine_networks_ipv4(spec: &ClusterSpec) -> Vec<String> {
    if spec.machine_networks.is_empty() {
        return vec![INSTALLER_DEFAULT_MACHINE_NETWORK.to_string()];
    }
    let mut out: Vec<String> = Vec::new();
    for cidr in &spec.machine_networks {
        let std::net::IpAddr::V4(network) = cidr.network else {
            continue;
        };
        let mask = u32::MAX
            .checked_shl(32 - u32::from(cidr.prefix))
            .unwrap_or(0);
        let text = format!(
            "{}/{}",
            std::net::Ipv4Addr::from(u32::from(network) & mask),
            cidr.prefix
        );
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out
}
